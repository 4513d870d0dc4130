// `cpo connect` run as the operator runs it, in a process of its own, while
// this test process serves OCPI (the app on a loopback port, following
// connection changes as main.ts's instances do, with a token cache of 60 s so
// that only the cross-process announcement can make a change count at once):
// the CPO's first request with its new token is accepted right away; a
// `cpo disconnect` elsewhere is refused right away; a lost LISTEN connection
// drops the whole cache when it comes back. And the exit codes of `cpo
// connect` when only its follow-up pull fails, and `cpo list`'s versions.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { markDisconnected } from '../src/modules/ocpi/repository.ts';
import { systemClock } from '../src/platform/clock.ts';
import { type CpoSandbox, createCpoSandbox } from '../src/sandbox/cpo/index.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { eventually } from './payments-support.ts';

const root = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

let ctx: TestContext;
let cpo: CpoSandbox;

before(async () => {
  ctx = await setupTestApp({ listen: 0, ocpi: { tokenCacheTtlMs: 60_000 } });
  ctx.ocpi.startBackgroundWork();
  cpo = await createCpoSandbox({ db: ctx.db, clock: systemClock, locations: 12, seed: 5, statusChangesPerSecond: 0 });
  await cpo.listen({ port: 0 });
});
after(async () => {
  await cpo?.close();
  await ctx?.close();
});

/** The operator's CLI in its own process, on the test database, our public URL being the test app's. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(root, 'bin/charging-access.js'), ...args], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: ctx.databaseUrl, PUBLIC_BASE_URL: ctx.address as string, LOG_LEVEL: 'silent' },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A functional-module request to the serving app over HTTP, as the CPO makes it with `token`. */
async function asCpo(token: string): Promise<number> {
  const res = await fetch(`${ctx.address}/ocpi/2.2.1/tokens?limit=1`, { headers: { authorization: `Token ${Buffer.from(token).toString('base64')}` } });
  await res.arrayBuffer();
  return res.status;
}

async function networkToken(): Promise<string> {
  const peer = (await cpo.listPeers()).find((p) => p.status === 'REGISTERED');
  assert.ok(peer?.theirToken, 'the network is registered with a token for us');
  return peer.theirToken;
}

describe('a handshake completed by the CLI is honoured at once by a serving process', { timeout: 120_000 }, () => {
  it('the CPO’s first request with its new token right after `cpo connect` is accepted (not 401 from a cached token state)', async () => {
    const connected = await cli('cpo', 'connect', '--versions-url', cpo.versionsUrl, '--token', await cpo.issueTokenA(), '--name', 'net', '--json');
    assert.equal(connected.code, 0, connected.stderr);
    const answer = JSON.parse(connected.stdout);
    assert.equal(answer.status, 'connected');
    assert.equal(answer.version, '2.2.1');
    assert.equal(answer.pulled, true);
    assert.ok(answer.synced.locations >= 12, String(answer.synced.locations));
    // During the handshake the CPO read our versions with this token: this process cached it as a TOKEN_A for 60 s.
    assert.equal(await asCpo(await networkToken()), 200);
  });

  it('`cpo list` shows the negotiated OCPI version of each connection', async () => {
    const listed = await cli('cpo', 'list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const net = JSON.parse(listed.stdout).find((c: { name: string }) => c.name === 'net');
    assert.deepEqual({ status: net.status, version: net.version }, { status: 'connected', version: '2.2.1' });
    const text = await cli('cpo', 'list');
    assert.match(text.stdout, /^net {2}connected {2}[A-Z]{2}\*[A-Z0-9]{3} {2}OCPI 2\.2\.1 {2}http:\/\/127\.0\.0\.1:\d+\//m);
  });

  it('a `cpo disconnect` in another process: the token cached here is refused at once', async () => {
    const token = await networkToken();
    assert.equal(await asCpo(token), 200);
    const disconnected = await cli('cpo', 'disconnect', 'net');
    assert.equal(disconnected.code, 0, disconnected.stderr);
    await eventually(async () => ((await asCpo(token)) === 401 ? true : undefined), 'the disconnected token refused', 2_000);
  });

  it('a LISTEN connection that comes back drops the whole cache: a change made while it was away counts', async () => {
    const invite = await ctx.ocpi.connections.invite({ name: 'away' });
    const registered = await cpo.registerWith({ versionsUrl: invite.versions_url, token: invite.token });
    assert.equal(registered.version, '2.2.1');
    const token = await networkToken();
    assert.equal(await asCpo(token), 200);
    const connection = (await ctx.ocpi.connections.list()).find((c) => c.status === 'connected');
    assert.ok(connection);
    // The listener's connection is cut; the disconnection is announced while nobody listens.
    const cut = await ctx.db.query<{ cut: boolean }>(
      `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN "ocpi_connections"'`,
    );
    assert.equal(cut.rows.length, 1, 'one listener of connection changes');
    await markDisconnected(ctx.db, connection.id, ctx.clock.now());
    await sleep(50);
    await eventually(async () => ((await asCpo(token)) === 401 ? true : undefined), 'the token refused once the listener is back', 5_000);
  });
});

describe('`cpo connect` when only the follow-up pull fails', { timeout: 60_000 }, () => {
  it('the connection is stored and connected; exit 3 and the output says the pull failed and what', async () => {
    // A CPO that completes the handshake but fails every pull (HTTP 500).
    const peer = Fastify();
    let base = '';
    const envelope = (data: unknown) => ({ data, status_code: 1000, timestamp: new Date().toISOString() });
    peer.get('/versions', async () => envelope([{ version: '2.2.1', url: `${base}/2.2.1` }]));
    peer.get('/2.2.1', async () =>
      envelope({
        version: '2.2.1',
        endpoints: ['credentials', 'locations', 'tariffs', 'sessions', 'cdrs'].map((identifier) => ({
          identifier,
          role: 'SENDER',
          url: `${base}/2.2.1/${identifier}`,
        })),
      }),
    );
    peer.post('/2.2.1/credentials', async () =>
      envelope({
        token: 'token-c-of-the-broken-cpo',
        url: `${base}/versions`,
        roles: [{ role: 'CPO', country_code: 'NL', party_id: 'BRK', business_details: { name: 'Broken Pulls' } }],
      }),
    );
    for (const module of ['locations', 'tariffs', 'sessions', 'cdrs']) {
      peer.get(`/2.2.1/${module}`, async (_request, reply) => reply.code(500).send({ status_code: 3000, timestamp: new Date().toISOString() }));
    }
    base = await peer.listen({ port: 0, host: '127.0.0.1' });
    try {
      const text = await cli('cpo', 'connect', '--versions-url', `${base}/versions`, '--token', 'token-a');
      assert.equal(text.code, 3, `${text.stdout}${text.stderr}`);
      assert.match(text.stderr, /could not pull locations/);
      assert.match(text.stdout, /^connected: NL\*BRK; pulled 0 locations, 0 tariffs; not pulled: tariffs, locations, sessions, cdrs/m);
      const stored = await ctx.ocpi.connections.findByName('NL*BRK');
      assert.equal(stored?.status, 'connected');
      assert.equal(stored?.version, '2.2.1');
      // A handshake that fails: exit 1, and the message names that step.
      const refused = await cli('cpo', 'connect', '--versions-url', `${base}/nowhere`, '--token', 'token-a');
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^charging-access: the credentials handshake failed, nothing is connected: /m);
    } finally {
      await peer.close();
    }
  });
});
