// A roaming hub in front of two CPO parties, end to end over real HTTP: the
// sandbox network with its hub topology (credentials with one HUB role, the
// parties reported through HubClientInfo) is connected (cpo connect); its
// ClientInfo list is pulled before the catalogue (GET All addressed to the
// hub), and both parties' locations arrive over the one connection; users
// charge at each party's EVSE to one invoice and one capture at our engine's
// price. Recording proxies on both sides hold the routing: commands we send
// through the hub are addressed (OCPI-to) to the final party, a token is one
// Broadcast Push addressed to the hub; what the hub forwards to us names the
// original party (OCPI-from) and our answers go back to it. When the hub
// reports a party OFFLINE (a ClientInfo it pushes), no command is sent to that
// party and the client gets the operator-unreachable problem before anything is held.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { systemClock } from '../src/platform/clock.ts';
import { type CpoSandbox, scenarioEvseId, scenarioLocationId } from '../src/sandbox/cpo/index.ts';
import { chargeToInvoice, FAST_CPO_TIMINGS, newDriver } from './charging-support.ts';
import type { TestContext } from './helpers.ts';
import { code, type Exchange, fromOf, pushedNewUserToken, type RecordingProxy, ROUTING_HEADERS, startProxiedCpo, toOf } from './ocpi-211-support.ts';
import { registerPeer } from './ocpi-support.ts';
import { USERS } from './payments-support.ts';

let ctx: TestContext;
let hub: CpoSandbox;
let hubProxy: RecordingProxy;
let emspProxy: RecordingProxy;
let close: () => Promise<void>;

type Party = { country_code: string; party_id: string };
const answeredTo = (e: Exchange) => `${e.responseHeaders['ocpi-to-country-code']}*${e.responseHeaders['ocpi-to-party-id']}`;
const HUB = { country_code: 'NL', party_id: 'HUB' };

/** The operator's CLI in its own process, on the test database. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [path.join(import.meta.dirname, '..', 'bin/charging-access.js'), ...args], {
      cwd: path.join(import.meta.dirname, '..'),
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: ctx.databaseUrl, LOG_LEVEL: 'silent' },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

before(async () => {
  ({
    ctx,
    emspProxy,
    cpo: hub,
    cpoProxy: hubProxy,
    close,
  } = await startProxiedCpo({
    clock: systemClock,
    locations: 50,
    seed: 4,
    ...FAST_CPO_TIMINGS,
    parties: 2,
    scenarioParties: 2,
    topology: 'hub',
    hubParty: HUB,
  }));
});
after(async () => {
  await close?.();
});

describe('a roaming hub in front of two CPO parties (the sandbox network with topology hub)', () => {
  it('is connected: its credentials name only the hub; its ClientInfo is pulled first, then both parties’ catalogues via the hub', async () => {
    const connection = await ctx.ocpi.connections.connect({ versionsUrl: hub.versionsUrl, token: await hub.issueTokenA(), name: 'hub' });
    assert.deepEqual(
      connection.roles.map((r) => `${r.role}:${code(r)}`),
      [`HUB:${code(HUB)}`],
    );
    assert.ok(connection.endpoints.some((e) => e.identifier === 'hubclientinfo' && e.role === 'SENDER'));
    const counts = await ctx.ocpi.sync.syncConnection(connection, { full: true });
    assert.deepEqual(counts.failed, []);
    assert.equal(counts.hubclientinfo, 2);
    assert.equal(counts.locations, hub.network.locationCount);
    const parties = await ctx.ocpi.connections.parties(connection);
    assert.deepEqual(parties.map((p) => `${p.role}:${code(p)}:${p.source}:${p.hub_status}`).sort(), [
      ...hub.parties.map((p) => `CPO:${code(p)}:hubclientinfo:CONNECTED`),
      `HUB:${code(HUB)}:credentials:null`,
    ]);
    for (const party of hub.parties) {
      const { rows } = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ocpi_locations WHERE country_code = $1 AND party_id = $2', [
        party.country_code,
        party.party_id,
      ]);
      assert.ok((rows[0]?.n ?? 0) >= 1, `${code(party)}’s locations came through the hub`);
    }
    // The ClientInfo list is a configuration module (no routing headers); GET All goes to the hub itself.
    const clientInfo = hubProxy.exchanges.find((e) => e.path.endsWith('/hubclientinfo'));
    assert.ok(clientInfo);
    for (const h of ROUTING_HEADERS) assert.equal(clientInfo.requestHeaders[h], undefined, h);
    const pages = hubProxy.exchanges.filter((e) => e.method === 'GET' && /\/(locations|tariffs|sessions|cdrs)$/.test(e.path));
    assert.ok(pages.length >= 4);
    for (const e of pages) assert.equal(toOf(e), code(HUB), `${e.path}: GET All addressed to the hub`);
    await ctx.catalogue.reload();
    ctx.jobs.start();
    hub.startBackgroundWork();
  });

  it('charges at each party’s EVSE through the hub: commands to the final party, what the hub forwards routed by its original party', async () => {
    for (const party of hub.parties) {
      const { id: sessionId } = await chargeToInvoice(ctx, scenarioEvseId(party, 'NORMAL'));
      const location = scenarioLocationId(party);
      const start = hubProxy.exchanges.find((e) => e.path.endsWith('/START_SESSION') && (e.requestBody as { location_id: string }).location_id === location);
      assert.ok(start);
      assert.equal(toOf(start), code(party), 'START_SESSION through the hub, addressed to the final party');
      const ocpiSession = (await ctx.db.query<{ id: string }>('SELECT id FROM ocpi_sessions WHERE authorization_reference = $1', [sessionId])).rows[0];
      assert.ok(ocpiSession);
      const stop = hubProxy.exchanges.find((e) => e.path.endsWith('/STOP_SESSION') && (e.requestBody as { session_id: string }).session_id === ocpiSession.id);
      assert.ok(stop);
      assert.equal(toOf(stop), code(party), 'STOP_SESSION addressed to the final party');
      // The hub forwarded the party's Session, CDR and command results with the party in OCPI-from; we answered to it.
      const forwarded = emspProxy.exchanges.filter(
        (e) =>
          (e.path.includes(`/sessions/${party.country_code}/${party.party_id}/${ocpiSession.id}`) ||
            (e.path.endsWith('/cdrs') && (e.requestBody as { session_id?: string }).session_id === ocpiSession.id)) &&
          e.method !== 'GET',
      );
      assert.ok(forwarded.length >= 3, `${forwarded.length} Session and CDR messages of ${code(party)}`);
      for (const e of forwarded) {
        assert.equal(fromOf(e), code(party), `${e.method} ${e.path} forwarded with the original party`);
        assert.equal(answeredTo(e), code(party), `our answer to ${e.method} ${e.path} goes back to the original party, not the hub`);
        assert.equal((e.responseBody as { status_code: number }).status_code, 1000);
      }
    }
  });

  it('sends a token as one Broadcast Push addressed to the hub, which relays it to both parties', async () => {
    const uid = await pushedNewUserToken(ctx, (id) => hub.tokenReceivers(id), 2);
    const pushes = hubProxy.exchanges.filter((e) => e.method === 'PUT' && e.path.endsWith(`/${uid}`));
    assert.deepEqual(pushes.map(toOf), [code(HUB)], 'one push, to the hub');
    assert.deepEqual(await hub.tokenReceivers(uid), hub.parties.map(code).sort());
  });

  it('a party the hub reports OFFLINE gets no command; the client is told the operator is unreachable; CONNECTED again, it charges', async () => {
    const [first, second] = hub.parties;
    assert.ok(first && second);
    await hub.setClientStatus(second, 'OFFLINE');
    const pushed = emspProxy.exchanges.find((e) => e.method === 'PUT' && e.path === `/ocpi/2.2.1/hubclientinfo/${second.country_code}/${second.party_id}`);
    assert.ok(pushed, 'the hub pushed the ClientInfo');
    assert.equal(pushed.status, 200);
    assert.equal((pushed.responseBody as { status_code: number }).status_code, 1000);
    for (const h of ROUTING_HEADERS) assert.equal(pushed.responseHeaders[h], undefined, `hubclientinfo is not routed: ${h}`);
    const connection = await ctx.ocpi.connections.findByName('hub');
    assert.ok(connection);
    const status = async (p: Party) => (await ctx.ocpi.connections.parties(connection)).find((x) => code(x) === code(p))?.hub_status;
    assert.equal(await status(second), 'OFFLINE');

    const startsBefore = hubProxy.exchanges.filter((e) => e.path.endsWith('/START_SESSION')).length;
    const d = await newDriver(ctx);
    const refused = await ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, {
      token: d.token,
      body: { payment_method_id: d.pm, evse_id: scenarioEvseId(second, 'NORMAL') },
    });
    assert.equal(refused.status, 424, refused.text);
    assert.ok(String(refused.body.type).endsWith('charging_provider_error'), refused.text);
    assert.match(refused.body.detail, /could not be reached/);
    assert.equal(hubProxy.exchanges.filter((e) => e.path.endsWith('/START_SESSION')).length, startsBefore, 'nothing sent to an OFFLINE party');
    // Refused before anything is held: no session, no pre-authorization.
    assert.match(refused.body.detail, /nothing was held/);
    const sessions = await ctx.db.query('SELECT 1 FROM charging_sessions WHERE user_id = $1', [d.userId]);
    assert.equal(sessions.rowCount, 0, 'no session');
    const holds = await ctx.db.query('SELECT 1 FROM payment_holds WHERE user_id = $1', [d.userId]);
    assert.equal(holds.rowCount, 0, 'no hold');

    await hub.setClientStatus(second, 'CONNECTED');
    assert.equal(await status(second), 'CONNECTED');
    await chargeToInvoice(ctx, scenarioEvseId(second, 'NORMAL'));
    // Our own copy of the ClientInfo, as the hub may GET it back.
    const [peer] = (await hub.listPeers()).filter((p) => p.status === 'REGISTERED');
    assert.ok(peer?.theirToken);
    const res = await fetch(`${emspProxy.url}/ocpi/2.2.1/hubclientinfo/${second.country_code}/${second.party_id}`, {
      headers: { authorization: `Token ${Buffer.from(peer.theirToken).toString('base64')}` },
    });
    const body = (await res.json()) as { status_code: number; data: { status: string; role: string } };
    assert.equal(body.status_code, 1000);
    assert.deepEqual([body.data.role, body.data.status], ['CPO', 'CONNECTED']);
  });

  it('`cpo list` and `cpo show` say it is a hub, and each party’s ClientInfo status', async () => {
    const [first, second] = hub.parties;
    assert.ok(first && second);
    await hub.setClientStatus(second, 'SUSPENDED');
    const shown = await cli('cpo', 'show', 'hub', '--json');
    assert.equal(shown.code, 0, shown.stderr);
    const view = JSON.parse(shown.stdout);
    assert.deepEqual([view.topology, view.version, view.token_push, view.country_code, view.party_id], ['hub', '2.2.1', 'broadcast', 'NL', 'HUB']);
    assert.deepEqual(
      view.parties.filter((p: { role: string }) => p.role === 'CPO').map((p: Party & { hub_status: string }) => `${code(p)}:${p.hub_status}`),
      [`${code(first)}:CONNECTED`, `${code(second)}:SUSPENDED`].sort(),
    );
    const text = await cli('cpo', 'show', 'hub');
    assert.match(text.stdout, new RegExp(`${code(second).replace('*', '\\*')}  CPO  behind the hub: SUSPENDED`));
    const listed = await cli('cpo', 'list');
    assert.match(listed.stdout, /^hub {2}connected {2}NL\*HUB {2}OCPI 2\.2\.1 .* hub, 2 CPO parties behind it \(1 connected\) .*token pushes: broadcast$/m);
    await hub.setClientStatus(second, 'CONNECTED');
    assert.equal((await cli('cpo', 'show', 'nope')).code, 1);
  });

  it('serves its ClientInfo list page by page, filtered on last_updated (the sandbox hub’s Sender interface)', async () => {
    const [peer] = (await hub.listPeers()).filter((p) => p.status === 'REGISTERED');
    assert.ok(peer?.ourToken);
    const get = async (query: string) => {
      const res = await fetch(`${hub.versionsUrl.replace(/\/versions$/, '/2.2.1/hubclientinfo')}?${query}`, {
        headers: { authorization: `Token ${Buffer.from(peer.ourToken as string).toString('base64')}` },
      });
      const body = (await res.json()) as { status_code: number; data: Party[] };
      assert.equal(body.status_code, 1000, query);
      return { parties: body.data.map(code), total: res.headers.get('x-total-count'), link: res.headers.get('link') };
    };
    const all = hub.parties.map(code).sort();
    const first = await get('limit=1');
    assert.deepEqual([first.parties.length, first.total], [1, '2']);
    assert.match(String(first.link), /offset=1&limit=1>; rel="next"$/);
    const second = await get('offset=1&limit=1');
    assert.deepEqual([...first.parties, ...second.parties].sort(), all);
    assert.equal(second.link, null, 'the last page');
    assert.deepEqual(await get(`date_from=${new Date(Date.now() + 3_600_000).toISOString()}`), { parties: [], total: '0', link: null });
    assert.deepEqual((await get('date_from=2000-01-01T00:00:00Z&date_to=2999-01-01T00:00:00Z')).parties.sort(), all);
  });

  it('refuses what a hub forwards for a party not behind it, or for another party than OCPI-from names; ClientInfo only from a hub', async () => {
    const [first, second] = hub.parties;
    assert.ok(first && second);
    const [peer] = (await hub.listPeers()).filter((p) => p.status === 'REGISTERED');
    assert.ok(peer?.theirToken);
    const call = async (method: string, path: string, from: Party, body?: unknown, token = peer.theirToken as string) => {
      const res = await fetch(`${emspProxy.url}/ocpi/2.2.1/${path}`, {
        method,
        headers: {
          authorization: `Token ${Buffer.from(token).toString('base64')}`,
          'content-type': 'application/json',
          'ocpi-from-country-code': from.country_code,
          'ocpi-from-party-id': from.party_id,
          'ocpi-to-country-code': ctx.config.ocpi.countryCode,
          'ocpi-to-party-id': ctx.config.ocpi.partyId,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as { status_code: number; status_message?: string } };
    };
    const patch = { status: 'AVAILABLE', last_updated: new Date().toISOString() };
    const evse = (p: (typeof hub.parties)[number]) => `locations/${p.country_code}/${p.party_id}/${scenarioLocationId(p)}/${scenarioLocationId(p)}-NORMAL`;
    // Forwarded for its own party: taken.
    assert.equal((await call('PATCH', evse(first), first, patch)).body.status_code, 1000);
    // OCPI-from names a party the hub does not report.
    const stranger = await call('PATCH', evse(first), { country_code: 'FR', party_id: 'ZZZ' }, patch);
    assert.deepEqual([stranger.status, stranger.body.status_code], [200, 2001]);
    assert.match(stranger.body.status_message ?? '', /does not hold/);
    // OCPI-from names one party, the object is another's.
    const crossed = await call('PATCH', evse(second), first, patch);
    assert.deepEqual([crossed.status, crossed.body.status_code], [200, 2001]);
    assert.match(crossed.body.status_message ?? '', /forwards this for/);
    // A connection that is not a hub pushes no ClientInfo.
    const platformToken = await registerPeer(ctx.ocpi, ctx, { name: 'not-a-hub', parties: [{ country_code: 'BE', party_id: 'NAH' }] });
    const info = { country_code: 'BE', party_id: 'XXX', role: 'CPO', status: 'CONNECTED', last_updated: new Date().toISOString() };
    const res = await fetch(`${ctx.config.publicBaseUrl}/ocpi/2.2.1/hubclientinfo/BE/XXX`, {
      method: 'PUT',
      headers: { authorization: `Token ${Buffer.from(platformToken).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify(info),
    });
    const refused = (await res.json()) as { status_code: number; status_message: string };
    assert.deepEqual([res.status, refused.status_code], [200, 2001]);
    assert.match(refused.status_message, /not a hub/);
  });
});

/** A hub that only serves its ClientInfo list (GET .../hubclientinfo, one page): whatever `listed()` holds at the time. */
async function fakeHub(listed: () => unknown[]) {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || !req.url?.startsWith('/hubclientinfo')) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: listed(), status_code: 1000, timestamp: new Date().toISOString() }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a hub’s ClientInfo that is old, invalid, no longer listed, or of a party reached directly (a fake hub)', () => {
  const HOUR = 3_600_000;
  const info = (p: Party, status: string, at: number) => ({ ...p, role: 'CPO', status, last_updated: new Date(at).toISOString() });
  const partiesOf = async (name: string) => {
    const connection = await ctx.ocpi.connections.findByName(name);
    assert.ok(connection, name);
    return (await ctx.ocpi.connections.parties(connection)).map((p) => `${p.role}:${code(p)}:${p.source}:${p.hub_status}`).sort();
  };
  /** A ClientInfo the hub of `token` pushes (PUT), as on the wire. */
  const push = async (token: string, body: ReturnType<typeof info>) => {
    const res = await fetch(`${ctx.config.publicBaseUrl}/ocpi/2.2.1/hubclientinfo/${body.country_code}/${body.party_id}`, {
      method: 'PUT',
      headers: { authorization: `Token ${Buffer.from(token).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, code: ((await res.json()) as { status_code: number }).status_code };
  };

  it('pulls its list: an invalid item skipped alone, a party held directly left to its connection, an older ClientInfo changes nothing, a party no longer listed dropped', async () => {
    const [A, B, C, DIRECT] = [
      { country_code: 'DE', party_id: 'FHA' },
      { country_code: 'DE', party_id: 'FHB' },
      { country_code: 'DE', party_id: 'FHC' },
      { country_code: 'BE', party_id: 'DIR' },
    ] as const;
    let listed: unknown[] = [];
    const fake = await fakeHub(() => listed);
    try {
      await registerPeer(ctx.ocpi, ctx, {
        name: 'fake-hub',
        hub: { country_code: 'DE', party_id: 'FHU' },
        endpoints: [{ identifier: 'hubclientinfo', role: 'SENDER', url: `${fake.url}/hubclientinfo` }],
      });
      await registerPeer(ctx.ocpi, ctx, { name: 'direct', parties: [DIRECT] });
      const connection = await ctx.ocpi.connections.findByName('fake-hub');
      assert.ok(connection);
      const now = Date.now();
      listed = [info(A, 'CONNECTED', now), info(B, 'CONNECTED', now), info(DIRECT, 'CONNECTED', now), info(C, 'ASLEEP', now)];
      const first = await ctx.ocpi.sync.syncConnection(connection);
      assert.deepEqual(first.failed, []);
      assert.equal(first.skipped, 1, 'the invalid ClientInfo (status ASLEEP), alone');
      assert.equal(first.hubclientinfo, 3);
      assert.deepEqual(await partiesOf('fake-hub'), [
        `CPO:${code(A)}:hubclientinfo:CONNECTED`,
        `CPO:${code(B)}:hubclientinfo:CONNECTED`,
        'HUB:DE*FHU:credentials:null',
      ]);
      assert.deepEqual(await partiesOf('direct'), [`CPO:${code(DIRECT)}:credentials:null`], 'the direct route stays');

      // The next list: A's ClientInfo an hour older than the one held (OFFLINE), B no longer listed.
      listed = [info(A, 'OFFLINE', now - HOUR), info(DIRECT, 'OFFLINE', now + 1000)];
      const second = await ctx.ocpi.sync.syncConnection(connection);
      assert.deepEqual([second.failed, second.skipped, second.hubclientinfo], [[], 0, 2]);
      assert.deepEqual(await partiesOf('fake-hub'), [`CPO:${code(A)}:hubclientinfo:CONNECTED`, 'HUB:DE*FHU:credentials:null']);
      assert.deepEqual(await partiesOf('direct'), [`CPO:${code(DIRECT)}:credentials:null`]);
    } finally {
      await fake.close();
    }
  });

  it('a pushed ClientInfo older than the one held, or from another hub, changes nothing; a party the hub reported is taken over by its own registration', async () => {
    const token = await registerPeer(ctx.ocpi, ctx, { name: 'pushing-hub', hub: { country_code: 'DE', party_id: 'PHU' } });
    const party = { country_code: 'DE', party_id: 'PHA' };
    const now = Date.now();
    assert.deepEqual(await push(token, info(party, 'CONNECTED', now)), { status: 201, code: 1000 });
    assert.deepEqual(await push(token, info(party, 'OFFLINE', now - HOUR)), { status: 200, code: 1000 }, 'taken, not applied');
    assert.deepEqual(await partiesOf('pushing-hub'), [`CPO:${code(party)}:hubclientinfo:CONNECTED`, 'HUB:DE*PHU:credentials:null']);
    assert.deepEqual(await push(token, info(party, 'OFFLINE', now + 1000)), { status: 200, code: 1000 });
    assert.deepEqual(await partiesOf('pushing-hub'), [`CPO:${code(party)}:hubclientinfo:OFFLINE`, 'HUB:DE*PHU:credentials:null']);
    // Another hub that reports the party leaves it to the first: the route stays.
    const other = await registerPeer(ctx.ocpi, ctx, { name: 'other-hub', hub: { country_code: 'DE', party_id: 'OHU' } });
    assert.deepEqual(await push(other, info(party, 'CONNECTED', now + 1500)), { status: 200, code: 1000 });
    assert.deepEqual(await partiesOf('other-hub'), ['HUB:DE*OHU:credentials:null']);
    assert.deepEqual(await partiesOf('pushing-hub'), [`CPO:${code(party)}:hubclientinfo:OFFLINE`, 'HUB:DE*PHU:credentials:null']);

    // The party registers with us itself: a direct connection is preferred to the route through the hub.
    await registerPeer(ctx.ocpi, ctx, { name: 'party-itself', parties: [party] });
    assert.deepEqual(await partiesOf('party-itself'), [`CPO:${code(party)}:credentials:null`]);
    assert.deepEqual(await partiesOf('pushing-hub'), ['HUB:DE*PHU:credentials:null']);
    // What the hub says of it afterwards leaves the direct route alone.
    assert.deepEqual(await push(token, info(party, 'CONNECTED', now + 2000)), { status: 200, code: 1000 });
    assert.deepEqual(await partiesOf('party-itself'), [`CPO:${code(party)}:credentials:null`]);
    assert.deepEqual(await partiesOf('pushing-hub'), ['HUB:DE*PHU:credentials:null']);
  });
});
