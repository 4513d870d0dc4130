// Charging end to end, through the API, against the sandbox CPO network and
// the sandbox payment processor over real HTTP: start (saga), live progress,
// stop, CDR, capture, invoice PDF; refusals of every kind; concurrent starts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PDFParse } from 'pdf-parse';
import type { CpoSandbox, Scenario } from '../src/sandbox/cpo/index.ts';
import { newDriver, scenarioEvse, startCpoNetwork } from './charging-support.ts';
import { assertProblem, setupTestApp, type TestContext } from './helpers.ts';
import { CARDS, eventually, newOwner, type Owner, USERS } from './payments-support.ts';

let ctx: TestContext;
let cpo: CpoSandbox;

before(async () => {
  ctx = await setupTestApp({ listen: 0, payments: { webhooks: true }, env: { OCPI_REQUEST_TIMEOUT_MS: '1500' } });
  cpo = await startCpoNetwork(ctx, { lateCdrDelayMs: 600, interruptAfterSeconds: 120, noUpdatesEndAfterSeconds: 120, hangMs: 3_000 });
  ctx.jobs.start();
});
after(async () => {
  await cpo?.close();
  await ctx?.close();
});

const evse = (scenario: Scenario) => scenarioEvse(cpo, scenario);

/** A user with complete billing details and a card. */
const driver = (card: string = CARDS.visa) => newDriver(ctx, { card });

const start = (d: Owner & { pm: string }, evseId: string) =>
  ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, { token: d.token, body: { payment_method_id: d.pm, evse_id: evseId } });

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

const holdOf = async (sessionId: string) =>
  (
    await ctx.db.query<{ status: string; amount: number; amount_captured: number }>(
      'SELECT status, amount, amount_captured FROM payment_holds WHERE reference = $1',
      [`session:${sessionId}`],
    )
  ).rows[0];

describe('a session from start to invoice', () => {
  it('starts (pending, hold authorized), becomes active with progress, stops, completes with a capture and an invoice PDF that adds up', async () => {
    const d = await driver();
    const started = await start(d, evse('NORMAL'));
    assert.equal(started.status, 201, started.text);
    const session = started.body;
    assert.equal(session.status, 'pending');
    assert.equal(session.is_active, true);
    assert.equal(session.evse_id, evse('NORMAL'));
    assert.equal(session.pre_authorization.status, 'authorized');
    assert.match(session.pre_authorization.amount, /^\d+\.\d{2}$/);
    assert.equal(session.session_cost.invoice_download, null);

    const active = await untilStatus(d, session.id, 'active', 5_000);
    assert.ok(active.start_time);
    const progressing = await eventually(
      async () => {
        const s = await getSession(d, session.id);
        return Number(s.consumed_energy) > 0 && s.estimated_cost !== null && Number(s.estimated_cost) > 0 ? s : undefined;
      },
      'consumed energy and an estimated cost',
      5_000,
    );
    assert.match(progressing.consumed_energy, /^\d+\.\d{3}$/);

    const stop = await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${session.id}/`, { token: d.token });
    assert.equal(stop.status, 204, stop.text);
    const again = await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${session.id}/`, { token: d.token });
    assert.ok(again.status === 204 || again.status === 409, again.text);

    const completed = await eventually(
      async () => {
        const s = await getSession(d, session.id);
        return s.status === 'completed' && s.session_cost.invoice_download ? s : undefined;
      },
      'completed with an invoice',
      15_000,
    );
    assert.equal(completed.is_active, false);
    assert.ok(Number(completed.consumed_energy) > 0);
    const cost = completed.session_cost;
    assert.ok(Number(cost.invoice_summary) > 0);
    const parts = [cost.kwh_cost, cost.time_cost, cost.session_fee_cost, cost.blocking_fee_cost, cost.starting_fee_cost].filter((p) => p !== null);
    const cents = (s: string) => Math.round(Number(s) * 100);
    assert.equal(
      parts.reduce((sum: number, p: string) => sum + cents(p), 0),
      cents(cost.invoice_summary),
      'the parts add up to the total',
    );

    // The hold was captured for exactly the total.
    const hold = await holdOf(session.id);
    assert.equal(hold?.status, 'captured');
    assert.equal(hold?.amount_captured, cents(cost.invoice_summary));

    // The invoice: listed, numbered, and its PDF (a signed link, no bearer token) shows the same totals.
    const invoices = await ctx.call('GET', `${USERS}/${d.userId}/invoices/`, { token: d.token });
    assert.equal(invoices.status, 200, invoices.text);
    assert.equal(invoices.body.count, 1);
    const invoice = invoices.body.results[0];
    assert.equal(invoice.charging_session_id, session.id);
    assert.equal(invoice.total, cost.invoice_summary);
    assert.equal(invoice.refund, false);
    assert.match(invoice.number, /^CA-\d{6}$/);
    const link = new URL(invoice.link);
    const pdf = await ctx.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    assert.equal(pdf.statusCode, 200, pdf.body);
    assert.equal(pdf.headers['content-type'], 'application/pdf');
    const text = (await new PDFParse({ data: pdf.rawPayload }).getText()).text;
    assert.ok(text.includes(invoice.number), 'number on the PDF');
    assert.ok(text.includes('Jürgen') && text.includes('Müller'), 'the customer’s names');
    assert.ok(text.includes(`${invoice.total} EUR`) || text.includes(invoice.total), `total ${invoice.total} on the PDF`);
    assert.ok(text.includes(invoice.vat), 'VAT on the PDF');
    // The operator by the name stations show, not only its OCPI party id.
    const details = await ctx.call('GET', `/api/v1/stations/details/?id=${encodeURIComponent(evse('NORMAL'))}&type=evse_id`, { token: d.token });
    assert.equal(details.status, 200, details.text);
    const operator = details.body.operator.name as string;
    assert.ok(operator, 'the station has an operator name');
    assert.ok(text.replace(/\s+/g, ' ').includes(operator), `operator ${operator} on the PDF`);

    // A forged or expired link is not found.
    const forged = await ctx.app.inject({ method: 'GET', url: `${link.pathname}?expires=${link.searchParams.get('expires')}&signature=AAAA` });
    assert.equal(forged.statusCode, 404);

    // A stop of a completed session: already_stopped.
    assertProblem(await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${session.id}/`, { token: d.token }), 409, 'already_stopped');
    // The list filters by status.
    const list = await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/?status=completed`, { token: d.token });
    assert.equal(list.body.count, 1);
    const rated = await ctx.call('PATCH', `${USERS}/${d.userId}/charging-sessions/${session.id}/`, { token: d.token, body: { rates: 4 } });
    assert.equal(rated.status, 200, rated.text);
    assert.equal(rated.body.rates, 4);
    assertProblem(
      await ctx.call('PATCH', `${USERS}/${d.userId}/charging-sessions/${session.id}/`, { token: d.token, body: { rates: 6 } }),
      400,
      'validation_error',
    );
  });
});

describe("the sandbox network's times, as a client reads them", () => {
  it('no timestamp is ahead of the clock; duration grows with real time while active; the end is when the stop took effect, as in the CDR', async () => {
    const d = await driver();
    const started = await start(d, evse('NORMAL'));
    assert.equal(started.status, 201, started.text);
    const id = started.body.id;
    /** The session read at a moment, with every timestamp it shows checked against that moment. */
    const read = async () => {
      const s = await getSession(d, id);
      const now = Date.now();
      for (const field of ['created_at', 'updated_at', 'start_time', 'end_time'] as const) {
        if (s[field]) assert.ok(Date.parse(s[field]) <= now, `${field} ${s[field]} is after now (${new Date(now).toISOString()}): ${JSON.stringify(s)}`);
      }
      return { s, now };
    };
    await untilStatus(d, id, 'active', 5_000);
    const first = await read();
    assert.ok(Date.parse(first.s.start_time) >= Date.parse(first.s.created_at), 'charging starts after the session was created');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const second = await read();
    assert.equal(second.s.status, 'active');
    const grew = second.s.duration - first.s.duration;
    const elapsed = (second.now - first.now) / 1000;
    assert.ok(Math.abs(grew - elapsed) <= 1, `duration grew ${grew} s in ${elapsed} s of real time`);
    assert.ok(Number(second.s.consumed_energy) > Number(first.s.consumed_energy), 'the energy goes on (accelerated)');

    const stopAsked = Date.now();
    const stop = await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${id}/`, { token: d.token });
    assert.equal(stop.status, 204, stop.text);
    const ended = await eventually(
      async () => {
        const { s } = await read();
        return s.status === 'completed' ? s : undefined;
      },
      'completed',
      10_000,
    );
    const [startMs, endMs] = [Date.parse(ended.start_time), Date.parse(ended.end_time)];
    assert.ok(
      endMs >= stopAsked - 50 && endMs <= Date.now(),
      `ended when the stop took effect: ${ended.end_time}, asked at ${new Date(stopAsked).toISOString()}`,
    );
    assert.equal(ended.duration, Math.floor((endMs - startMs) / 1000));
    const { rows } = await ctx.db.query<{
      data: { start_date_time: string; end_date_time: string; total_time: number; charging_periods: { start_date_time: string }[] };
    }>(
      'SELECT c.data FROM ocpi_cdrs c JOIN charging_sessions s ON (s.cdr_country_code, s.cdr_party_id, s.cdr_id) = (c.country_code, c.party_id, c.id) WHERE s.id = $1',
      [id],
    );
    const cdr = rows[0]?.data;
    assert.ok(cdr, 'the CDR is linked');
    assert.deepEqual([cdr.start_date_time, cdr.end_date_time].map(Date.parse), [startMs, endMs], "the CDR's period is the session's");
    assert.ok(Math.abs(cdr.total_time * 3600 - (endMs - startMs) / 1000) < 0.01, `total_time ${cdr.total_time} h is the real duration`);
    for (const p of cdr.charging_periods) assert.ok(Date.parse(p.start_date_time) >= startMs && Date.parse(p.start_date_time) < endMs);
  });
});

describe('refusals', () => {
  it('the operator rejects the start: 424 charging_provider_error, the session failed and its hold released', async () => {
    const d = await driver();
    const res = await start(d, evse('REJECT'));
    assertProblem(res, 424, 'charging_provider_error');
    const list = await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/`, { token: d.token });
    const failed = list.body.results[0];
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure_reason, 'rejected_by_operator');
    await eventually(async () => ((await holdOf(failed.id))?.status === 'released' ? true : undefined), 'the hold released', 5_000);
  });

  it("a session is read only through its own user, and not once the user is deleted: 404 not_found, the user's or the session's", async () => {
    const d = await driver();
    const failed = await start(d, evse('REJECT'));
    assertProblem(failed, 424, 'charging_provider_error');
    const list = await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/`, { token: d.token });
    const id: string = list.body.results[0].id;
    const path = (userId: string, sessionId = id) => `${USERS}/${userId}/charging-sessions/${sessionId}/`;
    assert.equal((await ctx.call('GET', path(d.userId.toUpperCase(), id.toUpperCase()), { token: d.token })).status, 200, 'ids in any case');
    const other = await driver(); // another client's user
    const sibling = await ctx.call('POST', `${USERS}/`, { token: d.token, body: { email: 'sibling@example.com' } });
    assert.equal(sibling.status, 201, sibling.text);
    const wrong = [
      [path(sibling.body.id), d.token, /Charging session/],
      [path(other.userId), d.token, /User/],
      [path(d.userId), other.token, /User/],
      [path('not-a-uuid'), d.token, /User/],
      [path(d.userId, 'not-a-uuid'), d.token, /Charging session/],
    ] as const;
    for (const [url, token, what] of wrong) {
      const res = await ctx.call('GET', url, { token });
      assertProblem(res, 404, 'not_found');
      assert.match(res.body.detail ?? res.body.title ?? res.text, what, url);
    }
    assert.equal((await ctx.call('DELETE', `${USERS}/${d.userId}/`, { token: d.token })).status, 204);
    const gone = await ctx.call('GET', path(d.userId), { token: d.token });
    assertProblem(gone, 404, 'not_found');
    assert.match(gone.body.detail ?? gone.body.title ?? gone.text, /User/);
  });

  it('a declined card: 402 pre_authorization_failed without a client secret; nothing started', async () => {
    const d = await driver(CARDS.chargesFail);
    const res = await start(d, evse('NORMAL'));
    assertProblem(res, 402, 'pre_authorization_failed');
    assert.equal(res.body.error.payment_intent_client_secret, undefined);
  });

  it('the bank wants authentication: 402 with the client secret; once authenticated, the next start uses that hold', async () => {
    const d = await driver(CARDS.authenticateAlways);
    const first = await start(d, evse('STOPREJECT'));
    assert.equal(first.status, 402, first.text);
    assert.equal(first.body.error.type, 'pre_authorization_failed');
    const secret = first.body.error.payment_intent_client_secret as string;
    assert.match(secret, /^pi_.+_secret_/);
    const intentId = secret.slice(0, secret.indexOf('_secret_'));
    const done = await ctx.call('POST', `/sandbox/payment_intents/${intentId}/authenticate`, { body: { client_secret: secret, outcome: 'approve' } });
    assert.equal(done.status, 200, done.text);
    const second = await start(d, evse('STOPREJECT'));
    assert.equal(second.status, 201, second.text);
    assert.equal(second.body.pre_authorization.status, 'authorized');
    const holds = await ctx.db.query('SELECT count(*)::int AS n FROM payment_holds WHERE user_id = $1', [d.userId]);
    assert.equal(holds.rows[0]?.n, 1, 'one hold for both attempts');
    // STOPREJECT: the operator refuses the stop; the session stays active.
    await untilStatus(d, second.body.id, 'active', 5_000);
    assertProblem(await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${second.body.id}/`, { token: d.token }), 424, 'charging_provider_error');
    assert.equal((await getSession(d, second.body.id)).status, 'active');
  });

  it('refusals in the order a client reads them: unknown user 404 before the EVSE; a second start where the user charges 409 already_charging', async () => {
    const d = await driver();
    // An unknown user of this client, on an EVSE that does not exist and on one that does: 404 either way.
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const evseId of ['XX*NOPE*E1', evse('NORMAL')]) {
      assertProblem(
        await ctx.call('POST', `${USERS}/${unknown}/charging/start/`, { token: d.token, body: { payment_method_id: d.pm, evse_id: evseId } }),
        404,
        'not_found',
      );
    }
    const first = await start(d, evse('NORMAL'));
    assert.equal(first.status, 201, first.text);
    await untilStatus(d, first.body.id, 'active', 5_000);
    // The user is told it charges there already (before anything about the EVSE, which its own session occupies).
    assertProblem(await start(d, evse('NORMAL')), 409, 'already_charging');
    // Also with a payment method that is not the user's: the session under way is the answer.
    assertProblem(await start({ ...d, pm: 'pm_not_mine' }, evse('NORMAL')), 409, 'already_charging');
    assert.equal((await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${first.body.id}/`, { token: d.token })).status, 204);
  });

  it('billing details, payment method, EVSE and ownership are checked first', async () => {
    const owner = await newOwner(ctx);
    const noBilling = await ctx.call('POST', `${USERS}/${owner.userId}/charging/start/`, {
      token: owner.token,
      body: { payment_method_id: 'pm_nothing', evse_id: evse('NORMAL') },
    });
    assertProblem(noBilling, 409, 'billing_data_required');
    const d = await driver();
    assertProblem(await start({ ...d, pm: 'pm_not_mine' }, evse('NORMAL')), 400, 'payment_method_error');
    assertProblem(await start(d, 'XX*NOPE*E1'), 400, 'validation_error');
    const extra = await ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, {
      token: d.token,
      body: { payment_method_id: d.pm, evse_id: evse('NORMAL'), extra: 1 },
    });
    assertProblem(extra, 400, 'validation_error');
    // Another client's user and session: 404.
    const other = await newOwner(ctx);
    assertProblem(
      await ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, { token: other.token, body: { payment_method_id: d.pm, evse_id: evse('NORMAL') } }),
      404,
      'not_found',
    );
    const list = await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/`, { token: other.token });
    assertProblem(list, 404, 'not_found');
  });
});

describe('concurrency', () => {
  it('20 parallel starts of one user on one EVSE: one session, one hold, 19 already_charging', async () => {
    const d = await driver();
    const answers = await Promise.all(Array.from({ length: 20 }, () => start(d, evse('DUPLICATE'))));
    const created = answers.filter((a) => a.status === 201);
    assert.equal(created.length, 1, answers.map((a) => `${a.status} ${a.body?.error?.type ?? ''}`).join(', '));
    for (const a of answers.filter((x) => x.status !== 201)) assertProblem(a, 409, 'already_charging');
    const holds = await ctx.db.query('SELECT count(*)::int AS n FROM payment_holds WHERE user_id = $1', [d.userId]);
    assert.equal(holds.rows[0]?.n, 1);
    const sessions = await ctx.db.query('SELECT count(*)::int AS n FROM charging_sessions WHERE user_id = $1', [d.userId]);
    assert.equal(sessions.rows[0]?.n, 1);
    // DUPLICATE sends every update twice: the session completes and is billed once.
    const id = created[0]?.body.id as string;
    await untilStatus(d, id, 'active', 5_000);
    assert.equal((await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${id}/`, { token: d.token })).status, 204);
    await eventually(async () => ((await getSession(d, id)).session_cost.invoice_download ? true : undefined), 'invoiced', 15_000);
    const invoices = await ctx.db.query('SELECT count(*)::int AS n FROM invoices WHERE session_id = $1', [id]);
    assert.equal(invoices.rows[0]?.n, 1);
  });
});
