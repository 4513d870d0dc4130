// The service as several real processes on one test database: an instance
// behind a TLS-terminating proxy (TRUST_PROXY) prints a banner that works as
// printed, and the sandbox CPO network runs as its own process.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createTestDatabase, freePort } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '..');
const exec = promisify(execFile);

interface Proc {
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
  text(): string;
}

/** Spawns `node <args>` in the project with `env`, collecting its output. */
function start(args: string[], env: Record<string, string>, cwd = root): Proc {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited, text: () => output.join('') };
}

async function waitFor(proc: Proc, what: RegExp, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void proc.exited.then(() => {
    gone = true;
  });
  while (!what.test(proc.text())) {
    if (gone) throw new Error(`the process exited before printing ${what}:\n${proc.text()}`);
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms:\n${proc.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(proc: Proc | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return proc?.child.exitCode ?? null;
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  const code = await proc.exited;
  clearTimeout(timer);
  return code;
}

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;
const running: Proc[] = [];

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-procs-'));
});
after(async () => {
  for (const proc of running) await stop(proc, 'SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
  await database.drop();
});

function serviceEnv(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    DEMO_CLIENT: 'true',
    PAYMENTS_SANDBOX: 'true',
    STRIPE_SANDBOX_PORT: '0',
    CPO_SANDBOX: 'false',
    STATIONS_DEFAULT_LOCATIONS: '0',
    SHUTDOWN_GRACE_MS: '1000',
    ...extra,
  };
}

describe('behind a TLS-terminating proxy', { timeout: 120_000 }, () => {
  test('the banner shows PUBLIC_BASE_URL for clients, and its direct curl line works as printed', async () => {
    const port = await freePort();
    const service = start(['src/main.ts'], serviceEnv(port, { TRUST_PROXY: 'true', PUBLIC_BASE_URL: 'https://api.example.test' }));
    running.push(service);
    await waitFor(service, /is ready at[\s\S]*\n\n/);
    const banner = service.text();
    const tokenFile = path.join(dataDir, 'demo-token');
    assert.ok(banner.includes('Charging Access is ready at https://api.example.test through the proxy'), banner);
    assert.ok(banner.includes(`  curl -H "Authorization: Bearer $(cat ${tokenFile})" https://api.example.test/api/v1/users/\n`), banner);
    assert.doesNotMatch(banner, /curl --cacert/, 'the proxy serves its own certificate');
    const direct = /^ {2}(curl -H "X-Forwarded-Proto: https" .*)$/m.exec(banner)?.[1];
    assert.ok(direct?.endsWith(` http://localhost:${port}/api/v1/users/`), banner);
    // The line as a shell runs it: it answers the demo client's (empty) user list.
    const { stdout } = await exec('sh', ['-c', `${direct} -s -w '\\n%{http_code}'`], { cwd: root });
    const [body, status] = stdout.trim().split('\n');
    assert.equal(status, '200', stdout);
    assert.equal(JSON.parse(body ?? '').count, 0);
    assert.equal(await stop(service), 0);
  });
});

/** GET over HTTPS accepting the service's own certificate. */
function getJson(url: string, ca: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the sandbox CPO network as its own process', { timeout: 180_000 }, () => {
  test('it waits for the service, connects once, its catalogue arrives; killing the service does not stop it', async () => {
    const port = await freePort();
    const cpoPort = await freePort();
    const base = `https://localhost:${port}`;
    const env = serviceEnv(port, { CPO_SANDBOX_PORT: String(cpoPort) });
    // Started first: it waits for a service instance at PUBLIC_BASE_URL.
    const network = start(['bin/charging-access.js', 'sandbox', 'cpo'], {
      ...env,
      STATIONS_DEFAULT_LOCATIONS: '30',
      CPO_SANDBOX_STATUS_CHANGES_PER_SECOND: '20',
    });
    running.push(network);
    await waitFor(network, /waiting for a service instance at https:\/\/localhost:\d+\/readyz/);
    const service = start(['src/main.ts'], env);
    running.push(service);
    await waitFor(network, /serving http:\/\/127\.0\.0\.1:\d+\/ocpi\/cpo\/versions/);
    await waitFor(service, /is ready at/);

    const { rows: connections } = await database.db.query<{ name: string; status: string }>('SELECT name, status FROM ocpi_connections');
    assert.deepEqual(connections, [{ name: 'sandbox', status: 'connected' }]);
    const { rows: located } = await database.db.query<{ n: number; latitude: number; longitude: number }>(
      'SELECT count(*) OVER ()::int AS n, latitude, longitude FROM ocpi_locations LIMIT 1',
    );
    assert.ok((located[0]?.n ?? 0) >= 30, 'the network’s catalogue (30 generated locations and its scenario ones) was pulled over OCPI');
    const ca = await readFile(path.join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
    const token = (await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim();
    const around = async () => {
      const res = await getJson(`${base}/api/v1/stations/around/?latitude=${located[0]?.latitude}&longitude=${located[0]?.longitude}&distance=100`, ca, token);
      assert.equal(res.status, 200, res.body);
      return (JSON.parse(res.body) as { count: number }).count;
    };
    await eventually(async () => (await around()) > 0, 'the service instance serves the network’s stations');

    // The service dies; the network does not.
    await stop(service, 'SIGKILL');
    const pushesBefore = await lastStatusPush();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(network.child.exitCode, null, `the network is still running:\n${network.text()}`);
    const versions = await fetch(`http://127.0.0.1:${cpoPort}/ocpi/cpo/versions`);
    assert.equal(versions.status, 401, 'it still answers OCPI (unauthenticated here)');

    // A new instance: the network is not connected again, and its EVSE status pushes reach the new instance.
    const again = start(['src/main.ts'], env);
    running.push(again);
    await waitFor(again, /is ready at/);
    await eventually(async () => (await lastStatusPush()) > pushesBefore, 'status pushes reach the new instance');
    assert.ok((await around()) > 0);
    const { rows: still } = await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ocpi_connections');
    assert.equal(still[0]?.n, 1, 'connected once');

    assert.equal(await stop(network), 0, network.text());
    assert.match(network.text(), /stopping/);
    assert.equal(await stop(again), 0);
  });
});

/** When the service last took an EVSE status from the network. */
async function lastStatusPush(): Promise<number> {
  const { rows } = await database.db.query<{ at: Date | null }>('SELECT max(last_updated) AS at FROM ocpi_evses');
  return rows[0]?.at?.getTime() ?? 0;
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
