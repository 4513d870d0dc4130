// An OCPI 2.1.1 CPO, end to end over real HTTP: the sandbox CPO network with
// its 2.1.1 personality registers with our TOKEN_A, and we register with
// another (cpo connect); each handshake settles on 2.1.1; its catalogue is
// pulled, a user's session is started with a 2.1.1 START_SESSION, its Session
// updates and CDR arrive in 2.1.1's shape, and the user is charged and
// invoiced once, for what our tariff engine prices. A recording proxy on each
// side holds every message that crossed to the 2.1.1 spec's field lists and
// checks nothing 2.2.1-only (routing headers, Base64 tokens, country_code or
// party_id on tokens, roles, hubclientinfo) reached the 2.1.1 peer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { linkCdrsToSessions211 } from '../src/modules/ocpi/cdr-session-v2_1_1.ts';
import { SESSION_CANDIDATES_PER_KEY, sessionsOfTokensAtEvses, upsertSession } from '../src/modules/ocpi/repository.ts';
import { systemClock } from '../src/platform/clock.ts';
import type { CpoSandbox } from '../src/sandbox/cpo/index.ts';
import { chargeToInvoice, FAST_CPO_TIMINGS, scenarioEvse } from './charging-support.ts';
import type { TestContext } from './helpers.ts';
import {
  dataOf,
  type Exchange,
  problems211,
  type RecordingProxy,
  ROUTING_HEADERS,
  type Shape211,
  startProxiedCpo,
  startRegisteringCpo,
} from './ocpi-211-support.ts';
import { registerPeer } from './ocpi-support.ts';
import { eventually, USERS } from './payments-support.ts';

let ctx: TestContext;
let emspProxy: RecordingProxy;
/** The 2.1.1 CPO we connect to (cpo connect), behind cpoProxy. */
let cpo: CpoSandbox;
let cpoProxy: RecordingProxy;
let close: () => Promise<void>;
/** The 2.1.1 CPO that registers with us, on a database of its own. */
let registering: CpoSandbox;
let closeRegistering: () => Promise<void>;

before(async () => {
  const common = { clock: systemClock, locations: 40, ...FAST_CPO_TIMINGS, ocpiVersion: '2.1.1' as const, pageLimits: { locations: 7, tariffs: 7 } };
  ({ ctx, emspProxy, cpo, cpoProxy, close } = await startProxiedCpo({ seed: 11, ...common }));
  ({ cpo: registering, close: closeRegistering } = await startRegisteringCpo({ seed: 5, ...common }));
});
after(async () => {
  await closeRegistering?.();
  await close?.();
});

const party = (c: CpoSandbox) => `${c.parties[0]?.country_code}*${c.parties[0]?.party_id}`;

/** Every recorded message of a 2.1.1 module's path, held to the 2.1.1 shape of its body. */
function assertShapes(exchanges: Exchange[], which: (e: Exchange) => { shape: Shape211; value: unknown }[]): number {
  let checked = 0;
  for (const e of exchanges) {
    for (const { shape, value } of which(e)) {
      assert.deepEqual(problems211(shape, value), [], `${e.method} ${e.path}: ${JSON.stringify(value).slice(0, 300)}`);
      checked++;
    }
  }
  return checked;
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

describe('an OCPI 2.1.1 CPO (the sandbox network with its 2.1.1 personality)', () => {
  it('offers only 2.1.1, one party, endpoints without roles', async () => {
    assert.equal(cpo.version, '2.1.1');
    assert.equal(cpo.parties.length, 1);
  });

  it('registers with our TOKEN_A: the handshake settles on 2.1.1, in 2.1.1 shapes, and its catalogue is pulled', async () => {
    const invited = await ctx.ocpi.connections.invite({ name: 'registering' });
    assert.equal(invited.versions_url, `${emspProxy.url}/ocpi/versions`);
    const registration = await registering.registerWith({ versionsUrl: invited.versions_url, token: invited.token });
    assert.equal(registration.version, '2.1.1');
    const connection = await ctx.ocpi.connections.findByName('registering');
    assert.equal(connection?.status, 'connected');
    assert.equal(connection?.version, '2.1.1');
    assert.equal(connection?.raw_tokens, true, 'a 2.1.1 peer is a raw-token connection');
    assert.deepEqual(
      connection?.roles.map((r) => `${r.role}:${r.country_code}*${r.party_id}`),
      [`CPO:${party(registering)}`],
    );
    // Our versions list offers both, best first; our 2.1.1 details list endpoints without roles and no hubclientinfo.
    const versions = emspProxy.exchanges.find((e) => e.path === '/ocpi/versions');
    assert.deepEqual(
      list(dataOf(versions?.responseBody)).map((v) => (v as { version: string }).version),
      ['2.2.1', '2.2', '2.1.1'],
    );
    const details = emspProxy.exchanges.find((e) => e.path === '/ocpi/2.1.1' && e.method === 'GET');
    const endpoints = list((dataOf(details?.responseBody) as { endpoints?: unknown } | undefined)?.endpoints);
    assert.ok(endpoints.length >= 6);
    assertShapes([details as Exchange], () => endpoints.map((value) => ({ shape: 'Endpoint', value })));
    assert.ok(!endpoints.some((e) => (e as { identifier: string }).identifier === 'hubclientinfo'));
    // Its credentials and ours, both in 2.1.1's shape.
    const post = emspProxy.exchanges.find((e) => e.path === '/ocpi/2.1.1/credentials' && e.method === 'POST');
    assert.equal(post?.status, 200);
    assertShapes([post as Exchange], (e) => [
      { shape: 'Credentials', value: e.requestBody },
      { shape: 'Credentials', value: dataOf(e.responseBody) },
    ]);
    // The first pull after a registration runs in the background (a durable job, committed with the credentials; the
    // runner starts now, so the job does not race the CPO's own bookkeeping of the handshake): through the adapter.
    ctx.jobs.start();
    const stored = await eventually(
      async () => {
        const n = (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ocpi_locations WHERE party_id = $1', [registering.parties[0]?.party_id]))
          .rows[0]?.n;
        return n && n > 0 ? n : undefined;
      },
      'the registered CPO’s locations pulled',
      10_000,
    );
    assert.equal(stored, registering.network.locationCount);
  });

  it('is connected by `cpo connect` in 2.1.1 and its catalogue pulled across pages through the adapter', async () => {
    const connection = await ctx.ocpi.connections.connect({ versionsUrl: cpo.versionsUrl, token: await cpo.issueTokenA(), name: 'v211' });
    assert.equal(connection.version, '2.1.1');
    assert.equal(connection.raw_tokens, true);
    assert.deepEqual(connection.endpoints.map((e) => `${e.identifier}:${e.role}`).sort(), [
      'cdrs:SENDER',
      'commands:RECEIVER',
      'credentials:SENDER',
      'locations:SENDER',
      'sessions:SENDER',
      'tariffs:SENDER',
      'tokens:RECEIVER',
    ]);
    const counts = await ctx.ocpi.sync.syncConnection(connection, { full: true });
    assert.deepEqual(counts.failed, []);
    assert.equal(counts.skipped, 0);
    assert.equal(counts.locations, cpo.network.locationCount);
    assert.equal(counts.tariffs, cpo.network.tariffs.length);
    await ctx.catalogue.reload();
    assert.ok(ctx.catalogue.evse(scenarioEvse(cpo, 'NORMAL')), 'the scenario EVSE is in the catalogue');
    const pages = cpoProxy.exchanges.filter((e) => e.method === 'GET' && e.path.endsWith('/locations'));
    assert.ok(pages.length >= Math.ceil(cpo.network.locationCount / 7), `${pages.length} pages of locations`);
    cpo.startBackgroundWork();
  });

  it('charges a user from a 2.1.1 START_SESSION to an invoice, once, at our tariff engine’s price', async () => {
    const { bill } = await chargeToInvoice(ctx, scenarioEvse(cpo, 'NORMAL'));
    // The bill: our engine's price; the 2.1.1 CDR's total (excluding VAT, from the network's own billing) agrees with it.
    assert.equal(Math.round(Number(bill.cdr_total) * 100), bill.net, 'the CDR’s total (excl. VAT) equals the engine’s net');
    assert.ok(bill.gross > bill.net, 'VAT of the CPO’s country applied to the 2.1.1 prices');

    // What the 2.1.1 CPO sent us crossed in 2.1.1's shape: Session PUT/PATCH, the CDR, the command results.
    const fromCpo = emspProxy.exchanges.filter((e) => e.path.startsWith('/ocpi/2.1.1/') && !e.path.startsWith('/ocpi/2.1.1/credentials'));
    const sessionPuts = fromCpo.filter((e) => e.method === 'PUT' && e.path.startsWith('/ocpi/2.1.1/sessions/'));
    const cdrs = fromCpo.filter((e) => e.method === 'POST' && e.path === '/ocpi/2.1.1/cdrs');
    const results = fromCpo.filter((e) => e.method === 'POST' && e.path.startsWith('/ocpi/2.1.1/commands/'));
    assert.ok(sessionPuts.length >= 1 && cdrs.length >= 1 && results.length >= 1, 'Session, CDR and command results came to 2.1.1 endpoints');
    assertShapes(sessionPuts, (e) => [{ shape: 'Session', value: e.requestBody }]);
    assertShapes(cdrs, (e) => [{ shape: 'CDR', value: e.requestBody }]);
    assertShapes(results, (e) => [{ shape: 'CommandResponse', value: e.requestBody }]);
    for (const e of fromCpo) {
      assert.ok(e.status === 200 || e.status === 201, `${e.method} ${e.path} answered ${e.status}`);
      assert.equal((e.responseBody as { status_code?: number }).status_code, 1000, `${e.method} ${e.path}`);
      for (const h of ROUTING_HEADERS) assert.equal(e.responseHeaders[h], undefined, `our answer to ${e.method} ${e.path} carries ${h}`);
    }
  });

  it('answers a 2.1.1 CPO’s GET of what it pushed (Session, CDR at the Location we answered, Location, Tariff) in 2.1.1', async () => {
    const [peer] = (await cpo.listPeers()).filter((p) => p.status === 'REGISTERED');
    assert.ok(peer?.theirToken);
    const get = async (url: string) => {
      const res = await fetch(url, { headers: { authorization: `Token ${peer.theirToken}` } });
      const body = (await res.json()) as { status_code: number; data: unknown };
      assert.equal(res.status, 200, `${url}: ${JSON.stringify(body).slice(0, 300)}`);
      assert.equal(body.status_code, 1000);
      for (const h of ROUTING_HEADERS) assert.equal(res.headers.get(h), null, `${url} answered ${h}`);
      return body.data;
    };
    const sessionPut = emspProxy.exchanges.find((e) => e.method === 'PUT' && e.path.startsWith('/ocpi/2.1.1/sessions/'));
    const cdrPost = emspProxy.exchanges.find((e) => e.method === 'POST' && e.path === '/ocpi/2.1.1/cdrs');
    assert.ok(sessionPut && cdrPost);
    const session = await get(`${emspProxy.url}${sessionPut.path}`);
    assert.deepEqual(problems211('Session', session), []);
    assert.equal((session as { id: string }).id, (sessionPut.requestBody as { id: string }).id);
    const cdrUrl = cdrPost.responseHeaders.location as string;
    assert.match(cdrUrl, /\/ocpi\/2\.1\.1\/cdrs\//);
    const cdr = await get(cdrUrl);
    assert.deepEqual(problems211('CDR', cdr), []);
    assert.equal((cdr as { total_cost: number }).total_cost, (cdrPost.requestBody as { total_cost: number }).total_cost);
    const { country_code, party_id } = cpo.parties[0] as { country_code: string; party_id: string };
    const location = await get(`${emspProxy.url}/ocpi/2.1.1/locations/${country_code}/${party_id}/SCN-${country_code}-${party_id}`);
    assert.deepEqual(problems211('Location', location), []);
    const tariffId = cpo.network.tariffs.find((t) => t.party_id === party_id)?.id as string;
    const tariff = await get(`${emspProxy.url}/ocpi/2.1.1/tariffs/${country_code}/${party_id}/${tariffId}`);
    assert.deepEqual(problems211('Tariff', tariff), []);
  });

  it('refuses a 2.1.1 object that lacks a 2.1.1 field in the envelope (HTTP 200, 2001), naming the field as 2.1.1 names it', async () => {
    const [peer] = (await cpo.listPeers()).filter((p) => p.status === 'REGISTERED');
    assert.ok(peer?.theirToken);
    const { country_code, party_id } = cpo.parties[0] as { country_code: string; party_id: string };
    const put = async (path: string, body: unknown) => {
      const res = await fetch(`${emspProxy.url}/ocpi/2.1.1/${path}`, {
        method: 'PUT',
        headers: { authorization: `Token ${peer.theirToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { status_code: number; status_message?: string } };
    };
    const stamp = '2026-11-24T10:00:00Z';
    const connector = { id: '9', standard: 'IEC_62196_T2', format: 'SOCKET', power_type: 'AC_3_PHASE', amperage: 32, last_updated: stamp };
    const noVoltage = await put(`locations/${country_code}/${party_id}/SCN-${country_code}-${party_id}/SCN-${country_code}-${party_id}-NORMAL/9`, connector);
    assert.equal(noVoltage.status, 200);
    assert.equal(noVoltage.body.status_code, 2001);
    assert.match(noVoltage.body.status_message ?? '', /voltage/);
    const noAuthId = await put(`sessions/${country_code}/${party_id}/s-missing-auth`, {
      id: 's-missing-auth',
      start_datetime: stamp,
      kwh: 0,
      auth_method: 'AUTH_REQUEST',
      location: {},
      currency: 'EUR',
      status: 'ACTIVE',
      last_updated: stamp,
    });
    assert.equal(noAuthId.status, 200);
    assert.equal(noAuthId.body.status_code, 2001);
    assert.match(noAuthId.body.status_message ?? '', /auth_id/);
  });

  it('sends the 2.1.1 CPO nothing 2.2.1-only: no routing headers, raw tokens, tokens and commands in 2.1.1 shape', async () => {
    // A new user's token is pushed to the CPO (the outbox), in 2.1.1's shape.
    const client = await ctx.newClient();
    const user = await ctx.call('POST', `${USERS}/`, { token: client.token, body: { email: 'v211@example.com' } });
    assert.equal(user.status, 201, user.text);
    const push = await eventually(
      async () => {
        await ctx.ocpi.deliverPushes();
        return cpoProxy.exchanges.find((e) => e.method === 'PUT' && e.path.endsWith(`/${user.body.id}`));
      },
      'the token push',
      10_000,
    );
    assert.equal(push.status, 201, 'a new token');
    assert.match(push.path, /\/tokens\/[A-Z]{2}\/[A-Z0-9]{3}\/[0-9a-f-]{36}$/);
    assert.equal((push.requestBody as { type: string }).type, 'OTHER');
    assert.equal((push.requestBody as { auth_id: string }).auth_id, user.body.id);

    const [peer] = (await cpo.listPeers()).filter((p) => p.status === 'REGISTERED');
    assert.ok(peer?.ourToken);
    const requests = cpoProxy.exchanges;
    const functional = requests.filter((e) => !/\/(versions|2\.1\.1|2\.1\.1\/credentials)$/.test(e.path));
    assert.ok(functional.length > 10);
    for (const e of requests) {
      for (const h of ROUTING_HEADERS) assert.equal(e.requestHeaders[h], undefined, `${e.method} ${e.path} carries ${h}`);
    }
    // Every call after the handshake presents the CPO's token as it is (2.1.1), not Base64-encoded.
    for (const e of functional) assert.equal(e.requestHeaders.authorization, `Token ${peer.ourToken}`, `${e.method} ${e.path}`);

    assertShapes(requests, (e) => {
      const out: { shape: Shape211; value: unknown }[] = [];
      const data = dataOf(e.responseBody);
      if (e.method === 'POST' && e.path.endsWith('/credentials'))
        out.push({ shape: 'Credentials', value: e.requestBody }, { shape: 'Credentials', value: data });
      if (e.method === 'PUT' && e.path.includes('/tokens/')) out.push({ shape: 'Token', value: e.requestBody });
      if (e.method === 'POST' && e.path.endsWith('/START_SESSION')) out.push({ shape: 'StartSession', value: e.requestBody });
      if (e.method === 'POST' && e.path.endsWith('/STOP_SESSION')) out.push({ shape: 'StopSession', value: e.requestBody });
      if (e.method === 'POST' && e.path.includes('/commands/')) out.push({ shape: 'CommandResponse', value: data });
      if (e.method === 'GET' && e.path.endsWith('/locations')) out.push(...list(data).map((value) => ({ shape: 'Location' as const, value })));
      if (e.method === 'GET' && e.path.endsWith('/tariffs')) out.push(...list(data).map((value) => ({ shape: 'Tariff' as const, value })));
      if (e.method === 'GET' && e.path.endsWith('/sessions')) out.push(...list(data).map((value) => ({ shape: 'Session' as const, value })));
      if (e.method === 'GET' && e.path.endsWith('/cdrs')) out.push(...list(data).map((value) => ({ shape: 'CDR' as const, value })));
      if (e.method === 'GET' && e.path.endsWith('/2.1.1')) {
        out.push(...list((data as { endpoints?: unknown })?.endpoints).map((value) => ({ shape: 'Endpoint' as const, value })));
      }
      return out;
    });
    assert.ok(requests.some((e) => e.path.endsWith('/START_SESSION')) && requests.some((e) => e.path.endsWith('/STOP_SESSION')));
  });
});

describe('linking 2.1.1 CDRs to their Sessions (2.1.1 CDRs name none)', () => {
  it('links a pulled page of CDRs with one query for all their candidate Sessions', async () => {
    const party = { country_code: 'BE', party_id: 'LNK' };
    await registerPeer(ctx.ocpi, ctx, { name: 'linking-211', parties: [party] });
    const connection = await ctx.ocpi.connections.findByName('linking-211');
    assert.ok(connection);
    const start = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00Z`;
    const session = (id: string, uid: string, evse: string, minute: number) => ({
      ...party,
      id,
      status: 'COMPLETED',
      last_updated: start(minute),
      start_date_time: start(minute),
      cdr_token: { uid },
      location_id: 'L1',
      evse_uid: evse,
      connector_id: '1',
    });
    for (const s of [session('S-A', 'tok-a', 'E1', 0), session('S-B', 'tok-b', 'E1', 5), session('S-C', 'tok-a', 'E2', 7)]) {
      await upsertSession(ctx.db, connection.id, s as never, ctx.clock.now());
    }
    const cdr = (id: string, uid: string, evse: string, minute: number) => ({
      ...party,
      id,
      start_date_time: start(minute),
      cdr_token: { uid },
      cdr_location: { id: 'L1', evse_uid: evse, connector_id: '1' },
    });
    const page = [
      cdr('C-A', 'tok-a', 'E1', 1),
      cdr('C-B', 'tok-b', 'E1', 5),
      cdr('C-C', 'tok-a', 'E2', 7),
      cdr('C-NONE', 'tok-z', 'E1', 5),
      { ...cdr('C-NAMED', 'tok-a', 'E1', 1), session_id: 'S-GIVEN' },
    ];
    const statements: string[] = [];
    const counting = {
      query: (text: never, values: never) => {
        statements.push(String((text as { text?: string }).text ?? text));
        return ctx.db.query(text, values);
      },
    } as unknown as typeof ctx.db;
    const linked = await linkCdrsToSessions211(counting, connection.id, page);
    assert.deepEqual(
      linked.map((c) => [c.id, (c as { session_id?: string }).session_id]),
      [
        ['C-A', 'S-A'],
        ['C-B', 'S-B'],
        ['C-C', 'S-C'],
        ['C-NONE', undefined],
        ['C-NAMED', 'S-GIVEN'],
      ],
    );
    assert.equal(statements.length, 1, 'one query for the page');
  });

  it('reads at most the newest 50 Sessions of a token at an EVSE, whatever the other keys of the page hold', async () => {
    const party = { country_code: 'BE', party_id: 'LNB' };
    await registerPeer(ctx.ocpi, ctx, { name: 'linking-211-bound', parties: [party] });
    const connection = await ctx.ocpi.connections.findByName('linking-211-bound');
    assert.ok(connection);
    // 60 sessions of one token at one EVSE, ten minutes apart (beyond the start tolerance: a CDR matches one alone),
    // and 3 of another token at the same EVSE.
    const at = (i: number) => new Date(Date.parse('2026-03-01T00:00:00Z') + i * 600_000).toISOString();
    const session = (id: string, uid: string, i: number) => ({
      ...party,
      id,
      status: 'COMPLETED',
      last_updated: at(i),
      start_date_time: at(i),
      cdr_token: { uid },
      location_id: 'L1',
      evse_uid: 'E1',
      connector_id: '1',
    });
    for (let i = 0; i < 60; i++) await upsertSession(ctx.db, connection.id, session(`MANY-${i}`, 'tok-many', i) as never, ctx.clock.now());
    for (let i = 0; i < 3; i++) await upsertSession(ctx.db, connection.id, session(`FEW-${i}`, 'tok-few', i) as never, ctx.clock.now());
    const key = (uid: string) => ({ ...party, token_uid: uid, location_id: 'L1', evse_uid: 'E1' });
    const rows = await sessionsOfTokensAtEvses(ctx.db, connection.id, [key('tok-many'), key('tok-few')]);
    const many = rows.filter((r) => r.token_uid === 'tok-many').map((r) => r.id);
    assert.equal(SESSION_CANDIDATES_PER_KEY, 50);
    assert.equal(many.length, 50, 'the bound per key');
    assert.deepEqual(
      many,
      Array.from({ length: 50 }, (_, n) => `MANY-${59 - n}`),
      'the newest, newest first',
    );
    assert.deepEqual(
      rows
        .filter((r) => r.token_uid === 'tok-few')
        .map((r) => r.id)
        .sort(),
      ['FEW-0', 'FEW-1', 'FEW-2'],
      'another key keeps its own',
    );
    // A CDR is linked among those candidates: the newest session's CDR is, one older than the newest 50 is not.
    const cdr = (id: string, i: number) => ({
      ...party,
      id,
      start_date_time: at(i),
      cdr_token: { uid: 'tok-many' },
      cdr_location: { id: 'L1', evse_uid: 'E1', connector_id: '1' },
    });
    const linked = await linkCdrsToSessions211(ctx.db, connection.id, [cdr('C-NEW', 59), cdr('C-OLD', 0)]);
    assert.deepEqual(
      linked.map((c) => (c as { session_id?: string }).session_id),
      ['MANY-59', undefined],
    );
  });
});
