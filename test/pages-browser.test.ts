// Our HTML pages in a real browser under their Content Security Policies:
// the API reference (/docs) renders the operations of our OpenAPI document
// (client API and OCPI apart) with nothing that needs the internet,
// and the payment sandbox's hosted page (/sandbox/) confirms a card with a
// 3-D Secure challenge by clicks; neither has a CSP violation or a console
// error, and neither loads anything from elsewhere.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { freePort } from '../src/platform/free-port.ts';
import { browserMissing, launchBrowser, watchPage } from './browser-support.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { CARDS, eventually, listMethods, newOwner, setupIntent } from './payments-support.ts';

const missing = browserMissing();
const ARTEFACTS = path.resolve(import.meta.dirname, '..', '.tmp', 'browser');

describe('our pages in a real browser', { skip: missing }, () => {
  let ctx: TestContext;
  let browser: Browser;

  before(async () => {
    ctx = await setupTestApp({ listen: 0, payments: { webhooks: true } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await ctx?.close();
  });

  it('/docs, opened on localhost as a developer does: every tag and group, nothing that needs the internet, no console error, no request leaving the machine', async () => {
    // Its own app, whose public address is localhost (Scalar shows its toolbar and developer tools there by default).
    const port = await freePort();
    const docs = await setupTestApp({ listen: port, env: { PUBLIC_BASE_URL: `http://localhost:${port}` } });
    try {
      const base = `http://localhost:${port}`;
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const watch = watchPage(page);
      const res = await page.goto(`${base}/docs/`, { waitUntil: 'networkidle' });
      assert.equal(res?.status(), 200);
      assert.match(String(res?.headers()['content-security-policy']), /script-src 'self' 'sha256-/);

      // Rendered from the document, not just a shell: the title, every tag and every sidebar group appear.
      const spec = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as {
        info: { title: string };
        tags: { name: string }[];
        'x-tagGroups': { name: string }[];
        paths: Record<string, Record<string, { summary?: string; tags?: string[] }>>;
      };
      await page.getByText(spec.info.title).first().waitFor({ timeout: 20_000 });
      const text = await page.locator('body').innerText();
      for (const { name } of [...spec.tags, ...spec['x-tagGroups']]) assert.ok(text.includes(name), `"${name}" is listed`);
      // A group opens on a click and shows its operations, rendered by the reference's own script: the client API, and OCPI apart.
      for (const tag of ['Charging', 'OCPI 2.2.1']) {
        await page
          .getByRole('button', { name: `Open Group - ${tag}` })
          .first()
          .click();
        const summaries = Object.values(spec.paths).flatMap((ops) => Object.values(ops).filter((o) => o.tags?.[0] === tag && o.summary));
        assert.ok(summaries.length > 3, tag);
        for (const o of summaries)
          await page
            .getByText(o.summary as string, { exact: true })
            .first()
            .waitFor({ timeout: 10_000 });
      }

      // Nothing that needs the internet: no hosted AI, MCP, developer tools, deploy or "open in client" button, no link elsewhere.
      const buttons = await page.getByRole('button').allInnerTexts();
      const hosted = buttons.filter((b) => /ask ai|mcp|developer tools|deploy|open in|share|sign in|log in|register|upgrade/i.test(b));
      assert.deepEqual(hosted, [], 'no button of a hosted service');
      const links = await page.locator('a[href]').evaluateAll((as) => as.map((a) => (a as unknown as { href: string }).href));
      const visible: string[] = [];
      for (const [i, href] of links.entries()) if (!href.startsWith(base) && (await page.locator('a[href]').nth(i).isVisible())) visible.push(href);
      assert.deepEqual(visible, [], 'no visible link leaves the machine');

      // "Test Request" sends to this service, not through a proxy elsewhere.
      await mkdir(ARTEFACTS, { recursive: true });
      await page.getByRole('button', { name: 'Open Group - Health' }).first().click();
      await page.getByText('Liveness', { exact: true }).first().click();
      await page
        .getByRole('button', { name: /Test Request.*get \/healthz/ })
        .first()
        .click({ timeout: 10_000 });
      await page.getByRole('button', { name: /^Send/ }).first().click();
      await page.getByText('"ok"').first().waitFor({ timeout: 10_000 });

      await mkdir(ARTEFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTEFACTS, 'docs.png'), fullPage: false });
      await writeFile(path.join(ARTEFACTS, 'docs-requests.txt'), `${watch.requests.join('\n')}\n`);

      assert.ok(
        watch.requests.some((url) => url === `${base}/healthz`),
        'the test request reached the service',
      );
      assert.deepEqual(watch.errorAnswers, [], 'no answer with an error status');
      assert.deepEqual(watch.cspViolations, [], 'no CSP violation');
      assert.deepEqual(watch.consoleErrors, [], 'no console error');
      assert.deepEqual(watch.failedRequests, [], 'no failed request');
      const elsewhere = watch.requests.filter((url) => !url.startsWith(base) && !url.startsWith('data:') && !url.startsWith('blob:'));
      assert.deepEqual(elsewhere, [], 'no request leaves the machine (fonts, telemetry, a proxy)');
      const fonts = await page.evaluate(() => (globalThis as unknown as { document: { fonts: { size: number } } }).document.fonts.size);
      assert.equal(fonts, 0, 'no web font');
      await page.close();
    } finally {
      await docs.close();
    }
  });

  it('/sandbox/ confirms a card that asks for 3-D Secure: loaded from the link, confirmed and authenticated by clicks; the card reaches the user', async () => {
    const base = ctx.address as string;
    const owner = await newOwner(ctx);
    const intent = await setupIntent(ctx, owner);
    const page = await browser.newPage();
    const watch = watchPage(page);
    const res = await page.goto(`${base}/sandbox/?setup_intent=${intent.id}&client_secret=${encodeURIComponent(intent.client_secret)}`);
    assert.equal(res?.status(), 200);
    assert.match(String(res?.headers()['content-security-policy']), /script-src 'nonce-/);
    const out = page.locator('#out');
    const outcome = page.locator('#outcome');
    // The page's own script read the link and showed the intent; each answer in plain words above the raw object.
    await page.locator('#out', { hasText: 'requires_payment_method' }).waitFor({ timeout: 10_000 });
    assert.equal(await outcome.textContent(), 'Waiting for a payment method: confirm with a card or PayPal');
    await page.fill('#card', CARDS.authenticateOnSetup);
    await page.click('#confirmCard');
    await page.locator('#out', { hasText: 'requires_action' }).waitFor({ timeout: 10_000 });
    assert.equal(await outcome.textContent(), 'Authentication required: complete or fail the 3-D Secure challenge below');
    await page.click('#authApprove');
    await page.locator('#out', { hasText: '"succeeded"' }).waitFor({ timeout: 10_000 });
    assert.equal(await outcome.textContent(), 'Card saved');
    const [line, raw] = [await outcome.boundingBox(), await out.boundingBox()];
    assert.ok(line && raw && line.height > 0 && line.y + line.height <= raw.y, 'the outcome line is shown above the raw object');
    const answer = JSON.parse(((await out.textContent()) ?? '').split('\n').slice(1).join('\n')) as { payment_method: string };
    await mkdir(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTEFACTS, 'sandbox-confirmed.png'), fullPage: true });
    // The processor's webhook told the service: the card is the user's.
    await eventually(
      async () => ((await listMethods(ctx, owner)).results.some((m) => m.id === answer.payment_method) ? true : undefined),
      'the card is listed',
    );

    assert.deepEqual(watch.errorAnswers, [], 'no answer with an error status');
    assert.deepEqual(watch.cspViolations, [], 'no CSP violation');
    assert.deepEqual(watch.consoleErrors, [], 'no console error');
    assert.deepEqual(watch.failedRequests, [], 'no failed request');
    const origin = new URL(base).origin;
    assert.deepEqual(
      watch.requests.filter((url) => !url.startsWith(origin)),
      [],
      'no request leaves the origin',
    );
    await page.close();
  });

  it('/sandbox/ says in plain words when authentication fails and when a card is declined', async () => {
    const base = ctx.address as string;
    const owner = await newOwner(ctx);
    const page = await browser.newPage();
    const watch = watchPage(page);
    const outcome = page.locator('#outcome');

    const challenged = await setupIntent(ctx, owner);
    await page.goto(`${base}/sandbox/?setup_intent=${challenged.id}&client_secret=${encodeURIComponent(challenged.client_secret)}`);
    await page.locator('#out', { hasText: 'requires_payment_method' }).waitFor({ timeout: 10_000 });
    await page.fill('#card', CARDS.authenticateOnSetup);
    await page.click('#confirmCard');
    await page.locator('#out', { hasText: 'requires_action' }).waitFor({ timeout: 10_000 });
    await page.click('#authFail');
    await page.locator('#out', { hasText: 'setup_intent_authentication_failure' }).waitFor({ timeout: 10_000 });
    assert.match((await outcome.textContent()) ?? '', /^Authentication failed: .*authentication failed/);
    assert.equal(await outcome.getAttribute('class'), 'bad');

    const declined = await setupIntent(ctx, owner);
    await page.goto(`${base}/sandbox/?setup_intent=${declined.id}&client_secret=${encodeURIComponent(declined.client_secret)}`);
    await page.locator('#out', { hasText: 'requires_payment_method' }).waitFor({ timeout: 10_000 });
    await page.fill('#card', CARDS.declined);
    await page.click('#confirmCard');
    await page.locator('#out', { hasText: 'card_declined' }).waitFor({ timeout: 10_000 });
    assert.equal(await outcome.textContent(), 'Card declined: Your card was declined.');
    await mkdir(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTEFACTS, 'sandbox-declined.png'), fullPage: true });

    assert.deepEqual(watch.cspViolations, [], 'no CSP violation');
    assert.deepEqual(
      watch.consoleErrors.filter((e) => !/402/.test(e)),
      [],
      "no console error but the declined card's 402",
    );
    await page.close();
  });
});
