// Readiness: /readyz is 200 only once start-up is done (the station catalogue
// loaded) and the database answers; until then station answers are 503 with
// Retry-After instead of empty results, while the rest of the API serves. A
// catalogue reload that fails keeps the snapshot being served.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCatalogue } from '../src/modules/stations/catalogue.ts';
import { createDatabase } from '../src/platform/db.ts';
import { CATALOGUE_PART, createReadiness } from '../src/platform/readiness.ts';
import { assertProblem, setupTestApp, type TestContext } from './helpers.ts';
import { ocpiLocation } from './stations-fixtures.ts';

const readiness = createReadiness();
const catalogueLoaded = readiness.waitFor(CATALOGUE_PART);
let t: TestContext;
let token: string;

before(async () => {
  t = await setupTestApp({ readiness });
  ({ token } = await t.newClient());
  await t.ingestion.ingest({ locations: [ocpiLocation({ id: 'R1', lat: 52.52, lon: 13.405, evses: [{ status: 'AVAILABLE' }] })] });
});
after(() => t.close());

describe('while the station catalogue loads', () => {
  test('/readyz is 503 starting and names what it waits for', async () => {
    const res = await t.call('GET', '/readyz');
    assert.equal(res.status, 503);
    assert.deepEqual(res.body, { status: 'starting', waiting_for: ['station catalogue'] });
    assert.equal(res.headers['retry-after'], '5');
  });

  test('station routes answer 503 service_unavailable with Retry-After, never an empty result', async () => {
    for (const url of [
      '/api/v1/stations/around/?latitude=52.52&longitude=13.405&distance=1000',
      '/api/v1/stations/tile/?x=550&y=335&z=10',
      '/api/v1/stations/partners/',
    ]) {
      const res = await t.call('GET', url, { token });
      assertProblem(res, 503, 'service_unavailable');
      assert.equal(res.headers['retry-after'], '5', url);
    }
  });

  test('station routes still authenticate first (401 without a token)', async () => {
    const res = await t.call('GET', '/api/v1/stations/partners/');
    assertProblem(res, 401, 'unauthorized');
  });

  test('the rest of the API serves', async () => {
    const res = await t.call('GET', '/api/v1/users/', { token });
    assert.equal(res.status, 200);
  });

  test('what reads the catalogue elsewhere (the EVSE of a charging start) is 503 too, not "no such EVSE"', () => {
    assert.throws(
      () => t.catalogue.evse('DE*ABC*E1'),
      (error: Error & { code?: string; status?: number }) => error.code === 'service_unavailable' && error.status === 503,
    );
  });
});

describe('once it is loaded', () => {
  before(async () => {
    await t.catalogue.reload();
    catalogueLoaded();
  });

  test('/readyz is 200 ready and stations are served', async () => {
    const ready = await t.call('GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ready' });
    const around = await t.call('GET', '/api/v1/stations/around/?latitude=52.52&longitude=13.405&distance=1000', { token });
    assert.equal(around.status, 200, around.text);
    assert.equal(around.body.count, 1);
  });
});

describe('a catalogue reload that fails', () => {
  test('keeps serving the previous snapshot', async () => {
    const own = createDatabase(t.db.pool.options.connectionString as string, { max: 2 });
    const catalogue = createCatalogue({ db: own, clock: t.clock });
    await catalogue.reload();
    assert.equal(catalogue.inspect().size, 1);
    await own.close();
    await assert.rejects(catalogue.reload());
    await assert.rejects(catalogue.onChange(undefined));
    assert.equal(catalogue.inspect().size, 1, 'the snapshot loaded before is still served');
  });
});
