// The sandbox CPO network driven as an eMSP drives it, over real HTTP, by a
// small faithful eMSP peer (cpo-sandbox-support.ts): registration in both
// directions, token checks, pagination, the Commands flow from START_SESSION
// to the CDR (priced by the tariff), every scenario EVSE, the Tokens
// Receiver, retries of pushes, and refusals of bad input.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Big from 'big.js';
import type { Cdr } from '../src/ocpi-protocol/cdrs.ts';
import { OcpiTransportError, ocpiPages } from '../src/ocpi-protocol/client.ts';
import type { OcpiLocation, OcpiTariff } from '../src/ocpi-protocol/locations-tariffs.ts';
import type { Session } from '../src/ocpi-protocol/sessions.ts';
import { authorizationHeader } from '../src/ocpi-protocol/transport.ts';
import { parseCommandResponse, parseConnector, parseEvse, parseLocation, parseSession, parseTariff } from '../src/ocpi-protocol/validate.ts';
import { systemClock } from '../src/platform/clock.ts';
import { priceSession } from '../src/pricing/tariff-engine.ts';
import { type CpoSandbox, createCpoSandbox, type Scenario, scenarioLocationId } from '../src/sandbox/cpo/index.ts';
import { appToken, dataOf, EMSP_PARTY, type EmspPeer, selfSignedCertificate, startEmspPeer, waitFor } from './cpo-sandbox-support.ts';
import { createTestDatabase } from './helpers.ts';

const LOCATIONS = 1200;
let drop: () => Promise<void>;
let cpo: CpoSandbox;
let emsp: EmspPeer;
let cpoVersionsUrl: string;
let scenarioLocation: string;
let firstTokenA: string;
const closers: (() => Promise<void>)[] = [];

before(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  cpo = await createCpoSandbox({
    db: database.db,
    clock: systemClock,
    locations: LOCATIONS,
    seed: 7,
    timeCompression: 600,
    statusChangesPerSecond: 0,
    tickMs: 20,
    commandDelayMs: 20,
    activationDelayMs: 80,
    sessionUpdateIntervalMs: 120,
    lateCdrDelayMs: 700,
    interruptAfterSeconds: 240,
    noUpdatesEndAfterSeconds: 240,
    hangMs: 5_000,
    retryBaseMs: 40,
    requestTimeoutMs: 3_000,
    pageLimits: { locations: 100, tariffs: 200 },
  });
  cpoVersionsUrl = await cpo.listen({ port: 0 });
  cpo.startBackgroundWork();
  emsp = await startEmspPeer();
  firstTokenA = await cpo.issueTokenA();
  await emsp.registerWith(cpoVersionsUrl, firstTokenA);
  scenarioLocation = scenarioLocationId(cpo.parties[0] as (typeof cpo.parties)[number]);
});

after(async () => {
  for (const close of closers) await close();
  await cpo?.close();
  await emsp?.close();
  await drop?.();
});

/** A raw HTTP call, for what the OCPI client would not send. */
async function raw(
  method: string,
  url: string,
  options: { authorization?: string; body?: string; contentType?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  if (options.contentType) headers['content-type'] = options.contentType;
  const res = await fetch(url, { method, headers, ...(options.body === undefined ? {} : { body: options.body }) });
  const text = await res.text();
  let body: { status_code?: number; status_message?: string; timestamp?: string; data?: unknown } = {};
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body };
}

const evseUid = (scenario: Scenario) => `${scenarioLocation}-${scenario}`;

async function start(scenario: Scenario, authorizationReference: string) {
  const { url, uid } = emsp.responseUrl('START_SESSION');
  const reply = await emsp.call('POST', `${emsp.endpoint('commands')}/START_SESSION`, {
    response_url: url,
    token: appToken(),
    location_id: scenarioLocation,
    evse_uid: evseUid(scenario),
    connector_id: '1',
    authorization_reference: authorizationReference,
  });
  assert.equal(reply.status, 200);
  assert.equal(reply.envelope?.status_code, 1000);
  const response = parseCommandResponse(reply.envelope?.data);
  assert.ok(response.ok, JSON.stringify(reply.envelope));
  return { response: response.value, uid };
}

const sessionByReference = (reference: string, status?: Session['status']) =>
  [...emsp.sessions.values()].find((s) => s.authorization_reference === reference && (status === undefined || s.status === status));

async function stop(sessionId: string) {
  const { url, uid } = emsp.responseUrl('STOP_SESSION');
  const reply = await emsp.call('POST', `${emsp.endpoint('commands')}/STOP_SESSION`, { response_url: url, session_id: sessionId });
  const response = parseCommandResponse(reply.envelope?.data);
  assert.ok(response.ok, JSON.stringify(reply.envelope));
  return { response: response.value, uid };
}

const cdrOf = (sessionId: string) => emsp.cdrs.find((c) => c.session_id === sessionId);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The CDR's totals recomputed from its own charging periods and tariff. */
function recompute(cdr: Cdr) {
  const location = cpo.network.location(cdr.cdr_location.id) as OcpiLocation;
  return priceSession({
    tariff: cdr.tariffs?.[0],
    currency: cdr.currency,
    timeZone: location.time_zone,
    start: new Date(cdr.start_date_time),
    end: new Date(cdr.end_date_time),
    periods: cdr.charging_periods,
  });
}

describe('registration and credentials tokens', () => {
  test('an eMSP registers with a TOKEN_A: the sandbox read its versions with the eMSP token and answered its own, one CPO role per party', async () => {
    assert.equal(emsp.state.cpoRoles.length, cpo.parties.length);
    assert.ok(cpo.parties.length > 10);
    for (const role of emsp.state.cpoRoles) assert.equal(role.role, 'CPO');
    assert.deepEqual(
      emsp.state.cpoRoles.map((r) => `${r.country_code}*${r.party_id}`),
      cpo.parties.map((p) => `${p.country_code}*${p.party_id}`),
    );
    const fetched = emsp.received.filter((r) => r.path === '/ocpi/emsp/versions' || r.path === '/ocpi/emsp/2.2.1');
    assert.equal(fetched.length, 2);
    for (const r of fetched) assert.equal(r.headers.authorization, authorizationHeader(emsp.state.cpoCallsWith as string));
    const peers = await cpo.listPeers();
    assert.equal(peers.filter((p) => p.status === 'REGISTERED').length >= 1, true);
  });

  test('tokens: unknown or missing is 401; TOKEN_A opens only versions and credentials, and is thrown away after use; raw tokens are tolerated', async () => {
    const locations = emsp.endpoint('locations');
    for (const authorization of [undefined, 'Token bm90LWEtdG9rZW4=', 'Bearer x', 'Token', 'Token !!!']) {
      const res = await raw('GET', locations, authorization === undefined ? {} : { authorization });
      assert.equal(res.status, 401);
      assert.equal(res.body.status_code, 2000);
      assert.ok(res.headers.get('x-request-id'));
      assert.ok(res.headers.get('x-correlation-id'));
    }
    const tokenA = await cpo.issueTokenA();
    assert.equal((await raw('GET', cpoVersionsUrl, { authorization: authorizationHeader(tokenA) })).status, 200);
    assert.equal((await raw('GET', locations, { authorization: authorizationHeader(tokenA) })).status, 401);
    assert.equal((await raw('GET', `${locations}/${scenarioLocation}`, { authorization: authorizationHeader(tokenA) })).status, 401);
    // The TOKEN_A the eMSP registered with no longer works.
    assert.equal((await raw('GET', cpoVersionsUrl, { authorization: authorizationHeader(firstTokenA) })).status, 401);
    const rawToken = emsp.state.cpoToken as string;
    const plain = await raw('GET', `${locations}?limit=1`, { authorization: `Token ${rawToken}`, headers: emsp.routing() });
    assert.equal(plain.status, 200);
    assert.equal(plain.body.status_code, 1000);
    // Request and correlation ids are echoed.
    const echoed = await raw('GET', `${locations}?limit=1`, {
      authorization: authorizationHeader(rawToken),
      headers: { 'X-Request-ID': 'req-123', 'X-Correlation-ID': 'corr-456', ...emsp.routing() },
    });
    assert.equal(echoed.headers.get('x-request-id'), 'req-123');
    assert.equal(echoed.headers.get('x-correlation-id'), 'corr-456');
    // Already registered: POST is 405; GET shows our current credentials.
    const again = await emsp.call('POST', emsp.endpoint('credentials'), { token: 'x', url: 'http://127.0.0.1:1/v', roles: [] });
    assert.equal(again.status, 405);
    const current = await emsp.call('GET', emsp.endpoint('credentials'));
    assert.equal(dataOf<{ token: string }>(current).token, rawToken);
  });

  test('a second eMSP registers, renews its credentials with PUT and unregisters with DELETE', async () => {
    const second = await startEmspPeer();
    closers.push(() => second.close());
    const tokenA = await cpo.issueTokenA();
    const credentials = await second.registerWith(cpoVersionsUrl, tokenA);
    assert.equal((await raw('GET', cpoVersionsUrl, { authorization: authorizationHeader(tokenA) })).status, 401, 'TOKEN_A is thrown away');
    const firstToken = credentials.token;
    assert.equal((await second.call('GET', `${second.endpoint('locations')}?limit=1`)).status, 200);
    // PUT: new token for us, our new token for the CPO, endpoints fetched again with it.
    const newOurs = 'emsp-renewed-token';
    second.state.cpoCallsWith = newOurs;
    const before = second.received.length;
    const put = await second.call('PUT', second.endpoint('credentials'), {
      token: newOurs,
      url: second.versionsUrl,
      // Its party stays the one it names in its routing headers (OCPI-from must be a party of the registered eMSP).
      roles: [{ role: 'EMSP', business_details: { name: 'Second' }, ...EMSP_PARTY }],
    });
    assert.equal(put.status, 200, JSON.stringify(put.envelope));
    const renewed = dataOf<{ token: string }>(put).token;
    assert.notEqual(renewed, firstToken);
    assert.ok(second.received.slice(before).some((r) => r.path === '/ocpi/emsp/versions' && r.headers.authorization === authorizationHeader(newOurs)));
    assert.equal((await second.call('GET', `${second.endpoint('locations')}?limit=1`, undefined, firstToken)).status, 401);
    assert.equal((await second.call('GET', `${second.endpoint('locations')}?limit=1`, undefined, renewed)).status, 200);
    // PUT with a TOKEN_A is 405 (not registered); DELETE unregisters.
    const otherA = await cpo.issueTokenA();
    assert.equal((await second.call('PUT', second.endpoint('credentials'), { token: 'y', url: second.versionsUrl, roles: [] }, otherA)).status, 405);
    assert.equal((await second.call('DELETE', second.endpoint('credentials'), undefined, renewed)).status, 200);
    assert.equal((await second.call('GET', `${second.endpoint('locations')}?limit=1`, undefined, renewed)).status, 401);
    assert.ok((await cpo.listPeers()).some((p) => p.status === 'UNREGISTERED'));
  });

  test('registration with an unreachable or unsuitable eMSP answers 3001/3002 and leaves the TOKEN_A usable', async () => {
    const tokenA = await cpo.issueTokenA();
    const credentialsUrl = emsp.endpoint('credentials');
    const unreachable = await emsp.call(
      'POST',
      credentialsUrl,
      { token: 'abc', url: 'http://127.0.0.1:9/versions', roles: [{ role: 'EMSP', business_details: { name: 'X' }, country_code: 'NL', party_id: 'XXX' }] },
      tokenA,
    );
    assert.equal(unreachable.envelope?.status_code, 3001);
    const invalid = await emsp.call('POST', credentialsUrl, { token: 'abc' }, tokenA);
    assert.equal(invalid.status, 200, 'valid JSON from an authenticated peer reached the OCPI layer (status_codes)');
    assert.equal(invalid.envelope?.status_code, 2001);
    assert.match(invalid.envelope?.status_message ?? '', /url|roles/);
    assert.equal((await raw('GET', cpoVersionsUrl, { authorization: authorizationHeader(tokenA) })).status, 200);
  });

  test('the sandbox registers with an eMSP over HTTPS (pinned self-signed certificate), choosing 2.2.1', async () => {
    const tls = await selfSignedCertificate();
    const secure = await startEmspPeer({ tls });
    closers.push(() => secure.close());
    const registration = await cpo.registerWith({ versionsUrl: secure.versionsUrl, token: secure.state.tokenA, pinnedCertificatePem: tls.cert });
    assert.equal(registration.version, '2.2.1');
    assert.deepEqual(
      registration.roles.map((r) => r.role),
      ['EMSP'],
    );
    assert.ok(registration.endpoints.some((e) => e.identifier === 'sessions' && e.role === 'RECEIVER'));
    // It POSTed its credentials with our TOKEN_A, then read our versions again with the token we gave it.
    const post = secure.received.find((r) => r.method === 'POST' && r.path === '/ocpi/emsp/2.2.1/credentials');
    assert.equal(post?.headers.authorization, authorizationHeader(secure.state.tokenA));
    const lastVersions = secure.received.filter((r) => r.path === '/ocpi/emsp/versions').at(-1);
    assert.equal(lastVersions?.headers.authorization, authorizationHeader(secure.state.cpoCallsWith as string));
    // We call it with the token it gave us.
    const page = await secure.call('GET', `${secure.endpoint('tariffs')}?limit=5`);
    assert.equal(page.status, 200);
    await assert.rejects(cpo.registerWith({ versionsUrl: secure.versionsUrl, token: 'wrong-token', pinnedCertificatePem: tls.cert }), /401/);
    await assert.rejects(cpo.registerWith({ versionsUrl: secure.versionsUrl, token: secure.state.tokenA }), OcpiTransportError);
  });
});

describe('Locations and Tariffs (Sender)', () => {
  test('pages of locations: X-Total-Count, X-Limit lowered to the maximum, Link to the next page, every location valid', async () => {
    const url = emsp.endpoint('locations');
    const first = await emsp.call('GET', `${url}?limit=1000`);
    assert.equal(first.status, 200);
    assert.equal(first.headers['x-total-count'], String(LOCATIONS + 1));
    assert.equal(first.headers['x-limit'], '100');
    assert.match(String(first.headers.link), /offset=100&limit=100>; rel="next"$/);
    // The routing headers of the request come back mirrored.
    assert.equal(first.headers['ocpi-to-country-code'], 'NL');
    assert.equal(first.headers['ocpi-to-party-id'], 'TST');
    const ids = new Set<string>();
    let pages = 0;
    for await (const page of ocpiPages<OcpiLocation>({ token: emsp.state.cpoToken as string }, url, { headers: emsp.routing() })) {
      pages++;
      for (const location of page.items) {
        const parsed = parseLocation(location);
        assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
        ids.add(location.id);
      }
    }
    assert.equal(pages, Math.ceil((LOCATIONS + 1) / 100));
    assert.equal(ids.size, LOCATIONS + 1);
    const last = await emsp.call('GET', `${url}?offset=1200&limit=100`);
    assert.equal(dataOf<unknown[]>(last).length, 1);
    assert.equal(last.headers.link, undefined);
  });

  test('date_from and date_to filter on last_updated, which follows EVSE status changes; the Link keeps the filters', async () => {
    const url = emsp.endpoint('locations');
    const epoch = '2026-01-01T00:00:00.000Z';
    const none = await emsp.call('GET', `${url}?date_to=${epoch}`);
    assert.equal(none.headers['x-total-count'], '0');
    const all = await emsp.call('GET', `${url}?date_from=${epoch}&limit=50`);
    assert.equal(all.headers['x-total-count'], String(LOCATIONS + 1));
    const link = String(all.headers.link);
    assert.match(link, /date_from=2026-01-01T00%3A00%3A00.000Z/);
    assert.match(link, /offset=50&limit=50/);
    // A session changes the scenario EVSE's status: only its location is newer.
    const since = new Date();
    await start('INTERRUPT', 'filter-1');
    await waitFor('the interrupted session to complete', () => sessionByReference('filter-1', 'COMPLETED'));
    const changed = await emsp.call('GET', `${url}?date_from=${since.toISOString()}`);
    assert.equal(changed.headers['x-total-count'], '1');
    const [location] = dataOf<OcpiLocation[]>(changed);
    assert.equal(location?.id, scenarioLocation);
    assert.ok(Date.parse(location?.last_updated as string) >= since.getTime());
    const evse = location?.evses?.find((e) => e.uid === evseUid('INTERRUPT'));
    assert.equal(evse?.status, 'AVAILABLE');
    assert.equal(evse?.last_updated, location?.last_updated);
    const before = await emsp.call('GET', `${url}?date_from=${epoch}&date_to=${since.toISOString()}`);
    assert.equal(before.headers['x-total-count'], String(LOCATIONS));
  });

  test('one location, EVSE or connector; unknown ones are 404 with 2003', async () => {
    const url = emsp.endpoint('locations');
    const location = await emsp.call('GET', `${url}/${scenarioLocation}`);
    assert.ok(parseLocation(location.envelope?.data).ok);
    const evse = await emsp.call('GET', `${url}/${scenarioLocation}/${evseUid('NORMAL')}`);
    assert.ok(parseEvse(evse.envelope?.data).ok);
    assert.equal(dataOf<{ evse_id: string }>(evse).evse_id, `${cpo.parties[0]?.country_code}*${cpo.parties[0]?.party_id}*ESCN*NORMAL`);
    const connector = await emsp.call('GET', `${url}/${scenarioLocation}/${evseUid('NORMAL')}/1`);
    assert.ok(parseConnector(connector.envelope?.data).ok);
    for (const path of ['NOPE', `${scenarioLocation}/NOPE`, `${scenarioLocation}/${evseUid('NORMAL')}/9`]) {
      const res = await emsp.call('GET', `${url}/${path}`);
      assert.equal(res.status, 404);
      assert.equal(res.envelope?.status_code, 2003);
    }
  });

  test('a NUL character or an unpaired surrogate in a path or query is refused with 2001, never a server error', async () => {
    const url = emsp.endpoint('locations');
    for (const path of [`${scenarioLocation}%00`, `${scenarioLocation}/%ED%A0%80x%00`, `?date_from=2020-01-01T00:00:00Z%00`]) {
      const res = await emsp.call('GET', path.startsWith('?') ? `${url}${path}` : `${url}/${path}`);
      assert.equal(res.status, 400, path);
      assert.equal(res.envelope?.status_code, 2001, path);
    }
  });

  test('tariffs page by page, all valid; malformed paging parameters are 2001', async () => {
    const url = emsp.endpoint('tariffs');
    let count = 0;
    let total: number | undefined;
    for await (const page of ocpiPages<OcpiTariff>({ token: emsp.state.cpoToken as string }, url, { headers: emsp.routing() })) {
      total = page.total;
      for (const tariff of page.items) {
        assert.ok(parseTariff(tariff).ok);
        count++;
      }
    }
    assert.equal(count, total);
    assert.equal(count, cpo.network.tariffs.length);
    for (const q of ['offset=-1', 'limit=abc', 'date_from=yesterday', 'offset=1.5']) {
      const res = await emsp.call('GET', `${url}?${q}`);
      assert.equal(res.status, 200, q);
      assert.equal(res.envelope?.status_code, 2001);
      assert.ok(res.envelope?.status_message);
    }
  });
});

describe('charging: START_SESSION to CDR', () => {
  test('a session becomes ACTIVE, is patched with charging periods, stops on STOP_SESSION and its CDR is priced by the tariff', async () => {
    const startedAt = Date.now();
    const { response, uid } = await start('NORMAL', 'flow-1');
    assert.equal(response.result, 'ACCEPTED');
    assert.equal(response.timeout, 30);
    await waitFor('the start result', () => emsp.commandResults.get(uid)?.[0]);
    assert.equal(emsp.commandResults.get(uid)?.[0]?.result, 'ACCEPTED');
    const active = await waitFor('an ACTIVE session', () => sessionByReference('flow-1', 'ACTIVE'));
    assert.ok(Date.now() - startedAt < 2_000);
    const events = () => emsp.sessionEvents.filter((e) => e.id === active.id);
    assert.equal(events()[0]?.method, 'PUT');
    assert.equal(events()[0]?.body.status, 'PENDING');
    await waitFor('charging periods', () => (emsp.sessions.get(active.id)?.charging_periods?.length ?? 0) >= 2);
    const running = emsp.sessions.get(active.id) as Session;
    assert.ok(running.kwh > 0);
    assert.ok(running.total_cost && running.total_cost.excl_vat > 0);
    assert.equal(running.cdr_token.uid.length > 0, true);
    assert.equal(running.auth_method, 'COMMAND');
    // Routing headers: from the CPO party to the eMSP party.
    const put = emsp.received.find((r) => r.method === 'PUT' && r.path.includes(active.id));
    assert.equal(put?.headers['ocpi-from-party-id'], cpo.parties[0]?.party_id);
    assert.equal(put?.headers['ocpi-to-party-id'], 'TST');

    const stopped = await stop(active.id);
    assert.equal(stopped.response.result, 'ACCEPTED');
    const stopAt = Date.now();
    await waitFor('the stop result', () => emsp.commandResults.get(stopped.uid)?.[0]);
    // Command results go to the eMSP's commands module (a functional module): the four routing headers, from the
    // party of the EVSE (start) or session (stop) to the eMSP party.
    for (const commandUid of [uid, stopped.uid]) {
      const result = emsp.received.find((r) => r.method === 'POST' && r.path.includes(`/commands/`) && r.path.endsWith(`/${commandUid}`));
      assert.deepEqual(
        ['ocpi-from-country-code', 'ocpi-from-party-id', 'ocpi-to-country-code', 'ocpi-to-party-id'].map((h) => result?.headers[h]),
        [active.country_code, active.party_id, 'NL', 'TST'],
        `routing headers of the result of ${commandUid}`,
      );
    }
    const cdr = await waitFor('the CDR', () => cdrOf(active.id));
    assert.ok(Date.now() - stopAt < 2_000);
    const session = emsp.sessions.get(active.id) as Session;
    assert.equal(session.status, 'COMPLETED');
    assert.ok(parseSession(session).ok);
    assert.equal(session.kwh, cdr.total_energy);
    assert.deepEqual(session.total_cost, cdr.total_cost);
    assert.equal(session.end_date_time, cdr.end_date_time);
    assert.equal(cdr.start_date_time, session.start_date_time);
    assert.equal(cdr.authorization_reference, 'flow-1');
    assert.equal(cdr.cdr_location.evse_uid, evseUid('NORMAL'));
    assert.equal(cdr.tariffs?.length, 1);
    assert.equal(cdr.charging_periods.length, session.charging_periods?.length);
    for (const p of cdr.charging_periods) assert.ok(!p.dimensions.some((d) => d.type === 'STATE_OF_CHARGE'));

    // The totals are the tariff's computation over the CDR's own periods...
    const again = recompute(cdr);
    assert.deepEqual(again.total_cost, cdr.total_cost);
    assert.equal(again.total_energy, cdr.total_energy);
    // ... and, for the scenario tariff (session fee, energy per kWh, charging time per started minute), by hand.
    const tariff = cdr.tariffs?.[0] as OcpiTariff;
    const price = (type: string) => tariff.elements[0]?.price_components.find((c) => c.type === type) as { price: number; vat?: number };
    const seconds = new Big(Date.parse(cdr.end_date_time) - Date.parse(cdr.start_date_time)).div(1000);
    const billedMinutes = seconds.div(60).round(0, Big.roundUp);
    const excl = new Big(price('FLAT').price)
      .plus(new Big(cdr.total_energy).times(price('ENERGY').price))
      .plus(billedMinutes.times(price('TIME').price).div(60));
    assert.equal(cdr.total_cost.excl_vat, Number(excl.round(2, Big.roundHalfUp).toFixed(2)));
    const vat = new Big(price('ENERGY').vat ?? 0).plus(100).div(100);
    assert.equal(cdr.total_cost.incl_vat, Number(excl.times(vat).round(2, Big.roundHalfUp).toFixed(2)));

    // The EVSE went CHARGING, then AVAILABLE, and both were pushed.
    const statuses = emsp.evsePatches.filter((p) => p.path.endsWith(`/${scenarioLocation}/${evseUid('NORMAL')}`)).map((p) => p.body.status);
    assert.deepEqual(statuses.slice(-2), ['CHARGING', 'AVAILABLE']);
    // The Sender interfaces have both, for reconciliation.
    const sessions = await emsp.call('GET', `${emsp.endpoint('sessions')}?date_from=${new Date(startedAt - 1000).toISOString()}`);
    const listed = dataOf<Session[]>(sessions).find((s) => s.id === active.id);
    assert.equal(listed?.status, 'COMPLETED');
    assert.deepEqual(listed?.charging_periods, session.charging_periods);
    const cdrs = await emsp.call('GET', emsp.endpoint('cdrs'));
    assert.ok(dataOf<Cdr[]>(cdrs).some((c) => c.id === cdr.id));
    // A second stop is refused.
    assert.equal((await stop(active.id)).response.result, 'REJECTED');
    assert.deepEqual(emsp.errors, []);
  });

  test('a start without an EVSE picks an available one; a second start on a busy EVSE gets EVSE_OCCUPIED', async () => {
    const location = cpo.network.location('LOC-0000002') as OcpiLocation;
    const { url, uid } = emsp.responseUrl('START_SESSION');
    // Addressed to the location's party (OCPI-to): the network refuses a command for another party's location.
    const to = { country_code: location.country_code, party_id: location.party_id };
    const reply = await emsp.call(
      'POST',
      `${emsp.endpoint('commands')}/START_SESSION`,
      { response_url: url, token: appToken(), location_id: location.id, authorization_reference: 'any-evse' },
      undefined,
      undefined,
      to,
    );
    const answer = dataOf<{ result: string }>(reply).result;
    if (answer === 'REJECTED') return; // every EVSE of this generated location is busy: nothing more to check
    assert.equal(answer, 'ACCEPTED');
    await waitFor('the result', () => emsp.commandResults.get(uid)?.[0]);
    const session = await waitFor('a session', () => sessionByReference('any-evse'));
    const second = emsp.responseUrl('START_SESSION');
    await emsp.call(
      'POST',
      `${emsp.endpoint('commands')}/START_SESSION`,
      { response_url: second.url, token: appToken(), location_id: location.id, evse_uid: session.evse_uid },
      undefined,
      undefined,
      to,
    );
    const result = await waitFor('the second result', () => emsp.commandResults.get(second.uid)?.[0]);
    assert.equal(result.result, 'EVSE_OCCUPIED');
    await stop(session.id);
    await waitFor('its CDR', () => cdrOf(session.id));
  });

  test('pushes the eMSP refuses are retried until accepted; a PATCH of a session the eMSP lost becomes a PUT', async () => {
    emsp.failNext('cdr', 2, 503);
    const { uid } = await start('NORMAL', 'retry-1');
    await waitFor('the result', () => emsp.commandResults.get(uid)?.[0]);
    const active = await waitFor('ACTIVE', () => sessionByReference('retry-1', 'ACTIVE'));
    await waitFor('a PATCH', () => emsp.sessionEvents.filter((e) => e.id === active.id && e.method === 'PATCH').length >= 2);
    emsp.sessions.delete(active.id);
    await waitFor('the session again, by PUT', () => emsp.sessionEvents.filter((e) => e.id === active.id && e.method === 'PUT').length >= 2);
    await stop(active.id);
    const cdr = await waitFor('the CDR despite two refusals', () => cdrOf(active.id));
    const entry = await waitFor('the CDR delivery recorded', async () => (await cpo.outbox(active.id)).find((m) => m.kind === 'cdr' && m.deliveredAt));
    const outbox = await cpo.outbox(active.id);
    assert.equal(entry?.attempts, 3);
    assert.equal(entry?.lastStatus, 201);
    assert.ok(entry?.deliveredAt);
    assert.equal(entry?.replyLocation, emsp.versionsUrl.replace(/versions$/, `2.2.1/cdrs/${cdr.id}`));
    assert.ok(outbox.every((m) => m.deliveredAt));
  });
});

describe('scenario EVSEs', () => {
  test('REJECT: the start is rejected at once, nothing follows', async () => {
    const { response, uid } = await start('REJECT', 'scn-reject');
    assert.equal(response.result, 'REJECTED');
    assert.ok(response.message?.[0]?.text);
    await sleep(200);
    assert.equal(emsp.commandResults.get(uid), undefined);
    assert.equal(sessionByReference('scn-reject'), undefined);
  });

  test('TIMEOUT: the START_SESSION request is never answered', async () => {
    const { url } = emsp.responseUrl('START_SESSION');
    await assert.rejects(
      emsp.call(
        'POST',
        `${emsp.endpoint('commands')}/START_SESSION`,
        { response_url: url, token: appToken(), location_id: scenarioLocation, evse_uid: evseUid('TIMEOUT') },
        undefined,
        300,
      ),
      (error: Error) => error instanceof OcpiTransportError && /no answer/.test(error.message),
    );
  });

  test('NORESULT: accepted, but the command result never comes and no session starts', async () => {
    const { response, uid } = await start('NORESULT', 'scn-noresult');
    assert.equal(response.result, 'ACCEPTED');
    await sleep(300);
    assert.equal(emsp.commandResults.get(uid), undefined);
    assert.equal(sessionByReference('scn-noresult'), undefined);
  });

  test('NOSTART: accepted twice (response and result), but no session ever', async () => {
    const { response, uid } = await start('NOSTART', 'scn-nostart');
    assert.equal(response.result, 'ACCEPTED');
    assert.equal((await waitFor('the result', () => emsp.commandResults.get(uid)?.[0])).result, 'ACCEPTED');
    await sleep(300);
    assert.equal(sessionByReference('scn-nostart'), undefined);
  });

  test('NOUPDATES: no Session is pushed (it is in GET /sessions); it ends by itself and only the CDR arrives', async () => {
    const since = new Date();
    const { uid } = await start('NOUPDATES', 'scn-noupdates');
    await waitFor('the result', () => emsp.commandResults.get(uid)?.[0]);
    const pulled = await waitFor('the session in the Sender interface', async () => {
      const res = await emsp.call('GET', `${emsp.endpoint('sessions')}?date_from=${since.toISOString()}`);
      return dataOf<Session[]>(res).find((s) => s.authorization_reference === 'scn-noupdates');
    });
    const cdr = await waitFor('the CDR', () => cdrOf(pulled.id));
    assert.equal(cdr.authorization_reference, 'scn-noupdates');
    assert.equal(emsp.sessions.has(pulled.id), false);
    assert.equal(
      emsp.sessionEvents.some((e) => e.id === pulled.id),
      false,
    );
  });

  test('STOPREJECT: the stop is rejected and the session keeps charging', async () => {
    const { uid } = await start('STOPREJECT', 'scn-stopreject');
    await waitFor('the result', () => emsp.commandResults.get(uid)?.[0]);
    const active = await waitFor('ACTIVE', () => sessionByReference('scn-stopreject', 'ACTIVE'));
    const stopped = await stop(active.id);
    assert.equal(stopped.response.result, 'REJECTED');
    await sleep(250);
    assert.equal(emsp.sessions.get(active.id)?.status, 'ACTIVE');
    assert.equal(emsp.commandResults.get(stopped.uid), undefined);
  });

  test('INTERRUPT: the car stops charging by itself; the session completes and the CDR follows', async () => {
    const { uid } = await start('INTERRUPT', 'scn-interrupt');
    await waitFor('the result', () => emsp.commandResults.get(uid)?.[0]);
    const done = await waitFor('COMPLETED without a stop', () => sessionByReference('scn-interrupt', 'COMPLETED'));
    const cdr = await waitFor('the CDR', () => cdrOf(done.id));
    // 240 s worth of charging at 600x: 400 ms on the clock (timestamps never run ahead), 240 s of energy at 50 kW.
    assert.equal(Date.parse(cdr.end_date_time) - Date.parse(cdr.start_date_time), 400);
    assert.ok(Date.parse(cdr.end_date_time) <= Date.now());
    assert.equal(cdr.total_energy, Math.floor((50 * 240 * 1000) / 3600) / 1000);
    assert.match(cdr.remark ?? '', /stopped charging by itself/);
    assert.deepEqual(recompute(cdr).total_cost, cdr.total_cost);
  });

  test('LATECDR: the CDR comes lateCdrDelayMs after the session completed', async () => {
    const { uid } = await start('LATECDR', 'scn-latecdr');
    await waitFor('the result', () => emsp.commandResults.get(uid)?.[0]);
    const active = await waitFor('ACTIVE', () => sessionByReference('scn-latecdr', 'ACTIVE'));
    await stop(active.id);
    await waitFor('COMPLETED', () => sessionByReference('scn-latecdr', 'COMPLETED'));
    const completedAt = emsp.sessionEvents.filter((e) => e.id === active.id).at(-1)?.at as number;
    await sleep(200);
    assert.equal(cdrOf(active.id), undefined);
    await waitFor('the late CDR', () => cdrOf(active.id), 5_000);
    assert.ok(Date.now() - completedAt >= 600);
  });

  test('DUPLICATE: every Session PATCH arrives twice', async () => {
    const { uid } = await start('DUPLICATE', 'scn-duplicate');
    await waitFor('the result', () => emsp.commandResults.get(uid)?.[0]);
    const active = await waitFor('ACTIVE', () => sessionByReference('scn-duplicate', 'ACTIVE'));
    await waitFor('some PATCHes', () => emsp.sessionEvents.filter((e) => e.id === active.id && e.method === 'PATCH').length >= 4);
    await stop(active.id);
    await waitFor('the CDR', () => cdrOf(active.id));
    const patches = emsp.sessionEvents.filter((e) => e.id === active.id && e.method === 'PATCH').map((e) => JSON.stringify(e.body));
    assert.equal(patches.length % 2, 0);
    for (let i = 0; i < patches.length; i += 2) assert.equal(patches[i], patches[i + 1]);
  });

  test('LONGCHARGE: the car is always the 100 kWh saloon at 10 %, so the session goes beyond an hour at 50 kW', async () => {
    const { uid } = await start('LONGCHARGE', 'scn-long');
    await waitFor('the result', () => emsp.commandResults.get(uid)?.[0]);
    const active = await waitFor('ACTIVE', () => sessionByReference('scn-long', 'ACTIVE'));
    // 50 kWh at 50 kW and 600x: about 6 s. A car drawn at random (10-50 %, 42-100 kWh) would often be full before.
    const long = await waitFor('past 50 kWh', () => ((emsp.sessions.get(active.id)?.kwh ?? 0) > 50 ? emsp.sessions.get(active.id) : undefined), 15_000);
    assert.equal(long.status, 'ACTIVE', 'still charging');
    const soc = long.charging_periods?.at(-1)?.dimensions.find((d) => d.type === 'STATE_OF_CHARGE')?.volume ?? 0;
    assert.ok(Math.abs(soc - (10 + long.kwh)) < 1, `state of charge ${soc} % after ${long.kwh} kWh of 100`);
    await stop(active.id);
    const cdr = await waitFor('the CDR', () => cdrOf(active.id));
    assert.ok(cdr.total_energy > 50);
  });
});

describe('bad input and other modules', () => {
  test('commands: invalid JSON, invalid bodies and unknown commands are 2001/404; an unknown location is 2003; unknown sessions are UNKNOWN_SESSION', async () => {
    const commands = emsp.endpoint('commands');
    const authorization = authorizationHeader(emsp.state.cpoToken as string);
    const headers = emsp.routing();
    const garbage = await raw('POST', `${commands}/START_SESSION`, { authorization, headers, body: '{"response_url":', contentType: 'application/json' });
    assert.equal(garbage.status, 400);
    assert.equal(garbage.body.status_code, 2001);
    assert.ok(garbage.body.timestamp);
    for (const body of [{}, { response_url: 'not a url', token: appToken(), location_id: scenarioLocation }, [1, 2], 'text', null]) {
      const res = await emsp.call('POST', `${commands}/START_SESSION`, body);
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(res.envelope?.status_code, 2001);
      assert.ok(res.envelope?.status_message);
    }
    const noBody = await raw('POST', `${commands}/STOP_SESSION`, { authorization, headers });
    assert.equal(noBody.body.status_code, 2001);
    const { url } = emsp.responseUrl('START_SESSION');
    const unknown = await emsp.call('POST', `${commands}/START_SESSION`, { response_url: url, token: appToken(), location_id: 'NO-SUCH-LOCATION' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.envelope?.status_code, 2003);
    // JSON sent as text/plain is read all the same.
    const plain = await raw('POST', `${commands}/STOP_SESSION`, {
      authorization,
      headers,
      body: JSON.stringify({ response_url: url, session_id: 'nope' }),
      contentType: 'text/plain',
    });
    assert.equal((plain.body.data as { result: string }).result, 'UNKNOWN_SESSION');
    assert.equal((await emsp.call('POST', `${commands}/LAUNCH_ROCKET`, {})).status, 404);
    assert.equal(dataOf<{ result: string }>(await emsp.call('POST', `${commands}/UNLOCK_CONNECTOR`, {})).result, 'NOT_SUPPORTED');
    const huge = await raw('POST', `${commands}/START_SESSION`, {
      authorization,
      headers,
      body: JSON.stringify({ pad: 'x'.repeat(1_100_000) }),
      contentType: 'application/json',
    });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.status_code, 2001);
    assert.equal((await emsp.call('GET', `${commands.replace(/commands$/, '')}nothing-here`)).status, 404);
    const badUrl = await raw('GET', `${emsp.endpoint('locations')}/%E0%A4%A`, { authorization, headers });
    assert.equal(badUrl.status, 400);
    assert.equal(badUrl.body.status_code, 2001);
  });

  test('routing headers: required on functional modules (from a party of the eMSP, to one of ours), refused on versions and credentials (2001)', async () => {
    const authorization = authorizationHeader(emsp.state.cpoToken as string);
    const locations = `${emsp.endpoint('locations')}?limit=1`;
    const none = await raw('GET', locations, { authorization });
    assert.equal(none.body.status_code, 2001);
    assert.match(none.body.status_message ?? '', /routing headers missing/);
    const partly = await raw('GET', locations, { authorization, headers: { 'OCPI-from-country-code': 'NL', 'OCPI-from-party-id': 'TST' } });
    assert.equal(partly.body.status_code, 2001);
    assert.match(partly.body.status_message ?? '', /ocpi-to-country-code, ocpi-to-party-id/);
    const notTheirs = await raw('GET', locations, { authorization, headers: { ...emsp.routing(), 'OCPI-from-party-id': 'ZZZ' } });
    assert.equal(notTheirs.body.status_code, 2001);
    const notOurs = await raw('GET', locations, { authorization, headers: { ...emsp.routing(), 'OCPI-to-party-id': 'ZZZ' } });
    assert.equal(notOurs.body.status_code, 2001);
    assert.equal((await raw('GET', locations, { authorization, headers: emsp.routing() })).body.status_code, 1000);
    const routedCredentials = await raw('GET', emsp.endpoint('credentials'), { authorization, headers: emsp.routing() });
    assert.equal(routedCredentials.body.status_code, 2001);
    assert.equal((await raw('GET', emsp.endpoint('credentials'), { authorization })).body.status_code, 1000);
  });

  test('Tokens Receiver: PUT creates then replaces, PATCH updates, GET returns; mismatches and unknown tokens are refused', async () => {
    const base = `${emsp.endpoint('tokens')}/NL/TST`;
    const token = appToken('TOKEN-0001');
    assert.equal((await emsp.call('PUT', `${base}/TOKEN-0001?type=APP_USER`, token)).status, 201);
    assert.equal((await emsp.call('PUT', `${base}/TOKEN-0001?type=APP_USER`, token)).status, 200);
    const got = await emsp.call('GET', `${base}/TOKEN-0001?type=APP_USER`);
    assert.deepEqual(got.envelope?.data, token);
    const patched = await emsp.call('PATCH', `${base}/TOKEN-0001?type=APP_USER`, { valid: false, last_updated: new Date().toISOString() });
    assert.equal(patched.status, 200);
    assert.equal(dataOf<{ valid: boolean }>(await emsp.call('GET', `${base}/TOKEN-0001?type=APP_USER`)).valid, false);
    const checks: [string, string, unknown, number, number][] = [
      ['GET', `${base}/TOKEN-0001`, undefined, 404, 2004],
      ['GET', `${base}/TOKEN-0001?type=FOO`, undefined, 200, 2001],
      ['PUT', `${base}/OTHER?type=APP_USER`, token, 200, 2001],
      ['PUT', `${base}/TOKEN-0001?type=APP_USER`, { ...token, valid: 'yes' }, 200, 2001],
      ['PATCH', `${base}/TOKEN-0001?type=APP_USER`, { valid: true }, 200, 2001],
      ['PATCH', `${base}/NOPE?type=APP_USER`, { valid: true, last_updated: new Date().toISOString() }, 404, 2004],
    ];
    for (const [method, url, body, status, code] of checks) {
      const res = await emsp.call(method as 'GET', url, body);
      assert.equal(res.status, status, `${method} ${url}`);
      assert.equal(res.envelope?.status_code, code);
    }
  });

  test('sessions: charging preferences are not supported (404, 2001)', async () => {
    const res = await emsp.call('PUT', `${emsp.endpoint('sessions')}/x/charging_preferences`, { profile_type: 'FAST' });
    assert.equal(res.status, 404);
    assert.equal(res.envelope?.status_code, 2001);
  });
});
