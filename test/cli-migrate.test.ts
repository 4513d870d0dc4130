// `charging-access migrate` as an operator runs it, on an empty database and
// again on the migrated one: it says what it applied, then that nothing was left.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { listMigrationFiles } from '../src/platform/migrations.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');

async function withEmptyDatabase(work: (url: string) => Promise<void>): Promise<void> {
  const adminUrl = process.env.CA_TEST_ADMIN_URL as string;
  const name = `${process.env.CA_TEST_DB_PREFIX}${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  try {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    await work(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

function migrate(url: string, ...args: string[]) {
  return run(process.execPath, [path.join(root, 'bin/charging-access.js'), 'migrate', ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, NODE_ENV: 'test' },
  });
}

test('migrate on an empty database names what it applied; run again, it is up to date', { timeout: 60_000 }, async () => {
  const files = await listMigrationFiles();
  await withEmptyDatabase(async (url) => {
    const first = await migrate(url);
    assert.equal(first.stdout, `applied ${files.length} migrations: ${files.join(', ')}\n`);
    const second = await migrate(url);
    assert.equal(second.stdout, `migrations are up to date (${files.length} applied earlier)\n`);
    const json = JSON.parse((await migrate(url, '--json')).stdout);
    assert.deepEqual(json, { migrated: true, applied: [], already_applied: files.length });
  });
});
