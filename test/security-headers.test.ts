// Security headers on every kind of answer: API JSON, problems, 404s, the
// OCPI envelope, the API reference (/docs, with a CSP that still lets its own
// bundle and start-up script run), the sandbox page, invoice PDFs' route.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setupTestApp, type TestContext, type TestResponse } from './helpers.ts';

let ctx: TestContext;
let token: string;

before(async () => {
  ctx = await setupTestApp();
  token = (await ctx.newClient()).token;
});
after(() => ctx.close());

const JSON_CSP = "default-src 'none'; frame-ancestors 'none'";

function assertCommon(res: TestResponse, what: string): void {
  assert.equal(res.headers['x-content-type-options'], 'nosniff', what);
  assert.equal(res.headers['x-frame-options'], 'DENY', what);
  assert.equal(res.headers['referrer-policy'], 'no-referrer', what);
  assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, what);
}

/** The CSP as a map of directive to its sources. */
function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...sources]) => [name as string, sources]),
  );
}

describe('security headers', () => {
  it('JSON answers, problems, 404s and validation errors: nosniff, DENY, no-referrer, default-src none', async () => {
    const answers: [string, TestResponse][] = [
      ['API 200', await ctx.call('GET', '/api/v1/users/', { token })],
      ['API 401', await ctx.call('GET', '/api/v1/users/')],
      ['API 400', await ctx.call('GET', '/api/v1/users/?page=x', { token })],
      ['API 404', await ctx.call('GET', '/api/v1/nowhere', { token })],
      ['root 404', await ctx.call('GET', '/nowhere')],
      ['bad URL', await ctx.call('GET', '/api/v1/users/%zz', { token })],
      ['problem type', await ctx.call('GET', '/problems/validation_error')],
      ['health', await ctx.call('GET', '/healthz')],
      ['openapi', await ctx.call('GET', '/api/v1/openapi.json')],
      ['OCPI 401', await ctx.call('GET', '/ocpi/versions')],
      ['webhook 400', await ctx.call('POST', '/webhooks/stripe', { headers: { 'content-type': 'application/json' }, body: '{}' })],
      ['sandbox read', await ctx.call('GET', '/sandbox/setup_intents/seti_x?client_secret=x')],
      ['invoice PDF link refused', await ctx.call('GET', '/invoices/inv_x/pdf?expires=1&signature=x')],
    ];
    for (const [what, res] of answers) {
      assert.ok(res.status < 500, `${what}: ${res.status} ${res.text}`);
      assert.match(String(res.headers['content-type']), /json/, what);
      assertCommon(res, what);
      assert.equal(res.headers['content-security-policy'], JSON_CSP, what);
    }
  });

  it('/docs: a CSP that allows only its own bundle and its inline start-up script (by hash), and no framing', async () => {
    const res = await ctx.call('GET', '/docs/');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assertCommon(res, '/docs/');
    const csp = directives(String(res.headers['content-security-policy']));
    assert.deepEqual(csp.get('default-src'), ["'none'"]);
    assert.deepEqual(csp.get('frame-ancestors'), ["'none'"]);
    assert.deepEqual(csp.get('base-uri'), ["'none'"]);
    assert.ok(!String(res.headers['content-security-policy']).includes('unsafe-eval'));
    const scriptSrc = csp.get('script-src') ?? [];
    assert.ok(!scriptSrc.includes("'unsafe-inline'"), 'no inline script beyond the hashed one');
    // Every script the page carries is allowed: external ones from this origin, inline ones by their hash.
    const scripts = [...res.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    assert.ok(scripts.length >= 2, res.text);
    for (const [, attributes, body] of scripts) {
      const src = /\bsrc="([^"]+)"/.exec(attributes ?? '')?.[1];
      if (src) {
        assert.ok(!/^[a-z]+:|^\/\//i.test(src), `${src} is on this origin`);
        assert.ok(scriptSrc.includes("'self'"));
        const bundle = await ctx.call('GET', new URL(src, 'https://x/docs/').pathname);
        assert.equal(bundle.status, 200, src);
        assert.ok(!/\bnew Function\(|\beval\(/.test(bundle.text), 'the bundle needs no eval');
        assert.ok(!bundle.text.includes('fonts.scalar.com') || /withDefaultFonts/.test(bundle.text));
      } else {
        const hash = `'sha256-${createHash('sha256')
          .update(body ?? '', 'utf8')
          .digest('base64')}'`;
        assert.ok(scriptSrc.includes(hash), `inline script ${hash} allowed: ${scriptSrc.join(' ')}`);
      }
    }
    // The OpenAPI document the page loads is fetched from this origin.
    assert.ok(csp.get('connect-src')?.includes("'self'"));
    assert.ok(res.text.includes('"withDefaultFonts": false'), 'no web fonts from elsewhere');
  });

  it('the sandbox page keeps its own nonce policy, with the common headers', async () => {
    const res = await ctx.call('GET', '/sandbox/');
    assert.equal(res.status, 200);
    assertCommon(res, '/sandbox/');
    const csp = directives(String(res.headers['content-security-policy']));
    assert.deepEqual(csp.get('default-src'), ["'none'"]);
    const nonce = /<script nonce="([^"]+)"/.exec(res.text)?.[1];
    assert.ok(nonce);
    assert.deepEqual(csp.get('script-src'), [`'nonce-${nonce}'`]);
  });

  it('OCPI envelopes get them too', async () => {
    const res = await ctx.call('GET', '/ocpi/2.2.1/locations/DE/ABC/L1', { headers: { authorization: 'Token bm9wZQ==' } });
    assert.equal(res.status, 401);
    assert.equal(res.body.status_code, 2000);
    assertCommon(res, 'OCPI');
    assert.equal(res.headers['content-security-policy'], JSON_CSP);
  });
});
