// The SDK against the real service (test/helpers.ts: the app on a real PostgreSQL, listening on loopback): users,
// billing details, pagination with for await, idempotent writes, typed problem errors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brokenApp, setupTestApp, type TestContext } from '../../../test/helpers.ts';
import { ApiError, type Client, createClient, isApiError, type User } from '../src/index.ts';

let ctx: TestContext;
let address: string;

before(async () => {
  ctx = await setupTestApp({ listen: 0 });
  address = ctx.address as string;
});
after(() => ctx.close());

async function newClient(options: Partial<Parameters<typeof createClient>[0]> = {}): Promise<Client> {
  const { token } = await ctx.newClient();
  return createClient({ baseUrl: address, token, ...options });
}

describe('users and billing details', () => {
  test('creates a user, reads it back, sets and reads billing details', async () => {
    const api = await newClient();
    const user = await api.post('/api/v1/users/', { body: { email: 'ada@example.com', locale: 'en', custom_properties: { external_id: 'ext-1' } } });
    assert.match(user.id, /^[0-9a-f-]{36}$/);
    assert.equal(user.email, 'ada@example.com');
    const read: User = await api.get('/api/v1/users/{user_id}/', { path: { user_id: user.id } });
    assert.deepEqual(read, user);
    const billing = await api.put('/api/v1/users/{user_id}/billing-details/', {
      path: { user_id: user.id },
      body: { account_type: 'personal', first_name: 'Ada', last_name: 'Lovelace', country: 'DE' },
    });
    assert.equal(billing.first_name, 'Ada');
    assert.deepEqual(await api.get('/api/v1/users/{user_id}/billing-details/', { path: { user_id: user.id } }), billing);
  });
});

describe('pagination', () => {
  test('for await walks every page of a list, following next', async () => {
    const api = await newClient();
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      ctx.clock.advance(1_000);
      created.push((await api.post('/api/v1/users/', { body: { custom_properties: { external_id: `p-${i}` } } })).id);
    }
    const seen: string[] = [];
    for await (const user of api.paginate('/api/v1/users/', { query: { page_size: 3 } })) seen.push(user.id);
    assert.deepEqual(seen, [...created].reverse(), 'every user once, newest first');
    const sizes: number[] = [];
    for await (const page of api.pages('/api/v1/users/', { query: { page_size: 3 } })) sizes.push(page.results.length);
    assert.deepEqual(sizes, [3, 3, 1]);
  });
});

describe('idempotency', () => {
  test('the same Idempotency-Key returns the same object; each call without one gets its own', async () => {
    const api = await newClient();
    const first = await api.request('post', '/api/v1/users/', { body: { email: 'once@example.com' }, idempotencyKey: 'signup-42' });
    const again = await api.request('post', '/api/v1/users/', { body: { email: 'once@example.com' }, idempotencyKey: 'signup-42' });
    assert.deepEqual(again.data, first.data);
    assert.equal(again.response.headers.get('idempotent-replayed'), 'true');
    const a = await api.post('/api/v1/users/', { body: { email: 'twice@example.com' } });
    const b = await api.post('/api/v1/users/', { body: { email: 'twice@example.com' } });
    assert.notEqual(a.id, b.id);
  });
});

describe('problem errors', () => {
  test('404, 409 and 400 are ApiErrors with the typed code, title, detail and fields', async () => {
    const api = await newClient();
    const missing = await api.get('/api/v1/users/{user_id}/', { path: { user_id: '00000000-0000-4000-8000-000000000000' } }).catch((e: unknown) => e);
    assert.ok(isApiError(missing, 'not_found'), String(missing));
    assert.equal(missing.status, 404);
    assert.equal(missing.title, 'Not found');
    assert.ok(missing.requestId);
    await api.post('/api/v1/users/', { body: { custom_properties: { external_id: 'taken' } } });
    const conflict = await api.post('/api/v1/users/', { body: { custom_properties: { external_id: 'taken' } } }).catch((e: unknown) => e);
    assert.ok(conflict instanceof ApiError && conflict.type === 'conflict' && conflict.status === 409, String(conflict));
    const invalid = await api.post('/api/v1/users/', { body: { email: 'not an email' } }).catch((e: unknown) => e);
    assert.ok(invalid instanceof ApiError);
    assert.equal(invalid.type, 'validation_error');
    assert.equal(invalid.errors[0]?.field, 'email');
  });
});

describe('the service saying "not now"', () => {
  test('its rate limit is a typed 429 rate_limited with Retry-After (retries off: thrown at once)', async () => {
    const { clientId, token } = await ctx.newClient();
    await ctx.clients.setRateLimit(clientId, 2);
    const api = createClient({ baseUrl: address, token, retry: false });
    await api.get('/api/v1/users/');
    await api.get('/api/v1/users/');
    const limited = await api.get('/api/v1/users/').catch((e: unknown) => e);
    assert.ok(isApiError(limited, 'rate_limited'), String(limited));
    assert.equal(limited.status, 429);
    assert.ok(limited.retryAfter !== undefined && limited.retryAfter > 0 && limited.retryAfter <= 60, `Retry-After ${limited.retryAfter}`);
  });

  test('its 503 while the database is away is retried after its Retry-After, then thrown when it lasts', async () => {
    const broken = await brokenApp(ctx);
    try {
      const brokenAddress = await broken.app.listen({ host: '127.0.0.1', port: 0 });
      const { token } = await ctx.newClient();
      const requests: number[] = [];
      const counting: typeof fetch = (input, init) => {
        requests.push(performance.now());
        return fetch(input, init);
      };
      const api = createClient({ baseUrl: brokenAddress, token, fetch: counting, retry: { attempts: 2 } });
      const error = await api.get('/api/v1/users/').catch((e: unknown) => e);
      assert.ok(isApiError(error, 'service_unavailable') && error.status === 503, String(error));
      assert.equal(requests.length, 2);
      const waited = (requests[1] as number) - (requests[0] as number);
      assert.ok(error.retryAfter !== undefined && waited >= error.retryAfter * 1000 - 10, `waited ${waited} ms for Retry-After ${error.retryAfter}`);
    } finally {
      await broken.close();
    }
  });
});
