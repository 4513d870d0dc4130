import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig, requireInvoiceIssuer } from '../src/platform/config.ts';
import { ERROR_CODES } from '../src/platform/errors.ts';
import { assertProblem, BASE_URL, type BrokenApp, brokenApp, setupTestApp, type TestContext, type TestResponse } from './helpers.ts';

let t: TestContext;
let token: string;

before(async () => {
  t = await setupTestApp();
  ({ token } = await t.newClient());
});
after(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The full problem+json contract, stricter than helpers' assertProblem: exact keys and the code table's title. */

describe('problem+json on every error', () => {
  test('400 validation_error names the fields', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'xx' } });
    assertProblem(res, 400, 'validation_error');
    assert.equal(res.body.errors[0].field, 'locale');
  });

  test('400 malformed JSON', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: '{', headers: { 'content-type': 'application/json' } });
    assertProblem(res, 400, 'validation_error');
    assert.deepEqual(res.body.errors, [{ field: 'body', message: 'is not valid JSON' }]);
  });

  test('400 empty JSON body', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: '', headers: { 'content-type': 'application/json' } });
    assertProblem(res, 400, 'validation_error');
  });

  test('401 without a token, with a WWW-Authenticate challenge', async () => {
    const res = await t.call('GET', '/api/v1/users/');
    assertProblem(res, 401, 'unauthorized');
    assert.match(String(res.headers['www-authenticate']), /^Bearer /);
  });

  test('401 with a malformed Authorization header', async () => {
    const res = await t.call('GET', '/api/v1/users/', { headers: { authorization: 'Basic abc' } });
    assertProblem(res, 401, 'unauthorized');
  });

  test('404 unknown route (with or without a token)', async () => {
    const res = await t.call('GET', '/api/v1/nothing-here', { token });
    assertProblem(res, 404, 'not_found');
    assert.equal(res.body.detail, 'No resource at GET /api/v1/nothing-here.');
    assertProblem(await t.call('GET', '/nope?x=1'), 404, 'not_found');
    assertProblem(await t.call('DELETE', '/api/v1/users/', { token }), 404, 'not_found');
  });

  test('404 unknown user', async () => {
    assertProblem(await t.call('GET', '/api/v1/users/00000000-0000-4000-8000-000000000000/', { token }), 404, 'not_found');
  });

  test('409 conflict', async () => {
    const body = { custom_properties: { external_id: 'errors-dup' } };
    assert.equal((await t.call('POST', '/api/v1/users/', { token, body })).status, 201);
    assertProblem(await t.call('POST', '/api/v1/users/', { token, body }), 409, 'conflict');
  });

  test('413 payload too large', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: { email: 'x'.repeat(1024 * 1024 + 10) } });
    assertProblem(res, 413, 'payload_too_large');
  });

  test('a malformed percent-encoding in the path is a 400 problem with a request id', async () => {
    const res = await t.call('GET', '/api/v1/users/%E0%A4%A/', { token });
    assertProblem(res, 400, 'validation_error');
  });

  test('415 unsupported media type', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assertProblem(res, 415, 'unsupported_media_type');
  });

  test('415 for a text/plain body too', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: '{"locale":"en"}', headers: { 'content-type': 'text/plain' } });
    assertProblem(res, 415, 'unsupported_media_type');
    const user = (await t.call('POST', '/api/v1/users/', { token, body: {} })).body;
    const del = await t.call('DELETE', `/api/v1/users/${user.id}/`, { token, body: 'please', headers: { 'content-type': 'text/plain' } });
    assertProblem(del, 415, 'unsupported_media_type');
  });

  test('422 idempotency_conflict', async () => {
    const k = 'errors-test-key-1';
    assert.equal((await t.call('POST', '/api/v1/users/', { token, body: { locale: 'en' }, headers: { 'idempotency-key': k } })).status, 201);
    const res = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'de' }, headers: { 'idempotency-key': k } });
    assertProblem(res, 422, 'idempotency_conflict');
  });

  test('the type URI of a problem resolves to its description', async () => {
    const res = await t.call('GET', '/api/v1/users/');
    const described = await t.call('GET', new URL(res.body.type).pathname);
    assert.equal(described.status, 200);
    assert.equal(described.body.code, 'unauthorized');
    assert.equal(described.body.type, res.body.type);
  });
});

describe('request ids', () => {
  test('a valid incoming X-Request-Id is echoed, on errors and on success', async () => {
    const err = await t.call('GET', '/api/v1/users/', { headers: { 'x-request-id': 'req-12345678' } });
    assert.equal(err.status, 401);
    assert.equal(err.headers['x-request-id'], 'req-12345678');
    assert.equal(err.body.request_id, 'req-12345678');
    const ok = await t.call('GET', '/api/v1/users/', { token, headers: { 'x-request-id': 'req-87654321' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['x-request-id'], 'req-87654321');
    const longest = 'a'.repeat(128);
    assert.equal((await t.call('GET', '/healthz', { headers: { 'x-request-id': longest } })).headers['x-request-id'], longest);
  });

  for (const [name, value] of [
    ['with spaces', 'req 12345678'],
    ['300 characters', 'r'.repeat(300)],
    ['too short', 'req-1'],
    ['with a slash', 'req/12345678'],
  ] as const) {
    test(`an invalid incoming X-Request-Id (${name}) is replaced by a fresh id`, async () => {
      const res = await t.call('GET', '/api/v1/users/', { headers: { 'x-request-id': value } });
      assert.equal(res.status, 401);
      assert.notEqual(res.headers['x-request-id'], value);
      assert.match(String(res.headers['x-request-id']), UUID);
      assert.equal(res.body.request_id, res.headers['x-request-id']);
    });
  }

  test('success answers carry a fresh X-Request-Id, different per request', async () => {
    const a = await t.call('GET', '/api/v1/users/', { token });
    const b = await t.call('GET', '/healthz');
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.match(String(a.headers['x-request-id']), UUID);
    assert.match(String(b.headers['x-request-id']), UUID);
    assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id']);
  });
});

describe('/problems', () => {
  test('every code is described', async () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      const res = await t.call('GET', `/problems/${code}`);
      assert.equal(res.status, 200, `${code}: ${res.text}`);
      assert.deepEqual(res.body, { type: `${BASE_URL}/problems/${code}`, code, title: info.title, status: info.status, description: info.description });
    }
  });

  test('an unknown code is a 404 problem, including inherited property names', async () => {
    for (const code of ['no_such_code', 'toString', 'constructor', '__proto__']) {
      assertProblem(await t.call('GET', `/problems/${code}`), 404, 'not_found');
    }
  });
});

describe('500 and health', () => {
  let broken: BrokenApp;

  before(async () => {
    broken = await brokenApp(t);
  });
  after(() => broken.close());

  test('an unreachable database answers 503 service_unavailable with Retry-After and no internals', async () => {
    const res = await broken.app.inject({
      method: 'GET',
      url: '/api/v1/users/',
      headers: { authorization: `Bearer ${token}`, 'x-request-id': 'support-case-0001' },
    });
    const parsed: TestResponse = { status: res.statusCode, headers: res.headers, body: JSON.parse(res.body), text: res.body };
    assertProblem(parsed, 503, 'service_unavailable');
    assert.equal(parsed.headers['retry-after'], '2');
    assert.equal(parsed.body.request_id, 'support-case-0001');
    assert.equal(parsed.body.errors, undefined);
    for (const leak of [/ECONNREFUSED/i, /postgres/i, /SELECT/i, /127\.0\.0\.1/, /nobody/, /\bat \S+ \(/, /\bat (file|node):/, /\.ts:\d+/, /connect/i]) {
      assert.doesNotMatch(res.body, leak);
    }
  });

  test('a mutation on an unreachable database is a 503 as well (safe to repeat with the same Idempotency-Key)', async () => {
    const res = await broken.app.inject({ method: 'POST', url: '/api/v1/users/', headers: { authorization: `Bearer ${token}` }, payload: {} });
    assert.equal(res.statusCode, 503);
    const body = JSON.parse(res.body);
    assert.equal(body.error.type, 'service_unavailable');
    assert.equal(res.headers['retry-after'], '2');
    assert.doesNotMatch(res.body, /ECONNREFUSED|postgres|BEGIN|INSERT/i);
  });

  test('/readyz is 503 when the database is unreachable and 200 ready when it answers', async () => {
    const down = await broken.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(down.statusCode, 503);
    assert.deepEqual(JSON.parse(down.body), { status: 'unavailable' });
    const up = await t.call('GET', '/readyz');
    assert.equal(up.status, 200);
    assert.deepEqual(up.body, { status: 'ready' });
  });

  test('/healthz is 200 ok, with or without the database', async () => {
    const res = await t.call('GET', '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
    const alive = await broken.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(alive.statusCode, 200);
    assert.deepEqual(JSON.parse(alive.body), { status: 'ok' });
  });
});

describe('HTTPS rules', () => {
  test('development and test modes serve plain requests from loopback, without HSTS', async () => {
    const res = await t.call('GET', '/api/v1/users/', { token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['strict-transport-security'], undefined);
    const dev = await setupTestApp({ env: { NODE_ENV: 'development' } });
    try {
      const devClient = await dev.newClient();
      const devRes = await dev.call('GET', '/api/v1/users/', { token: devClient.token });
      assert.equal(devRes.status, 200, devRes.text);
      assert.equal(dev.config.mode, 'development');
    } finally {
      await dev.close();
    }
  });

  test('test mode refuses plain requests from another address', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/', headers: { authorization: `Bearer ${token}` }, remoteAddress: '10.1.2.3' });
    assert.equal(res.statusCode, 403);
    assert.equal(JSON.parse(res.body).error.type, 'https_required');
    const probe = await t.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.1.2.3' });
    assert.equal(probe.statusCode, 200);
  });

  describe('production', () => {
    let prod: TestContext;
    let prodToken: string;
    before(async () => {
      prod = await setupTestApp({ env: { NODE_ENV: 'production' } });
      ({ token: prodToken } = await prod.newClient());
    });
    after(() => prod.close());

    test('a plain request to the API is 403 https_required, before authentication', async () => {
      const res = await prod.call('GET', '/api/v1/users/', { token: prodToken });
      assertProblem(res, 403, 'https_required');
      assertProblem(await prod.call('GET', '/api/v1/users/'), 403, 'https_required');
      assertProblem(await prod.call('POST', '/api/v1/users/', { token: prodToken, body: {} }), 403, 'https_required');
      const { rows } = await prod.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
      assert.equal(rows[0]?.n, 0, 'the refused POST created nothing');
    });

    test('probes stay reachable over plain HTTP', async () => {
      const health = await prod.call('GET', '/healthz');
      assert.equal(health.status, 200);
      assert.deepEqual(health.body, { status: 'ok' });
      const ready = await prod.call('GET', '/readyz');
      assert.equal(ready.status, 200);
      assert.deepEqual(ready.body, { status: 'ready' });
    });

    test('x-forwarded-proto is ignored without TRUST_PROXY', async () => {
      const res = await prod.call('GET', '/api/v1/users/', { token: prodToken, headers: { 'x-forwarded-proto': 'https' } });
      assertProblem(res, 403, 'https_required');
      assert.equal(res.headers['strict-transport-security'], undefined);
    });
  });

  describe('production behind a trusted proxy', () => {
    let proxied: TestContext;
    let proxiedToken: string;
    before(async () => {
      proxied = await setupTestApp({ env: { TRUST_PROXY: 'true', NODE_ENV: 'production' } });
      ({ token: proxiedToken } = await proxied.newClient());
    });
    after(() => proxied.close());

    const maxAge = (res: TestResponse): number => {
      const match = /max-age=(\d+)/.exec(String(res.headers['strict-transport-security'] ?? ''));
      return match ? Number(match[1]) : -1;
    };

    test('x-forwarded-proto: https is served, with HSTS of at least a year', async () => {
      const res = await proxied.call('GET', '/api/v1/users/', { token: proxiedToken, headers: { 'x-forwarded-proto': 'https' } });
      assert.equal(res.status, 200, res.text);
      assert.ok(maxAge(res) >= 31536000, String(res.headers['strict-transport-security']));
    });

    test('HSTS is sent on error answers over HTTPS too', async () => {
      const res = await proxied.call('GET', '/api/v1/users/', { headers: { 'x-forwarded-proto': 'https' } });
      assertProblem(res, 401, 'unauthorized');
      assert.ok(maxAge(res) >= 31536000);
    });

    test('without x-forwarded-proto, or with http, it is 403 https_required', async () => {
      assertProblem(await proxied.call('GET', '/api/v1/users/', { token: proxiedToken }), 403, 'https_required');
      const plain = await proxied.call('GET', '/api/v1/users/', { token: proxiedToken, headers: { 'x-forwarded-proto': 'http' } });
      assertProblem(plain, 403, 'https_required');
      assert.equal(plain.headers['strict-transport-security'], undefined);
    });

    test('the nearest proxy’s value counts when the header lists several', async () => {
      const res = await proxied.call('GET', '/api/v1/users/', { token: proxiedToken, headers: { 'x-forwarded-proto': 'http, https' } });
      assert.equal(res.status, 200, res.text);
      const spoofed = await proxied.call('GET', '/api/v1/users/', { token: proxiedToken, headers: { 'x-forwarded-proto': 'https, http' } });
      assertProblem(spoofed, 403, 'https_required');
    });
  });
});

describe('OpenAPI and docs', () => {
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is arbitrary JSON walked by key
  type Json = any;
  let doc: Json;
  const methods = ['get', 'post', 'put', 'patch', 'delete'];
  const userOperations = (): [string, string, Json][] =>
    Object.entries(doc.paths as Record<string, Record<string, Json>>)
      .filter(([p]) => p.startsWith('/api/v1/users'))
      .flatMap(([p, item]) =>
        Object.entries(item)
          .filter(([m]) => methods.includes(m))
          .map(([m, op]): [string, string, Json] => [m, p, op]),
      );

  before(async () => {
    const res = await t.call('GET', '/api/v1/openapi.json');
    assert.equal(res.status, 200, res.text);
    doc = res.body;
  });

  test('served without a token, OpenAPI 3.1 with the bearer scheme', async () => {
    const res = await t.call('GET', '/api/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.ok(String(doc.openapi).startsWith('3.1'), doc.openapi);
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'A token the operator issued to your API client.',
    });
    assert.deepEqual(doc.servers, [{ url: BASE_URL }]);
  });

  test('every users route has a summary, the bearer requirement, 401 and its success status', () => {
    const expected: Record<string, string> = {
      'post /api/v1/users/': '201',
      'get /api/v1/users/': '200',
      'get /api/v1/users/{user_id}/': '200',
      'patch /api/v1/users/{user_id}/': '200',
      'delete /api/v1/users/{user_id}/': '204',
      'get /api/v1/users/{user_id}/billing-details/': '200',
      'put /api/v1/users/{user_id}/billing-details/': '200',
    };
    const ops = userOperations();
    const seen = new Set(ops.map(([m, p]) => `${m} ${p}`));
    for (const name of Object.keys(expected)) assert.ok(seen.has(name), `${name} is documented`);
    for (const [method, p, op] of ops) {
      const name = `${method} ${p}`;
      assert.equal(typeof op.summary, 'string', name);
      assert.ok(op.summary.length > 0, name);
      assert.deepEqual(op.security, [{ bearerAuth: [] }], name);
      const codes = Object.keys(op.responses);
      assert.ok(codes.includes('401'), `${name} documents 401`);
      assert.ok(codes.includes('500'), `${name} documents 500`);
      const success = expected[name];
      if (success) assert.ok(codes.includes(success), `${name} documents ${success}`);
      assert.ok(
        codes.some((c) => /^2\d\d$/.test(c)),
        `${name} documents a success status`,
      );
      assert.equal(op.responses['401'].content['application/problem+json'].schema.$ref, '#/components/schemas/Problem', `${name}: 401 is a problem body`);
    }
  });

  test('POST, PATCH and PUT document a 400', () => {
    const writes = userOperations().filter(([m]) => ['post', 'patch', 'put'].includes(m));
    assert.equal(writes.length, 7); // users: POST, PATCH, PUT billing details; payments: POST default; charging: start, stop, PATCH rates
    for (const [method, p, op] of writes) assert.ok(Object.keys(op.responses).includes('400'), `${method} ${p} documents 400`);
  });

  test('every route that takes an Idempotency-Key documents the 400 an invalid key gets', () => {
    const withKey = userOperations().filter(([, , op]) =>
      (op.parameters ?? []).some((param: { in: string; name: string }) => param.in === 'header' && param.name === 'idempotency-key'),
    );
    assert.equal(withKey.length, 9); // users: 4; payments: DELETE method, POST default; charging: start, stop, PATCH rates
    for (const [method, p, op] of withKey) assert.ok(Object.keys(op.responses).includes('400'), `${method} ${p} documents 400`);
  });

  test('GET /docs redirects to /docs/, which answers the HTML reference pointing at the document', async () => {
    const redirect = await t.call('GET', '/docs');
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.location, '/docs/');
    const res = await t.call('GET', '/docs/');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.text, /<html/i);
    assert.ok(res.text.includes('/api/v1/openapi.json'));
  });
});

describe('loadConfig', () => {
  const invalid: [string, Record<string, string>, string][] = [
    ['PORT=abc', { PORT: 'abc' }, 'PORT'],
    ['PORT=70000', { PORT: '70000' }, 'PORT'],
    ['PORT=-1', { PORT: '-1' }, 'PORT'],
    ['LOG_LEVEL=loud', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    ['NODE_ENV=staging', { NODE_ENV: 'staging' }, 'NODE_ENV'],
    ['DATABASE_URL=mysql://x', { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    ['DATABASE_URL=not a url', { DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    ['DATABASE_URL with no host and no socket', { DATABASE_URL: 'postgres://u:pw@/db' }, 'DATABASE_URL'],
    ['DATABASE_URL with a relative socket', { DATABASE_URL: 'postgres://u:pw@/db?host=run' }, 'DATABASE_URL'],
    ['TRUST_PROXY=maybe', { TRUST_PROXY: 'maybe' }, 'TRUST_PROXY'],
    ['JWT_ALGORITHM=HS256', { JWT_ALGORITHM: 'HS256' }, 'JWT_ALGORITHM'],
    ['TLS_CERT_FILE without TLS_KEY_FILE', { TLS_CERT_FILE: 'cert.pem' }, 'TLS_KEY_FILE'],
    ['TLS_KEY_FILE without TLS_CERT_FILE', { TLS_KEY_FILE: 'key.pem' }, 'TLS_CERT_FILE'],
    ['LOCALES=english', { LOCALES: 'english' }, 'LOCALES'],
    ['PUBLIC_BASE_URL=http://... in production', { NODE_ENV: 'production', PUBLIC_BASE_URL: 'http://api.example.com' }, 'PUBLIC_BASE_URL'],
    ['AUTH_CACHE_TTL_MS=10000', { AUTH_CACHE_TTL_MS: '10000' }, 'AUTH_CACHE_TTL_MS'],
    ['FIRST_BYTE_TIMEOUT_MS=soon', { FIRST_BYTE_TIMEOUT_MS: 'soon' }, 'FIRST_BYTE_TIMEOUT_MS'],
    ['KEEP_ALIVE_TIMEOUT_MS=0', { KEEP_ALIVE_TIMEOUT_MS: '0' }, 'KEEP_ALIVE_TIMEOUT_MS'],
    ['REQUEST_TIMEOUT_MS below HEADERS_TIMEOUT_MS', { HEADERS_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '30000' }, 'REQUEST_TIMEOUT_MS'],
    ['CPO_SANDBOX_QUIRKS=coordinates,bogus', { CPO_SANDBOX_QUIRKS: 'coordinates,bogus' }, 'CPO_SANDBOX_QUIRKS'],
  ];
  for (const [name, env, variable] of invalid) {
    test(`${name} throws a ConfigError naming ${variable}`, () => {
      assert.throws(
        () => loadConfig(env, '/srv/app'),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.equal(error.variable, variable);
          assert.ok(error.message.startsWith(`${variable}: `), error.message);
          return true;
        },
      );
    });
  }

  test('DATABASE_URL may name a Unix socket directory instead of a host', () => {
    for (const url of [
      'postgres://u:p%40ss@/charging_access?host=%2Fvar%2Frun%2Fpostgresql',
      'postgresql://u@/db?host=/run/pg&port=5433',
      'postgres:///db?host=/tmp',
    ]) {
      assert.equal(loadConfig({ DATABASE_URL: url }, '/srv/app').databaseUrl, url);
    }
  });

  test('the TLS pair message names both variables', () => {
    assert.throws(() => loadConfig({ TLS_CERT_FILE: 'cert.pem' }, '/srv/app'), /TLS_CERT_FILE and TLS_KEY_FILE must be set together/);
  });

  test('defaults', () => {
    const config = loadConfig({}, '/srv/app');
    assert.equal(config.mode, 'development');
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8443);
    assert.equal(config.dataDir, '/srv/app/data');
    assert.equal(config.publicBaseUrl, 'https://localhost:8443');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.trustProxy, false);
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.locales, ['en', 'de']);
    assert.deepEqual(config.connections, { firstByteMs: 10_000, headersMs: 30_000, requestMs: 300_000, keepAliveMs: 72_000 });
    assert.deepEqual(config.tls, { certFile: '/srv/app/data/tls/localhost-cert.pem', keyFile: '/srv/app/data/tls/localhost-key.pem', generated: true });
    assert.equal(config.jwt.algorithm, 'EdDSA');
    assert.equal(config.jwt.generateKey, true);
    assert.equal(loadConfig({}).dataDir, path.join(process.cwd(), 'data'), 'cwd defaults to the process directory');
  });

  test('blank values count as unset; valid values are parsed', () => {
    assert.equal(loadConfig({ PORT: '  ', HOST: '' }, '/srv/app').port, 8443);
    const config = loadConfig(
      { PORT: '9443', HOST: '0.0.0.0', TRUST_PROXY: 'yes', LOCALES: 'de, en-GB', DATA_DIR: 'state', DATABASE_URL: 'postgresql://u@h/db' },
      '/srv/app',
    );
    assert.equal(config.port, 9443);
    assert.equal(config.trustProxy, true);
    assert.deepEqual(config.locales, ['de', 'en-GB']);
    assert.equal(config.dataDir, '/srv/app/state');
    assert.equal(config.databaseUrl, 'postgresql://u@h/db');
    assert.equal(config.publicBaseUrl, 'https://localhost', 'behind a proxy the default URL has no port');
  });
});

describe('the invoice issuer in production', () => {
  test('without INVOICE_ISSUER_VAT_NUMBER: a ConfigError naming it; with it, or outside production, none', () => {
    assert.throws(
      () => requireInvoiceIssuer(loadConfig({ NODE_ENV: 'production' }, '/srv/app')),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.equal(error.variable, 'INVOICE_ISSUER_VAT_NUMBER');
        assert.match(error.message, /^INVOICE_ISSUER_VAT_NUMBER: is required in production/);
        return true;
      },
    );
    assert.doesNotThrow(() => requireInvoiceIssuer(loadConfig({ NODE_ENV: 'production', INVOICE_ISSUER_VAT_NUMBER: 'DE123456789' }, '/srv/app')));
    assert.doesNotThrow(() => requireInvoiceIssuer(loadConfig({ NODE_ENV: 'development' }, '/srv/app')));
  });
});
