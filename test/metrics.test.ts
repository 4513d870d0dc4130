// Prometheus metrics: the listener's text, and figures that move with what the
// service does (requests, database, job queues, OCPI calls, processor calls,
// catalogue, rate-limit rejections, backlogs), scraped over HTTP as Prometheus does.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { enqueuePush } from '../src/modules/ocpi/repository.ts';
import { createStripeProcessor } from '../src/modules/payments/stripe-processor.ts';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { createDatabase } from '../src/platform/db.ts';
import { AppError } from '../src/platform/errors.ts';
import { enqueue, queueFigures } from '../src/platform/jobs.ts';
import { createMetrics, listenMetrics, type Metrics } from '../src/platform/metrics.ts';
import { pendingDeliveries } from '../src/sandbox/stripe/store.ts';
import { freePort, setupTestApp, type TestContext } from './helpers.ts';
import { ocpiLocation, ocpiTariff } from './stations-fixtures.ts';

let t: TestContext;
let metrics: Metrics;
let listener: Awaited<ReturnType<typeof listenMetrics>>;

before(async () => {
  metrics = createMetrics();
  t = await setupTestApp({ metrics });
  // As main.ts names them once they exist.
  metrics.watch({
    pool: t.db.pool,
    jobQueues: () => queueFigures(t.db, t.clock.now()),
    ocpiPushes: t.ocpi.pushBacklog,
    stripeWebhooks: () => pendingDeliveries(t.db, t.clock.now()),
    catalogue: () => ({ stations: t.catalogue.size, evses: t.catalogue.evseCount }),
  });
  // Answers a rate limit would give (rate limiting itself lands separately): the counter follows the status, wherever it was decided.
  t.app.get('/api/v1/test-rate-limited', async () => {
    throw new AppError('rate_limited', 'Too many requests.', { headers: { 'Retry-After': '1' } });
  });
  t.app.get('/ocpi/test-rate-limited', async (_request, reply) => reply.code(429).send({ status_code: 2000, timestamp: new Date().toISOString() }));
  listener = await listenMetrics(metrics, { host: '127.0.0.1', port: 0 });
});

after(async () => {
  await listener?.close();
  await t?.close();
});

async function scrape(): Promise<string> {
  const response = await fetch(listener.url);
  assert.equal(response.status, 200);
  return response.text();
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The value of one sample (labels in any order), or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${escapeRegExp(name)}(?:\\{(.*)\\})? (\\S+)$`).exec(line);
    if (!match) continue;
    const found = new Map([...(match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (found.size === wanted.length && wanted.every(([k, v]) => found.get(k) === v)) return Number(match[2]);
  }
  return undefined;
}

describe('configuration', () => {
  const config = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'development', ...env }).metrics;
  test('on loopback port 9464 by default, off in tests, 0 or off disables it, METRICS_HOST moves it', () => {
    assert.deepEqual(config({}), { host: '127.0.0.1', port: 9464 });
    assert.equal(config({ NODE_ENV: 'test' }), undefined);
    assert.deepEqual(config({ NODE_ENV: 'test', METRICS_PORT: '9100' }), { host: '127.0.0.1', port: 9100 });
    assert.equal(config({ METRICS_PORT: '0' }), undefined);
    assert.equal(config({ METRICS_PORT: 'OFF' }), undefined);
    assert.deepEqual(config({ METRICS_PORT: '9100', METRICS_HOST: '0.0.0.0' }), { host: '0.0.0.0', port: 9100 });
  });
  test('a bad value stops start-up naming the variable', () => {
    assert.throws(
      () => config({ METRICS_PORT: 'on' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'METRICS_PORT',
    );
    assert.throws(
      () => config({ METRICS_PORT: '70000' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'METRICS_PORT',
    );
    assert.throws(
      () => config({ PORT: '9100', METRICS_PORT: '9100' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'METRICS_PORT' && /must differ from PORT/.test(error.message),
    );
    assert.throws(
      () => config({ METRICS_HOST: 'a host' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'METRICS_HOST',
    );
  });
});

describe('the metrics listener', () => {
  test('GET /metrics answers Prometheus text (0.0.4) with the process metrics; anything else is 404', async () => {
    const response = await fetch(listener.url);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    assert.match(text, /^# HELP charging_access_http_requests_total /m);
    assert.match(text, /^# TYPE charging_access_http_request_duration_seconds histogram$/m);
    assert.ok((sample(text, 'charging_access_process_resident_memory_bytes') ?? 0) > 0, 'default process metrics');
    assert.equal((await fetch(listener.url.replace('/metrics', '/'))).status, 404);
    assert.equal((await fetch(listener.url.replace('/metrics', '/metrics/x'))).status, 404);
    assert.equal((await fetch(listener.url, { method: 'POST' })).status, 404);
  });

  test('a port taken by another listener fails the start-up', async () => {
    await assert.rejects(listenMetrics(metrics, { host: '127.0.0.1', port: Number(new URL(listener.url).port) }), /EADDRINUSE/);
  });
});

describe('HTTP requests', () => {
  test('are counted and timed by route pattern (never the raw URL), method and status', async () => {
    const { token } = await t.newClient();
    const users = { route: '/api/v1/users/', method: 'GET', status: '200' };
    const before = sample(await scrape(), 'charging_access_http_requests_total', users) ?? 0;
    assert.equal((await t.call('GET', '/api/v1/users/', { token })).status, 200);
    assert.equal((await t.call('GET', '/api/v1/users/', { token })).status, 200);
    const id = '00000000-0000-4000-8000-000000000001';
    assert.equal((await t.call('GET', `/api/v1/users/${id}/`, { token })).status, 404);
    assert.equal((await t.call('GET', `/no/such/${id}`)).status, 404);

    const text = await scrape();
    assert.equal(sample(text, 'charging_access_http_requests_total', users), before + 2);
    assert.equal(sample(text, 'charging_access_http_request_duration_seconds_count', users), before + 2);
    assert.ok((sample(text, 'charging_access_http_request_duration_seconds_bucket', { ...users, le: '+Inf' }) ?? 0) >= 2);
    assert.equal(sample(text, 'charging_access_http_requests_total', { route: '/api/v1/users/:user_id/', method: 'GET', status: '404' }), 1);
    assert.equal(sample(text, 'charging_access_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1);
    assert.doesNotMatch(text, new RegExp(id), 'no raw URL in any label');
  });

  test('a 429 counts as a rate-limit rejection, by scope (API client or OCPI peer)', async () => {
    const before = await scrape();
    const client = sample(before, 'charging_access_rate_limit_rejections_total', { scope: 'client' }) ?? 0;
    const ocpi = sample(before, 'charging_access_rate_limit_rejections_total', { scope: 'ocpi' }) ?? 0;
    assert.equal((await t.call('GET', '/api/v1/test-rate-limited')).status, 429);
    assert.equal((await t.call('GET', '/api/v1/test-rate-limited')).status, 429);
    assert.equal((await t.call('GET', '/ocpi/test-rate-limited')).status, 429);
    const text = await scrape();
    assert.equal(sample(text, 'charging_access_rate_limit_rejections_total', { scope: 'client' }), client + 2);
    assert.equal(sample(text, 'charging_access_rate_limit_rejections_total', { scope: 'ocpi' }), ocpi + 1);
  });
});

describe('the database', () => {
  test('pool gauges show the pool', async () => {
    await t.db.query('SELECT 1');
    const text = await scrape();
    assert.equal(sample(text, 'charging_access_db_pool_clients'), t.db.pool.totalCount);
    assert.ok(t.db.pool.totalCount > 0);
    assert.equal(sample(text, 'charging_access_db_pool_idle_clients'), t.db.pool.idleCount);
    assert.equal(sample(text, 'charging_access_db_pool_waiting_requests'), 0);
  });

  test('errors are counted by kind: a failing statement is other, an unreachable database unavailable', async () => {
    const before = await scrape();
    const other = sample(before, 'charging_access_db_errors_total', { kind: 'other' }) ?? 0;
    const unavailable = sample(before, 'charging_access_db_errors_total', { kind: 'unavailable' }) ?? 0;
    await assert.rejects(t.db.query('SELECT * FROM no_such_table'));
    await assert.rejects(t.db.transaction((tx) => tx.query('SELECT 1/0')));
    // The caller's own failure inside a transaction is not a database error.
    await assert.rejects(
      t.db.transaction(async () => {
        throw new Error('the work failed');
      }),
    );
    const gone = createDatabase(`postgres://nobody@127.0.0.1:${await freePort()}/none`, { onError: metrics.databaseError });
    await assert.rejects(gone.query('SELECT 1'));
    await gone.close();
    const text = await scrape();
    assert.equal(sample(text, 'charging_access_db_errors_total', { kind: 'other' }), other + 2);
    assert.equal(sample(text, 'charging_access_db_errors_total', { kind: 'unavailable' }), unavailable + 1);
  });
});

describe('job queues', () => {
  test('depth and the wait of the oldest due job, by queue, read from PostgreSQL at scrape time', async () => {
    const queue = 'metrics-test';
    assert.equal(sample(await scrape(), 'charging_access_job_queue_depth', { queue }), undefined);
    await enqueue(t.db, { queue, payload: {} }, t.clock.now());
    await enqueue(t.db, { queue: 'metrics-later', payload: {}, runAt: new Date(t.clock.now().getTime() + 3_600_000) }, t.clock.now());
    t.clock.advance(30_000);
    const text = await scrape();
    assert.equal(sample(text, 'charging_access_job_queue_depth', { queue }), 1);
    assert.equal(sample(text, 'charging_access_job_queue_oldest_due_seconds', { queue }), 30);
    assert.equal(sample(text, 'charging_access_job_queue_depth', { queue: 'metrics-later' }), 1);
    assert.equal(sample(text, 'charging_access_job_queue_oldest_due_seconds', { queue: 'metrics-later' }), 0, 'a job not yet due does not wait');
    assert.equal(sample(text, 'charging_access_jobs_running', { queue }), 0);
  });
});

describe('OCPI calls', () => {
  let peer: Server;
  let peerUrl: string;
  before(async () => {
    // A CPO that refuses our token, and one that answers a version list with none we speak (2.2.1, 2.1.1).
    peer = createServer((request, response) => {
      const body =
        request.url === '/refuse/versions'
          ? { status_code: 2001, status_message: 'Unknown token', timestamp: new Date().toISOString() }
          : { status_code: 1000, data: [{ version: '2.0', url: 'http://127.0.0.1/2.0' }], timestamp: new Date().toISOString() };
      response.writeHead(request.url === '/refuse/versions' ? 401 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => peer.close(() => resolve())));

  test('are counted by peer, module and outcome (rejected, success, unreachable)', async () => {
    await assert.rejects(t.ocpi.connections.connect({ versionsUrl: `${peerUrl}/refuse/versions`, token: 'token-a', name: 'refusing-cpo' }));
    await assert.rejects(t.ocpi.connections.connect({ versionsUrl: `${peerUrl}/old/versions`, token: 'token-a', name: 'old-cpo' }), /no common OCPI version/);
    await assert.rejects(t.ocpi.connections.connect({ versionsUrl: `http://127.0.0.1:${await freePort()}/versions`, token: 'token-a', name: 'gone-cpo' }));
    const text = await scrape();
    // Refused with 401, the versions call is tried once more with the token unencoded (a 2.1.1 peer's way): two calls.
    assert.equal(sample(text, 'charging_access_ocpi_calls_total', { peer: 'refusing-cpo', module: 'versions', outcome: 'rejected' }), 2);
    assert.equal(sample(text, 'charging_access_ocpi_calls_total', { peer: 'old-cpo', module: 'versions', outcome: 'success' }), 1);
    assert.equal(sample(text, 'charging_access_ocpi_calls_total', { peer: 'gone-cpo', module: 'versions', outcome: 'unreachable' }), 1);
  });

  test('pushes waiting in the outbox are the push backlog, by module', async () => {
    const invited = await t.ocpi.connections.invite({ name: 'push-target' });
    const connection = await t.ocpi.connections.findByName(invited.name);
    assert.ok(connection);
    assert.equal(sample(await scrape(), 'charging_access_ocpi_push_backlog', { module: 'tokens' }), undefined);
    const queuedAt = t.clock.now();
    for (const user of ['u1', 'u2']) {
      await enqueuePush(
        t.db,
        { connection_id: connection.id, module: 'tokens', method: 'PUT', path: `/DE/CAX/${user}`, body: {}, dedupe_key: `token:${user}` },
        queuedAt,
      );
    }
    t.clock.advance(5_000);
    const text = await scrape();
    assert.equal(sample(text, 'charging_access_ocpi_push_backlog', { module: 'tokens' }), 2);
    assert.equal(sample(text, 'charging_access_ocpi_push_oldest_seconds', { module: 'tokens' }), 5);
  });
});

describe('the payment processor', () => {
  test('calls are counted by operation and outcome: an answer is success, an unreachable processor unavailable', async () => {
    await t.processor.createCustomer({ idempotencyKey: `metrics-${Date.now()}`, metadata: {} });
    const unreachable = createStripeProcessor({
      ...t.sandbox.keys,
      apiBase: `http://127.0.0.1:${await freePort()}`,
      sandbox: true,
      maxNetworkRetries: 0,
      metrics,
    });
    await assert.rejects(unreachable.createCustomer({ idempotencyKey: 'metrics-unreachable', metadata: {} }));
    const text = await scrape();
    assert.equal(sample(text, 'charging_access_payment_processor_calls_total', { operation: 'createCustomer', outcome: 'success' }), 1);
    assert.equal(sample(text, 'charging_access_payment_processor_calls_total', { operation: 'createCustomer', outcome: 'unavailable' }), 1);
    assert.equal(sample(text, 'charging_access_payment_processor_call_duration_seconds_count', { operation: 'createCustomer' }), 2);
  });

  test('the Stripe sandbox’s undelivered webhooks are its webhook backlog', async () => {
    const before = sample(await scrape(), 'charging_access_stripe_sandbox_webhook_backlog') ?? 0;
    // An endpoint nobody listens on, and no background delivery: the customer.created event waits.
    await t.sandbox.addWebhookEndpoint({ url: `http://127.0.0.1:${await freePort()}/webhooks/stripe` });
    await t.processor.createCustomer({ idempotencyKey: `metrics-webhook-${Date.now()}`, metadata: {} });
    assert.equal(sample(await scrape(), 'charging_access_stripe_sandbox_webhook_backlog'), before + 1);
  });
});

describe('the station catalogue', () => {
  test('its size is what was loaded, and each reload is timed', async () => {
    const reloads = sample(await scrape(), 'charging_access_catalogue_reload_seconds_count') ?? 0;
    await t.ingestion.ingest({
      parties: [{ country_code: 'DE', party_id: 'ABC', name: 'Alpha Charge', phone: null, website: null }],
      tariffs: [ocpiTariff('AC', 0.39)],
      locations: [
        ocpiLocation({ id: 'M1', lat: 52.5, lon: 13.4, evses: [{ tariff: 'AC' }, { tariff: 'AC' }, { tariff: 'AC', status: 'REMOVED' }] }),
        ocpiLocation({ id: 'M2', lat: 52.6, lon: 13.5, evses: [{ tariff: 'AC' }] }),
      ],
    });
    await t.catalogue.reload();
    const text = await scrape();
    assert.equal(t.catalogue.size, 2);
    assert.equal(sample(text, 'charging_access_catalogue_stations'), 2);
    assert.equal(sample(text, 'charging_access_catalogue_evses'), 3, 'the removed EVSE is not counted');
    assert.equal(sample(text, 'charging_access_catalogue_reload_seconds_count'), reloads + 1);
  });
});

describe('group commit', () => {
  test('each group of sign-ups committed is one observation of its size', async () => {
    const { token } = await t.newClient();
    const before = await scrape();
    const count = sample(before, 'charging_access_group_commit_size_count', { kind: 'sign_up' }) ?? 0;
    const sum = sample(before, 'charging_access_group_commit_size_sum', { kind: 'sign_up' }) ?? 0;
    const answers = await Promise.all(Array.from({ length: 30 }, () => t.call('POST', '/api/v1/users/', { token, body: {} })));
    assert.ok(answers.every((answer) => answer.status === 201));
    const text = await scrape();
    assert.equal(sample(text, 'charging_access_group_commit_size_sum', { kind: 'sign_up' }), sum + 30);
    const groups = (sample(text, 'charging_access_group_commit_size_count', { kind: 'sign_up' }) ?? 0) - count;
    assert.ok(groups >= 2 && groups < 30, `30 sign-ups in ${groups} groups`);
    // The first sign-up of the burst found no group under way: a group of one, committed at once.
    assert.ok((sample(text, 'charging_access_group_commit_size_bucket', { kind: 'sign_up', le: '1' }) ?? 0) >= 1);
  });
});
