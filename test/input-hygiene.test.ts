// NUL characters and lone surrogates, everywhere: every query parameter, path
// parameter and body property the OpenAPI document lists answers 400
// validation_error naming the field (never a 500 from PostgreSQL), and the
// OCPI and sandbox scopes answer the same refusal in their own forms.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { assertProblem, setupTestApp, type TestContext, type TestResponse } from './helpers.ts';
import { ocpiAuthorization, registerPeer } from './ocpi-support.ts';
import { ocpiLocation } from './stations-fixtures.ts';

const MESSAGE = 'must not contain NUL characters or unpaired surrogates';

let ctx: TestContext;
let token: string;
let ocpiHeaders: Record<string, string>;

before(async () => {
  ctx = await setupTestApp();
  token = (await ctx.newClient()).token;
  ocpiHeaders = await ocpiPeer();
});
after(() => ctx.close());

/** A registered OCPI peer (party DE/ABC): its credentials token header. */
async function ocpiPeer(): Promise<Record<string, string>> {
  return ocpiAuthorization(await registerPeer(ctx.ocpi, ctx, { name: 'cpo-nul' }));
}

/** A string PostgreSQL cannot take: a NUL, or (where the value travels as JSON) a lone surrogate, somewhere in it. */
const badText = (surrogates: boolean) =>
  fc
    .tuple(
      fc.string({ maxLength: 8 }),
      fc.constantFrom(...(surrogates ? ['\u0000', '\ud800', '\udbff', '\udc00', '\udfff', 'a\ud83d'] : ['\u0000'])),
      fc.string({ maxLength: 8 }),
    )
    .map(([a, bad, b]) => `${a}${bad}${b}`);

interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  queryParams: string[];
  bodyProperties: string[];
}

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as plain JSON
function operationsOf(doc: any): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      // biome-ignore lint/suspicious/noExplicitAny: as above
      const op = item[method] as any;
      if (!op) continue;
      // biome-ignore lint/suspicious/noExplicitAny: as above
      const params: any[] = op.parameters ?? [];
      const schema = op.requestBody?.content?.['application/json']?.schema;
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        bodyProperties: Object.keys(schema?.properties ?? {}),
      });
    }
  }
  return operations;
}

function urlOf(op: Operation, pathValues: Record<string, string>, query: Record<string, string>): string {
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(pathValues[name] ?? 'x'));
  const qs = new URLSearchParams(query).toString();
  return qs ? `${path}?${qs}` : path;
}

/** The refusal in the scope's own form: Stripe's error object under /sandbox/, problem+json elsewhere. */
function assertRefused(op: Operation, res: TestResponse, path: string[]): void {
  const field = path.join('.');
  assert.notEqual(res.status, 500, `${op.method} ${op.path}: ${res.text}`);
  if (op.path.startsWith('/ocpi/')) {
    assert.equal(res.status, 400, `${op.method} ${op.path}: ${res.text}`);
    assert.equal(res.body.status_code, 2001, res.text);
    assert.ok(res.body.status_message.includes(`${field} ${MESSAGE}`), `${op.method} ${op.path} should name ${field}: ${res.text}`);
    return;
  }
  if (op.path.startsWith('/sandbox/')) {
    assert.equal(res.status, 400, `${op.method} ${op.path}: ${res.text}`);
    assert.equal(res.body.error.type, 'invalid_request_error');
    // Stripe names a nested param by its JSON pointer.
    assert.equal(res.body.error.param, path.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/'), res.text);
    assert.ok(res.body.error.message.includes(MESSAGE), res.text);
    return;
  }
  assertProblem(res, 400, 'validation_error');
  assert.ok(
    res.body.errors.some((e: { field: string; message: string }) => e.field === field && e.message === MESSAGE),
    `${op.method} ${op.path} should name ${field}: ${res.text}`,
  );
}

describe('NUL characters and lone surrogates', () => {
  it('are refused as validation_error naming the field, on every operation of the OpenAPI document', async () => {
    const doc = (await ctx.call('GET', '/api/v1/openapi.json')).body;
    const operations = operationsOf(doc);
    assert.ok(operations.length > 20, `the document lists ${operations.length} operations`);
    const withInputs = operations.filter((op) => op.pathParams.length + op.queryParams.length + op.bodyProperties.length > 0);
    assert.ok(withInputs.filter((op) => op.bodyProperties.length > 0).length > 5);
    assert.ok(withInputs.filter((op) => op.queryParams.length > 0).length > 3);
    let checked = 0;
    for (const op of withInputs) {
      const headers = op.path.startsWith('/ocpi/') ? ocpiHeaders : { authorization: `Bearer ${token}` };
      const bodyless = op.method === 'GET' || op.method === 'DELETE';
      // A URL carries no lone surrogate (it is UTF-8, percent-encoded): only NUL there.
      for (const name of op.pathParams) {
        await fc.assert(
          fc.asyncProperty(badText(false), async (bad) => {
            const res = await ctx.call(op.method, urlOf(op, { [name]: bad }, {}), { headers, ...(bodyless ? {} : { body: {} }) });
            assertRefused(op, res, [name]);
          }),
          { numRuns: 5 },
        );
        checked++;
      }
      for (const name of op.queryParams) {
        await fc.assert(
          fc.asyncProperty(badText(false), async (bad) => {
            const res = await ctx.call(op.method, urlOf(op, {}, { [name]: bad }), { headers, ...(bodyless ? {} : { body: {} }) });
            assertRefused(op, res, [name]);
          }),
          { numRuns: 5 },
        );
        checked++;
      }
      for (const name of op.bodyProperties) {
        await fc.assert(
          fc.asyncProperty(badText(true), fc.boolean(), async (bad, nested) => {
            // Nested values and arrays are walked too: the field is named by its path.
            const value = nested ? { inner: [bad] } : bad;
            const res = await ctx.call(op.method, urlOf(op, {}, {}), { headers, body: { [name]: value } });
            assertRefused(op, res, nested ? [name, 'inner', '0'] : [name]);
          }),
          { numRuns: 5 },
        );
        checked++;
      }
      if (!bodyless && op.bodyProperties.length > 0) {
        // A bad object KEY is named too (its bad characters shown as U+FFFD).
        await fc.assert(
          fc.asyncProperty(badText(true), async (bad) => {
            const res = await ctx.call(op.method, urlOf(op, {}, {}), { headers, body: { [bad]: 'x' } });
            assertRefused(op, res, [bad.toWellFormed().replaceAll('\u0000', '\uFFFD')]);
          }),
          { numRuns: 3 },
        );
      }
    }
    assert.ok(checked > 50, `${checked} fields checked`);
  });

  it('a good value beside a bad one: only the bad field is named', async () => {
    const res = await ctx.call('POST', '/api/v1/users/', {
      token,
      body: { first_name: 'Ada', last_name: 'Love\u0000lace', email: 'ada@example.com' },
    });
    assertProblem(res, 400, 'validation_error');
    assert.deepEqual(res.body.errors, [{ field: 'last_name', message: MESSAGE }]);
  });

  it('a NUL in a station search query is 400, not a database error', async () => {
    const res = await ctx.call('GET', `/api/v1/stations/search?q=${encodeURIComponent('Berlin\u0000')}`, { token });
    assertProblem(res, 400, 'validation_error');
    assert.deepEqual(res.body.errors, [{ field: 'q', message: MESSAGE }]);
  });

  it('a NUL on a route that does not exist is refused the same way', async () => {
    const res = await ctx.call('GET', '/api/v1/nowhere?x=%00', { token });
    assertProblem(res, 400, 'validation_error');
  });

  it('OCPI: a location PUT with a NUL or a lone surrogate answers the OCPI envelope 2001 with HTTP 400', async () => {
    const headers = ocpiHeaders;
    for (const bad of ['Haupt\u0000bahnhof', 'Haupt\ud800bahnhof']) {
      const location = { ...ocpiLocation({ id: 'L1', lat: 52.5, lon: 13.4 }), name: bad };
      const res = await ctx.call('PUT', '/ocpi/2.2.1/locations/DE/ABC/L1', { headers, body: location });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.status_code, 2001, res.text);
      assert.match(res.body.status_message, /name must not contain NUL characters or unpaired surrogates/);
    }
    const inPath = await ctx.call('PUT', '/ocpi/2.2.1/locations/DE/ABC/L%001', { headers, body: ocpiLocation({ id: 'L1', lat: 52.5, lon: 13.4 }) });
    assert.equal(inPath.status, 400, inPath.text);
    assert.equal(inPath.body.status_code, 2001);
    assert.match(inPath.body.status_message, /location_id must not contain/);
    // The location itself is stored fine once the name is clean (201: new; the refused PUTs stored nothing).
    const good = await ctx.call('PUT', '/ocpi/2.2.1/locations/DE/ABC/L1', { headers, body: ocpiLocation({ id: 'L1', lat: 52.5, lon: 13.4 }) });
    assert.equal(good.status, 201, good.text);
  });

  it('sandbox pages: confirm with a NUL client secret answers a Stripe-shaped 400 naming the param', async () => {
    const res = await ctx.call('POST', '/sandbox/setup_intents/seti_123/confirm', { body: { client_secret: 'seti_123_secret_\u0000', card_number: '4242' } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.type, 'invalid_request_error');
    assert.equal(res.body.error.param, 'client_secret');
    const read = await ctx.call('GET', '/sandbox/setup_intents/seti_1%002?client_secret=x');
    assert.equal(read.status, 400, read.text);
    assert.equal(read.body.error.param, 'id');
  });

  it('the Stripe webhook: a body with a NUL is refused before it is verified or stored', async () => {
    const res = await ctx.call('POST', '/webhooks/stripe', {
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: JSON.stringify({ id: 'evt_\u0000', type: 'setup_intent.succeeded' }),
    });
    assertProblem(res, 400, 'validation_error');
    assert.deepEqual(res.body.errors, [{ field: 'id', message: MESSAGE }]);
  });
});
