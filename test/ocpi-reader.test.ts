// The tolerant reader (src/ocpi-protocol/reader/): each named rule on the
// imperfect data real CPOs send, the ambiguous cases it refuses, and that what
// it takes is strictly valid 2.2.1.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readConnector, readEvse, readLocation } from '../src/ocpi-protocol/reader/location.ts';
import { type Finding, type Reading, RULES, type RuleName } from '../src/ocpi-protocol/reader/rules.ts';
import { readCdr, readSession, readSessionPatch } from '../src/ocpi-protocol/reader/session-cdr.ts';
import { readTariff } from '../src/ocpi-protocol/reader/tariff.ts';
import { parseCdr, parseLocation, parseSession, parseTariff } from '../src/ocpi-protocol/validate.ts';
import { ocpiLocation, ocpiTariff } from './stations-fixtures.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests build imperfect objects freely
type Loose = any;

const location = (): Loose => structuredClone(ocpiLocation({ id: 'LOC1', lat: 52.520008, lon: 13.404954, evses: [{}, {}] }));
const tariff = (): Loose => structuredClone(ocpiTariff('T1', 0.39));

function taken<T>(reading: Reading<T>): { value: T; rules: RuleName[]; findings: Finding[] } {
  assert.ok(reading.ok, `expected the object to be taken: ${reading.ok ? '' : reading.message}`);
  return { value: reading.value, rules: reading.findings.map((f) => f.rule), findings: reading.findings };
}

function refusedBy<T>(reading: Reading<T>, rule: RuleName, message?: RegExp): string {
  assert.equal(reading.ok, false, 'expected the object to be refused');
  assert.ok(!reading.ok);
  assert.equal(reading.findings.at(-1)?.rule, rule, JSON.stringify(reading.findings));
  if (message) assert.match(reading.message, message);
  return reading.message;
}

describe('the rule list', () => {
  it('names each rule once, as a normalization or a rejection, with what it says', () => {
    for (const [name, rule] of Object.entries(RULES)) {
      assert.match(name, /^[a-z0-9-]+$/);
      assert.ok(rule.kind === 'normalized' || rule.kind === 'rejected');
      assert.ok(rule.says.length > 10, name);
    }
  });
});

describe('Location reader', () => {
  it('takes a valid Location as it is, with no finding', () => {
    const { value, findings } = taken(readLocation(location()));
    assert.deepEqual(findings, []);
    assert.deepEqual(value, location());
  });

  it('coordinates-precision: 4 decimals, a decimal comma, numbers and 9 decimals become 5 to 7 decimals', () => {
    const cases: [unknown, unknown, string, string][] = [
      ['52.5200', '13.4049', '52.52000', '13.40490'],
      ['52,52', '13,405', '52.52000', '13.40500'],
      [52.52, 13.405, '52.52000', '13.40500'],
      ['52.520008123', '-13.404954987', '52.5200081', '-13.4049550'],
      ['+52.5', '13', '52.50000', '13.00000'],
    ];
    for (const [latitude, longitude, lat, lon] of cases) {
      const raw = { ...location(), coordinates: { latitude, longitude } };
      const { value, findings } = taken(readLocation(raw));
      assert.deepEqual(value.coordinates, { latitude: lat, longitude: lon });
      assert.deepEqual(
        findings.map((f) => f.rule),
        ['coordinates-precision'],
      );
      assert.ok(parseLocation(value).ok);
    }
  });

  it('no-coordinates: missing, not numbers, out of range, or 0,0 refuse the Location', () => {
    for (const coordinates of [
      undefined,
      {},
      { latitude: 'north', longitude: '13.4' },
      { latitude: '91.0', longitude: '13.4' },
      { latitude: '0', longitude: '0.0' },
    ]) {
      const raw = location();
      if (coordinates === undefined) delete raw.coordinates;
      else raw.coordinates = coordinates;
      refusedBy(readLocation(raw), 'no-coordinates', /\/coordinates/);
    }
  });

  it('time-zone-derived: a missing, empty or non-IANA time_zone comes from the coordinates', () => {
    for (const time_zone of [undefined, '', 'CEST', '+01:00', 'Berlin']) {
      const raw = location();
      if (time_zone === undefined) delete raw.time_zone;
      else raw.time_zone = time_zone;
      const { value, rules } = taken(readLocation(raw));
      assert.equal(value.time_zone, 'Europe/Berlin');
      assert.ok(rules.includes('time-zone-derived'), `${time_zone}: ${rules}`);
    }
    const canary = { ...location(), country: 'ESP', coordinates: { latitude: '28.12355', longitude: '-15.43627' } };
    delete canary.time_zone;
    assert.equal(taken(readLocation(canary)).value.time_zone, 'Atlantic/Canary');
    const spelled = taken(readLocation({ ...location(), time_zone: 'europe/berlin' }));
    assert.equal(spelled.value.time_zone, 'Europe/Berlin');
    assert.deepEqual(spelled.rules, ['enum-case']);
  });

  it("no-time-zone: at sea in a country of several zones (or none we know), the zone is refused, not guessed; a single-zone country's zone is taken", () => {
    // Near a border, the country decides: a Dutch station whose coordinates fall just inside Germany is on Amsterdam's clock.
    const border = { ...location(), country: 'NLD', coordinates: { latitude: '51.84000', longitude: '6.10000' } };
    delete border.time_zone;
    assert.equal(taken(readLocation(border)).value.time_zone, 'Europe/Amsterdam');
    const atSea = { ...location(), country: 'ESP', coordinates: { latitude: '47.00000', longitude: '-20.00000' } };
    delete atSea.time_zone;
    refusedBy(readLocation(atSea), 'no-time-zone', /time_zone/);
    refusedBy(readLocation({ ...atSea, country: 'XXX' }), 'no-time-zone');
    const german = taken(readLocation({ ...atSea, country: 'DEU' }));
    assert.equal(german.value.time_zone, 'Europe/Berlin');
  });

  it('period-end-24h: a regular-hours period ending 24:00 ends at 23:59; time-format fixes 8:00 and 08:00:00', () => {
    const raw = {
      ...location(),
      opening_times: {
        twentyfourseven: false,
        regular_hours: [
          { weekday: 1, period_begin: '8:00', period_end: '24:00' },
          { weekday: 2, period_begin: '08:00:00', period_end: '20:00' },
        ],
      },
    };
    const { value, rules } = taken(readLocation(raw));
    assert.deepEqual(value.opening_times?.regular_hours, [
      { weekday: 1, period_begin: '08:00', period_end: '23:59' },
      { weekday: 2, period_begin: '08:00', period_end: '20:00' },
    ]);
    assert.deepEqual(rules.sort(), ['period-end-24h', 'time-format', 'time-format']);
  });

  it('empty-string-as-absent and null-as-absent: optional fields and tariff id entries sent as "" or null are absent', () => {
    const raw = location();
    raw.postal_code = '';
    raw.state = null;
    raw.evses[0].evse_id = '';
    raw.evses[0].physical_reference = '';
    raw.evses[0].connectors[0].tariff_ids = ['', 'T1', null];
    const { value, rules } = taken(readLocation(raw));
    assert.equal('postal_code' in value, false);
    assert.equal('state' in value, false);
    assert.equal('evse_id' in (value.evses?.[0] ?? {}), false);
    assert.deepEqual(value.evses?.[0]?.connectors[0]?.tariff_ids, ['T1']);
    assert.deepEqual(rules.sort(), [
      'empty-string-as-absent',
      'empty-string-as-absent',
      'empty-string-as-absent',
      'empty-string-as-absent',
      'null-as-absent',
      'null-as-absent',
    ]);
    // A required id sent as "" is no id.
    refusedBy(readLocation({ ...location(), id: '' }), 'no-id');
  });

  it('unknown-status, enum-case, unknown-enum-kept: statuses and enums outside 2.2.1 do not refuse the Location', () => {
    const raw = location();
    raw.evses[0].status = 'FAULTED';
    raw.evses[1].status = 'available';
    raw.evses[1].connectors[0].standard = 'NACS';
    raw.evses[1].connectors[0].format = 'cable';
    raw.evses[0].capabilities = ['REMOTE_START_STOP_CAPABLE', 'V2G_CAPABLE'];
    raw.facilities = ['CAFE', 'EV_LOUNGE'];
    raw.parking_type = 'PARKING_DECK';
    raw.x_vendor = { anything: true };
    raw.evses[0].status_schedule = [
      { period_begin: '2026-01-01T00:00:00Z', status: 'MAINTENANCE' },
      { period_begin: '2026-01-02T00:00:00Z', status: 'AVAILABLE' },
    ];
    const { value, findings } = taken(readLocation(raw));
    assert.equal(value.evses?.[0]?.status, 'UNKNOWN');
    assert.equal(value.evses?.[1]?.status, 'AVAILABLE');
    assert.equal(value.evses?.[1]?.connectors[0]?.standard, 'NACS');
    assert.equal(value.evses?.[1]?.connectors[0]?.format, 'CABLE');
    assert.deepEqual(value.facilities, ['CAFE', 'EV_LOUNGE']);
    assert.equal((value as Loose).x_vendor.anything, true, 'extra fields are kept');
    assert.equal(value.evses?.[0]?.status_schedule?.length, 1);
    const byRule = (rule: RuleName) => findings.filter((f) => f.rule === rule).map((f) => `${f.path} ${f.detail ?? ''}`.trim());
    assert.deepEqual(byRule('unknown-status'), ['/evses/0/status "FAULTED" -> "UNKNOWN"']);
    assert.deepEqual(byRule('enum-case').sort(), ['/evses/1/connectors/0/format "cable" -> "CABLE"', '/evses/1/status "available" -> "AVAILABLE"']);
    assert.deepEqual(byRule('unknown-enum-kept').sort(), [
      '/evses/0/capabilities/1 "V2G_CAPABLE"',
      '/evses/1/connectors/0/standard "NACS"',
      '/facilities/1 "EV_LOUNGE"',
      '/parking_type "PARKING_DECK"',
    ]);
    assert.deepEqual(byRule('unknown-enum-dropped'), ['/evses/0/status_schedule/0/status "MAINTENANCE"']);
  });

  it('refuses per part: an EVSE without uid, with no usable connector, or twice is left out, the Location and its other EVSEs are taken', () => {
    const raw = location();
    const extra = structuredClone(raw.evses[0]);
    const third = structuredClone(raw.evses[0]);
    const fourth = structuredClone(raw.evses[1]);
    delete raw.evses[0].uid;
    extra.uid = 'LOC1-3';
    extra.connectors[0].power_type = 'AC_4_PHASE';
    third.uid = 'LOC1-2';
    fourth.uid = 'LOC1-4';
    fourth.connectors.push({ ...fourth.connectors[0] });
    raw.evses.push(extra, third, fourth);
    const { value, findings } = taken(readLocation(raw));
    assert.deepEqual(
      value.evses?.map((e) => e.uid),
      ['LOC1-2', 'LOC1-4'],
    );
    assert.equal(value.evses?.[1]?.connectors.length, 1, 'the repeated connector id is left out');
    const refusals = findings.filter((f) => RULES[f.rule].kind === 'rejected').map((f) => `${f.rule} ${f.part}`);
    assert.deepEqual(refusals, [
      'no-evse-uid DE*ABC*ELOC11',
      'unknown-enum-refused LOC1-3/1',
      'evse-without-connectors LOC1-3',
      'duplicate-uid LOC1-2',
      'duplicate-uid LOC1-4/1',
    ]);
    assert.ok(parseLocation(value).ok);
  });

  it('text-truncated and display-field-dropped: a long address is cut, invalid descriptive fields are left out', () => {
    const raw = { ...location(), address: 'A'.repeat(60), postal_code: '1234567890123', directions: [{ text: 'left' }] };
    const { value, rules } = taken(readLocation(raw));
    assert.equal(value.address, 'A'.repeat(45));
    assert.equal('postal_code' in value, false);
    assert.equal('directions' in value, false);
    assert.deepEqual(rules.sort(), ['display-field-dropped', 'display-field-dropped', 'text-truncated']);
  });

  it('date-time-format and number-as-string: near-miss date-times are the same instant in UTC, numeric strings numbers', () => {
    const raw = location();
    raw.last_updated = '2026-03-01 10:00:00+0100';
    raw.evses[0].last_updated = '2026-03-01T10:00';
    raw.evses[0].connectors[0].max_voltage = '400';
    const { value, rules } = taken(readLocation(raw));
    assert.equal(value.last_updated, '2026-03-01T09:00:00.000Z');
    assert.equal(value.evses?.[0]?.last_updated, '2026-03-01T10:00:00.000Z');
    assert.equal(value.evses?.[0]?.connectors[0]?.max_voltage, 400);
    assert.deepEqual(rules.sort(), ['date-time-format', 'date-time-format', 'number-as-string']);
    // A fractional voltage is no integer: refused with its connector, not rounded.
    const bad = location();
    bad.evses[0].connectors[0].max_voltage = '400.5';
    assert.deepEqual(
      taken(readLocation(bad)).value.evses?.map((e) => e.uid),
      ['LOC1-2'],
    );
  });

  it('invalid: what still fails 2.2.1 refuses the Location and names the field; the input is never changed', () => {
    const raw = { ...location(), publish: 'yes' };
    const before = structuredClone(raw);
    refusedBy(readLocation(raw), 'invalid', /\/publish must be boolean/);
    assert.deepEqual(raw, before);
    refusedBy(readLocation([location()]), 'invalid');
  });

  it('reads an EVSE and a Connector pushed on their own', () => {
    const evse = location().evses[0];
    evse.status = 'Charging';
    assert.equal(taken(readEvse(evse)).value.status, 'CHARGING');
    refusedBy(readEvse({ ...evse, uid: '' }), 'no-evse-uid');
    const connector = evse.connectors[0];
    assert.deepEqual(taken(readConnector({ ...connector, terms_and_conditions: '' }, 'E1')).rules, ['empty-string-as-absent']);
    const wrong = readConnector({ ...connector, format: 'PLUG' }, 'E1');
    assert.equal(refusedBy(wrong, 'unknown-enum-refused'), '/format is not a 2.2.1 value ("PLUG")');
  });
});

describe('Tariff reader', () => {
  it('vat-fraction: 0.21 is 21 %, exactly; 21 stays 21', () => {
    const raw = tariff();
    raw.elements[0].price_components[0].vat = 0.21;
    const { value, findings } = taken(readTariff(raw));
    assert.equal(value.elements[0]?.price_components[0]?.vat, 21);
    assert.deepEqual(findings, [{ rule: 'vat-fraction', path: '/elements/0/price_components/0/vat', detail: '0.21 -> 21' }]);
    const seven = tariff();
    seven.elements[0].price_components[0].vat = 0.07;
    assert.equal(taken(readTariff(seven)).value.elements[0]?.price_components[0]?.vat, 7, '0.07 * 100 is 7, not 7.000000000000001');
    const percent = tariff();
    percent.elements[0].price_components[0].vat = 21;
    assert.deepEqual(taken(readTariff(percent)).findings, []);
  });

  it('vat-ambiguous: a VAT under 1 that is no plausible fraction refuses the tariff (0.5 %? 50 %?)', () => {
    for (const vat of [0.005, 0.5, 0.99]) {
      const raw = tariff();
      raw.elements[0].price_components[0].vat = vat;
      refusedBy(readTariff(raw), 'vat-ambiguous', /vat/);
    }
    const zero = tariff();
    zero.elements[0].price_components[0].vat = 0;
    assert.deepEqual(taken(readTariff(zero)).findings, [], '0 % is a VAT');
  });

  it('end-time-24h: a restriction ending 24:00 ends at 00:00 (OCPI: end of day)', () => {
    const raw = tariff();
    raw.elements[0].restrictions = { start_time: '18:00', end_time: '24:00' };
    const { value, rules } = taken(readTariff(raw));
    assert.equal(value.elements[0]?.restrictions?.end_time, '00:00');
    assert.deepEqual(rules, ['end-time-24h']);
  });

  it('unknown-enum-refused: an unknown dimension or weekday refuses the tariff; an unknown tariff type is kept', () => {
    const dimension = tariff();
    dimension.elements[0].price_components[0].type = 'KWH';
    refusedBy(readTariff(dimension), 'unknown-enum-refused', /dimension/);
    const day = tariff();
    day.elements[0].restrictions = { day_of_week: ['MONDAY', 'HOLIDAY'] };
    refusedBy(readTariff(day), 'unknown-enum-refused', /day of the week/);
    const lower = tariff();
    lower.elements[0].restrictions = { day_of_week: ['monday'] };
    assert.deepEqual(taken(readTariff(lower)).value.elements[0]?.restrictions?.day_of_week, ['MONDAY']);
    const type = { ...tariff(), type: 'PROFILE_SOLAR' };
    assert.deepEqual(taken(readTariff(type)).rules, ['unknown-enum-kept']);
    assert.ok(parseTariff(taken(readTariff(type)).value).ok);
  });
});

const session = (): Loose => ({
  country_code: 'DE',
  party_id: 'ABC',
  id: 'S1',
  start_date_time: '2026-03-01T10:00:00Z',
  kwh: 1.5,
  cdr_token: { country_code: 'DE', party_id: 'CAX', uid: 'TOKEN-UID', type: 'APP_USER', contract_id: 'DE-CAX-C1' },
  auth_method: 'COMMAND',
  location_id: 'LOC1',
  evse_uid: 'LOC1-1',
  connector_id: '1',
  currency: 'EUR',
  status: 'ACTIVE',
  last_updated: '2026-03-01T10:05:00Z',
});

describe('Session and CDR readers', () => {
  it('takes a Session with "" optional ids, a status in lower case and a kWh as a string; details under cdr_token are never shown', () => {
    const raw = { ...session(), meter_id: '', authorization_reference: '', status: 'active', kwh: '1.5' };
    raw.cdr_token.type = 'app_user';
    const { value, findings } = taken(readSession(raw));
    assert.equal(value.status, 'ACTIVE');
    assert.equal(value.kwh, 1.5);
    assert.equal('meter_id' in value, false);
    assert.equal('authorization_reference' in value, false);
    const tokenFinding = findings.find((f) => f.path === '/cdr_token/type');
    assert.deepEqual(tokenFinding, { rule: 'enum-case', path: '/cdr_token/type' });
    assert.ok(parseSession(value).ok);
  });

  it('refuses a Session whose status or auth method is outside 2.2.1, or without id', () => {
    refusedBy(readSession({ ...session(), status: 'SUSPENDED' }), 'unknown-enum-refused', /status "SUSPENDED"/);
    refusedBy(readSession({ ...session(), auth_method: 'APP' }), 'unknown-enum-refused');
    refusedBy(readSession({ ...session(), id: '' }), 'no-id');
    refusedBy(readSessionPatch({ status: 'PAUSED', last_updated: '2026-03-01T10:06:00Z' }), 'unknown-enum-refused');
    assert.deepEqual(taken(readSessionPatch({ kwh: '2', last_updated: '2026-03-01T10:06:00Z' })).value, { kwh: 2, last_updated: '2026-03-01T10:06:00Z' });
  });

  it("takes a CDR with 4-decimal coordinates and a tariff's VAT as a fraction; refuses one whose tariff's VAT is ambiguous", () => {
    const cdr: Loose = {
      country_code: 'DE',
      party_id: 'ABC',
      id: 'CDR1',
      start_date_time: '2026-03-01T10:00:00Z',
      end_date_time: '2026-03-01T11:00:00Z',
      cdr_token: session().cdr_token,
      auth_method: 'COMMAND',
      cdr_location: {
        id: 'LOC1',
        address: 'Street 1',
        city: 'Berlin',
        country: 'DEU',
        coordinates: { latitude: '52.5200', longitude: '13.4049' },
        evse_uid: 'LOC1-1',
        evse_id: 'DE*ABC*E1',
        connector_id: '1',
        connector_standard: 'IEC_62196_T2',
        connector_format: 'CABLE',
        connector_power_type: 'AC_3_PHASE',
      },
      currency: 'EUR',
      tariffs: [{ ...tariff(), elements: [{ price_components: [{ type: 'ENERGY', price: 0.39, vat: 0.19, step_size: 1 }] }] }],
      charging_periods: [{ start_date_time: '2026-03-01T10:00:00Z', dimensions: [{ type: 'ENERGY', volume: 10 }] }],
      total_cost: { excl_vat: 3.9, incl_vat: 4.64 },
      total_energy: 10,
      total_time: 1,
      invoice_reference_id: '',
      last_updated: '2026-03-01T11:00:00Z',
    };
    const { value, rules } = taken(readCdr(cdr));
    assert.deepEqual(value.cdr_location.coordinates, { latitude: '52.52000', longitude: '13.40490' });
    assert.equal(value.tariffs?.[0]?.elements[0]?.price_components[0]?.vat, 19);
    assert.deepEqual(rules.sort(), ['coordinates-precision', 'empty-string-as-absent', 'vat-fraction']);
    assert.ok(parseCdr(value).ok);
    const ambiguous = structuredClone(cdr);
    ambiguous.tariffs[0].elements[0].price_components[0].vat = 0.5;
    refusedBy(readCdr(ambiguous), 'vat-ambiguous', /^CDR: \/tariffs\/0\/elements\/0\/price_components\/0\/vat/);
  });
});
