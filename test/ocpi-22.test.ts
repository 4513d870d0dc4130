// An OCPI 2.2 CPO that sends and expects its credentials token unencoded, end
// to end over real HTTP: the sandbox network with its 2.2 personality (it
// compares tokens as they are: a Base64-encoded one is unknown to it) registers
// with our TOKEN_A, and we register with another (cpo connect); each handshake
// settles on 2.2, the highest version both speak, and finds the token form the
// peer takes; its catalogue is pulled, a user's session is started, its Session
// updates and CDR arrive in 2.2's shape (a CdrToken without country_code and
// party_id), and the user is charged and invoiced once, for what our tariff
// engine prices. A recording proxy on each side holds what crossed the wire:
// unencoded tokens both ways, routing headers on functional modules, nothing
// 2.2.1-only sent to the 2.2 peer (no connector_id in START_SESSION: the strict
// 2.2 network refuses it; no party in the cdr_token of our answers).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exchangeProblems } from '../scripts/ocpi-exchange-rules.ts';
import { commonVersion } from '../src/modules/ocpi/peer-versions.ts';
import { cdrTokenFrom22, startSessionTo22, withCdrTokenTo22 } from '../src/ocpi-protocol/v2_2/adapter.ts';
import { systemClock } from '../src/platform/clock.ts';
import type { CpoSandbox } from '../src/sandbox/cpo/index.ts';
import { chargeToInvoice, FAST_CPO_TIMINGS, scenarioEvse } from './charging-support.ts';
import type { TestContext } from './helpers.ts';
import { dataOf, type Exchange, type RecordingProxy, ROUTING_HEADERS, startProxiedCpo, startRegisteringCpo } from './ocpi-211-support.ts';
import { eventually, USERS } from './payments-support.ts';

let ctx: TestContext;
let emspProxy: RecordingProxy;
/** The 2.2 CPO we connect to (cpo connect), behind cpoProxy. */
let cpo: CpoSandbox;
let cpoProxy: RecordingProxy;
let close: () => Promise<void>;
/** The 2.2 CPO that registers with us, on a database of its own. */
let registering: CpoSandbox;
let closeRegistering: () => Promise<void>;

before(async () => {
  const common = { clock: systemClock, locations: 40, ...FAST_CPO_TIMINGS, ocpiVersion: '2.2' as const, pageLimits: { locations: 7, tariffs: 7 } };
  ({ ctx, emspProxy, cpo, cpoProxy, close } = await startProxiedCpo({ seed: 11, ...common }));
  ({ cpo: registering, close: closeRegistering } = await startRegisteringCpo({ seed: 5, ...common }));
});
after(async () => {
  await closeRegistering?.();
  await close?.();
});

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const isConfiguration = (path: string) => /\/(versions|2\.2|2\.2\/credentials|2\.2\.1|2\.2\.1\/credentials)$/.test(path);

describe('OCPI 2.2 and 2.2.1: what differs, mapped in one place (src/ocpi-protocol/v2_2/adapter.ts)', () => {
  it('settles on the highest version both speak', () => {
    assert.equal(commonVersion(['2.1.1', '2.2']), '2.2');
    assert.equal(commonVersion(['2.2', '2.2.1']), '2.2.1');
    assert.equal(commonVersion(['2.0', '2.1.1']), '2.1.1');
    assert.equal(commonVersion(['2.0', '2.1']), undefined);
  });

  it('the CI check holds a 2.2 exchange to 2.2.1’s routing-header and status-code rules, and refuses 4000 (2.2.1 added it)', () => {
    const routing = { 'OCPI-from-country-code': 'DE', 'OCPI-from-party-id': 'CAX', 'OCPI-to-country-code': 'NL', 'OCPI-to-party-id': 'ABC' };
    const answer = { direction: 'answer' as const, sender: 'emsp', method: 'PUT', path: '/ocpi/2.2/sessions/:cc/:pid/:id', module: 'sessions', version: '2.2' };
    const fine = { ...answer, status: 200, ocpi_status: 1000, routing, authenticated: true, reached_ocpi_layer: true };
    assert.deepEqual(exchangeProblems(fine), []);
    assert.match(exchangeProblems({ ...fine, routing: {} }).join(), /routing headers missing/);
    assert.match(exchangeProblems({ ...fine, status: 400, ocpi_status: 2001 }).join(), /reached the OCPI layer/);
    assert.match(exchangeProblems({ ...fine, ocpi_status: 4000 }).join(), /4000/);
    assert.deepEqual(exchangeProblems({ ...fine, version: '2.2.1', ocpi_status: 4000 }), [], '4000 is a 2.2.1 code');
  });

  it('a 2.2 CdrToken gets our party; our answers and commands to a 2.2 peer carry nothing 2.2.1 added', () => {
    const us = { country_code: 'DE', party_id: 'CAX' };
    assert.deepEqual(cdrTokenFrom22({ uid: 'u', type: 'APP_USER', contract_id: 'c' }, us), { ...us, uid: 'u', type: 'APP_USER', contract_id: 'c' });
    // A 2.2 peer that already names the party keeps its own.
    assert.equal((cdrTokenFrom22({ country_code: 'NL', party_id: 'ABC', uid: 'u' }, us) as { party_id: string }).party_id, 'ABC');
    assert.deepEqual(withCdrTokenTo22({ id: 's', cdr_token: { ...us, uid: 'u' } }), { id: 's', cdr_token: { uid: 'u' } });
    assert.deepEqual(startSessionTo22({ response_url: 'r', location_id: 'L', evse_uid: 'E', connector_id: '1' }), {
      response_url: 'r',
      location_id: 'L',
      evse_uid: 'E',
    });
  });
});

describe('an OCPI 2.2 CPO with raw tokens (the sandbox network with its 2.2 personality)', () => {
  it('registers with our TOKEN_A sent unencoded: the handshake settles on 2.2, we answer it in kind, and pull its catalogue', async () => {
    assert.equal(registering.version, '2.2');
    const invited = await ctx.ocpi.connections.invite({ name: 'registering-22' });
    const registration = await registering.registerWith({ versionsUrl: invited.versions_url, token: invited.token });
    assert.equal(registration.version, '2.2');
    const connection = await ctx.ocpi.connections.findByName('registering-22');
    assert.equal(connection?.status, 'connected');
    assert.equal(connection?.version, '2.2');
    assert.equal(connection?.incoming_token_form, 'raw', 'it presents its token unencoded, and we recorded it');
    assert.equal(connection?.raw_tokens, true, 'so we send ours unencoded (it takes nothing else)');
    // Its calls came to our 2.2 endpoints; our 2.2 details list the same endpoints as 2.2.1, under /ocpi/2.2.
    const details = emspProxy.exchanges.find((e) => e.path === '/ocpi/2.2' && e.method === 'GET');
    const endpoints = list((dataOf(details?.responseBody) as { endpoints?: unknown } | undefined)?.endpoints) as { identifier: string; url: string }[];
    assert.ok(endpoints.length >= 8);
    assert.ok(endpoints.every((e) => e.url.includes('/ocpi/2.2/')));
    const post = emspProxy.exchanges.find((e) => e.path === '/ocpi/2.2/credentials' && e.method === 'POST');
    assert.equal(post?.status, 200);
    assert.equal(post?.requestHeaders.authorization, `Token ${invited.token}`, 'its TOKEN_A came unencoded');
    // The first pull after a registration (a durable job): its catalogue, through our 2.2 connection.
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
    assert.ok(stored > 0);
  });

  it('is connected by `cpo connect`: the Base64 token is refused (401), the unencoded one taken; 2.2 chosen; catalogue pulled', async () => {
    const tokenA = await cpo.issueTokenA();
    const connection = await ctx.ocpi.connections.connect({ versionsUrl: cpo.versionsUrl, token: tokenA, name: 'v22' });
    assert.equal(connection.version, '2.2');
    assert.equal(connection.raw_tokens, true);
    const versionCalls = cpoProxy.exchanges.filter((e) => e.path.endsWith('/versions'));
    assert.equal(versionCalls[0]?.status, 401, 'the Base64-encoded TOKEN_A is unknown to a raw-token CPO');
    assert.equal(versionCalls[0]?.requestHeaders.authorization, `Token ${Buffer.from(tokenA).toString('base64')}`);
    assert.equal(versionCalls[1]?.status, 200);
    assert.equal(versionCalls[1]?.requestHeaders.authorization, `Token ${tokenA}`);
    const counts = await ctx.ocpi.sync.syncConnection(connection, { full: true });
    assert.deepEqual(counts.failed, []);
    assert.equal(counts.skipped, 0);
    assert.equal(counts.locations, cpo.network.locationCount);
    assert.equal(counts.tariffs, cpo.network.tariffs.length);
    await ctx.catalogue.reload();
    assert.ok(ctx.catalogue.evse(scenarioEvse(cpo, 'NORMAL')), 'the scenario EVSE is in the catalogue');
    cpo.startBackgroundWork();
  });

  it('charges a user from a 2.2 START_SESSION to an invoice, once, at our tariff engine’s price', async () => {
    const { driver: d, id } = await chargeToInvoice(ctx, scenarioEvse(cpo, 'NORMAL'));

    // What the 2.2 CPO sent: Session PUT/PATCHes and the CDR with a CdrToken in 2.2's shape (no party), to our 2.2
    // endpoints, with its token unencoded and the routing headers; all taken (1000) and answered with routing headers.
    const fromCpo = emspProxy.exchanges.filter((e) => e.path.startsWith('/ocpi/2.2/') && !isConfiguration(e.path));
    const sessionPuts = fromCpo.filter((e) => e.method === 'PUT' && e.path.startsWith('/ocpi/2.2/sessions/'));
    const cdrs = fromCpo.filter((e) => e.method === 'POST' && e.path === '/ocpi/2.2/cdrs');
    assert.ok(sessionPuts.length >= 1 && cdrs.length >= 1, 'Sessions and the CDR came to our 2.2 endpoints');
    for (const e of [...sessionPuts, ...cdrs]) {
      const token = (e.requestBody as { cdr_token: Record<string, unknown> }).cdr_token;
      assert.equal(token.country_code, undefined, `${e.method} ${e.path}: a 2.2 CdrToken has no country_code`);
      assert.equal(token.uid, d.userId);
    }
    const [peer] = (await cpo.listPeers()).filter((p) => p.status === 'REGISTERED');
    assert.ok(peer?.theirToken && peer.ourToken);
    for (const e of fromCpo) {
      assert.ok(e.status === 200 || e.status === 201, `${e.method} ${e.path} answered ${e.status}`);
      assert.equal((e.responseBody as { status_code?: number }).status_code, 1000, `${e.method} ${e.path}`);
      assert.equal(e.requestHeaders.authorization, `Token ${peer.theirToken}`, `${e.method} ${e.path}: its token, unencoded`);
      for (const h of ROUTING_HEADERS) {
        assert.ok(e.requestHeaders[h], `${e.method} ${e.path} carries ${h}`);
        assert.ok(e.responseHeaders[h], `our answer to ${e.method} ${e.path} carries ${h}`);
      }
    }
    // We stored the Session with our party filled in, and read it back to the CPO in 2.2's shape.
    const stored = await ctx.db.query<{ data: { cdr_token: Record<string, unknown> } }>('SELECT data FROM ocpi_sessions WHERE authorization_reference = $1', [
      id,
    ]);
    assert.equal(stored.rows[0]?.data.cdr_token.country_code, ctx.config.ocpi.countryCode);
    const put = sessionPuts[0] as Exchange;
    const res = await fetch(`${emspProxy.url}${put.path}`, { headers: { authorization: `Token ${peer.theirToken}`, ...put.requestHeaders } as never });
    const readBack = (await res.json()) as { status_code: number; data: { cdr_token: Record<string, unknown> } };
    assert.equal(readBack.status_code, 1000);
    assert.equal(readBack.data.cdr_token.country_code, undefined, 'our answer to a 2.2 peer carries a 2.2 CdrToken');
    assert.equal(readBack.data.cdr_token.uid, d.userId);
  });

  it('sends the 2.2 CPO its token unencoded, the routing headers, and a START_SESSION without connector_id', async () => {
    // A new user's token is pushed to the CPO (the outbox), addressed to a party of the platform.
    const client = await ctx.newClient();
    const user = await ctx.call('POST', `${USERS}/`, { token: client.token, body: { email: 'v22@example.com' } });
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
    const [peer] = (await cpo.listPeers()).filter((p) => p.status === 'REGISTERED');
    assert.ok(peer?.ourToken);
    const functional = cpoProxy.exchanges.filter((e) => !isConfiguration(e.path));
    assert.ok(functional.length > 10);
    for (const e of functional) {
      assert.equal(e.requestHeaders.authorization, `Token ${peer.ourToken}`, `${e.method} ${e.path}: our token unencoded`);
      assert.ok(e.status === 200 || e.status === 201, `${e.method} ${e.path} answered ${e.status}`);
      for (const h of ROUTING_HEADERS) assert.ok(e.requestHeaders[h], `${e.method} ${e.path} carries ${h}`);
    }
    // `cpo list` says how the token travels each way.
    const listed = (await ctx.ocpi.connections.list()).find((c) => c.name === 'v22');
    assert.deepEqual([listed?.version, listed?.raw_tokens, listed?.incoming_token_form], ['2.2', true, 'raw']);
    const starts = functional.filter((e) => e.path.endsWith('/START_SESSION'));
    assert.ok(starts.length >= 1);
    for (const e of starts) {
      assert.equal((e.requestBody as { connector_id?: unknown }).connector_id, undefined, 'no connector_id: 2.2.1 added it');
      assert.match((e.requestBody as { response_url: string }).response_url, /\/ocpi\/2\.2\/commands\//);
      assert.equal((dataOf(e.responseBody) as { result: string }).result, 'ACCEPTED');
    }
  });
});
