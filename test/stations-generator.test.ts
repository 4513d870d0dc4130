// The charging-station dataset generator: deterministic, well-formed OCPI 2.2.1
// objects, internally consistent references, and a realistic shape (clustered
// around cities, mostly available EVSEs, a mix of AC, DC and domestic outlets).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { type GeneratedCatalogue, generateCatalogue } from '../src/dataset/generator.ts';
import { CITIES } from '../src/dataset/generator-data.ts';
import { OcpiLocation, OcpiTariff } from '../src/ocpi-protocol/locations-tariffs.ts';
import { countryByAlpha2, countryByAlpha3 } from '../src/platform/european-countries.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsImport as unknown as { default?: typeof addFormatsImport }).default ?? addFormatsImport) as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
const validLocation = ajv.compile(OcpiLocation);
const validTariff = ajv.compile(OcpiTariff);

function allLocations(catalogue: GeneratedCatalogue): OcpiLocation[] {
  const result: OcpiLocation[] = [];
  for (const batch of catalogue.locations()) result.push(...batch);
  return result;
}

function kindOf(connector: { standard: string; power_type: string; max_electric_power?: number }): string {
  if (connector.standard.startsWith('DOMESTIC_')) return 'DOM';
  if (connector.power_type !== 'DC') return 'AC';
  return (connector.max_electric_power ?? 0) >= 150_000 ? 'HPC' : 'DC';
}

function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(h));
}

describe('determinism', () => {
  test('the same options give byte-identical parties, tariffs and locations', () => {
    const dump = (c: GeneratedCatalogue) => JSON.stringify({ parties: c.parties, tariffs: c.tariffs, locations: allLocations(c) });
    const first = dump(generateCatalogue({ locations: 2000, seed: 1234 }));
    const second = dump(generateCatalogue({ locations: 2000, seed: 1234 }));
    assert.equal(first, second);
  });

  test('a smaller catalogue is a prefix of a larger one with the same seed', () => {
    const small = allLocations(generateCatalogue({ locations: 700, seed: 77 }));
    const large = allLocations(generateCatalogue({ locations: 1200, seed: 77 })).slice(0, 700);
    assert.equal(JSON.stringify(small), JSON.stringify(large));
  });

  test('locations() starts again from the first location on every call', () => {
    const catalogue = generateCatalogue({ locations: 1500, seed: 5 });
    assert.equal(JSON.stringify(allLocations(catalogue)), JSON.stringify(allLocations(catalogue)));
  });

  test('a different seed gives different data', () => {
    const a = generateCatalogue({ locations: 300, seed: 1 });
    const b = generateCatalogue({ locations: 300, seed: 2 });
    assert.notEqual(JSON.stringify(allLocations(a)), JSON.stringify(allLocations(b)));
    assert.notEqual(JSON.stringify(a.tariffs), JSON.stringify(b.tariffs));
  });

  test('last_updated is the given now, 2026-01-01T00:00:00Z by default', () => {
    const [first] = allLocations(generateCatalogue({ locations: 1, seed: 1 }));
    assert.equal(first?.last_updated, '2026-01-01T00:00:00.000Z');
    const now = new Date('2026-03-04T05:06:07Z');
    const catalogue = generateCatalogue({ locations: 1, seed: 1, now });
    const [location] = allLocations(catalogue);
    assert.equal(location?.last_updated, now.toISOString());
    assert.equal(location?.evses?.[0]?.connectors[0]?.last_updated, now.toISOString());
    assert.ok(catalogue.tariffs.every((t) => t.last_updated === now.toISOString()));
  });

  test('invalid options are refused', () => {
    assert.throws(() => generateCatalogue({ locations: -1, seed: 1 }), RangeError);
    assert.throws(() => generateCatalogue({ locations: 1.5, seed: 1 }), RangeError);
    assert.throws(() => generateCatalogue({ locations: 1, seed: Number.NaN }), RangeError);
  });
});

describe('batches', () => {
  test('exact count in lazy batches of at most 1000', () => {
    const sizes = [...generateCatalogue({ locations: 2345, seed: 9 }).locations()].map((b) => b.length);
    assert.deepEqual(sizes, [1000, 1000, 345]);
    assert.deepEqual([...generateCatalogue({ locations: 0, seed: 9 }).locations()], []);
  });
});

describe('a catalogue of 5,000 locations', () => {
  let catalogue: GeneratedCatalogue;
  let locations: OcpiLocation[];
  const tariffKey = (cc: string, party: string, id: string) => `${cc}/${party}/${id}`;

  before(() => {
    catalogue = generateCatalogue({ locations: 5000, seed: 42 });
    locations = allLocations(catalogue);
  });

  test('exact number of locations', () => {
    assert.equal(locations.length, 5000);
  });

  test('every location and tariff validates against the OCPI schemas', () => {
    for (const location of locations) assert.ok(validLocation(location), `${location.id}: ${ajv.errorsText(validLocation.errors)}`);
    assert.ok(catalogue.tariffs.length > 0);
    for (const tariff of catalogue.tariffs) assert.ok(validTariff(tariff), `${tariff.id}: ${ajv.errorsText(validTariff.errors)}`);
    // The validators do reject malformed objects (so passing means something).
    const broken = structuredClone(locations[0]);
    assert.ok(broken);
    broken.coordinates.latitude = '52.5';
    assert.equal(validLocation(broken), false);
    const badTariff = structuredClone(catalogue.tariffs[0]);
    assert.ok(badTariff);
    badTariff.currency = 'euro';
    assert.equal(validTariff(badTariff), false);
  });

  test('location ids and evse_ids are unique; EVSE uids unique within their location', () => {
    assert.equal(new Set(locations.map((l) => l.id)).size, locations.length);
    const evseIds = new Set<string>();
    let evses = 0;
    for (const location of locations) {
      const uids = new Set<string>();
      for (const evse of location.evses ?? []) {
        evses++;
        uids.add(evse.uid);
        assert.match(evse.evse_id ?? '', new RegExp(`^${location.country_code}\\*${location.party_id}\\*E[0-9]+$`));
        evseIds.add(evse.evse_id ?? '');
        assert.deepEqual(
          evse.connectors.map((c) => c.id),
          evse.connectors.map((_, i) => String(i + 1)),
        );
      }
      assert.equal(uids.size, location.evses?.length);
    }
    assert.equal(evseIds.size, evses);
  });

  test('parties are unique, 30-60 of them, with fictional .example websites', () => {
    const keys = new Set(catalogue.parties.map((p) => `${p.country_code}/${p.party_id}`));
    assert.equal(keys.size, catalogue.parties.length);
    assert.ok(catalogue.parties.length >= 30 && catalogue.parties.length <= 60, `${catalogue.parties.length} parties`);
    for (const party of catalogue.parties) {
      assert.ok(countryByAlpha2(party.country_code), party.country_code);
      assert.match(party.party_id, /^[A-Z0-9]{3}$/);
      assert.match(party.phone, /^\+[0-9]{1,3}( [0-9]+)+$/);
      assert.match(party.website, /^https:\/\/www\.[a-z0-9-]+\.example$/);
    }
    const partyKeys = new Set(locations.map((l) => `${l.country_code}/${l.party_id}`));
    for (const key of partyKeys) assert.ok(keys.has(key), `location party ${key} is listed`);
  });

  test('tariffs: unique per party, currency and VAT of their country, sensible prices and step sizes', () => {
    const keys = new Set(catalogue.tariffs.map((t) => tariffKey(t.country_code, t.party_id, t.id)));
    assert.equal(keys.size, catalogue.tariffs.length);
    let restricted = 0;
    let blocking = 0;
    for (const tariff of catalogue.tariffs) {
      const country = countryByAlpha2(tariff.id.slice(-2));
      assert.ok(country, `${tariff.id} names its country`);
      assert.equal(tariff.currency, country.currency);
      const wholeUnits = tariff.currency === 'HUF' || tariff.currency === 'ISK';
      const last = tariff.elements.at(-1);
      assert.equal(last?.restrictions, undefined, `${tariff.id}: the last element is the unrestricted default`);
      assert.ok(
        last?.price_components.some((c) => c.type === 'ENERGY'),
        `${tariff.id}: ENERGY in the default element`,
      );
      for (const element of tariff.elements) {
        if (element.restrictions) restricted++;
        for (const component of element.price_components) {
          assert.equal(component.vat, Number(country.vat));
          assert.equal(component.step_size, { ENERGY: 1, FLAT: 0, TIME: 60, PARKING_TIME: 60 }[component.type]);
          assert.ok(component.price > 0);
          const scaled = wholeUnits ? component.price : component.price * 100;
          assert.ok(
            Math.abs(scaled - Math.round(scaled)) < 1e-9,
            `${tariff.id}: ${component.price} ${tariff.currency} has at most ${wholeUnits ? 0 : 2} decimals`,
          );
          if (component.type === 'PARKING_TIME') {
            blocking++;
            assert.ok((element.restrictions?.min_duration ?? 0) >= 45 * 60, `${tariff.id}: blocking fee starts after a minimum duration (seconds)`);
          }
        }
      }
      if (tariff.currency === 'EUR') {
        const energy = last?.price_components.find((c) => c.type === 'ENERGY')?.price ?? 0;
        assert.ok(energy >= 0.25 && energy <= 0.9, `${tariff.id}: ${energy} EUR/kWh`);
      }
    }
    assert.ok(restricted > catalogue.tariffs.length / 5, 'restricted elements are common');
    assert.ok(blocking > 0);
    assert.ok(catalogue.tariffs.some((t) => t.elements.some((e) => e.restrictions?.start_time === '22:00')));
    assert.ok(catalogue.tariffs.some((t) => t.elements.some((e) => e.restrictions?.day_of_week)));
    assert.ok(catalogue.tariffs.some((t) => t.max_price));
    assert.ok(catalogue.tariffs.some((t) => t.elements.some((e) => e.price_components.some((c) => c.type === 'FLAT'))));
    assert.ok(new Set(catalogue.tariffs.map((t) => t.currency)).size >= 8, 'several currencies');
  });

  test('each connector references exactly one tariff of its own party, of its kind and country; some operators publish none', () => {
    const tariffs = new Map(catalogue.tariffs.map((t) => [tariffKey(t.country_code, t.party_id, t.id), t]));
    let withoutTariff = 0;
    for (const location of locations) {
      const country = countryByAlpha3(location.country);
      assert.ok(country, location.country);
      const connectors = (location.evses ?? []).flatMap((e) => e.connectors);
      const missing = connectors.filter((c) => c.tariff_ids === undefined).length;
      assert.ok(missing === 0 || missing === connectors.length, `${location.id}: an operator publishes tariffs for all or none of its connectors`);
      if (missing > 0) withoutTariff++;
      for (const connector of connectors) {
        if (connector.tariff_ids === undefined) continue;
        assert.equal(connector.tariff_ids.length, 1);
        const tariff = tariffs.get(tariffKey(location.country_code, location.party_id, connector.tariff_ids[0] ?? ''));
        assert.ok(tariff, `${location.id}: tariff ${connector.tariff_ids[0]} of ${location.party_id} exists`);
        assert.equal(tariff.currency, country.currency);
        assert.ok(tariff.id.startsWith(`${kindOf(connector)}-`), `${location.id}: ${connector.standard} ${connector.max_electric_power} W uses ${tariff.id}`);
      }
    }
    const share = withoutTariff / locations.length;
    assert.ok(share > 0.01 && share < 0.1, `share of locations without tariffs: ${share}`);
  });

  test('around 3.3 EVSEs per location, mostly AVAILABLE', () => {
    const evses = locations.flatMap((l) => l.evses ?? []);
    const average = evses.length / locations.length;
    assert.ok(average >= 2.5 && average <= 4.5, `average ${average}`);
    assert.ok(
      locations.every((l) => (l.evses?.length ?? 0) >= 1),
      'every location has an EVSE',
    );
    const statuses = new Map<string, number>();
    for (const e of evses) statuses.set(e.status, (statuses.get(e.status) ?? 0) + 1);
    const ranked = [...statuses].sort((a, b) => b[1] - a[1]);
    assert.equal(ranked[0]?.[0], 'AVAILABLE');
    assert.equal(ranked[1]?.[0], 'CHARGING');
    const available = (statuses.get('AVAILABLE') ?? 0) / evses.length;
    assert.ok(available > 0.55 && available < 0.75, `AVAILABLE share ${available}`);
  });

  test('connector ratings are consistent and the hardware mix is realistic', () => {
    const connectors = locations.flatMap((l) => (l.evses ?? []).flatMap((e) => e.connectors));
    for (const c of connectors) {
      const power = c.max_electric_power ?? 0;
      if (c.power_type === 'AC_3_PHASE') assert.equal(power, Math.round(c.max_voltage * c.max_amperage * Math.sqrt(3)));
      else if (c.power_type === 'AC_1_PHASE') assert.equal(power, c.max_voltage * c.max_amperage);
      else {
        assert.equal(c.power_type, 'DC');
        assert.equal(power % 1000, 0);
        assert.ok(c.max_voltage >= 400 && c.max_voltage <= 1000);
        assert.ok(c.max_voltage * c.max_amperage >= power, `${c.max_voltage} V x ${c.max_amperage} A carries ${power} W`);
      }
    }
    assert.ok(connectors.some((c) => c.standard === 'IEC_62196_T2_COMBO' && (c.max_electric_power ?? 0) >= 150_000));
    assert.ok(connectors.some((c) => c.standard === 'CHADEMO'));
    assert.ok(connectors.some((c) => c.standard === 'DOMESTIC_F'));
    assert.ok(connectors.some((c) => c.standard === 'DOMESTIC_E'));
    assert.ok(connectors.some((c) => c.standard === 'DOMESTIC_G'));
    const ac = connectors.filter((c) => c.standard === 'IEC_62196_T2').length;
    assert.ok(ac > connectors.length / 2, 'Type 2 AC is the most common connector');
  });

  test('coordinates lie in Europe, clustered around the cities of the table', () => {
    let nearCity = 0;
    for (const location of locations) {
      const lat = Number(location.coordinates.latitude);
      const lon = Number(location.coordinates.longitude);
      assert.match(location.coordinates.latitude, /^-?[0-9]{1,2}\.[0-9]{6}$/);
      assert.match(location.coordinates.longitude, /^-?[0-9]{1,3}\.[0-9]{6}$/);
      assert.ok(lat >= 34 && lat <= 72 && lon >= -25 && lon <= 45, `${location.id} at ${lat},${lon}`);
      if (CITIES.some(([, , cLat, cLon]) => distanceKm(lat, lon, cLat, cLon) <= 30)) nearCity++;
    }
    const share = nearCity / locations.length;
    assert.ok(share >= 0.75, `share within 30 km of a city: ${share}`);
  });

  test('countries, operators, time zones and opening hours', () => {
    const countries = new Set(locations.map((l) => l.country));
    const operators = new Set(locations.map((l) => `${l.country_code}/${l.party_id}`));
    assert.ok(countries.size >= 8, `${countries.size} countries`);
    assert.ok(operators.size >= 20, `${operators.size} operators`);
    for (const location of locations) assert.equal(location.time_zone, countryByAlpha3(location.country)?.timeZone);
    const regular = locations.filter((l) => l.opening_times?.twentyfourseven === false);
    const share = regular.length / locations.length;
    assert.ok(share > 0.1 && share < 0.35, `share with regular hours: ${share}`);
    for (const location of regular) assert.ok((location.opening_times?.regular_hours?.length ?? 0) > 0);
  });
});
