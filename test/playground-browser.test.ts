// The playground in a real browser, served by the real service (`node src/main.ts` in development, with its
// sandbox CPO network and payment sandbox) on a test database: a driver's click path from the map to an invoice
// (clusters expanding on click down to the scenario station, its panel, a card confirmed on the payment sandbox's
// page, a start, live energy and cost from the event stream, a stop, the invoice's PDF), with screenshots kept
// in .tmp/browser/; and a page that logs no console error and sends no request anywhere but the service.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type ServiceProcess, startServiceProcess } from '../bench/service-process.ts';
import { browserMissing, launchBrowser, watchPage } from './browser-support.ts';
import { createTestDatabase } from './helpers.ts';
import { eventually } from './payments-support.ts';

const missing = browserMissing();
const ARTEFACTS = path.resolve(import.meta.dirname, '..', '.tmp', 'browser');
const SCENARIO_EVSE = 'DE*HHC*ESCN*NORMAL';

/** Web-Mercator position in world pixels at zoom z (256 px tiles), as Leaflet places markers. */
function worldPixel(lat: number, lon: number, z: number): { x: number; y: number } {
  const size = 256 * 2 ** z;
  const sin = Math.sin((lat * Math.PI) / 180);
  return { x: ((lon + 180) / 360) * size, y: (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * size };
}

/** The map's view as the page keeps it in the address: #zoom/latitude/longitude. */
async function viewOf(page: Page): Promise<{ zoom: number; lat: number; lon: number }> {
  const [zoom, lat, lon] = new URL(page.url()).hash.slice(1).split('/').map(Number);
  return { zoom: zoom as number, lat: lat as number, lon: lon as number };
}

const drawCount = async (page: Page) => Number((await page.locator('#map').getAttribute('data-loaded')) ?? '0');

/** Waits until the stations layer has drawn more times than `before` (after a move or a filter change). */
async function drawnAfter(page: Page, before: number): Promise<void> {
  // Polled from here: the page's policy forbids evaluating strings in it (page.waitForFunction with an expression).
  await eventually(async () => ((await drawCount(page)) > before ? true : undefined), `the stations drawn again (after ${before})`, 15_000);
}

describe('the playground in a real browser', { skip: missing, timeout: 240_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let service: ServiceProcess;
  let browser: Browser;
  let demoToken: string;
  let station: { id: string; name: string; latitude: number; longitude: number };

  before(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-playground-'));
    service = await startServiceProcess({
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      CPO_SANDBOX: 'true',
      CPO_SANDBOX_PORT: '0',
      STRIPE_SANDBOX_PORT: '0',
      STATIONS_DEFAULT_LOCATIONS: '400',
      // Live progress once a second (the default, 30 s, is longer than this whole test's session).
      EVENTS_PROGRESS_INTERVAL_MS: '1000',
    });
    browser = await launchBrowser();
    // The ready banner (printed just after /readyz turns 200) points to it.
    await eventually(
      async () => (/Playground: https:\/\/localhost:\d+\/playground\/ /.test(service.output.join('')) ? true : undefined),
      'the banner names the playground',
    );
    demoToken = (await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim();
    const res = await fetch(`${service.base}/api/v1/stations/details/?type=evse_id&id=${encodeURIComponent(SCENARIO_EVSE)}`, {
      headers: { authorization: `Bearer ${demoToken}` },
    });
    const details = (await res.json()) as { id: string; name: string; coordinates: { latitude: string; longitude: string } };
    station = { id: details.id, name: details.name, latitude: Number(details.coordinates.latitude), longitude: Number(details.coordinates.longitude) };
    await mkdir(ARTEFACTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    await rm(dataDir, { recursive: true, force: true });
    await database?.drop();
  });

  it('map -> cluster -> station -> card on the payment sandbox -> start -> live energy and cost -> stop -> invoice PDF', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const watch = watchPage(page);
    const authorizations = new Set<string>();
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/v1/')) authorizations.add(request.headers().authorization ?? '');
    });

    await page.goto(`${service.base}/playground/#5/${station.latitude}/${station.longitude}`);
    await drawnAfter(page, 0);
    await page.locator('#user-id').waitFor({ timeout: 15_000 });
    await page.screenshot({ path: path.join(ARTEFACTS, 'playground-1-map.png') });

    // Down to the station through its clusters: each click zooms to the cluster's expansion zoom.
    const marker = page.locator(`[data-station-id="${station.id}"]`);
    let clusterClicks = 0;
    while (!(await marker.isVisible())) {
      assert.ok(clusterClicks < 20, 'the station shows within 20 cluster clicks');
      const view = await viewOf(page);
      const box = (await page.locator('#map').boundingBox()) as { x: number; y: number; width: number; height: number };
      const [target, centre] = [worldPixel(station.latitude, station.longitude, view.zoom), worldPixel(view.lat, view.lon, view.zoom)];
      const at = { x: box.x + box.width / 2 + target.x - centre.x, y: box.y + box.height / 2 + target.y - centre.y };
      // The cluster holding the station is the one drawn nearest to it.
      const clusters = await page.locator('.cluster').all();
      let nearest: { cluster: (typeof clusters)[number]; distance: number } | undefined;
      for (const cluster of clusters) {
        const b = await cluster.boundingBox();
        if (!b) continue;
        const distance = Math.hypot(b.x + b.width / 2 - at.x, b.y + b.height / 2 - at.y);
        if (!nearest || distance < nearest.distance) nearest = { cluster, distance };
      }
      assert.ok(nearest, `a cluster near the station at zoom ${view.zoom}`);
      const drawn = await drawCount(page);
      // By keyboard (focus, Enter: the markers are buttons), as a neighbouring cluster drawn over it would take a mouse click.
      await nearest.cluster.press('Enter');
      await drawnAfter(page, drawn);
      clusterClicks++;
      assert.ok((await viewOf(page)).zoom > view.zoom, 'a cluster click zooms in');
    }
    assert.ok(clusterClicks >= 1, 'the station was reached through at least one cluster');
    await marker.click();
    const panel = page.locator('#station');
    await page.locator('#station-name', { hasText: station.name }).waitFor({ timeout: 10_000 });
    const panelText = await panel.innerText();
    // Price groups in plain words: what energy costs, that VAT is in, what is held on the card.
    assert.match(panelText, /Energy: .*\d\.\d\d EUR per kWh/);
    assert.match(panelText, /Prices include VAT \(\d+ %\)/);
    assert.match(panelText, /When you start, \d+\.\d\d EUR is held on your card/);
    assert.match(await page.locator('#cannot-start').innerText(), /Add a card first/);
    await page.screenshot({ path: path.join(ARTEFACTS, 'playground-2-station.png') });

    // A card through the payment sandbox's page, opened in a new tab; the playground sees it arrive.
    const [sandbox] = await Promise.all([context.waitForEvent('page'), page.click('#add-card')]);
    await sandbox.locator('#out', { hasText: 'requires_payment_method' }).waitFor({ timeout: 10_000 });
    await sandbox.fill('#card', '4242424242424242');
    await sandbox.click('#confirmCard');
    await sandbox.locator('#outcome', { hasText: 'Card saved' }).waitFor({ timeout: 10_000 });
    await sandbox.close();
    await page.locator('#payment-methods', { hasText: '4242' }).waitFor({ timeout: 20_000 });

    // Start on the scenario EVSE that charges normally; energy and cost grow live from the event stream.
    const start = page.locator(`button[data-evse-id="${SCENARIO_EVSE}"]`);
    await start.waitFor({ state: 'visible' });
    await page.locator(`button[data-evse-id="${SCENARIO_EVSE}"]:not([disabled])`).waitFor({ timeout: 10_000 });
    await start.click();
    const status = page.locator('#session-status');
    await page.locator('#session-status[data-status="active"]').waitFor({ timeout: 20_000 });
    const energy = async () => Number.parseFloat(await page.locator('#session-energy').innerText());
    const energyAbove = (kwh: number) => eventually(async () => ((await energy()) > kwh ? true : undefined), `energy above ${kwh} kWh`, 20_000);
    await energyAbove(0);
    const first = await energy();
    await energyAbove(first);
    assert.ok((await energy()) > first, 'the energy grows while charging');
    assert.match(await page.locator('#session-cost').innerText(), /^\d+\.\d\d EUR$/);
    await page.screenshot({ path: path.join(ARTEFACTS, 'playground-3-charging.png') });
    // Nothing lost on a reload: the same user, its card, and the running session, followed live again.
    const userId = await page.locator('#user-id').innerText();
    const before = await energy();
    await page.reload();
    await page.locator('#session-status[data-status="active"]').waitFor({ timeout: 20_000 });
    assert.equal(await page.locator('#user-id').innerText(), userId);
    await page.locator('#payment-methods', { hasText: '4242' }).waitFor();
    await energyAbove(before);

    await page.click('#stop');
    await page.locator('#session-status[data-status="completed"]').waitFor({ timeout: 30_000 });
    assert.equal(await status.innerText(), 'Completed');
    const invoice = page.locator('#invoice-link');
    await invoice.waitFor({ timeout: 30_000 });
    assert.match(await invoice.innerText(), /^Invoice [A-Z0-9-]+ \(\d+\.\d\d EUR, PDF\)$/);
    await page.screenshot({ path: path.join(ARTEFACTS, 'playground-4-invoice.png') });
    // The link opens the invoice in a new tab; the document there is the PDF (read again here: the browser's PDF viewer shows it, not its bytes).
    const href = (await invoice.getAttribute('href')) as string;
    const [pdf] = await Promise.all([context.waitForEvent('response', (r) => r.url() === href), invoice.click()]);
    assert.equal(pdf.status(), 200);
    assert.equal(pdf.headers()['content-type'], 'application/pdf');
    const bytes = await (await context.request.get(href)).body();
    assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
    // The page called the API with its own short-lived token, never the demo client's.
    assert.deepEqual(
      [...authorizations].filter((a) => a === `Bearer ${demoToken}` || !a.startsWith('Bearer ')),
      [],
    );
    assert.deepEqual(watch.consoleErrors, [], 'no console error');
    assert.deepEqual(watch.errorAnswers, [], 'no answer with an error status');
    await context.close();
  });

  it('has no console error, and no request leaves the machine: every request goes to the service', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    const watch = watchPage(page);
    await page.goto(`${service.base}/playground/`, { waitUntil: 'networkidle' });
    await drawnAfter(page, 0);
    // Filters, a cluster opened, a station's panel: the page's other requests. The filters reach the tile endpoint as it takes them.
    const tiles: URL[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/v1/stations/tile/') tiles.push(url);
    });
    let drawn = await drawCount(page);
    await page.check('#f-available');
    await page.check('#f-power-turbo');
    await page.check('#f-power-fast');
    await page.selectOption('#f-connectors', ['IEC_62196_T2_COMBO', 'CHADEMO']);
    await page.fill('#f-max-price', '0,80');
    await page.press('#f-max-price', 'Enter');
    await eventually(async () => (tiles.at(-1)?.searchParams.get('max_price') === '0.8' ? true : undefined), 'a tile request with every filter');
    const query = (tiles.at(-1) as URL).searchParams;
    assert.equal(query.get('only_available'), 'true');
    assert.deepEqual(query.getAll('power_groups'), ['fast', 'turbo']);
    assert.deepEqual(query.getAll('connector_types'), ['IEC_62196_T2_COMBO', 'CHADEMO']);
    assert.equal(query.getAll('x').length, query.getAll('y').length);
    await page.fill('#f-max-price', 'cheap');
    await page.press('#f-max-price', 'Enter');
    assert.equal(await page.locator('#f-max-price-error').innerText(), 'Max price: must be a number of at least 0, such as 0.60');
    const requested = tiles.length;
    await page.fill('#f-max-price', '');
    await page.press('#f-max-price', 'Enter');
    await eventually(async () => (tiles.length > requested ? true : undefined), 'the map drawn again without a max price');
    assert.equal((tiles.at(-1) as URL).searchParams.get('max_price'), null);
    assert.equal(await page.locator('#f-max-price-error').innerText(), '');
    drawn = await drawCount(page);
    await page.locator('.cluster').first().press('Enter');
    await drawnAfter(page, drawn);
    await page.locator('.station').first().press('Enter');
    await page.locator('#station-name').waitFor({ timeout: 10_000 });
    await page.locator('#user-id').waitFor({ timeout: 15_000 });
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: path.join(ARTEFACTS, 'playground-clean.png') });

    assert.ok(watch.requests.length > 5, `requests: ${watch.requests.join(', ')}`);
    const origin = new URL(service.base).origin;
    const elsewhere = watch.requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
    assert.deepEqual(elsewhere, [], 'every request goes to the service');
    assert.deepEqual(watch.consoleErrors, [], 'no console error');
    assert.deepEqual(watch.cspViolations, [], 'no CSP violation');
    // A tile request the page cancelled itself (a newer filter superseded it) is not a failure.
    assert.deepEqual(
      watch.failedRequests.filter((failure) => !failure.endsWith('net::ERR_ABORTED')),
      [],
      'no failed request',
    );
    assert.deepEqual(watch.errorAnswers, [], 'no answer with an error status');
    await context.close();
  });
});
