// 50 charging sessions at once, end to end through the API (ctx.call, as the
// other tests), on the sandbox CPO network and the Stripe sandbox, which talk
// to the listening app over real HTTP (OCPI, webhooks): 50 users (each of its
// own client, with its own card) start on 50 distinct ordinary EVSEs at the
// same moment, charge a little, stop at the same moment; the CPO's CDRs arrive
// and the app's job runner bills them. Then, from the API, our tables and the
// processor's own state (the Stripe sandbox's API and events):
// - every session completed, billed and invoiced exactly once;
// - exactly one capture per invoice at the processor, for the invoice's total,
//   and no other payment intent (no extra charge);
// - no hold left authorized (ours or the processor's);
// - invoice numbers 1..50 of the issuer: unique, no gaps, the counter at 50;
// - no answer was a 5xx (ours to the client; the CPO logged no refused or
//   failed push), no webhook refused, no deadlock, no job failed or retried.
// Not a benchmark: nothing here asserts how long anything took.
//
// The app runs on the manual clock ctx.clock (jobs due "now" run at once; a
// retried job would wait for the clock, so a retry shows up as a stuck bill,
// reported with its error); the CPO sandbox runs on the system clock with the
// other charging tests' short delays, compressing time 20x (TIME_COMPRESSION).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OcpiEvse, OcpiLocation } from '../src/ocpi-protocol/locations-tariffs.ts';
import type { CpoSandbox } from '../src/sandbox/cpo/index.ts';
import { type Driver, newDriver, startCpoNetwork } from './charging-support.ts';
import { setupTestApp, type TestContext, type TestResponse } from './helpers.ts';
import { customerOf, sandboxApi, USERS } from './payments-support.ts';

const SESSIONS = 50;
/** Generated locations to find SESSIONS available, remotely startable ordinary EVSEs in (same seed, same network). */
const LOCATIONS = 160;

/**
 * Simulated time per real time while a session charges. A hold is priced for an hour of charging at the EVSE's
 * power: at 20x, a session would have to charge three real minutes to cost what is held, so even on a slow, busy
 * machine the capture is the whole bill (nothing is charged beyond the hold).
 */
const TIME_COMPRESSION = 20;

let ctx: TestContext;
let cpo: CpoSandbox;
/** What the CPO sandbox logged as a warning or error (a push we refused or failed to answer, a failed request). */
const cpoTrouble: string[] = [];

before(async () => {
  ctx = await setupTestApp({ listen: 0, payments: { webhooks: true } });
  cpo = await startCpoNetwork(ctx, {
    locations: LOCATIONS,
    timeCompression: TIME_COMPRESSION,
    // A Session update every 0.5 s rather than 0.15 s: 100 PATCHes a second for 50 sessions, not 330, keeps a busy machine from falling behind.
    sessionUpdateIntervalMs: 500,
    log: (level, message, fields) => {
      if (level === 'warn' || level === 'error') cpoTrouble.push(`${level}: ${message} ${JSON.stringify(fields ?? {})}`);
    },
  });
  ctx.jobs.start();
});
after(async () => {
  await cpo?.close();
  await ctx?.close();
});

/** Every API answer the test got, to check that none was a 5xx. */
const answers: { what: string; status: number; text: string }[] = [];

async function api(what: string, method: string, url: string, token: string): Promise<TestResponse> {
  const res = await ctx.call(method, url, { token });
  answers.push({ what, status: res.status, text: res.text });
  return res;
}

interface Run {
  driver: Driver;
  evseId: string;
  sessionId: string;
}

/** Ordinary EVSEs (they behave like NORMAL) that we and the CPO see AVAILABLE and that can be started remotely, in a stable order. */
function availableEvses(n: number): string[] {
  const found: string[] = [];
  for (let i = 1; i <= LOCATIONS && found.length < n; i++) {
    const location = cpo.network.location(`LOC-${String(i).padStart(7, '0')}`) as OcpiLocation | undefined;
    for (const e of (location?.evses ?? []) as OcpiEvse[]) {
      if (!location || !e.evse_id || found.length >= n) continue;
      if (cpo.network.status(location, e) !== 'AVAILABLE' || !e.capabilities?.includes('REMOTE_START_STOP_CAPABLE')) continue;
      if (ctx.catalogue.evse(e.evse_id)?.status === 'AVAILABLE') found.push(e.evse_id);
    }
  }
  return found;
}

/** What the test reads of a session as the API answers it. */
interface SessionView {
  id: string;
  status: string;
  is_active: boolean;
  failure_reason: string | null;
  consumed_energy: string;
  estimated_cost: string | null;
  session_cost: { invoice_download: string | null; invoice_summary: string | null };
}

const getSession = async (run: Run): Promise<SessionView> => {
  const res = await api(`GET session ${run.sessionId}`, 'GET', `${USERS}/${run.driver.userId}/charging-sessions/${run.sessionId}/`, run.driver.token);
  assert.equal(res.status, 200, res.text);
  return res.body as SessionView;
};

/**
 * Polls every session through the API (those not there yet, all at once, every 0.5 s like a client app) until `done` holds for
 * each; fails after `timeoutMs` naming the sessions that are not, with their status and what the bill jobs say.
 */
async function untilAll(runs: Run[], done: (s: SessionView) => boolean, what: string, timeoutMs: number): Promise<Map<string, SessionView>> {
  const seen = new Map<string, SessionView>();
  const started = performance.now();
  for (;;) {
    const waiting = runs.filter((r) => !seen.has(r.sessionId));
    const views = await Promise.all(waiting.map(getSession));
    views.forEach((s, i) => {
      if (done(s)) seen.set((waiting[i] as Run).sessionId, s);
    });
    const left = waiting.filter((r) => !seen.has(r.sessionId));
    if (left.length === 0) return seen;
    if (performance.now() - started > timeoutMs) {
      const states = views.filter((s) => !done(s)).map((s) => `${s.id}: ${s.status}${s.failure_reason ? ` (${s.failure_reason})` : ''}`);
      const { rows: jobs } = await ctx.db.query<{ queue: string; key: string; state: string; attempts: number; last_error: string | null }>(
        "SELECT queue, key, state, attempts, last_error FROM jobs WHERE state <> 'done' OR attempts > 1 ORDER BY id",
      );
      assert.fail(`${left.length} of ${runs.length} sessions not ${what} within ${timeoutMs} ms:\n${states.join('\n')}\njobs: ${JSON.stringify(jobs)}`);
    }
    await sleep(500);
  }
}

/** SESSIONS users of their own clients, with complete billing details and a card each (created a few at a time). */
async function drivers(): Promise<Driver[]> {
  const list: Driver[] = [];
  while (list.length < SESSIONS) {
    const batch = Array.from({ length: Math.min(10, SESSIONS - list.length) }, (_, k) =>
      newDriver(ctx, { firstName: 'Driver', lastName: String(list.length + k + 1) }),
    );
    list.push(...(await Promise.all(batch)));
  }
  return list;
}

describe(`${SESSIONS} concurrent charging sessions, end to end`, () => {
  let runs: Run[] = [];
  let completed = new Map<string, SessionView>();

  it('all start at once (201), become active and charge, all stop at once (204), complete and are invoiced', async () => {
    const evses = availableEvses(SESSIONS);
    assert.equal(new Set(evses).size, SESSIONS, `${SESSIONS} distinct available ordinary EVSEs in the first ${LOCATIONS} locations`);
    const users = await drivers();

    const starts = await Promise.all(
      users.map((d, i) => ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, { token: d.token, body: { payment_method_id: d.pm, evse_id: evses[i] } })),
    );
    starts.forEach((res, i) => {
      answers.push({ what: `start on ${evses[i]}`, status: res.status, text: res.text });
    });
    assert.deepEqual(
      starts.map((res, i) => (res.status === 201 ? 201 : `${evses[i]}: ${res.status} ${res.text}`)),
      starts.map(() => 201),
      'every start answered 201',
    );
    runs = starts.map((res, i) => {
      assert.equal(res.body.status, 'pending');
      assert.equal(res.body.evse_id, evses[i]);
      assert.equal(res.body.pre_authorization.status, 'authorized');
      return { driver: users[i] as Driver, evseId: evses[i] as string, sessionId: res.body.id as string };
    });
    assert.equal(new Set(runs.map((r) => r.sessionId)).size, SESSIONS, 'one session each');

    // Charging until each has a cost (the operator's Session updates brought energy worth at least a cent): each will be billed.
    await untilAll(runs, (s) => s.status === 'active' && Number(s.estimated_cost ?? 0) > 0, 'active with a cost', 30_000);

    const stops = await Promise.all(runs.map((r) => ctx.call('POST', `${USERS}/${r.driver.userId}/charging/stop/${r.sessionId}/`, { token: r.driver.token })));
    stops.forEach((res, i) => {
      answers.push({ what: `stop ${runs[i]?.sessionId}`, status: res.status, text: res.text });
    });
    assert.deepEqual(
      stops.map((res, i) => (res.status === 204 ? 204 : `${runs[i]?.sessionId}: ${res.status} ${res.text}`)),
      stops.map(() => 204),
      'every stop answered 204',
    );

    // The CPO's CDRs complete the sessions; the bill jobs capture and invoice them.
    completed = await untilAll(runs, (s) => s.status === 'completed' && s.session_cost.invoice_download !== null, 'completed with an invoice', 60_000);
  });

  it('every session completed and invoiced exactly once, as the API and our tables show', async () => {
    assert.equal(completed.size, SESSIONS);
    const ids = runs.map((r) => r.sessionId);
    for (const run of runs) {
      const s = completed.get(run.sessionId);
      assert.ok(s);
      assert.equal(s.is_active, false);
      assert.equal(s.failure_reason, null);
      assert.ok(Number(s.consumed_energy) > 0, 'energy was delivered');
      const listed = await api(`GET invoices of ${run.driver.userId}`, 'GET', `${USERS}/${run.driver.userId}/invoices/`, run.driver.token);
      assert.equal(listed.status, 200, listed.text);
      assert.equal(listed.body.count, 1, `one invoice for ${run.sessionId}: ${listed.text}`);
      assert.equal(listed.body.results[0].charging_session_id, run.sessionId);
      assert.equal(listed.body.results[0].total, s.session_cost.invoice_summary);
    }
    const { rows: invoices } = await ctx.db.query<{ session_id: string; n: number }>(
      'SELECT session_id, count(*)::int AS n FROM invoices GROUP BY session_id ORDER BY session_id',
    );
    assert.deepEqual(
      invoices.map((i) => [i.session_id, i.n]),
      [...ids].sort().map((id) => [id, 1]),
      'exactly one invoice per session, and none for anything else',
    );
    const { rows: bills } = await ctx.db.query<{ session_id: string; step: string; gross: number; captured: number; charged: number; waived: number }>(
      'SELECT session_id, step, gross, captured, charged, waived FROM charging_bills WHERE session_id = ANY($1)',
      [ids],
    );
    assert.equal(bills.length, SESSIONS);
    for (const bill of bills) {
      assert.equal(bill.step, 'invoiced');
      assert.ok(bill.gross > 0);
      assert.deepEqual([bill.captured, bill.charged, bill.waived], [bill.gross, 0, 0], `session ${bill.session_id}: the hold paid the whole bill`);
    }
  });

  it('exactly one capture per invoice at the processor, for the invoice’s total; no other payment intent', async () => {
    const { rows: invoices } = await ctx.db.query<{ session_id: string; gross: number; currency: string; hold_reference: string }>(
      'SELECT i.session_id, i.gross, i.currency, s.hold_reference FROM invoices i JOIN charging_sessions s ON s.id = i.session_id',
    );
    assert.equal(invoices.length, SESSIONS);
    const succeeded = await processorEvents('payment_intent.succeeded');
    const captures = ctx.sandbox.requestLog.filter((r) => r.method === 'POST' && /^\/v1\/payment_intents\/[^/]+\/capture$/.test(r.path));
    for (const run of runs) {
      const invoice = invoices.find((i) => i.session_id === run.sessionId);
      assert.ok(invoice, `the invoice of ${run.sessionId}`);
      // The processor's view of the user's customer: one payment intent, the hold, captured for the invoice's total.
      const listed = await sandboxApi(ctx, 'GET', '/v1/payment_intents', [
        ['customer', await customerOf(ctx, run.driver.userId)],
        ['limit', '100'],
      ]);
      assert.equal(listed.status, 200);
      const intents = listed.body.data as {
        id: string;
        status: string;
        capture_method: string;
        amount: number;
        amount_received: number;
        currency: string;
        latest_charge: string;
        metadata: Record<string, string>;
      }[];
      assert.equal(intents.length, 1, `one payment intent for ${run.sessionId}: ${JSON.stringify(intents)}`);
      const pi = intents[0] as (typeof intents)[number];
      assert.equal(pi.metadata.reference, invoice.hold_reference);
      assert.equal(pi.capture_method, 'manual');
      assert.equal(pi.status, 'succeeded');
      assert.equal(pi.amount_received, invoice.gross, `${pi.id}: captured the invoice’s total`);
      assert.equal(pi.currency, invoice.currency.toLowerCase());
      const charge = await sandboxApi(ctx, 'GET', `/v1/charges/${pi.latest_charge}`);
      assert.equal(charge.body.captured, true);
      assert.equal(charge.body.amount_captured, invoice.gross);
      assert.equal(succeeded.filter((e) => e === pi.id).length, 1, `one payment_intent.succeeded event for ${pi.id}`);
      const sent = captures.filter((r) => r.path === `/v1/payment_intents/${pi.id}/capture` && r.status === 200 && !r.replayed);
      assert.equal(sent.length, 1, `one capture request that captured ${pi.id}`);
      assert.equal(sent[0]?.params.amount_to_capture, String(invoice.gross));
    }
  });

  it('no hold is left authorized, at the processor or in our records', async () => {
    const { rows: holds } = await ctx.db.query<{ reference: string; status: string; amount_captured: number; amount_capturable: number }>(
      'SELECT reference, status, amount_captured, amount_capturable FROM payment_holds ORDER BY reference',
    );
    assert.equal(holds.length, SESSIONS);
    for (const hold of holds) {
      assert.equal(hold.status, 'captured', hold.reference);
      assert.equal(hold.amount_capturable, 0, hold.reference);
    }
    const open: string[] = [];
    for (let after: string | undefined, more = true; more; ) {
      const page = await sandboxApi(ctx, 'GET', '/v1/payment_intents', [
        ['limit', '100'],
        ...(after ? ([['starting_after', after]] as [string, string][]) : []),
      ]);
      const data = page.body.data as { id: string; status: string }[];
      open.push(...data.filter((pi) => pi.status !== 'succeeded' && pi.status !== 'canceled').map((pi) => `${pi.id} ${pi.status}`));
      more = page.body.has_more === true;
      after = data.at(-1)?.id;
    }
    assert.deepEqual(open, [], 'every payment intent at the processor is captured or cancelled');
  });

  it(`invoice numbers are the issuer’s 1..${SESSIONS}: unique, without gaps, none taken and lost`, async () => {
    const prefix = ctx.config.invoicing.numberPrefix;
    const { rows } = await ctx.db.query<{ issuer: string; number: number; number_text: string }>(
      'SELECT issuer, number, number_text FROM invoices ORDER BY number',
    );
    assert.deepEqual(
      rows.map((r) => r.number),
      Array.from({ length: SESSIONS }, (_, k) => k + 1),
    );
    for (const r of rows) {
      assert.equal(r.issuer, prefix);
      assert.equal(r.number_text, `${prefix}-${String(r.number).padStart(6, '0')}`);
    }
    const { rows: counters } = await ctx.db.query<{ issuer: string; last_number: number }>('SELECT issuer, last_number FROM invoice_counters');
    assert.deepEqual(
      counters.map((c) => [c.issuer, Number(c.last_number)]),
      [[prefix, SESSIONS]],
    );
  });

  it('no answer was a 5xx; every bill job ran once and is done; the start deadlines were withdrawn when the CPO reported the sessions', async () => {
    assert.deepEqual(
      answers.filter((a) => a.status >= 500),
      [],
    );
    assert.deepEqual(cpoTrouble, [], 'the operator had no trouble with our OCPI answers');
    const { rows: webhooks } = await ctx.db.query(
      'SELECT event_id, attempts, last_status, last_error FROM stripe_sandbox.webhook_deliveries WHERE last_error IS NOT NULL OR last_status >= 300',
    );
    assert.deepEqual(webhooks, [], 'the processor’s webhooks were all taken');
    const { rows: stats } = await ctx.db.query<{ deadlocks: string }>('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()');
    assert.equal(Number(stats[0]?.deadlocks), 0, 'no deadlock in this test’s database');
    // The start deadlines were withdrawn as the CPO reported each session: past them, nothing runs.
    ctx.clock.advance(ctx.config.charging.startTimeoutMs + 60_000);
    await ctx.jobs.runDue();
    const { rows } = await ctx.db.query<{ queue: string; state: string; attempts: number; n: number }>(
      'SELECT queue, state, attempts, count(*)::int AS n FROM jobs GROUP BY queue, state, attempts ORDER BY queue, state, attempts',
    );
    assert.deepEqual(
      rows.map((r) => [r.queue, r.state, r.attempts, r.n]),
      [['invoicing.bill', 'done', 1, SESSIONS]],
      'one bill job per session, done at its first run; no start deadline left',
    );
    const { rows: sessions } = await ctx.db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM charging_sessions GROUP BY status');
    assert.deepEqual(
      sessions.map((r) => [r.status, r.n]),
      [['completed', SESSIONS]],
    );
  });
});

/** The ids of the payment intents of every processor event of this type (all pages). */
async function processorEvents(type: string): Promise<string[]> {
  const ids: string[] = [];
  for (let after: string | undefined, more = true; more; ) {
    const page = await sandboxApi(ctx, 'GET', '/v1/events', [
      ['type', type],
      ['limit', '100'],
      ...(after ? ([['starting_after', after]] as [string, string][]) : []),
    ]);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    const data = page.body.data as { id: string; data: { object: { id: string } } }[];
    ids.push(...data.map((e) => e.data.object.id));
    more = page.body.has_more === true;
    after = data.at(-1)?.id;
  }
  return ids;
}
