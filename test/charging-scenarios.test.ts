// Charging against the misbehaving scenario EVSEs of the sandbox CPO network,
// through the API (plus reads of payment_holds, charging_bills and invoices to
// check the money): starts nobody answers (NORESULT, NOSTART) fail at the start
// deadline, a start the charge point refuses after accepting it, a start whose
// request hangs (TIMEOUT), sessions the car ends by itself (INTERRUPT), a late
// CDR (LATECDR), a CDR without any Session (NOUPDATES), a stop before the
// operator reported the session, and a debt: a final charge that fails off
// session, blocks new starts and payment-method removal, and clears once paid.
//
// The app runs on the manual clock ctx.clock (shared with the payment sandbox);
// the CPO sandbox runs on the system clock. The start deadline is a job due at
// accepted time + max(CHARGING_START_TIMEOUT_SECONDS, the CommandResponse's
// timeout): the tests move ctx.clock past it and let the job runner (started,
// polling every 200 ms) or ctx.jobs.runDue() pick it up.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { PDFParse } from 'pdf-parse';
import { insertCdr } from '../src/modules/ocpi/repository.ts';
import type { CDR } from '../src/ocpi-protocol/cdrs.ts';
import type { OcpiEvse, OcpiLocation } from '../src/ocpi-protocol/locations-tariffs.ts';
import { minimumCharge } from '../src/platform/money.ts';
import type { CpoSandbox, Scenario } from '../src/sandbox/cpo/index.ts';
import { type Driver, newDriver, scenarioEvse, startCpoNetwork } from './charging-support.ts';
import { assertProblem, setupTestApp, type TestContext, type TestResponse } from './helpers.ts';
import { CARDS, eventually, type Owner, USERS } from './payments-support.ts';

let ctx: TestContext;
let cpo: CpoSandbox;

/** The CPO's CommandResponse timeout; the start deadline is the later of it and CHARGING_START_TIMEOUT_SECONDS. */
const COMMAND_TIMEOUT_S = 30;
const START_TIMEOUT_S = 10;
const LATE_CDR_MS = 1_500;

before(async () => {
  ctx = await setupTestApp({
    listen: 0,
    payments: { webhooks: true },
    env: { OCPI_REQUEST_TIMEOUT_MS: '1500', CHARGING_START_TIMEOUT_SECONDS: String(START_TIMEOUT_S) },
  });
  cpo = await startCpoNetwork(ctx, {
    commandTimeoutSeconds: COMMAND_TIMEOUT_S,
    lateCdrDelayMs: LATE_CDR_MS,
    interruptAfterSeconds: 120,
    noUpdatesEndAfterSeconds: 120,
    hangMs: 3_000,
  });
  ctx.jobs.start();
});
after(async () => {
  await cpo?.close();
  await ctx?.close();
});

const evse = (scenario: Scenario) => scenarioEvse(cpo, scenario);

/** A user with complete billing details and a card. */
const driver = (card: string = CARDS.visa): Promise<Driver> => newDriver(ctx, { card });

const start = (d: Driver, evseId: string) =>
  ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, { token: d.token, body: { payment_method_id: d.pm, evse_id: evseId } });

const stop = (d: Owner, id: string) => ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${id}/`, { token: d.token });

const getSession = async (d: Owner, id: string) => {
  const res = await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/${id}/`, { token: d.token });
  assert.equal(res.status, 200, res.text);
  return res.body;
};

const untilStatus = (d: Owner, id: string, status: string, timeoutMs = 10_000) =>
  eventually(
    async () => {
      const s = await getSession(d, id);
      return s.status === status ? s : undefined;
    },
    `session ${id} ${status}`,
    timeoutMs,
  );

interface HoldRow {
  reference: string;
  status: string;
  amount: number;
  amount_captured: number;
}

/** The session's hold (by the session's hold reference: an adopted hold keeps the first attempt's reference). */
const holdOf = async (sessionId: string): Promise<HoldRow | undefined> =>
  (
    await ctx.db.query<HoldRow>(
      `SELECT h.reference, h.status, h.amount, h.amount_captured FROM payment_holds h
         JOIN charging_sessions s ON s.hold_reference = h.reference WHERE s.id = $1`,
      [sessionId],
    )
  ).rows[0];

const untilHold = (sessionId: string, status: string, timeoutMs = 5_000) =>
  eventually(
    async () => {
      const hold = await holdOf(sessionId);
      return hold?.status === status ? hold : undefined;
    },
    `the hold of ${sessionId} ${status}`,
    timeoutMs,
  );

const billOf = async (sessionId: string) =>
  (
    await ctx.db.query<{ step: string; gross: number; captured: number; charged: number; charge_payment_intent_id: string | null }>(
      'SELECT step, gross, captured, charged, charge_payment_intent_id FROM charging_bills WHERE session_id = $1',
      [sessionId],
    )
  ).rows[0];

const invoicesOf = async (sessionId: string) =>
  (
    await ctx.db.query<{ id: string; number_text: string; gross: number; document: { notes: string[] } }>(
      'SELECT id, number_text, gross, document FROM invoices WHERE session_id = $1',
      [sessionId],
    )
  ).rows;

const cents = (s: string) => Math.round(Number(s) * 100);

/** The text of a session's invoice PDF, fetched by its signed link as the user's browser would, whitespace collapsed. */
async function invoicePdfText(d: Owner, sessionId: string): Promise<string> {
  const listed = await ctx.call('GET', `${USERS}/${d.userId}/invoices/`, { token: d.token });
  const invoice = (listed.body.results as { charging_session_id: string; link: string }[]).find((i) => i.charging_session_id === sessionId);
  assert.ok(invoice, listed.text);
  const link = new URL(invoice.link);
  const res = await ctx.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
  assert.equal(res.statusCode, 200, res.body);
  const parser = new PDFParse({ data: res.rawPayload });
  try {
    return (await parser.getText()).text.replace(/\s+/g, ' ');
  } finally {
    await parser.destroy();
  }
}

/** A started session: 201, pending, hold authorized. */
function started(res: TestResponse, evseId: string) {
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.status, 'pending');
  assert.equal(res.body.is_active, true);
  assert.equal(res.body.evse_id, evseId);
  assert.equal(res.body.pre_authorization.status, 'authorized');
  return res.body as { id: string };
}

/** The session once it is completed and has an invoice (within 15 s). */
const untilInvoiced = (d: Owner, id: string) =>
  eventually(
    async () => {
      const s = await getSession(d, id);
      return s.status === 'completed' && s.session_cost.invoice_download ? s : undefined;
    },
    `session ${id} completed with an invoice`,
    15_000,
  );

/** Completed, billed (hold captured for the total, or charged) and invoiced once: returns the session. */
async function billedAndInvoiced(d: Owner, id: string) {
  const completed = await untilInvoiced(d, id);
  assert.equal(completed.is_active, false);
  assert.equal(completed.failure_reason, null);
  assert.ok(Number(completed.consumed_energy) > 0, 'energy was delivered');
  assert.ok(completed.start_time && completed.end_time);
  const cost = completed.session_cost;
  const parts = [cost.kwh_cost, cost.time_cost, cost.session_fee_cost, cost.blocking_fee_cost, cost.starting_fee_cost].filter((p) => p !== null);
  assert.equal(
    parts.reduce((sum: number, p: string) => sum + cents(p), 0),
    cents(cost.invoice_summary),
    'the parts add up to the total',
  );
  const bill = await billOf(id);
  assert.equal(bill?.step, 'invoiced');
  assert.equal(bill?.gross, cents(cost.invoice_summary));
  const hold = await holdOf(id);
  assert.equal(hold?.status, 'captured');
  assert.equal(hold?.amount_captured, Math.min(bill?.gross ?? 0, hold?.amount ?? 0));
  assert.equal((bill?.captured ?? 0) + (bill?.charged ?? 0), bill?.gross, 'paid in full');
  const invoices = await invoicesOf(id);
  assert.equal(invoices.length, 1);
  assert.equal(invoices[0]?.gross, bill?.gross);
  // The invoice's unit price per kWh is the one the user was shown (incl. VAT, same rounding).
  const energyLine = ((invoices[0] as { document: unknown }).document as { lines: { description: string; unitPrice?: string }[] }).lines.find(
    (l) => l.description === 'Energy',
  );
  if (energyLine?.unitPrice && completed.user_facing_session_prices.kwh_price) {
    assert.equal(energyLine.unitPrice, completed.user_facing_session_prices.kwh_price);
  }
  assert.match(invoices[0]?.document.notes[0] ?? '', /^Paid: /);
  const listed = await ctx.call('GET', `${USERS}/${d.userId}/invoices/`, { token: d.token });
  assert.equal(listed.status, 200, listed.text);
  assert.ok(listed.body.results.some((i: { charging_session_id: string; total: string }) => i.charging_session_id === id && i.total === cost.invoice_summary));
  return completed;
}

/** Moves the app's clock past a start deadline and waits for the job runner to fail the session. */
async function pastTheDeadline(d: Owner, id: string, reason: string) {
  ctx.clock.advance((Math.max(COMMAND_TIMEOUT_S, START_TIMEOUT_S) + 1) * 1000);
  const failed = await eventually(
    async () => {
      const s = await getSession(d, id);
      return s.status === 'failed' ? s : undefined;
    },
    `session ${id} failed at its deadline`,
    5_000,
  );
  assert.equal(failed.failure_reason, reason);
  assert.equal(failed.is_active, false);
  await untilHold(id, 'released');
  assert.equal((await getSession(d, id)).pre_authorization.status, 'released');
  return failed;
}

describe('starts that never become sessions', () => {
  for (const scenario of ['NORESULT', 'NOSTART'] as const) {
    it(`${scenario}: 201 pending; nothing comes; pending until the start deadline, then failed (no_session_reported), hold released`, async () => {
      const d = await driver();
      const session = started(await start(d, evse(scenario)), evse(scenario));
      // The CommandResult (NOSTART: ACCEPTED) would have arrived long before this; still pending.
      await sleep(400);
      let s = await getSession(d, session.id);
      assert.equal(s.status, 'pending');
      assert.equal(s.failure_reason, null);
      assert.equal(s.start_time, null);
      // Before the deadline (at least CHARGING_START_TIMEOUT_SECONDS after the acceptance), the deadline job does nothing.
      ctx.clock.advance((START_TIMEOUT_S - 1) * 1000);
      await ctx.jobs.runDue();
      s = await getSession(d, session.id);
      assert.equal(s.status, 'pending');
      assert.equal((await holdOf(session.id))?.status, 'authorized');
      await pastTheDeadline(d, session.id, 'no_session_reported');
      // A failed session cannot be stopped.
      assertProblem(await stop(d, session.id), 409, 'already_stopped');
      // No bill, no invoice.
      assert.equal(await billOf(session.id), undefined);
      assert.equal((await invoicesOf(session.id)).length, 0);
    });
  }

  it('stop before the operator reported the session (NOSTART): 409 conflict with Retry-After; the session stays pending', async () => {
    const d = await driver();
    const session = started(await start(d, evse('NOSTART')), evse('NOSTART'));
    const res = await stop(d, session.id);
    assertProblem(res, 409, 'conflict');
    assert.equal(res.headers['retry-after'], '2');
    const s = await getSession(d, session.id);
    assert.equal(s.status, 'pending');
    await sleep(300);
    assertProblem(await stop(d, session.id), 409, 'conflict');
    await pastTheDeadline(d, session.id, 'no_session_reported');
  });

  it('a negative CommandResult (the charge point finds the EVSE out of order): failed start_failed_at_charge_point, hold released, before any deadline', async () => {
    // An ordinary EVSE that we and the CPO both see AVAILABLE; the CPO then marks it OUTOFORDER without telling us (a lost status push).
    let target: { location: OcpiLocation; evse: OcpiEvse } | undefined;
    for (let i = 1; i <= 40 && !target; i++) {
      const location = cpo.network.location(`LOC-${String(i).padStart(7, '0')}`);
      for (const e of location?.evses ?? []) {
        if (!location || !e.evse_id || target) continue;
        if (cpo.network.status(location, e) !== 'AVAILABLE' || !e.capabilities?.includes('REMOTE_START_STOP_CAPABLE')) continue;
        if (ctx.catalogue.evse(e.evse_id)?.status === 'AVAILABLE') target = { location, evse: e };
      }
    }
    assert.ok(target, 'an available ordinary EVSE');
    const evseId = target.evse.evse_id as string;
    cpo.network.applyStatus({ location_id: target.location.id, evse_uid: target.evse.uid, status: 'OUTOFORDER', last_updated: new Date() });
    try {
      const d = await driver();
      const session = started(await start(d, evseId), evseId);
      const failed = await eventually(
        async () => {
          const s = await getSession(d, session.id);
          return s.status === 'failed' ? s : undefined;
        },
        'failed on the CommandResult',
        5_000,
      );
      assert.equal(failed.failure_reason, 'start_failed_at_charge_point: evse_inoperative');
      await untilHold(session.id, 'released');
    } finally {
      cpo.network.applyStatus({ location_id: target.location.id, evse_uid: target.evse.uid, status: 'AVAILABLE', last_updated: new Date() });
    }
  });
});

describe('a start the operator never answers', () => {
  it('TIMEOUT: 424 charging_provider_error after OCPI_REQUEST_TIMEOUT_MS; failed operator_unreachable, hold released', async () => {
    const d = await driver();
    const begun = performance.now();
    const res = await start(d, evse('TIMEOUT'));
    const took = performance.now() - begun;
    assertProblem(res, 424, 'charging_provider_error');
    assert.ok(took >= 1_400 && took < 3_000, `answered after the request timeout (${Math.round(took)} ms), not after the CPO dropped the connection`);
    const list = await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/`, { token: d.token });
    assert.equal(list.body.count, 1);
    const failed = list.body.results[0];
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure_reason, 'operator_unreachable');
    assert.equal(failed.is_active, false);
    await untilHold(failed.id, 'released');
  });
});

describe('sessions that end without a stop, or whose messages are late or missing', () => {
  it('INTERRUPT: the car ends the session by itself: stopping/completed without a stop call, billed and invoiced', async () => {
    const d = await driver();
    const session = started(await start(d, evse('INTERRUPT')), evse('INTERRUPT'));
    // Watch the statuses the session goes through; no stop is ever sent.
    const seen: string[] = [];
    const completed = await eventually(
      async () => {
        const s = await getSession(d, session.id);
        if (seen.at(-1) !== s.status) seen.push(s.status);
        return s.status === 'completed' ? s : undefined;
      },
      'completed by itself',
      10_000,
    );
    assert.ok(completed);
    const order = ['pending', 'active', 'stopping', 'completed'];
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
      `statuses only move forward: ${seen.join(' -> ')}`,
    );
    assert.ok(
      seen.every((s) => order.includes(s)),
      seen.join(','),
    );
    const { rows } = await ctx.db.query('SELECT stop_command_id FROM charging_sessions WHERE id = $1', [session.id]);
    assert.equal(rows[0]?.stop_command_id, null, 'no STOP_SESSION was sent');
    await billedAndInvoiced(d, session.id);
    assertProblem(await stop(d, session.id), 409, 'already_stopped');
  });

  it('LATECDR: after the stop the session is stopping (ended) until the CDR arrives, then completed and invoiced', async () => {
    const d = await driver();
    const session = started(await start(d, evse('LATECDR')), evse('LATECDR'));
    await untilStatus(d, session.id, 'active', 5_000);
    const res = await stop(d, session.id);
    assert.equal(res.status, 204, res.text);
    const stoppedAt = performance.now();
    // The final PATCH (COMPLETED, with the end) arrives at once; the CDR LATE_CDR_MS later.
    const ended = await eventually(
      async () => {
        const s = await getSession(d, session.id);
        return s.end_time ? s : undefined;
      },
      'the end reported',
      5_000,
    );
    assert.equal(ended.status, 'stopping');
    assert.equal(ended.is_active, true);
    assert.equal(ended.session_cost.invoice_download, null);
    assert.equal(await billOf(session.id), undefined);
    assert.equal((await holdOf(session.id))?.status, 'authorized');
    // A second stop of a stopping session is fine.
    assert.equal((await stop(d, session.id)).status, 204);
    const completed = await billedAndInvoiced(d, session.id);
    assert.ok(performance.now() - stoppedAt >= LATE_CDR_MS - 200, 'completed only once the late CDR came');
    assert.equal(completed.end_time, ended.end_time);
  });

  it('NOUPDATES: no Session is ever pushed, the CDR arrives alone: the session completes and is billed', async () => {
    const d = await driver();
    const session = started(await start(d, evse('NOUPDATES')), evse('NOUPDATES'));
    const completed = await billedAndInvoiced(d, session.id);
    assert.ok(completed.start_time, 'the start comes from the CDR');
    // Never reported as a Session: the start deadline, run later, leaves the completed session alone.
    ctx.clock.advance((Math.max(COMMAND_TIMEOUT_S, START_TIMEOUT_S) + 1) * 1000);
    await ctx.jobs.runDue();
    assert.equal((await getSession(d, session.id)).status, 'completed');
    assert.equal((await invoicesOf(session.id)).length, 1);
  });
});

describe('the reconciliation repairs what messages missed', () => {
  it('a stop the CPO never got (a crash after recording it): STOP_SESSION is sent again after CHARGING_STALLED_STOP_SECONDS, then billed', async () => {
    const d = await driver();
    const session = started(await start(d, evse('NORMAL')), evse('NORMAL'));
    await untilStatus(d, session.id, 'active', 5_000);
    // The stop was recorded, the process died before STOP_SESSION went out.
    await ctx.db.query('UPDATE charging_sessions SET stop_requested_at = $2 WHERE id = $1', [session.id, ctx.clock.now()]);
    assert.equal((await ctx.modules.reconcile()).stopped_again, 0, 'not before the stall time');
    assert.equal((await getSession(d, session.id)).status, 'active');
    ctx.clock.advance(601_000);
    assert.equal((await ctx.modules.reconcile()).stopped_again, 1);
    assert.equal((await ctx.modules.reconcile()).stopped_again, 0, 'sent once per stall time');
    await billedAndInvoiced(d, session.id);
    const { rows } = await ctx.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM ocpi_commands c JOIN charging_sessions s ON c.request->>'session_id' = s.ocpi_session_id WHERE c.type = 'STOP_SESSION' AND s.id = $1",
      [session.id],
    );
    assert.equal(Number(rows[0]?.n), 1, 'one STOP_SESSION, from the reconciliation');
  });

  it('a CDR naming neither our id nor a session we know: matched by its APP_USER token and EVSE, or later by the session id a Session brought', async () => {
    // A real CDR as the template: a NORMAL session, billed.
    const first = await driver();
    const done = started(await start(first, evse('NORMAL')), evse('NORMAL'));
    await untilStatus(first, done.id, 'active', 5_000);
    await eventually(async () => (Number((await getSession(first, done.id)).consumed_energy) > 0 ? true : undefined), 'energy', 5_000);
    assert.equal((await stop(first, done.id)).status, 204);
    await billedAndInvoiced(first, done.id);
    const template = (
      await ctx.db.query<{ data: Record<string, unknown> }>(
        'SELECT c.data FROM ocpi_cdrs c JOIN charging_sessions s ON s.cdr_id = c.id AND s.cdr_party_id = c.party_id WHERE s.id = $1',
        [done.id],
      )
    ).rows[0]?.data as Record<string, unknown> & { cdr_token: Record<string, unknown>; cdr_location: Record<string, unknown> };
    assert.ok(template);
    const { rows: connections } = await ctx.db.query<{ id: string }>("SELECT id FROM ocpi_connections WHERE status = 'connected' LIMIT 1");
    const connectionId = connections[0]?.id as string;

    /** A CDR of the template's shape for `sessionId`'s EVSE and user, without authorization_reference, pushed as the receiver does. */
    const push = async (sessionId: string, cdrId: string, tokenType: string) => {
      const [row] = (await ctx.db.query('SELECT user_id, location_id, evse_uid, created_at FROM charging_sessions WHERE id = $1', [sessionId])).rows;
      assert.ok(row);
      const begin = new Date(row.created_at.getTime() + 1_000);
      const cdr = {
        ...template,
        id: cdrId,
        session_id: `CPO-${cdrId}`,
        start_date_time: begin.toISOString(),
        end_date_time: new Date(begin.getTime() + 30 * 60_000).toISOString(),
        cdr_token: { ...template.cdr_token, uid: row.user_id, type: tokenType },
        cdr_location: { ...template.cdr_location, id: row.location_id, evse_uid: row.evse_uid },
      } as unknown as CDR;
      delete (cdr as { authorization_reference?: string }).authorization_reference;
      await ctx.db.transaction(async (tx) => {
        assert.ok(await insertCdr(tx, connectionId, cdr, ctx.clock.now()));
        await ctx.modules.charging?.cdrReceived(tx, cdr);
      });
      return cdr;
    };

    // Matched at once by the APP_USER token (our user id) and the EVSE: a start the CPO never reported (NOSTART).
    const second = await driver();
    const unseen = started(await start(second, evse('NOSTART')), evse('NOSTART'));
    await push(unseen.id, `NOREF-${unseen.id.slice(0, 8)}`, 'APP_USER');
    await billedAndInvoiced(second, unseen.id);

    // Not matched at first (an RFID token names no user of ours): kept. A Session naming our id then brings its
    // session id, and the reconciliation matches the CDR.
    const third = await driver();
    const late = started(await start(third, evse('NOSTART')), evse('NOSTART'));
    const cdr = await push(late.id, `LATE-${late.id.slice(0, 8)}`, 'RFID');
    assert.equal((await getSession(third, late.id)).status, 'pending');
    await ctx.db.query('UPDATE charging_sessions SET ocpi_session_id = $2 WHERE id = $1', [late.id, cdr.session_id]);
    assert.ok(((await ctx.modules.reconcile()).cdrs_matched ?? 0) >= 1);
    await billedAndInvoiced(third, late.id);
    assert.equal(((await ctx.modules.reconcile()).cdrs_matched ?? 0) >= 1, false, 'a linked CDR is not matched again');
  });
});

// Last in this file: it moves the app's clock (shared with the payment sandbox) by 8 days.
describe('a debt and its payment', () => {
  it('a hold taken over by the next start: the failed attempt says transferred (to that session), never the captured of the session that used it', async () => {
    const d = await driver(CARDS.authenticateAlways);
    const first = await start(d, evse('NORMAL'));
    assert.equal(first.status, 402, first.text);
    const holdSecret = first.body.error.payment_intent_client_secret as string;
    const authenticated = await ctx.call('POST', `/sandbox/payment_intents/${holdSecret.slice(0, holdSecret.indexOf('_secret_'))}/authenticate`, {
      body: { client_secret: holdSecret, outcome: 'approve' },
    });
    assert.equal(authenticated.status, 200, authenticated.text);
    const session = started(await start(d, evse('NORMAL')), evse('NORMAL'));
    await untilStatus(d, session.id, 'active', 5_000);
    assert.equal((await stop(d, session.id)).status, 204);
    await billedAndInvoiced(d, session.id);

    const listed = await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/`, { token: d.token });
    assert.equal(listed.status, 200, listed.text);
    const failed = (listed.body.results as { id: string; status: string; pre_authorization: Record<string, string> }[]).find((s) => s.status === 'failed');
    assert.ok(failed, 'the attempt that waited for authentication is listed, failed');
    assert.equal(failed.pre_authorization.status, 'transferred', 'not "captured": nothing was captured for it');
    assert.equal(failed.pre_authorization.transferred_to, session.id);
    const one = await getSession(d, failed.id);
    assert.deepEqual(one.pre_authorization, failed.pre_authorization);
    const used = await getSession(d, session.id);
    assert.equal(used.pre_authorization.status, 'captured');
    assert.equal(used.pre_authorization.transferred_from, failed.id);
  });

  it('a hold that lapsed before the CDR: the final charge fails off-session, a debt blocks starts and removals until it is paid', async () => {
    const d = await driver(CARDS.authenticateAlways);
    // The bank wants authentication of every off-session payment: the first start answers the client secret.
    const first = await start(d, evse('NORMAL'));
    assert.equal(first.status, 402, first.text);
    assert.equal(first.body.error.type, 'pre_authorization_failed');
    const holdSecret = first.body.error.payment_intent_client_secret as string;
    const holdIntent = holdSecret.slice(0, holdSecret.indexOf('_secret_'));
    const authenticated = await ctx.call('POST', `/sandbox/payment_intents/${holdIntent}/authenticate`, {
      body: { client_secret: holdSecret, outcome: 'approve' },
    });
    assert.equal(authenticated.status, 200, authenticated.text);
    const session = started(await start(d, evse('NORMAL')), evse('NORMAL'));
    await untilStatus(d, session.id, 'active', 5_000);

    // Eight days on the shared clock: the sandbox processor lapses the authorization (7 days), its webhook tells us.
    ctx.clock.advance(8 * 86_400_000);
    await ctx.sandbox.runDueWork();
    const lapsed = await untilHold(session.id, 'expired');
    assert.equal(lapsed.amount_captured, 0);

    const stopped = await stop(d, session.id);
    assert.equal(stopped.status, 204, stopped.text);
    // The CDR: the bill cannot capture; the off-session charge of the whole amount needs authentication: a debt.
    const completed = await untilInvoiced(d, session.id);
    const total = completed.session_cost.invoice_summary as string;
    assert.ok(cents(total) > 0);
    const bill = await billOf(session.id);
    assert.equal(bill?.step, 'invoiced');
    assert.equal(bill?.captured, 0);
    assert.equal(bill?.charged, 0);
    assert.equal(bill?.gross, cents(total));

    const debts = await ctx.call('GET', `${USERS}/${d.userId}/charging/debts/`, { token: d.token });
    assert.equal(debts.status, 200, debts.text);
    assert.equal(debts.body.count, 1);
    const debt = debts.body.results[0];
    assert.deepEqual(Object.keys(debt).sort(), ['amount', 'currency', 'payment_intent_client_secret', 'session_id']);
    assert.equal(debt.session_id, session.id);
    assert.equal(debt.amount, total);
    assert.equal(debt.currency, completed.session_cost.currency);
    assert.match(debt.payment_intent_client_secret, /^pi_.+_secret_/);
    const debtIntent = (debt.payment_intent_client_secret as string).slice(0, (debt.payment_intent_client_secret as string).indexOf('_secret_'));
    assert.equal(debtIntent, bill?.charge_payment_intent_id);

    // The invoice is issued all the same, with the amount due.
    const invoices = await invoicesOf(session.id);
    assert.equal(invoices.length, 1);
    assert.equal(invoices[0]?.gross, cents(total));
    assert.deepEqual(invoices[0]?.document.notes, [`Amount due: ${total} ${completed.session_cost.currency} (the final charge failed).`]);

    // While the debt is unpaid: no start, no removal of a payment method, and a CPO asking in real time hears NO_CREDIT.
    assertProblem(await start(d, evse('NORMAL')), 402, 'payment_error');
    assert.equal((await ctx.ocpi.tokens.authorize(d.userId, 'APP_USER', undefined)).allowed, 'NO_CREDIT');
    assertProblem(await ctx.call('DELETE', `${USERS}/${d.userId}/payment-methods/${d.pm}/`, { token: d.token }), 402, 'payment_error');
    const methods = await ctx.call('GET', `${USERS}/${d.userId}/payment-methods/`, { token: d.token });
    assert.equal(methods.body.count, 1, 'the method is still there');

    // The customer pays with the processor's SDK (3-D Secure approved): the debt disappears.
    const paid = await ctx.call('POST', `/sandbox/payment_intents/${debtIntent}/authenticate`, {
      body: { client_secret: debt.payment_intent_client_secret, outcome: 'approve' },
    });
    assert.equal(paid.status, 200, paid.text);
    assert.equal(paid.body.status, 'succeeded', paid.text);
    // The processor's webhook clears it (without anyone listing the debts) ...
    await eventually(
      async () => {
        const { rows } = await ctx.db.query<{ status: string }>('SELECT status FROM charging_debts WHERE session_id = $1', [session.id]);
        return rows[0]?.status === 'paid' ? true : undefined;
      },
      'the debt marked paid by the webhook',
      5_000,
    );
    // ... and the list no longer shows it.
    await eventually(
      async () => {
        const listed = await ctx.call('GET', `${USERS}/${d.userId}/charging/debts/`, { token: d.token });
        assert.equal(listed.status, 200, listed.text);
        return listed.body.count === 0 && listed.body.results.length === 0 ? true : undefined;
      },
      'the debt cleared',
      5_000,
    );
    const { rows } = await ctx.db.query<{ status: string; paid_at: Date | null }>('SELECT status, paid_at FROM charging_debts WHERE session_id = $1', [
      session.id,
    ]);
    assert.equal(rows[0]?.status, 'paid');
    assert.ok(rows[0]?.paid_at);
    assert.equal((await ctx.ocpi.tokens.authorize(d.userId, 'APP_USER', undefined)).allowed, 'ALLOWED');

    // The invoice's PDF as the payment stands now: paid (when, with which card), no stale "Amount due".
    const pdf = await invoicePdfText(d, session.id);
    const paidOn = (rows[0] as { paid_at: Date }).paid_at.toISOString().slice(0, 10);
    assert.ok(pdf.includes(`Paid on ${paidOn}: ${total} ${completed.session_cost.currency} with Visa •••• 3184`), pdf);
    assert.ok(!pdf.includes('Amount due'), pdf);
    assert.ok(pdf.includes('Payment method: Visa •••• 3184'), pdf);
    assert.ok(pdf.includes('Germany'), "the customer's country as a name");

    // Starting works again (this card wants authentication for every hold: 402 with a client secret, then 201).
    const again = await start(d, evse('NORMAL'));
    assert.equal(again.status, 402, again.text);
    assert.equal(again.body.error.type, 'pre_authorization_failed');
    const secret = again.body.error.payment_intent_client_secret as string;
    const ok = await ctx.call('POST', `/sandbox/payment_intents/${secret.slice(0, secret.indexOf('_secret_'))}/authenticate`, {
      body: { client_secret: secret, outcome: 'approve' },
    });
    assert.equal(ok.status, 200, ok.text);
    const next = started(await start(d, evse('NORMAL')), evse('NORMAL'));
    await untilStatus(d, next.id, 'active', 5_000);
    assert.equal((await stop(d, next.id)).status, 204);
    await billedAndInvoiced(d, next.id);
  });

  it('a bill below the processor’s minimum charge that no hold covers is waived: no refused charge retried, no unpayable debt, the invoice says so', async () => {
    const d = await driver();
    const session = started(await start(d, evse('NOSTART')), evse('NOSTART'));
    const hold = await untilHold(session.id, 'authorized');
    // The hold is cancelled at the processor (as from its dashboard); its webhook tells us.
    const { rows } = await ctx.db.query<{ payment_intent_id: string; currency: string }>(
      'SELECT payment_intent_id, currency FROM payment_holds WHERE reference = $1',
      [hold.reference],
    );
    assert.ok(rows[0]);
    const intent = rows[0].payment_intent_id;
    const currency = rows[0].currency.toUpperCase();
    const cancelled = await fetch(`${ctx.sandbox.url}/v1/payment_intents/${intent}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.sandbox.keys.secretKey}` },
    });
    assert.equal(cancelled.status, 200, await cancelled.text());
    await untilHold(session.id, 'released');

    // The CPO's CDR: 0.5 kWh at 0.40 + 19 % VAT per kWh = 0.24, below the minimum charge of every currency we know.
    const [row] = (await ctx.db.query('SELECT * FROM charging_sessions WHERE id = $1', [session.id])).rows;
    assert.ok(row);
    const begin = new Date(ctx.clock.now().getTime() - 10 * 60_000).toISOString();
    const end = ctx.clock.now().toISOString();
    const tariff = {
      country_code: row.country_code,
      party_id: row.party_id,
      id: 'TINY',
      currency,
      elements: [{ price_components: [{ type: 'ENERGY', price: 0.4, vat: 19, step_size: 1 }] }],
      last_updated: begin,
    };
    const cdr = {
      country_code: row.country_code,
      party_id: row.party_id,
      id: `TINY-${session.id.slice(0, 8)}`,
      start_date_time: begin,
      end_date_time: end,
      session_id: `CPO-TINY-${session.id.slice(0, 8)}`,
      authorization_reference: session.id,
      cdr_token: { country_code: 'DE', party_id: 'EMS', uid: row.user_id, type: 'APP_USER', contract_id: `DE-EMS-${row.user_id}` },
      auth_method: 'COMMAND',
      cdr_location: {
        id: row.location_id,
        address: 'Street 1',
        city: 'City',
        country: 'DEU',
        coordinates: { latitude: '52.520000', longitude: '13.405000' },
        evse_uid: row.evse_uid,
        evse_id: row.evse_id,
        connector_id: row.connector_id ?? '1',
        connector_standard: 'IEC_62196_T2',
        connector_format: 'SOCKET',
        connector_power_type: 'AC_3_PHASE',
      },
      currency,
      tariffs: [tariff],
      charging_periods: [{ start_date_time: begin, dimensions: [{ type: 'ENERGY', volume: 0.5 }], tariff_id: 'TINY' }],
      total_cost: { excl_vat: 0.2, incl_vat: 0.24 },
      total_energy: 0.5,
      total_time: 10 / 60,
      last_updated: end,
    } as unknown as CDR;
    const { rows: connections } = await ctx.db.query<{ id: string }>("SELECT id FROM ocpi_connections WHERE status = 'connected' LIMIT 1");
    await ctx.db.transaction(async (tx) => {
      assert.ok(await insertCdr(tx, connections[0]?.id as string, cdr, ctx.clock.now()));
      assert.ok(await ctx.modules.charging?.cdrReceived(tx, cdr));
    });

    const completed = await untilInvoiced(d, session.id);
    assert.equal(completed.session_cost.invoice_summary, '0.24');
    assert.equal((await holdOf(session.id))?.status, 'released');
    const bill = await billOf(session.id);
    assert.equal(bill?.gross, 24);
    assert.equal(bill?.step, 'invoiced');
    assert.equal(bill?.captured, 0);
    assert.equal(bill?.charged, 0);
    assert.equal(bill?.charge_payment_intent_id, null);
    const waived = (await ctx.db.query<{ waived: number }>('SELECT waived FROM charging_bills WHERE session_id = $1', [session.id])).rows[0]?.waived;
    assert.equal(waived, bill?.gross, 'the whole amount waived');
    // No charge was attempted (the processor refuses it) and nothing is owed: the user can start again.
    const { rows: intents } = await ctx.db.query<{ id: string }>(
      `SELECT id FROM stripe_sandbox.objects WHERE object = 'payment_intent'
         AND customer = (SELECT customer FROM stripe_sandbox.objects WHERE id = $1)`,
      [intent],
    );
    assert.deepEqual(
      intents.map((i) => i.id),
      [intent],
      'the user’s only payment intent is the cancelled hold',
    );
    const debts = await ctx.call('GET', `${USERS}/${d.userId}/charging/debts/`, { token: d.token });
    assert.equal(debts.body.count, 0, debts.text);
    const { rows: jobs } = await ctx.db.query<{ state: string; attempts: number }>(
      "SELECT state, attempts FROM jobs WHERE queue = 'invoicing.bill' AND key = $1",
      [session.id],
    );
    assert.deepEqual(
      jobs.map((j) => [j.state, j.attempts]),
      [['done', 1]],
      'billed at the first attempt',
    );
    const invoices = await invoicesOf(session.id);
    assert.equal(invoices.length, 1);
    assert.equal(invoices[0]?.gross, bill?.gross, 'the invoice states the full amount of the service');
    const money = (units: number) => `${(units / 100).toFixed(2)} ${currency}`;
    assert.deepEqual(invoices[0]?.document.notes, [
      `Paid: ${money(0)}.`,
      `Not collected: ${money(bill?.gross ?? 0)} (below the card processor’s minimum charge of ${money(minimumCharge(currency))}).`,
    ]);
  });
});
