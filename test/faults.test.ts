// Database faults against the real service process (`node src/main.ts`):
// PostgreSQL stopped and started under traffic (an external server named by
// DATABASE_URL, and the embedded one, which the service supervises), backend
// connections terminated again and again, and a start-up that cannot listen.
// The process must stay up, answer 503 service_unavailable (never another 5xx)
// while the database is away, serve again within 2 s of its return, and lose
// no acknowledged write; a write answered 503 is repeated with its
// Idempotency-Key and takes effect exactly once.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { CATALOGUE_CHANNEL } from '../src/modules/stations/repository.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';
import { freePort } from './helpers.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** pg_ctl of the embedded-postgres package, run as the server's own user (PostgreSQL refuses root). */
async function pgCtl(args: string[]): Promise<void> {
  const bin = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as { pg_ctl: string; default?: { pg_ctl: string } };
  const pgCtlPath = bin.default?.pg_ctl ?? bin.pg_ctl;
  const asUser =
    process.getuid?.() === 0
      ? { uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()), gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()) }
      : {};
  await new Promise<void>((resolve, reject) => {
    execFile(pgCtlPath, args, asUser, (error) => (error ? reject(error) : resolve()));
  });
}

async function postmasterPid(pgDir: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

interface Service {
  child: ChildProcess;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  base: string;
  token: string;
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-faults-'));
  madeDirs.push(dir);
  await chmod(dir, 0o755); // the embedded server's non-root user must reach it
  return dir;
}

/**
 * Runs the service in a mount namespace of its own where /etc/hosts is
 * `hostsFile`, so a test can move a host name to another address the way DNS
 * does in a failover (the resolver reads the file on every lookup).
 */
function withOwnHostsFile(hostsFile: string): { command: string; args: string[] } {
  return {
    command: 'unshare',
    args: ['-m', '--', 'sh', '-c', 'mount --bind "$1" /etc/hosts && exec "$2" "$3"', 'sh', hostsFile, process.execPath, path.join(root, 'src/main.ts')],
  };
}

/** Whether this machine lets a process see its own /etc/hosts (root, or user namespaces allowed). */
async function canUseOwnHostsFile(): Promise<boolean> {
  return run('unshare', ['-m', '--', 'mount', '--bind', '/etc/hosts', '/etc/hosts']).then(
    () => true,
    () => false,
  );
}

/** Every service process this file started and that has not exited: killed when the file ends, pass or fail. */
const children = new Set<ChildProcess>();
/** Every traffic() started: halted when the file ends, so that a test failing before its stop() leaves no loop running (the file's process hung). */
const loads = new Set<{ halt(): void }>();

/** Every temporary directory this file made (data directories of services and of PostgreSQL servers): removed at the end. */
const madeDirs: string[] = [];
after(async () => {
  for (const load of loads) load.halt();
  for (const child of children) child.kill('SIGKILL');
  for (const dir of madeDirs) await rm(dir, { recursive: true, force: true });
});

function spawnService(env: Record<string, string>, hostsFile?: string): Omit<Service, 'base' | 'token'> {
  // Not as a test file: the test runner's context variable would change how the child treats unhandled rejections.
  const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
  const { command, args } = hostsFile ? withOwnHostsFile(hostsFile) : { command: process.execPath, args: [path.join(root, 'src/main.ts')] };
  const child = spawn(command, args, {
    cwd: root,
    env: {
      ...inherited,
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DEMO_CLIENT: 'true',
      CPO_SANDBOX: 'false',
      STATIONS_DEFAULT_LOCATIONS: '0',
      SHUTDOWN_GRACE_MS: '1000',
      TRUST_PROXY: 'false',
      // The traffic's three writers and reader pass an API client's default 1,200 requests/min (rate limits have tests of their own).
      RATE_LIMIT_PER_MINUTE: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output, exited };
}

/** Starts the service and waits for /readyz 200; it serves plain HTTP to loopback (development mode). */
async function startService(env: Record<string, string>, hostsFile?: string): Promise<Service> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = spawnService({ PORT: String(port), PUBLIC_BASE_URL: base, ...env }, hostsFile);
  let gone = false;
  void started.exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gone) throw new Error(`the service exited during start-up:\n${started.output.join('')}`);
    if (Date.now() > deadline) throw new Error(`the service was not ready within 60 s:\n${started.output.join('')}`);
    const ready = await fetch(`${base}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) break;
    await sleep(100);
  }
  const token = (await readFile(path.join(env.DATA_DIR as string, 'demo-token'), 'utf8')).trim();
  return { ...started, base, token };
}

async function stopService(service: Service | undefined): Promise<void> {
  if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  const timer = setTimeout(() => service.child.kill('SIGKILL'), 15_000);
  await service.exited;
  clearTimeout(timer);
}

function problems(service: Service): string {
  const lines = service.output.join('').split('\n');
  return lines
    .filter((line) => /"level":(50|60)/.test(line) || /Error|error:/.test(line))
    .slice(-20)
    .join('\n');
}

interface Traffic {
  statuses: Map<number, number>;
  /** Users acknowledged with 201 (id -> Idempotency-Key). */
  created: Map<string, string>;
  /** Users acknowledged with 201 to a sign-up sent without a key (committed in groups like the others). */
  createdWithoutKey: Set<string>;
  /** Keys whose write was answered 503 at least once before it was acknowledged. */
  retried: Set<string>;
  /** When each status was last and first seen (ms since the epoch). */
  lastStatusAt: Map<number, number>;
  stop(): Promise<void>;
}

/**
 * Two writers, a writer without keys and a reader. A writer repeats a write
 * answered 503 (or cut off) with the same Idempotency-Key until it is
 * acknowledged, as a client following the contract does (a write not yet
 * acknowledged when the traffic stops is given up: it is not counted as
 * created). The writer without keys cannot repeat a write safely: it moves on,
 * and only what was acknowledged counts.
 */
function traffic(service: Service): Traffic {
  const statuses = new Map<number, number>();
  const lastStatusAt = new Map<number, number>();
  const created = new Map<string, string>();
  const createdWithoutKey = new Set<string>();
  const retried = new Set<string>();
  let running = true;
  const count = (status: number) => {
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    lastStatusAt.set(status, Date.now());
  };
  const headers = { authorization: `Bearer ${service.token}` };
  const writer = async () => {
    while (running) {
      const key = randomUUID();
      while (running) {
        const res = await fetch(`${service.base}/api/v1/users/`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ email: `${key}@example.com` }),
          signal: AbortSignal.timeout(15_000),
        }).catch(() => undefined);
        if (!res) {
          count(0);
          retried.add(key);
          await sleep(100);
          continue;
        }
        count(res.status);
        const body = (await res.json()) as { id?: string; error?: { type?: string } };
        if (res.status === 201 || res.status === 200) {
          created.set(body.id as string, key);
          break;
        }
        if (res.status === 503) {
          assert.equal(body.error?.type, 'service_unavailable');
          assert.ok(res.headers.get('retry-after'), 'a 503 says when to retry');
          retried.add(key);
          await sleep(100);
          continue;
        }
        throw new Error(`unexpected ${res.status}: ${JSON.stringify(body)}`);
      }
      await sleep(20);
    }
  };
  const writerWithoutKey = async () => {
    while (running) {
      const res = await fetch(`${service.base}/api/v1/users/`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `no-key-${randomUUID()}@example.com` }),
        signal: AbortSignal.timeout(15_000),
      }).catch(() => undefined);
      count(res?.status ?? 0);
      const body = (await res?.json().catch(() => undefined)) as { id?: string; error?: { type?: string } } | undefined;
      if (res?.status === 201) createdWithoutKey.add(body?.id as string);
      else if (res?.status === 503) assert.equal(body?.error?.type, 'service_unavailable');
      else if (res) throw new Error(`unexpected ${res.status}: ${JSON.stringify(body)}`);
      await sleep(res?.status === 201 ? 20 : 100);
    }
  };
  const reader = async () => {
    while (running) {
      const res = await fetch(`${service.base}/api/v1/users/?page_size=1`, { headers, signal: AbortSignal.timeout(15_000) }).catch(() => undefined);
      count(res?.status ?? 0);
      await res?.arrayBuffer();
      await sleep(20);
    }
  };
  const workers = [writer(), writer(), writerWithoutKey(), reader()];
  const halt = {
    halt() {
      running = false;
    },
  };
  loads.add(halt);
  return {
    statuses,
    created,
    createdWithoutKey,
    retried,
    lastStatusAt,
    async stop() {
      running = false;
      loads.delete(halt);
      await Promise.all(workers);
    },
  };
}

/**
 * A read, repeated while it is answered 503 (as a client following the contract does), for at most 10 s. Right after
 * a restart a pooled connection that died with the old server can still answer one request 503 after others were
 * served (seen under load after kill -9 of the postmaster): honest, and not a lost write.
 */
async function readAgainWhile503(url: string, token: string): Promise<Response> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(15_000) });
    if (res.status !== 503 || Date.now() > deadline) return res;
    await res.arrayBuffer();
    await sleep(100);
  }
}

/** Every acknowledged user is there (with or without a key), once per Idempotency-Key. */
async function assertNothingLost(service: Service, load: Traffic): Promise<void> {
  const ids = new Set<string>();
  const keys = new Set(load.created.values());
  const perKey = new Map<string, number>();
  let url: string | null = `${service.base}/api/v1/users/?page_size=100`;
  while (url) {
    const res = await readAgainWhile503(url, service.token);
    assert.equal(res.status, 200);
    const page = (await res.json()) as { results: { id: string; email: string }[]; next: string | null };
    for (const user of page.results) {
      ids.add(user.id);
      const key = user.email.split('@')[0] as string;
      if (keys.has(key)) perKey.set(key, (perKey.get(key) ?? 0) + 1);
    }
    url = page.next ? page.next.replace(/^https?:\/\/[^/]+/, service.base) : null;
  }
  for (const id of load.created.keys()) assert.ok(ids.has(id), `acknowledged user ${id} was lost`);
  assert.ok(load.createdWithoutKey.size > 0, 'the writer without keys was acknowledged some sign-ups');
  for (const id of load.createdWithoutKey) assert.ok(ids.has(id), `user ${id}, acknowledged to a sign-up without a key, was lost`);
  assert.equal(keys.size, load.created.size);
  for (const key of keys) assert.equal(perKey.get(key), 1, `Idempotency-Key ${key} created exactly one user`);
}

function assertOnly503(load: Traffic, service: Service): void {
  for (const [status, n] of load.statuses) {
    assert.ok(status < 500 || status === 503, `answered ${status} ${n} times; the service said:\n${problems(service)}`);
  }
}

/** Polls until the service answers an authenticated read with 200; returns how long after `since` that was. */
async function servesAgain(service: Service, since: number): Promise<number> {
  for (;;) {
    const res = await fetch(`${service.base}/api/v1/users/?page_size=1`, { headers: { authorization: `Bearer ${service.token}` } }).catch(() => undefined);
    if (res?.status === 200) return Date.now() - since;
    await res?.arrayBuffer();
    if (Date.now() - since > 30_000) throw new Error(`not serving 30 s after the database returned:\n${problems(service)}`);
    await sleep(50);
  }
}

describe('an external PostgreSQL (DATABASE_URL) restarting under traffic', () => {
  let dataDir: string;
  let postgres: EmbeddedPostgres;
  let pgDir: string;
  let port: number;
  let service: Service | undefined;
  let admin: string;

  before(async () => {
    dataDir = await tempDir();
    const dbDir = await tempDir();
    postgres = await startEmbeddedPostgres({ dataDir: dbDir, role: 'cli', log: () => {} });
    pgDir = path.join(dbDir, 'postgres');
    port = Number(new URL(postgres.url).port);
    admin = postgres.url;
    service = await startService({ DATA_DIR: dataDir, DATABASE_URL: postgres.url });
  });
  after(async () => {
    await stopService(service);
    await postgres.stop().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a fast stop and a start: 503 meanwhile, serving within 2 s of the return, LISTEN re-established, nothing lost', async () => {
    const running = service as Service;
    const load = traffic(running);
    await sleep(1_000);
    await pgCtl(['stop', '-D', pgDir, '-m', 'fast', '-w']);
    await sleep(3_000);
    assert.equal(running.child.exitCode, null, `the service exited:\n${problems(running)}`);
    const down = await fetch(`${running.base}/readyz`);
    assert.equal(down.status, 503);
    await pgCtl([
      'start',
      '-D',
      pgDir,
      '-w',
      '-l',
      path.join(pgDir, 'server.log'),
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`,
    ]);
    const back = Date.now();
    const after = await servesAgain(running, back);
    assert.ok(after <= 2_000, `served again ${after} ms after the database returned`);
    await sleep(1_500);
    await load.stop();
    assert.equal(running.child.exitCode, null, `the service exited:\n${problems(running)}`);
    assert.ok((load.statuses.get(503) ?? 0) > 0, 'the outage was seen as 503');
    assertOnly503(load, running);
    assert.ok((load.lastStatusAt.get(503) ?? 0) <= back + 2_000, '503 answers ended within 2 s of the return');
    await assertNothingLost(running, load);
    assert.ok(load.retried.size > 0, 'some writes were repeated after a 503');
    // The catalogue's change listener is connected again (its last statement is its LISTEN).
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = $1 AND pid <> pg_backend_pid()',
        [`LISTEN ${pg.escapeIdentifier(CATALOGUE_CHANNEL)}`],
      );
      // The catalogue's own channel: the job runner LISTENs too, so "some LISTEN" would not say it.
      assert.ok((rows[0]?.n ?? 0) >= 1, 'the catalogue LISTEN is re-established');
    } finally {
      await client.end();
    }
  });

  test('backend connections terminated every 300 ms: the process stays up, 0 answers other than 503 among the 5xx, nothing lost', async () => {
    const running = service as Service;
    const load = traffic(running);
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    let terminated = 0;
    try {
      for (let i = 0; i < 15; i++) {
        await sleep(300);
        const { rows } = await client.query<{ n: number }>(
          "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
        );
        terminated += rows[0]?.n ?? 0;
      }
    } finally {
      await client.end();
    }
    await sleep(1_500);
    await load.stop();
    assert.ok(terminated > 10, `terminated ${terminated} connections`);
    assert.equal(running.child.exitCode, null, `the service exited:\n${problems(running)}`);
    assertOnly503(load, running);
    assert.ok((load.statuses.get(201) ?? 0) > 10, 'writes went on');
    await assertNothingLost(running, load);
  });
});

describe('the embedded PostgreSQL is supervised', () => {
  let dataDir: string;
  let service: Service | undefined;

  before(async () => {
    dataDir = await tempDir();
    service = await startService({ DATA_DIR: dataDir });
  });
  after(async () => {
    await stopService(service);
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Stops the embedded PostgreSQL (`how`) under traffic: the service answers 503 meanwhile, never 500, loses nothing, and a new postmaster serves. */
  async function restartedUnderTraffic(running: Service, how: (pgDir: string, pid: number) => Promise<void>): Promise<void> {
    const pgDir = path.join(dataDir, 'postgres');
    const pid = await postmasterPid(pgDir);
    assert.ok(pid, 'the embedded PostgreSQL runs');
    const load = traffic(running);
    await sleep(500);
    await how(pgDir, pid);
    await servesAgain(running, Date.now());
    await sleep(1_000);
    await load.stop();
    assert.equal(running.child.exitCode, null, `the service exited:\n${problems(running)}`);
    assertOnly503(load, running);
    await assertNothingLost(running, load);
    const again = await postmasterPid(pgDir);
    assert.ok(again && again !== pid, 'a new postmaster runs');
  }

  test('stopped cleanly (pg_ctl stop: its socket file is gone), it is restarted; the service answers 503 meanwhile, never 500', async () => {
    await restartedUnderTraffic(service as Service, (pgDir) => pgCtl(['stop', '-D', pgDir, '-m', 'fast']));
  });

  test('killed (kill -9 of the postmaster), it is restarted; the service answers 503 meanwhile and serves again; a stop stops it', async () => {
    const running = service as Service;
    await restartedUnderTraffic(running, async (_pgDir, pid) => {
      process.kill(pid, 'SIGKILL');
    });
    assert.match(running.output.join(''), /the embedded PostgreSQL is running again/);

    await stopService(running);
    service = undefined;
    assert.equal((await running.exited).code, 0);
    assert.equal(await postmasterPid(path.join(dataDir, 'postgres')), undefined, 'stopping the service stopped its PostgreSQL');
  });
});

describe('a start-up that fails', () => {
  let blocker: Server;
  let dataDir: string;

  before(async () => {
    dataDir = await tempDir();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    blocker.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a taken port: exits 1 with one clear message, and stops the PostgreSQL it started', async () => {
    const { port } = blocker.address() as { port: number };
    const started = spawnService({ DATA_DIR: dataDir, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
    const timer = setTimeout(() => started.child.kill('SIGKILL'), 60_000);
    const { code, signal } = await started.exited;
    clearTimeout(timer);
    const output = started.output.join('');
    assert.equal(signal, null, `killed after 60 s: the process lingered\n${output}`);
    assert.equal(code, 1);
    const failures = output.split('\n').filter((line) => line.includes('start-up failed'));
    assert.equal(failures.length, 1, output);
    assert.match(failures[0] as string, new RegExp(`the service cannot listen on 127\\.0\\.0\\.1:${port} \\(PORT\\): the address is already in use`));
    // Every step stopped cleanly: a LISTEN connection still being made when the start failed once held the pool's end
    // for its 15 s step timeout ("stopping the database pool failed").
    assert.deepEqual(
      output.split('\n').filter((line) => /stopping the .* failed/.test(line)),
      [],
    );
    assert.equal(await postmasterPid(path.join(dataDir, 'postgres')), undefined, 'the embedded PostgreSQL was stopped');
  });
});

describe('readiness of a starting process', () => {
  let dataDir: string;
  let postgres: EmbeddedPostgres;

  before(async () => {
    dataDir = await tempDir();
    const dbDir = await tempDir();
    postgres = await startEmbeddedPostgres({ dataDir: dbDir, role: 'cli', log: () => {} });
  });
  after(async () => {
    await postgres.stop().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  });

  test('until the catalogue is loaded, /readyz and station answers are 503; no station answer is ever an empty 200', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const started = spawnService({
      DATA_DIR: dataDir,
      DATABASE_URL: postgres.url,
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      // A first start: the catalogue arrives from the sandbox CPO network over OCPI, after the service listens.
      CPO_SANDBOX: 'true',
      CPO_SANDBOX_PORT: String(await freePort()),
      CPO_SANDBOX_STATUS_CHANGES_PER_SECOND: '0',
      STATIONS_DEFAULT_LOCATIONS: '5000',
    });
    const seen: { readyz: number; around: number; count?: number }[] = [];
    let token: string | undefined;
    const deadline = Date.now() + 90_000;
    // Every answer within 10 s, and the exit within 15 s of SIGTERM: a hang fails with the service's output
    // (once, in a full run under load, this test outlived the runner's 120 s with no sign of where it waited).
    const answerWithin = (what: string) => (error: unknown) => {
      if ((error as Error).name === 'TimeoutError') throw new Error(`${what} did not answer within 10 s:\n${started.output.join('')}`);
      return undefined;
    };
    try {
      for (;;) {
        assert.equal(started.child.exitCode, null, started.output.join(''));
        assert.ok(Date.now() < deadline, 'not ready within 90 s');
        token ??= await readFile(path.join(dataDir, 'demo-token'), 'utf8').then(
          (text) => text.trim(),
          () => undefined,
        );
        const readyz = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) })
          .then(async (res) => {
            await res.arrayBuffer();
            return res.status;
          })
          .catch(answerWithin('GET /readyz'));
        let around = 0;
        let count: number | undefined;
        if (token) {
          const res = await fetch(`${base}/api/v1/stations/around/?latitude=50.11&longitude=8.68&distance=100000`, {
            headers: { authorization: `Bearer ${token}` },
            signal: AbortSignal.timeout(10_000),
          }).catch(answerWithin('GET /api/v1/stations/around/'));
          around = res?.status ?? 0;
          const body = (await res?.json().catch(() => undefined)) as { count?: number; error?: { type?: string } } | undefined;
          if (around === 200) count = body?.count;
          if (around === 503) assert.equal(body?.error?.type, 'service_unavailable');
        }
        seen.push({ readyz: readyz ?? 0, around, ...(count === undefined ? {} : { count }) });
        if (readyz === 200 && around === 200) break;
        await sleep(20);
      }
    } finally {
      started.child.kill('SIGTERM');
      const timer = setTimeout(() => started.child.kill('SIGKILL'), 15_000);
      const { signal } = await started.exited;
      clearTimeout(timer);
      assert.notEqual(signal, 'SIGKILL', `the service did not exit within 15 s of SIGTERM:\n${started.output.join('')}`);
    }
    for (const answer of seen) {
      assert.ok([0, 503, 200].includes(answer.readyz), `readyz ${answer.readyz}`);
      assert.ok([0, 503, 200].includes(answer.around), `around ${answer.around}`);
      if (answer.around === 200) assert.ok((answer.count ?? 0) > 0, 'a station answer before the catalogue was loaded');
    }
    const firstReady = seen.findIndex((a) => a.readyz === 200);
    for (const answer of seen.slice(firstReady)) assert.equal(answer.around, 200, 'once ready, stations are served');
    const waiting = seen.filter((a) => a.readyz === 503).length;
    process.stdout.write(`# polls: ${seen.length}, /readyz 503 while loading: ${waiting}, stations 503: ${seen.filter((a) => a.around === 503).length}\n`);
  });
});

describe('a failover: DATABASE_URL names a host that moves to a new server', () => {
  // The primary listens on 127.0.0.2, the promoted copy on 127.0.0.3, both on
  // the same port; the service knows only the name `db.failover.test`.
  const HOST = 'db.failover.test';
  let dataDir: string;
  let primaryDir: string;
  let replicaDir: string;
  let hostsFile: string;
  let port: number;
  let password: string;
  let service: Service | undefined;
  let skip: string | false = false;

  const startAt = (pgDir: string, address: string) =>
    pgCtl(['start', '-D', pgDir, '-w', '-l', path.join(pgDir, 'server.log'), '-o', `-p ${port} -c listen_addresses=${address} -c unix_socket_directories=''`]);
  const adminUrl = (address: string) => `postgres://postgres:${encodeURIComponent(password)}@${address}:${port}/postgres`;

  before(async () => {
    if (!(await canUseOwnHostsFile())) {
      skip = 'this machine does not let a process have its own /etc/hosts (needs root or user namespaces)';
      return;
    }
    dataDir = await tempDir();
    const dbDir = await tempDir();
    const postgres = await startEmbeddedPostgres({ dataDir: dbDir, role: 'cli', log: () => {} });
    const url = new URL(postgres.url);
    port = Number(url.port);
    password = decodeURIComponent(url.password);
    primaryDir = path.join(dbDir, 'postgres');
    replicaDir = path.join(dbDir, 'promoted');
    await pgCtl(['stop', '-D', primaryDir, '-m', 'fast', '-w']);
    await startAt(primaryDir, '127.0.0.2');
    hostsFile = path.join(dbDir, 'hosts');
    await writeFile(hostsFile, `127.0.0.1 localhost\n127.0.0.2 ${HOST}\n`);
    url.hostname = HOST;
    service = await startService({ DATA_DIR: dataDir, DATABASE_URL: url.toString() }, hostsFile);
  });
  after(async () => {
    await stopService(service);
    for (const dir of [replicaDir, primaryDir]) if (dir) await pgCtl(['stop', '-D', dir, '-m', 'immediate', '-w']).catch(() => {});
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    if (primaryDir) await rm(path.dirname(primaryDir), { recursive: true, force: true });
  });

  test('the old server goes, the name moves, the new server starts: 503 meanwhile, serving within 2 s, connected to the new address, nothing lost', async (t) => {
    if (skip) return t.skip(skip);
    const running = service as Service;
    const load = traffic(running);
    await sleep(1_000);
    // The promoted server has every committed write of the old one (a copy of its stopped data directory).
    await pgCtl(['stop', '-D', primaryDir, '-m', 'fast', '-w']);
    await run('cp', ['-a', primaryDir, replicaDir]);
    await writeFile(hostsFile, `127.0.0.1 localhost\n127.0.0.3 ${HOST}\n`);
    await sleep(2_000);
    assert.equal(running.child.exitCode, null, `the service exited:\n${problems(running)}`);
    assert.equal((await fetch(`${running.base}/readyz`)).status, 503);
    await startAt(replicaDir, '127.0.0.3');
    const back = Date.now();
    const after = await servesAgain(running, back);
    assert.ok(after <= 2_000, `served again ${after} ms after the new server started`);
    await sleep(1_500);
    await load.stop();
    assert.equal(running.child.exitCode, null, `the service exited:\n${problems(running)}`);
    assert.ok((load.statuses.get(503) ?? 0) > 0, 'the outage was seen as 503');
    assertOnly503(load, running);
    assert.ok((load.lastStatusAt.get(503) ?? 0) <= back + 2_000, '503 answers ended within 2 s of the new server starting');
    assert.ok((load.statuses.get(201) ?? 0) > 10, 'writes went on');
    await assertNothingLost(running, load);

    const client = new pg.Client({ connectionString: adminUrl('127.0.0.3') });
    await client.connect();
    try {
      const { rows } = await client.query<{ sessions: number; listens: number }>(
        `SELECT count(*)::int AS sessions, count(*) FILTER (WHERE query = $1)::int AS listens
           FROM pg_stat_activity WHERE datname <> 'postgres' AND backend_type = 'client backend'`,
        [`LISTEN ${pg.escapeIdentifier(CATALOGUE_CHANNEL)}`],
      );
      assert.ok((rows[0]?.sessions ?? 0) >= 1, 'the service is connected to the new server');
      assert.ok((rows[0]?.listens ?? 0) >= 1, 'the catalogue LISTEN is re-established on the new server');
    } finally {
      await client.end();
    }
    process.stdout.write(
      `# failover: served again ${after} ms after the new server started; ${load.statuses.get(503) ?? 0} answers 503, ${load.created.size} + ${load.createdWithoutKey.size} users acknowledged (with and without a key)\n`,
    );
  });
});

describe('a graceful stop with a backlog of token pushes', () => {
  let dataDir: string;
  let postgres: EmbeddedPostgres;

  before(async () => {
    dataDir = await tempDir();
    postgres = await startEmbeddedPostgres({ dataDir: await tempDir(), role: 'cli', log: () => {} });
  });
  after(async () => {
    await postgres.stop().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  });

  test('20,000 pushes queued for the sandbox CPO: SIGTERM ends the process within SHUTDOWN_GRACE_MS; what was not sent stays queued, unleased', async () => {
    const service = await startService({
      DATA_DIR: dataDir,
      DATABASE_URL: postgres.url,
      CPO_SANDBOX: 'true',
      CPO_SANDBOX_PORT: String(await freePort()),
      CPO_SANDBOX_STATUS_CHANGES_PER_SECOND: '0',
      STATIONS_DEFAULT_LOCATIONS: '200',
      SHUTDOWN_GRACE_MS: '3000',
    });
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const inserted = await client.query(
        `INSERT INTO ocpi_outbox (connection_id, module, method, path, body, dedupe_key, next_attempt_at, created_at)
         SELECT c.id, 'tokens', 'PUT', '/DE/CAX/' || i || '?type=APP_USER', jsonb_build_object('n', i), 'token:backlog-' || i, now(), now()
           FROM ocpi_connections c, generate_series(1, 20000) AS i WHERE c.status = 'connected'`,
      );
      assert.ok((inserted.rowCount ?? 0) >= 20_000, 'pushes queued for the connected sandbox CPO');
      // Delivery runs every 2 s: wait until it is under way.
      const queued = async () => (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM ocpi_outbox')).rows[0]?.n ?? 0;
      const deadline = Date.now() + 15_000;
      while ((await queued()) >= (inserted.rowCount ?? 0) && Date.now() < deadline) await sleep(50);
      const stopped = Date.now();
      service.child.kill('SIGTERM');
      const { code } = await service.exited;
      const took = Date.now() - stopped;
      assert.equal(code, 0, service.output.join('').slice(-2_000));
      assert.ok(took < 3_000 + 1_000, `the process ended ${took} ms after SIGTERM`);
      const { rows } = await client.query<{ n: number; leased: number }>(
        'SELECT count(*)::int AS n, count(*) FILTER (WHERE leased_until IS NOT NULL)::int AS leased FROM ocpi_outbox',
      );
      assert.equal(rows[0]?.leased, 0, 'nothing left leased: another process or the next start sends the rest at once');
      process.stdout.write(
        `# stop with a backlog: ${took} ms after SIGTERM; ${(inserted.rowCount ?? 0) - (rows[0]?.n ?? 0)} pushes sent, ${rows[0]?.n} left queued\n`,
      );
    } finally {
      await client.end();
      await stopService(service);
    }
  });
});
