// The real entry point on a fresh DATA_DIR, as a newcomer runs it: embedded
// PostgreSQL, generated key and certificate, demo client, HTTPS; the operator
// CLI beside it; a clean stop; a second start that reuses everything.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(url: string, options: { ca?: string; token?: string; method?: string; body?: unknown; servername?: string } = {}): Promise<Answer> {
  const target = new URL(url);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const make = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = make(
      target,
      {
        method: options.method ?? 'GET',
        ...(options.ca ? { ca: options.ca } : {}),
        headers: {
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Services started and not yet stopped: a test that failed half-way stops them in `after`. */
const running = new Set<Service>();

class Service {
  readonly output: string[] = [];
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> | undefined;

  private readonly env: Record<string, string>;

  constructor(env: Record<string, string>) {
    this.env = env;
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
      cwd: root,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    running.add(this);
    await new Promise<void>((resolve, reject) => {
      // Not ready in time: killed, so that a failed test never leaves a service behind (its file would never end).
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`service not ready in 90 s:\n${this.output.join('')}`));
      }, 90_000);
      const onData = (chunk: Buffer) => {
        this.output.push(chunk.toString());
        if (this.output.join('').includes('is ready at')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`service exited with ${code}:\n${this.output.join('')}`));
      });
    });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    this.child?.kill(signal);
    const code = (await this.exited) ?? null;
    running.delete(this);
    return code;
  }
}

function cli(env: Record<string, string>, ...args: string[]) {
  return run(process.execPath, [path.join(root, 'bin/charging-access.js'), ...args], { cwd: root, env: { ...process.env, ...env } });
}

describe('start-up on a fresh DATA_DIR', { timeout: 240_000 }, () => {
  let dataDir: string;
  let env: Record<string, string>;
  let base: string;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-start-'));
    await chmod(dataDir, 0o755);
    const port = await freePort();
    base = `https://localhost:${port}`;
    env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: '',
      NODE_ENV: 'development',
      CPO_SANDBOX_PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
    };
  });

  after(async () => {
    // A test that failed half-way leaves its service running: it is stopped before its DATA_DIR goes.
    for (const service of running) await service.stop('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  test('first start, HTTPS with the demo token, CLI beside it, clean stop, second start reuses everything', async () => {
    const service = new Service(env);
    await service.start();
    const printed = service.output.join('');
    assert.match(printed, /curl --cacert \S+localhost-cert\.pem -H "Authorization: Bearer \$\(cat \S+demo-token\)" https:\/\/localhost:\d+\/api\/v1\/users\//);

    const ca = await readFile(path.join(dataDir, 'tls/localhost-cert.pem'), 'utf8');
    const token = (await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim();
    const key = await readFile(path.join(dataDir, 'keys/operator-signing-key.pem'), 'utf8');
    assert.match(key, /BEGIN PRIVATE KEY/);
    assert.ok(!printed.includes(token), 'the token itself is never printed');

    const list = await call(`${base}/api/v1/users/`, { ca, token });
    assert.equal(list.status, 200, list.body);
    assert.match(String(list.headers['strict-transport-security']), /max-age=31536000/);
    const created = await call(`${base}/api/v1/users/`, { ca, token, method: 'POST', body: { custom_properties: { external_id: 'survives-restart' } } });
    assert.equal(created.status, 201, created.body);
    const userId = JSON.parse(created.body).id as string;
    assert.equal((await call(`${base}/api/v1/users/`, { ca })).status, 401);
    assert.equal((await call(`${base}/readyz`, { ca })).status, 200);

    // The default catalogue came from the sandbox CPO network, over OCPI.
    const cpos = JSON.parse((await cli(env, 'cpo', 'list', '--json')).stdout) as { name: string; status: string; versions_url: string }[];
    assert.deepEqual(
      cpos.map((c) => [c.name, c.status]),
      [['sandbox', 'connected']],
    );
    const invite = JSON.parse((await cli(env, 'cpo', 'invite', '--json')).stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(invite).sort(), ['token', 'versions_url']);
    assert.equal(invite.versions_url, `${base}/ocpi/versions`);
    // Without PORT, the CLI hands out the address the service recorded at start (not the default port 8443).
    const unported = await cli({ ...env, PORT: '', HOST: '' }, 'cpo', 'invite', '--json');
    assert.equal(JSON.parse(unported.stdout).versions_url, `${base}/ocpi/versions`);
    assert.equal(unported.stderr, '');
    const synced = JSON.parse((await cli(env, 'cpo', 'sync', 'sandbox', '--json')).stdout) as Record<string, number>;
    assert.equal(synced.skipped, 0);
    const around = await call(`${base}/api/v1/stations/around/?latitude=52.52&longitude=13.405&distance=20000`, { ca, token });
    assert.equal(around.status, 200, around.body);
    assert.ok((JSON.parse(around.body) as { count: number }).count > 0, 'stations around Berlin');

    // Prometheus text on its own loopback port: the requests above, the pool, the catalogue the sandbox CPO network delivered (now loaded).
    const metrics = await call(`http://127.0.0.1:${env.METRICS_PORT}/metrics`);
    assert.equal(metrics.status, 200);
    assert.equal(metrics.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(metrics.body, /^charging_access_http_requests_total\{route="\/api\/v1\/users\/",method="POST",status="201"\} 1$/m);
    assert.match(metrics.body, /^charging_access_db_pool_clients [1-9]\d*$/m);
    assert.match(metrics.body, /^charging_access_catalogue_stations [1-9]\d*$/m);
    assert.match(metrics.body, /^charging_access_ocpi_calls_total\{peer="sandbox",module="locations",outcome="success"\} [1-9]\d*$/m);

    // The service talks to its embedded PostgreSQL over the server's Unix socket (no client address), not TCP.
    const pid = (await readFile(path.join(dataDir, 'postgres/postmaster.pid'), 'utf8')).split('\n');
    const password = (await readFile(path.join(dataDir, 'postgres-password'), 'utf8')).trim();
    const admin = new pg.Client({ host: '127.0.0.1', port: Number(pid[3]), user: 'postgres', password, database: 'charging_access' });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ socket: boolean; n: number }>(
        `SELECT client_addr IS NULL AS socket, count(*)::int AS n FROM pg_stat_activity
          WHERE application_name LIKE 'charging-access%' AND backend_type = 'client backend' GROUP BY 1 ORDER BY 1`,
      );
      assert.deepEqual(
        rows.map((r) => r.socket),
        [true],
        `the service's connections: ${JSON.stringify(rows)}`,
      );
    } finally {
      await admin.end();
    }

    // Plain HTTP on the same port: allowed from loopback in development mode.
    const plain = await call(`${base.replace('https:', 'http:').replace('localhost', '127.0.0.1')}/api/v1/users/`, { token });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['strict-transport-security'], undefined);

    // The CLI reaches the running service's database.
    const createdClient = await cli(env, 'clients', 'create', '--name', 'Fleet app', '--json');
    const issued = JSON.parse(createdClient.stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(issued).sort(), ['client_id', 'token', 'token_id']);
    assert.equal((await call(`${base}/api/v1/users/`, { ca, token: issued.token })).status, 200);
    const second = JSON.parse((await cli(env, 'tokens', 'issue', issued.client_id as string, '--expires-in', '30d', '--json')).stdout) as Record<
      string,
      string
    >;
    assert.equal((await call(`${base}/api/v1/users/`, { ca, token: second.token })).status, 200);

    // Revocation and disabling take effect on the running service within 5 s.
    const waitFor401 = async (t: string) => {
      const started = Date.now();
      while (Date.now() - started < 6_000) {
        if ((await call(`${base}/api/v1/users/`, { ca, token: t })).status === 401) return Date.now() - started;
        await new Promise((r) => setTimeout(r, 200));
      }
      return Number.POSITIVE_INFINITY;
    };
    await cli(env, 'tokens', 'revoke', second.token_id as string);
    assert.ok((await waitFor401(second.token as string)) <= 5_000, 'revoked token refused within 5 s');
    assert.equal((await call(`${base}/api/v1/users/`, { ca, token: issued.token })).status, 200, 'other tokens still work');
    await cli(env, 'clients', 'disable', issued.client_id as string);
    assert.ok((await waitFor401(issued.token as string)) <= 5_000, 'disabled client refused within 5 s');
    const listed = JSON.parse((await cli(env, 'clients', 'list', '--json')).stdout) as { name: string; disabled_at: string | null }[];
    assert.deepEqual(listed.map((c) => [c.name, c.disabled_at !== null]).sort(), [
      ['Fleet app', true],
      ['demo', false],
    ]);

    // SIGTERM: clean exit, PostgreSQL stopped.
    assert.equal(await service.stop('SIGTERM'), 0);
    assert.ok(!existsSync(path.join(dataDir, 'postgres/postmaster.pid')), 'PostgreSQL stopped');

    // The CLI works while the service is down (it starts and stops the database itself).
    const offlineRun = await cli(env, 'clients', 'list', '--json');
    const offline = JSON.parse(offlineRun.stdout) as unknown[];
    assert.equal(offline.length, 2);
    assert.equal(offlineRun.stderr, '', 'no routine noise (such as where the database started) on stderr');
    assert.ok(!existsSync(path.join(dataDir, 'postgres/postmaster.pid')), 'the CLI stopped the database it started');

    // Second start: same token, key, certificate and data.
    const again = new Service(env);
    await again.start();
    assert.equal((await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim(), token);
    assert.equal(await readFile(path.join(dataDir, 'keys/operator-signing-key.pem'), 'utf8'), key);
    assert.equal(await readFile(path.join(dataDir, 'tls/localhost-cert.pem'), 'utf8'), ca);
    const kept = await call(`${base}/api/v1/users/${userId}/`, { ca, token });
    assert.equal(kept.status, 200);
    assert.equal(JSON.parse(kept.body).custom_properties.external_id, 'survives-restart');
    const cposAgain = JSON.parse((await cli(env, 'cpo', 'list', '--json')).stdout) as unknown[];
    assert.equal(cposAgain.length, 3, 'a restart reuses the sandbox connection (beside the two invitations)');
    assert.equal(await again.stop('SIGINT'), 0);
    assert.ok(!existsSync(path.join(dataDir, 'postgres/postmaster.pid')), 'PostgreSQL stopped after SIGINT');
  });

  test('an invalid setting stops start-up with a message naming the variable', async () => {
    await assert.rejects(
      run(process.execPath, [path.join(root, 'src/main.ts')], { cwd: root, env: { ...process.env, ...env, PORT: 'eighty' } }),
      (error: { code: number; stderr: string }) => {
        assert.equal(error.code, 2);
        assert.match(error.stderr, /PORT/);
        return true;
      },
    );
  });
});
