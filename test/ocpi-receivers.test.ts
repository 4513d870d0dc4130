// The OCPI interface CPOs call, through HTTP: authentication by credentials
// token, the envelope and status codes, Location/EVSE/Connector PUT and PATCH
// semantics, Tariffs, Sessions (charging periods appended), immutable CDRs,
// command results, and our Tokens sender interface.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exchangeProblems, type RecordedExchange } from '../scripts/ocpi-exchange-rules.ts';
import { deliverDuePushes } from '../src/modules/ocpi/push-delivery.ts';
import { qualityReport } from '../src/modules/ocpi/quality.ts';
import * as repo from '../src/modules/ocpi/repository.ts';
import { createOcpi } from '../src/modules/ocpi/service.ts';
import type { Ingestion } from '../src/modules/stations/ingest.ts';
import { ocpiPages } from '../src/ocpi-protocol/client.ts';
import { parseAuthorizationInfo, parseToken, setOcpiRecorder } from '../src/ocpi-protocol/validate.ts';
import type { Database } from '../src/platform/db.ts';
import { setupTestApp, type TestContext, type TestResponse } from './helpers.ts';
import { registerPeer } from './ocpi-support.ts';
import { ocpiLocation, ocpiTariff } from './stations-fixtures.ts';

let ctx: TestContext;
let token: string;
let otherToken: string;

const b64 = (t: string) => Buffer.from(t, 'utf8').toString('base64');
const auth = (t: string) => ({ authorization: `Token ${b64(t)}` });

async function connectedPeer(
  name: string,
  parties: { country_code: string; party_id: string }[],
  options: { rawTokens?: boolean; endpoints?: repo.Endpoint[] } = {},
): Promise<string> {
  return registerPeer(ctx.ocpi, ctx, { name, parties, ...options });
}

async function ocpi(method: string, path: string, body?: unknown, as: string = token, headers: Record<string, string> = {}): Promise<TestResponse> {
  return ctx.call(method, `/ocpi${path}`, { headers: { ...auth(as), ...headers }, ...(body === undefined ? {} : { body }) });
}

function assertEnvelope(res: TestResponse, httpStatus: number, statusCode: number): void {
  assert.equal(res.status, httpStatus, res.text);
  assert.equal(res.body.status_code, statusCode, res.text);
  assert.ok(!Number.isNaN(Date.parse(res.body.timestamp)));
  assert.ok(res.headers['x-request-id']);
  assert.ok(res.headers['x-correlation-id']);
}

before(async () => {
  ctx = await setupTestApp();
  token = await connectedPeer('cpo-one', [{ country_code: 'DE', party_id: 'ABC' }]);
  otherToken = await connectedPeer('cpo-two', [{ country_code: 'NL', party_id: 'XYZ' }]);
});
after(() => ctx.close());

describe('OCPI authentication and envelope', () => {
  it('refuses a 2.2.1 connection on the 2.1.1 endpoints (404): a connection speaks the version it settled on', async () => {
    const res = await ocpi('POST', '/2.1.1/cdrs', { id: 'x' });
    assertEnvelope(res, 404, 2000);
    assert.match(res.body.status_message, /speaks OCPI 2\.2\.1/);
    // The versions and version details of 2.1.1 stay open to any token (a peer chooses its version there).
    assertEnvelope(await ocpi('GET', '/2.1.1'), 200, 1000);
  });

  it('refuses a missing, malformed or unknown token with 401 and an envelope', async () => {
    for (const headers of [{}, { authorization: 'Bearer abc' }, auth('nope')]) {
      const res = await ctx.call('GET', '/ocpi/versions', { headers });
      assertEnvelope(res, 401, 2000);
    }
  });

  it('serves versions and version details with the 2.2.1 endpoints', async () => {
    const versions = await ocpi('GET', '/versions');
    assertEnvelope(versions, 200, 1000);
    // The versions we speak, best first (a 2.1.1 peer picks 2.1.1: test/ocpi-211.test.ts; a 2.2 one 2.2: test/ocpi-22.test.ts).
    assert.deepEqual(versions.body.data, [
      { version: '2.2.1', url: `${ctx.config.publicBaseUrl}/ocpi/2.2.1` },
      { version: '2.2', url: `${ctx.config.publicBaseUrl}/ocpi/2.2` },
      { version: '2.1.1', url: `${ctx.config.publicBaseUrl}/ocpi/2.1.1` },
    ]);
    const details = await ocpi('GET', '/2.2.1');
    assertEnvelope(details, 200, 1000);
    const ids = details.body.data.endpoints.map((e: { identifier: string; role: string }) => `${e.identifier}:${e.role}`);
    for (const wanted of [
      'credentials:SENDER',
      'locations:RECEIVER',
      'tariffs:RECEIVER',
      'sessions:RECEIVER',
      'cdrs:RECEIVER',
      'commands:SENDER',
      'tokens:SENDER',
    ]) {
      assert.ok(ids.includes(wanted), wanted);
    }
    // version_information_endpoint: "for the `credentials` module, the value of the role property is not relevant as this
    // module is the same for all roles. It is advised to send "SENDER" as the InterfaceRole for one's own credentials endpoint".
    assert.deepEqual(
      ids.filter((id: string) => id.startsWith('credentials:')),
      ['credentials:SENDER'],
      'credentials listed once',
    );
    assert.equal(new Set(ids).size, ids.length, 'no endpoint listed twice');
  });

  it('echoes X-Request-ID and X-Correlation-ID', async () => {
    const res = await ocpi('GET', '/versions', undefined, token, { 'x-request-id': 'peer-request-0001', 'x-correlation-id': 'corr-42' });
    assert.equal(res.headers['x-request-id'], 'peer-request-0001');
    assert.equal(res.headers['x-correlation-id'], 'corr-42');
  });

  it('answers a URL that is not validly percent-encoded with the OCPI envelope (HTTP 400, 2001), not a problem body', async () => {
    // The URL cannot be read, so the request reached no OCPI resource: HTTP 400, and the body is OCPI's all the same.
    for (const url of ['/ocpi/2.2.1/locations/DE/ABC/%E0%A4%A', '/ocpi/2.2/sessions/DE/ABC/%zz']) {
      const res = await ctx.call('GET', url, { headers: auth(token) });
      assertEnvelope(res, 400, 2001);
      assert.match(res.headers['content-type'] as string, /^application\/json/);
      assert.match(res.body.status_message, /percent-encoded/);
    }
    // The client API keeps its problem body.
    const api = await ctx.call('GET', '/api/v1/users/%E0%A4%A/', {});
    assert.equal(api.status, 400);
    assert.match(api.headers['content-type'] as string, /^application\/problem\+json/);
  });

  it('accepts a TOKEN_A only on versions and credentials', async () => {
    const invite = await ctx.ocpi.connections.invite({ name: 'pending' });
    assertEnvelope(await ocpi('GET', '/versions', undefined, invite.token), 200, 1000);
    assertEnvelope(await ocpi('GET', '/2.2.1/tokens', undefined, invite.token), 401, 2000);
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/L1', ocpiLocation({ id: 'L1', lat: 52.5, lon: 13.4 }), invite.token), 401, 2000);
  });

  it('accepts a token unencoded or Base64-encoded from any connection, and records which form the peer uses', async () => {
    // OCPI 2.1.1 and many 2.2 peers send the token as it is; 2.2.1 Base64-encodes it. Either is taken, whatever the
    // connection was configured for (raw_tokens says how we send ours), and the connection records what its peer sends.
    const peerToken = await connectedPeer('form-peer', [{ country_code: 'BE', party_id: 'FRM' }]);
    const form = async () => (await ctx.ocpi.connections.findByName('form-peer'))?.incoming_token_form;
    assert.equal(await form(), null, 'nothing seen yet');
    assertEnvelope(await ctx.call('GET', '/ocpi/versions', { headers: { authorization: `Token ${peerToken}` } }), 200, 1000);
    assert.equal(await form(), 'raw');
    assertEnvelope(await ctx.call('GET', '/ocpi/2.2.1/tokens', { headers: { authorization: `Token ${peerToken}` } }), 200, 1000);
    assertEnvelope(await ctx.call('GET', '/ocpi/versions', { headers: auth(peerToken) }), 200, 1000);
    assert.equal(await form(), 'base64');
    // An unknown token is unknown in either form.
    assertEnvelope(await ctx.call('GET', '/ocpi/versions', { headers: { authorization: 'Token not-a-token-of-ours' } }), 401, 2000);
    assertEnvelope(await ctx.call('GET', '/ocpi/versions', { headers: auth('not-a-token-of-ours') }), 401, 2000);
  });

  it('answers a request that reached the OCPI layer with HTTP 200 and the OCPI error; 400 only for invalid JSON, 401 for auth, 404 for what does not exist', async () => {
    // status_codes: "If a request is syntactically valid JSON and addresses an existing resource, and comes from a sender that is
    // successfully authenticated and authorized, this request is supposed to have reached the OCPI layer. To such a request, an
    // HTTP error status code MUST NOT be returned."
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/HTTP-RULES', { id: 'HTTP-RULES' }), 200, 2001);
    assertEnvelope(await ocpi('PATCH', '/2.2.1/sessions/DE/ABC/S-ANY', { kwh: 1 }), 200, 2001);
    assertEnvelope(await ocpi('GET', '/2.2.1/tokens?offset=-1'), 200, 2001);
    assertEnvelope(await ocpi('POST', '/2.2.1/cdrs', { id: 'C-ANY' }), 200, 2001);
    const invite = await ctx.ocpi.connections.invite({ name: 'no-cpo-role' });
    const emspOnly = { token: 'emsp-only-token', url: 'https://emsp.example.com/versions', roles: [{ ...cpoRole('FR', 'EMS'), role: 'EMSP' }] };
    assertEnvelope(await ocpi('POST', '/2.2.1/credentials', emspOnly, invite.token), 200, 3003);
    // "When a message does not contain a valid JSON string, the HTTP error `400 - Bad request` MUST be returned."
    const notJson = await ctx.call('POST', '/ocpi/2.2.1/cdrs', { headers: { ...auth(token), 'content-type': 'application/json' }, body: '{"id": ' });
    assertEnvelope(notJson, 400, 2001);
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/HTTP-RULES', { id: 'HTTP-RULES' }, 'not-a-token'), 401, 2000);
    // "In case of a GET request, when the resource does NOT exist, the server SHOULD return a HTTP `404 - Not Found`."
    assertEnvelope(await ocpi('GET', '/2.2.1/locations/DE/ABC/HTTP-RULES'), 404, 2003);
  });

  it('answers 201 when a pushed object is new, 200 when it existed (CDR POST, Location, EVSE, Connector, Tariff and Session PUT)', async () => {
    // status_codes: "HTTP `200 - Ok` when the object already existed and has successfully been updated.
    // HTTP `201 - Created` when the object has been newly created in the server system."
    const location = ocpiLocation({ id: 'NEW-LOC', lat: 52.5, lon: 13.4 });
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/NEW-LOC', location), 201, 1000);
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/NEW-LOC', location), 200, 1000);
    const evse = { ...(location.evses?.[0] as object), uid: 'NEW-LOC-9', evse_id: 'DE*ABC*ENEWLOC9', last_updated: location.last_updated };
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/NEW-LOC/NEW-LOC-9', evse), 201, 1000);
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/NEW-LOC/NEW-LOC-9', evse), 200, 1000);
    const connector = { ...(location.evses?.[0]?.connectors[0] as object), id: '7', last_updated: location.last_updated };
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/NEW-LOC/NEW-LOC-9/7', connector), 201, 1000);
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/NEW-LOC/NEW-LOC-9/7', connector), 200, 1000);
    assertEnvelope(await ocpi('PUT', '/2.2.1/tariffs/DE/ABC/NEW-T', ocpiTariff('NEW-T', 0.4)), 201, 1000);
    assertEnvelope(await ocpi('PUT', '/2.2.1/tariffs/DE/ABC/NEW-T', ocpiTariff('NEW-T', 0.5)), 200, 1000);
    assertEnvelope(await ocpi('PUT', '/2.2.1/sessions/DE/ABC/NEW-S', session('NEW-S')), 201, 1000);
    assertEnvelope(await ocpi('PUT', '/2.2.1/sessions/DE/ABC/NEW-S', session('NEW-S', { kwh: 2, last_updated: '2026-02-10T10:01:00Z' })), 200, 1000);
    const cdr = { ...cdrOf('NEW-CDR'), session_id: 'NEW-S' };
    const created = await ocpi('POST', '/2.2.1/cdrs', cdr);
    assertEnvelope(created, 201, 1000);
    assert.ok(created.headers.location);
    assertEnvelope(await ocpi('POST', '/2.2.1/cdrs', cdr), 200, 1000);
  });

  it('answers 404 with an envelope for an unknown OCPI path', async () => {
    assertEnvelope(await ocpi('GET', '/2.2.1/nothing-here'), 404, 2000);
  });
});

describe('routing headers (transport_and_format, Message Routing)', () => {
  const from = (country_code: string, party_id: string) => ({ 'OCPI-from-country-code': country_code, 'OCPI-from-party-id': party_id });
  const routingOf = (res: TestResponse) =>
    ['ocpi-from-country-code', 'ocpi-from-party-id', 'ocpi-to-country-code', 'ocpi-to-party-id'].map((h) => res.headers[h] ?? null);

  it('answers functional modules with them: from us, to the requesting party; versions and credentials without', async () => {
    const routed = await ocpi('GET', '/2.2.1/tokens?limit=1', undefined, token, {
      ...from('de', 'abc'),
      'OCPI-to-country-code': 'DE',
      'OCPI-to-party-id': 'CAX',
    });
    assertEnvelope(routed, 200, 1000);
    assert.deepEqual(routingOf(routed), ['DE', 'CAX', 'DE', 'ABC']);
    const unnamed = await ocpi('GET', '/2.2.1/locations/DE/ABC/NOWHERE');
    assertEnvelope(unnamed, 404, 2003);
    assert.deepEqual(routingOf(unnamed), ['DE', 'CAX', 'DE', 'ABC'], 'no OCPI-from: to the connection’s party');
    for (const path of ['/versions', '/2.2.1', '/2.2.1/credentials']) {
      assert.deepEqual(routingOf(await ocpi('GET', path, undefined, token, from('DE', 'ABC'))), [null, null, null, null], path);
    }
  });

  it('refuses OCPI-from headers that name no party of the connection (2001)', async () => {
    const location = ocpiLocation({ id: 'ROUTED', lat: 52.5, lon: 13.4 });
    for (const headers of [from('NL', 'XYZ'), from('DE', 'ABCD'), { 'OCPI-from-country-code': 'DE' }]) {
      const res = await ocpi('PUT', '/2.2.1/locations/DE/ABC/ROUTED', location, token, headers);
      assertEnvelope(res, 200, 2001);
      assert.match(res.body.status_message, /OCPI-from/);
    }
    assertEnvelope(await ocpi('GET', '/2.2.1/locations/DE/ABC/ROUTED'), 404, 2003);
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/ROUTED', location, token, from('DE', 'ABC')), 201, 1000);
  });

  it('refuses a message addressed (OCPI-to) to another party than ours: 2001 in an HTTP 200 answer, nothing stored', async () => {
    const to = (country_code: string, party_id: string) => ({ 'OCPI-to-country-code': country_code, 'OCPI-to-party-id': party_id });
    const location = ocpiLocation({ id: 'ADDRESSED', lat: 52.5, lon: 13.4 });
    for (const headers of [to('NL', 'EMS'), to('DE', 'CAY'), to('DE', 'CAXX'), { 'OCPI-to-party-id': 'CAX' }]) {
      const res = await ocpi('PUT', '/2.2.1/locations/DE/ABC/ADDRESSED', location, token, { ...from('DE', 'ABC'), ...headers });
      assertEnvelope(res, 200, 2001);
      assert.match(res.body.status_message, /OCPI-to/);
      assert.deepEqual(routingOf(res), ['DE', 'CAX', 'DE', 'ABC'], 'the refusal is routed back to the requesting party');
    }
    const other = await ocpi('GET', '/2.2.1/tokens?limit=1', undefined, token, to('NL', 'EMS'));
    assertEnvelope(other, 200, 2001);
    assert.match(other.body.status_message, /OCPI-to names NL\*EMS, not this eMSP \(DE\*CAX\)/);
    assertEnvelope(await ocpi('GET', '/2.2.1/locations/DE/ABC/ADDRESSED'), 404, 2003);
    // Addressed to us (CiString: any case), or not addressed at all (peer to peer, open routing): taken.
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/DE/ABC/ADDRESSED', location, token, { ...from('DE', 'ABC'), ...to('de', 'cax') }), 201, 1000);
    assertEnvelope(await ocpi('GET', '/2.2.1/tokens?limit=1'), 200, 1000);
  });
});

describe('recording exchanges for the CI check (OCPI_RECORD_DIR)', () => {
  it('records each answer with its routing headers and how far its request got', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ocpi-exchanges-'));
    const previous = setOcpiRecorder(dir);
    try {
      assertEnvelope(await ocpi('GET', '/2.2.1/tokens?limit=1'), 200, 1000);
      assertEnvelope(await ocpi('GET', '/2.2.1/tokens?limit=1', undefined, 'not-a-token'), 401, 2000);
      const notJson = await ctx.app.inject({
        method: 'POST',
        url: '/ocpi/2.2.1/cdrs',
        headers: { ...auth(token), 'content-type': 'application/json' },
        payload: '{',
      });
      assert.equal(notJson.statusCode, 400);
      assertEnvelope(await ocpi('GET', '/2.2.1/locations/DE/ABC/NOWHERE-RECORDED'), 404, 2003);
      assertEnvelope(await ocpi('GET', '/2.2.1/versions'), 404, 2000);
    } finally {
      setOcpiRecorder(previous);
    }
    const exchanges = readdirSync(dir)
      .sort((a, b) => Number(a.split('-')[2]) - Number(b.split('-')[2]))
      .map((f) => (JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { exchange: RecordedExchange }).exchange);
    const facts = exchanges.map((e) => [e.method, e.module, e.status, e.ocpi_status, e.authenticated, e.reached_ocpi_layer, Object.keys(e.routing).length]);
    assert.deepEqual(facts, [
      ['GET', 'tokens', 200, 1000, true, true, 4],
      ['GET', 'tokens', 401, 2000, false, false, 2],
      ['POST', 'cdrs', 400, 2001, true, false, 4],
      ['GET', 'locations', 404, 2003, true, true, 4],
      ['GET', null, 404, 2000, true, false, 0],
    ]);
    assert.equal(exchanges[0]?.path, '/ocpi/2.2.1/tokens');
    assert.deepEqual(exchanges.flatMap(exchangeProblems), []);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('Locations receiver', () => {
  const base = '/2.2.1/locations/DE/ABC';

  it('stores a PUT location and serves it back, its EVSEs and connectors', async () => {
    const location = ocpiLocation({ id: 'LOC1', lat: 52.52, lon: 13.405, evses: [{}, { kw: 150, standard: 'IEC_62196_T2_COMBO' }] });
    assertEnvelope(await ocpi('PUT', `${base}/LOC1`, location), 201, 1000);
    const got = await ocpi('GET', `${base}/LOC1`);
    assertEnvelope(got, 200, 1000);
    assert.equal(got.body.data.id, 'LOC1');
    assert.deepEqual(
      got.body.data.evses.map((e: { uid: string }) => e.uid),
      ['LOC1-1', 'LOC1-2'],
    );
    const evse = await ocpi('GET', `${base}/LOC1/LOC1-2`);
    assert.equal(evse.body.data.connectors[0].standard, 'IEC_62196_T2_COMBO');
    const connector = await ocpi('GET', `${base}/LOC1/LOC1-2/1`);
    assert.equal(connector.body.data.id, '1');
    await ctx.catalogue.reload();
    const station = ctx.catalogue.station({ evseId: 'DE*ABC*ELOC12' });
    assert.ok(station, 'the catalogue shows the pushed location');
  });

  it('refuses ids in the body that differ from the URL with 2001', async () => {
    const location = ocpiLocation({ id: 'OTHER', lat: 52.52, lon: 13.405 });
    assertEnvelope(await ocpi('PUT', `${base}/LOC2`, location), 200, 2001);
    const wrongParty = { ...ocpiLocation({ id: 'LOC2', lat: 52.5, lon: 13.4 }), party_id: 'ZZZ' };
    assertEnvelope(await ocpi('PUT', `${base}/LOC2`, wrongParty), 200, 2001);
  });

  it('refuses malformed bodies with 2001 and names the field; nothing is stored', async () => {
    const broken = { ...ocpiLocation({ id: 'BAD', lat: 52.5, lon: 13.4 }), coordinates: { latitude: 'north', longitude: '13.4' } };
    const res = await ocpi('PUT', `${base}/BAD`, broken);
    assertEnvelope(res, 200, 2001);
    assert.match(res.body.status_message, /coordinates/);
    assertEnvelope(await ocpi('GET', `${base}/BAD`), 404, 2003);
    const notJson = await ctx.call('PUT', `/ocpi${base}/BAD`, { headers: { ...auth(token), 'content-type': 'application/json' }, body: '{"id": ' });
    assertEnvelope(notJson, 400, 2001);
  });

  it('refuses pushes for a party the connection does not hold with 2001 (HTTP 200), and reads of its objects with 404', async () => {
    const location = { ...ocpiLocation({ id: 'NLLOC', lat: 52.37, lon: 4.89 }), country_code: 'NL', party_id: 'XYZ' };
    const put = await ocpi('PUT', '/2.2.1/locations/NL/XYZ/NLLOC', location);
    assertEnvelope(put, 200, 2001);
    assert.match(put.body.status_message, /NL\*XYZ is not a party of this connection/);
    assertEnvelope(await ocpi('PATCH', '/2.2.1/locations/NL/XYZ/NLLOC', { name: 'x', last_updated: '2026-03-01T00:00:00Z' }), 200, 2001);
    assertEnvelope(await ocpi('PUT', '/2.2.1/sessions/NL/XYZ/NLS', { ...session('NLS'), country_code: 'NL', party_id: 'XYZ' }), 200, 2001);
    assertEnvelope(await ocpi('PATCH', '/2.2.1/sessions/NL/XYZ/NLS', { kwh: 1, last_updated: '2026-03-01T00:00:00Z' }), 200, 2001);
    assertEnvelope(await ocpi('PUT', '/2.2.1/tariffs/NL/XYZ/NLT', { ...ocpiTariff('NLT', 0.3), country_code: 'NL', party_id: 'XYZ' }), 200, 2001);
    assertEnvelope(await ocpi('DELETE', '/2.2.1/tariffs/NL/XYZ/NLT'), 200, 2001);
    assertEnvelope(await ocpi('PUT', '/2.2.1/locations/NL/XYZ/NLLOC', location, otherToken), 201, 1000);
    // transport_and_format: a GET of another party's object "is allowed to respond with an HTTP `404` status code".
    assertEnvelope(await ocpi('GET', '/2.2.1/locations/NL/XYZ/NLLOC'), 404, 2000);
  });

  it('PATCHes an EVSE status in place, and refuses a PATCH without last_updated', async () => {
    const res = await ocpi('PATCH', `${base}/LOC1/LOC1-1`, { status: 'CHARGING', last_updated: '2026-02-01T10:00:00Z' });
    assertEnvelope(res, 200, 1000);
    const evse = await ocpi('GET', `${base}/LOC1/LOC1-1`);
    assert.equal(evse.body.data.status, 'CHARGING');
    assert.equal(evse.body.data.last_updated, '2026-02-01T10:00:00Z');
    const location = await ocpi('GET', `${base}/LOC1`);
    assert.equal(Date.parse(location.body.data.last_updated), Date.parse('2026-02-01T10:00:00Z'), 'the parent location moves with its EVSE');
    assertEnvelope(await ocpi('PATCH', `${base}/LOC1/LOC1-1`, { status: 'AVAILABLE' }), 200, 2001);
    // A status outside 2.2.1 is UNKNOWN (the tolerant reader, test/ocpi-tolerant-receivers.test.ts); one that is no string is refused.
    assertEnvelope(await ocpi('PATCH', `${base}/LOC1/LOC1-1`, { status: 42, last_updated: '2026-02-01T10:01:00Z' }), 200, 2001);
  });

  it('ignores an older PATCH than what is stored', async () => {
    assertEnvelope(await ocpi('PATCH', `${base}/LOC1/LOC1-1`, { status: 'AVAILABLE', last_updated: '2026-01-15T00:00:00Z' }), 200, 1000);
    const evse = await ocpi('GET', `${base}/LOC1/LOC1-1`);
    assert.equal(evse.body.data.status, 'CHARGING');
  });

  it('answers 2003 for a PATCH or GET of an unknown location or EVSE', async () => {
    assertEnvelope(await ocpi('PATCH', `${base}/NOPE/1`, { status: 'AVAILABLE', last_updated: '2026-03-01T00:00:00Z' }), 404, 2003);
    assertEnvelope(await ocpi('PATCH', `${base}/LOC1/NOPE`, { status: 'AVAILABLE', last_updated: '2026-03-01T00:00:00Z' }), 404, 2003);
    assertEnvelope(await ocpi('GET', `${base}/NOPE`), 404, 2003);
    assertEnvelope(await ocpi('PUT', `${base}/NOPE/x-1`, ocpiLocation({ id: 'x', lat: 1, lon: 1 }).evses?.[0]), 404, 2003);
  });

  it('PATCHes other EVSE and location fields by merging, keeping the rest', async () => {
    assertEnvelope(await ocpi('PATCH', `${base}/LOC1/LOC1-2`, { floor_level: '-1', last_updated: '2026-02-02T00:00:00Z' }), 200, 1000);
    const evse = await ocpi('GET', `${base}/LOC1/LOC1-2`);
    assert.equal(evse.body.data.floor_level, '-1');
    assert.equal(evse.body.data.connectors.length, 1);
    assertEnvelope(await ocpi('PATCH', `${base}/LOC1`, { name: 'Renamed', last_updated: '2026-02-03T00:00:00Z' }), 200, 1000);
    const location = await ocpi('GET', `${base}/LOC1`);
    assert.equal(location.body.data.name, 'Renamed');
    assert.equal(location.body.data.evses.length, 2);
    assertEnvelope(await ocpi('PATCH', `${base}/LOC1`, { coordinates: { latitude: 'x' }, last_updated: '2026-02-04T00:00:00Z' }), 200, 2001);
  });

  it('adds an EVSE by PUT, and replaces a connector by PUT, moving the parents’ last_updated', async () => {
    const extra = {
      ...(ocpiLocation({ id: 'LOC1', lat: 52.52, lon: 13.405 }).evses?.[0] as object),
      uid: 'LOC1-3',
      evse_id: 'DE*ABC*ELOC13',
      last_updated: '2026-02-05T00:00:00Z',
    };
    assertEnvelope(await ocpi('PUT', `${base}/LOC1/LOC1-3`, extra), 201, 1000);
    const location = await ocpi('GET', `${base}/LOC1`);
    assert.deepEqual(
      location.body.data.evses.map((e: { uid: string }) => e.uid),
      ['LOC1-1', 'LOC1-2', 'LOC1-3'],
    );
    const connector = { ...(location.body.data.evses[2].connectors[0] as object), max_electric_power: 11000, last_updated: '2026-02-06T00:00:00Z' };
    assertEnvelope(await ocpi('PUT', `${base}/LOC1/LOC1-3/1`, connector), 200, 1000);
    const evse = await ocpi('GET', `${base}/LOC1/LOC1-3`);
    assert.equal(evse.body.data.connectors[0].max_electric_power, 11000);
    assert.equal(evse.body.data.last_updated, '2026-02-06T00:00:00Z');
    const again = await ocpi('GET', `${base}/LOC1`);
    assert.equal(Date.parse(again.body.data.last_updated), Date.parse('2026-02-06T00:00:00Z'));
    assertEnvelope(await ocpi('PUT', `${base}/LOC1/LOC1-4`, { ...extra, uid: 'LOC1-5' }), 200, 2001);
    // A connector PUT older than the stored connector (a late retry) changes nothing.
    assertEnvelope(await ocpi('PUT', `${base}/LOC1/LOC1-3/1`, { ...connector, max_electric_power: 3700, last_updated: '2026-02-05T12:00:00Z' }), 200, 1000);
    const kept = await ocpi('GET', `${base}/LOC1/LOC1-3/1`);
    assert.equal(kept.body.data.max_electric_power, 11000);
    assert.equal(kept.body.data.last_updated, '2026-02-06T00:00:00Z');
  });
});

describe('Tariffs receiver', () => {
  it('stores, serves and deletes a tariff; refuses mismatched ids', async () => {
    const tariff = ocpiTariff('T1', 0.39);
    assertEnvelope(await ocpi('PUT', '/2.2.1/tariffs/DE/ABC/T1', tariff), 201, 1000);
    const got = await ocpi('GET', '/2.2.1/tariffs/DE/ABC/T1');
    assert.equal(got.body.data.elements[0].price_components[0].price, 0.39);
    assertEnvelope(await ocpi('PUT', '/2.2.1/tariffs/DE/ABC/T2', tariff), 200, 2001);
    assertEnvelope(await ocpi('PUT', '/2.2.1/tariffs/DE/ABC/T3', { ...ocpiTariff('T3', 0.3), elements: [] }), 200, 2001);
    assertEnvelope(await ocpi('DELETE', '/2.2.1/tariffs/DE/ABC/T1'), 200, 1000);
    assertEnvelope(await ocpi('GET', '/2.2.1/tariffs/DE/ABC/T1'), 404, 2000);
    assertEnvelope(await ocpi('DELETE', '/2.2.1/tariffs/DE/ABC/T1'), 404, 2000);
  });
});

function session(id: string, overrides: Record<string, unknown> = {}) {
  return {
    country_code: 'DE',
    party_id: 'ABC',
    id,
    start_date_time: '2026-02-10T10:00:00Z',
    kwh: 0,
    cdr_token: { country_code: 'DE', party_id: 'CAX', uid: 'u1', type: 'APP_USER', contract_id: 'DE-CAX-C1' },
    auth_method: 'COMMAND',
    authorization_reference: `auth-${id}`,
    location_id: 'LOC1',
    evse_uid: 'LOC1-1',
    connector_id: '1',
    currency: 'EUR',
    status: 'ACTIVE',
    last_updated: '2026-02-10T10:00:00Z',
    ...overrides,
  };
}

const period = (start: string, kwh: number) => ({ start_date_time: start, dimensions: [{ type: 'ENERGY', volume: kwh }] });

describe('Sessions receiver', () => {
  it('stores a PUT session, appends PATCHed charging periods, replaces them on PUT', async () => {
    assertEnvelope(await ocpi('PUT', '/2.2.1/sessions/DE/ABC/S1', session('S1', { charging_periods: [period('2026-02-10T10:00:00Z', 1)] })), 201, 1000);
    assertEnvelope(
      await ocpi('PATCH', '/2.2.1/sessions/DE/ABC/S1', { kwh: 3, charging_periods: [period('2026-02-10T10:05:00Z', 2)], last_updated: '2026-02-10T10:05:00Z' }),
      200,
      1000,
    );
    assertEnvelope(await ocpi('PATCH', '/2.2.1/sessions/DE/ABC/S1', { kwh: 4, last_updated: '2026-02-10T10:06:00Z' }), 200, 1000);
    let got = await ocpi('GET', '/2.2.1/sessions/DE/ABC/S1');
    assert.equal(got.body.data.kwh, 4);
    assert.equal(got.body.data.charging_periods.length, 2);
    assertEnvelope(await ocpi('PUT', '/2.2.1/sessions/DE/ABC/S1', session('S1', { kwh: 5, last_updated: '2026-02-10T10:07:00Z' })), 200, 1000);
    got = await ocpi('GET', '/2.2.1/sessions/DE/ABC/S1');
    assert.equal(got.body.data.charging_periods?.length ?? 0, 0);
  });

  it('refuses a PATCH of an unknown session, a PATCH without last_updated, and an invalid session', async () => {
    assertEnvelope(await ocpi('PATCH', '/2.2.1/sessions/DE/ABC/NOPE', { kwh: 1, last_updated: '2026-02-10T10:05:00Z' }), 404, 2000);
    assertEnvelope(await ocpi('PATCH', '/2.2.1/sessions/DE/ABC/S1', { kwh: 1 }), 200, 2001);
    assertEnvelope(await ocpi('PUT', '/2.2.1/sessions/DE/ABC/S2', session('S2', { status: 'SLEEPING' })), 200, 2001);
    assertEnvelope(await ocpi('PUT', '/2.2.1/sessions/DE/ABC/S3', session('S4')), 200, 2001);
  });

  it('keeps another connection away from a session', async () => {
    assertEnvelope(await ocpi('GET', '/2.2.1/sessions/DE/ABC/S1', undefined, otherToken), 404, 2000);
  });
});

function cdrOf(id: string) {
  return {
    country_code: 'DE',
    party_id: 'ABC',
    id,
    start_date_time: '2026-02-10T10:00:00Z',
    end_date_time: '2026-02-10T11:00:00Z',
    session_id: 'S1',
    cdr_token: { country_code: 'DE', party_id: 'CAX', uid: 'u1', type: 'APP_USER', contract_id: 'DE-CAX-C1' },
    auth_method: 'COMMAND',
    cdr_location: {
      id: 'LOC1',
      address: 'Street 1',
      city: 'Berlin',
      country: 'DEU',
      coordinates: { latitude: '52.520000', longitude: '13.405000' },
      evse_uid: 'LOC1-1',
      evse_id: 'DE*ABC*ELOC11',
      connector_id: '1',
      connector_standard: 'IEC_62196_T2',
      connector_format: 'CABLE',
      connector_power_type: 'AC_3_PHASE',
    },
    currency: 'EUR',
    charging_periods: [period('2026-02-10T10:00:00Z', 10)],
    total_cost: { excl_vat: 3.9, incl_vat: 4.64 },
    total_energy: 10,
    total_time: 1,
    last_updated: '2026-02-10T11:00:00Z',
  };
}

describe('CDRs receiver', () => {
  const cdr = cdrOf('CDR1');

  it('stores a CDR once, answers its URL in Location, and serves it back', async () => {
    const res = await ocpi('POST', '/2.2.1/cdrs', cdr);
    assertEnvelope(res, 201, 1000);
    assert.equal(res.headers.location, `${ctx.config.publicBaseUrl}/ocpi/2.2.1/cdrs/DE/ABC/CDR1`);
    const again = await ocpi('POST', '/2.2.1/cdrs', { ...cdr, total_cost: { excl_vat: 99, incl_vat: 117.81 } });
    assertEnvelope(again, 200, 1000);
    const got = await ocpi('GET', '/2.2.1/cdrs/DE/ABC/CDR1');
    assert.equal(got.body.data.total_cost.excl_vat, 3.9, 'a CDR is immutable');
    assertEnvelope(await ocpi('GET', '/2.2.1/cdrs/DE/ABC/CDR1', undefined, otherToken), 404, 2000);
  });

  it('refuses an invalid CDR and one of another party', async () => {
    const { total_cost: _omitted, ...incomplete } = cdr;
    assertEnvelope(await ocpi('POST', '/2.2.1/cdrs', { ...incomplete, id: 'CDR2' }), 200, 2001);
    assertEnvelope(await ocpi('POST', '/2.2.1/cdrs', { ...cdr, id: 'CDR3', party_id: 'QQQ' }), 200, 2001);
  });
});

describe('Command results', () => {
  it('accepts the result only at the command’s own response_url, once', async () => {
    const invite = await ctx.ocpi.connections.findByName('cpo-one');
    assert.ok(invite);
    const id = '00000000-0000-4000-8000-000000000001';
    await repo.insertCommand(ctx.db, { id, connection_id: invite.id, type: 'START_SESSION', callback_secret: 's3cret', request: {} }, ctx.clock.now());
    assertEnvelope(await ocpi('POST', `/2.2.1/commands/START_SESSION/${id}/wrong`, { result: 'ACCEPTED' }), 404, 2000);
    assertEnvelope(await ocpi('POST', `/2.2.1/commands/START_SESSION/${id}/s3cret`, { result: 'ACCEPTED' }, otherToken), 404, 2000);
    assertEnvelope(await ocpi('POST', `/2.2.1/commands/START_SESSION/${id}/s3cret`, { result: 'MAYBE' }), 200, 2001);
    assertEnvelope(await ocpi('POST', `/2.2.1/commands/START_SESSION/${id}/s3cret`, { result: 'ACCEPTED' }), 200, 1000);
    assertEnvelope(await ocpi('POST', `/2.2.1/commands/START_SESSION/${id}/s3cret`, { result: 'FAILED' }), 200, 1000);
    const stored = await repo.findCommand(ctx.db, id);
    assert.equal(stored?.result, 'ACCEPTED');
  });
});

describe('Tokens sender', () => {
  it('lists every user as an APP_USER token, paginated with Link, X-Total-Count and X-Limit', async () => {
    const client = await ctx.newClient();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await ctx.call('POST', '/api/v1/users/', { token: client.token, body: { email: `t${i}@example.com` } });
      assert.equal(res.status, 201, res.text);
      ids.push(res.body.id);
      ctx.clock.advance(1_000);
    }
    let url: string | undefined = '/2.2.1/tokens?limit=2';
    const seen: string[] = [];
    let pages = 0;
    while (url) {
      const res = await ocpi('GET', url);
      assertEnvelope(res, 200, 1000);
      assert.equal(res.headers['x-total-count'], '5');
      assert.equal(res.headers['x-limit'], '2');
      for (const t of res.body.data) {
        const parsed = parseToken(t);
        assert.ok(parsed.ok, JSON.stringify(parsed));
        assert.equal(t.type, 'APP_USER');
        assert.match(t.contract_id, /^DE-CAX-C[0-9A-Z]{12}$/);
        seen.push(t.uid);
      }
      const link = res.headers.link as string | undefined;
      url = link
        ? new URL(/<([^>]+)>/.exec(link)?.[1] as string).pathname.replace(/^\/ocpi/, '') + new URL(/<([^>]+)>/.exec(link)?.[1] as string).search
        : undefined;
      pages++;
    }
    assert.equal(pages, 3);
    assert.deepEqual(seen, ids);
    assertEnvelope(await ocpi('GET', '/2.2.1/tokens?limit=abc'), 200, 2001);
    const from = await ocpi('GET', `/2.2.1/tokens?date_from=${encodeURIComponent(new Date(ctx.clock.now().getTime() - 2_500).toISOString())}`);
    assert.equal(from.body.data.length, 2);
  });

  it('authorizes a live user ALLOWED, a deleted one BLOCKED, an unknown token 2004', async () => {
    const client = await ctx.newClient();
    const user = await ctx.call('POST', '/api/v1/users/', { token: client.token, body: {} });
    const allowed = await ocpi('POST', `/2.2.1/tokens/${user.body.id}/authorize?type=APP_USER`, { location_id: 'LOC1' });
    assertEnvelope(allowed, 200, 1000);
    assert.ok(parseAuthorizationInfo(allowed.body.data).ok);
    assert.equal(allowed.body.data.allowed, 'ALLOWED');
    assert.equal(allowed.body.data.location.location_id, 'LOC1');
    assert.equal((await ctx.call('DELETE', `/api/v1/users/${user.body.id}/`, { token: client.token })).status, 204);
    const blocked = await ocpi('POST', `/2.2.1/tokens/${user.body.id}/authorize?type=APP_USER`);
    assert.equal(blocked.body.data.allowed, 'BLOCKED');
    assertEnvelope(await ocpi('POST', `/2.2.1/tokens/${user.body.id}/authorize`), 404, 2004);
    assertEnvelope(await ocpi('POST', '/2.2.1/tokens/not-a-user/authorize?type=APP_USER'), 404, 2004);
  });
});

// ---------------------------------------------------------------------------
// Peers that misbehave: a stand-in OCPI platform on loopback, answering what each test needs.

interface FakePeer {
  url: string;
  requests: { method: string; url: string; authorization: string | undefined; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

async function fakePeer(handle: (req: IncomingMessage, res: ServerResponse, base: string) => void | Promise<void>): Promise<FakePeer> {
  const requests: FakePeer['requests'] = [];
  let base = '';
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, headers: req.headers, body });
      void handle(req, res, base);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(res: ServerResponse, data: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ ...(data === undefined ? {} : { data }), status_code: 1000, timestamp: new Date().toISOString() }));
}

/** Versions and 2.2.1 details of a CPO with a credentials endpoint and `extra` endpoints. */
const versionsOnly =
  (extra: repo.Endpoint[] = []) =>
  (req: IncomingMessage, res: ServerResponse, base: string) => {
    if (req.url === '/versions') return answer(res, [{ version: '2.2.1', url: `${base}/2.2.1` }]);
    if (req.url === '/2.2.1')
      return answer(res, { version: '2.2.1', endpoints: [{ identifier: 'credentials', role: 'SENDER', url: `${base}/2.2.1/credentials` }, ...extra] });
    res.writeHead(404).end();
  };

const cpoRole = (country_code: string, party_id: string) => ({
  role: 'CPO',
  country_code,
  party_id,
  business_details: { name: `${country_code}*${party_id}` },
});

describe('credentials from peers', () => {
  it('refuses a registration whose roles claim another connection’s party; a party listed twice is one', async () => {
    const peer = await fakePeer(versionsOnly());
    try {
      const intruder = await ctx.ocpi.connections.invite({ name: 'intruder' });
      const claim = { token: 'intruder-token-b', url: `${peer.url}/versions`, roles: [cpoRole('de', 'abc')] };
      assertEnvelope(await ocpi('POST', '/2.2.1/credentials', claim, intruder.token), 200, 2000);
      const owner = await ctx.ocpi.connections.findByName('cpo-one');
      assert.ok(owner && (await repo.connectionOwnsParty(ctx.db, owner.id, 'DE', 'ABC')), 'cpo-one still speaks for DE*ABC');
      assert.equal((await ctx.ocpi.connections.findByName('intruder'))?.incoming_token_kind, 'A', 'nothing of the registration was stored');
      assertEnvelope(await ocpi('GET', '/2.2.1/sessions/DE/ABC/S1'), 200, 1000);

      const twice = await ctx.ocpi.connections.invite({ name: 'twice' });
      const body = { token: 'twice-token-b', url: `${peer.url}/versions`, roles: [cpoRole('FR', 'DUP'), cpoRole('fr', 'dup')] };
      assertEnvelope(await ocpi('POST', '/2.2.1/credentials', body, twice.token), 200, 1000);
    } finally {
      await peer.close();
    }
  });

  it('refuses a peer whose module endpoints are plain http off this machine (3001)', async () => {
    const peer = await fakePeer(versionsOnly([{ identifier: 'locations', role: 'SENDER', url: 'http://cpo.example.com/ocpi/2.2.1/locations' }]));
    try {
      const invite = await ctx.ocpi.connections.invite({ name: 'plain-http' });
      const body = { token: 'plain-token-b', url: `${peer.url}/versions`, roles: [cpoRole('AT', 'PLN')] };
      const res = await ocpi('POST', '/2.2.1/credentials', body, invite.token);
      assertEnvelope(res, 200, 3001);
      assert.match(res.body.status_message, /locations endpoint must be an https URL/);
    } finally {
      await peer.close();
    }
  });
});

describe('pulling pages from a peer', () => {
  it('follows no Link to another server: our credentials token stays with the peer', async () => {
    const elsewhere = await fakePeer((_req, res) => answer(res, []));
    const target = `http://localhost:${new URL(elsewhere.url).port}/collect?offset=1`;
    const peer = await fakePeer((_req, res) => answer(res, [{ id: 'one' }], { link: `<${target}>; rel="next"`, 'x-total-count': '2' }));
    try {
      const pages: unknown[] = [];
      await assert.rejects(async () => {
        for await (const page of ocpiPages({ token: 'our-secret-token' }, `${peer.url}/2.2.1/locations`)) pages.push(page);
      }, /Link to another server/);
      assert.equal(pages.length, 1);
      assert.equal(elsewhere.requests.length, 0);
    } finally {
      await peer.close();
      await elsewhere.close();
    }
  });
});

describe('pulling from a CPO (Sender interfaces)', () => {
  it('asks Sessions and CDRs with date_from (the horizon on a full pull, each module’s position after); a module that fails stops no other', async () => {
    let tariffsFail = true;
    const peer = await fakePeer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://peer');
      const dateFrom = url.searchParams.get('date_from');
      if (url.pathname === '/2.2.1/tariffs') {
        if (!tariffsFail) return answer(res, []);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status_code: 3000, status_message: 'tariffs are down', timestamp: new Date().toISOString() }));
        return;
      }
      if (url.pathname === '/2.2.1/sessions' && dateFrom === null) {
        // mod_sessions: date_from is required; a strict CPO refuses the GET without it.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status_code: 2001, status_message: 'date_from is required', timestamp: new Date().toISOString() }));
        return;
      }
      if (url.pathname === '/2.2.1/sessions') return answer(res, [session('PS1', { party_id: 'PUL', last_updated: ctx.clock.now().toISOString() })]);
      answer(res, []);
    });
    try {
      const sender = (module: string) => ({ identifier: module, role: 'SENDER' as const, url: `${peer.url}/2.2.1/${module}` });
      await registerPeer(ctx.ocpi, ctx, {
        name: 'puller',
        parties: [{ country_code: 'DE', party_id: 'PUL' }],
        endpoints: ['tariffs', 'locations', 'sessions', 'cdrs'].map(sender),
      });
      const connection = async () => {
        const found = await ctx.ocpi.connections.findByName('puller');
        assert.ok(found);
        return found;
      };
      const asked = (module: string) =>
        peer.requests.filter((r) => r.url.startsWith(`/2.2.1/${module}`)).map((r) => new URL(r.url, 'http://peer').searchParams.get('date_from'));
      const t0 = ctx.clock.now();
      const horizon = new Date(t0.getTime() - 30 * 86_400_000).toISOString();

      const full = await ctx.ocpi.sync.syncConnection(await connection(), { full: true });
      assert.deepEqual(
        full.failed.map((f) => f.module),
        ['tariffs'],
      );
      assert.match(full.failed[0]?.reason ?? '', /3000/);
      assert.equal(full.sessions, 1, 'the sessions were pulled although the tariffs failed');
      assert.deepEqual(asked('sessions'), [horizon], 'a full pull asks for the horizon (OCPI_PULL_HORIZON_DAYS, 30 days)');
      assert.deepEqual(asked('cdrs'), [horizon]);
      assert.deepEqual(asked('locations'), [null], 'the catalogue is pulled whole');
      for (const r of peer.requests) {
        const routing = ['ocpi-from-country-code', 'ocpi-from-party-id', 'ocpi-to-country-code', 'ocpi-to-party-id'].map((h) => r.headers[h]);
        assert.deepEqual(routing, ['DE', 'CAX', 'DE', 'PUL'], `routing headers of ${r.url}: from us, to the connection's party`);
      }
      assert.equal((await connection()).last_synced_at, null, 'not every module was pulled');
      const positions = await ctx.db.query<{ module: string }>('SELECT module FROM ocpi_sync_positions WHERE connection_id = $1 ORDER BY module', [
        (await connection()).id,
      ]);
      assert.deepEqual(
        positions.rows.map((r) => r.module),
        ['cdrs', 'locations', 'sessions'],
        'a position for each module pulled, none for the one that failed',
      );

      tariffsFail = false;
      peer.requests.length = 0;
      ctx.clock.advance(3_600_000);
      const next = await ctx.ocpi.sync.syncConnection(await connection());
      assert.deepEqual(next.failed, []);
      const since = new Date(t0.getTime() - 60_000).toISOString();
      assert.deepEqual(asked('sessions'), [since], 'from the module’s position, a minute of overlap');
      assert.deepEqual(asked('cdrs'), [since]);
      assert.deepEqual(asked('locations'), [since]);
      assert.deepEqual(asked('tariffs'), [null], 'tariffs have no position yet: pulled whole');
      assert.equal((await connection()).last_synced_at?.toISOString(), ctx.clock.now().toISOString());
    } finally {
      await peer.close();
    }
  });
});

describe('a page the database refuses (store-refused)', () => {
  it('is stored object by object: the one refused is left out and reported by cpo quality, the rest of the page kept', async () => {
    const ids = ['SR-1', 'SR-REFUSED', 'SR-3'];
    const peer = await fakePeer((req, res) => {
      if (new URL(req.url ?? '/', 'http://peer').pathname === '/2.2.1/locations') {
        return answer(
          res,
          ids.map((id, i) => ocpiLocation({ id, lat: 52.5 + i / 100, lon: 13.4, party: 'SRF' })),
        );
      }
      answer(res, []);
    });
    // The database refuses one object of the page (a constraint, as a real refusal would be: a value too large, a
    // trigger of the operator's, ...): the page's one statement fails, and each object is stored alone.
    await ctx.db.query(`ALTER TABLE ocpi_locations ADD CONSTRAINT test_refuses_one CHECK (id <> 'SR-REFUSED') NOT VALID`);
    try {
      await registerPeer(ctx.ocpi, ctx, {
        name: 'store-refused',
        parties: [{ country_code: 'DE', party_id: 'SRF' }],
        endpoints: [{ identifier: 'locations', role: 'SENDER', url: `${peer.url}/2.2.1/locations` }],
      });
      const connection = await ctx.ocpi.connections.findByName('store-refused');
      assert.ok(connection);
      const counts = await ctx.ocpi.sync.syncConnection(connection, { full: true });
      assert.deepEqual(counts.failed, []);
      assert.equal(counts.locations, 2, 'the rest of the page is stored');
      assert.equal(counts.skipped, 1);
      const { rows } = await ctx.db.query<{ id: string }>(`SELECT id FROM ocpi_locations WHERE party_id = 'SRF' ORDER BY id`);
      assert.deepEqual(
        rows.map((r) => r.id),
        ['SR-1', 'SR-3'],
      );
      const report = await qualityReport(ctx.db, connection.id);
      const refused = report.rules.find((r) => r.rule === 'store-refused');
      assert.ok(refused, JSON.stringify(report.rules));
      assert.deepEqual([refused.module, refused.kind, refused.count], ['locations', 'rejected', 1]);
      assert.deepEqual(
        refused.examples.map((e) => e.object_id),
        ['DE*SRF*SR-REFUSED'],
      );
      assert.match(refused.examples[0]?.detail ?? '', /test_refuses_one/);
    } finally {
      await ctx.db.query('ALTER TABLE ocpi_locations DROP CONSTRAINT test_refuses_one');
      await peer.close();
    }
  });
});

describe('pushes to CPOs (outbox)', () => {
  const push = (connectionId: string, key: string, body: unknown) =>
    ({ connection_id: connectionId, module: 'tokens', method: 'PUT', path: `/DE/CAX/${key}?type=APP_USER`, body, dedupe_key: `token:${key}` }) as const;

  it('holds no transaction while a push travels: a newer push of the same token is queued at once and sent next', async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived: () => void = () => {};
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const peer = await fakePeer(async (_req, res) => {
      arrived();
      await released;
      answer(res, undefined);
    });
    try {
      await connectedPeer('slow-cpo', [{ country_code: 'SE', party_id: 'SLO' }], {
        endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: `${peer.url}/tokens` }],
      });
      const connection = await ctx.ocpi.connections.findByName('slow-cpo');
      assert.ok(connection);
      await repo.enqueuePush(ctx.db, push(connection.id, 'u-slow', { v: 1 }), ctx.clock.now());
      const delivering = deliverDuePushes({
        db: ctx.db,
        clock: ctx.clock,
        auth: ctx.ocpi.connections.peerAuth,
        routing: (c) => ctx.ocpi.connections.routingTo(c),
        timeoutMs: 5_000,
      });
      await arrival;
      // The user's change (its own transaction) queues the newer token while the first push is still in flight.
      const queued = ctx.db.transaction((tx) => repo.enqueuePush(tx, push(connection.id, 'u-slow', { v: 2 }), ctx.clock.now()));
      const blocked = new Promise((_resolve, reject) => setTimeout(() => reject(new Error('queuing waited for the CPO')), 1_000).unref());
      try {
        await Promise.race([queued, blocked]);
      } finally {
        release();
      }
      assert.deepEqual(await delivering, { sent: 2, failed: 0 });
      assert.deepEqual(
        peer.requests.map((r) => JSON.parse(r.body)),
        [{ v: 1 }, { v: 2 }],
      );
      const { rows } = await ctx.db.query('SELECT 1 FROM ocpi_outbox WHERE connection_id = $1', [connection.id]);
      assert.equal(rows.length, 0);
    } finally {
      release();
      await peer.close();
    }
  });

  it('a platform party that refuses a token for good does not hold it back from the others; one failing for now has it retried', async () => {
    let busy = true;
    // SE*ARF refuses the token for good (HTTP 404); SE*TMP is busy (503) the first time, then takes it.
    const peer = await fakePeer((req, res) => {
      const to = req.headers['ocpi-to-party-id'];
      if (to === 'ARF') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"status_code":2003,"timestamp":"2026-01-01T00:00:00Z"}');
      if (to === 'TMP' && busy) {
        busy = false;
        return void res.writeHead(503).end();
      }
      answer(res, undefined);
    });
    try {
      await connectedPeer(
        'two-party-platform',
        [
          { country_code: 'SE', party_id: 'ARF' },
          { country_code: 'SE', party_id: 'TMP' },
        ],
        {
          endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: `${peer.url}/tokens` }],
        },
      );
      const connection = await ctx.ocpi.connections.findByName('two-party-platform');
      assert.ok(connection);
      await repo.enqueuePush(ctx.db, push(connection.id, 'u-two', { key: 'u-two' }), ctx.clock.now());
      const deliver = () =>
        deliverDuePushes({
          db: ctx.db,
          clock: ctx.clock,
          auth: ctx.ocpi.connections.peerAuth,
          routing: (c, to) => ctx.ocpi.connections.routingTo(c, to),
          timeoutMs: 2_000,
        });
      const to = () => peer.requests.map((r) => r.headers['ocpi-to-party-id']);
      // The refusal does not stop the push to SE*TMP; SE*TMP failing for now postpones the push (nothing lost).
      assert.deepEqual(await deliver(), { sent: 0, failed: 1 });
      assert.deepEqual(to(), ['ARF', 'TMP']);
      const queued = await ctx.db.query('SELECT 1 FROM ocpi_outbox WHERE connection_id = $1', [connection.id]);
      assert.equal(queued.rows.length, 1, 'postponed, not dropped');
      // Retried once due: the whole push, SE*ARF included (one outbox row per connection, a PUT is idempotent); it
      // refuses again, SE*TMP takes it, and the push is done (counted failed: a party refused it for good).
      ctx.clock.advance(3_600_000);
      assert.deepEqual(await deliver(), { sent: 0, failed: 1 });
      assert.deepEqual(to(), ['ARF', 'TMP', 'ARF', 'TMP']);
      assert.equal((await ctx.db.query('SELECT 1 FROM ocpi_outbox WHERE connection_id = $1', [connection.id])).rows.length, 0);
    } finally {
      await peer.close();
    }
  });

  it('a CPO that does not answer costs one timeout per round; the other CPOs’ pushes go', async () => {
    const silent = await fakePeer(() => {});
    const quick = await fakePeer((_req, res) => answer(res, undefined));
    try {
      await connectedPeer('silent-cpo', [{ country_code: 'SE', party_id: 'SIL' }], {
        endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: `${silent.url}/tokens` }],
      });
      await connectedPeer('quick-cpo', [{ country_code: 'SE', party_id: 'QCK' }], {
        endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: `${quick.url}/tokens` }],
      });
      const silentId = (await ctx.ocpi.connections.findByName('silent-cpo'))?.id as string;
      const quickId = (await ctx.ocpi.connections.findByName('quick-cpo'))?.id as string;
      for (const key of ['a', 'b', 'c']) await repo.enqueuePush(ctx.db, push(silentId, key, { key }), ctx.clock.now());
      ctx.clock.advance(1);
      await repo.enqueuePush(ctx.db, push(quickId, 'd', { key: 'd' }), ctx.clock.now());
      const result = await deliverDuePushes({
        db: ctx.db,
        clock: ctx.clock,
        auth: ctx.ocpi.connections.peerAuth,
        routing: (c) => ctx.ocpi.connections.routingTo(c),
        timeoutMs: 300,
      });
      assert.deepEqual(result, { sent: 1, failed: 1 });
      assert.equal(silent.requests.length, 1);
      assert.equal(quick.requests.length, 1);
      await ctx.db.query('DELETE FROM ocpi_outbox WHERE connection_id = $1', [silentId]);
    } finally {
      await silent.close();
      await quick.close();
    }
  });

  it('a backlog of 2,000 pushes drains in batches, several at a time per CPO (at most 16), every token once', async () => {
    let inFlight = 0;
    let most = 0;
    const peer = await fakePeer((_req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        answer(res, undefined);
      }, 2);
    });
    try {
      await connectedPeer('busy-cpo', [{ country_code: 'SE', party_id: 'BSY' }], {
        endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: `${peer.url}/tokens` }],
      });
      const id = (await ctx.ocpi.connections.findByName('busy-cpo'))?.id as string;
      await ctx.db.query(
        `INSERT INTO ocpi_outbox (connection_id, module, method, path, body, dedupe_key, next_attempt_at, created_at)
         SELECT $1, 'tokens', 'PUT', '/SE/BSY/t' || i || '?type=APP_USER', jsonb_build_object('uid', 't' || i), 'token:t' || i, $2, $2
           FROM generate_series(1, 2000) AS i`,
        [id, ctx.clock.now()],
      );
      const started = performance.now();
      assert.deepEqual(
        await deliverDuePushes({
          db: ctx.db,
          clock: ctx.clock,
          auth: ctx.ocpi.connections.peerAuth,
          routing: (c) => ctx.ocpi.connections.routingTo(c),
          timeoutMs: 5_000,
        }),
        {
          sent: 2000,
          failed: 0,
        },
      );
      const seconds = (performance.now() - started) / 1000;
      assert.equal(new Set(peer.requests.map((r) => r.url)).size, 2000);
      assert.equal(peer.requests.length, 2000);
      assert.ok(most > 1 && most <= 16, `at most ${most} in flight`);
      const { rows } = await ctx.db.query('SELECT 1 FROM ocpi_outbox WHERE connection_id = $1', [id]);
      assert.equal(rows.length, 0);
      process.stdout.write(`# 2,000 pushes in ${seconds.toFixed(2)} s (${Math.round(2000 / seconds)}/s), at most ${most} in flight\n`);
    } finally {
      await peer.close();
    }
  });

  it('a newer token queued while the older one travels waits for it, even with a second deliverer (another process) running: never two of one token at once, never out of order', async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived: () => void = () => {};
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let inFlight = 0;
    let most = 0;
    const peer = await fakePeer(async (_req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      arrived();
      await released;
      inFlight--;
      answer(res, undefined);
    });
    try {
      await connectedPeer('ordered-cpo', [{ country_code: 'SE', party_id: 'ORD' }], {
        endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: `${peer.url}/tokens` }],
      });
      const id = (await ctx.ocpi.connections.findByName('ordered-cpo'))?.id as string;
      const deliver = () =>
        deliverDuePushes({
          db: ctx.db,
          clock: ctx.clock,
          auth: ctx.ocpi.connections.peerAuth,
          routing: (c) => ctx.ocpi.connections.routingTo(c),
          timeoutMs: 5_000,
        });
      await repo.enqueuePush(ctx.db, push(id, 'u-ordered', { v: 1 }), ctx.clock.now());
      const first = deliver();
      await arrival;
      await repo.enqueuePush(ctx.db, push(id, 'u-ordered', { v: 2 }), ctx.clock.now());
      // Another process's round while v1 is in flight: v2 is due, but its object is leased.
      assert.deepEqual(await deliver(), { sent: 0, failed: 0 });
      release();
      assert.deepEqual(await first, { sent: 2, failed: 0 });
      assert.equal(most, 1);
      assert.deepEqual(
        peer.requests.map((r) => JSON.parse(r.body)),
        [{ v: 1 }, { v: 2 }],
      );
    } finally {
      release();
      await peer.close();
    }
  });

  it('stopping cuts off the pushes in flight at once and leaves them queued and due (another process or the next start sends them)', async () => {
    const peer = await fakePeer(() => {});
    try {
      await connectedPeer('hanging-cpo', [{ country_code: 'SE', party_id: 'HNG' }], {
        endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: `${peer.url}/tokens` }],
      });
      const id = (await ctx.ocpi.connections.findByName('hanging-cpo'))?.id as string;
      for (const key of ['h1', 'h2', 'h3']) await repo.enqueuePush(ctx.db, push(id, key, { key }), ctx.clock.now());
      const stop = new AbortController();
      const delivering = deliverDuePushes({
        db: ctx.db,
        clock: ctx.clock,
        auth: ctx.ocpi.connections.peerAuth,
        routing: (c) => ctx.ocpi.connections.routingTo(c),
        timeoutMs: 30_000,
        signal: stop.signal,
      });
      while (peer.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const stopped = performance.now();
      stop.abort();
      assert.deepEqual(await delivering, { sent: 0, failed: 0 });
      assert.ok(performance.now() - stopped < 1_000, 'stopped within a second, not after the 30 s timeout');
      const { rows } = await ctx.db.query<{ attempts: number; leased: boolean; due: boolean }>(
        'SELECT attempts, leased_until IS NOT NULL AS leased, next_attempt_at <= $2 AS due FROM ocpi_outbox WHERE connection_id = $1',
        [id, ctx.clock.now()],
      );
      assert.deepEqual(
        rows,
        [1, 2, 3].map(() => ({ attempts: 0, leased: false, due: true })),
      );
      await ctx.db.query('DELETE FROM ocpi_outbox WHERE connection_id = $1', [id]);
    } finally {
      await peer.close();
    }
  });
});

describe('reconciliation', () => {
  it('runs one pass at a time and never rejects (it runs from a timer)', async () => {
    let queries = 0;
    let fail: (error: Error) => void = () => {};
    const db = {
      query: () => {
        queries++;
        return new Promise((_resolve, reject) => {
          fail = reject;
        });
      },
    } as unknown as Database;
    const logged: string[] = [];
    const ocpi = createOcpi({
      db,
      clock: ctx.clock,
      config: ctx.config.ocpi,
      baseUrl: 'https://emsp.example.com/ocpi',
      ingestion: {} as Ingestion,
      log: (_level, message) => logged.push(message),
    });
    const first = ocpi.reconcile();
    const second = ocpi.reconcile();
    assert.equal(queries, 1, 'the second call joins the pass under way');
    fail(new Error('the database is down'));
    await first;
    await second;
    assert.ok(logged.some((m) => /reconciliation failed/.test(m)));
  });
});
