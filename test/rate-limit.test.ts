// Rate limits (contract.md "Limits"), through HTTP on real PostgreSQL: the
// RateLimit-* headers, 429 rate_limited with Retry-After, a client's own
// limit set by the CLI (0 = unlimited), clients counted apart, one count
// shared by two app instances on one database (as two processes), the
// limiter failing open when its database is away, and the OCPI per-connection
// limit answered in OCPI's envelope.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildApp } from '../src/app.ts';
import { createClientsService } from '../src/modules/clients/service.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createDatabase } from '../src/platform/db.ts';
import type { HttpApp } from '../src/platform/http/server.ts';
import { WINDOW_MS } from '../src/platform/rate-limit/limiter.ts';
import { assertProblem, setupTestApp, type TestContext, testConfig } from './helpers.ts';
import { registerPeer } from './ocpi-support.ts';

const root = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const LIST = '/api/v1/users/?page_size=1';

let ctx: TestContext;
let databaseUrl: string;

// A default far below 1200 keeps the tests short; authCacheTtlMs 0: a changed limit applies at the next request.
before(async () => {
  ctx = await setupTestApp({ env: { RATE_LIMIT_PER_MINUTE: '20', OCPI_RATE_LIMIT_PER_MINUTE: '4' }, authCacheTtlMs: 0 });
  databaseUrl = ctx.db.pool.options.connectionString as string;
});
after(() => ctx.close());

/** Moves the test clock to the start of the next window (plus `intoMs`), so each test counts from zero. */
function nextWindow(intoMs = 1_000): void {
  const now = ctx.clock.now().getTime();
  ctx.clock.set(new Date(now - (now % WINDOW_MS) + WINDOW_MS + intoMs));
}

async function statuses(app: HttpApp, token: string, n: number, url = LIST): Promise<number[]> {
  return Promise.all(
    Array.from({ length: n }, async () => (await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })).statusCode),
  );
}

async function inTurn(app: HttpApp, token: string, n: number, url = LIST): Promise<number[]> {
  const list: number[] = [];
  for (let i = 0; i < n; i++) list.push(...(await statuses(app, token, 1, url)));
  return list;
}

const count = (list: number[], status: number) => list.filter((s) => s === status).length;

describe('rate limits of the client API', () => {
  it('answers with RateLimit-Limit, -Remaining and -Reset, counting down within the window', async () => {
    nextWindow(15_000);
    const { token } = await ctx.newClient();
    const first = await ctx.call('GET', LIST, { token });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers['ratelimit-limit'], '20');
    assert.equal(first.headers['ratelimit-remaining'], '19');
    assert.equal(first.headers['ratelimit-reset'], '45', 'seconds to the end of the window, by the injected clock');
    const second = await ctx.call('GET', LIST, { token });
    assert.equal(second.headers['ratelimit-remaining'], '18');
    // Error answers carry them too (the request was counted).
    const missing = await ctx.call('GET', '/api/v1/users/00000000-0000-4000-8000-000000000000/', { token });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['ratelimit-remaining'], '17');
  });

  it('refuses the request past the limit with 429 rate_limited and Retry-After, until the next window', async () => {
    nextWindow(50_000);
    const { token } = await ctx.newClient();
    for (let i = 0; i < 20; i++) assert.equal((await ctx.call('GET', LIST, { token })).status, 200);
    const refused = await ctx.call('GET', LIST, { token });
    assertProblem(refused, 429, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '10');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assert.equal(refused.headers['ratelimit-reset'], '10');
    ctx.clock.advance(10_000);
    const again = await ctx.call('GET', LIST, { token });
    assert.equal(again.status, 200, 'a new window');
    assert.equal(again.headers['ratelimit-remaining'], '19');
  });

  it('counts each client apart', async () => {
    nextWindow();
    const busy = await ctx.newClient();
    const quiet = await ctx.newClient();
    const burst = await statuses(ctx.app, busy.token, 30);
    assert.equal(count(burst, 200), 20);
    assert.equal(count(burst, 429), 10);
    const other = await ctx.call('GET', LIST, { token: quiet.token });
    assert.equal(other.status, 200);
    assert.equal(other.headers['ratelimit-remaining'], '19');
  });

  it('applies a client’s own limit set with `clients update --rate-limit N`, 0 = unlimited, "default" = the default again', async () => {
    nextWindow();
    const { clientId, token } = await ctx.newClient();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-cli-'));
    const cli = (...args: string[]) =>
      run(process.execPath, [path.join(root, 'bin/charging-access.js'), ...args], {
        cwd: root,
        env: { ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: dataDir, NODE_ENV: 'test', RATE_LIMIT_PER_MINUTE: '20' },
      });
    try {
      await cli('clients', 'update', clientId, '--rate-limit', '3');
      const listed = JSON.parse((await cli('clients', 'list', '--json')).stdout) as { client_id: string; rate_limit_per_minute: number | null }[];
      assert.equal(listed.find((c) => c.client_id === clientId)?.rate_limit_per_minute, 3);
      const limited = await statuses(ctx.app, token, 8);
      assert.equal(count(limited, 200), 3);
      assert.equal(count(limited, 429), 5);
      assert.equal((await ctx.call('GET', LIST, { token })).headers['ratelimit-limit'], '3');

      await cli('clients', 'update', clientId, '--rate-limit', '0');
      assert.match((await cli('clients', 'list')).stdout, new RegExp(`${clientId} .*rate=unlimited/min`));
      const unlimited = await statuses(ctx.app, token, 40);
      assert.equal(count(unlimited, 200), 40, 'unlimited');
      const res = await ctx.call('GET', LIST, { token });
      assert.equal(res.headers['ratelimit-limit'], undefined, 'no limit, no headers');

      await cli('clients', 'update', clientId, '--rate-limit', 'default');
      assert.equal((await ctx.call('GET', LIST, { token })).headers['ratelimit-limit'], '20');
      await assert.rejects(cli('clients', 'update', clientId, '--rate-limit', '-1'), /--rate-limit N/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('shares one count between two instances on the same database: never more than the limit in all', async () => {
    nextWindow();
    // A second instance as another process would have it: its own credential cache and limiter, the same database.
    const db = createDatabase(databaseUrl, { max: 5 });
    const clients = createClientsService({ db, clock: ctx.clock, jwt: ctx.config.jwt, keys: ctx.keys, cacheTtlMs: 0 });
    const second = await buildApp({ config: ctx.config, db, clock: ctx.clock, authenticate: clients.authenticate, catalogue: ctx.catalogue, logger: false });
    try {
      const { clientId, token } = await ctx.newClient();
      await ctx.clients.setRateLimit(clientId, 200);
      // Alternating and concurrent: 300 requests, half on each instance.
      const [a, b] = await Promise.all([statuses(ctx.app, token, 150), statuses(second, token, 150)]);
      // Never more than the limit; fewer by at most what one instance holds unspent (1.25 chunks of 1/20 of the limit).
      const admitted = count(a, 200) + count(b, 200);
      assert.ok(admitted <= 200 && admitted >= 200 - 13, `admitted ${count(a, 200)} + ${count(b, 200)}`);
      assert.ok(count(a, 200) > 0 && count(b, 200) > 0, 'both instances served');
      assert.equal(count(a, 429) + count(b, 429), 300 - admitted);
      // What an instance still holds it serves; then the window has served exactly the limit, and both refuse.
      const drained = [...(await inTurn(ctx.app, token, 15)), ...(await inTurn(second, token, 15))];
      assert.equal(admitted + count(drained, 200), 200);
      assert.deepEqual([...(await inTurn(second, token, 1)), ...(await inTurn(ctx.app, token, 1))], [429, 429]);
      // Sequential traffic on one instance after the other used most of the window.
      nextWindow();
      assert.equal(count(await inTurn(second, token, 150), 200), 150);
      const rest = await inTurn(ctx.app, token, 60);
      assert.ok(count(rest, 200) <= 50, `at most the 50 left: ${count(rest, 200)}`);
      // Under-counting bound: the second instance holds at most 1.25 chunks (1/20 of the limit) unspent.
      assert.ok(count(rest, 200) >= 50 - 13, `at least the 50 left less one chunk: ${count(rest, 200)}`);
    } finally {
      await second.close();
      await db.close();
    }
  });

  it('forgets windows older than the previous one', async () => {
    nextWindow();
    const { token } = await ctx.newClient();
    const counted = async () =>
      (
        await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM rate_limit_windows WHERE window_start < $1', [
          new Date(ctx.clock.now().getTime() - WINDOW_MS),
        ])
      ).rows[0]?.n;
    assert.equal((await ctx.call('GET', LIST, { token })).status, 200);
    nextWindow();
    nextWindow();
    assert.ok(((await counted()) ?? 0) > 0, 'windows of earlier tests are there');
    assert.equal((await ctx.call('GET', LIST, { token })).status, 200, 'the first request of a window starts the purge');
    for (let i = 0; i < 50 && (await counted()) !== 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await counted(), 0);
  });

  it('admits requests (fails open) when the limiter cannot reach its database', async () => {
    nextWindow();
    const db = createDatabase(databaseUrl, { max: 2 });
    const clients = createClientsService({ db: ctx.db, clock: ctx.clock, jwt: ctx.config.jwt, keys: ctx.keys, cacheTtlMs: 60_000 });
    const warnings: string[] = [];
    const app = await buildApp({
      config: ctx.config,
      db,
      clock: ctx.clock,
      authenticate: clients.authenticate,
      catalogue: ctx.catalogue,
      loggerInstance: (await import('pino')).pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) }),
    });
    try {
      const { clientId, token } = await ctx.newClient();
      await ctx.clients.setRateLimit(clientId, 1);
      const around = '/api/v1/stations/around/?latitude=52.52&longitude=13.40';
      assert.deepEqual(await inTurn(app, token, 2, around), [200, 429]);
      await db.close(); // the limiter's database is gone; this route needs none
      nextWindow(); // the used-up window is known without asking; a new one must be asked for
      assert.deepEqual(await inTurn(app, token, 3, around), [200, 200, 200]);
      assert.equal(warnings.filter((m) => m.startsWith('rate limits cannot be counted')).length, 1, warnings.join('\n'));
    } finally {
      await app.close();
    }
  });
});

describe('rate limits of OCPI peers', () => {
  /** A registered peer: its token as it travels (Base64). */
  async function connectedPeer(name: string): Promise<string> {
    const token = await registerPeer(ctx.ocpi, ctx, { name, parties: [{ country_code: 'DE', party_id: name.slice(0, 3).toUpperCase() }] });
    return Buffer.from(token, 'utf8').toString('base64');
  }

  it('limits each connection on its own, answering 429 with OCPI status 2000 and Retry-After', async () => {
    nextWindow(30_000);
    const one = await connectedPeer('one');
    const two = await connectedPeer('two');
    const get = (token: string) => ctx.call('GET', '/ocpi/2.2.1', { headers: { authorization: `Token ${token}` } });
    for (let i = 0; i < 4; i++) {
      const res = await get(one);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['ratelimit-remaining'], String(3 - i));
    }
    const refused = await get(one);
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.status_code, 2000);
    assert.match(refused.body.status_message, /4 requests per minute/);
    assert.ok(!Number.isNaN(Date.parse(refused.body.timestamp)));
    assert.equal(refused.headers['retry-after'], '30');
    assert.equal((await get(two)).status, 200, 'another connection has its own count');
  });
});

describe('rate limit settings', () => {
  it('defaults to 1200 per client and 120000 per OCPI connection; refuses a bad value naming the variable', () => {
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '/nonexistent-test-data' });
    assert.equal(config.rateLimitPerMinute, 1200);
    assert.equal(config.ocpi.rateLimitPerMinute, 120_000);
    assert.throws(() => testConfig({ RATE_LIMIT_PER_MINUTE: 'many' }), /RATE_LIMIT_PER_MINUTE: must be an integer/);
    assert.throws(() => testConfig({ OCPI_RATE_LIMIT_PER_MINUTE: '-5' }), /OCPI_RATE_LIMIT_PER_MINUTE: must be an integer/);
  });
});
