// The operator CLI as a newcomer runs it, without repeating the service's PORT:
// `cpo invite` hands out the address the service recorded at start (the
// default, said on stderr, before any start; an explicit PUBLIC_BASE_URL wins),
// `clients create --json` gives the token_id that `tokens revoke TOKEN_ID`
// takes, and a routine command prints nothing on stderr.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { systemClock } from '../src/platform/clock.ts';
import type { Database } from '../src/platform/db.ts';
import { recordServiceAddress } from '../src/platform/service-address.ts';
import { createTestDatabase } from './helpers.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');

let database: { db: Database; url: string; drop(): Promise<void> };
before(async () => {
  database = await createTestDatabase();
});
after(async () => {
  await database.drop();
});

function cli(env: Record<string, string>, ...args: string[]) {
  const clean = { ...process.env };
  for (const name of ['PUBLIC_BASE_URL', 'HOST', 'PORT']) delete clean[name];
  return run(process.execPath, [path.join(root, 'bin/charging-access.js'), ...args], {
    cwd: root,
    env: { ...clean, DATABASE_URL: database.url, NODE_ENV: 'test', ...env },
  });
}

test('cpo invite: the default (said on stderr) before the service recorded its address, then the recorded one; PUBLIC_BASE_URL wins', async () => {
  const before = await cli({}, 'cpo', 'invite', '--json', '--name', 'before-start');
  assert.equal(JSON.parse(before.stdout).versions_url, 'https://localhost:8443/ocpi/versions');
  assert.match(before.stderr, /has not recorded its address .* using the default https:\/\/localhost:8443; set PUBLIC_BASE_URL/);

  await recordServiceAddress({ db: database.db, clock: systemClock }, 'https://localhost:9555');
  const recorded = await cli({}, 'cpo', 'invite', '--json', '--name', 'after-start');
  assert.equal(JSON.parse(recorded.stdout).versions_url, 'https://localhost:9555/ocpi/versions');
  assert.equal(recorded.stderr, '', 'nothing guessed, nothing said');

  const explicit = await cli({ PUBLIC_BASE_URL: 'https://emsp.example.com' }, 'cpo', 'invite', '--json', '--name', 'explicit');
  assert.equal(JSON.parse(explicit.stdout).versions_url, 'https://emsp.example.com/ocpi/versions');
  const port = await cli({ PORT: '9777' }, 'cpo', 'invite', '--json', '--name', 'explicit-port');
  assert.equal(JSON.parse(port.stdout).versions_url, 'https://localhost:9777/ocpi/versions');
});

test('clients create --json gives the token_id that tokens revoke takes; no noise on stderr', async () => {
  const created = await cli({}, 'clients', 'create', '--name', 'Fleet app', '--json');
  const issued = JSON.parse(created.stdout) as Record<string, string>;
  assert.deepEqual(Object.keys(issued).sort(), ['client_id', 'token', 'token_id']);
  assert.equal(created.stderr, '');
  const jti = JSON.parse(Buffer.from((issued.token as string).split('.')[1] as string, 'base64url').toString()).jti;
  assert.equal(issued.token_id, jti);
  const revoked = await cli({}, 'tokens', 'revoke', issued.token_id as string, '--json');
  assert.deepEqual(JSON.parse(revoked.stdout), { token_id: issued.token_id, revoked: true });
  const usage = await cli({}).catch((error: { stdout: string }) => error);
  assert.match(usage.stdout, /tokens revoke TOKEN_ID +revoke a token by its token_id/);
});
