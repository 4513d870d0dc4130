// What CPOs push, through HTTP: the tolerant reader on every Receiver (imperfect
// Locations, EVSEs, Tariffs, Sessions and CDRs are normalized and stored, what
// cannot be used is refused per part and said so), the record of it per
// connection (cpo quality, bounded), and the status_codes rule for refusals:
// a request that is valid JSON, authenticated and addresses an existing
// resource is answered HTTP 200 with the OCPI error, whatever its media type.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { qualityReport } from '../src/modules/ocpi/quality.ts';
import type * as repo from '../src/modules/ocpi/repository.ts';
import { parseLocation, parseTariff } from '../src/ocpi-protocol/validate.ts';
import { setupTestApp, type TestContext, type TestResponse } from './helpers.ts';
import { ocpiAuthorization, registerPeer } from './ocpi-support.ts';
import { ocpiLocation, ocpiTariff } from './stations-fixtures.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests build imperfect objects freely
type Loose = any;

let ctx: TestContext;
let token: string;
let connectionId: string;

before(async () => {
  ctx = await setupTestApp();
  token = await registerPeer(ctx.ocpi, ctx, { name: 'tolerant-cpo' });
  connectionId = ((await ctx.ocpi.connections.findByName('tolerant-cpo')) as repo.Connection).id;
});
after(() => ctx.close());

/** An OCPI request with a raw body (string) or JSON, and the headers given (content-type none unless given). */
async function raw(method: string, path: string, body: string | undefined, headers: Record<string, string> = {}): Promise<TestResponse> {
  const res = await ctx.app.inject({
    method: method as 'GET',
    url: `/ocpi${path}`,
    headers: { ...ocpiAuthorization(token), ...headers },
    ...(body === undefined ? {} : { payload: body }),
  });
  return { status: res.statusCode, headers: res.headers, body: res.body ? JSON.parse(res.body) : undefined, text: res.body };
}
const ocpi = (method: string, path: string, body?: unknown) =>
  raw(method, path, body === undefined ? undefined : JSON.stringify(body), body === undefined ? {} : { 'content-type': 'application/json' });

function assertEnvelope(res: TestResponse, httpStatus: number, statusCode: number): void {
  assert.equal(res.status, httpStatus, res.text);
  assert.equal(res.body.status_code, statusCode, res.text);
}

const location = (id: string): Loose => structuredClone(ocpiLocation({ id, lat: 52.520008, lon: 13.404954, evses: [{}, {}] }));

function session(id: string, overrides: Record<string, unknown> = {}): Loose {
  return {
    country_code: 'DE',
    party_id: 'ABC',
    id,
    start_date_time: '2026-02-10T10:00:00Z',
    kwh: 0,
    cdr_token: { country_code: 'DE', party_id: 'CAX', uid: 'u1', type: 'APP_USER', contract_id: 'DE-CAX-C1' },
    auth_method: 'COMMAND',
    location_id: 'LOC1',
    evse_uid: 'LOC1-1',
    connector_id: '1',
    currency: 'EUR',
    status: 'ACTIVE',
    last_updated: '2026-02-10T10:00:00Z',
    ...overrides,
  };
}

function cdr(id: string): Loose {
  return {
    country_code: 'DE',
    party_id: 'ABC',
    id,
    start_date_time: '2026-02-10T10:00:00Z',
    end_date_time: '2026-02-10T11:00:00Z',
    cdr_token: { country_code: 'DE', party_id: 'CAX', uid: 'u1', type: 'APP_USER', contract_id: 'DE-CAX-C1' },
    auth_method: 'COMMAND',
    cdr_location: {
      id: 'LOC1',
      address: 'Street 1',
      city: 'Berlin',
      country: 'DEU',
      coordinates: { latitude: '52.5200', longitude: '13.4050' },
      evse_uid: 'LOC1-1',
      evse_id: 'DE*ABC*ELOC11',
      connector_id: '1',
      connector_standard: 'IEC_62196_T2',
      connector_format: 'CABLE',
      connector_power_type: 'AC_3_PHASE',
    },
    currency: 'EUR',
    charging_periods: [{ start_date_time: '2026-02-10T10:00:00Z', dimensions: [{ type: 'ENERGY', volume: 10 }] }],
    total_cost: { excl_vat: 3.9, incl_vat: 4.64 },
    total_energy: 10,
    total_time: 1,
    meter_id: '',
    last_updated: '2026-02-10T11:00:00Z',
  };
}

const rulesOf = async () => {
  const report = await qualityReport(ctx.db, connectionId);
  return new Map(report.rules.map((r) => [`${r.module} ${r.rule}`, r]));
};

describe('refusals of requests that reached the OCPI layer (status_codes)', () => {
  const protoBody = '{"id": "X", "__proto__": {"polluted": true}}';
  const constructorBody = '{"id": "X", "x": {"constructor": {"prototype": {"polluted": true}}}}';
  // Every kind of route that takes a body: valid JSON we refuse to process is HTTP 200 with 2001, never 400.
  const routes: [string, string][] = [
    ['PUT', '/2.2.1/locations/DE/ABC/REF-LOC'],
    ['PATCH', '/2.2.1/locations/DE/ABC/REF-LOC'],
    ['PUT', '/2.2.1/locations/DE/ABC/REF-LOC/REF-LOC-1'],
    ['PATCH', '/2.2.1/locations/DE/ABC/REF-LOC/REF-LOC-1'],
    ['PUT', '/2.2.1/locations/DE/ABC/REF-LOC/REF-LOC-1/1'],
    ['PATCH', '/2.2.1/locations/DE/ABC/REF-LOC/REF-LOC-1/1'],
    ['PUT', '/2.2.1/tariffs/DE/ABC/REF-T'],
    ['PUT', '/2.2.1/sessions/DE/ABC/REF-S'],
    ['PATCH', '/2.2.1/sessions/DE/ABC/REF-S'],
    ['POST', '/2.2.1/cdrs'],
    ['POST', '/2.2.1/commands/START_SESSION/00000000-0000-4000-8000-000000000009/secret'],
    ['POST', '/2.2.1/tokens/NO-SUCH-UID/authorize'],
  ];

  before(async () => {
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/REF-LOC', { ...location('REF-LOC') }), 201, 1000);
  });

  for (const [method, path] of routes) {
    it(`${method} ${path.replace(/\/DE\/ABC/, '/{party}')}: a __proto__ key is 2001 in HTTP 200, a body that is no JSON is 400`, async () => {
      for (const body of [protoBody, constructorBody]) {
        const res = await raw(method, path, body, { 'content-type': 'application/json' });
        assertEnvelope(res, 200, 2001);
        assert.match(res.body.status_message, /__proto__ or constructor\.prototype/);
      }
      assertEnvelope(await raw(method, path, '{"id": ', { 'content-type': 'application/json' }), 400, 2001);
      assertEnvelope(await raw(method, path, '', { 'content-type': 'application/json' }), 400, 2001);
    });
  }

  it('a body nested thousands deep (valid JSON, a few kB) is 2001 in HTTP 200, never a 500 from a stack overflow', async () => {
    const deep = `{"id": "X", "x": ${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    for (const [method, path] of [
      ['PUT', '/2.2.1/locations/DE/ABC/REF-LOC'],
      ['POST', '/2.2.1/cdrs'],
    ] as const) {
      const res = await raw(method, path, deep, { 'content-type': 'application/json' });
      assertEnvelope(res, 200, 2001);
      assert.match(res.body.status_message, /nested deeper than 64 levels/);
    }
    // As deep as OCPI objects go, and well beyond: still read.
    const nested = { id: 'REF-LOC', x: JSON.parse(`${'['.repeat(30)}1${']'.repeat(30)}`) };
    const fine = await raw('PATCH', '/2.2.1/locations/DE/ABC/REF-LOC', JSON.stringify({ ...nested, last_updated: new Date().toISOString() }), {
      'content-type': 'application/json',
    });
    assert.equal(fine.status, 200);
    assert.doesNotMatch(String(fine.body.status_message ?? ''), /nested deeper/);
  });

  it('reads JSON whatever the Content-Type says (none, octet-stream, text/plain, a vendor type): schema refusals are 2001 in HTTP 200, not 415', async () => {
    const media: Record<string, string>[] = [
      {},
      { 'content-type': 'application/octet-stream' },
      { 'content-type': 'text/plain; charset=utf-8' },
      { 'content-type': 'application/vnd.ocpi+json' },
    ];
    for (const headers of media) {
      const refused = await raw('PUT', '/2.2.1/sessions/DE/ABC/REF-S', JSON.stringify({ id: 'REF-S' }), headers);
      assertEnvelope(refused, 200, 2001);
      assert.match(refused.body.status_message, /Session: \/start_date_time is required/);
      const stored = await raw('PUT', '/2.2.1/tariffs/DE/ABC/CT-T', JSON.stringify(ocpiTariff('CT-T', 0.3)), headers);
      assert.ok([200, 201].includes(stored.status), stored.text);
      assert.equal(stored.body.status_code, 1000);
    }
    assertEnvelope(await raw('PUT', '/2.2.1/tariffs/DE/ABC/CT-T', 'not json', { 'content-type': 'text/plain' }), 400, 2001);
  });

  it('takes a DELETE that says Content-Type: application/json with no body', async () => {
    assertEnvelope(await raw('DELETE', '/2.2.1/tariffs/DE/ABC/CT-T', undefined, { 'content-type': 'application/json' }), 200, 1000);
    assertEnvelope(await raw('DELETE', '/2.2.1/tariffs/DE/ABC/CT-T', '', { 'content-type': 'application/json' }), 404, 2000);
  });
});

describe('the tolerant reader on the Receivers', () => {
  it('stores a pushed Location with 4-decimal coordinates, no time_zone, 24:00, "" ids and an unknown status, normalized', async () => {
    const raw = location('QUIRKY');
    raw.coordinates = { latitude: '52.5200', longitude: '13.4050' };
    delete raw.time_zone;
    raw.opening_times = { twentyfourseven: false, regular_hours: [{ weekday: 1, period_begin: '06:00', period_end: '24:00' }] };
    raw.postal_code = '';
    raw.evses[0].status = 'OUT_OF_SERVICE';
    raw.evses[1].connectors[0].standard = 'NACS';
    raw.x_vendor_rating = 5;
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/QUIRKY', raw), 201, 1000);
    const stored = (await ocpi('GET', '/2.2.1/locations/DE/ABC/QUIRKY')).body.data;
    assert.deepEqual(stored.coordinates, { latitude: '52.52000', longitude: '13.40500' });
    assert.equal(stored.time_zone, 'Europe/Berlin');
    assert.equal(stored.opening_times.regular_hours[0].period_end, '23:59');
    assert.equal('postal_code' in stored, false);
    assert.equal(stored.evses[0].status, 'UNKNOWN');
    assert.ok(parseLocation(stored).ok, 'what we answer is strictly 2.2.1');
    const rules = await rulesOf();
    for (const rule of ['coordinates-precision', 'time-zone-derived', 'period-end-24h', 'empty-string-as-absent', 'unknown-status', 'unknown-enum-kept']) {
      const r = rules.get(`locations ${rule}`);
      assert.ok(r, rule);
      assert.equal(r.examples[0]?.object_id, 'DE*ABC*QUIRKY', rule);
    }
    // Our station view shows what 2.2.1 does not know as unknown: the EVSE's status, the connector standard's group.
    await ctx.catalogue.reload();
    const client = await ctx.newClient();
    const around = await ctx.call('GET', '/api/v1/stations/around/?latitude=52.52&longitude=13.405&distance=1000', { token: client.token });
    const station = around.body.results?.find((s: { name: string }) => s.name === 'Station QUIRKY');
    assert.ok(station, around.text);
    assert.deepEqual(
      station.evses.map((e: { status: string }) => e.status),
      ['UNKNOWN', 'AVAILABLE'],
    );
    assert.deepEqual(station.price_groups.map((g: { type: string }) => g.type).sort(), ['IEC_62196_T2', 'UNKNOWN']);
  });

  it('stores a Location without the EVSE that cannot be used, and says which; refuses one without coordinates', async () => {
    const raw = location('PART');
    delete raw.evses[0].uid;
    raw.evses[1].connectors[0].power_type = 'AC_4_PHASE';
    raw.evses.push({ ...structuredClone(location('PART').evses[1]), uid: 'PART-3' });
    const res = await ocpi('PUT', '/2.2.1/locations/DE/ABC/PART', raw);
    assertEnvelope(res, 201, 1000);
    assert.match(
      res.body.status_message,
      /stored without DE\*ABC\*EPART1 \(no-evse-uid\), PART-2\/1 \(unknown-enum-refused\), PART-2 \(evse-without-connectors\)/,
    );
    const stored = (await ocpi('GET', '/2.2.1/locations/DE/ABC/PART')).body.data;
    assert.deepEqual(
      stored.evses.map((e: { uid: string }) => e.uid),
      ['PART-3'],
    );
    const nowhere = location('NOWHERE');
    nowhere.coordinates = { latitude: '', longitude: '' };
    const refused = await ocpi('PUT', '/2.2.1/locations/DE/ABC/NOWHERE', nowhere);
    assertEnvelope(refused, 200, 2001);
    assert.match(refused.body.status_message, /\/coordinates must be a latitude and longitude/);
    assertEnvelope(await ocpi('GET', '/2.2.1/locations/DE/ABC/NOWHERE'), 404, 2003);
    const rules = await rulesOf();
    assert.equal(rules.get('locations no-coordinates')?.kind, 'rejected');
    assert.equal(rules.get('locations no-evse-uid')?.examples[0]?.part, 'DE*ABC*EPART1');
  });

  it('refuses a pushed EVSE or connector that cannot be used (2001), and takes an unknown EVSE status PATCH as UNKNOWN', async () => {
    const evse = location('PART').evses[1];
    const noConnector = await ocpi('PUT', '/2.2.1/locations/DE/ABC/PART/PART-4', {
      ...evse,
      uid: 'PART-4',
      connectors: [{ ...evse.connectors[0], format: 'PLUG' }],
    });
    assertEnvelope(noConnector, 200, 2001);
    assert.match(noConnector.body.status_message, /\/connectors\/0\/format is not a 2\.2\.1 value \("PLUG"\)/);
    const connector = await ocpi('PUT', '/2.2.1/locations/DE/ABC/PART/PART-3/2', { ...evse.connectors[0], id: '2', power_type: 'AC' });
    assertEnvelope(connector, 200, 2001);
    assertEnvelope(await ocpi('PATCH', '/2.2.1/locations/DE/ABC/PART/PART-3', { status: 'Faulted', last_updated: '2026-03-01T10:00:00Z' }), 200, 1000);
    assert.equal((await ocpi('GET', '/2.2.1/locations/DE/ABC/PART/PART-3')).body.data.status, 'UNKNOWN');
    assertEnvelope(await ocpi('PATCH', '/2.2.1/locations/DE/ABC/PART/PART-3', { status: 'charging', last_updated: '2026-03-01 11:00:00+0100' }), 200, 1000);
    const patched = (await ocpi('GET', '/2.2.1/locations/DE/ABC/PART/PART-3')).body.data;
    assert.equal(patched.status, 'CHARGING');
    assert.equal(patched.last_updated, '2026-03-01T10:00:00.000Z');
    // A PATCH that leaves the EVSE without a usable connector is refused, the stored EVSE stays.
    const broken = await ocpi('PATCH', '/2.2.1/locations/DE/ABC/PART/PART-3', { connectors: [], last_updated: '2026-03-01T12:00:00Z' });
    assertEnvelope(broken, 200, 2001);
    assert.equal((await ocpi('GET', '/2.2.1/locations/DE/ABC/PART/PART-3')).body.data.connectors.length, 1);
    const rules = await rulesOf();
    assert.equal(rules.get('locations unknown-status')?.examples[0]?.part, 'PART-3');
  });

  it('stores a Tariff with VAT as a fraction and end_time 24:00; refuses an ambiguous VAT and names it', async () => {
    const raw: Loose = ocpiTariff('FRACTION', 0.39);
    raw.elements[0].price_components[0].vat = 0.19;
    raw.elements[0].restrictions = { start_time: '20:00', end_time: '24:00' };
    assertEnvelope(await ocpi('PUT', '/2.2.1/tariffs/DE/ABC/FRACTION', raw), 201, 1000);
    const stored = (await ocpi('GET', '/2.2.1/tariffs/DE/ABC/FRACTION')).body.data;
    assert.equal(stored.elements[0].price_components[0].vat, 19);
    assert.equal(stored.elements[0].restrictions.end_time, '00:00');
    assert.ok(parseTariff(stored).ok);
    raw.elements[0].price_components[0].vat = 0.5;
    const refused = await ocpi('PUT', '/2.2.1/tariffs/DE/ABC/AMBIGUOUS', { ...raw, id: 'AMBIGUOUS' });
    assertEnvelope(refused, 200, 2001);
    assert.match(refused.body.status_message, /\/elements\/0\/price_components\/0\/vat 0\.5 is neither a percentage nor a plausible fraction/);
    const rules = await rulesOf();
    assert.equal(rules.get('tariffs vat-fraction')?.examples[0]?.detail, '0.19 -> 19');
    assert.equal(rules.get('tariffs vat-ambiguous')?.examples[0]?.object_id, 'DE*ABC*AMBIGUOUS');
  });

  it('stores a Session with "" optional ids and enum values in lower case, and PATCHes it with a kWh as a string', async () => {
    assertEnvelope(
      await ocpi('PUT', '/2.2.1/sessions/DE/ABC/TS1', session('TS1', { status: 'pending', meter_id: '', authorization_reference: '' })),
      201,
      1000,
    );
    assertEnvelope(await ocpi('PATCH', '/2.2.1/sessions/DE/ABC/TS1', { status: 'Active', kwh: '1.25', last_updated: '2026-02-10T10:05:00Z' }), 200, 1000);
    const stored = (await ocpi('GET', '/2.2.1/sessions/DE/ABC/TS1')).body.data;
    assert.equal(stored.status, 'ACTIVE');
    assert.equal(stored.kwh, 1.25);
    assert.equal('meter_id' in stored, false);
    const refused = await ocpi('PUT', '/2.2.1/sessions/DE/ABC/TS2', session('TS2', { status: 'SUSPENDED' }));
    assertEnvelope(refused, 200, 2001);
    assert.match(refused.body.status_message, /\/status "SUSPENDED" is not one of/);
    const rules = await rulesOf();
    assert.ok(rules.get('sessions enum-case'));
    assert.ok(rules.get('sessions number-as-string'));
    assert.equal(rules.get('sessions unknown-enum-refused')?.examples[0]?.object_id, 'DE*ABC*TS2');
  });

  it('stores a CDR with 4-decimal coordinates and an empty meter_id', async () => {
    assertEnvelope(await ocpi('POST', '/2.2.1/cdrs', cdr('TCDR1')), 201, 1000);
    const stored = (await ocpi('GET', '/2.2.1/cdrs/DE/ABC/TCDR1')).body.data;
    assert.deepEqual(stored.cdr_location.coordinates, { latitude: '52.52000', longitude: '13.40500' });
    assert.equal('meter_id' in stored, false);
    assert.ok((await rulesOf()).get('cdrs coordinates-precision'));
  });
});

describe('the record of findings per connection', () => {
  it('stays bounded: 300 refused pushes are one count and 5 examples, the newest first', async () => {
    for (let i = 0; i < 300; i++) {
      const raw = location(`NOCOORD-${i}`);
      delete raw.coordinates;
      assertEnvelope(await ocpi('PUT', `/2.2.1/locations/DE/ABC/NOCOORD-${i}`, raw), 200, 2001);
    }
    const rule = (await rulesOf()).get('locations no-coordinates');
    assert.ok(rule);
    assert.equal(rule.count, 301);
    assert.deepEqual(
      rule.examples.map((e) => e.object_id),
      ['DE*ABC*NOCOORD-299', 'DE*ABC*NOCOORD-298', 'DE*ABC*NOCOORD-297', 'DE*ABC*NOCOORD-296', 'DE*ABC*NOCOORD-295'],
    );
    const rows = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ocpi_quality_examples WHERE connection_id = $1 AND rule = $2', [
      connectionId,
      'no-coordinates',
    ]);
    assert.equal(rows.rows[0]?.n, 5);
  });

  it('never records what identifies a driver: a finding under cdr_token has no detail', async () => {
    const raw = session('TS3');
    raw.cdr_token.type = 'app_user';
    assertEnvelope(await ocpi('PUT', '/2.2.1/sessions/DE/ABC/TS3', raw), 201, 1000);
    const { rows } = await ctx.db.query<{ path: string; detail: string | null }>(
      `SELECT path, detail FROM ocpi_quality_examples WHERE connection_id = $1 AND path LIKE '/cdr_token/%'`,
      [connectionId],
    );
    assert.ok(rows.length > 0);
    for (const row of rows) assert.equal(row.detail, null, row.path);
  });
});
