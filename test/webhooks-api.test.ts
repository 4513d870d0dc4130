// The webhook endpoints API through HTTP on a real PostgreSQL: create (the
// secret shown once), list, read, update, delete, the test event, the
// delivery log's pages; validation errors naming the field; the URL rules
// outside production and in production (SSRF: address literals refused when
// saved, resolved host names refused at delivery); another client's
// endpoints and deliveries answer 404.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { recordEvent } from '../src/modules/events/outbox.ts';
import { assertProblem, brokenApp, setupTestApp, type TestContext } from './helpers.ts';
import { createEndpoint, deliveriesOf, deliveryOf, ENDPOINTS, type Receiver, startReceiver, verify } from './webhooks-support.ts';

let ctx: TestContext;
let production: TestContext;
let rx: Receiver;

before(async () => {
  let behindProxy: TestContext;
  [ctx, behindProxy, rx] = await Promise.all([setupTestApp(), setupTestApp({ env: { NODE_ENV: 'production', TRUST_PROXY: 'true' } }), startReceiver()]);
  // Production serves HTTPS only: these requests come through the TLS-terminating proxy.
  production = {
    ...behindProxy,
    call: (method, url, options = {}) => behindProxy.call(method, url, { ...options, headers: { 'x-forwarded-proto': 'https', ...options.headers } }),
  };
});
after(async () => {
  await rx.close();
  await Promise.all([ctx.close(), production.close()]);
});

function fieldsOf(res: { body: { errors?: { field: string; message: string }[] } }): string[] {
  return (res.body.errors ?? []).map((e) => e.field);
}

describe('endpoints', () => {
  test('created with its secret (whsec_ + 32 random bytes), shown only in that answer', async () => {
    const client = await ctx.newClient();
    const created = await ctx.call('POST', `${ENDPOINTS}/`, {
      token: client.token,
      body: { url: rx.url, events: ['invoice.created', 'debt.created', 'invoice.created'], description: '  Billing  ' },
    });
    assert.equal(created.status, 201, created.text);
    const { secret, ...endpoint } = created.body;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
    assert.deepEqual(endpoint, {
      id: endpoint.id,
      url: rx.url,
      events: ['invoice.created', 'debt.created'],
      description: 'Billing',
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      previous_secret_expires_at: null,
      created_at: ctx.clock.now().toISOString(),
      updated_at: ctx.clock.now().toISOString(),
    });
    const shown = await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token });
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.body, endpoint);
    const list = await ctx.call('GET', `${ENDPOINTS}/`, { token: client.token });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, { count: 1, next: null, previous: null, results: [endpoint] });
    assert.ok(!list.text.includes(secret.slice(6)) && !shown.text.includes(secret.slice(6)), 'the secret is not shown again');
    const other = await createEndpoint(ctx, client.token, { url: rx.url, events: ['*'] });
    assert.notEqual(other.secret, secret, 'each endpoint has its own secret');
  });

  test('listed oldest first, paginated like the other lists', async () => {
    const client = await ctx.newClient();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await createEndpoint(ctx, client.token, { url: `${rx.url}/${i}`, events: ['*'] })).id);
      ctx.clock.advance(1_000);
    }
    const first = await ctx.call('GET', `${ENDPOINTS}/?page_size=2`, { token: client.token });
    assert.equal(first.body.count, 3);
    assert.deepEqual(
      first.body.results.map((e: { id: string }) => e.id),
      ids.slice(0, 2),
    );
    assert.equal(first.body.next, `${ctx.config.publicBaseUrl}${ENDPOINTS}/?page_size=2&page=2`);
    const second = await ctx.call('GET', `${ENDPOINTS}/?page_size=2&page=2`, { token: client.token });
    assert.deepEqual(
      second.body.results.map((e: { id: string }) => e.id),
      ids.slice(2),
    );
    assertProblem(await ctx.call('GET', `${ENDPOINTS}/?page=3&page_size=2`, { token: client.token }), 404, 'not_found');
  });

  test('PATCH changes what is sent; disabling pauses (nothing new is queued for it), enabling resumes', async () => {
    const client = await ctx.newClient();
    const endpoint = await createEndpoint(ctx, client.token, { url: rx.url, events: ['*'], description: 'x' });
    ctx.clock.advance(1_000);
    const patched = await ctx.call('PATCH', `${ENDPOINTS}/${endpoint.id}/`, {
      token: client.token,
      body: { url: `${rx.url}/v2`, events: ['debt.paid'], description: null },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual([patched.body.url, patched.body.events, patched.body.description, patched.body.enabled], [`${rx.url}/v2`, ['debt.paid'], null, true]);
    assert.equal(patched.body.updated_at, ctx.clock.now().toISOString());
    const paused = await ctx.call('PATCH', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token, body: { enabled: false } });
    assert.deepEqual([paused.body.enabled, paused.body.disabled_reason, paused.body.disabled_at], [false, null, ctx.clock.now().toISOString()]);
    const event = await recordEvent(ctx.db, { clientId: client.clientId, userId: null, type: 'debt.paid', object: {} }, ctx.clock.now());
    assert.equal(event.deliveries, 0, 'a paused endpoint gets no new deliveries');
    const resumed = await ctx.call('PATCH', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token, body: { enabled: true } });
    assert.deepEqual([resumed.body.enabled, resumed.body.disabled_at], [true, null]);
    const later = await recordEvent(ctx.db, { clientId: client.clientId, userId: null, type: 'debt.paid', object: {} }, ctx.clock.now());
    assert.equal(later.deliveries, 1);
    const bad = await ctx.call('PATCH', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token, body: { enabled: 'yes', color: 'red' } });
    assertProblem(bad, 400, 'validation_error');
    assert.deepEqual(fieldsOf(bad).sort(), ['color', 'enabled']);
  });

  test('DELETE removes the endpoint and its delivery log', async () => {
    const client = await ctx.newClient();
    const endpoint = await createEndpoint(ctx, client.token, { url: rx.url, events: ['*'] });
    await recordEvent(ctx.db, { clientId: client.clientId, userId: null, type: 'debt.paid', object: {} }, ctx.clock.now());
    const deleted = await ctx.call('DELETE', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token });
    assert.equal(deleted.status, 204, deleted.text);
    assertProblem(await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token }), 404, 'not_found');
    assertProblem(await ctx.call('DELETE', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token }), 404, 'not_found');
    const { rows } = await ctx.db.query('SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1', [endpoint.id]);
    assert.equal(rows.length, 0);
  });

  test('POST /test/ answers 202 with a ping event for that endpoint only, delivered signed like any event; refused (409) while disabled', async () => {
    const client = await ctx.newClient();
    const endpoint = await createEndpoint(ctx, client.token, { url: rx.url, events: ['debt.paid'] });
    const bystander = await createEndpoint(ctx, client.token, { url: `${rx.url}/other`, events: ['*'] });
    const sent = await ctx.call('POST', `${ENDPOINTS}/${endpoint.id}/test/`, { token: client.token });
    assert.equal(sent.status, 202, sent.text);
    assert.deepEqual(Object.keys(sent.body), ['event_id']);
    const [delivery] = await deliveriesOf(ctx, client.token, endpoint.id);
    assert.deepEqual([delivery?.event_id, delivery?.event_type, delivery?.status], [sent.body.event_id, 'ping', 'pending']);
    assert.equal((await deliveriesOf(ctx, client.token, bystander.id)).length, 0, 'only the endpoint named');
    const before = rx.requests.length;
    await deliveryOf(ctx).runDue();
    const request = rx.requests.slice(before).find((r) => r.headers['webhook-id'] === sent.body.event_id);
    assert.ok(request, 'the ping was delivered');
    const body = verify(endpoint.secret, request, ctx.clock) as { id: string; type: string; data: { object: { endpoint_id: string } }; user_id: null };
    assert.deepEqual([body.id, body.type, body.data.object.endpoint_id, body.user_id], [sent.body.event_id, 'ping', endpoint.id, null]);
    await ctx.call('PATCH', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token, body: { enabled: false } });
    assertProblem(await ctx.call('POST', `${ENDPOINTS}/${endpoint.id}/test/`, { token: client.token }), 409, 'conflict');
    const withBody = await ctx.call('POST', `${ENDPOINTS}/${bystander.id}/test/`, { token: client.token, body: { type: 'invoice.created' } });
    assertProblem(withBody, 400, 'validation_error');
  });

  test('the delivery log is paginated, newest first; an unknown or malformed delivery id is 404', async () => {
    const client = await ctx.newClient();
    const endpoint = await createEndpoint(ctx, client.token, { url: rx.url, events: ['*'] });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await recordEvent(ctx.db, { clientId: client.clientId, userId: null, type: 'debt.paid', object: { n: i } }, ctx.clock.now())).body.id);
      ctx.clock.advance(1_000);
    }
    const page = await ctx.call('GET', `${ENDPOINTS}/${endpoint.id}/deliveries/?page_size=2`, { token: client.token });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.count, 3);
    assert.deepEqual(
      page.body.results.map((d: { event_id: string }) => d.event_id),
      [ids[2], ids[1]],
    );
    assert.ok(page.body.next);
    for (const bad of [randomUUID(), 'nope']) {
      assertProblem(await ctx.call('POST', `${ENDPOINTS}/${endpoint.id}/deliveries/${bad}/retry/`, { token: client.token }), 404, 'not_found');
    }
  });
});

describe('validation', () => {
  test('url, events and description are checked, each refusal naming its field', async () => {
    const client = await ctx.newClient();
    const post = (body: unknown) => ctx.call('POST', `${ENDPOINTS}/`, { token: client.token, body });
    const cases: [unknown, string[], RegExp?][] = [
      [{ events: ['*'] }, ['url']],
      [{ url: rx.url }, ['events']],
      [{ url: rx.url, events: [] }, ['events']],
      [{ url: rx.url, events: ['invoice.created', 'charging_session.teleported'] }, ['events.1'], /unknown event type "charging_session.teleported"/],
      [{ url: rx.url, events: ['*', 'ping'] }, ['events.0'], /must be the only entry/],
      [{ url: rx.url, events: 'invoice.created' }, ['events']],
      [{ url: rx.url, events: ['*'], description: 'x'.repeat(501) }, ['description']],
      [{ url: rx.url, events: ['*'], secret: 'whsec_mine' }, ['secret']],
      [{ url: 'not a url', events: ['*'] }, ['url'], /absolute URL/],
      [{ url: 'ftp://example.com/hooks', events: ['*'] }, ['url'], /https/],
      [{ url: 'http://example.com/hooks', events: ['*'] }, ['url'], /https/],
      [{ url: 'https://user:secret@example.com/hooks', events: ['*'] }, ['url'], /credentials/],
      [{ url: 'https://example.com/hooks#frag', events: ['*'] }, ['url'], /fragment/],
      [{ url: `https://example.com/${'a'.repeat(2_050)}`, events: ['*'] }, ['url']],
    ];
    for (const [body, fields, message] of cases) {
      const res = await post(body);
      assertProblem(res, 400, 'validation_error');
      assert.deepEqual(fieldsOf(res), fields, JSON.stringify(body).slice(0, 80));
      if (message) assert.match(res.body.detail, message);
    }
    const { rows } = await ctx.db.query('SELECT 1 FROM webhook_endpoints WHERE client_id = $1', [client.clientId]);
    assert.equal(rows.length, 0, 'nothing was created');
  });

  test('outside production: https anywhere, plain http to loopback hosts only', async () => {
    const client = await ctx.newClient();
    for (const url of ['https://example.com/hooks', 'http://localhost:9000/h', 'http://127.0.0.5/h', 'http://[::1]:8080/h', 'https://10.0.0.1/h']) {
      const res = await ctx.call('POST', `${ENDPOINTS}/`, { token: client.token, body: { url, events: ['*'] } });
      assert.equal(res.status, 201, `${url}: ${res.text}`);
    }
    for (const url of ['http://10.0.0.1/h', 'http://example.com/h', 'http://localhost.example.com/h']) {
      assertProblem(await ctx.call('POST', `${ENDPOINTS}/`, { token: client.token, body: { url, events: ['*'] } }), 400, 'validation_error');
    }
  });
});

describe('in production (SSRF)', () => {
  const refused = [
    'http://localhost:9000/h',
    'https://localhost/h',
    'https://api.localhost/h',
    'https://127.0.0.1/h',
    'https://0x7f000001/h',
    'https://10.1.2.3/h',
    'https://172.16.0.1/h',
    'https://192.168.1.1/h',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/h',
    'https://0.0.0.0/h',
    'https://[::1]/h',
    'https://[::]/h',
    'https://[fd12:3456::1]/h',
    'https://[fe80::1]/h',
    'https://[::ffff:10.0.0.1]/h',
    'https://metadata/h',
    'http://hooks.example.com/h',
  ];

  test('private, loopback, link-local, unique-local, CGNAT and unspecified addresses are refused (400, field url), on create and on PATCH', async () => {
    const client = await production.newClient();
    for (const url of refused) {
      const res = await production.call('POST', `${ENDPOINTS}/`, { token: client.token, body: { url, events: ['*'] } });
      assertProblem(res, 400, 'validation_error');
      assert.deepEqual(fieldsOf(res), ['url'], url);
    }
    const endpoint = await createEndpoint(production, client.token, { url: 'https://hooks.example.com/h', events: ['*'] });
    await createEndpoint(production, client.token, { url: 'https://93.184.216.34/h', events: ['*'] });
    const patched = await production.call('PATCH', `${ENDPOINTS}/${endpoint.id}/`, { token: client.token, body: { url: 'https://192.168.0.10/h' } });
    assertProblem(patched, 400, 'validation_error');
    assert.deepEqual(fieldsOf(patched), ['url']);
  });

  test('a host name resolving to a non-public address is not connected to: the attempt is refused and logged', async () => {
    const client = await production.newClient();
    const endpoint = await createEndpoint(production, client.token, { url: 'https://hooks.example.com/h', events: ['*'] });
    const asked: string[] = [];
    let answer = [{ address: '10.0.0.7', family: 4 }];
    const worker = deliveryOf(production, {
      timeoutMs: 1_000,
      resolve: async (hostname) => {
        asked.push(hostname);
        return answer;
      },
    });
    await recordEvent(production.db, { clientId: client.clientId, userId: null, type: 'debt.paid', object: {} }, production.clock.now());
    assert.equal(await worker.runDue(), 1);
    let [delivery] = await deliveriesOf(production, client.token, endpoint.id);
    assert.equal(delivery?.last_error, 'refused: the host name resolves to a private, local or otherwise non-public address');
    assert.deepEqual(asked, ['hooks.example.com']);
    // One public and one private address (a rebinding attempt): refused all the same.
    answer = [
      { address: '93.184.216.34', family: 4 },
      { address: '::1', family: 6 },
    ];
    production.clock.set(new Date(delivery?.next_retry_at as string));
    assert.equal(await worker.runDue(), 1);
    [delivery] = await deliveriesOf(production, client.token, endpoint.id);
    assert.equal(delivery?.last_error, 'refused: the host name resolves to a private, local or otherwise non-public address');
    assert.equal(delivery?.status, 'pending', 'retried later: the name may resolve elsewhere then');
  });

  test('a resolver that never answers: the attempt ends at its deadline (well within its lease), recorded as a timeout and retried', async () => {
    const client = await production.newClient();
    const endpoint = await createEndpoint(production, client.token, { url: 'https://hooks.example.com/h', events: ['*'] });
    const asked: string[] = [];
    const worker = deliveryOf(production, {
      timeoutMs: 400,
      resolve: (hostname) => {
        asked.push(hostname);
        return new Promise(() => {});
      },
    });
    await recordEvent(production.db, { clientId: client.clientId, userId: null, type: 'debt.paid', object: {} }, production.clock.now());
    const started = performance.now();
    const ran = await Promise.race([worker.runDue(), new Promise((resolve) => setTimeout(() => resolve('still running after 5 s'), 5_000))]);
    const took = performance.now() - started;
    assert.equal(ran, 1, 'the attempt ended');
    assert.ok(took >= 350 && took < 3_000, `ended after ${Math.round(took)} ms (deadline 400 ms, lease 5.4 s)`);
    assert.deepEqual(asked, ['hooks.example.com']);
    const [delivery] = await deliveriesOf(production, client.token, endpoint.id);
    assert.equal(delivery?.last_error, 'timed out: the host name was not resolved within 400 ms');
    assert.equal(delivery?.status, 'pending');
    assert.deepEqual(
      delivery?.attempt_log.map((a) => [a.attempt, a.error, a.finished_at !== null]),
      [[1, 'timed out: the host name was not resolved within 400 ms', true]],
    );
    const { rows } = await production.db.query('SELECT leased_until FROM webhook_deliveries WHERE id = $1', [delivery?.id]);
    assert.equal(rows[0]?.leased_until, null, 'the lease is given back with the outcome');
  });

  test('stop() during a hung lookup cuts it off within the grace period and gives the delivery back, due at once', async () => {
    const client = await production.newClient();
    const endpoint = await createEndpoint(production, client.token, { url: 'https://hooks.example.com/h', events: ['*'] });
    let asked = 0;
    const worker = deliveryOf(production, {
      timeoutMs: 30_000,
      graceMs: 200,
      pollMs: 50,
      resolve: () => {
        asked++;
        return new Promise(() => {});
      },
    });
    worker.start();
    await recordEvent(production.db, { clientId: client.clientId, userId: null, type: 'debt.paid', object: {} }, production.clock.now());
    const deadline = Date.now() + 5_000;
    while (asked === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(asked, 1, 'the lookup started');
    const stopping = performance.now();
    await worker.stop();
    const took = performance.now() - stopping;
    assert.ok(took < 1_500, `stopped in ${Math.round(took)} ms`);
    const [given] = await deliveriesOf(production, client.token, endpoint.id);
    assert.equal(given?.status, 'pending');
    assert.equal(given?.next_retry_at, production.clock.now().toISOString(), 'due again at once');
    assert.match(given?.attempt_log[0]?.error ?? '', /^interrupted: the service shut down/);
    const { rows } = await production.db.query('SELECT leased_until FROM webhook_deliveries WHERE id = $1', [given?.id]);
    assert.equal(rows[0]?.leased_until, null, 'no lease left to wait for');
  });
});

describe("another client's endpoints and deliveries", () => {
  test('answer 404 like unknown ones, on every route, and stay unchanged', async () => {
    const owner = await ctx.newClient();
    const intruder = await ctx.newClient();
    const endpoint = await createEndpoint(ctx, owner.token, { url: rx.url, events: ['*'] });
    await recordEvent(ctx.db, { clientId: owner.clientId, userId: null, type: 'debt.paid', object: {} }, ctx.clock.now());
    const [delivery] = await deliveriesOf(ctx, owner.token, endpoint.id);
    const before = await ctx.db.query('SELECT * FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
    const routes: [string, string, unknown?][] = [
      ['GET', `${ENDPOINTS}/${endpoint.id}/`],
      ['PATCH', `${ENDPOINTS}/${endpoint.id}/`, { enabled: false }],
      ['DELETE', `${ENDPOINTS}/${endpoint.id}/`],
      ['POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret/`],
      ['POST', `${ENDPOINTS}/${endpoint.id}/test/`],
      ['GET', `${ENDPOINTS}/${endpoint.id}/deliveries/`],
      ['POST', `${ENDPOINTS}/${endpoint.id}/deliveries/${delivery?.id}/retry/`],
    ];
    for (const [method, path, body] of routes) {
      const res = await ctx.call(method, path, { token: intruder.token, ...(body ? { body } : {}) });
      assertProblem(res, 404, 'not_found');
      const unknown = await ctx.call(method, path.replace(endpoint.id, randomUUID()), { token: intruder.token, ...(body ? { body } : {}) });
      assert.equal(res.body.detail, unknown.body.detail, `${method} ${path}: indistinguishable from an unknown id`);
    }
    const list = await ctx.call('GET', `${ENDPOINTS}/`, { token: intruder.token });
    assert.equal(list.body.count, 0);
    const after = await ctx.db.query('SELECT * FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
    assert.deepEqual(after.rows, before.rows);
    // A delivery of the owner's other endpoint, under this endpoint: 404 too.
    const second = await createEndpoint(ctx, owner.token, { url: rx.url, events: ['*'] });
    assertProblem(await ctx.call('POST', `${ENDPOINTS}/${second.id}/deliveries/${delivery?.id}/retry/`, { token: owner.token }), 404, 'not_found');
  });
});

test('the routes are in the OpenAPI document', async () => {
  const doc = await ctx.call('GET', '/api/v1/openapi.json');
  const paths = Object.keys(doc.body.paths).filter((p) => p.startsWith(ENDPOINTS));
  assert.deepEqual(paths.sort(), [
    `${ENDPOINTS}/`,
    `${ENDPOINTS}/{endpoint_id}/`,
    `${ENDPOINTS}/{endpoint_id}/deliveries/`,
    `${ENDPOINTS}/{endpoint_id}/deliveries/{delivery_id}/retry/`,
    `${ENDPOINTS}/{endpoint_id}/rotate-secret/`,
    `${ENDPOINTS}/{endpoint_id}/test/`,
  ]);
  assert.ok(doc.body.paths[`${ENDPOINTS}/`].post.responses['201'].content['application/json'].schema.properties.secret);
});

describe('with the database unreachable', () => {
  test('the routes answer 503 service_unavailable without internals, and the worker keeps polling with one warning', async () => {
    const broken = await brokenApp(ctx);
    const logged: { level: string; message: string }[] = [];
    const worker = deliveryOf({ ...ctx, db: broken.db }, { pollMs: 20, log: (level, message) => logged.push({ level, message }) });
    try {
      const client = await ctx.newClient();
      const id = randomUUID();
      for (const [method, url, payload] of [
        ['GET', `${ENDPOINTS}/`],
        ['POST', `${ENDPOINTS}/`, { url: rx.url, events: ['*'] }],
        ['GET', `${ENDPOINTS}/${id}/`],
        ['PATCH', `${ENDPOINTS}/${id}/`, { enabled: false }],
        ['POST', `${ENDPOINTS}/${id}/test/`],
        ['GET', `${ENDPOINTS}/${id}/deliveries/`],
        ['POST', `${ENDPOINTS}/${id}/deliveries/${randomUUID()}/retry/`],
      ] as const) {
        const res = await broken.app.inject({ method, url, headers: { authorization: `Bearer ${client.token}` }, ...(payload ? { payload } : {}) });
        assert.equal(res.statusCode, 503, `${method} ${url}: ${res.body}`);
        assert.equal(JSON.parse(res.body).error.type, 'service_unavailable');
        assert.doesNotMatch(res.body, /ECONNREFUSED|postgres|127\.0\.0\.1|SELECT|INSERT/i);
      }
      worker.start();
      // Long enough for the notifications' connection to be retried (every second) and the claims (every 20 ms).
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await worker.stop();
      // One warning per outage from each loop (notifications, claims), not one per poll or reconnection.
      assert.deepEqual(
        logged.sort((a, b) => a.message.localeCompare(b.message)),
        [
          { level: 'warn', message: 'claiming webhook deliveries failed; retried at the next poll: the database is unavailable; retrying' },
          { level: 'warn', message: 'event notifications interrupted; reconnecting (polling meanwhile): the database is unavailable; retrying' },
        ],
      );
    } finally {
      await broken.close();
    }
  });
});
