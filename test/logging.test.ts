// Logs: the human-readable formatter, LOG_FORMAT, one line per request at the
// right level (client API and OCPI at info; probes, docs, sandbox pages, the
// sandbox's webhooks and the built-in CPO network's own OCPI calls at debug),
// and credentials in query strings never logged.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../src/app.ts';
import { createOcpi, type Ocpi } from '../src/modules/ocpi/service.ts';
import { ConfigError } from '../src/platform/config.ts';
import { requestLogLevel } from '../src/platform/http/request-log.ts';
import { loggedUrl, loggerOptions } from '../src/platform/http/server.ts';
import { createLogger, formatRecord, logFormatFor } from '../src/platform/logging.ts';
import { sandboxBrowserRoutes } from '../src/sandbox/stripe/browser.ts';
import { setupTestApp, type TestContext, testConfig } from './helpers.ts';
import { ocpiAuthorization, registerPeer } from './ocpi-support.ts';

describe('the human-readable formatter', () => {
  it('writes one line: time, level, message, key=value fields', () => {
    const line = formatRecord({
      level: 30,
      time: Date.parse('2026-03-01T12:34:56.789Z'),
      pid: 1,
      hostname: 'h',
      msg: 'request',
      method: 'GET',
      url: '/api/v1/users/',
      status: 200,
      ms: 1.5,
      note: 'two words',
      empty: '',
      nested: { a: 1 },
    });
    assert.equal(line, '12:34:56.789Z INFO  request method=GET url=/api/v1/users/ status=200 ms=1.5 note="two words" empty="" nested={"a":1}\n');
  });

  it('escapes control characters, so a value cannot forge a second line', () => {
    const line = formatRecord({ level: 40, time: 0, msg: 'a\nb', field: 'x\ny', other: 'c\rd' });
    assert.equal(line.split('\n').length, 2, line);
    assert.ok(line.endsWith('\n'));
    assert.match(line, /^00:00:00\.000Z WARN {2}a\\nb field="x\\ny" other="c\\rd"\n$/);
  });

  it('shows an error with its stack at error level, and only its message below', () => {
    const err = { type: 'Error', message: 'connection lost', stack: 'Error: connection lost\n    at f (file.ts:1:1)' };
    const atError = formatRecord({ level: 50, time: 0, msg: 'failed', err });
    assert.equal(atError, '00:00:00.000Z ERROR failed err="connection lost"\n    Error: connection lost\n        at f (file.ts:1:1)\n');
    const atWarn = formatRecord({ level: 40, time: 0, msg: 'retrying', err });
    assert.equal(atWarn, '00:00:00.000Z WARN  retrying err="connection lost"\n');
  });

  it('is chosen by LOG_FORMAT, else by whether the output is a terminal', () => {
    assert.equal(logFormatFor(undefined, { isTTY: true }), 'pretty');
    assert.equal(logFormatFor(undefined, { isTTY: false }), 'json');
    assert.equal(logFormatFor(undefined, {}), 'json');
    assert.equal(logFormatFor('json', { isTTY: true }), 'json');
    assert.equal(logFormatFor('pretty', { isTTY: false }), 'pretty');
    assert.equal(testConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
    assert.equal(testConfig().logFormat, undefined);
    assert.throws(
      () => testConfig({ LOG_FORMAT: 'text' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'LOG_FORMAT',
    );
  });

  it('the service logger on a terminal writes formatted lines', () => {
    const written: string[] = [];
    const out = { isTTY: true, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const log = createLogger({ logLevel: 'info', logFormat: undefined }, out);
    log.info({ client_id: 'c1' }, 'created the demo API client');
    log.debug('not shown');
    assert.equal(written.length, 1);
    assert.match(written[0] as string, /^\d\d:\d\d:\d\d\.\d{3}Z INFO {2}created the demo API client client_id=c1\n$/);
  });
});

describe('loggedUrl', () => {
  it('replaces the values of signature, token, access_token and client_secret, whatever their case', () => {
    assert.equal(
      loggedUrl('/invoices/inv_1.pdf?expires=123&signature=abc.def&Token=t1&ACCESS_TOKEN=t2&client_secret=s&page=2'),
      '/invoices/inv_1.pdf?expires=123&signature=[redacted]&Token=[redacted]&ACCESS_TOKEN=[redacted]&client_secret=[redacted]&page=2',
    );
    assert.equal(loggedUrl('/api/v1/users/?page=2&page_size=10'), '/api/v1/users/?page=2&page_size=10');
    assert.equal(loggedUrl('/x?signature=&y=1'), '/x?signature=[redacted]&y=1');
  });
});

describe('request lines', () => {
  let ctx: TestContext;
  const lines: string[] = [];
  let app: Awaited<ReturnType<typeof buildApp>>;
  let ocpi: Ocpi;
  const sandboxVersionsUrl = 'http://127.0.0.1:9/sandbox/versions';

  /** A registered OCPI peer whose versions are at `versionsUrl`: its Authorization header. */
  async function peer(name: string, versionsUrl: string): Promise<Record<string, string>> {
    const parties = [{ country_code: 'DE', party_id: name.slice(0, 3).toUpperCase() }];
    return ocpiAuthorization(await registerPeer(ocpi, ctx, { name, versionsUrl, parties }));
  }

  before(async () => {
    ctx = await setupTestApp();
    ocpi = createOcpi({ db: ctx.db, clock: ctx.clock, config: ctx.config.ocpi, baseUrl: `${ctx.config.publicBaseUrl}/ocpi`, ingestion: ctx.ingestion });
    app = await buildApp({
      config: ctx.config,
      db: ctx.db,
      clock: ctx.clock,
      authenticate: ctx.clients.authenticate,
      catalogue: ctx.catalogue,
      ocpi,
      payments: { processor: ctx.processor, processorRoutes: sandboxBrowserRoutes(ctx.sandbox) },
      loggerInstance: pino(loggerOptions('debug'), { write: (line: string) => lines.push(line) }),
      ownTraffic: (request) => request.ocpiConnection?.versions_url === sandboxVersionsUrl,
    });
  });
  after(async () => {
    await ocpi.stop();
    await app.close();
    await ctx.close();
  });

  /** The request lines one request wrote. */
  async function linesOf(method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}, payload?: string) {
    const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
    const id = res.headers['x-request-id'];
    return lines
      .map((l) => JSON.parse(l) as { level: number; msg: string; request_id?: string; url?: string; status?: number; method?: string; ms?: number })
      .filter((l) => l.request_id === id && l.msg !== 'OCPI request refused');
  }

  it('one line per request, at info for the client API and OCPI peers, at debug for the rest', async () => {
    const { token } = await ctx.newClient();
    const other = await peer('cpo-peer', 'http://127.0.0.1:9/versions');
    const own = await peer('sandbox', sandboxVersionsUrl);
    const cases: { method: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: string; level: 'info' | 'debug'; status: number }[] = [
      { method: 'GET', url: '/api/v1/users/', headers: { authorization: `Bearer ${token}` }, level: 'info', status: 200 },
      { method: 'GET', url: '/api/v1/users/', level: 'info', status: 401 },
      { method: 'GET', url: '/ocpi/versions', headers: other, level: 'info', status: 200 },
      { method: 'GET', url: '/ocpi/versions', level: 'info', status: 401 },
      // The built-in CPO network's own calls: recognised by the connection that authenticated them.
      { method: 'GET', url: '/ocpi/versions', headers: own, level: 'debug', status: 200 },
      { method: 'GET', url: '/ocpi/2.2.1/locations/DE/SAN/L1', headers: own, level: 'debug', status: 404 },
      // A header cannot make a peer's request pass for the sandbox's.
      { method: 'GET', url: '/ocpi/versions', headers: { ...other, 'x-forwarded-for': '127.0.0.1', 'user-agent': 'sandbox' }, level: 'info', status: 200 },
      { method: 'GET', url: '/healthz', level: 'debug', status: 200 },
      { method: 'GET', url: '/readyz', level: 'debug', status: 200 },
      { method: 'GET', url: '/docs/', level: 'debug', status: 200 },
      { method: 'GET', url: '/sandbox/', level: 'debug', status: 200 },
      { method: 'POST', url: '/webhooks/stripe', headers: { 'content-type': 'application/json' }, payload: '{}', level: 'debug', status: 400 },
      { method: 'GET', url: '/nowhere', level: 'debug', status: 404 },
    ];
    for (const c of cases) {
      const seen = await linesOf(c.method, c.url, c.headers, c.payload);
      assert.equal(seen.length, 1, `${c.method} ${c.url}: ${JSON.stringify(seen)}`);
      const [line] = seen as [(typeof seen)[number]];
      assert.equal(line.msg, 'request');
      assert.equal(line.level, c.level === 'info' ? 30 : 20, `${c.method} ${c.url} at ${c.level}`);
      assert.equal(line.method, c.method);
      assert.equal(line.url, c.url);
      assert.equal(line.status, c.status, `${c.method} ${c.url}`);
      assert.equal(typeof line.ms, 'number');
    }
    assert.ok(!lines.some((l) => /"msg":"(incoming request|request completed)"/.test(l)), 'Fastify’s own request lines are off');
  });

  it('the webhook route is at info when the processor is the real Stripe', () => {
    const request = { url: '/webhooks/stripe' } as FastifyRequest;
    assert.equal(requestLogLevel(request, { paymentsSandbox: false }), 'info');
    assert.equal(requestLogLevel(request, { paymentsSandbox: true }), 'debug');
  });

  it('query values that are credentials never reach the log', async () => {
    const { token } = await ctx.newClient();
    const secrets = ['sig-5e3c8a1f', 'tok-9d2b7e44', 'acc-71c0aa3e', 'cs-4b1f9e02'];
    const url = `/api/v1/users/?signature=${secrets[0]}&TOKEN=${secrets[1]}&access_token=${secrets[2]}&client_secret=${secrets[3]}&page=1`;
    const seen = await linesOf('GET', url, { authorization: `Bearer ${token}` });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.url, '/api/v1/users/?signature=[redacted]&TOKEN=[redacted]&access_token=[redacted]&client_secret=[redacted]&page=1');
    // The invoice document link, signed in its query.
    await linesOf('GET', `/invoices/inv_x/pdf?expires=1&signature=${secrets[0]}`);
    const all = lines.join('');
    for (const secret of secrets) assert.ok(!all.includes(secret), `${secret} was logged`);
    assert.ok(!all.includes(token), 'the bearer token was logged');
  });
});
