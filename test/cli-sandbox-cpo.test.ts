// `charging-access sandbox cpo` as an operator runs it beside a service started
// with CPO_SANDBOX=false on a port of its own: the command is given no PORT,
// HOST or PUBLIC_BASE_URL, finds the address the service recorded in the
// database, connects the network over OCPI there, and the service's catalogue
// gets the network's stations. Real processes, a throw-away DATA_DIR.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type ServiceProcess, startServiceProcess } from '../bench/service-process.ts';
import type { Database } from '../src/platform/db.ts';
import { embeddedPostgresOwner } from '../src/platform/embedded-postgres.ts';
import { freePort } from '../src/platform/free-port.ts';
import { createTestDatabase } from './helpers.ts';
import { eventually } from './payments-support.ts';

const root = path.resolve(import.meta.dirname, '..');

let database: { db: Database; url: string; drop(): Promise<void> };
let dataDir: string;
let service: ServiceProcess | undefined;
/** Every process a test started, stopped when the file ends: a test failing half-way left its own running (the file never exited). */
const services = new Set<ServiceProcess>();
const sandboxes = new Set<ChildProcess>();

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-sandbox-cpo-'));
  await chmod(dataDir, 0o755);
});
after(async () => {
  for (const child of sandboxes) child.kill('SIGKILL');
  for (const running of services) running.child.kill('SIGTERM');
  await Promise.all([...services].map((running) => running.exited));
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/** `charging-access sandbox cpo` with `env` and no PORT, HOST or PUBLIC_BASE_URL; what it says is collected. */
function startSandboxCommand(env: Record<string, string>) {
  const clean: Record<string, string | undefined> = { ...process.env, ...env };
  for (const name of ['PORT', 'HOST', 'PUBLIC_BASE_URL']) delete clean[name];
  const child = spawn(process.execPath, [path.join(root, 'bin/charging-access.js'), 'sandbox', 'cpo'], {
    cwd: root,
    env: clean,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  sandboxes.add(child);
  child.on('exit', () => sandboxes.delete(child));
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const said = () => output.join('');
  const until = (text: string, timeoutMs: number) =>
    eventually(async () => (said().includes(text) ? true : undefined), `"${text}"`, timeoutMs).catch((error: Error) =>
      assert.fail(`${error.message}; it said:\n${said()}`),
    );
  return { child, exited, said, until };
}

/** The service's catalogue has the network's scenario EVSE (pulled over OCPI once connected). */
async function scenarioEvseListed(base: string, dir: string): Promise<void> {
  const token = (await readFile(path.join(dir, 'demo-token'), 'utf8')).trim();
  await eventually(
    async () => {
      const res = await fetch(`${base}/api/v1/stations/details/?id=${encodeURIComponent('DE*HHC*ESCN*NORMAL')}&type=evse_id`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return res.status === 200 ? true : undefined;
    },
    "the network's scenario EVSE in the service's catalogue",
    20_000,
  );
}

test('sandbox cpo waits at the address the service recorded (no PORT given) and connects the network there', { timeout: 120_000 }, async () => {
  const common = { DATABASE_URL: database.url, DATA_DIR: dataDir, NODE_ENV: 'development', METRICS_PORT: 'off', LOG_LEVEL: 'warn' };
  // The service on a port of its own, without the network and without a PUBLIC_BASE_URL: it records https://localhost:PORT.
  service = await startServiceProcess({ ...common, PUBLIC_BASE_URL: '', CPO_SANDBOX: 'false', STATIONS_DEFAULT_LOCATIONS: '0' });
  services.add(service);
  const port = new URL(service.base).port;
  assert.notEqual(port, '8443');

  const cpoPort = String(await freePort());
  const command = startSandboxCommand({ ...common, CPO_SANDBOX_PORT: cpoPort, STATIONS_DEFAULT_LOCATIONS: '20' });
  await command.until('serving http', 60_000);
  assert.match(command.said(), new RegExp(`waiting for a service instance at https://localhost:${port}/readyz \\(recorded by the service\\)`));
  assert.doesNotMatch(command.said(), /localhost:8443/);

  // Connected at that address: the service holds the connection, and its catalogue has the network's scenario EVSE.
  const { rows } = await database.db.query<{ status: string; versions_url: string }>('SELECT status, versions_url FROM ocpi_connections');
  assert.deepEqual(
    rows.map((r) => r.status),
    ['connected'],
  );
  assert.match(rows[0]?.versions_url ?? '', new RegExp(`:${cpoPort}/`));
  await scenarioEvseListed(service.base, dataDir);
  // The network's own pool, named as such (a command's pool of 2, named charging-access-cli, was the slowest stage under load).
  const named = await database.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'charging-access-sandbox-cpo' AND datname = current_database()",
  );
  assert.ok((named.rows[0]?.n ?? 0) >= 1, 'the network holds connections of its own pool');

  command.child.kill('SIGINT');
  assert.equal(await command.exited, 0, command.said());
  service.child.kill('SIGTERM');
  await service.exited;
  service = undefined;
});

test('on the embedded database, sandbox cpo started first waits for the service to run it (starting nothing itself), then connects', {
  timeout: 180_000,
}, async () => {
  const embeddedDir = path.join(dataDir, 'embedded');
  const common = { DATABASE_URL: '', DATA_DIR: embeddedDir, NODE_ENV: 'development', METRICS_PORT: 'off', LOG_LEVEL: 'warn' };
  const command = startSandboxCommand({ ...common, CPO_SANDBOX_PORT: String(await freePort()), STATIONS_DEFAULT_LOCATIONS: '20' });
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.equal(command.child.exitCode, null, command.said());
  assert.doesNotMatch(command.said(), /serving/);
  assert.equal(await embeddedPostgresOwner(embeddedDir), undefined, 'the command runs no embedded PostgreSQL');
  // Nor began to: a start writes postgres-password, initdb's scratch directory, then postgres and postgres.owner.
  const made = await readdir(embeddedDir).catch(() => []);
  assert.deepEqual(
    made.filter((name) => name.startsWith('postgres')),
    [],
    'nothing of a PostgreSQL under DATA_DIR',
  );

  service = await startServiceProcess({ ...common, PUBLIC_BASE_URL: '', CPO_SANDBOX: 'false', STATIONS_DEFAULT_LOCATIONS: '0' });
  services.add(service);
  await command.until('serving http', 60_000);
  assert.match(
    command.said(),
    new RegExp(`waiting for a service instance at https://localhost:${new URL(service.base).port}/readyz \\(recorded by the service\\)`),
  );
  await scenarioEvseListed(service.base, embeddedDir);

  // The database is the service's: stopping the network leaves it running, the service answers on.
  command.child.kill('SIGINT');
  assert.equal(await command.exited, 0, command.said());
  const ready = await fetch(`${service.base}/readyz`);
  assert.equal(ready.status, 200);
});
