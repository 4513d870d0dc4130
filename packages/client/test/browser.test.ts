// The SDK in a real browser (headless Chromium, test/browser-support.ts): the package is built as `npm run
// sdk:build` builds it (plain ES modules), served with a page from one origin that also passes /api/ on to the
// real service, and used by the page: a user created and read, a list walked with for await, a typed 404, a
// session's live events over fetch's body stream, and a webhook signature checked with the browser's Web Crypto.
// No console error, and no request leaves that origin.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { recordEvent } from '../../../src/modules/events/outbox.ts';
import { browserMissing, launchBrowser, watchPage } from '../../../test/browser-support.ts';
import { insertSessionFor } from '../../../test/events-support.ts';
import { setupTestApp, type TestContext } from '../../../test/helpers.ts';

const missing = browserMissing();
const packageDir = path.join(import.meta.dirname, '..');

let ctx: TestContext;
let browser: Browser;
let server: Server;
let origin: string;
let built: string;

/** Serves the built SDK under /sdk/ and a blank page at /; everything else goes to the service. */
function startOrigin(target: string): Promise<Server> {
  const page = '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>SDK</title>';
  const s = createServer(async (req, res) => {
    const url = req.url ?? '/';
    if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page);
    if (url.startsWith('/sdk/')) {
      const file = path.join(built, path.normalize(url.slice('/sdk/'.length)));
      if (!file.startsWith(built)) return void res.writeHead(404).end();
      const body = await readFile(file).catch(() => undefined);
      if (!body) return void res.writeHead(404).end();
      return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(body);
    }
    const upstream = request(`${target}${url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.socket?.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

describe('the SDK in a real browser', { skip: missing }, () => {
  before(async () => {
    built = await mkdtemp(path.join(os.tmpdir(), 'sdk-build-'));
    // The package's own TypeScript (5.x, with the emitter) builds it, as `npm run sdk:build` does.
    await promisify(execFile)(path.join(packageDir, 'node_modules', '.bin', 'tsc'), ['-p', path.join(packageDir, 'tsconfig.build.json'), '--outDir', built]);
    ctx = await setupTestApp({ listen: 0 });
    server = await startOrigin(ctx.address as string);
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await ctx?.close();
    await rm(built, { recursive: true, force: true });
  });

  test('creates and reads a user, walks a list, gets a typed 404, streams a session, verifies a signature', async () => {
    const { clientId, token } = await ctx.newClient();
    const page = await browser.newPage();
    const watch = watchPage(page);
    await page.goto(`${origin}/`);

    const first = await page.evaluate(
      async ({ origin, token }) => {
        const { createClient, isApiError } = await import(`${origin}/sdk/index.js`);
        const api = createClient({ baseUrl: origin, token });
        const user = await api.post('/api/v1/users/', { body: { email: 'browser@example.com', locale: 'de' } });
        for (let i = 0; i < 4; i++) await api.post('/api/v1/users/', { body: {} });
        const ids: string[] = [];
        for await (const u of api.paginate('/api/v1/users/', { query: { page_size: 2 } })) ids.push(u.id);
        const read = await api.get('/api/v1/users/{user_id}/', { path: { user_id: user.id } });
        const missing = await api.get('/api/v1/users/{user_id}/', { path: { user_id: crypto.randomUUID() } }).catch((e: unknown) => e);
        return { user, read, ids, notFound: isApiError(missing, 'not_found'), status: (missing as { status: number }).status };
      },
      { origin, token },
    );
    assert.deepEqual(first.read, first.user);
    assert.equal(first.user.locale, 'de');
    assert.equal(first.ids.length, 5);
    assert.equal(new Set(first.ids).size, 5);
    assert.ok(first.notFound);
    assert.equal(first.status, 404);

    // A session with two events; the page reads them from the live stream.
    const userId = first.user.id as string;
    const sessionId = await insertSessionFor(ctx.db, clientId, userId);
    for (const type of ['charging_session.pending', 'charging_session.active'] as const) {
      await recordEvent(ctx.db, { clientId, userId, type, object: { id: sessionId, status: type.split('.')[1] }, sessionId }, ctx.clock.now());
    }
    const streamed = await page.evaluate(
      async ({ origin, token, userId, sessionId }) => {
        const { createClient } = await import(`${origin}/sdk/index.js`);
        const api = createClient({ baseUrl: origin, token });
        const types: string[] = [];
        for await (const { id, event } of api.sessionEvents(userId, sessionId, { signal: AbortSignal.timeout(10_000) })) {
          types.push(`${id} ${event.type} ${event.data.object.status}`);
          if (types.length === 2) break;
        }
        return types;
      },
      { origin, token, userId, sessionId },
    );
    assert.equal(streamed.length, 2);
    assert.match(streamed[0] as string, /^\d+ charging_session\.pending pending$/);
    assert.match(streamed[1] as string, /^\d+ charging_session\.active active$/);

    // A body signed as the service signs deliveries (HMAC-SHA256 over "id.timestamp.body" with the secret's bytes).
    const secret = Buffer.from('browser-test-secret-of-32-bytes!');
    const body = JSON.stringify({ id: 'evt_1', type: 'ping', created_at: new Date().toISOString(), data: { object: {} }, user_id: null });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `v1,${createHmac('sha256', secret).update(`evt_1.${timestamp}.${body}`).digest('base64')}`;
    const verdicts = await page.evaluate(
      async ({ origin, secret, body, timestamp, signature }) => {
        const { verifyWebhook } = await import(`${origin}/sdk/index.js`);
        const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': timestamp, 'webhook-signature': signature };
        const verdict = (b: string) =>
          verifyWebhook({ secret, headers, body: b }).then(
            (e: { id: string }) => e.id,
            (e: { reason: string }) => e.reason,
          );
        return [await verdict(body), await verdict(body.replace('ping', 'pong'))];
      },
      { origin, secret: `whsec_${secret.toString('base64')}`, body, timestamp, signature },
    );
    assert.deepEqual(verdicts, ['evt_1', 'invalid_signature']);

    // The browser logs every error answer it receives; the one 404 the page asked for is the only one.
    assert.deepEqual(
      watch.consoleErrors.filter((e) => !/status of 404 .*\/api\/v1\/users\//.test(e)),
      [],
    );
    assert.deepEqual(
      watch.requests.filter((url) => !url.startsWith(`${origin}/`)),
      [],
      'nothing leaves the page’s origin',
    );
    // The only error answer the page saw is the 404 it asked for.
    assert.deepEqual(
      watch.errorAnswers.map((a) => a.split(' ')[0]),
      ['404'],
    );
    await page.close();
  });
});
