import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as stationsRepo from '../src/modules/stations/repository.ts';
import { listen } from '../src/platform/db.ts';
import { assertProblem, BASE_URL, setupTestApp, type TestContext } from './helpers.ts';
import { ocpiLocation, ocpiTariff } from './stations-fixtures.ts';

let t: TestContext;
let token: string;
const LAT = 52.52;
const LON = 13.405;

before(async () => {
  t = await setupTestApp();
  ({ token } = await t.newClient());
  await t.ingestion.ingest({
    parties: [
      { country_code: 'DE', party_id: 'ABC', name: 'Alpha Charge', phone: '+49 30 1234567', website: null },
      { country_code: 'DE', party_id: 'PPW', name: 'Partner Power', phone: null, website: null },
    ],
    tariffs: [ocpiTariff('AC', 0.39), ocpiTariff('DC', 0.59, { flat: 0.5 }), ocpiTariff('PAC', 0.35, { party: 'PPW' })],
    locations: [
      // ~56 m north: AC, free, with amenities and opening hours
      ocpiLocation({
        id: 'A',
        lat: LAT + 0.0005,
        lon: LON,
        evses: [
          { kw: 22, tariff: 'AC' },
          { kw: 22, tariff: 'AC', status: 'CHARGING' },
        ],
        facilities: ['SUPERMARKET', 'WIFI', 'PARKING_LOT'],
        hours: [
          { weekday: 1, period_begin: '07:00', period_end: '22:00' },
          { weekday: 7, period_begin: '09:00', period_end: '18:00' },
        ],
      }),
      // ~89 m north: DC turbo, busy, CCS + CHAdeMO
      ocpiLocation({
        id: 'B',
        lat: LAT + 0.0008,
        lon: LON,
        evses: [{ kw: 150, standard: 'IEC_62196_T2_COMBO', status: 'CHARGING', tariff: 'DC', extraConnector: { standard: 'CHADEMO', kw: 50 } }],
      }),
      // ~222 m north: partner operator, out of order
      ocpiLocation({
        id: 'C',
        party: 'PPW',
        lat: LAT + 0.002,
        lon: LON,
        evses: [
          { kw: 11, tariff: 'PAC', status: 'OUTOFORDER' },
          { kw: 11, tariff: 'PAC', status: 'INOPERATIVE' },
        ],
      }),
      // ~1.1 km north: fast DC with no tariff (fallback), free, Tesla connector
      ocpiLocation({ id: 'D', lat: LAT + 0.01, lon: LON, evses: [{ kw: 75, standard: 'TESLA_S' }] }),
    ],
  });
  await stationsRepo.upsertPartner(t.db, { name: 'Partner Power', logo_url: 'https://cdn.example.com/pp.png' }, new Date());
  await t.catalogue.reload();
});
after(() => t.close());

const around = (query: string) => t.call('GET', `/api/v1/stations/around/?latitude=${LAT}&longitude=${LON}&${query}`, { token });
const names = (res: { body: { results: { name: string }[] } }) => res.body.results.map((s) => s.name);

describe('GET /stations/around/', () => {
  test('default radius is 100 m; nearest first, each with its distance in meters', async () => {
    const res = await around('');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(names(res), ['Station A', 'Station B']);
    assert.equal(res.body.count, 2);
    const [a, b] = res.body.results;
    assert.ok(Math.abs(a.distance - 55.6) < 1, String(a.distance));
    assert.ok(Math.abs(b.distance - 89) < 1, String(b.distance));
  });

  test('a larger radius finds more, still ordered by distance', async () => {
    const res = await around('distance=2000');
    assert.deepEqual(names(res), ['Station A', 'Station B', 'Station C', 'Station D']);
    const distances = res.body.results.map((s: { distance: number }) => s.distance);
    assert.deepEqual(
      distances,
      [...distances].sort((x, y) => x - y),
    );
  });

  test('connector_types filter: repeated, comma-separated, and the VENDOR_S alias', async () => {
    assert.deepEqual(names(await around('distance=2000&connector_types=CHADEMO')), ['Station B']);
    assert.deepEqual(names(await around('distance=2000&connector_types=CHADEMO&connector_types=TESLA_S')), ['Station B', 'Station D']);
    assert.deepEqual(names(await around('distance=2000&connector_types=CHADEMO,VENDOR_S')), ['Station B', 'Station D']);
  });

  test('only_available accepts true and 1', async () => {
    assert.deepEqual(names(await around('distance=2000&only_available=true')), ['Station A', 'Station D']);
    assert.deepEqual(names(await around('distance=2000&only_available=1')), ['Station A', 'Station D']);
    assert.deepEqual(names(await around('distance=2000&only_available=0')).length, 4);
  });

  test('only_partners and operators filters', async () => {
    assert.deepEqual(names(await around('distance=2000&only_partners=true')), ['Station C']);
    assert.deepEqual(names(await around('distance=2000&operators=partner%20power')), ['Station C']);
    assert.deepEqual(names(await around('distance=2000&operators=Alpha%20Charge,Nobody')), ['Station A', 'Station B', 'Station D']);
  });

  test('pagination keeps the query and links absolute', async () => {
    const first = await around('distance=2000&page_size=3&only_available=false');
    assert.equal(first.body.count, 4);
    assert.equal(first.body.results.length, 3);
    assert.ok(first.body.next.startsWith(`${BASE_URL}/api/v1/stations/around/?`));
    assert.match(first.body.next, /latitude=52\.52/);
    assert.match(first.body.next, /page=2/);
    const second = await t.call('GET', new URL(first.body.next).pathname + new URL(first.body.next).search, { token });
    assert.deepEqual(names(second), ['Station D']);
    assertProblem(await around('distance=2000&page_size=3&page=3'), 404, 'not_found');
  });

  test('bad input is 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      [`/api/v1/stations/around/?longitude=${LON}`, 'latitude'],
      [`/api/v1/stations/around/?latitude=91&longitude=${LON}`, 'latitude'],
      [`/api/v1/stations/around/?latitude=${LAT}&longitude=-181`, 'longitude'],
      [`/api/v1/stations/around/?latitude=abc&longitude=${LON}`, 'latitude'],
      [`/api/v1/stations/around/?latitude=${LAT}&longitude=${LON}&distance=0`, 'distance'],
      [`/api/v1/stations/around/?latitude=${LAT}&longitude=${LON}&distance=100001`, 'distance'],
      [`/api/v1/stations/around/?latitude=${LAT}&longitude=${LON}&distance=1.5`, 'distance'],
      [`/api/v1/stations/around/?latitude=${LAT}&longitude=${LON}&connector_types=USB_C`, 'connector_types.0'],
      [`/api/v1/stations/around/?latitude=${LAT}&longitude=${LON}&only_available=maybe`, 'only_available'],
      [`/api/v1/stations/around/?latitude=${LAT}&longitude=${LON}&page_size=101`, 'page_size'],
    ];
    for (const [url, field] of cases) {
      const res = await t.call('GET', url, { token });
      assertProblem(res, 400, 'validation_error');
      assert.ok(
        res.body.errors.some((e: { field: string }) => e.field === field),
        `${url}: ${JSON.stringify(res.body.errors)}`,
      );
    }
  });

  test('needs a token', async () => {
    assertProblem(await t.call('GET', `/api/v1/stations/around/?latitude=${LAT}&longitude=${LON}`), 401, 'unauthorized');
  });
});

describe('GET /stations/details/', () => {
  test('by station id and by EVSE id: the projection of the OCPI location', async () => {
    const a = (await around('')).body.results[0];
    const byId = await t.call('GET', `/api/v1/stations/details/?id=${a.id}&type=station_id`, { token });
    assert.equal(byId.status, 200, byId.text);
    const byEvse = await t.call('GET', '/api/v1/stations/details/?id=DE*ABC*EA1&type=evse_id', { token });
    assert.equal(byEvse.status, 200);
    assert.deepEqual(byEvse.body, byId.body);
    const s = byId.body;
    assert.equal(s.name, 'Station A');
    assert.equal(s.address, 'Street A, 10115 Berlin');
    assert.deepEqual(s.coordinates, { latitude: (LAT + 0.0005).toFixed(6), longitude: LON.toFixed(6) });
    assert.deepEqual(s.opening_times, {
      twentyfourseven: false,
      regular_hours: [
        { weekday: 'MONDAY', period_begin: '07:00', period_end: '22:00' },
        { weekday: 'SUNDAY', period_begin: '09:00', period_end: '18:00' },
      ],
    });
    assert.deepEqual(s.operator, { name: 'Alpha Charge', contact: { phone: '+49 30 1234567' } });
    assert.deepEqual(s.evses, [
      { evse_id: 'DE*ABC*EA1', status: 'AVAILABLE' },
      { evse_id: 'DE*ABC*EA2', status: 'CHARGING' },
    ]);
    assert.deepEqual(s.amenities, ['SUPERMARKET', 'WIFI'], 'PARKING_LOT is no amenity');
    assert.equal(s.status, 'free');
    assert.equal(s.speed, 'slow');
    assert.equal(s.is_partner, false);
    assert.equal(s.logo_url, undefined);
    assert.equal(s.price_groups.length, 1);
    assert.equal(s.price_groups[0].currency, 'EUR');
    assert.deepEqual(s.price_groups[0].evse_ids, ['DE*ABC*EA1', 'DE*ABC*EA2']);
    assert.equal(s.price_groups[0].is_fallback, false);
  });

  test('status and speed rules: busy turbo, error, fast; partner logo', async () => {
    const all = (await around('distance=2000')).body.results;
    const byName = new Map(all.map((s: { name: string }) => [s.name, s]));
    const b = byName.get('Station B') as { status: string; speed: string; price_groups: unknown[] };
    assert.equal(b.status, 'busy');
    assert.equal(b.speed, 'turbo');
    assert.equal(b.price_groups.length, 2, 'CCS 150 kW and CHAdeMO 50 kW are two groups');
    const c = byName.get('Station C') as { status: string; is_partner: boolean; logo_url: string; operator: { name: string } };
    assert.equal(c.status, 'error');
    assert.equal(c.is_partner, true);
    assert.equal(c.logo_url, 'https://cdn.example.com/pp.png');
    assert.equal(c.operator.name, 'Partner Power');
    const d = byName.get('Station D') as { speed: string; price_groups: { is_fallback: boolean }[] };
    assert.equal(d.speed, 'fast');
    assert.equal(d.price_groups[0]?.is_fallback, true);
  });

  test('unknown ids are 404; bad parameters 400', async () => {
    assertProblem(await t.call('GET', '/api/v1/stations/details/?id=DE*XXX*E1&type=evse_id', { token }), 404, 'not_found');
    assertProblem(await t.call('GET', '/api/v1/stations/details/?id=00000000-0000-4000-8000-000000000000&type=station_id', { token }), 404, 'not_found');
    assertProblem(await t.call('GET', '/api/v1/stations/details/?id=x', { token }), 400, 'validation_error');
    assertProblem(await t.call('GET', '/api/v1/stations/details/?id=x&type=location', { token }), 400, 'validation_error');
    assertProblem(await t.call('GET', '/api/v1/stations/details/?id=&type=evse_id', { token }), 400, 'validation_error');
  });
});

describe('GET /stations/partners/', () => {
  test('a plain array of partners', async () => {
    const res = await t.call('GET', '/api/v1/stations/partners/', { token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, [{ name: 'Partner Power', logo_url: 'https://cdn.example.com/pp.png' }]);
  });
});

describe('catalogue changes', () => {
  test('a re-ingested location replaces its EVSEs and shows after reload', async () => {
    await t.ingestion.ingest({
      locations: [
        {
          ...ocpiLocation({ id: 'A', lat: LAT + 0.0005, lon: LON, evses: [{ kw: 22, tariff: 'AC', status: 'OUTOFORDER' }] }),
          last_updated: '2026-02-01T00:00:00Z',
        },
      ],
    });
    await t.catalogue.reload();
    const res = await t.call('GET', '/api/v1/stations/details/?id=DE*ABC*EA1&type=evse_id', { token });
    assert.equal(res.body.status, 'error');
    assert.equal(res.body.evses.length, 1);
    assertProblem(await t.call('GET', '/api/v1/stations/details/?id=DE*ABC*EA2&type=evse_id', { token }), 404, 'not_found');
  });

  test('an older copy of a location does not overwrite a newer one', async () => {
    await t.ingestion.ingest({ locations: [ocpiLocation({ id: 'A', lat: LAT + 0.0005, lon: LON, evses: [{ status: 'AVAILABLE' }] })] });
    await t.catalogue.reload();
    const res = await t.call('GET', '/api/v1/stations/details/?id=DE*ABC*EA1&type=evse_id', { token });
    assert.equal(res.body.status, 'error');
  });

  test('invalid OCPI objects are rejected whole, naming the field', async () => {
    const bad = { ...ocpiLocation({ id: 'Z', lat: 1, lon: 1 }), coordinates: { latitude: '91', longitude: 'x' } };
    await assert.rejects(t.ingestion.ingest({ locations: [ocpiLocation({ id: 'Y', lat: 1, lon: 1 }), bad] }), /invalid OCPI Location Z: \/coordinates/);
    const { rows } = await t.db.query("SELECT count(*)::int AS n FROM ocpi_locations WHERE id IN ('Y', 'Z')");
    assert.equal(rows[0]?.n, 0);
  });
});

describe('EVSE status changes', () => {
  test('reach around/details through the change channel within 1 s, in place, and tiles after their cache', async () => {
    const listener = listen(t.db, stationsRepo.CATALOGUE_CHANNEL, (payload) => void t.catalogue.onChange(payload));
    try {
      await new Promise((r) => setTimeout(r, 100)); // LISTEN is in place
      const before = await t.call('GET', '/api/v1/stations/details/?id=DE*ABC*EB1&type=evse_id', { token });
      assert.equal(before.body.status, 'busy');
      const started = performance.now();
      const changed = await t.ingestion.updateEvseStatus({
        country_code: 'DE',
        party_id: 'ABC',
        location_id: 'B',
        uid: 'B-1',
        status: 'AVAILABLE',
        last_updated: '2026-03-01T00:00:00Z',
      });
      assert.equal(changed, true);
      let status = '';
      while (performance.now() - started < 1_000) {
        status = (await t.call('GET', '/api/v1/stations/details/?id=DE*ABC*EB1&type=evse_id', { token })).body.status;
        if (status === 'free') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(status, 'free', 'visible within 1 s');
      assert.equal(
        (await around('distance=2000&only_available=true')).body.results.some((s: { name: string }) => s.name === 'Station B'),
        true,
      );
      // An older status does not win over a newer one.
      assert.equal(
        await t.ingestion.updateEvseStatus({
          country_code: 'DE',
          party_id: 'ABC',
          location_id: 'B',
          uid: 'B-1',
          status: 'CHARGING',
          last_updated: '2026-02-01T00:00:00Z',
        }),
        false,
      );
      // Unknown EVSEs and statuses are refused or ignored.
      assert.equal(
        await t.ingestion.updateEvseStatus({
          country_code: 'DE',
          party_id: 'ABC',
          location_id: 'B',
          uid: 'nope',
          status: 'CHARGING',
          last_updated: '2026-04-01T00:00:00Z',
        }),
        false,
      );
      await assert.rejects(
        t.ingestion.updateEvseStatus({
          country_code: 'DE',
          party_id: 'ABC',
          location_id: 'B',
          uid: 'B-1',
          status: 'PARTY',
          last_updated: '2026-04-01T00:00:00Z',
        }),
        /status/,
      );
    } finally {
      await listener.stop();
    }
  });
});
