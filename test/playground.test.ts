// The playground's server side through HTTP: its page and bundled assets (development only: production answers
// 404), and its token: minted for the demo client, short-lived, never the demo client's own token, reused while
// young, replaced when revoked, refused to other sites, and a plain answer when there is no demo client to mint for.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TOKEN_LIFETIME_MS } from '../src/playground/token.ts';
import { assertProblem, setupTestApp, type TestContext } from './helpers.ts';

describe('the playground (development)', () => {
  let ctx: TestContext;
  let demo: { clientId: string; token: string; jti: string } | undefined;
  const demoToken = async () => demo?.token;

  before(async () => {
    // No credential cache: a revocation or a disabled client counts at once.
    ctx = await setupTestApp({ env: { NODE_ENV: 'development' }, authCacheTtlMs: 0, playground: { demoToken } });
    demo = await ctx.newClient('demo');
  });
  after(async () => {
    await ctx?.close();
  });

  it('/playground/ serves its page under a policy that lets it load only its own files, and its bundled files', async () => {
    const redirect = await ctx.call('GET', '/playground');
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.location, '/playground/');

    const page = await ctx.call('GET', '/playground/');
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"])
      assert.ok(csp.includes(directive), csp);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/, 'no inline code, nothing from elsewhere');
    assert.match(page.text, /<script type="module" src="app.js"><\/script>/);
    assert.doesNotMatch(page.text, /https?:\/\//, 'the page names no other site');

    const js = await ctx.call('GET', '/playground/app.js');
    assert.equal(js.status, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    // Leaflet and the SDK are in the bundle (their code, not an import of them), with Leaflet's licence notice.
    assert.ok(js.text.length > 100_000, `app.js is ${js.text.length} bytes`);
    assert.match(js.text, /Leaflet/);
    assert.doesNotMatch(js.text, /from\s*["']@charging-access\/client["']|from\s*["']leaflet["']/);
    assert.doesNotMatch(js.text, /https?:\/\/[a-z0-9.-]*(tile|cdn|unpkg|jsdelivr|googleapis)/i, 'no tile server or CDN');
    const css = await ctx.call('GET', '/playground/app.css');
    assert.equal(css.status, 200);
    assert.match(String(css.headers['content-type']), /^text\/css/);
    assert.match(css.text, /\.leaflet-container/);
    assert.doesNotMatch(css.text, /url\((?!data:|["']?#)/, 'every image Leaflet names is inlined');
    const countries = await ctx.call('GET', '/playground/countries.json');
    assert.equal(countries.status, 200);
    assert.equal(countries.body.type, 'Topology');
    assert.ok(countries.body.objects.countries.geometries.length > 200);

    assertProblem(await ctx.call('GET', '/playground/nothing.js'), 404, 'not_found');
    assertProblem(await ctx.call('GET', '/playground/index.html'), 404, 'not_found');
  });

  it('/playground/token mints a token of the demo client that works on the API, expires after 15 minutes and is not the demo token', async () => {
    const res = await ctx.call('GET', '/playground/token', { headers: { 'sec-fetch-site': 'same-origin' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(Object.keys(res.body).sort(), ['expires_at', 'token', 'token_type']);
    assert.equal(res.body.token_type, 'Bearer');
    assert.notEqual(res.body.token, demo?.token);
    assert.equal(new Date(res.body.expires_at).getTime(), ctx.clock.now().getTime() + TOKEN_LIFETIME_MS);
    const token = res.body.token as string;

    // The demo client's: it sees the demo client's users, not another client's.
    const ours = await ctx.call('POST', '/api/v1/users/', { token: demo?.token, body: { locale: 'en' } });
    assert.equal((await ctx.call('GET', `/api/v1/users/${ours.body.id}/`, { token })).status, 200);
    const other = await ctx.newClient();
    const theirs = await ctx.call('POST', '/api/v1/users/', { token: other.token, body: { locale: 'en' } });
    assertProblem(await ctx.call('GET', `/api/v1/users/${theirs.body.id}/`, { token }), 404, 'not_found');
    // Registered like every token: the operator's list of the demo client's tokens has it, with its expiry.
    const { rows } = await ctx.db.query<{ expires_at: Date }>('SELECT expires_at FROM api_tokens WHERE client_id = $1 AND expires_at IS NOT NULL', [
      demo?.clientId,
    ]);
    assert.deepEqual(
      rows.map((r) => r.expires_at.toISOString()),
      [res.body.expires_at],
    );

    // Handed out again while young; a new one once half its life is gone; the old one stops working when it expires.
    ctx.clock.advance(TOKEN_LIFETIME_MS / 2 - 1_000);
    assert.equal((await ctx.call('GET', '/playground/token')).body.token, token);
    ctx.clock.advance(2_000);
    const renewed = await ctx.call('GET', '/playground/token');
    assert.notEqual(renewed.body.token, token);
    ctx.clock.advance(TOKEN_LIFETIME_MS / 2 + 31_000); // past the expiry and the 30 s clock tolerance
    assertProblem(await ctx.call('GET', '/api/v1/users/', { token }), 401, 'unauthorized');
    assert.equal((await ctx.call('GET', '/api/v1/users/', { token: renewed.body.token })).status, 200);
  });

  it('a revoked playground token is replaced by a new one', async () => {
    const first = (await ctx.call('GET', '/playground/token')).body.token as string;
    const { rows } = await ctx.db.query<{ jti: string }>('SELECT jti FROM api_tokens WHERE client_id = $1 ORDER BY issued_at DESC LIMIT 1', [demo?.clientId]);
    await ctx.clients.revokeToken(rows[0]?.jti as string);
    const second = (await ctx.call('GET', '/playground/token')).body.token as string;
    assert.notEqual(second, first);
    assert.equal((await ctx.call('GET', '/api/v1/users/', { token: second })).status, 200);
  });

  it('a demo client made anew (its token file replaced) gets a token of its own at once, not the cached one of the old client', async () => {
    const old = (await ctx.call('GET', '/playground/token')).body.token as string;
    const kept = demo;
    demo = await ctx.newClient('demo');
    try {
      const fresh = (await ctx.call('GET', '/playground/token')).body.token as string;
      assert.notEqual(fresh, old);
      const user = await ctx.call('POST', '/api/v1/users/', { token: demo.token, body: { locale: 'en' } });
      assert.equal((await ctx.call('GET', `/api/v1/users/${user.body.id}/`, { token: fresh })).status, 200);
    } finally {
      demo = kept;
    }
  });

  it('other sites get no token; without a working demo client the answer says what to do', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const refused = await ctx.call('GET', '/playground/token', { headers: { 'sec-fetch-site': site } });
      assertProblem(refused, 401, 'unauthorized');
      assert.match(refused.body.detail, /only to the playground page/);
    }

    const kept = demo;
    demo = undefined;
    const none = await ctx.call('GET', '/playground/token');
    assertProblem(none, 409, 'conflict');
    assert.match(none.body.detail, /DEMO_CLIENT=true/);

    // The demo client disabled: its own token no longer works, so no token is minted for it (the cached one is refused too).
    demo = kept;
    await ctx.clients.disableClient(demo?.clientId as string);
    const disabled = await ctx.call('GET', '/playground/token');
    assertProblem(disabled, 409, 'conflict');
    assert.match(disabled.body.detail, /delete DATA_DIR\/demo-token and restart/);
    assert.doesNotMatch(disabled.text, new RegExp(String(demo?.token)));
  });
});

describe('the playground in production', () => {
  let ctx: TestContext;
  before(async () => {
    // Behind a TLS-terminating proxy, as production runs (plain HTTP is refused there).
    ctx = await setupTestApp({ env: { NODE_ENV: 'production', TRUST_PROXY: 'true' }, playground: { demoToken: async () => 'any' } });
  });
  after(async () => {
    await ctx?.close();
  });

  it('is not served: every /playground path is a 404', async () => {
    for (const path of ['/playground', '/playground/', '/playground/app.js', '/playground/token']) {
      assertProblem(await ctx.call('GET', path, { headers: { 'x-forwarded-proto': 'https' } }), 404, 'not_found');
    }
  });
});
