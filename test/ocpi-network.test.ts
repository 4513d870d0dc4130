// The service and the sandbox CPO network over real HTTP: we register with
// the network (cpo connect), pull its catalogue across many pages, receive its
// status pushes, push our users' tokens, and run commands on every scenario
// EVSE, including a full start-to-CDR session.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { tokenOf } from '../src/modules/ocpi/tokens.ts';
import { findUserForToken } from '../src/modules/users/repository.ts';
import { parseCdr, parseSession } from '../src/ocpi-protocol/validate.ts';
import { systemClock } from '../src/platform/clock.ts';
import { type CpoSandbox, createCpoSandbox, type Scenario, scenarioEvseId, scenarioLocationId } from '../src/sandbox/cpo/index.ts';
import { FAST_CPO_TIMINGS } from './charging-support.ts';
import { setupTestApp, type TestContext } from './helpers.ts';

let ctx: TestContext;
let cpo: CpoSandbox;
let userId: string;
const LOCATIONS = 120;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sessionRow = (reference: string) =>
  ctx.db
    .query<{ id: string; status: string; data: Record<string, unknown> }>('SELECT id, status, data FROM ocpi_sessions WHERE authorization_reference = $1', [
      reference,
    ])
    .then((r) => r.rows[0]);

const cdrRow = (sessionId: string) =>
  ctx.db.query<{ data: Record<string, unknown> }>('SELECT data FROM ocpi_cdrs WHERE session_id = $1', [sessionId]).then((r) => r.rows[0]);

before(async () => {
  ctx = await setupTestApp({ listen: 0, env: { OCPI_PAGE_LIMIT: '10', OCPI_REQUEST_TIMEOUT_MS: '1500' } });
  cpo = await createCpoSandbox({
    db: ctx.db,
    clock: systemClock,
    locations: LOCATIONS,
    seed: 7,
    ...FAST_CPO_TIMINGS,
    lateCdrDelayMs: 800,
    interruptAfterSeconds: 120,
    noUpdatesEndAfterSeconds: 120,
    hangMs: 4_000,
    pageLimits: { locations: 25, tariffs: 25 },
  });
  await cpo.listen({ port: 0 });
  const client = await ctx.newClient();
  const user = await ctx.call('POST', '/api/v1/users/', { token: client.token, body: { email: 'driver@example.com' } });
  userId = user.body.id;
});
after(async () => {
  await cpo?.close();
  await ctx.close();
});

describe('connecting to the sandbox CPO network (we register with it)', () => {
  it('does the credentials handshake and stores its parties', async () => {
    const token = await cpo.issueTokenA();
    const connection = await ctx.ocpi.connections.connect({ versionsUrl: cpo.versionsUrl, token, name: 'network' });
    assert.equal(connection.status, 'connected');
    assert.equal(connection.version, '2.2.1');
    assert.deepEqual(connection.roles.map((r) => `${r.country_code}*${r.party_id}`).sort(), cpo.parties.map((p) => `${p.country_code}*${p.party_id}`).sort());
    for (const module of ['locations', 'tariffs', 'commands', 'tokens', 'sessions', 'cdrs']) {
      assert.ok(
        connection.endpoints.some((e) => e.identifier === module),
        module,
      );
    }
    const peers = await cpo.listPeers();
    assert.equal(peers.filter((p) => p.status === 'REGISTERED').length, 1, 'the network registered us once');
    // Its TOKEN_A is spent: a second handshake with it fails.
    await assert.rejects(ctx.ocpi.connections.connect({ versionsUrl: cpo.versionsUrl, token, name: 'again' }));
  });

  it('pulls the whole catalogue across many pages, then only what changed', async () => {
    const connection = await ctx.ocpi.connections.findByName('network');
    assert.ok(connection);
    const pages: Record<string, number> = {};
    const counts = await ctx.ocpi.sync.syncConnection(connection, {
      full: true,
      onProgress: (module) => {
        pages[module] = (pages[module] ?? 0) + 1;
      },
    });
    assert.equal(counts.skipped, 0);
    // The network refuses GET sessions without date_from (2001), as mod_sessions allows a CPO to: every module is pulled.
    assert.deepEqual(counts.failed, []);
    assert.equal(counts.locations, LOCATIONS + cpo.scenarioParties.length);
    assert.ok((pages.locations ?? 0) >= 12, `locations came in ${pages.locations} pages of 10`);
    assert.ok(counts.tariffs > 10 && (pages.tariffs ?? 0) >= 2);
    const stored = await ctx.db.query<{ n: number }>('SELECT count(*) AS n FROM ocpi_locations');
    assert.equal(stored.rows[0]?.n, LOCATIONS + cpo.scenarioParties.length);
    await ctx.catalogue.reload();
    const party = cpo.scenarioParties[0];
    assert.ok(party);
    const evse = ctx.catalogue.evse(scenarioEvseId(party, 'NORMAL'));
    assert.equal(evse?.location_id, scenarioLocationId(party));
    const again = await ctx.ocpi.sync.syncConnection((await ctx.ocpi.connections.findByName('network')) as typeof connection);
    assert.equal(again.locations, 0, 'nothing changed since the last pull');
    assert.deepEqual(again.failed, []);
    assert.ok((await ctx.ocpi.connections.findByName('network'))?.last_synced_at, 'the pull moved last_synced_at');
  });

  it('receives EVSE status pushes into the catalogue', async () => {
    const party = cpo.scenarioParties[0];
    assert.ok(party);
    const evseId = scenarioEvseId(party, 'NORMAL');
    const location = cpo.network.location(scenarioLocationId(party));
    const evse = location?.evses?.find((e) => e.evse_id === evseId);
    assert.ok(location && evse);
    cpo.startBackgroundWork();
    await cpo.setEvseStatus(location.id, evse.uid, 'OUTOFORDER');
    // Polled with a deadline: a push that never arrives fails the test instead of keeping the process alive.
    await until('OUTOFORDER', async () =>
      (await ctx.db.query('SELECT status FROM ocpi_evses WHERE evse_id = $1', [evseId])).rows[0]?.status === 'OUTOFORDER' ? true : undefined,
    );
    await cpo.setEvseStatus(location.id, evse.uid, 'AVAILABLE');
    await until('AVAILABLE again', async () =>
      (await ctx.db.query('SELECT status FROM ocpi_evses WHERE evse_id = $1', [evseId])).rows[0]?.status === 'AVAILABLE' ? true : undefined,
    );
  });

  it('pushes a user’s token to the network when the user changes', async () => {
    const pending = await ctx.db.query<{ n: number }>("SELECT count(*) AS n FROM ocpi_outbox WHERE module = 'tokens'");
    const client = await ctx.newClient();
    const created = await ctx.call('POST', '/api/v1/users/', { token: client.token, body: {} });
    const queued = await ctx.db.query<{ n: number }>("SELECT count(*) AS n FROM ocpi_outbox WHERE module = 'tokens'");
    assert.equal(queued.rows[0]?.n, (pending.rows[0]?.n ?? 0) + 1, 'one push queued with the user');
    await ctx.ocpi.deliverPushes();
    const left = await ctx.db.query<{ n: number }>("SELECT count(*) AS n FROM ocpi_outbox WHERE module = 'tokens'");
    assert.equal(left.rows[0]?.n, 0, 'delivered and accepted');
    const held = await ctx.db.query('SELECT data FROM cpo_sandbox.tokens WHERE uid = $1', [created.body.id]);
    assert.equal(held.rows[0]?.data.type, 'APP_USER', 'the network holds the token');
  });
});

async function startOn(scenario: Scenario) {
  const party = cpo.scenarioParties[0];
  assert.ok(party);
  const user = await findUserForToken(ctx.db, userId);
  assert.ok(user);
  const reference = randomUUID();
  const outcome = await ctx.ocpi.commands.startSession({
    country_code: party.country_code,
    party_id: party.party_id,
    location_id: scenarioLocationId(party),
    evse_uid: evseUid(scenario),
    token: tokenOf({ countryCode: 'DE', partyId: 'CAX', businessName: 'Charging Access' }, user),
    authorization_reference: reference,
  });
  return { outcome, reference, party };
}

function evseUid(scenario: Scenario): string {
  const party = cpo.scenarioParties[0];
  assert.ok(party);
  const location = cpo.network.location(scenarioLocationId(party));
  const evse = location?.evses?.find((e) => e.evse_id === scenarioEvseId(party, scenario));
  assert.ok(evse, scenario);
  return evse.uid;
}

const commandResult = (commandId: string) => until('the command result', async () => (await ctx.ocpi.commands.find(commandId))?.result ?? undefined);

describe('commands on the scenario EVSEs', () => {
  it('NORMAL: start accepted, session ACTIVE with charging periods, stop, COMPLETED, CDR', async () => {
    const { outcome, reference, party } = await startOn('NORMAL');
    assert.equal(outcome.outcome, 'accepted', JSON.stringify(outcome));
    assert.equal(await commandResult(outcome.commandId), 'ACCEPTED');
    const active = await until('an ACTIVE session', async () => {
      const row = await sessionRow(reference);
      return row?.status === 'ACTIVE' && ((row.data.charging_periods as unknown[]) ?? []).length > 0 ? row : undefined;
    });
    assert.ok(parseSession(active.data).ok);
    assert.ok(Number(active.data.kwh) > 0);
    const stop = await ctx.ocpi.commands.stopSession({ country_code: party.country_code, party_id: party.party_id, session_id: active.id });
    assert.equal(stop.outcome, 'accepted', JSON.stringify(stop));
    const cdr = await until('the CDR', () => cdrRow(active.id));
    assert.ok(parseCdr(cdr.data).ok);
    const completed = await sessionRow(reference);
    assert.equal(completed?.status, 'COMPLETED');
    const total = cdr.data.total_cost as { excl_vat: number; incl_vat?: number };
    assert.ok(total.excl_vat > 0 && (total.incl_vat ?? 0) >= total.excl_vat);
    assert.equal(cdr.data.authorization_reference, reference);
  });

  it('REJECT: the start is refused with the CPO’s result', async () => {
    const { outcome } = await startOn('REJECT');
    assert.equal(outcome.outcome, 'rejected');
    assert.equal((outcome as { result: string }).result, 'REJECTED');
  });

  it('TIMEOUT: no answer within our timeout is "unreachable", never retried', async () => {
    const started = Date.now();
    const { outcome } = await startOn('TIMEOUT');
    assert.equal(outcome.outcome, 'unreachable');
    assert.ok(Date.now() - started < 3_500, 'gave up after OCPI_REQUEST_TIMEOUT_MS');
    const stored = await ctx.ocpi.commands.find(outcome.commandId);
    assert.equal(stored?.status, 'failed');
  });

  it('NORESULT and NOSTART: accepted, but no session ever appears', async () => {
    const noResult = await startOn('NORESULT');
    assert.equal(noResult.outcome.outcome, 'accepted');
    const noStart = await startOn('NOSTART');
    assert.equal(noStart.outcome.outcome, 'accepted');
    assert.equal(await commandResult(noStart.outcome.commandId), 'ACCEPTED');
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(await sessionRow(noResult.reference), undefined);
    assert.equal(await sessionRow(noStart.reference), undefined);
    assert.equal((await ctx.ocpi.commands.find(noResult.outcome.commandId))?.result, null);
  });

  it('NOUPDATES: no session pushed, the CDR arrives alone; a pull finds the session', async () => {
    const { outcome, reference } = await startOn('NOUPDATES');
    assert.equal(outcome.outcome, 'accepted');
    const cdr = await until(
      'the CDR',
      async () => (await ctx.db.query<{ data: Record<string, unknown> }>('SELECT data FROM ocpi_cdrs WHERE authorization_reference = $1', [reference])).rows[0],
    );
    assert.ok(parseCdr(cdr.data).ok);
    assert.equal(await sessionRow(reference), undefined, 'no session was pushed');
    await ctx.ocpi.reconcile();
    assert.equal((await sessionRow(reference))?.status, 'COMPLETED', 'reconciliation pulled it');
  });

  it('STOPREJECT: the stop is refused, the session goes on', async () => {
    const { outcome, reference, party } = await startOn('STOPREJECT');
    assert.equal(outcome.outcome, 'accepted');
    const active = await until('an ACTIVE session', async () => ((await sessionRow(reference))?.status === 'ACTIVE' ? sessionRow(reference) : undefined));
    assert.ok(active);
    const stop = await ctx.ocpi.commands.stopSession({ country_code: party.country_code, party_id: party.party_id, session_id: active.id });
    assert.equal(stop.outcome, 'rejected');
    assert.equal((await sessionRow(reference))?.status, 'ACTIVE');
  });

  it('INTERRUPT: the car ends the session by itself and the CDR follows', async () => {
    const { outcome, reference } = await startOn('INTERRUPT');
    assert.equal(outcome.outcome, 'accepted');
    const completed = await until('a COMPLETED session', async () => {
      const row = await sessionRow(reference);
      return row?.status === 'COMPLETED' ? row : undefined;
    });
    assert.ok(await until('the CDR', () => cdrRow(completed.id)));
  });

  it('LATECDR: the session completes first, the CDR later', async () => {
    const { outcome, reference, party } = await startOn('LATECDR');
    assert.equal(outcome.outcome, 'accepted');
    const active = await until('an ACTIVE session', async () => ((await sessionRow(reference))?.status === 'ACTIVE' ? sessionRow(reference) : undefined));
    assert.ok(active);
    await ctx.ocpi.commands.stopSession({ country_code: party.country_code, party_id: party.party_id, session_id: active.id });
    await until('a COMPLETED session', async () => ((await sessionRow(reference))?.status === 'COMPLETED' ? true : undefined));
    assert.equal(await cdrRow(active.id), undefined, 'no CDR yet');
    assert.ok(await until('the late CDR', () => cdrRow(active.id)));
  });

  it('DUPLICATE: every session update twice, charging periods stored once each', async () => {
    const { outcome, reference, party } = await startOn('DUPLICATE');
    assert.equal(outcome.outcome, 'accepted');
    const active = await until('a few updates', async () => {
      const row = await sessionRow(reference);
      return row?.status === 'ACTIVE' && ((row.data.charging_periods as unknown[]) ?? []).length >= 3 ? row : undefined;
    });
    const starts = (active.data.charging_periods as { start_date_time: string }[]).map((p) => p.start_date_time);
    assert.equal(new Set(starts).size, starts.length, `no period twice: ${starts.join(', ')}`);
    await ctx.ocpi.commands.stopSession({ country_code: party.country_code, party_id: party.party_id, session_id: active.id });
    assert.ok(await until('the CDR', () => cdrRow(active.id)));
  });
});
