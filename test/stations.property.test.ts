// Property-based tests of station discovery against brute-force references:
// GET /stations/around/ (radius, filters, order, pagination) and
// GET /stations/tile/ (counts, coverage, nesting of clusters across zooms),
// over a generated Europe-wide catalogue plus a few hand-made stations (Tesla
// connectors, several stacked on one spot) and partner operators. The
// reference recomputes every station fact from the OCPI objects that were
// ingested; only station ids (database uuids) and the catalogue order (the
// key order of ocpi_locations) come from the database. Plain tests cover the
// tile endpoint's input validation and exact tiles of a small hand-made map.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Big from 'big.js';
import fc from 'fast-check';
import { generateCatalogue } from '../src/dataset/generator.ts';
import { loadGeneratedCatalogue } from '../src/modules/stations/loader.ts';
import * as stationsRepo from '../src/modules/stations/repository.ts';
import { connectorMaskOf } from '../src/modules/stations/routes.ts';
import type { OcpiLocation, OcpiTariff } from '../src/ocpi-protocol/locations-tariffs.ts';
import { countryByAlpha3, UNITS_PER_EUR } from '../src/platform/european-countries.ts';
import { assertProblem, BASE_URL, setupTestApp, type TestContext } from './helpers.ts';
import { ocpiLocation, ocpiTariff } from './stations-fixtures.ts';

// ---------------------------------------------------------------------------
// Reference model

type Speed = 'slow' | 'fast' | 'turbo';
type Status = 'free' | 'busy' | 'error' | 'unknown';

interface RefStation {
  /** Position in the catalogue order. */
  index: number;
  id: string;
  /** country_code*party_id*id of the OCPI location. */
  key: string;
  lonText: string;
  latText: string;
  lon: number;
  lat: number;
  /** Web-Mercator position in [0, 1). */
  mx: number;
  my: number;
  status: Status;
  speed: Speed;
  standards: Set<string>;
  operator: string;
  operatorId: string;
  partner: boolean;
  /** Map price incl. VAT in hundredths of `currency`: per kWh, or per minute for a tariff with only time prices. */
  price: MapPrice | undefined;
}

interface Filter {
  connectorTypes: string[];
  onlyAvailable: boolean | undefined;
  onlyPartners: boolean | undefined;
  operators: string[];
  powerGroups: Speed[];
  maxPrice: string | undefined;
  /** How arrays are spelled: repeated, comma-separated or with brackets. */
  arrays: 'repeat' | 'comma' | 'bracket';
  /** Booleans as 1/0 instead of true/false. */
  numericBooleans: boolean;
}

const NO_FILTER: Filter = {
  connectorTypes: [],
  onlyAvailable: undefined,
  onlyPartners: undefined,
  operators: [],
  powerGroups: [],
  maxPrice: undefined,
  arrays: 'repeat',
  numericBooleans: false,
};

const ALIASES: Record<string, string> = { VENDOR_R: 'TESLA_R', VENDOR_S: 'TESLA_S' };
const PHASES: Record<string, number> = { AC_1_PHASE: 1, AC_2_PHASE: 2, AC_2_PHASE_SPLIT: 2, AC_3_PHASE: 3, DC: 1 };
const FALLBACK_KWH_EUR = '0.59';

const mercX = (lon: number) => (lon + 180) / 360;
const mercY = (lat: number) => {
  const r = (lat * Math.PI) / 180;
  return (1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2;
};
/** The cell (x, y) at a grid level (a zoom-z tile is a level-z cell). */
const cellAt = (mx: number, my: number, level: number): [number, number] => [Math.floor(mx * 2 ** level), Math.floor(my * 2 ** level)];
const tileOf = (lon: number, lat: number, z: number): [number, number] => cellAt(mercX(lon), mercY(lat), z);
const featureMerc = (f: Feature): [number, number] => [mercX(Number(f.geometry.coordinates[0])), mercY(Number(f.geometry.coordinates[1]))];

/** Morton code of a cell: x bits at even, y bits at odd positions. */
function morton(x: number, y: number): string {
  let code = 0n;
  for (let bit = 0; bit < 30; bit++) {
    code |= BigInt((x >>> bit) & 1) << BigInt(2 * bit);
    code |= BigInt((y >>> bit) & 1) << BigInt(2 * bit + 1);
  }
  return code.toString();
}

function haversineKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.min(1, Math.sqrt(a)));
}

function refStatus(statuses: string[]): Status {
  if (statuses.includes('AVAILABLE')) return 'free';
  if (statuses.some((s) => s === 'CHARGING' || s === 'BLOCKED' || s === 'RESERVED')) return 'busy';
  if (statuses.length > 0 && statuses.every((s) => s === 'OUTOFORDER' || s === 'INOPERATIVE')) return 'error';
  return 'unknown';
}

/** Cluster status: free if any free, else busy if any busy, else error if all error, else unknown. */
function clusterStatus(statuses: Status[]): Status {
  if (statuses.includes('free')) return 'free';
  if (statuses.includes('busy')) return 'busy';
  if (statuses.length > 0 && statuses.every((s) => s === 'error')) return 'error';
  return 'unknown';
}

const SPEED_RANK: Record<Speed, number> = { slow: 0, fast: 1, turbo: 2 };

interface MapPrice {
  hundredths: number;
  currency: string;
  time: boolean;
}

/** What a map shows for a tariff: its highest kWh price incl. VAT, else its highest time price per minute incl. VAT; in hundredths (half up). */
function tariffMapPrice(tariff: OcpiTariff): MapPrice | undefined {
  const highest = (type: string): Big | undefined => {
    let best: Big | undefined;
    for (const element of tariff.elements) {
      if (element.restrictions?.reservation) continue;
      for (const c of element.price_components) {
        if (c.type !== type) continue;
        const gross = new Big(String(c.price)).times(new Big(String(c.vat ?? 0)).div(100).plus(1));
        if (!best || gross.gt(best)) best = gross;
      }
    }
    return best;
  };
  const kwh = highest('ENERGY');
  if (kwh) return { hundredths: Number(kwh.times(100).round(0, Big.roundHalfUp)), currency: tariff.currency, time: false };
  const perHour = highest('TIME');
  if (perHour) return { hundredths: Number(perHour.div(60).times(100).round(0, Big.roundHalfUp)), currency: tariff.currency, time: true };
  return undefined;
}

function buildReference(
  locations: OcpiLocation[],
  tariffs: OcpiTariff[],
  parties: { country_code: string; party_id: string; name: string }[],
  partners: string[],
  rows: { station_id: string; country_code: string; party_id: string; id: string }[],
): RefStation[] {
  const byKey = new Map(locations.map((l) => [`${l.country_code}*${l.party_id}*${l.id}`, l]));
  const tariffByKey = new Map(tariffs.map((tr) => [`${tr.country_code}*${tr.party_id}*${tr.id}`, tr]));
  const partyName = new Map(parties.map((p) => [`${p.country_code}*${p.party_id}`, p.name]));
  const partnerNames = new Set(partners.map((p) => p.toLowerCase()));
  return rows.map((row, index) => {
    const l = byKey.get(`${row.country_code}*${row.party_id}*${row.id}`);
    assert.ok(l, `location ${row.id} was ingested`);
    const live = (l.evses ?? []).filter((e) => e.status !== 'REMOVED');
    const standards = new Set<string>();
    let kw = 0;
    let cheapest: MapPrice | undefined;
    let withoutTariff = false;
    for (const evse of live) {
      for (const c of evse.connectors) {
        standards.add(c.standard);
        const power = c.max_electric_power ? c.max_electric_power / 1000 : (c.max_voltage * c.max_amperage * (PHASES[c.power_type] ?? 1)) / 1000;
        kw = Math.max(kw, power);
        const tariff = (c.tariff_ids ?? []).map((id) => tariffByKey.get(`${l.country_code}*${l.party_id}*${id}`)).find((tr) => tr !== undefined);
        if (!tariff) {
          withoutTariff = true;
          continue;
        }
        // The cheapest tariff, kWh prices before time prices.
        const price = tariffMapPrice(tariff);
        if (price && (!cheapest || (price.time === cheapest.time ? price.hundredths < cheapest.hundredths : cheapest.time))) cheapest = price;
      }
    }
    if (!cheapest && withoutTariff) {
      const country = countryByAlpha3(l.country);
      const currency = country?.currency ?? 'EUR';
      const net = new Big(FALLBACK_KWH_EUR).times(UNITS_PER_EUR[currency] ?? '1').round(2, Big.roundHalfUp);
      const gross = net.times(new Big(country?.vat ?? '0').div(100).plus(1));
      cheapest = { hundredths: Number(gross.times(100).round(0, Big.roundHalfUp)), currency, time: false };
    }
    const operator = l.operator?.name ?? partyName.get(`${l.country_code}*${l.party_id}`) ?? `${l.country_code}*${l.party_id}`;
    const lon = Number(l.coordinates.longitude);
    const lat = Number(l.coordinates.latitude);
    return {
      index,
      id: row.station_id,
      key: `${row.country_code}*${row.party_id}*${row.id}`,
      lonText: l.coordinates.longitude,
      latText: l.coordinates.latitude,
      lon,
      lat,
      mx: mercX(lon),
      my: mercY(lat),
      status: refStatus(live.map((e) => e.status)),
      speed: kw >= 150 ? 'turbo' : kw >= 43 ? 'fast' : 'slow',
      standards,
      operator,
      operatorId: `${l.country_code}*${l.party_id}`,
      partner: partnerNames.has(operator.toLowerCase()),
      price: cheapest,
    };
  });
}

function accepts(s: RefStation, f: Filter): boolean {
  if (f.connectorTypes.length > 0 && !f.connectorTypes.some((c) => s.standards.has(ALIASES[c] ?? c))) return false;
  if (f.onlyAvailable && s.status !== 'free') return false;
  if (f.onlyPartners && !s.partner) return false;
  if (f.operators.length > 0 && !f.operators.some((o) => o.toLowerCase() === s.operator.toLowerCase())) return false;
  if (f.powerGroups.length > 0 && !f.powerGroups.includes(s.speed)) return false;
  if (f.maxPrice !== undefined && s.price && new Big(s.price.hundredths).gt(new Big(f.maxPrice).times(100))) return false;
  return true;
}

function filterQuery(f: Filter): string {
  const parts: string[] = [];
  const array = (key: string, values: string[]) => {
    if (values.length === 0) return;
    if (f.arrays === 'comma') parts.push(`${key}=${values.map(encodeURIComponent).join(',')}`);
    else for (const v of values) parts.push(`${key}${f.arrays === 'bracket' ? '[]' : ''}=${encodeURIComponent(v)}`);
  };
  const bool = (key: string, value: boolean | undefined) => {
    if (value !== undefined) parts.push(`${key}=${f.numericBooleans ? (value ? '1' : '0') : String(value)}`);
  };
  array('connector_types', f.connectorTypes);
  bool('only_available', f.onlyAvailable);
  bool('only_partners', f.onlyPartners);
  array('operators', f.operators);
  array('power_groups', f.powerGroups);
  if (f.maxPrice !== undefined) parts.push(`max_price=${f.maxPrice}`);
  return parts.join('&');
}

/** The same filter in the catalogue's own terms, for cross-checking the reference against `inspect().matches`. */
const catalogueFilter = (f: Filter) => ({
  connectorMask: connectorMaskOf(f.connectorTypes),
  onlyAvailable: f.onlyAvailable ?? false,
  onlyPartners: f.onlyPartners ?? false,
  operators: f.operators.map((o) => o.toLowerCase()),
  speeds: f.powerGroups,
  ...(f.maxPrice !== undefined ? { maxPrice: Number(f.maxPrice) } : {}),
});

const formatHundredths = (h: number) => new Big(h).div(100).toFixed(2);

interface Feature {
  type: 'Feature';
  geometry: { type: 'Point'; coordinates: [string, string] };
  properties: { count: number; expansion_zoom?: number; speed: Speed; status: Status; operator_id?: string };
  station_id?: string;
  cluster_id?: string;
  custom_properties?: { is_partner: boolean };
  price_properties?: { price: string; type: string; currency: string };
}

/** The feature a single station must be. */
function stationFeature(s: RefStation): Feature {
  return {
    type: 'Feature',
    geometry: { type: 'Point', coordinates: [s.lonText, s.latText] },
    properties: { count: 1, speed: s.speed, status: s.status, operator_id: s.operatorId },
    station_id: s.id,
    custom_properties: { is_partner: s.partner },
    ...(s.price
      ? { price_properties: { price: formatHundredths(s.price.hundredths), type: s.price.time ? 'time_price' : 'charging_price', currency: s.price.currency } }
      : {}),
  };
}

// ---------------------------------------------------------------------------
// The catalogue under test

let t: TestContext;
let token: string;
let stations: RefStation[];
let operatorNames: string[];

const SEED = 7;
const LOCATIONS = 3000;
const PARTNERS = ['Polder Power', 'Thames Plug', 'Kilowatt Continental', 'Voltaic Superchargers'];

/**
 * Hand-made additions: Tesla stations on the exact spot of generated ones, a
 * stack of three, two a few metres apart, removed and planned EVSEs, a tariff
 * with only a time price.
 */
function extraStations(generated: OcpiLocation[]): { locations: OcpiLocation[]; tariffs: OcpiTariff[] } {
  const statuses = ['AVAILABLE', 'CHARGING', 'OUTOFORDER', 'UNKNOWN', 'BLOCKED'];
  const locations: OcpiLocation[] = [];
  const at = (n: number) => {
    const g = generated[n] as OcpiLocation;
    return { lat: Number(g.coordinates.latitude), lon: Number(g.coordinates.longitude) };
  };
  for (let k = 0; k < 10; k++) {
    locations.push(
      ocpiLocation({
        id: `X${k}`,
        party: 'TSX',
        ...at(150 + k * 283),
        evses: [
          { standard: 'TESLA_S', kw: k % 2 === 0 ? 250 : 120, status: statuses[k % statuses.length] as string, ...(k % 3 === 0 ? {} : { tariff: 'TS' }) },
        ],
      }),
    );
  }
  const spot = at(1234);
  for (let k = 0; k < 3; k++) {
    locations.push(
      ocpiLocation({ id: `Y${k}`, party: 'TSX', ...spot, evses: [{ standard: 'TESLA_S', kw: 120, status: k === 0 ? 'AVAILABLE' : 'CHARGING', tariff: 'TS' }] }),
    );
  }
  locations.push(ocpiLocation({ id: 'Z0', party: 'TSX', lat: spot.lat + 0.00002, lon: spot.lon, evses: [{ kw: 22 }] }));
  locations.push(ocpiLocation({ id: 'Z1', party: 'TSX', lat: spot.lat, lon: spot.lon + 0.00003, evses: [{ kw: 11, status: 'INOPERATIVE', tariff: 'TS' }] }));
  const near = (n: number) => ({ lat: at(n).lat + 0.001, lon: at(n).lon - 0.001 });
  locations.push(
    ocpiLocation({
      id: 'W0',
      party: 'TSX',
      ...near(2000),
      evses: [
        { status: 'REMOVED', standard: 'CHADEMO', kw: 50, tariff: 'TS' },
        { kw: 22, tariff: 'TT' },
      ],
    }),
    ocpiLocation({ id: 'W1', party: 'TSX', ...near(2001), evses: [{ status: 'REMOVED', standard: 'IEC_62196_T2_COMBO', kw: 150 }] }),
    ocpiLocation({
      id: 'W2',
      party: 'TSX',
      ...near(2002),
      evses: [
        { status: 'PLANNED', kw: 22, tariff: 'TT' },
        { status: 'BLOCKED', kw: 22, tariff: 'TS' },
      ],
    }),
  );
  const timeOnly: OcpiTariff = {
    ...ocpiTariff('TT', 0, { party: 'TSX' }),
    elements: [
      {
        price_components: [
          { type: 'TIME', price: 6, vat: 19, step_size: 60 },
          { type: 'FLAT', price: 1, vat: 19, step_size: 0 },
        ],
      },
    ],
  };
  return { locations, tariffs: [ocpiTariff('TS', 0.45, { party: 'TSX' }), timeOnly] };
}

before(async () => {
  t = await setupTestApp();
  ({ token } = await t.newClient());
  await loadGeneratedCatalogue(t.ingestion, { locations: LOCATIONS, seed: SEED });
  const generated = generateCatalogue({ locations: LOCATIONS, seed: SEED });
  const generatedLocations = [...generated.locations()].flat();
  const extra = extraStations(generatedLocations);
  const extraParty = { country_code: 'DE', party_id: 'TSX', name: 'Voltaic Superchargers', phone: null, website: null };
  await t.ingestion.ingest({ parties: [extraParty], tariffs: extra.tariffs, locations: extra.locations });
  for (const name of PARTNERS)
    await stationsRepo.upsertPartner(t.db, { name, logo_url: `https://cdn.example.com/${encodeURIComponent(name)}.png` }, new Date());
  await t.catalogue.reload();
  const { rows } = await t.db.query<{ station_id: string; country_code: string; party_id: string; id: string }>(
    'SELECT station_id, country_code, party_id, id FROM ocpi_locations ORDER BY country_code, party_id, id',
  );
  stations = buildReference(
    [...generatedLocations, ...extra.locations],
    [...generated.tariffs, ...extra.tariffs],
    [...generated.parties, extraParty],
    PARTNERS,
    rows,
  );
  operatorNames = [...new Set(stations.map((s) => s.operator))].sort();
});
after(() => t.close());

test('the reference describes the catalogue: same stations, order and positions', () => {
  const inspected = t.catalogue.inspect();
  assert.equal(stations.length, LOCATIONS + 18);
  assert.equal(inspected.size, stations.length);
  assert.deepEqual(
    inspected.stationIds,
    stations.map((s) => s.id),
  );
  for (const s of stations) {
    assert.equal(inspected.longitudes[s.index], s.lon);
    assert.equal(inspected.latitudes[s.index], s.lat);
  }
  for (const name of PARTNERS) assert.ok(operatorNames.includes(name), `${name} operates stations`);
  // The reference itself, on hand-made stations.
  const facts = (key: string) => {
    const s = stations.find((o) => o.key === key) as RefStation;
    return { status: s.status, speed: s.speed, standards: [...s.standards], price: s.price };
  };
  assert.deepEqual(facts('DE*TSX*W0'), { status: 'free', speed: 'slow', standards: ['IEC_62196_T2'], price: { hundredths: 12, currency: 'EUR', time: true } });
  assert.deepEqual(facts('DE*TSX*W1'), { status: 'unknown', speed: 'slow', standards: [], price: undefined });
  assert.deepEqual(facts('DE*TSX*W2'), { status: 'busy', speed: 'slow', standards: ['IEC_62196_T2'], price: { hundredths: 54, currency: 'EUR', time: false } });
  assert.deepEqual(facts('DE*TSX*X0'), { status: 'free', speed: 'turbo', standards: ['TESLA_S'], price: { hundredths: 70, currency: 'EUR', time: false } });
  assert.ok(stations.filter((s) => s.partner).length > 200, 'partners run a good share of stations');
});

// ---------------------------------------------------------------------------
// Arbitraries

const CONNECTOR_CHOICES = ['IEC_62196_T2', 'IEC_62196_T2_COMBO', 'CHADEMO', 'DOMESTIC_F', 'DOMESTIC_G', 'TESLA_S', 'VENDOR_S', 'IEC_62196_T1'];

/** Random filters; a third of them filter nothing (spelled in various ways). */
function filterArb(options: { tile: boolean }): fc.Arbitrary<Filter> {
  const operator = fc
    .tuple(fc.constantFrom(...operatorNames, ...PARTNERS, 'Nobody Charging'), fc.constantFrom('as-is', 'lower', 'upper'))
    .map(([name, style]) => {
      const changed = style === 'lower' ? name.toLowerCase() : style === 'upper' ? name.toUpperCase() : name;
      return changed.toLowerCase() === name.toLowerCase() ? changed : name;
    });
  const any = fc.record({
    connectorTypes: fc.oneof(
      { weight: 3, arbitrary: fc.constant<string[]>([]) },
      { weight: 2, arbitrary: fc.subarray(CONNECTOR_CHOICES, { minLength: 1, maxLength: 3 }) },
    ),
    onlyAvailable: fc.constantFrom(undefined, undefined, false, true, true),
    onlyPartners: fc.constantFrom(undefined, undefined, undefined, false, true, true),
    operators: fc.oneof(
      { weight: 3, arbitrary: fc.constant<string[]>([]) },
      { weight: 2, arbitrary: fc.uniqueArray(operator, { minLength: 1, maxLength: 4 }) },
    ),
    powerGroups: options.tile
      ? fc.oneof({ weight: 3, arbitrary: fc.constant<Speed[]>([]) }, { weight: 2, arbitrary: fc.subarray<Speed>(['slow', 'fast', 'turbo'], { minLength: 1 }) })
      : fc.constant<Speed[]>([]),
    maxPrice: options.tile
      ? fc.oneof(
          { weight: 4, arbitrary: fc.constant(undefined) },
          { weight: 3, arbitrary: fc.integer({ min: 25, max: 110 }).map((cents) => (cents / 100).toFixed(2)) },
          { weight: 1, arbitrary: fc.constantFrom('0', '0.455', '0.5', '3', '5.99', '300') },
        )
      : fc.constant(undefined),
    arrays: fc.constantFrom<Filter['arrays']>('repeat', 'comma', 'bracket'),
    numericBooleans: fc.boolean(),
  });
  const none = fc.record({ onlyAvailable: fc.constantFrom(undefined, false), onlyPartners: fc.constantFrom(undefined, false), numericBooleans: fc.boolean() });
  return fc.oneof({ weight: 2, arbitrary: any }, { weight: 1, arbitrary: none.map((f) => ({ ...NO_FILTER, ...f })) });
}

// ---------------------------------------------------------------------------
// 1. Stations around a point

interface AroundBody {
  count: number;
  next: string | null;
  previous: string | null;
  results: { id: string; distance: number; status: string; speed: string; is_partner: boolean; operator: { name: string } }[];
}

describe('GET /stations/around/ against a brute-force haversine search', () => {
  test('walking every page gives exactly the stations within the radius, nearest first, ties in catalogue order', async (ctx) => {
    const n = stations.length;
    const handMade = stations.filter((s) => s.operator === 'Voltaic Superchargers');
    const centre = fc.oneof(
      {
        weight: 5,
        arbitrary: fc
          .record({ i: fc.nat({ max: n - 1 }), km: fc.double({ min: 0, max: 3, noNaN: true }), bearing: fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }) })
          .map(({ i, km, bearing }) => {
            const s = stations[i] as RefStation;
            const lat = s.lat + (km * Math.cos(bearing)) / 111.2;
            const lon = s.lon + (km * Math.sin(bearing)) / (111.2 * Math.cos((s.lat * Math.PI) / 180));
            return { latitude: lat.toFixed(7), longitude: lon.toFixed(7) };
          }),
      },
      {
        weight: 1,
        arbitrary: fc.nat({ max: n - 1 }).map((i) => ({ latitude: (stations[i] as RefStation).latText, longitude: (stations[i] as RefStation).lonText })),
      },
      // Near the hand-made stations, most of them stacked on others: equal distances.
      {
        weight: 1,
        arbitrary: fc
          .record({ i: fc.nat({ max: handMade.length - 1 }), dLat: fc.integer({ min: -300, max: 300 }), dLon: fc.integer({ min: -300, max: 300 }) })
          .map(({ i, dLat, dLon }) => {
            const s = handMade[i] as RefStation;
            return { latitude: (s.lat + dLat / 10_000).toFixed(6), longitude: (s.lon + dLon / 10_000).toFixed(6) };
          }),
      },
      {
        weight: 2,
        arbitrary: fc
          .record({ lat: fc.double({ min: 36, max: 70, noNaN: true }), lon: fc.double({ min: -10, max: 32, noNaN: true }) })
          .map(({ lat, lon }) => ({ latitude: String(lat), longitude: String(lon) })),
      },
    );
    const radius = fc.oneof(
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 100 }) },
      { weight: 6, arbitrary: fc.integer({ min: 100, max: 20_000 }) },
      { weight: 3, arbitrary: fc.integer({ min: 20_000, max: 100_000 }) },
    );
    let nonEmpty = 0;
    let multiPage = 0;
    let ties = 0;
    await fc.assert(
      // Mostly 100 a page; sometimes small pages, so that walks are long and equal distances straddle pages.
      fc.asyncProperty(
        centre,
        radius,
        filterArb({ tile: false }),
        fc.oneof({ weight: 3, arbitrary: fc.constant(100) }, { weight: 1, arbitrary: fc.integer({ min: 3, max: 40 }) }),
        async (c, distance, filter, pageSize) => {
          const lat = Number(c.latitude);
          const lon = Number(c.longitude);
          const expected = stations
            .filter((s) => accepts(s, filter))
            .map((s) => {
              const km = haversineKm(lat, lon, s.lat, s.lon);
              return { s, meters: km * 1000, rounded: Math.round(km * 10_000) / 10 };
            })
            .filter((e) => e.meters <= distance)
            .sort((a, b) => a.rounded - b.rounded || a.s.index - b.s.index);
          const fq = filterQuery(filter);
          let url: string | null =
            `/api/v1/stations/around/?latitude=${c.latitude}&longitude=${c.longitude}&distance=${distance}&page_size=${pageSize}${fq ? `&${fq}` : ''}`;
          const seen: AroundBody['results'] = [];
          let pages = 0;
          const lastPage = Math.max(1, Math.ceil(expected.length / pageSize));
          while (url !== null) {
            pages++;
            assert.ok(pages <= lastPage, `more than ${lastPage} pages`);
            const res = await t.call('GET', url, { token });
            assert.equal(res.status, 200, res.text);
            const body = res.body as AroundBody;
            assert.equal(body.count, expected.length, 'count is the brute-force count');
            assert.equal(body.results.length, pages < lastPage ? pageSize : expected.length - (lastPage - 1) * pageSize, `size of page ${pages}`);
            seen.push(...body.results);
            if (body.next === null) url = null;
            else {
              assert.ok(body.next.startsWith(`${BASE_URL}/api/v1/stations/around/?`), body.next);
              url = body.next.slice(BASE_URL.length);
            }
          }
          assert.equal(pages, lastPage);
          assert.deepEqual(
            seen.map((r) => r.id),
            expected.map((e) => e.s.id),
            'same stations in the same order',
          );
          seen.forEach((r, k) => {
            const e = expected[k] as (typeof expected)[number];
            assert.ok(Math.abs(r.distance - e.meters) <= 0.05 + 1e-6, `distance ${r.distance} m vs ${e.meters} m`);
            assert.equal(r.distance, e.rounded, 'distance rounded to 0.1 m');
            assert.deepEqual(
              { status: r.status, speed: r.speed, is_partner: r.is_partner, operator: r.operator.name },
              { status: e.s.status, speed: e.s.speed, is_partner: e.s.partner, operator: e.s.operator },
            );
          });
          if (expected.length > 0) nonEmpty++;
          if (pages > 1) multiPage++;
          if (expected.some((e, k) => k > 0 && e.rounded === expected[k - 1]?.rounded)) ties++;
        },
      ),
      { numRuns: 100 },
    );
    ctx.diagnostic(`around: ${nonEmpty} non-empty, ${multiPage} over several pages, ${ties} with equal distances`);
    assert.ok(nonEmpty >= 20, `enough searches found stations (${nonEmpty})`);
  });

  test('stations on the same spot come in catalogue order', async () => {
    const spots = new Map<string, RefStation[]>();
    for (const s of stations) spots.set(`${s.lonText},${s.latText}`, [...(spots.get(`${s.lonText},${s.latText}`) ?? []), s]);
    const stack = [...spots.values()].find((list) => list.length >= 4);
    assert.ok(stack, 'a stack of four stations');
    const [first] = stack;
    const res = await t.call('GET', `/api/v1/stations/around/?latitude=${first?.latText}&longitude=${first?.lonText}&distance=1`, { token });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.results.map((r: { id: string; distance: number }) => [r.id, r.distance]),
      stack.map((s) => [s.id, 0]),
    );
  });
});

// ---------------------------------------------------------------------------
// 2. Tiles

async function getTiles(z: number, tiles: [number, number][], fq: string): Promise<Feature[]> {
  const features: Feature[] = [];
  for (let k = 0; k < tiles.length; k += 64) {
    const chunk = tiles.slice(k, k + 64);
    const xs = chunk.map(([x]) => `x=${x}`).join('&');
    const ys = chunk.map(([, y]) => `y=${y}`).join('&');
    const res = await t.call('GET', `/api/v1/stations/tile/?z=${z}&${xs}&${ys}${fq ? `&${fq}` : ''}`, { token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.type, 'FeatureCollection');
    features.push(...(res.body.features as Feature[]));
  }
  return features;
}

const sumCounts = (features: Feature[]) => features.reduce((sum, f) => sum + f.properties.count, 0);

/** Matching stations by cell, per grid level, built on demand. */
function cellIndex(matching: RefStation[]) {
  const levels = new Map<number, Map<string, RefStation[]>>();
  return (level: number, cell: [number, number]): RefStation[] => {
    let byCell = levels.get(level);
    if (!byCell) {
      byCell = new Map();
      for (const s of matching) {
        const key = cellAt(s.mx, s.my, level).join('/');
        const list = byCell.get(key);
        if (list) list.push(s);
        else byCell.set(key, [s]);
      }
      levels.set(level, byCell);
    }
    return byCell.get(cell.join('/')) ?? [];
  };
}

/** The zoom at which stations first fall into different cells (a cell at zoom z is level z + 2); 21 if none up to 20. */
function splitZoom(members: RefStation[], from: number): number {
  for (let z = from + 1; z <= 20; z++) {
    const first = cellAt((members[0] as RefStation).mx, (members[0] as RefStation).my, z + 2).join('/');
    if (members.some((s) => cellAt(s.mx, s.my, z + 2).join('/') !== first)) return z;
  }
  return 21;
}

/**
 * Checks every feature of a tile (found at zoom `z`) against the brute force:
 * a station is the station's feature, a cluster holds exactly the matching
 * stations of its cell, with their count, fastest speed, combined status,
 * mean position and the zoom at which they split.
 */
function checkFeature(f: Feature, z: number, byId: Map<string, RefStation>, inCell: ReturnType<typeof cellIndex>): void {
  const [mx, my] = featureMerc(f);
  if (f.station_id !== undefined) {
    const s = byId.get(f.station_id);
    assert.ok(s, `station ${f.station_id} matches the filter`);
    assert.deepEqual(f, stationFeature(s));
    assert.deepEqual(inCell(z + 2, cellAt(mx, my, z + 2)), [s], 'a single station is alone in its cell');
    return;
  }
  assert.equal(f.station_id, undefined);
  assert.equal(typeof f.cluster_id, 'string');
  const members = inCell(z + 2, cellAt(mx, my, z + 2));
  assert.ok(members.length >= 2, `cluster ${f.cluster_id} at zoom ${z} has ${members.length} matching stations in its cell`);
  assert.equal(f.properties.count, members.length, 'cluster count');
  const speed = members.reduce<Speed>((best, s) => (SPEED_RANK[s.speed] > SPEED_RANK[best] ? s.speed : best), 'slow');
  assert.deepEqual(
    { speed: f.properties.speed, status: f.properties.status, expansion_zoom: f.properties.expansion_zoom },
    { speed, status: clusterStatus(members.map((s) => s.status)), expansion_zoom: splitZoom(members, z) },
  );
  assert.equal(f.properties.operator_id, undefined);
  assert.equal(f.custom_properties, undefined);
  assert.equal(f.price_properties, undefined);
  const meanLon = members.reduce((sum, s) => sum + s.lon, 0) / members.length;
  const meanLat = members.reduce((sum, s) => sum + s.lat, 0) / members.length;
  assert.ok(
    Math.abs(Number(f.geometry.coordinates[0]) - meanLon) <= 6e-7 && Math.abs(Number(f.geometry.coordinates[1]) - meanLat) <= 6e-7,
    'cluster at the mean position',
  );
  assert.match(f.geometry.coordinates[0], /^-?\d+\.\d{6}$/);
  assert.match(f.geometry.coordinates[1], /^-?\d+\.\d{6}$/);
}

interface Pending {
  feature: Feature;
  zoom: number;
  /** The cluster's cell: level zoom + 2. */
  cell: string;
}

/**
 * Resolves the clusters of a tile through the API alone: a cluster found at
 * zoom z with expansion_zoom e lies in one tile at zoom e (the one holding its
 * position), where its members are the features inside its cell; they are at
 * least two and their counts add up. Repeated until only stations and clusters
 * that never split (expansion_zoom 21: stations in one cell at zoom 20) remain.
 */
async function resolve(
  top: Feature[],
  z: number,
  fq: string,
  visit: (f: Feature, zoom: number) => void,
): Promise<{ stationIds: string[]; leaves: Feature[]; requests: number }> {
  const stationIds: string[] = [];
  const leaves: Feature[] = [];
  let pending: Pending[] = [];
  let requests = 0;
  const take = (f: Feature, zoom: number, into: Pending[]) => {
    visit(f, zoom);
    if (f.station_id !== undefined) stationIds.push(f.station_id);
    else {
      const e = f.properties.expansion_zoom as number;
      assert.ok(Number.isInteger(e) && e > zoom && e <= 21, `expansion_zoom ${e} at zoom ${zoom}`);
      if (e === 21) leaves.push(f);
      else {
        const [mx, my] = featureMerc(f);
        into.push({ feature: f, zoom, cell: cellAt(mx, my, zoom + 2).join('/') });
      }
    }
  };
  for (const f of top) take(f, z, pending);
  while (pending.length > 0) {
    const next: Pending[] = [];
    const byZoom = new Map<number, Pending[]>();
    for (const p of pending) {
      const e = p.feature.properties.expansion_zoom as number;
      byZoom.set(e, [...(byZoom.get(e) ?? []), p]);
    }
    for (const [e, items] of byZoom) {
      const tiles = new Map<string, [number, number]>();
      for (const p of items) {
        const [mx, my] = featureMerc(p.feature);
        const tile = cellAt(mx, my, e);
        tiles.set(tile.join('/'), tile);
      }
      requests += Math.ceil(tiles.size / 64);
      const fetched = await getTiles(e, [...tiles.values()], fq);
      for (const p of items) {
        const level = p.zoom + 2;
        const members = fetched.filter((f) => {
          const [mx, my] = featureMerc(f);
          return cellAt(mx, my, level).join('/') === p.cell;
        });
        assert.ok(members.length >= 2, `cluster ${p.feature.cluster_id} (zoom ${p.zoom}) splits at zoom ${e} into ${members.length} features`);
        assert.equal(sumCounts(members), p.feature.properties.count, `members of cluster ${p.feature.cluster_id} add up`);
        for (const m of members) take(m, e, next);
      }
    }
    pending = next;
  }
  return { stationIds, leaves, requests };
}

describe('GET /stations/tile/ against a brute-force Web-Mercator binning', () => {
  test('counts, coverage, nesting and cluster expansion of random tiles under random filters', async (ctx) => {
    const n = stations.length;
    const scenario = fc.record({
      i: fc.nat({ max: n - 1 }),
      z: fc.integer({ min: 0, max: 20 }),
      filter: filterArb({ tile: true }),
      sample: fc.nat({ max: 1_000 }),
    });
    const stats = { runs: 0, nonEmpty: 0, clusters: 0, leaves: 0, resolved: 0, requests: 0 };
    const inspected = t.catalogue.inspect();
    await fc.assert(
      fc.asyncProperty(scenario, async ({ i, z, filter, sample }) => {
        stats.runs++;
        const fq = filterQuery(filter);
        const matches = inspected.matches(catalogueFilter(filter));
        for (const s of stations) assert.equal(matches(s.index), accepts(s, filter), `reference and catalogue agree on station ${s.index} (${s.operator})`);
        const matching = stations.filter((s) => accepts(s, filter));
        const byId = new Map(matching.map((s) => [s.id, s]));
        const inCell = cellIndex(matching);
        const anchor = stations[i] as RefStation;
        const [x, y] = tileOf(anchor.lon, anchor.lat, z);
        const expected = inCell(z, [x, y]);

        // (a) counts add up to the matching stations of the tile; every feature lies in it.
        const features = await getTiles(z, [[x, y]], fq);
        assert.equal(sumCounts(features), expected.length, 'counts add up to the matching stations in the tile');
        for (const f of features) {
          const [mx, my] = featureMerc(f);
          assert.deepEqual(cellAt(mx, my, z), [x, y], 'feature inside its tile');
        }
        if (expected.length > 0) stats.nonEmpty++;

        // (b) every matching station exactly once: resolved into single stations, or inside a cluster that never splits.
        const { stationIds, leaves, requests } = await resolve(features, z, fq, (f, zoom) => {
          checkFeature(f, zoom, byId, inCell);
          if (f.cluster_id !== undefined) stats.clusters++;
        });
        stats.requests += requests;
        stats.leaves += leaves.length;
        stats.resolved += stationIds.length;
        assert.equal(new Set(stationIds).size, stationIds.length, 'no station twice');
        const unresolved = expected.filter((s) => !stationIds.includes(s.id));
        assert.equal(stationIds.length + unresolved.length, expected.length, 'resolved stations are all in the tile');
        const leafCells = new Map<string, number>();
        for (const leaf of leaves) {
          const [mx, my] = featureMerc(leaf);
          const key = cellAt(mx, my, 22).join('/');
          leafCells.set(key, (leafCells.get(key) ?? 0) + leaf.properties.count);
        }
        const unresolvedCells = new Map<string, number>();
        for (const s of unresolved) {
          const key = cellAt(s.mx, s.my, 22).join('/');
          unresolvedCells.set(key, (unresolvedCells.get(key) ?? 0) + 1);
        }
        assert.deepEqual([...leafCells].sort(), [...unresolvedCells].sort(), 'clusters that never split hold the remaining stations');

        // Nesting: the four children at z + 1 hold the same stations.
        if (z < 20) {
          const children: [number, number][] = [
            [2 * x, 2 * y],
            [2 * x + 1, 2 * y],
            [2 * x, 2 * y + 1],
            [2 * x + 1, 2 * y + 1],
          ];
          const inChildren = await getTiles(z + 1, children, fq);
          assert.equal(sumCounts(inChildren), expected.length, 'the four child tiles add up to the parent');
          const ids = inChildren.flatMap((f) => (f.station_id ? [f.station_id] : []));
          assert.equal(new Set(ids).size, ids.length);
        }

        // (c) a cluster is still one feature at expansion_zoom - 1 (same members: same position and count).
        const clusters = features.filter((f) => f.cluster_id !== undefined && (f.properties.expansion_zoom as number) <= 20);
        const cluster = clusters[sample % Math.max(clusters.length, 1)];
        if (cluster) {
          const e = cluster.properties.expansion_zoom as number;
          const [lon, lat] = cluster.geometry.coordinates.map(Number) as [number, number];
          const earlier = await getTiles(e - 1, [tileOf(lon, lat, e - 1)], fq);
          const same = earlier.filter((f) => f.geometry.coordinates.join() === cluster.geometry.coordinates.join());
          assert.equal(same.length, 1, `cluster ${cluster.cluster_id} is one feature at zoom ${e - 1}`);
          assert.equal(same[0]?.properties.count, cluster.properties.count);
          assert.equal(same[0]?.properties.expansion_zoom, e);
        }

        // (d) adjacent tiles in one call: the union, in request order, no station twice.
        if (z > 0) {
          const limit = 2 ** z;
          const side: [number, number] = [x + 1 < limit ? x + 1 : x - 1, y];
          const below: [number, number] = [x, y + 1 < limit ? y + 1 : y - 1];
          const together = await getTiles(z, [[x, y], side, below], fq);
          const apart = [...features, ...(await getTiles(z, [side], fq)), ...(await getTiles(z, [below], fq))];
          assert.deepEqual(together, apart);
          const ids = together.flatMap((f) => (f.station_id ? [f.station_id] : []));
          assert.equal(new Set(ids).size, ids.length, 'no station twice');
          assert.equal(sumCounts(together), expected.length + inCell(z, side).length + inCell(z, below).length);
        }

        // (e) the same tile twice is drawn once.
        assert.deepEqual(
          await getTiles(
            z,
            [
              [x, y],
              [x, y],
            ],
            fq,
          ),
          features,
        );
      }),
      { numRuns: 100 },
    );
    ctx.diagnostic(`tiles: ${JSON.stringify(stats)}`);
    assert.ok(stats.nonEmpty >= 40, `enough non-empty tiles (${JSON.stringify(stats)})`);
    assert.ok(stats.clusters >= 100, `enough clusters checked (${JSON.stringify(stats)})`);
  });

  test('a whole-world tile without filters resolves into every station', async () => {
    const inCell = cellIndex(stations);
    const byId = new Map(stations.map((s) => [s.id, s]));
    const features = await getTiles(0, [[0, 0]], '');
    assert.equal(sumCounts(features), stations.length);
    const { stationIds, leaves } = await resolve(features, 0, '', (f, zoom) => checkFeature(f, zoom, byId, inCell));
    assert.equal(new Set(stationIds).size, stationIds.length);
    assert.equal(stationIds.length + sumCounts(leaves), stations.length);
    assert.ok(leaves.length >= 10, 'the stacked stations never split');
    assert.ok(leaves.every((leaf) => leaf.properties.expansion_zoom === 21));
  });
});

// ---------------------------------------------------------------------------
// 3. Input validation of the tile endpoint

describe('GET /stations/tile/ input', () => {
  const tile = (query: string) => t.call('GET', `/api/v1/stations/tile/?${query}`, { token });

  test('bad input is 400 naming the parameter', async () => {
    const many = Array.from({ length: 65 }, (_, k) => k);
    const cases: [string, string][] = [
      ['x=0&y=0', 'z'],
      ['x=0&y=0&z=21', 'z'],
      ['x=0&y=0&z=-1', 'z'],
      ['x=0&y=0&z=1.5', 'z'],
      ['x=2&y=0&z=1', 'x.0'],
      ['x=0&x=1&y=0&y=2&z=1', 'y.1'],
      ['x=0&x=1&y=0&z=1', 'y'],
      ['x=abc&y=0&z=1', 'x.0'],
      ['x=-1&y=0&z=1', 'x.0'],
      ['y=0&z=1', 'x'],
      ['x=0&y=0&z=1&power_groups=warp', 'power_groups.0'],
      ['x=0&y=0&z=1&max_price=-1', 'max_price'],
      ['x=0&y=0&z=1&max_price=cheap', 'max_price'],
      ['x=0&y=0&z=1&connector_types=USB', 'connector_types.0'],
      ['x=0&y=0&z=1&only_available=maybe', 'only_available'],
      [`${many.map((x) => `x=${x}`).join('&')}&${many.map(() => 'y=0').join('&')}&z=7`, 'x'],
    ];
    for (const [query, field] of cases) {
      const res = await tile(query);
      assertProblem(res, 400, 'validation_error');
      assert.ok(
        res.body.errors.some((e: { field: string }) => e.field === field),
        `${query.slice(0, 80)}: ${JSON.stringify(res.body.errors)}`,
      );
    }
    const sixtyFour = Array.from({ length: 64 }, (_, k) => k);
    const ok = await tile(`${sixtyFour.map((x) => `x=${x}`).join('&')}&${sixtyFour.map(() => 'y=0').join('&')}&z=7`);
    assert.equal(ok.status, 200, '64 tiles are allowed');
  });

  test('needs a token', async () => {
    assertProblem(await t.call('GET', '/api/v1/stations/tile/?x=0&y=0&z=0'), 401, 'unauthorized');
  });

  test('accepted spellings: brackets, commas, 1/0 booleans', async () => {
    const plain = await tile('x=1&y=0&z=1');
    assert.equal(plain.status, 200, plain.text);
    assert.ok(plain.body.features.length > 0);
    assert.deepEqual((await tile('x[]=1&y[]=0&z=1')).body, plain.body);
    const pair = await tile('x=0&x=1&y=0&y=0&z=1');
    assert.equal(pair.status, 200);
    assert.deepEqual((await tile('x=0,1&y=0,0&z=1')).body, pair.body);
    assert.deepEqual((await tile('x[]=0&x[]=1&y=0,0&z=1')).body, pair.body);
    const available = await tile('x=1&y=0&z=1&only_available=true');
    assert.deepEqual((await tile('x=1&y=0&z=1&only_available=1')).body, available.body);
    assert.ok(sumCounts(available.body.features) < sumCounts(plain.body.features));
    assert.deepEqual((await tile('x=1&y=0&z=1&only_available=0')).body, plain.body);
    assert.deepEqual((await tile('x=1&y=0&z=1&only_available=false&only_partners=0')).body, plain.body);
    const partners = await tile('x=1&y=0&z=1&only_partners=1');
    assert.deepEqual((await tile('x=1&y=0&z=1&only_partners=true')).body, partners.body);
    assert.equal(sumCounts(partners.body.features), stations.filter((s) => s.partner && tileOf(s.lon, s.lat, 1).join() === '1,0').length);
    const tesla = await tile('x=0&x=1&y=0&y=0&z=1&connector_types=VENDOR_S');
    assert.deepEqual((await tile('x=0&x=1&y=0&y=0&z=1&connector_types=TESLA_S')).body, tesla.body);
    assert.equal(sumCounts(tesla.body.features), 13, 'the hand-made Tesla stations');
  });
});

// ---------------------------------------------------------------------------
// 4. Exact tiles of a small hand-made map

describe('exact tiles of hand-made stations', () => {
  let t2: TestContext;
  let token2: string;
  const ids = new Map<string, string>();
  // Near Berlin: S1-S3 within about 100 m, S4 and S5 about 700 m north-east, S6 some 4 km south-west.
  // Zoom 11: S1-S5 one cluster (S6 in the tile to the west); 13: [S1 S2 S3] and [S4 S5];
  // 14: [S1 S2 S3] still, S4 and S5 apart; 15: S1 alone and [S2 S3]; 16: all apart.
  type Name = 'S1' | 'S2' | 'S3' | 'S4' | 'S5' | 'S6' | 'S7';
  const POS: Record<Name, { lat: number; lon: number }> = {
    S1: { lat: 52.5204, lon: 13.4053 },
    S2: { lat: 52.5207, lon: 13.4061 },
    S3: { lat: 52.5202, lon: 13.4066 },
    S4: { lat: 52.526, lon: 13.409 },
    S5: { lat: 52.5265, lon: 13.4102 },
    S6: { lat: 52.49, lon: 13.355 },
    // Munich: run by party XYZ under the operator name of party ABC (white label).
    S7: { lat: 48.137, lon: 11.575 },
  };

  before(async () => {
    t2 = await setupTestApp();
    ({ token: token2 } = await t2.newClient());
    // AC2's off-peak price is below AC's, but its highest price (what the map shows) is above.
    const ac2 = ocpiTariff('AC2', 0.49);
    ac2.elements.unshift({
      price_components: [{ type: 'ENERGY', price: 0.35, vat: 19, step_size: 1 }],
      restrictions: { start_time: '22:00', end_time: '06:00' },
    });
    await t2.ingestion.ingest({
      parties: [
        { country_code: 'DE', party_id: 'ABC', name: 'Alpha Charge', phone: null, website: null },
        { country_code: 'DE', party_id: 'BVT', name: 'Beta Volt', phone: null, website: null },
        { country_code: 'DE', party_id: 'CER', name: 'Cerise', phone: null, website: null },
        { country_code: 'DE', party_id: 'PPW', name: 'Partner Power', phone: null, website: null },
        { country_code: 'DE', party_id: 'XYZ', name: 'Xylo Energy', phone: null, website: null },
      ],
      tariffs: [ocpiTariff('AC', 0.39), ac2, ocpiTariff('DC', 0.59, { party: 'BVT', flat: 0.5 }), ocpiTariff('PAC', 0.35, { party: 'PPW' })],
      locations: [
        ocpiLocation({
          id: 'S1',
          ...POS.S1,
          evses: [
            { kw: 22, tariff: 'AC' },
            { kw: 22, tariff: 'AC2', status: 'CHARGING' },
          ],
        }),
        ocpiLocation({ id: 'S2', party: 'BVT', ...POS.S2, evses: [{ kw: 150, standard: 'IEC_62196_T2_COMBO', status: 'CHARGING', tariff: 'DC' }] }),
        ocpiLocation({
          id: 'S3',
          party: 'CER',
          ...POS.S3,
          evses: [
            { kw: 75, standard: 'IEC_62196_T2_COMBO', status: 'OUTOFORDER' },
            { kw: 75, standard: 'IEC_62196_T2_COMBO', status: 'INOPERATIVE' },
          ],
        }),
        ocpiLocation({ id: 'S4', party: 'PPW', ...POS.S4, evses: [{ kw: 11, tariff: 'PAC', status: 'UNKNOWN' }] }),
        ocpiLocation({ id: 'S5', party: 'CER', ...POS.S5, evses: [{ kw: 11, status: 'OUTOFORDER' }] }),
        ocpiLocation({ id: 'S6', ...POS.S6, evses: [{ kw: 22, tariff: 'AC', extraConnector: { standard: 'TESLA_S', kw: 22 } }] }),
        ocpiLocation({ id: 'S7', party: 'XYZ', operator: 'Alpha Charge', ...POS.S7, evses: [{ kw: 22 }] }),
      ],
    });
    await stationsRepo.upsertPartner(t2.db, { name: 'Partner Power', logo_url: 'https://cdn.example.com/pp.png' }, new Date());
    await t2.catalogue.reload();
    const { rows } = await t2.db.query<{ station_id: string; id: string }>('SELECT station_id, id FROM ocpi_locations');
    for (const row of rows) ids.set(row.id, row.station_id);
  });
  after(() => t2?.close());

  const tiles = async (z: number, xy: [number, number][], query = ''): Promise<Feature[]> => {
    const res = await t2.call(
      'GET',
      `/api/v1/stations/tile/?z=${z}&${xy.map(([x]) => `x=${x}`).join('&')}&${xy.map(([, y]) => `y=${y}`).join('&')}${query ? `&${query}` : ''}`,
      { token: token2 },
    );
    assert.equal(res.status, 200, res.text);
    return res.body.features;
  };
  const cellId = (name: Name, z: number) => {
    const p = POS[name];
    const [cx, cy] = cellAt(mercX(p.lon), mercY(p.lat), z + 2);
    return `${z + 2}/${morton(cx, cy)}`;
  };
  const cluster = (count: number, expansion: number, coordinates: [string, string], speed: Speed, status: Status, id: string): Feature => ({
    type: 'Feature',
    geometry: { type: 'Point', coordinates },
    properties: { count, expansion_zoom: expansion, speed, status },
    cluster_id: id,
  });
  const station = (name: Name, party: string, speed: Speed, status: Status, price: string, partner = false): Feature => {
    const p = POS[name];
    return {
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [p.lon.toFixed(6), p.lat.toFixed(6)] },
      properties: { count: 1, speed, status, operator_id: `DE*${party}` },
      station_id: ids.get(name) as string,
      custom_properties: { is_partner: partner },
      price_properties: { price, type: 'charging_price', currency: 'EUR' },
    };
  };
  const S1 = () => station('S1', 'ABC', 'slow', 'free', '0.46');
  const S2 = () => station('S2', 'BVT', 'turbo', 'busy', '0.70');
  const S3 = () => station('S3', 'CER', 'fast', 'error', '0.70');
  const S4 = () => station('S4', 'PPW', 'slow', 'unknown', '0.42', true);
  const S5 = () => station('S5', 'CER', 'slow', 'error', '0.70');
  const S6 = () => station('S6', 'ABC', 'slow', 'free', '0.46');
  const byCount = (features: Feature[]) =>
    [...features].sort((a, b) => b.properties.count - a.properties.count || String(a.station_id).localeCompare(String(b.station_id)));

  test('the Morton helper agrees with hand-computed cell ids', () => {
    assert.equal(cellId('S1', 11), '13/25767849');
    assert.equal(cellId('S1', 13), '15/412285592');
    assert.equal(cellId('S2', 15), '17/6596569475');
  });

  test('zoom 13: [S1 S2 S3] is one cluster of 3 that splits at 15; [S4 S5] splits at 14', async () => {
    assert.deepEqual(tileOf(POS.S1.lon, POS.S1.lat, 13), [4401, 2686]);
    const features = await tiles(13, [[4401, 2686]]);
    assert.deepEqual(byCount(features), [
      cluster(3, 15, ['13.406000', '52.520433'], 'turbo', 'free', '15/412285592'),
      cluster(2, 14, ['13.409600', '52.526250'], 'slow', 'unknown', cellId('S4', 13)),
    ]);
  });

  test('zoom 14: the cluster of 3 is still one feature (same position, count, expansion); S4 and S5 are single', async () => {
    const [x, y] = tileOf(POS.S1.lon, POS.S1.lat, 14);
    assert.deepEqual(await tiles(14, [[x, y]]), [cluster(3, 15, ['13.406000', '52.520433'], 'turbo', 'free', cellId('S1', 14))]);
    const [x4, y4] = tileOf(POS.S4.lon, POS.S4.lat, 14);
    assert.deepEqual(byCount(await tiles(14, [[x4, y4]])), byCount([S4(), S5()]));
  });

  test('zoom 15: S1 alone and [S2 S3]; zoom 16: every station with its properties and price', async () => {
    const [x, y] = tileOf(POS.S1.lon, POS.S1.lat, 15);
    assert.deepEqual(byCount(await tiles(15, [[x, y]])), [cluster(2, 16, ['13.406350', '52.520450'], 'turbo', 'busy', '17/6596569475'), S1()]);
    const at16 = (['S1', 'S2', 'S3', 'S4', 'S5'] as const).map((name) => tileOf(POS[name].lon, POS[name].lat, 16));
    const unique = [...new Map(at16.map((xy) => [xy.join(), xy])).values()];
    assert.deepEqual(byCount(await tiles(16, unique)), byCount([S1(), S2(), S3(), S4(), S5()]));
  });

  test('zoom 11: cluster status and speed follow the members the filter keeps', async () => {
    const tile: [number, number] = [1100, 671];
    const coordinates = (names: Name[]): [string, string] => [
      (names.reduce((sum, n) => sum + POS[n].lon, 0) / names.length).toFixed(6),
      (names.reduce((sum, n) => sum + POS[n].lat, 0) / names.length).toFixed(6),
    ];
    assert.deepEqual(await tiles(11, [tile]), [cluster(5, 12, ['13.407440', '52.522760'], 'turbo', 'free', '13/25767849')]);
    const cases: [string, Feature][] = [
      [
        'operators=Beta%20Volt&operators=Cerise&operators=Partner%20Power',
        cluster(4, 12, coordinates(['S2', 'S3', 'S4', 'S5']), 'turbo', 'busy', '13/25767849'),
      ],
      ['operators=cerise,partner%20power', cluster(3, 12, coordinates(['S3', 'S4', 'S5']), 'fast', 'unknown', '13/25767849')],
      ['operators=CERISE', cluster(2, 12, coordinates(['S3', 'S5']), 'fast', 'error', '13/25767849')],
      ['power_groups=fast,turbo', cluster(2, 16, coordinates(['S2', 'S3']), 'turbo', 'busy', '13/25767849')],
      ['max_price=0.46', cluster(2, 12, coordinates(['S1', 'S4']), 'slow', 'free', '13/25767849')],
      ['max_price=0.5&only_partners=1', S4()],
      ['max_price=0.45', S4()],
      ['only_available=true', S1()],
      ['power_groups=turbo', S2()],
    ];
    for (const [query, expected] of cases) assert.deepEqual(await tiles(11, [tile], query), [expected], query);
    assert.deepEqual(await tiles(11, [tile], 'connector_types=VENDOR_S'), []);
    assert.deepEqual(await tiles(11, [tile], 'operators=Nobody'), []);
  });

  test('adjacent tiles in one call: S6 west of the cluster, each once; VENDOR_S finds the Tesla socket', async () => {
    const five = cluster(5, 12, ['13.407440', '52.522760'], 'turbo', 'free', '13/25767849');
    assert.deepEqual(
      await tiles(11, [
        [1099, 671],
        [1100, 671],
      ]),
      [S6(), five],
    );
    assert.deepEqual(
      await tiles(11, [
        [1100, 671],
        [1099, 671],
        [1100, 671],
      ]),
      [five, S6()],
    );
    assert.deepEqual(
      await tiles(
        11,
        [
          [1099, 671],
          [1100, 671],
        ],
        'connector_types=VENDOR_S',
      ),
      [S6()],
    );
    // At zoom 8 they share one tile: one cell for S1-S5, another for S6.
    const [x, y] = tileOf(POS.S1.lon, POS.S1.lat, 8);
    assert.deepEqual(tileOf(POS.S6.lon, POS.S6.lat, 8), [x, y]);
    assert.deepEqual(byCount(await tiles(8, [[x, y]])), byCount([cluster(5, 12, ['13.407440', '52.522760'], 'turbo', 'free', cellId('S1', 8)), S6()]));
  });

  test("operator_id is the station's own party, also when another party uses the same operator name", async () => {
    const [x, y] = tileOf(POS.S7.lon, POS.S7.lat, 16);
    assert.deepEqual(await tiles(16, [[x, y]]), [station('S7', 'XYZ', 'slow', 'free', '0.70')]);
    // The operator filter goes by name: S7 counts as Alpha Charge.
    assert.deepEqual(await tiles(16, [[x, y]], 'operators=Alpha%20Charge'), [station('S7', 'XYZ', 'slow', 'free', '0.70')]);
  });
});
