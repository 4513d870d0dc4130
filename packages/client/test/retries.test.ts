// The SDK's retries against a tiny local HTTP server that answers as each test says (503 or 429 with Retry-After, a
// cut connection, a 409 with Retry-After): what is retried (GETs, writes with an Idempotency-Key, the same key on
// every try), what is not (a write without a key, a 4xx), how long it waits, and that it stops (bounded attempts,
// a Retry-After beyond the limit, the caller's AbortSignal).
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { ApiError, type ClientOptions, createClient, TimeoutError } from '../src/index.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

type Answer = (res: ServerResponse, index: number) => void;

let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let answers: Answer[] = [];
const sockets = new Set<Socket>();

const problem = (status: number, type: string, headers: Record<string, string> = {}): Answer => {
  return (res) =>
    res.writeHead(status, { 'content-type': 'application/problem+json; charset=utf-8', 'x-request-id': 'req-12345678', ...headers }).end(
      JSON.stringify({
        type: `http://x/problems/${type}`,
        title: type,
        status,
        detail: `${type} here`,
        error: { type, details: `${type} here` },
        request_id: 'req-12345678',
      }),
    );
};
const json = (status: number, body: unknown): Answer => {
  return (res) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};
const cut: Answer = (res) => res.socket?.destroy();

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const index =
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString(), at: performance.now() }) - 1;
      const answer = answers[Math.min(index, answers.length - 1)];
      if (answer) answer(res, index);
      else json(200, { ok: true })(res, index);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen = [];
  answers = [];
});

const client = (options: Partial<ClientOptions> = {}) => createClient({ baseUrl, token: 'tok', retry: { baseDelayMs: 20, maxDelayMs: 100 }, ...options });
const USER = '/api/v1/users/{user_id}/' as const;
const user = { id: 'u1', email: null, locale: 'en', custom_properties: null, created_at: 'x', updated_at: 'x' };

describe('retried', () => {
  test('a GET answered 503 with Retry-After: 1 is sent again after a second, and answers the second answer', async () => {
    answers = [problem(503, 'service_unavailable', { 'retry-after': '1' }), json(200, user)];
    const got = await client().get(USER, { path: { user_id: 'u1' } });
    assert.deepEqual(got, user);
    assert.equal(seen.length, 2);
    const waited = (seen[1] as Seen).at - (seen[0] as Seen).at;
    assert.ok(waited >= 990 && waited < 2_000, `waited ${waited} ms`);
    assert.equal((seen[1] as Seen).headers.authorization, 'Bearer tok');
  });

  test('a 429 rate_limited waits its Retry-After; a 503 without one backs off exponentially', async () => {
    answers = [problem(429, 'rate_limited', { 'retry-after': '1' }), problem(503, 'service_unavailable'), problem(503, 'service_unavailable'), json(200, user)];
    await client({ retry: { baseDelayMs: 100, maxDelayMs: 1_000 } }).get(USER, { path: { user_id: 'u1' } });
    const gaps = seen.slice(1).map((s, i) => s.at - (seen[i] as Seen).at);
    assert.equal(seen.length, 4);
    assert.ok((gaps[0] as number) >= 990, `Retry-After honoured: ${gaps[0]} ms`);
    assert.ok((gaps[1] as number) >= 75 && (gaps[1] as number) < 900, `first backoff ~100 ms: ${gaps[1]}`);
    assert.ok((gaps[2] as number) >= 155 && (gaps[2] as number) < 900, `second backoff ~200 ms (doubled): ${gaps[2]}`);
  });

  test('a write is retried with the same Idempotency-Key it was first sent with (a new one per call)', async () => {
    answers = [problem(503, 'service_unavailable', { 'retry-after': '0' }), json(201, user), json(201, user)];
    const api = client();
    await api.post('/api/v1/users/', { body: { email: 'a@example.com' } });
    await api.post('/api/v1/users/', { body: { email: 'a@example.com' } });
    const keys = seen.map((s) => s.headers['idempotency-key']);
    assert.equal(seen.length, 3);
    assert.match(String(keys[0]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(keys[1], keys[0], 'the retry repeats the key');
    assert.notEqual(keys[2], keys[0], 'another call, another key');
    assert.deepEqual(JSON.parse((seen[1] as Seen).body), { email: 'a@example.com' });
    assert.equal((seen[1] as Seen).headers['content-type'], 'application/json');
  });

  test('a key given by the caller is sent as it is', async () => {
    await client().patch(USER, { path: { user_id: 'u1' }, body: { locale: 'de' }, idempotencyKey: 'mine-1' });
    assert.equal(seen[0]?.headers['idempotency-key'], 'mine-1');
    assert.equal(seen[0]?.method, 'PATCH');
  });

  test('a connection cut before any answer is retried for a GET', async () => {
    answers = [cut, json(200, user)];
    assert.deepEqual(await client().get(USER, { path: { user_id: 'u1' } }), user);
    assert.equal(seen.length, 2);
  });

  test('409 conflict with Retry-After (the same key still in flight) is retried; without it, thrown', async () => {
    answers = [problem(409, 'conflict', { 'retry-after': '0' }), json(200, user)];
    await client().patch(USER, { path: { user_id: 'u1' }, body: { locale: 'de' } });
    assert.equal(seen.length, 2);
    seen = [];
    answers = [problem(409, 'conflict')];
    const error = await client()
      .patch(USER, { path: { user_id: 'u1' }, body: { locale: 'de' } })
      .catch((e: unknown) => e);
    assert.ok(error instanceof ApiError && error.type === 'conflict');
    assert.equal(seen.length, 1);
  });
});

describe('not retried', () => {
  test('a write sent without an Idempotency-Key is not repeated', async () => {
    answers = [problem(503, 'service_unavailable', { 'retry-after': '0' })];
    const error = await client()
      .post('/api/v1/users/', { body: {}, idempotencyKey: false })
      .catch((e: unknown) => e);
    assert.ok(error instanceof ApiError && error.type === 'service_unavailable' && error.status === 503, String(error));
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.headers['idempotency-key'], undefined);
  });

  test('a cut connection of a write without a key is not repeated', async () => {
    answers = [cut];
    await assert.rejects(client().post('/api/v1/users/', { body: {}, idempotencyKey: false }), TypeError);
    assert.equal(seen.length, 1);
  });

  test('4xx answers are thrown at once', async () => {
    answers = [problem(404, 'not_found')];
    const error = await client()
      .get(USER, { path: { user_id: 'u1' } })
      .catch((e: unknown) => e);
    assert.ok(error instanceof ApiError && error.type === 'not_found');
    assert.equal(error.requestId, 'req-12345678');
    assert.equal(seen.length, 1);
  });

  test('attempts are bounded: the last answer is thrown, with its Retry-After', async () => {
    answers = [problem(503, 'service_unavailable', { 'retry-after': '0' })];
    const error = await client({ retry: { attempts: 3 } })
      .get(USER, { path: { user_id: 'u1' } })
      .catch((e: unknown) => e);
    assert.ok(error instanceof ApiError && error.type === 'service_unavailable');
    assert.equal(error.retryAfter, 0);
    assert.equal(seen.length, 3);
  });

  test('a Retry-After longer than maxRetryAfterMs is thrown at once, saying how long', async () => {
    answers = [problem(429, 'rate_limited', { 'retry-after': '3600' })];
    const started = performance.now();
    const error = await client()
      .get(USER, { path: { user_id: 'u1' } })
      .catch((e: unknown) => e);
    assert.ok(error instanceof ApiError && error.type === 'rate_limited' && error.retryAfter === 3600);
    assert.ok(performance.now() - started < 500);
    assert.equal(seen.length, 1);
  });

  test('retry: false sends once', async () => {
    answers = [problem(503, 'service_unavailable', { 'retry-after': '0' })];
    await assert.rejects(client({ retry: false }).get(USER, { path: { user_id: 'u1' } }), ApiError);
    assert.equal(seen.length, 1);
  });

  test('the caller’s AbortSignal ends the wait between tries', async () => {
    answers = [problem(503, 'service_unavailable', { 'retry-after': '30' })];
    const started = performance.now();
    await assert.rejects(client().get(USER, { path: { user_id: 'u1' }, signal: AbortSignal.timeout(200) }), (e: Error) => e.name === 'TimeoutError');
    assert.ok(performance.now() - started < 2_000);
    assert.equal(seen.length, 1);
  });

  test('a body that is not a problem is an ApiError of type unexpected_response with the status', async () => {
    answers = [(res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>')];
    const error = await client({ retry: false })
      .get(USER, { path: { user_id: 'u1' } })
      .catch((e: unknown) => e);
    assert.ok(error instanceof ApiError && error.type === 'unexpected_response' && error.status === 502, String(error));
  });

  test('no answer within timeoutMs is a TimeoutError (a GET is retried first)', async () => {
    answers = [() => {}];
    const error = await client({ timeoutMs: 100, retry: { attempts: 2, baseDelayMs: 10 } })
      .get(USER, { path: { user_id: 'u1' } })
      .catch((e: unknown) => e);
    assert.ok(error instanceof TimeoutError, String(error));
    assert.equal(seen.length, 2);
  });
});

describe('requests', () => {
  test('path parameters are encoded, arrays repeat, booleans are true/false, absent values are left out', async () => {
    answers = [json(200, { type: 'FeatureCollection', features: [] })];
    await client().get('/api/v1/stations/tile/', { query: { z: 6, x: [34, 35], y: [21, 21], only_available: true, max_price: undefined } });
    assert.equal(seen[0]?.url, '/api/v1/stations/tile/?z=6&x=34&x=35&y=21&y=21&only_available=true');
    await client().get(USER, { path: { user_id: 'a/b c' } });
    assert.equal(seen[1]?.url, '/api/v1/users/a%2Fb%20c/');
    assert.match(String(seen[0]?.headers.accept), /application\/json/);
  });

  test('a baseUrl with /api/v1 or a trailing slash is the same address; a token function is asked per request', async () => {
    let n = 0;
    const api = createClient({ baseUrl: `${baseUrl}/api/v1/`, token: async () => `t${++n}` });
    await api.get(USER, { path: { user_id: 'u1' } });
    await api.get(USER, { path: { user_id: 'u1' } });
    assert.deepEqual(
      seen.map((s) => [s.url, s.headers.authorization]),
      [
        ['/api/v1/users/u1/', 'Bearer t1'],
        ['/api/v1/users/u1/', 'Bearer t2'],
      ],
    );
  });

  test('pagination follows next with its query on this client’s address: the token never goes to the host a link names', async () => {
    const page = (n: number, next: string | null) => json(200, { count: 3, next, previous: null, results: [{ ...user, id: `u${n}` }] });
    answers = [
      page(1, 'https://public.example/api/v1/users/?page_size=1&page=2'),
      page(2, 'https://public.example/api/v1/users/?page_size=1&page=3'),
      page(3, null),
    ];
    const ids: string[] = [];
    for await (const u of client().paginate('/api/v1/users/', { query: { page_size: 1 } })) ids.push(u.id);
    assert.deepEqual(ids, ['u1', 'u2', 'u3']);
    assert.deepEqual(
      seen.map((s) => s.url),
      ['/api/v1/users/?page_size=1', '/api/v1/users/?page_size=1&page=2', '/api/v1/users/?page_size=1&page=3'],
    );
  });

  test('a missing path parameter or a bad baseUrl is a clear error before anything is sent', async () => {
    await assert.rejects(client().get(USER, { path: { user_id: '' } }), /path parameter user_id is missing/);
    assert.throws(() => createClient({ baseUrl: 'localhost:8443', token: 't' }), /baseUrl must be an absolute URL/);
    assert.throws(() => createClient({ baseUrl, token: '' }), /token is required/);
    assert.equal(seen.length, 0);
  });
});
