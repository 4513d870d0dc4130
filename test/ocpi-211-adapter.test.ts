// The OCPI 2.1.1 adapter (src/ocpi-protocol/v2_1_1/), one conversion at a
// time, on the 2.1.1 spec's own examples (mod_sessions, mod_cdrs: a Session
// and a CDR of "Gent Zuid"; their two errata fixed and said so: country "BE"
// is not ISO 3166-1 alpha-3, a price "2.00" is a string). Every converted
// object is held to our 2.2.1 schemas; every object we write in 2.1.1 to the
// 2.1.1 spec's field lists (ocpi-211-support.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOcpiTariff } from '../src/modules/stations/ingest.ts';
import type { OcpiLocation } from '../src/ocpi-protocol/locations-tariffs.ts';
import { readLocation } from '../src/ocpi-protocol/reader/location.ts';
import { authMethodTo211, cdrTo211, chargingPeriodsTo211, locationTo211, sessionTo211, tariffTo211 } from '../src/ocpi-protocol/v2_1_1/cpo-objects.ts';
import {
  cdrFrom211,
  cdrTokenOf211AuthId,
  chargingPeriodsFrom211,
  commandResponseFrom211,
  commandResultFrom211,
  connectorFrom211,
  connectorFrom211Put,
  credentialsFrom211,
  endpointsFrom211,
  evseFrom211,
  locationFrom211,
  parkingTypeOf211LocationType,
  placeOf211Location,
  sessionFrom211,
  sessionIdOf211Cdr,
  sessionPatchFrom211,
  tariffFrom211,
  vatOf211Tariff,
} from '../src/ocpi-protocol/v2_1_1/from-peer.ts';
import type { Location211 } from '../src/ocpi-protocol/v2_1_1/schemas.ts';
import {
  authIdOfToken,
  credentialsTo211,
  pushTo211,
  startSessionTo211,
  tokenTo211,
  tokenTypeTo211,
  versionDetailsTo211,
} from '../src/ocpi-protocol/v2_1_1/to-peer.ts';
import { parseCdr, parseCommandResult, parseSession } from '../src/ocpi-protocol/validate.ts';
import { problems211 } from './ocpi-211-support.ts';

const CPO = { country_code: 'BE', party_id: 'BEC' };
const US = { country_code: 'DE', party_id: 'CAX' };
const USER = '3f1c2b9e-7a44-4c1d-9a0e-5b8f2d6c1e77';

/** The location object of the spec's Session and CDR examples (country "BE" fixed to "BEL"). */
const gentZuid = () => ({
  id: 'LOC1',
  type: 'ON_STREET',
  name: 'Gent Zuid',
  address: 'F.Rooseveltlaan 3A',
  city: 'Gent',
  postal_code: '9000',
  country: 'BEL',
  coordinates: { latitude: '3.729944', longitude: '51.047599' },
  evses: [
    {
      uid: '3256',
      evse_id: 'BE-BEC-E041503003',
      status: 'AVAILABLE',
      connectors: [
        {
          id: '1',
          standard: 'IEC_62196_T2',
          format: 'SOCKET',
          power_type: 'AC_1_PHASE',
          voltage: 230,
          amperage: 64,
          tariff_id: '11',
          last_updated: '2015-06-29T22:39:09Z',
        },
      ],
      last_updated: '2015-06-29T22:39:09Z',
    },
  ],
  last_updated: '2015-06-29T22:39:09Z',
});

/** mod_sessions' example Session. */
const session = (authId = 'DE8ACC12E46L89') => ({
  id: '101',
  start_datetime: '2015-06-29T22:39:09Z',
  kwh: 0.0,
  auth_id: authId,
  auth_method: 'WHITELIST',
  location: gentZuid(),
  currency: 'EUR',
  total_cost: 2.5,
  status: 'PENDING',
  last_updated: '2015-06-29T22:39:09Z',
});

/** mod_cdrs' example CDR (the price "2.00" fixed to a number). */
const cdr = (authId = 'DE8ACC12E46L89') => ({
  id: '12345',
  start_date_time: '2015-06-29T21:39:09Z',
  stop_date_time: '2015-06-29T23:37:32Z',
  auth_id: authId,
  auth_method: 'WHITELIST',
  location: gentZuid(),
  currency: 'EUR',
  tariffs: [
    { id: '12', currency: 'EUR', elements: [{ price_components: [{ type: 'TIME', price: 2.0, step_size: 300 }] }], last_updated: '2015-02-02T14:15:01Z' },
  ],
  charging_periods: [{ start_date_time: '2015-06-29T21:39:09Z', dimensions: [{ type: 'TIME', volume: 1.973 }] }],
  total_cost: 4.0,
  total_energy: 15.342,
  total_time: 1.973,
  last_updated: '2015-06-29T22:01:13Z',
});

function value<T>(result: { ok: true; value: T } | { ok: false; errors: { path: string; message: string }[] }): T {
  assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.errors));
  return result.value;
}

/** A converted Location as the service takes it: through the tolerant reader (which derives a missing time_zone). */
function readConverted(converted: Record<string, unknown>): { location: OcpiLocation; rules: string[] } {
  const reading = readLocation(converted);
  assert.ok(reading.ok, reading.ok ? '' : reading.message);
  return { location: reading.value, rules: reading.findings.map((f) => f.rule) };
}

function errorsOf(result: { ok: boolean; errors?: { path: string; message: string }[] }): string {
  assert.equal(result.ok, false);
  return (result.errors ?? []).map((e) => `${e.path} ${e.message}`).join('; ');
}

describe('Locations from a 2.1.1 CPO', () => {
  it('become 2.2.1 Locations of the CPO’s party: published, parking_type from type, the time zone of the country, connectors renamed', () => {
    const location = value(locationFrom211(gentZuid(), CPO));
    const parsed = readConverted(location).location;
    assert.equal(parsed.country_code, 'BE');
    assert.equal(parsed.party_id, 'BEC');
    assert.equal(parsed.publish, true);
    assert.equal(parsed.parking_type, 'ON_STREET');
    assert.equal(parsed.time_zone, 'Europe/Brussels');
    assert.equal((location as { type?: unknown }).type, undefined);
    const connector = parsed.evses?.[0]?.connectors[0];
    assert.deepEqual(
      { max_voltage: connector?.max_voltage, max_amperage: connector?.max_amperage, tariff_ids: connector?.tariff_ids },
      { max_voltage: 230, max_amperage: 64, tariff_ids: ['11'] },
    );
    assert.equal((connector as { voltage?: unknown }).voltage, undefined);
  });

  it('keep their own time zone; without one (optional in 2.1.1) the tolerant reader derives it', () => {
    assert.equal(readConverted(value(locationFrom211({ ...gentZuid(), time_zone: 'Europe/Oslo' }, CPO))).location.time_zone, 'Europe/Oslo');
    const derived = readConverted(value(locationFrom211(gentZuid(), CPO)));
    assert.equal(derived.location.time_zone, 'Europe/Brussels');
    assert.ok(derived.rules.includes('time-zone-derived'));
  });

  it('map the four parking kinds of LocationType; OTHER and UNKNOWN say nothing', () => {
    assert.equal(parkingTypeOf211LocationType('UNDERGROUND_GARAGE'), 'UNDERGROUND_GARAGE');
    assert.equal(parkingTypeOf211LocationType('OTHER'), undefined);
    assert.equal(parkingTypeOf211LocationType('UNKNOWN'), undefined);
    assert.equal(value(locationFrom211({ ...gentZuid(), type: 'UNKNOWN' }, CPO)).parking_type, undefined);
  });

  it('are refused, naming the field, when a 2.1.1 required field is missing (the spec example’s 2-letter country too)', () => {
    const { postal_code: _p, ...noPostal } = gentZuid();
    assert.match(errorsOf(locationFrom211(noPostal, CPO)), /postal_code/);
    assert.match(errorsOf(locationFrom211({ ...gentZuid(), country: 'BE' }, CPO)), /\/country/);
  });

  it('an EVSE or Connector pushed on its own is converted, or refused naming the 2.1.1 field it lacks', () => {
    const evse = gentZuid().evses[0];
    assert.ok(evse?.connectors[0]);
    const converted = value(evseFrom211(evse)) as { connectors: { max_voltage?: number; voltage?: number }[] };
    assert.deepEqual([converted.connectors[0]?.max_voltage, converted.connectors[0]?.voltage], [230, undefined]);
    const { amperage: _a, ...noAmperage } = evse.connectors[0];
    assert.match(errorsOf(connectorFrom211Put(noAmperage)), /amperage/);
    assert.match(errorsOf(evseFrom211({ ...evse, connectors: [] })), /connectors/);
  });

  it('connector without tariff_id has no tariff_ids', () => {
    const full = gentZuid().evses[0]?.connectors[0];
    assert.ok(full);
    const { tariff_id: _t, ...connector } = full;
    assert.equal(connectorFrom211(connector as never).tariff_ids, undefined);
  });
});

describe('Tariffs from a 2.1.1 CPO', () => {
  it('become 2.2.1 Tariffs of the party, their prices (excluding VAT in 2.1.1) with the VAT rate of the CPO’s country', () => {
    const tariff = value(tariffFrom211(cdr().tariffs[0], CPO));
    const parsed = parseOcpiTariff(tariff);
    assert.equal(parsed.country_code, 'BE');
    assert.deepEqual(parsed.elements[0]?.price_components[0], { type: 'TIME', price: 2, step_size: 300, vat: 21 });
    assert.equal(vatOf211Tariff({ country_code: 'XX', party_id: 'ABC' }), undefined, 'no rate we know: none');
    const unknown = value(tariffFrom211(cdr().tariffs[0], { country_code: 'XX', party_id: 'ABC' })) as { elements: { price_components: object[] }[] };
    assert.deepEqual(unknown.elements[0]?.price_components[0], { type: 'TIME', price: 2, step_size: 300 });
  });
});

describe('Sessions from a 2.1.1 CPO', () => {
  it('name their place by the one EVSE and connector of their location object, their token by auth_id, their cost as a Price', () => {
    const converted = parseSession(value(sessionFrom211(session(), CPO, US)));
    assert.ok(converted.ok, JSON.stringify(!converted.ok && converted.errors));
    const s = converted.value;
    assert.deepEqual([s.location_id, s.evse_uid, s.connector_id], ['LOC1', '3256', '1']);
    assert.equal(s.start_date_time, '2015-06-29T22:39:09Z');
    assert.deepEqual(s.total_cost, { excl_vat: 2.5 });
    assert.deepEqual(s.cdr_token, { country_code: 'DE', party_id: 'CAX', uid: 'DE8ACC12E46L89', type: 'OTHER', contract_id: 'DE8ACC12E46L89' });
    assert.equal(s.authorization_reference, undefined);
  });

  it('of our users (auth_id is the user id we gave as the Token’s auth_id) carry our APP_USER token', () => {
    assert.deepEqual(cdrTokenOf211AuthId(USER.toUpperCase(), US), { ...US, uid: USER, type: 'APP_USER', contract_id: USER.toUpperCase() });
    const s = value(sessionFrom211(session(USER), CPO, US)) as { cdr_token: { uid: string; type: string } };
    assert.deepEqual([s.cdr_token.uid, s.cdr_token.type], [USER, 'APP_USER']);
    assert.equal(authIdOfToken({ uid: USER }), USER, 'the auth_id we send is the one we read back');
  });

  it('are refused when the location object does not say which EVSE or connector was used', () => {
    const twoEvses = gentZuid();
    twoEvses.evses.push({ ...(twoEvses.evses[0] as (typeof twoEvses.evses)[number]), uid: '3257' });
    assert.match(errorsOf(placeOf211Location(twoEvses as Location211)), /exactly the EVSE used \(it holds 2\)/);
    const twoConnectors = gentZuid();
    const evse = twoConnectors.evses[0] as (typeof twoConnectors.evses)[number];
    evse.connectors.push({ ...(evse.connectors[0] as (typeof evse.connectors)[number]), id: '2' });
    assert.match(errorsOf(sessionFrom211({ ...session(), location: twoConnectors }, CPO, US)), /connector used/);
  });

  it('PATCHes are renamed field by field', () => {
    assert.deepEqual(sessionPatchFrom211({ end_datetime: '2015-06-29T23:00:00Z', total_cost: 3, kwh: 5, last_updated: '2015-06-29T23:00:00Z' }, US), {
      end_date_time: '2015-06-29T23:00:00Z',
      total_cost: { excl_vat: 3 },
      kwh: 5,
      last_updated: '2015-06-29T23:00:00Z',
    });
  });
});

describe('CDRs from a 2.1.1 CPO', () => {
  it('become 2.2.1 CDRs: end_date_time, a CdrLocation from the location object, tariffs of the party, total_cost as a Price', () => {
    const parsed = parseCdr(value(cdrFrom211(cdr(), CPO, US)));
    assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
    const c = parsed.value;
    assert.equal(c.end_date_time, '2015-06-29T23:37:32Z');
    assert.deepEqual(c.total_cost, { excl_vat: 4 });
    assert.equal(c.session_id, undefined, '2.1.1 names no session (linked later: sessionIdOf211Cdr)');
    assert.deepEqual(
      [c.cdr_location.id, c.cdr_location.evse_uid, c.cdr_location.evse_id, c.cdr_location.connector_id, c.cdr_location.connector_power_type],
      ['LOC1', '3256', 'BE-BEC-E041503003', '1', 'AC_1_PHASE'],
    );
    assert.equal(c.tariffs?.[0]?.country_code, 'BE');
  });

  it('name an EVSE without evse_id by its uid', () => {
    const withoutEvseId = cdr();
    delete (withoutEvseId.location.evses[0] as { evse_id?: string }).evse_id;
    const c = value(cdrFrom211(withoutEvseId, CPO, US)) as { cdr_location: { evse_id: string } };
    assert.equal(c.cdr_location.evse_id, '3256');
  });

  it('drop FLAT, which 2.2.1 has no dimension for, and periods left empty; a CDR left with no period is refused', () => {
    const periods = [
      { start_date_time: '2015-06-29T21:39:09Z', dimensions: [{ type: 'FLAT', volume: 1 }] },
      {
        start_date_time: '2015-06-29T21:40:09Z',
        dimensions: [
          { type: 'FLAT', volume: 1 },
          { type: 'ENERGY', volume: 2.5 },
        ],
      },
    ];
    assert.deepEqual(chargingPeriodsFrom211(periods as never), [{ start_date_time: '2015-06-29T21:40:09Z', dimensions: [{ type: 'ENERGY', volume: 2.5 }] }]);
    assert.match(errorsOf(cdrFrom211({ ...cdr(), charging_periods: [periods[0]] }, CPO, US)), /charging_periods/);
  });

  it('are linked to the Session of the same connector whose start is the CDR’s, else the nearest within 5 minutes, never a tie', () => {
    const converted = value(cdrFrom211(cdr(), CPO, US)) as Parameters<typeof sessionIdOf211Cdr>[0];
    const at = (id: string, start: string, connector = '1') => ({ id, start_date_time: start, location_id: 'LOC1', evse_uid: '3256', connector_id: connector });
    assert.equal(sessionIdOf211Cdr(converted, [at('a', '2015-06-29T21:30:00Z'), at('b', '2015-06-29T21:39:09Z')]), 'b');
    assert.equal(sessionIdOf211Cdr(converted, [at('a', '2015-06-29T21:37:09Z'), at('b', '2015-06-29T21:42:09Z')]), 'a', 'nearest');
    assert.equal(sessionIdOf211Cdr(converted, [at('a', '2015-06-29T21:37:09Z'), at('b', '2015-06-29T21:41:09Z')]), undefined, 'a tie');
    assert.equal(sessionIdOf211Cdr(converted, [at('a', '2015-06-29T21:30:00Z')]), undefined, '9 minutes apart');
    assert.equal(sessionIdOf211Cdr(converted, [at('a', '2015-06-29T21:39:09Z', '2')]), undefined, 'another connector');
  });
});

describe('commands and handshakes with a 2.1.1 CPO', () => {
  it('its command results become 2.2.1 CommandResults; UNKNOWN_SESSION is FAILED', () => {
    assert.deepEqual(value(commandResultFrom211({ result: 'ACCEPTED' })), { result: 'ACCEPTED' });
    assert.deepEqual(value(commandResultFrom211({ result: 'UNKNOWN_SESSION' })), { result: 'FAILED' });
    assert.ok(parseCommandResult(value(commandResultFrom211({ result: 'TIMEOUT' }))).ok);
    assert.match(errorsOf(commandResultFrom211({ result: 'EVSE_OCCUPIED' })), /result/);
  });

  it('its answers to commands get our timeout; TIMEOUT is a refusal', () => {
    assert.deepEqual(value(commandResponseFrom211({ result: 'ACCEPTED' }, 30)), { result: 'ACCEPTED', timeout: 30 });
    assert.deepEqual(value(commandResponseFrom211({ result: 'TIMEOUT' }, 30)), {
      result: 'REJECTED',
      timeout: 30,
      message: [{ language: 'en', text: 'TIMEOUT' }],
    });
  });

  it('its credentials (one party, no roles) are a CPO role; ours go out as one party', () => {
    const body = {
      token: 'ebf3b399-779f-4497-9b9d-ac6ad3cc44d2',
      url: 'https://example.com/ocpi/cpo/versions',
      business_details: { name: 'Example Operator' },
      party_id: 'EXA',
      country_code: 'NL',
    };
    assert.deepEqual(value(credentialsFrom211(body)).roles, [
      { role: 'CPO', business_details: { name: 'Example Operator' }, party_id: 'EXA', country_code: 'NL' },
    ]);
    assert.match(errorsOf(credentialsFrom211({ ...body, party_id: undefined })), /party_id/);
    const ours = credentialsTo211({
      token: 'tok',
      url: 'https://emsp.example/ocpi/versions',
      roles: [{ role: 'EMSP', business_details: { name: 'Charging Access' }, ...US }],
    });
    assert.deepEqual(problems211('Credentials', ours), []);
  });

  it('its endpoints get the role a CPO plays; ours go out without roles or hubclientinfo', () => {
    const endpoints = value(
      endpointsFrom211({
        version: '2.1.1',
        endpoints: ['credentials', 'locations', 'tariffs', 'sessions', 'cdrs', 'commands', 'tokens'].map((identifier) => ({
          identifier,
          url: `https://cpo.example/ocpi/2.1.1/${identifier}`,
        })),
      }),
    );
    assert.deepEqual(
      endpoints.map((e) => `${e.identifier}:${e.role}`),
      ['credentials:SENDER', 'locations:SENDER', 'tariffs:SENDER', 'sessions:SENDER', 'cdrs:SENDER', 'commands:RECEIVER', 'tokens:RECEIVER'],
    );
    const ours = versionDetailsTo211([
      { identifier: 'credentials', url: 'https://e/ocpi/2.1.1/credentials' },
      { identifier: 'hubclientinfo', url: 'https://e/ocpi/2.1.1/hubclientinfo' },
    ]);
    assert.deepEqual(ours, { version: '2.1.1', endpoints: [{ identifier: 'credentials', url: 'https://e/ocpi/2.1.1/credentials' }] });
  });
});

describe('tokens and commands to a 2.1.1 CPO', () => {
  const token = {
    country_code: 'DE',
    party_id: 'CAX',
    uid: USER,
    type: 'APP_USER',
    contract_id: 'DE-CAX-C000000000042',
    issuer: 'Charging Access',
    valid: true,
    whitelist: 'ALLOWED',
    language: 'de',
    last_updated: '2026-11-24T10:00:00.000Z',
  };

  it('a Token has no party and a 2.1.1 type (OTHER for an app user), the user id as auth_id and the contract id as visual_number', () => {
    const t = tokenTo211(token);
    assert.deepEqual(problems211('Token', t), []);
    assert.deepEqual([t.type, t.auth_id, t.visual_number], ['OTHER', USER, 'DE-CAX-C000000000042']);
    assert.equal(tokenTypeTo211('RFID'), 'RFID');
    assert.equal(tokenTypeTo211('AD_HOC_USER'), 'OTHER');
  });

  it('a token push goes without the type parameter 2.1.1 does not have', () => {
    const push = pushTo211({ module: 'tokens', path: `/DE/CAX/${USER}?type=APP_USER`, body: token });
    assert.equal(push.path, `/DE/CAX/${USER}`);
    assert.deepEqual(problems211('Token', push.body), []);
  });

  it('START_SESSION has no connector_id or authorization_reference', () => {
    const command = startSessionTo211({ response_url: 'https://e/ocpi/2.1.1/commands/START_SESSION/1/s', token, location_id: 'LOC1', evse_uid: '3256' });
    assert.deepEqual(problems211('StartSession', command), []);
  });
});

describe('2.2.1 CPO objects written as 2.1.1 (cpo-objects.ts)', () => {
  it('a Location, Tariff, Session and CDR read from the spec’s examples are written back as 2.1.1 objects with the same values', () => {
    const location = readConverted(value(locationFrom211(gentZuid(), CPO))).location;
    const written = locationTo211(location);
    assert.deepEqual(problems211('Location', written), []);
    assert.deepEqual(written, { ...gentZuid(), time_zone: 'Europe/Brussels' });
    const tariff = tariffTo211(parseOcpiTariff(value(tariffFrom211(cdr().tariffs[0], CPO))));
    assert.deepEqual(tariff, cdr().tariffs[0], 'the VAT we added is not a 2.1.1 field');
    const s = parseSession(value(sessionFrom211(session(), CPO, US)));
    assert.ok(s.ok);
    const sessionBack = sessionTo211(s.value, location);
    assert.deepEqual(problems211('Session', sessionBack), []);
    assert.deepEqual(sessionBack, { ...session(), location: { ...gentZuid(), time_zone: 'Europe/Brussels' } });
    const c = parseCdr(value(cdrFrom211(cdr(), CPO, US)));
    assert.ok(c.ok);
    const cdrBack = cdrTo211(c.value, location);
    assert.deepEqual(problems211('CDR', cdrBack), []);
    assert.deepEqual(cdrBack, { ...cdr(), location: { ...gentZuid(), time_zone: 'Europe/Brussels' } });
  });

  it('decides for 2.1.1: COMMAND is AUTH_REQUEST, dimensions 2.1.1 lacks are left out, a parking type it lacks is UNKNOWN', () => {
    assert.equal(authMethodTo211('COMMAND'), 'AUTH_REQUEST');
    assert.equal(authMethodTo211('WHITELIST'), 'WHITELIST');
    assert.deepEqual(
      chargingPeriodsTo211([
        { start_date_time: '2026-01-01T00:00:00Z', dimensions: [{ type: 'POWER', volume: 11 }] },
        {
          start_date_time: '2026-01-01T00:05:00Z',
          dimensions: [
            { type: 'ENERGY', volume: 1 },
            { type: 'STATE_OF_CHARGE', volume: 40 },
          ],
        },
      ]),
      [{ start_date_time: '2026-01-01T00:05:00Z', dimensions: [{ type: 'ENERGY', volume: 1 }] }],
    );
    const location = readConverted({ ...value(locationFrom211(gentZuid(), CPO)), parking_type: 'ALONG_MOTORWAY' }).location;
    assert.equal(locationTo211(location).type, 'UNKNOWN');
  });
});
