// `npm test`: runs every test file under test/ on a real PostgreSQL.
// With TEST_DATABASE_URL (a role that may CREATE DATABASE) it uses that server;
// otherwise it starts a throw-away embedded PostgreSQL. It migrates one
// template database, and each test file clones its own from it.
// Extra arguments are passed to `node --test` (e.g. a file path).
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabase } from '../src/platform/db.ts';
import { startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';
import { migrate } from '../src/platform/migrations.ts';

const external = process.env.TEST_DATABASE_URL;
const dataDir = external ? undefined : await mkdtemp(path.join(os.tmpdir(), 'charging-access-test-'));
// mkdtemp makes the directory private; the embedded server's non-root user must reach it.
if (dataDir) await chmod(dataDir, 0o755);
const embedded = dataDir ? await startEmbeddedPostgres({ dataDir, role: 'cli', log: () => {} }) : undefined;
const adminUrl = new URL(external ?? (embedded as { url: string }).url);
adminUrl.pathname = '/postgres';
const prefix = `ca_test_${process.pid}_`;
const template = `${prefix}template`;

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl.toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function dropTestDatabases(): Promise<void> {
  await admin(async (client) => {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${prefix}%`]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  });
}

let code = 1;
try {
  await admin((client) => client.query(`CREATE DATABASE "${template}"`));
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${template}`;
  const db = createDatabase(templateUrl.toString(), { max: 1 });
  await migrate(db);
  await db.close();

  const files = process.argv.slice(2);
  // With OCPI_RECORD_DIR, every OCPI message the tests validate is recorded (CI checks them against the official OpenAPI).
  const record = process.env.OCPI_RECORD_DIR ? ['--import', './scripts/ocpi-record.ts'] : [];
  const args = [
    '--test',
    '--test-concurrency=2',
    '--test-timeout=120000',
    ...record,
    ...(files.length ? files : ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts']),
  ];
  const child = spawn(process.execPath, args, {
    stdio: 'inherit',
    // Services the tests start as NODE_ENV=development would all take the default metrics port (9464) at once: off unless a test asks.
    env: {
      ...process.env,
      METRICS_PORT: process.env.METRICS_PORT ?? 'off',
      CA_TEST_ADMIN_URL: adminUrl.toString(),
      CA_TEST_TEMPLATE: template,
      CA_TEST_DB_PREFIX: prefix,
    },
  });
  code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
} finally {
  await dropTestDatabases().catch((error: Error) => process.stderr.write(`could not drop test databases: ${error.message}\n`));
  await embedded?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
process.exit(code);
