// Stations as the API writes them. The catalogue writes answers as JSON text
// from a compact snapshot (no response serializer runs), so these tests check
// (1) every station the API shows against a reference projection recomputed
// here from the OCPI objects that were ingested (price groups by the pure
// derivePriceGroups, itself tested exhaustively), and (2) every around,
// details and tile answer against the route's documented schema, with no
// property missing or added.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import v8 from 'node:v8';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { type TSchema, Type } from 'typebox';
import { generateCatalogue } from '../src/dataset/generator.ts';
import { DEFAULT_PRICING, type Station } from '../src/modules/stations/catalogue.ts';
import { loadGeneratedCatalogue } from '../src/modules/stations/loader.ts';
import * as stationsRepo from '../src/modules/stations/repository.ts';
import { StationAroundSchema, StationSchema, TileResponseSchema } from '../src/modules/stations/schemas.ts';
import type { OcpiLocation, OcpiTariff } from '../src/ocpi-protocol/locations-tariffs.ts';
import { PageOf } from '../src/platform/http/pagination.ts';
import { pricingFor } from '../src/pricing/country-pricing.ts';
import { connectorPowerKw, derivePriceGroups } from '../src/pricing/price-groups.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { ocpiLocation, ocpiTariff } from './stations-fixtures.ts';

let t: TestContext;
let token: string;
const locations = new Map<string, OcpiLocation>(); // by country_code*party_id*id
const tariffs = new Map<string, OcpiTariff>();
const parties = new Map<string, { name: string; phone: string | null }>();
const partners = new Map<string, string>(); // lower-cased name -> logo

const key = (cc: string, pid: string, id: string) => `${cc}*${pid}*${id}`;
const LAT = 48.1372;
const LON = 11.5755;
const NOW = new Date('2026-06-01T10:00:00Z');
const EXPIRES = '2026-06-01T12:00:00Z';

// Hand-made edge cases beside the generated catalogue (party EDG, around Munich centre).
const handMade: OcpiLocation[] = [
  // A REMOVED EVSE (left out everywhere) and an EVSE without evse_id (its uid shows).
  (() => {
    const l = ocpiLocation({
      id: 'R',
      party: 'EDG',
      lat: LAT,
      lon: LON,
      evses: [{ kw: 22, tariff: 'T1' }, { kw: 22, tariff: 'T1', status: 'REMOVED' }, { kw: 50 }],
    });
    delete ((l.evses ?? [])[2] as { evse_id?: string }).evse_id;
    return l;
  })(),
  // Names that need escaping, a non-ASCII address, a later EVSE last_updated.
  (() => {
    const l = ocpiLocation({ id: 'Q', party: 'EDG', lat: LAT + 0.0003, lon: LON, operator: 'Straße "Quote" \\ Power', name: 'Zürich "Nord"\u2028' });
    l.address = 'Müllerstraße 5 – Hof';
    (l.evses?.[0] as { last_updated: string }).last_updated = '2026-03-04T05:06:07.890Z';
    return l;
  })(),
  // A tariff that ends at EXPIRES, then another of the same connector applies.
  (() => {
    const l = ocpiLocation({ id: 'X', party: 'EDG', lat: LAT - 0.0003, lon: LON, evses: [{ kw: 11, tariff: 'SOON' }] });
    (l.evses?.[0]?.connectors[0] as { tariff_ids: string[] }).tariff_ids = ['SOON', 'T1'];
    return l;
  })(),
];
const handMadeTariffs: OcpiTariff[] = [
  ocpiTariff('T1', 0.42, { party: 'EDG' }),
  { ...ocpiTariff('SOON', 0.29, { party: 'EDG', flat: 1 }), end_date_time: EXPIRES },
];

before(async () => {
  t = await setupTestApp();
  t.clock.set(NOW);
  ({ token } = await t.newClient());
  const options = { locations: 1_500, seed: 7 };
  await loadGeneratedCatalogue(t.ingestion, options);
  const generated = generateCatalogue(options);
  for (const p of generated.parties) parties.set(`${p.country_code}*${p.party_id}`, { name: p.name, phone: p.phone });
  for (const tariff of [...generated.tariffs, ...handMadeTariffs]) tariffs.set(key(tariff.country_code, tariff.party_id, tariff.id), tariff);
  for (const batch of generated.locations()) for (const l of batch) locations.set(key(l.country_code, l.party_id, l.id), l);
  await t.ingestion.ingest({
    parties: [{ country_code: 'DE', party_id: 'EDG', name: 'Edge Energy', phone: '+49 89 000', website: null }],
    tariffs: handMadeTariffs,
    locations: handMade,
  });
  parties.set('DE*EDG', { name: 'Edge Energy', phone: '+49 89 000' });
  for (const l of handMade) locations.set(key(l.country_code, l.party_id, l.id), l);
  for (const [name, logo] of [
    [generated.parties[0]?.name as string, 'https://cdn.example.com/a.png'],
    ['Straße "Quote" \\ Power', 'https://cdn.example.com/q.png'],
  ] as const) {
    await stationsRepo.upsertPartner(t.db, { name, logo_url: logo }, NOW);
    partners.set(name.toLowerCase(), logo);
  }
  await t.catalogue.reload();
});
after(() => t.close());

// ---------------------------------------------------------------------------
// Reference projection, from the OCPI objects themselves.

const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];
const AMENITY = new Set(['HOTEL', 'RESTAURANT', 'CAFE', 'MALL', 'SUPERMARKET', 'SPORT', 'RECREATION_AREA', 'NATURE', 'MUSEUM', 'BUS_STOP', 'TAXI_STAND']);
for (const a of ['TRAIN_STATION', 'AIRPORT', 'CARPOOL_PARKING', 'FUEL_STATION', 'WIFI']) AMENITY.add(a);

function reference(l: OcpiLocation, stationId: string, now: Date): Station {
  const live = (l.evses ?? []).filter((e) => e.status !== 'REMOVED');
  const statuses = live.map((e) => e.status);
  const status = statuses.includes('AVAILABLE')
    ? 'free'
    : statuses.some((s) => ['CHARGING', 'BLOCKED', 'RESERVED'].includes(s))
      ? 'busy'
      : statuses.length > 0 && statuses.every((s) => s === 'OUTOFORDER' || s === 'INOPERATIVE')
        ? 'error'
        : 'unknown';
  const power = Math.max(0, ...live.flatMap((e) => e.connectors.map(connectorPowerKw)));
  const party = parties.get(`${l.country_code}*${l.party_id}`);
  const operator = l.operator?.name ?? party?.name ?? `${l.country_code}*${l.party_id}`;
  const logo = partners.get(operator.toLowerCase());
  const stamps = [l.last_updated, ...(l.evses ?? []).map((e) => e.last_updated)].map((s) => Date.parse(s));
  return {
    id: stationId,
    name: l.name ?? l.address,
    address: [l.address, [l.postal_code, l.city].filter(Boolean).join(' ')].filter(Boolean).join(', '),
    coordinates: { latitude: l.coordinates.latitude, longitude: l.coordinates.longitude },
    opening_times: {
      twentyfourseven: l.opening_times?.twentyfourseven ?? true,
      regular_hours: (l.opening_times?.regular_hours ?? []).map((h) => ({
        weekday: WEEKDAYS[h.weekday - 1] as string,
        period_begin: h.period_begin,
        period_end: h.period_end,
      })),
    },
    operator: { name: operator, contact: { phone: party?.phone ?? null } },
    evses: live.map((e) => ({ evse_id: e.evse_id ?? e.uid, status: e.status })),
    last_updated: new Date(Math.max(...stamps)).toISOString(),
    speed: power >= 150 ? 'turbo' : power >= 43 ? 'fast' : 'slow',
    status,
    amenities: (l.facilities ?? []).filter((f) => AMENITY.has(f)),
    is_partner: logo !== undefined,
    ...(logo ? { logo_url: logo } : {}),
    price_groups: derivePriceGroups(l.evses ?? [], (id) => tariffs.get(key(l.country_code, l.party_id, id)), {
      ...pricingFor(l.country, DEFAULT_PRICING),
      now,
      timeZone: l.time_zone,
    }),
  } as Station;
}

async function stationIdsByKey(): Promise<Map<string, string>> {
  const { rows } = await t.db.query<{ k: string; station_id: string }>(
    `SELECT country_code || '*' || party_id || '*' || id AS k, station_id FROM ocpi_locations`,
  );
  return new Map(rows.map((r) => [r.k, r.station_id]));
}

// ---------------------------------------------------------------------------
// Schemas, closed: no property beyond the documented ones.

function closed(schema: TSchema): TSchema {
  const copy = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const object = node as Record<string, unknown>;
    if (object.type === 'object' && object.properties && object.additionalProperties === undefined) object.additionalProperties = false;
    for (const value of Object.values(object)) walk(value);
  };
  walk(copy);
  return copy as TSchema;
}

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsImport as unknown as { default: (ajv: Ajv) => Ajv };
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
const validators = {
  station: ajv.compile(closed(StationSchema)),
  around: ajv.compile(closed(PageOf(StationAroundSchema))),
  tile: ajv.compile(closed(TileResponseSchema)),
  problem: ajv.compile(Type.Object({ type: Type.String() })),
};

function assertValid(kind: keyof typeof validators, body: unknown): void {
  const validate = validators[kind];
  assert.ok(validate(body), `${kind} answer does not match its schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 400)}`);
}

// ---------------------------------------------------------------------------

describe('stations as the API writes them', () => {
  test('details of every station equal the reference projection of its OCPI location, and match the schema', async () => {
    const ids = await stationIdsByKey();
    assert.equal(ids.size, locations.size);
    let checked = 0;
    for (const [k, l] of locations) {
      const stationId = ids.get(k) as string;
      const res = await t.call('GET', `/api/v1/stations/details/?type=station_id&id=${stationId}`, { token });
      assert.equal(res.status, 200, k);
      assert.match(String(res.headers['content-type']), /^application\/json; charset=utf-8/);
      assertValid('station', res.body);
      assert.deepEqual(res.body, reference(l, stationId, NOW), k);
      checked++;
    }
    assert.equal(checked, 1_503);
  });

  test('details by EVSE id: every live EVSE (by evse_id, else uid) finds its station; a REMOVED one is 404', async () => {
    const ids = await stationIdsByKey();
    let probes = 0;
    for (const [k, l] of [...locations].filter((_, n) => n % 7 === 0 || _[0].startsWith('DE*EDG'))) {
      for (const evse of l.evses ?? []) {
        const evseId = evse.evse_id ?? evse.uid;
        const res = await t.call('GET', `/api/v1/stations/details/?type=evse_id&id=${encodeURIComponent(evseId)}`, { token });
        if (evse.status === 'REMOVED') {
          assert.equal(res.status, 404, evseId);
          continue;
        }
        assert.equal(res.status, 200, evseId);
        assert.equal(res.body.id, ids.get(k));
        probes++;
      }
    }
    assert.ok(probes > 500, `${probes} EVSEs probed`);
  });

  test('hand-made edge cases: escaping, uid for a missing evse_id, REMOVED left out, latest last_updated', async () => {
    const ids = await stationIdsByKey();
    const q = await t.call('GET', `/api/v1/stations/details/?type=station_id&id=${ids.get('DE*EDG*Q')}`, { token });
    assert.equal(q.body.name, 'Zürich "Nord"\u2028');
    assert.equal(q.body.operator.name, 'Straße "Quote" \\ Power');
    assert.equal(q.body.logo_url, 'https://cdn.example.com/q.png');
    assert.equal(q.body.address, 'Müllerstraße 5 – Hof, 10115 Berlin');
    assert.equal(q.body.last_updated, '2026-03-04T05:06:07.890Z');
    // Characters above U+00FF are escaped, and the text is one-byte in memory too (v8.serialize
    // tags a one-byte string 0x22): one two-byte part makes a whole answer two bytes a character.
    const text = t.catalogue.stationJson({ stationId: ids.get('DE*EDG*Q') as string }) as string;
    assert.match(text, /\\u2028/);
    assert.equal(v8.serialize(text)[2], 0x22, 'details of a station with characters above U+00FF are a one-byte string');
    const page = t.catalogue.around(
      { latitude: LAT, longitude: LON, distance: 500, connectorMask: 0, onlyAvailable: false, onlyPartners: false, operators: [] },
      { offset: 0, limit: 50 },
    );
    assert.ok(page.results.some((r) => r.includes('\\u2028')));
    for (const r of page.results) assert.equal(v8.serialize(r)[2], 0x22, 'around stations are one-byte strings');
    const r = await t.call('GET', `/api/v1/stations/details/?type=station_id&id=${ids.get('DE*EDG*R')}`, { token });
    assert.deepEqual(
      r.body.evses.map((e: { evse_id: string }) => e.evse_id),
      ['DE*EDG*ER1', 'R-3'],
    );
    assert.deepEqual(
      r.body.price_groups.map((g: { power: number; evse_ids: string[]; is_fallback: boolean }) => [g.power, g.evse_ids, g.is_fallback]),
      [
        [50, ['R-3'], true],
        [22, ['DE*EDG*ER1'], false],
      ],
    );
  });

  test('inside the service: station() is the API answer; evse() names a live EVSE at its CPO, with its status', async () => {
    const ids = await stationIdsByKey();
    const stationId = ids.get('DE*EDG*R') as string;
    const api = await t.call('GET', `/api/v1/stations/details/?type=station_id&id=${stationId}`, { token });
    assert.deepEqual(t.catalogue.station({ stationId }), api.body);
    assert.deepEqual(t.catalogue.station({ evseId: 'R-3' }), api.body);
    assert.deepEqual(t.catalogue.evse('DE*EDG*ER1'), {
      country_code: 'DE',
      party_id: 'EDG',
      location_id: 'R',
      evse_uid: 'R-1',
      evse_id: 'DE*EDG*ER1',
      status: 'AVAILABLE',
      station_id: stationId,
    });
    assert.equal(t.catalogue.evse('R-3')?.evse_uid, 'R-3', 'an EVSE without evse_id is found by its uid');
    assert.equal(t.catalogue.evse('DE*EDG*ER2'), undefined, 'a REMOVED EVSE is not offered');
    assert.equal(t.catalogue.evse('DE*EDG*NOPE'), undefined);
    assert.equal(t.catalogue.station({ evseId: 'DE*EDG*NOPE' }), undefined);
    assert.equal(t.catalogue.station({ stationId: '00000000-0000-0000-0000-000000000000' }), undefined);
  });

  test('a tariff that expires stops applying at its end: the groups follow the clock', async () => {
    const ids = await stationIdsByKey();
    const id = ids.get('DE*EDG*X') as string;
    const l = locations.get('DE*EDG*X') as OcpiLocation;
    const before = await t.call('GET', `/api/v1/stations/details/?type=station_id&id=${id}`, { token });
    assert.equal(before.body.price_groups[0].prices.kwh_price.ALL[0].gross_price, '0.29');
    t.clock.set(new Date(Date.parse(EXPIRES) + 1));
    try {
      const afterEnd = await t.call('GET', `/api/v1/stations/details/?type=station_id&id=${id}`, { token });
      assert.equal(afterEnd.body.price_groups[0].prices.kwh_price.ALL[0].gross_price, '0.42');
      assert.deepEqual(afterEnd.body, reference(l, id, t.clock.now()));
    } finally {
      t.clock.set(NOW);
    }
    const again = await t.call('GET', `/api/v1/stations/details/?type=station_id&id=${id}`, { token });
    assert.equal(again.body.price_groups[0].prices.kwh_price.ALL[0].gross_price, '0.29');
  });

  test('around answers match the schema and carry the reference stations with their distances', async () => {
    const ids = await stationIdsByKey();
    const byId = new Map([...ids].map(([k, id]) => [id, k]));
    const centres = [
      [LAT, LON],
      [52.52, 13.405],
      [48.8566, 2.3522],
      [41.9, 12.5],
    ];
    let seen = 0;
    for (const [lat, lon] of centres) {
      for (const page of [1, 2]) {
        const res = await t.call('GET', `/api/v1/stations/around/?latitude=${lat}&longitude=${lon}&distance=20000&page_size=15&page=${page}`, { token });
        if (page === 2 && res.status === 404) continue; // fewer than 16 results
        assert.equal(res.status, 200);
        assertValid('around', res.body);
        for (const station of res.body.results as (Station & { distance: number })[]) {
          const { distance, ...rest } = station;
          assert.equal(typeof distance, 'number');
          assert.deepEqual(rest, reference(locations.get(byId.get(station.id) as string) as OcpiLocation, station.id, NOW));
          seen++;
        }
      }
    }
    assert.ok(seen > 20, `${seen} stations checked`);
  });

  test('tile answers at every zoom match the schema; features of several tiles are one collection', async () => {
    let features = 0;
    for (let z = 0; z <= 18; z += 3) {
      const n = 2 ** z;
      const x = Math.floor(((LON + 180) / 360) * n);
      const latRad = (LAT * Math.PI) / 180;
      const y = Math.floor(((1 - Math.log(Math.tan(latRad) + 1 / Math.cos(latRad)) / Math.PI) / 2) * n);
      const xs = [x, Math.min(x + 1, n - 1)];
      const res = await t.call('GET', `/api/v1/stations/tile/?z=${z}&x=${xs.join(',')}&y=${y},${y}&max_price=5`, { token });
      assert.equal(res.status, 200);
      assertValid('tile', res.body);
      features += res.body.features.length;
    }
    const empty = await t.call('GET', '/api/v1/stations/tile/?z=10&x=0&y=0', { token });
    assert.deepEqual(empty.body, { type: 'FeatureCollection', features: [] });
    assert.ok(features > 10);
  });
});
