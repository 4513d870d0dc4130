// A CPO platform hosting several parties, end to end over real HTTP: the
// sandbox network hosting three parties (each with its own locations and a
// scenario location) is connected once (cpo connect); its credentials list the
// three as CPO roles; every party's catalogue arrives over the one connection;
// users charge at two different parties' EVSEs, each to one invoice and one
// capture at our engine's price. A recording proxy in front of the platform
// holds what we sent: START_SESSION and STOP_SESSION addressed (OCPI-to) to the
// party that owns the EVSE or the session (the platform refuses any other), a
// user's token pushed to each of the three parties, each push addressed to it.
// When the platform stops speaking for a party (new credentials without it),
// nothing is sent for that party any more, and what it sends is refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../src/platform/clock.ts';
import { type CpoSandbox, createCpoSandbox, scenarioEvseId, scenarioLocationId } from '../src/sandbox/cpo/index.ts';
import { chargeToInvoice, FAST_CPO_TIMINGS, newDriver } from './charging-support.ts';
import { freePort, setupTestApp, type TestContext } from './helpers.ts';
import { code, dataOf, fromOf, pushedNewUserToken, type RecordingProxy, startRecordingProxy, toOf } from './ocpi-211-support.ts';
import { eventually, USERS } from './payments-support.ts';

let ctx: TestContext;
let platform: CpoSandbox;
let proxy: RecordingProxy;

type Party = { country_code: string; party_id: string };

before(async () => {
  ctx = await setupTestApp({ listen: 0, payments: { webhooks: true }, env: { OCPI_REQUEST_TIMEOUT_MS: '1500', OCPI_PAGE_LIMIT: '10' } });
  const port = await freePort();
  proxy = await startRecordingProxy(() => `http://127.0.0.1:${port}`);
  platform = await createCpoSandbox({
    db: ctx.db,
    clock: systemClock,
    locations: 60,
    seed: 3,
    ...FAST_CPO_TIMINGS,
    parties: 3,
    scenarioParties: 3,
    publicUrl: proxy.url,
  });
  await platform.listen({ port });
});
after(async () => {
  await platform?.close();
  await ctx?.close();
  await proxy?.close();
});

describe('a CPO platform hosting three parties (the sandbox network with parties: 3)', () => {
  it('is connected once; its credentials list the three parties as CPO roles, each with its own locations pulled', async () => {
    assert.equal(platform.parties.length, 3);
    const connection = await ctx.ocpi.connections.connect({ versionsUrl: platform.versionsUrl, token: await platform.issueTokenA(), name: 'platform' });
    assert.equal(connection.token_push, 'each-party');
    assert.deepEqual(connection.roles.map((r) => `${r.role}:${code(r)}`).sort(), platform.parties.map((p) => `CPO:${code(p)}`).sort());
    const parties = await ctx.ocpi.connections.parties(connection);
    assert.deepEqual(parties.map((p) => `${p.role}:${code(p)}:${p.source}`).sort(), platform.parties.map((p) => `CPO:${code(p)}:credentials`).sort());
    const counts = await ctx.ocpi.sync.syncConnection(connection, { full: true });
    assert.deepEqual(counts.failed, []);
    assert.equal(counts.locations, platform.network.locationCount);
    for (const party of platform.parties) {
      const { rows } = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ocpi_locations WHERE country_code = $1 AND party_id = $2', [
        party.country_code,
        party.party_id,
      ]);
      assert.ok((rows[0]?.n ?? 0) >= 1, `${code(party)}’s locations arrived over the platform’s connection`);
    }
    await ctx.catalogue.reload();
    ctx.jobs.start();
    platform.startBackgroundWork();
  });

  it('charges at two parties’ EVSEs: each command addressed to the party that owns the EVSE or session, each invoiced once', async () => {
    const [, second, third] = platform.parties;
    assert.ok(second && third);
    for (const party of [second, third]) {
      const { id: sessionId } = await chargeToInvoice(ctx, scenarioEvseId(party, 'NORMAL'));
      const location = scenarioLocationId(party);
      const start = proxy.exchanges.find((e) => e.path.endsWith('/START_SESSION') && (e.requestBody as { location_id: string }).location_id === location);
      assert.ok(start, `START_SESSION at ${location}`);
      assert.equal(toOf(start), code(party), 'START_SESSION addressed to the EVSE’s party');
      assert.equal((dataOf(start.responseBody) as { result: string }).result, 'ACCEPTED');
      const ocpiSession = await ctx.db.query<{ id: string; country_code: string; party_id: string }>(
        'SELECT id, country_code, party_id FROM ocpi_sessions WHERE authorization_reference = $1',
        [sessionId],
      );
      assert.equal(code(ocpiSession.rows[0] as Party), code(party), 'the session is the party’s');
      const stop = proxy.exchanges.find(
        (e) => e.path.endsWith('/STOP_SESSION') && (e.requestBody as { session_id: string }).session_id === ocpiSession.rows[0]?.id,
      );
      assert.ok(stop, 'STOP_SESSION');
      assert.equal(toOf(stop), code(party), 'STOP_SESSION addressed to the session’s party');
      assert.equal((dataOf(stop.responseBody) as { result: string }).result, 'ACCEPTED');
    }
    // Every functional request we sent named one of the platform's parties, and each was taken.
    for (const e of proxy.exchanges.filter((x) => /\/(commands|tokens|locations|tariffs|sessions|cdrs)/.test(x.path))) {
      assert.ok(
        platform.parties.some((p) => code(p) === toOf(e)),
        `${e.method} ${e.path} to ${toOf(e)}`,
      );
      assert.equal(fromOf(e), `${ctx.config.ocpi.countryCode}*${ctx.config.ocpi.partyId}`);
      assert.ok(e.status === 200 || e.status === 201, `${e.method} ${e.path}: ${e.status}`);
      assert.equal((e.responseBody as { status_code: number }).status_code, 1000, `${e.method} ${e.path}`);
    }
  });

  it('pushes a user’s token to each of its parties, each push addressed to that party', async () => {
    const uid = await pushedNewUserToken(ctx, (id) => platform.tokenReceivers(id), 3);
    const pushes = proxy.exchanges.filter((e) => e.method === 'PUT' && e.path.endsWith(`/${uid}`));
    assert.deepEqual(pushes.map(toOf).sort(), platform.parties.map(code).sort(), 'one push per party, each addressed to it');
    assert.deepEqual(await platform.tokenReceivers(uid), platform.parties.map(code).sort());
  });

  it('a party the platform no longer speaks for gets nothing, and what is sent for it is refused', async () => {
    const [first, second, gone] = platform.parties;
    assert.ok(first && second && gone);
    const [peer] = (await platform.listPeers()).filter((p) => p.status === 'REGISTERED');
    assert.ok(peer?.theirToken && peer.ourToken);
    // The platform sends new credentials without its third party (PUT credentials).
    const roles = (await ctx.ocpi.connections.findByName('platform'))?.roles.filter((r) => code(r) !== code(gone));
    const put = await fetch(`${ctx.config.publicBaseUrl}/ocpi/2.2.1/credentials`, {
      method: 'PUT',
      headers: { authorization: `Token ${Buffer.from(peer.theirToken).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ token: peer.ourToken, url: platform.versionsUrl, roles }),
    });
    const answer = (await put.json()) as { status_code: number; data: { token: string } };
    assert.equal(answer.status_code, 1000, JSON.stringify(answer));
    const connection = await ctx.ocpi.connections.findByName('platform');
    assert.ok(connection);
    assert.deepEqual((await ctx.ocpi.connections.parties(connection)).map(code).sort(), [code(first), code(second)].sort());

    // A token push goes to the two parties left, none to the third.
    const client = await ctx.newClient();
    const user = await ctx.call('POST', `${USERS}/`, { token: client.token, body: {} });
    const uid = user.body.id as string;
    await eventually(
      async () => {
        await ctx.ocpi.deliverPushes();
        const { rows } = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ocpi_outbox WHERE dedupe_key = $1`, [`token:${uid}`]);
        return rows[0]?.n === 0 ? true : undefined;
      },
      'the push delivered',
      10_000,
    );
    const pushes = proxy.exchanges.filter((e) => e.method === 'PUT' && e.path.endsWith(`/${uid}`));
    assert.deepEqual(pushes.map(toOf).sort(), [code(first), code(second)].sort());
    assert.deepEqual(await platform.tokenReceivers(uid), [code(first), code(second)].sort());

    // A start at the third party's EVSE reaches no CPO: no START_SESSION for it; the client is told the operator is unreachable.
    const before = proxy.exchanges.filter((e) => e.path.endsWith('/START_SESSION')).length;
    const d = await newDriver(ctx);
    const started = await ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, {
      token: d.token,
      body: { payment_method_id: d.pm, evse_id: scenarioEvseId(gone, 'NORMAL') },
    });
    assert.equal(started.status, 424, started.text);
    assert.equal(started.body.type.endsWith('charging_provider_error'), true, started.text);
    assert.equal(proxy.exchanges.filter((e) => e.path.endsWith('/START_SESSION')).length, before, 'nothing sent for the party');

    // What the platform sends for it now is refused (2001 in HTTP 200: the request reached the OCPI layer).
    const newToken = answer.data.token;
    const location = scenarioLocationId(gone);
    const res = await fetch(`${ctx.config.publicBaseUrl}/ocpi/2.2.1/locations/${gone.country_code}/${gone.party_id}/${location}`, {
      method: 'GET',
      headers: { authorization: `Token ${Buffer.from(newToken).toString('base64')}` },
    });
    assert.equal(res.status, 404, 'its objects are no longer this connection’s to read');
    const patch = await fetch(`${ctx.config.publicBaseUrl}/ocpi/2.2.1/locations/${gone.country_code}/${gone.party_id}/${location}`, {
      method: 'PATCH',
      headers: {
        authorization: `Token ${Buffer.from(newToken).toString('base64')}`,
        'content-type': 'application/json',
        'ocpi-from-country-code': first.country_code,
        'ocpi-from-party-id': first.party_id,
      },
      body: JSON.stringify({ last_updated: new Date().toISOString(), publish: false }),
    });
    const refused = (await patch.json()) as { status_code: number; status_message: string };
    assert.equal(patch.status, 200);
    assert.equal(refused.status_code, 2001);
    assert.match(refused.status_message, /not a party of this connection/);
    // Nor may it speak as that party (OCPI-from).
    const as = await fetch(`${ctx.config.publicBaseUrl}/ocpi/2.2.1/tokens`, {
      headers: {
        authorization: `Token ${Buffer.from(newToken).toString('base64')}`,
        'ocpi-from-country-code': gone.country_code,
        'ocpi-from-party-id': gone.party_id,
      },
    });
    assert.equal(((await as.json()) as { status_code: number }).status_code, 2001);
  });
});
