// The OCPI 2.2.1 object schemas (src/ocpi-protocol/*.ts) and their validators: a valid
// object of every kind passes (extra properties included, peers may extend),
// and missing required fields, unknown enum values, over-long strings and
// wrong types are refused with the path of the offending value. Also the
// opt-in recorder, and the CI check against the official OpenAPI run on a
// small stand-in OpenAPI written here (the real one is never read by tests).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { COMMAND_RESULT_TYPES, COMMAND_TYPES } from '../src/ocpi-protocol/commands.ts';
import { ROLES } from '../src/ocpi-protocol/credentials.ts';
import { AUTH_METHODS, CDR_DIMENSION_TYPES, SESSION_STATUSES } from '../src/ocpi-protocol/sessions.ts';
import { ALLOWED_TYPES, TOKEN_TYPES, WHITELIST_TYPES } from '../src/ocpi-protocol/tokens.ts';
import {
  type OcpiParser,
  parseAuthorizationInfo,
  parseCdr,
  parseCommandResponse,
  parseCommandResult,
  parseCredentials,
  parseSession,
  parseSessionPatch,
  parseStartSession,
  parseStopSession,
  parseToken,
  parseTokenPatch,
  parseVersionDetails,
  parseVersions,
  recordOcpiMessage,
  setOcpiRecorder,
  validator,
} from '../src/ocpi-protocol/validate.ts';
import { INTERFACE_ROLES, MODULE_IDS, OcpiUrl } from '../src/ocpi-protocol/versions.ts';

// ---------------------------------------------------------------------------
// Helpers

const REMOVE = Symbol('remove');

/** A deep copy of `base` with the value at a JSON pointer replaced (or removed with REMOVE). */
function variant<T>(base: T, pointer: string, value: unknown): unknown {
  const copy = structuredClone(base) as unknown;
  const keys = pointer.split('/').slice(1);
  const last = keys.pop();
  if (last === undefined) return value;
  let node = copy as Record<string, unknown>;
  for (const key of keys) node = node[key] as Record<string, unknown>;
  if (value === REMOVE) delete node[last];
  else node[last] = value;
  return copy;
}

function accepts<T>(parse: OcpiParser<T>, value: unknown): T {
  const result = parse(value);
  assert.ok(result.ok, `expected the value to pass, got ${JSON.stringify(result.ok ? [] : result.errors)}`);
  return result.value;
}

/** The value is refused, with an error at exactly `pointer`. */
function rejects<T>(parse: OcpiParser<T>, value: unknown, pointer: string, message?: RegExp): void {
  const result = parse(value);
  assert.equal(result.ok, false, `expected the value to be refused at ${pointer}`);
  if (result.ok) return;
  const at = result.errors.filter((e) => e.path === pointer);
  assert.ok(at.length > 0, `expected an error at ${pointer}, got ${JSON.stringify(result.errors)}`);
  if (message)
    assert.ok(
      at.some((e) => message.test(e.message)),
      `expected ${message} at ${pointer}, got ${JSON.stringify(at)}`,
    );
}

const long = (n: number) => 'x'.repeat(n);

// ---------------------------------------------------------------------------
// Fixtures, modelled on the examples of the spec

const cdrToken = { country_code: 'NL', party_id: 'CHA', uid: 'APP-7F3A91C2', type: 'APP_USER', contract_id: 'NL-CHA-C00000042-7' };

const session = {
  country_code: 'BE',
  party_id: 'VLT',
  id: 'SES-20260203-0001',
  start_date_time: '2026-02-03T08:15:00Z',
  end_date_time: '2026-02-03T09:02:41Z',
  kwh: 18.4,
  cdr_token: cdrToken,
  auth_method: 'COMMAND',
  authorization_reference: 'AUTH-5d41402a',
  location_id: 'LOC-GENT-17',
  evse_uid: 'EVSE-17-2',
  connector_id: '1',
  meter_id: 'MTR-0088',
  currency: 'EUR',
  charging_periods: [
    {
      start_date_time: '2026-02-03T08:15:00Z',
      dimensions: [
        { type: 'ENERGY', volume: 17.9 },
        { type: 'MAX_POWER', volume: 22 },
        { type: 'STATE_OF_CHARGE', volume: 64 },
      ],
      tariff_id: 'TRF-AC-STD',
    },
    { start_date_time: '2026-02-03T08:58:10Z', dimensions: [{ type: 'PARKING_TIME', volume: 0.0775 }] },
  ],
  total_cost: { excl_vat: 6.3, incl_vat: 7.62 },
  status: 'COMPLETED',
  last_updated: '2026-02-03T09:02:42Z',
};

const tariff = {
  country_code: 'BE',
  party_id: 'VLT',
  id: 'TRF-AC-STD',
  currency: 'EUR',
  elements: [{ price_components: [{ type: 'ENERGY', price: 0.35, vat: 21, step_size: 1 }] }],
  last_updated: '2026-01-01T00:00:00Z',
};

const cdr = {
  country_code: 'BE',
  party_id: 'VLT',
  id: 'CDR-20260203-0001',
  start_date_time: '2026-02-03T08:15:00Z',
  end_date_time: '2026-02-03T09:02:41Z',
  session_id: 'SES-20260203-0001',
  cdr_token: cdrToken,
  auth_method: 'COMMAND',
  authorization_reference: 'AUTH-5d41402a',
  cdr_location: {
    id: 'LOC-GENT-17',
    name: 'Gent Sint-Pieters P+R',
    address: 'Koningin Maria Hendrikaplein 1',
    city: 'Gent',
    postal_code: '9000',
    country: 'BEL',
    coordinates: { latitude: '51.035896', longitude: '3.710675' },
    evse_uid: 'EVSE-17-2',
    evse_id: 'BE*VLT*E17002',
    connector_id: '1',
    connector_standard: 'IEC_62196_T2',
    connector_format: 'SOCKET',
    connector_power_type: 'AC_3_PHASE',
  },
  meter_id: 'MTR-0088',
  currency: 'EUR',
  tariffs: [tariff],
  charging_periods: [{ start_date_time: '2026-02-03T08:15:00Z', dimensions: [{ type: 'ENERGY', volume: 17.9 }], tariff_id: 'TRF-AC-STD' }],
  signed_data: {
    encoding_method: 'OCMF',
    encoding_method_version: 1,
    public_key: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE',
    signed_values: [{ nature: 'Start', plain_data: 'OCMF|{"RD":[{"RV":1204.5}]}', signed_data: 'MEUCIQDx' }],
    url: 'https://transparenz.example/check',
  },
  total_cost: { excl_vat: 6.27, incl_vat: 7.59 },
  total_fixed_cost: { excl_vat: 0 },
  total_energy: 17.9,
  total_energy_cost: { excl_vat: 6.27, incl_vat: 7.59 },
  total_time: 0.7947,
  total_parking_time: 0.0775,
  remark: 'Stopped by the driver from the app',
  invoice_reference_id: 'INV-2026-02',
  home_charging_compensation: false,
  last_updated: '2026-02-03T09:05:00Z',
};

const token = {
  country_code: 'NL',
  party_id: 'CHA',
  uid: '04A2B3C4D5E680',
  type: 'RFID',
  contract_id: 'NL-CHA-C00000042-7',
  visual_number: 'CHA-0042-7',
  issuer: 'Charging Access',
  group_id: 'GRP-0042',
  valid: true,
  whitelist: 'ALLOWED',
  language: 'nl',
  default_profile_type: 'REGULAR',
  energy_contract: { supplier_name: 'Groene Stroom BV', contract_id: 'GS-998877' },
  last_updated: '2026-01-15T10:00:00Z',
};

const appToken = {
  country_code: 'NL',
  party_id: 'CHA',
  uid: 'APP-7F3A91C2',
  type: 'APP_USER',
  contract_id: 'NL-CHA-C00000042-7',
  issuer: 'Charging Access',
  valid: true,
  whitelist: 'NEVER',
  last_updated: '2026-01-15T10:00:00Z',
};

const authorizationInfo = {
  allowed: 'ALLOWED',
  token,
  location: { location_id: 'LOC-GENT-17', evse_uids: ['EVSE-17-1', 'EVSE-17-2'] },
  authorization_reference: 'AUTH-5d41402a',
  info: { language: 'en', text: 'Enjoy your charge' },
};

const startSession = {
  response_url: 'https://emsp.example/ocpi/emsp/2.2.1/commands/START_SESSION/4f1b2c',
  token: appToken,
  location_id: 'LOC-GENT-17',
  evse_uid: 'EVSE-17-2',
  connector_id: '1',
  authorization_reference: 'AUTH-5d41402a',
};

const stopSession = { response_url: 'https://emsp.example/ocpi/emsp/2.2.1/commands/STOP_SESSION/4f1b2d', session_id: 'SES-20260203-0001' };

const commandResponse = { result: 'ACCEPTED', timeout: 30, message: [{ language: 'en', text: 'Request sent to the charge point' }] };

const commandResult = { result: 'ACCEPTED', message: [{ language: 'en', text: 'Charging started' }] };

const credentials = {
  token: 'c2e9f0a4-7d7b-4f8e-9a51-0b7c6d5e4f3a',
  url: 'https://cpo.example/ocpi/versions',
  roles: [
    {
      role: 'CPO',
      party_id: 'VLT',
      country_code: 'BE',
      business_details: {
        name: 'Volt Operator',
        website: 'https://volt.example',
        logo: {
          url: 'https://volt.example/logo.png',
          thumbnail: 'https://volt.example/logo-128.png',
          category: 'OPERATOR',
          type: 'png',
          width: 512,
          height: 512,
        },
      },
    },
    { role: 'EMSP', party_id: 'VLM', country_code: 'BE', business_details: { name: 'Volt Mobility' } },
  ],
};

const versions = [
  { version: '2.1.1', url: 'https://cpo.example/ocpi/2.1.1' },
  { version: '2.2.1', url: 'https://cpo.example/ocpi/2.2.1' },
];

const versionDetails = {
  version: '2.2.1',
  endpoints: [
    { identifier: 'credentials', role: 'SENDER', url: 'https://cpo.example/ocpi/2.2.1/credentials' },
    { identifier: 'locations', role: 'SENDER', url: 'https://cpo.example/ocpi/cpo/2.2.1/locations' },
    { identifier: 'tokens', role: 'RECEIVER', url: 'https://cpo.example/ocpi/cpo/2.2.1/tokens' },
    { identifier: 'commands', role: 'RECEIVER', url: 'https://cpo.example/ocpi/cpo/2.2.1/commands' },
  ],
};

// ---------------------------------------------------------------------------

describe('enum lists', () => {
  it('hold the values of the spec tables', () => {
    assert.deepEqual([...SESSION_STATUSES], ['ACTIVE', 'COMPLETED', 'INVALID', 'PENDING', 'RESERVATION']);
    assert.deepEqual([...AUTH_METHODS], ['AUTH_REQUEST', 'COMMAND', 'WHITELIST']);
    assert.equal(CDR_DIMENSION_TYPES.length, 13);
    assert.deepEqual([...TOKEN_TYPES], ['AD_HOC_USER', 'APP_USER', 'OTHER', 'RFID']);
    assert.deepEqual([...WHITELIST_TYPES], ['ALWAYS', 'ALLOWED', 'ALLOWED_OFFLINE', 'NEVER']);
    assert.deepEqual([...ALLOWED_TYPES], ['ALLOWED', 'BLOCKED', 'EXPIRED', 'NO_CREDIT', 'NOT_ALLOWED']);
    assert.deepEqual([...ROLES], ['CPO', 'EMSP', 'HUB', 'NAP', 'NSP', 'OTHER', 'SCSP']);
    assert.deepEqual([...INTERFACE_ROLES], ['SENDER', 'RECEIVER']);
    assert.equal(MODULE_IDS.length, 9);
    assert.equal(COMMAND_TYPES.length, 5);
    assert.equal(COMMAND_RESULT_TYPES.length, 9);
  });
});

describe('Session', () => {
  it('accepts a complete session and returns it', () => {
    assert.equal(accepts(parseSession, session), session);
  });

  it('accepts a minimal pending reservation with #NA as EVSE and connector', () => {
    const minimal = {
      country_code: 'BE',
      party_id: 'VLT',
      id: 'SES-2',
      start_date_time: '2026-02-03T08:15:00',
      kwh: 0,
      cdr_token: cdrToken,
      auth_method: 'COMMAND',
      location_id: 'LOC-GENT-17',
      evse_uid: '#NA',
      connector_id: '#NA',
      currency: 'EUR',
      status: 'RESERVATION',
      last_updated: '2026-02-03T08:15:00.125Z',
    };
    accepts(parseSession, minimal);
    accepts(parseSession, { ...minimal, charging_periods: [] });
  });

  it('tolerates properties it does not know, at any depth', () => {
    accepts(parseSession, { ...session, x_vendor: { anything: 1 }, cdr_token: { ...cdrToken, x_extra: true } });
  });

  it('refuses a value that is not an object', () => {
    rejects(parseSession, null, '', /object/);
    rejects(parseSession, [session], '', /object/);
  });

  for (const field of [
    'country_code',
    'party_id',
    'id',
    'start_date_time',
    'kwh',
    'cdr_token',
    'auth_method',
    'location_id',
    'evse_uid',
    'connector_id',
    'currency',
    'status',
    'last_updated',
  ]) {
    it(`requires ${field}`, () => rejects(parseSession, variant(session, `/${field}`, REMOVE), `/${field}`, /required/));
  }

  it('requires the fields of nested objects', () => {
    rejects(parseSession, variant(session, '/cdr_token/contract_id', REMOVE), '/cdr_token/contract_id', /required/);
    rejects(parseSession, variant(session, '/charging_periods/0/dimensions/1/volume', REMOVE), '/charging_periods/0/dimensions/1/volume', /required/);
    rejects(parseSession, variant(session, '/total_cost/excl_vat', REMOVE), '/total_cost/excl_vat', /required/);
  });

  it('refuses unknown enum values', () => {
    rejects(parseSession, variant(session, '/status', 'STARTED'), '/status', /allowed values/);
    rejects(parseSession, variant(session, '/auth_method', 'APP'), '/auth_method', /allowed values/);
    rejects(parseSession, variant(session, '/cdr_token/type', 'NFC'), '/cdr_token/type', /allowed values/);
    rejects(parseSession, variant(session, '/status', 'completed'), '/status');
  });

  it('takes a dimension type outside 2.2.1: CdrDimensionType is an open enum (official OpenAPI), priced by nothing', () => {
    accepts(parseSession, variant(session, '/charging_periods/0/dimensions/0/type', 'VOLTAGE'));
    rejects(parseSession, variant(session, '/charging_periods/0/dimensions/0/type', ''), '/charging_periods/0/dimensions/0/type');
  });

  it('refuses strings longer than the spec allows', () => {
    accepts(parseSession, variant(session, '/id', long(36)));
    rejects(parseSession, variant(session, '/id', long(37)), '/id', /more than 36/);
    rejects(parseSession, variant(session, '/location_id', long(37)), '/location_id', /more than 36/);
    rejects(parseSession, variant(session, '/authorization_reference', long(37)), '/authorization_reference', /more than 36/);
    rejects(parseSession, variant(session, '/meter_id', long(256)), '/meter_id', /more than 255/);
    rejects(parseSession, variant(session, '/cdr_token/uid', long(37)), '/cdr_token/uid', /more than 36/);
    rejects(parseSession, variant(session, '/charging_periods/0/tariff_id', long(37)), '/charging_periods/0/tariff_id', /more than 36/);
    rejects(parseSession, variant(session, '/country_code', 'BEL'), '/country_code');
    rejects(parseSession, variant(session, '/party_id', 'VOLT'), '/party_id');
    rejects(parseSession, variant(session, '/currency', 'EURO'), '/currency');
  });

  it('refuses values of the wrong type or form', () => {
    rejects(parseSession, variant(session, '/kwh', '18.4'), '/kwh', /number/);
    rejects(parseSession, variant(session, '/total_cost/excl_vat', '6.30'), '/total_cost/excl_vat', /number/);
    rejects(parseSession, variant(session, '/charging_periods', { start_date_time: '2026-02-03T08:15:00Z' }), '/charging_periods', /array/);
    rejects(parseSession, variant(session, '/charging_periods/0/dimensions', []), '/charging_periods/0/dimensions', /fewer than 1/);
    rejects(parseSession, variant(session, '/cdr_token', 'APP-7F3A91C2'), '/cdr_token', /object/);
    rejects(parseSession, variant(session, '/last_updated', '03/02/2026 09:02'), '/last_updated', /pattern/);
    rejects(parseSession, variant(session, '/start_date_time', 1770106500000), '/start_date_time', /string/);
    rejects(parseSession, variant(session, '/id', ''), '/id');
  });

  it('reports every problem at once', () => {
    const result = parseSession({ ...session, kwh: 'lots', status: 'DONE', id: long(40) });
    assert.equal(result.ok, false);
    if (!result.ok) assert.deepEqual(result.errors.map((e) => e.path).sort(), ['/id', '/kwh', '/status']);
  });
});

describe('SessionPatch', () => {
  it('accepts any subset of Session fields with last_updated', () => {
    accepts(parseSessionPatch, {
      kwh: 15,
      charging_periods: [{ start_date_time: '2026-02-03T08:40:00Z', dimensions: [{ type: 'ENERGY', volume: 2.2 }] }],
      total_cost: { excl_vat: 0.8, incl_vat: 0.97 },
      last_updated: '2026-02-03T08:40:00Z',
    });
    accepts(parseSessionPatch, { status: 'ACTIVE', last_updated: '2026-02-03T08:16:00Z' });
    accepts(parseSessionPatch, { last_updated: '2026-02-03T08:16:00Z' });
    accepts(parseSessionPatch, session);
  });

  it('requires last_updated', () => rejects(parseSessionPatch, { kwh: 15 }, '/last_updated', /required/));

  it('checks the fields it has like a Session does', () => {
    const patch = { kwh: 15, last_updated: '2026-02-03T08:40:00Z' };
    rejects(parseSessionPatch, { ...patch, kwh: 'fifteen' }, '/kwh', /number/);
    rejects(parseSessionPatch, { ...patch, status: 'CHARGING' }, '/status', /allowed values/);
    rejects(parseSessionPatch, { ...patch, evse_uid: long(37) }, '/evse_uid', /more than 36/);
    rejects(parseSessionPatch, { ...patch, cdr_token: { uid: 'X' } }, '/cdr_token/contract_id', /required/);
    rejects(
      parseSessionPatch,
      { ...patch, charging_periods: [{ dimensions: [{ type: 'ENERGY', volume: 1 }] }] },
      '/charging_periods/0/start_date_time',
      /required/,
    );
  });
});

describe('CDR', () => {
  it('accepts a complete CDR with its tariff and signed data', () => {
    assert.equal(accepts(parseCdr, cdr), cdr);
  });

  it('accepts a minimal CDR', () => {
    const minimal = structuredClone(cdr) as Record<string, unknown>;
    for (const key of [
      'session_id',
      'authorization_reference',
      'meter_id',
      'tariffs',
      'signed_data',
      'total_fixed_cost',
      'total_energy_cost',
      'total_parking_time',
      'remark',
      'invoice_reference_id',
      'home_charging_compensation',
    ]) {
      delete minimal[key];
    }
    for (const key of ['name', 'postal_code']) delete (minimal.cdr_location as Record<string, unknown>)[key];
    accepts(parseCdr, minimal);
  });

  it('tolerates properties it does not know', () => {
    accepts(parseCdr, { ...cdr, x_vendor: 1, cdr_location: { ...cdr.cdr_location, x_parking_level: -1 } });
  });

  for (const field of [
    'country_code',
    'party_id',
    'id',
    'start_date_time',
    'end_date_time',
    'cdr_token',
    'auth_method',
    'cdr_location',
    'currency',
    'charging_periods',
    'total_cost',
    'total_energy',
    'total_time',
    'last_updated',
  ]) {
    it(`requires ${field}`, () => rejects(parseCdr, variant(cdr, `/${field}`, REMOVE), `/${field}`, /required/));
  }

  it('requires the fields of the CDR location, signed data and tariffs', () => {
    for (const field of [
      'id',
      'address',
      'city',
      'country',
      'coordinates',
      'evse_uid',
      'evse_id',
      'connector_id',
      'connector_standard',
      'connector_format',
      'connector_power_type',
    ]) {
      rejects(parseCdr, variant(cdr, `/cdr_location/${field}`, REMOVE), `/cdr_location/${field}`, /required/);
    }
    rejects(parseCdr, variant(cdr, '/signed_data/signed_values/0/signed_data', REMOVE), '/signed_data/signed_values/0/signed_data', /required/);
    rejects(parseCdr, variant(cdr, '/tariffs/0/elements', REMOVE), '/tariffs/0/elements', /required/);
  });

  it('refuses unknown enum values', () => {
    // ConnectorType is an open enum (official OpenAPI): a standard newer than 2.2.1 is valid.
    accepts(parseCdr, variant(cdr, '/cdr_location/connector_standard', 'NACS'));
    rejects(parseCdr, variant(cdr, '/cdr_location/connector_format', 'PLUG'), '/cdr_location/connector_format', /allowed values/);
    rejects(parseCdr, variant(cdr, '/cdr_location/connector_power_type', 'AC'), '/cdr_location/connector_power_type', /allowed values/);
    rejects(parseCdr, variant(cdr, '/auth_method', 'RFID'), '/auth_method', /allowed values/);
    rejects(parseCdr, variant(cdr, '/tariffs/0/elements/0/price_components/0/type', 'KWH'), '/tariffs/0/elements/0/price_components/0/type', /allowed values/);
  });

  it('refuses strings longer than the spec allows', () => {
    rejects(parseCdr, variant(cdr, '/cdr_location/address', long(46)), '/cdr_location/address', /more than 45/);
    rejects(parseCdr, variant(cdr, '/cdr_location/city', long(46)), '/cdr_location/city', /more than 45/);
    rejects(parseCdr, variant(cdr, '/cdr_location/postal_code', long(11)), '/cdr_location/postal_code', /more than 10/);
    rejects(parseCdr, variant(cdr, '/cdr_location/evse_id', long(49)), '/cdr_location/evse_id', /more than 48/);
    rejects(parseCdr, variant(cdr, '/cdr_location/country', 'BE'), '/cdr_location/country', /fewer than 3/);
    rejects(parseCdr, variant(cdr, '/remark', long(256)), '/remark', /more than 255/);
    rejects(parseCdr, variant(cdr, '/invoice_reference_id', long(40)), '/invoice_reference_id', /more than 39/);
    rejects(parseCdr, variant(cdr, '/signed_data/signed_values/0/plain_data', long(5001)), '/signed_data/signed_values/0/plain_data', /more than 5000/);
    rejects(parseCdr, variant(cdr, '/signed_data/encoding_method', long(37)), '/signed_data/encoding_method', /more than 36/);
    rejects(parseCdr, variant(cdr, '/signed_data/signed_values/0/nature', long(33)), '/signed_data/signed_values/0/nature', /more than 32/);
    rejects(parseCdr, variant(cdr, '/cdr_location/coordinates/latitude', '-51.1234567'), '/cdr_location/coordinates/latitude', /more than 10/);
  });

  it('refuses values of the wrong type or form', () => {
    rejects(parseCdr, variant(cdr, '/total_energy', '17.9'), '/total_energy', /number/);
    rejects(parseCdr, variant(cdr, '/total_time', -1), '/total_time');
    rejects(parseCdr, variant(cdr, '/credit', 'yes'), '/credit', /boolean/);
    rejects(parseCdr, variant(cdr, '/charging_periods', []), '/charging_periods', /fewer than 1/);
    rejects(parseCdr, variant(cdr, '/signed_data/signed_values', []), '/signed_data/signed_values', /fewer than 1/);
    rejects(parseCdr, variant(cdr, '/signed_data/encoding_method_version', 1.5), '/signed_data/encoding_method_version', /integer/);
    rejects(parseCdr, variant(cdr, '/cdr_location/coordinates/latitude', '51.03'), '/cdr_location/coordinates/latitude', /pattern/);
    rejects(parseCdr, variant(cdr, '/cdr_location/coordinates', { latitude: 51.035896, longitude: 3.710675 }), '/cdr_location/coordinates/latitude', /string/);
  });

  it('keeps the 37 to 39 character ids for credit CDRs, which must name the CDR they credit', () => {
    const originalId = long(36);
    const creditId = `${originalId}-C1`;
    accepts(parseCdr, { ...cdr, id: originalId });
    rejects(parseCdr, { ...cdr, id: creditId }, '/id', /more than 36/);
    rejects(parseCdr, { ...cdr, id: creditId, credit: false, credit_reference_id: originalId }, '/id', /more than 36/);
    rejects(parseCdr, { ...cdr, id: creditId, credit: true }, '/credit_reference_id', /required/);
    accepts(parseCdr, { ...cdr, id: creditId, credit: true, credit_reference_id: originalId, total_cost: { excl_vat: -6.27, incl_vat: -7.59 } });
    rejects(parseCdr, { ...cdr, id: `${creditId}0`, credit: true, credit_reference_id: originalId }, '/id', /more than 39/);
    rejects(parseCdr, { ...cdr, credit: true, credit_reference_id: long(40) }, '/credit_reference_id', /more than 39/);
  });
});

describe('Token', () => {
  it('accepts a full RFID token and a minimal app user token', () => {
    assert.equal(accepts(parseToken, token), token);
    accepts(parseToken, appToken);
  });

  it('tolerates properties it does not know', () => {
    accepts(parseToken, { ...token, x_card_color: 'blue' });
  });

  for (const field of ['country_code', 'party_id', 'uid', 'type', 'contract_id', 'issuer', 'valid', 'whitelist', 'last_updated']) {
    it(`requires ${field}`, () => rejects(parseToken, variant(token, `/${field}`, REMOVE), `/${field}`, /required/));
  }

  it('requires the supplier of an energy contract', () => {
    rejects(parseToken, variant(token, '/energy_contract/supplier_name', REMOVE), '/energy_contract/supplier_name', /required/);
  });

  it('refuses unknown enum values', () => {
    rejects(parseToken, variant(token, '/type', 'NFC'), '/type', /allowed values/);
    rejects(parseToken, variant(token, '/whitelist', 'SOMETIMES'), '/whitelist', /allowed values/);
    rejects(parseToken, variant(token, '/default_profile_type', 'CHEAPEST'), '/default_profile_type', /allowed values/);
  });

  it('refuses strings longer than the spec allows', () => {
    rejects(parseToken, variant(token, '/uid', long(37)), '/uid', /more than 36/);
    rejects(parseToken, variant(token, '/contract_id', long(37)), '/contract_id', /more than 36/);
    rejects(parseToken, variant(token, '/visual_number', long(65)), '/visual_number', /more than 64/);
    rejects(parseToken, variant(token, '/issuer', long(65)), '/issuer', /more than 64/);
    rejects(parseToken, variant(token, '/group_id', long(37)), '/group_id', /more than 36/);
    rejects(parseToken, variant(token, '/language', 'nld'), '/language', /more than 2/);
    rejects(parseToken, variant(token, '/energy_contract/supplier_name', long(65)), '/energy_contract/supplier_name', /more than 64/);
    rejects(parseToken, variant(token, '/energy_contract/contract_id', long(65)), '/energy_contract/contract_id', /more than 64/);
  });

  it('refuses values of the wrong type', () => {
    rejects(parseToken, variant(token, '/valid', 'true'), '/valid', /boolean/);
    rejects(parseToken, variant(token, '/uid', 12345678), '/uid', /string/);
    rejects(parseToken, variant(token, '/energy_contract', 'Groene Stroom BV'), '/energy_contract', /object/);
  });
});

describe('TokenPatch', () => {
  it('accepts any subset of Token fields with last_updated', () => {
    accepts(parseTokenPatch, { valid: false, last_updated: '2026-02-01T12:00:00Z' });
    accepts(parseTokenPatch, token);
  });

  it('requires last_updated and checks the fields it has', () => {
    rejects(parseTokenPatch, { valid: false }, '/last_updated', /required/);
    rejects(parseTokenPatch, { valid: 'no', last_updated: '2026-02-01T12:00:00Z' }, '/valid', /boolean/);
    rejects(parseTokenPatch, { whitelist: 'NONE', last_updated: '2026-02-01T12:00:00Z' }, '/whitelist', /allowed values/);
  });
});

describe('AuthorizationInfo', () => {
  it('accepts an answer with location references and a message', () => {
    accepts(parseAuthorizationInfo, authorizationInfo);
    accepts(parseAuthorizationInfo, { allowed: 'BLOCKED', token: appToken });
    accepts(parseAuthorizationInfo, { ...authorizationInfo, location: { location_id: 'LOC-GENT-17' } });
  });

  it('requires allowed and the complete token', () => {
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/allowed', REMOVE), '/allowed', /required/);
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/token', REMOVE), '/token', /required/);
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/token/uid', REMOVE), '/token/uid', /required/);
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/location/location_id', REMOVE), '/location/location_id', /required/);
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/info/text', REMOVE), '/info/text', /required/);
  });

  it('refuses unknown enum values, long strings and wrong types', () => {
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/allowed', 'YES'), '/allowed', /allowed values/);
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/location/evse_uids/1', long(37)), '/location/evse_uids/1', /more than 36/);
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/authorization_reference', long(37)), '/authorization_reference', /more than 36/);
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/info/language', 'eng'), '/info/language', /more than 2/);
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/info/text', long(513)), '/info/text', /more than 512/);
    rejects(parseAuthorizationInfo, variant(authorizationInfo, '/location/evse_uids', 'EVSE-17-1'), '/location/evse_uids', /array/);
  });
});

describe('Commands', () => {
  it('accepts a StartSession, with or without an EVSE', () => {
    accepts(parseStartSession, startSession);
    accepts(parseStartSession, { response_url: startSession.response_url, token: appToken, location_id: 'LOC-GENT-17' });
  });

  it('requires the fields of a StartSession', () => {
    for (const field of ['response_url', 'token', 'location_id']) {
      rejects(parseStartSession, variant(startSession, `/${field}`, REMOVE), `/${field}`, /required/);
    }
    rejects(parseStartSession, variant(startSession, '/token/issuer', REMOVE), '/token/issuer', /required/);
  });

  it('requires evse_uid when a StartSession names a connector', () => {
    rejects(parseStartSession, variant(startSession, '/evse_uid', REMOVE), '/evse_uid', /required/);
  });

  it('refuses a StartSession with a bad URL, long ids or a wrong token type', () => {
    rejects(parseStartSession, variant(startSession, '/response_url', '/commands/START_SESSION/1'), '/response_url', /pattern/);
    rejects(parseStartSession, variant(startSession, '/response_url', `https://emsp.example/${long(240)}`), '/response_url', /more than 255/);
    rejects(parseStartSession, variant(startSession, '/location_id', long(37)), '/location_id', /more than 36/);
    rejects(parseStartSession, variant(startSession, '/connector_id', long(37)), '/connector_id', /more than 36/);
    rejects(parseStartSession, variant(startSession, '/token/type', 'APP'), '/token/type', /allowed values/);
    rejects(parseStartSession, variant(startSession, '/token', 'APP-7F3A91C2'), '/token', /object/);
  });

  it('accepts a StopSession and refuses an incomplete or wrong one', () => {
    accepts(parseStopSession, stopSession);
    rejects(parseStopSession, variant(stopSession, '/session_id', REMOVE), '/session_id', /required/);
    rejects(parseStopSession, variant(stopSession, '/response_url', REMOVE), '/response_url', /required/);
    rejects(parseStopSession, variant(stopSession, '/session_id', 42), '/session_id', /string/);
    rejects(parseStopSession, variant(stopSession, '/session_id', long(37)), '/session_id', /more than 36/);
  });

  it('accepts a CommandResponse and refuses a wrong one', () => {
    accepts(parseCommandResponse, commandResponse);
    accepts(parseCommandResponse, { result: 'UNKNOWN_SESSION', timeout: 0 });
    rejects(parseCommandResponse, variant(commandResponse, '/timeout', REMOVE), '/timeout', /required/);
    rejects(parseCommandResponse, variant(commandResponse, '/result', REMOVE), '/result', /required/);
    rejects(parseCommandResponse, variant(commandResponse, '/result', 'OK'), '/result', /allowed values/);
    rejects(parseCommandResponse, variant(commandResponse, '/result', 'TIMEOUT'), '/result', /allowed values/);
    rejects(parseCommandResponse, variant(commandResponse, '/timeout', 1.5), '/timeout', /integer/);
    rejects(parseCommandResponse, variant(commandResponse, '/timeout', '30'), '/timeout', /integer/);
    rejects(parseCommandResponse, variant(commandResponse, '/message', { language: 'en', text: 'one' }), '/message', /array/);
    rejects(parseCommandResponse, variant(commandResponse, '/message/0/text', long(513)), '/message/0/text', /more than 512/);
  });

  it('accepts every CommandResult and refuses a wrong one', () => {
    accepts(parseCommandResult, commandResult);
    for (const result of COMMAND_RESULT_TYPES) accepts(parseCommandResult, { result });
    rejects(parseCommandResult, {}, '/result', /required/);
    rejects(parseCommandResult, { result: 'SUCCESS' }, '/result', /allowed values/);
    rejects(parseCommandResult, { result: 'ACCEPTED', message: [{ language: 'en' }] }, '/message/0/text', /required/);
  });
});

describe('Credentials', () => {
  it('accepts credentials with several roles and full business details', () => {
    assert.equal(accepts(parseCredentials, credentials), credentials);
  });

  it('requires the token, the URL, at least one role and the fields of each', () => {
    for (const field of ['token', 'url', 'roles']) rejects(parseCredentials, variant(credentials, `/${field}`, REMOVE), `/${field}`, /required/);
    rejects(parseCredentials, variant(credentials, '/roles', []), '/roles', /fewer than 1/);
    for (const field of ['role', 'business_details', 'party_id', 'country_code']) {
      rejects(parseCredentials, variant(credentials, `/roles/1/${field}`, REMOVE), `/roles/1/${field}`, /required/);
    }
    rejects(parseCredentials, variant(credentials, '/roles/0/business_details/name', REMOVE), '/roles/0/business_details/name', /required/);
    rejects(parseCredentials, variant(credentials, '/roles/0/business_details/logo/category', REMOVE), '/roles/0/business_details/logo/category', /required/);
  });

  it('refuses unknown roles and image categories', () => {
    rejects(parseCredentials, variant(credentials, '/roles/0/role', 'MSP'), '/roles/0/role', /allowed values/);
    rejects(
      parseCredentials,
      variant(credentials, '/roles/0/business_details/logo/category', 'LOGO'),
      '/roles/0/business_details/logo/category',
      /allowed values/,
    );
  });

  it('refuses over-long and malformed values', () => {
    rejects(parseCredentials, variant(credentials, '/token', long(65)), '/token', /more than 64/);
    rejects(parseCredentials, variant(credentials, '/token', 'has a space'), '/token', /pattern/);
    rejects(parseCredentials, variant(credentials, '/token', 'tab\there'), '/token', /pattern/);
    rejects(parseCredentials, variant(credentials, '/url', 'cpo.example/ocpi/versions'), '/url', /pattern/);
    rejects(parseCredentials, variant(credentials, '/roles/0/business_details/name', long(101)), '/roles/0/business_details/name', /more than 100/);
    rejects(parseCredentials, variant(credentials, '/roles/0/business_details/logo/type', 'image/png'), '/roles/0/business_details/logo/type', /more than 4/);
    rejects(parseCredentials, variant(credentials, '/roles/0/business_details/logo/width', 100000), '/roles/0/business_details/logo/width');
    rejects(parseCredentials, variant(credentials, '/roles/0/party_id', 'VL'), '/roles/0/party_id');
    rejects(parseCredentials, variant(credentials, '/roles/0/country_code', 'BEL'), '/roles/0/country_code');
    rejects(parseCredentials, variant(credentials, '/roles', credentials.roles[0]), '/roles', /array/);
  });
});

describe('Versions and VersionDetails', () => {
  it('accepts a list of versions, including versions newer than 2.2.1', () => {
    assert.equal(accepts(parseVersions, versions), versions);
    accepts(parseVersions, [...versions, { version: '3.0', url: 'https://cpo.example/ocpi/3.0' }]);
  });

  it('refuses an empty list, a missing field, a wrong type', () => {
    rejects(parseVersions, [], '', /fewer than 1/);
    rejects(parseVersions, versions[0], '', /array/);
    rejects(parseVersions, variant(versions, '/1/url', REMOVE), '/1/url', /required/);
    rejects(parseVersions, variant(versions, '/0/version', 2.2), '/0/version', /string/);
    rejects(parseVersions, variant(versions, '/0/url', `https://cpo.example/${long(240)}`), '/0/url', /more than 255/);
  });

  it('accepts version details, custom modules included', () => {
    accepts(parseVersionDetails, versionDetails);
    accepts(parseVersionDetails, variant(versionDetails, '/endpoints/3/identifier', 'becha-invoices'));
  });

  it('refuses version details without endpoints, or with a wrong role or URL', () => {
    rejects(parseVersionDetails, variant(versionDetails, '/version', REMOVE), '/version', /required/);
    rejects(parseVersionDetails, variant(versionDetails, '/endpoints', []), '/endpoints', /fewer than 1/);
    rejects(parseVersionDetails, variant(versionDetails, '/endpoints/1/role', 'BOTH'), '/endpoints/1/role', /allowed values/);
    rejects(parseVersionDetails, variant(versionDetails, '/endpoints/1/role', REMOVE), '/endpoints/1/role', /required/);
    rejects(parseVersionDetails, variant(versionDetails, '/endpoints/2/url', '/ocpi/cpo/2.2.1/tokens'), '/endpoints/2/url', /pattern/);
    rejects(parseVersionDetails, variant(versionDetails, '/endpoints/0/identifier', ''), '/endpoints/0/identifier');
  });
});

describe('validator()', () => {
  it('validates any TypeBox schema, compiling it on first use', () => {
    const parseUrl = validator(OcpiUrl);
    assert.deepEqual(parseUrl('https://example.com/ocpi'), { ok: true, value: 'https://example.com/ocpi' });
    const refused = parseUrl('not a url');
    assert.equal(refused.ok, false);
    if (!refused.ok) assert.equal(refused.errors[0]?.path, '');
  });
});

// ---------------------------------------------------------------------------

const scratch = mkdtempSync(path.join(os.tmpdir(), 'ocpi-schemas-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe('recorder', () => {
  it('is off unless a directory is set; when on, records each object that passed, under its schema name', () => {
    const dir = path.join(scratch, 'recordings');
    const previous = setOcpiRecorder(dir);
    try {
      parseSession(session);
      parseSession({ ...session, kwh: 'x' });
      parseVersions(versions);
      recordOcpiMessage('CommandResult', commandResult);
    } finally {
      setOcpiRecorder(previous);
    }
    const recordings = readdirSync(dir)
      .sort()
      .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { schema: string; message: unknown });
    assert.deepEqual(
      recordings.map((r) => r.schema),
      ['Session', 'Version', 'CommandResult'],
    );
    assert.deepEqual(recordings[0]?.message, session);
    assert.deepEqual(recordings[1]?.message, versions);

    setOcpiRecorder(undefined);
    try {
      parseSession(session);
      recordOcpiMessage('Session', session);
    } finally {
      setOcpiRecorder(previous);
    }
    assert.equal(readdirSync(dir).length, 3);
  });
});

describe('scripts/ocpi-official-check.ts', () => {
  // A stand-in for the official OpenAPI: split files with a $ref from one to the other.
  const openapi = path.join(scratch, 'openapi');
  mkdirSync(path.join(openapi, 'components'), { recursive: true });
  mkdirSync(path.join(openapi, 'modules', 'commands'), { recursive: true });
  writeFileSync(
    path.join(openapi, 'components', 'schema.yaml'),
    [
      'openapi: 3.1.0',
      'components:',
      '  schemas:',
      '    DisplayText:',
      '      type: object',
      '      properties:',
      '        language: { type: string, minLength: 2, maxLength: 2 }',
      '        text: { type: string, maxLength: 512 }',
      '      required: [language, text]',
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(openapi, 'modules', 'commands', 'schema.yaml'),
    [
      'openapi: 3.1.0',
      'components:',
      '  schemas:',
      '    CommandResult:',
      '      type: object',
      '      properties:',
      '        result:',
      '          $ref: "#/components/schemas/CommandResultType"',
      '        message:',
      '          type: array',
      '          items:',
      '            $ref: "../../components/schema.yaml#/components/schemas/DisplayText"',
      '      required: [result]',
      '    CommandResultType:',
      '      type: string',
      '      format: enum',
      '      enum: [ACCEPTED, REJECTED]',
      '    Note:',
      '      type: string',
      '      format: open-enum',
      '      enum: [A, B]',
      '',
    ].join('\n'),
  );
  const script = path.resolve(import.meta.dirname, '..', 'scripts', 'ocpi-official-check.ts');
  const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

  it('exits 0 with a notice when there is no official OpenAPI', () => {
    const result = run(path.join(scratch, 'none'), '--openapi', path.join(scratch, 'no-openapi'));
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /skipped/);
  });

  it('validates each recording across the split files and lists the failing ones', () => {
    const dir = path.join(scratch, 'check');
    mkdirSync(dir);
    const write = (name: string, recording: unknown) => writeFileSync(path.join(dir, name), JSON.stringify(recording));
    write('1-good.json', { schema: 'CommandResult', message: commandResult });
    write('2-open-enum.json', { schema: 'Note', message: 'C' });
    write('3-bad-enum.json', { schema: 'CommandResult', message: { result: 'MAYBE' } });
    write('4-bad-ref.json', { schema: 'CommandResult', message: { result: 'ACCEPTED', message: [{ language: 'english', text: 'x' }] } });
    write('5-unknown.json', { schema: 'Nothing', message: {} });
    const failing = run(dir, '--openapi', openapi);
    assert.equal(failing.status, 1, failing.stderr);
    assert.doesNotMatch(failing.stderr, /1-good|2-open-enum/);
    assert.match(failing.stderr, /FAIL 3-bad-enum\.json\n {2}\/result must be equal to one of the allowed values/);
    assert.match(failing.stderr, /FAIL 4-bad-ref\.json\n {2}\/message\/0\/language must NOT have more than 2 characters/);
    assert.match(failing.stderr, /FAIL 5-unknown\.json\n {2}no schema named Nothing/);
    assert.match(failing.stderr, /3 of 5 recorded messages/);

    for (const name of ['3-bad-enum.json', '4-bad-ref.json', '5-unknown.json']) rmSync(path.join(dir, name));
    const passing = run(dir, '--openapi', openapi);
    assert.equal(passing.status, 0, passing.stderr);
    assert.match(passing.stdout, /2 recorded messages match/);
  });
});

describe('scripts/ocpi-official-check.ts: exchanges (routing headers, status codes)', () => {
  const script = path.resolve(import.meta.dirname, '..', 'scripts', 'ocpi-official-check.ts');
  const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
  const routing = (from: [string, string], to?: [string, string]) => ({
    'OCPI-from-country-code': from[0],
    'OCPI-from-party-id': from[1],
    ...(to ? { 'OCPI-to-country-code': to[0], 'OCPI-to-party-id': to[1] } : {}),
  });
  const us: [string, string] = ['DE', 'CAX'];
  const cpo: [string, string] = ['DE', 'ABC'];
  const request = (module: string | null, method: string, r: Record<string, string>) => ({
    exchange: { direction: 'request', sender: 'emsp', method, path: `/ocpi/cpo/2.2.1/${module}`, module, status: 200, ocpi_status: 1000, routing: r },
  });
  const answer = (
    module: string | null,
    method: string,
    status: number,
    r: Record<string, string>,
    facts: { authenticated: boolean; reached: boolean; ocpi?: number | null },
  ) => ({
    exchange: {
      direction: 'answer',
      sender: 'emsp',
      method,
      path: `/ocpi/2.2.1/${module}`,
      module,
      status,
      ocpi_status: facts.ocpi === undefined ? 1000 : facts.ocpi,
      routing: r,
      authenticated: facts.authenticated,
      reached_ocpi_layer: facts.reached,
    },
  });
  const good = {
    'g1-token-push.json': request('tokens', 'PUT', routing(us, cpo)),
    'g2-versions.json': request('versions', 'GET', {}),
    'g3-created.json': answer('locations', 'PUT', 201, routing(us, cpo), { authenticated: true, reached: true }),
    'g4-bad-token.json': answer('locations', 'PUT', 401, routing(us), { authenticated: false, reached: false, ocpi: 2000 }),
    'g5-unknown-object.json': answer('sessions', 'PATCH', 404, routing(us, cpo), { authenticated: true, reached: true, ocpi: 2000 }),
    'g6-registered-already.json': answer('credentials', 'POST', 405, {}, { authenticated: true, reached: true, ocpi: 2000 }),
    'g7-database-away.json': answer('cdrs', 'POST', 503, routing(us, cpo), { authenticated: true, reached: true, ocpi: 3000 }),
    'g8-not-json.json': answer('cdrs', 'POST', 400, routing(us, cpo), { authenticated: true, reached: false, ocpi: 2001 }),
    'g9-refused-in-envelope.json': answer('sessions', 'PUT', 200, routing(us, cpo), { authenticated: true, reached: true, ocpi: 2001 }),
  };
  const bad = {
    'b1-no-to.json': [request('sessions', 'GET', routing(us)), /routing headers missing to the sessions module: OCPI-to-country-code, OCPI-to-party-id/],
    'b2-routed-credentials.json': [request('credentials', 'POST', routing(us, cpo)), /routing headers on the credentials module \(a configuration module\)/],
    'b3-no-module.json': [request(null, 'POST', routing(us, cpo)), /names no OCPI module/],
    'b4-bad-party.json': [request('tokens', 'PUT', routing(us, ['DEU', 'ABC'])), /OCPI-to-country-code is not a valid party code: DEU/],
    'b5-schema-400.json': [
      answer('locations', 'PUT', 400, routing(us, cpo), { authenticated: true, reached: true, ocpi: 2001 }),
      /HTTP 400 to a PUT that reached the OCPI layer/,
    ],
    'b6-internal.json': [answer('cdrs', 'POST', 500, routing(us, cpo), { authenticated: true, reached: true, ocpi: 3000 }), /HTTP 500/],
    'b7-unrouted-answer.json': [
      answer('tariffs', 'PUT', 200, {}, { authenticated: true, reached: true }),
      /routing headers missing to the tariffs module: OCPI-from-country-code/,
    ],
    'b8-no-envelope.json': [
      answer('tokens', 'GET', 200, routing(us, cpo), { authenticated: true, reached: true, ocpi: null }),
      /HTTP 200 without an OCPI status_code/,
    ],
    'b9-405-elsewhere.json': [answer('sessions', 'PUT', 405, routing(us, cpo), { authenticated: true, reached: true, ocpi: 2000 }), /HTTP 405 to a PUT/],
  } as const;

  it('flags every request and answer that breaks them, names the rule, and exits 1; passes the others, also without the official OpenAPI', () => {
    const dir = path.join(scratch, 'exchanges');
    mkdirSync(dir);
    for (const [name, recording] of [...Object.entries(good), ...Object.entries(bad).map(([n, [r]]) => [n, r] as const)]) {
      writeFileSync(path.join(dir, name), JSON.stringify(recording));
    }
    const failing = run(dir, '--openapi', path.join(scratch, 'no-openapi'));
    assert.equal(failing.status, 1, failing.stdout);
    for (const name of Object.keys(good)) assert.doesNotMatch(failing.stderr, new RegExp(`FAIL ${name}`));
    for (const [name, [, rule]] of Object.entries(bad))
      assert.match(failing.stderr, new RegExp(`FAIL ${name.replace('.', '\\.')}\\n {2}.*${rule.source}`), name);
    assert.match(failing.stderr, /9 of 18 recorded exchanges break the routing-header or status-code rules/);
    assert.match(failing.stdout, /messages not checked against the official schemas \(skipped/);

    for (const name of Object.keys(bad)) rmSync(path.join(dir, name));
    const passing = run(dir, '--openapi', path.join(scratch, 'no-openapi'));
    assert.equal(passing.status, 0, passing.stderr);
    assert.match(passing.stdout, /9 recorded exchanges follow the routing-header and status-code rules/);
  });
});

describe('scripts/ocpi-official-check.ts: OCPI 2.1.1 messages and exchanges', () => {
  const script = path.resolve(import.meta.dirname, '..', 'scripts', 'ocpi-official-check.ts');
  const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
  const token = { uid: 'u1', type: 'OTHER', auth_id: 'u1', issuer: 'Charging Access', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' };
  const exchange = (routing: Record<string, string>) => ({
    exchange: {
      direction: 'request',
      sender: 'emsp',
      method: 'PUT',
      path: '/ocpi/cpo/2.1.1/tokens/DE/CAX/u1',
      module: 'tokens',
      status: 200,
      ocpi_status: 1000,
      routing,
      version: '2.1.1',
    },
  });

  it('holds 2.1.1 messages to the 2.1.1 field lists and 2.1.1 exchanges to 2.1.1’s rules (no routing headers), not 2.2.1’s', () => {
    const dir = path.join(scratch, 'v211');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'g1-token.json'), JSON.stringify({ schema: '2.1.1/Token', message: token }));
    writeFileSync(path.join(dir, 'g2-unrouted.json'), JSON.stringify(exchange({})));
    writeFileSync(path.join(dir, 'b1-token-with-party.json'), JSON.stringify({ schema: '2.1.1/Token', message: { ...token, country_code: 'DE' } }));
    writeFileSync(path.join(dir, 'b2-token-without-auth-id.json'), JSON.stringify({ schema: '2.1.1/Token', message: { ...token, auth_id: undefined } }));
    writeFileSync(path.join(dir, 'b3-routed.json'), JSON.stringify(exchange({ 'OCPI-from-country-code': 'DE', 'OCPI-from-party-id': 'CAX' })));
    const failing = run(dir, '--openapi', path.join(scratch, 'no-openapi'));
    assert.equal(failing.status, 1, failing.stdout);
    assert.match(failing.stderr, /FAIL b1-token-with-party\.json\n {2}Token: country_code is not a 2\.1\.1 field/);
    assert.match(failing.stderr, /FAIL b2-token-without-auth-id\.json\n {2}Token: auth_id missing/);
    assert.match(failing.stderr, /FAIL b3-routed\.json\n {2}routing headers in an OCPI 2\.1\.1 exchange/);
    assert.doesNotMatch(failing.stderr, /FAIL g/);
    for (const name of ['b1-token-with-party.json', 'b2-token-without-auth-id.json', 'b3-routed.json']) rmSync(path.join(dir, name));
    const passing = run(dir, '--openapi', path.join(scratch, 'no-openapi'));
    assert.equal(passing.status, 0, passing.stderr);
    assert.match(passing.stdout, /1 recorded OCPI 2\.1\.1 messages match the 2\.1\.1 field lists/);
  });
});
