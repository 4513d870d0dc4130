// The bill job: a completed session's CDR -> priced -> settled -> invoiced.
//
// A CDR queues one bill job per session (a durable job with the session id as
// its key). The job moves the session's bill forward one step at a time, each
// written before the next:
//   priced    our tariff engine priced the CDR's charging periods (and the CPO's
//             total was compared: a difference beyond one cent is logged and
//             flagged; CHARGING_PRICE_POLICY says which wins); the operator's
//             starting fee is added. Lines are rounded per component, and the
//             totals are the sums of the lines, so the invoice adds up.
//   settled   the hold was captured up to the total (the rest is released by
//             the capture) and any excess charged off-session; a failed final
//             charge became a debt the user pays with the processor's SDK.
//   invoiced  the invoice was issued with the issuer's next number, taken in
//             the transaction that inserts it: numbers have no gaps.
// Every processor call has a key derived from the session (capture:
// `<hold reference>:capture:<amount>`, charge: `session:<id>:charge:<amount>`),
// so a retried job, a duplicate CDR or a crash between two steps never
// charges twice. Sessions without energy are not billed: the hold is released.
// A CDR in another currency than the session's hold is never billed as it is:
// the bill is `held` for the operator (held-bills.ts releases it).
import { randomUUID } from 'node:crypto';
import Big from 'big.js';
import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import { AppError } from '../../platform/errors.ts';
import { enqueue, RetryLater } from '../../platform/jobs.ts';
import { minimumCharge, toMinorUnits } from '../../platform/money.ts';
import { priceCdr } from '../../pricing/price-cdr.ts';
import type { SessionRow } from '../charging/repository.ts';
import { recordEvent } from '../events/outbox.ts';
import type { InvoicingContext } from './context.ts';
import { recordDebtEvent } from './debts.ts';
import { invoiceDocument, invoiceNumberText, invoiceView } from './documents.ts';
import { paymentMethodOf } from './payment-state.ts';
import { INVOICING_QUEUES } from './queues.ts';
import * as repo from './repository.ts';

/** Hold states in which the hold still blocks money on the card: it is released when nothing is captured from it. */
const RELEASABLE = ['authorized', 'requires_action', 'pending', 'processing'];

/** Bills, settles and invoices a completed session, resuming at the step it reached. */
export async function billSession(ctx: InvoicingContext, sessionId: string): Promise<void> {
  const session = await ctx.session(sessionId);
  if (session?.status !== 'completed') return;
  let bill = await price(ctx, session);
  // Held for the operator (bills release decides): nothing is captured, released or invoiced meanwhile.
  if (bill.step === 'held') return;
  if (bill.step === 'not_billed' || bill.step === 'waived') {
    // Nothing to pay: the hold is released.
    const hold = (await ctx.payments.getHolds(ctx.db, session.client_id, [session.hold_reference])).get(session.hold_reference);
    if (hold && RELEASABLE.includes(hold.status)) await ctx.payments.releaseHold(session.client_id, session.hold_reference);
    return;
  }
  if (bill.step === 'priced') {
    ctx.crash('bill:priced');
    await settle(ctx, session, bill);
    bill = (await repo.findBill(ctx.db, session.id)) as repo.BillRow;
    ctx.crash('bill:settled');
  }
  if (bill.step === 'settled') await issue(ctx, session, bill);
}

/** Queues the bill job again for completed sessions whose bill is not finished (a lost job, a crash); returns how many. */
export async function requeueUnfinishedBills(ctx: Pick<InvoicingContext, 'db' | 'clock'>, completedSessionIds: readonly string[]): Promise<number> {
  if (completedSessionIds.length === 0) return 0;
  const finished = await repo.sessionsWithFinishedBill(ctx.db, completedSessionIds);
  let queued = 0;
  for (const id of completedSessionIds) {
    if (finished.has(id)) continue;
    const job = await enqueue(ctx.db, { queue: INVOICING_QUEUES.bill, payload: { session_id: id }, key: id, maxAttempts: 50 }, ctx.clock.now());
    if (job.created) queued++;
  }
  return queued;
}

const sumOf = (lines: repo.BillLine[], field: 'net' | 'vat' | 'gross', currency: string) =>
  toMinorUnits(lines.reduce((sum, l) => sum.plus(l[field]), new Big(0)).toString(), currency);

/**
 * What a priced CDR bills, in minor units: a session that delivered no energy, or cost nothing, is not billed (no
 * lines, nothing charged). The one rule for the bill job and for a held bill the operator releases (held-bills.ts).
 */
export function billAmounts(lines: repo.BillLine[], currency: string, totalEnergy: number | string) {
  const gross = sumOf(lines, 'gross', currency);
  const billed = new Big(String(totalEnergy)).gt(0) && gross > 0;
  return {
    step: billed ? ('priced' as const) : ('not_billed' as const),
    lines: billed ? lines : [],
    net: billed ? sumOf(lines, 'net', currency) : 0,
    vat: billed ? sumOf(lines, 'vat', currency) : 0,
    gross: billed ? gross : 0,
  };
}

/** Step 1: the priced bill, recorded once (a retried job keeps the first result). */
async function price(ctx: InvoicingContext, session: SessionRow): Promise<repo.BillRow> {
  const { config } = ctx;
  const existing = await repo.findBill(ctx.db, session.id);
  if (existing) return existing;
  if (!session.cdr_id || !session.cdr_country_code || !session.cdr_party_id) throw new Error(`session ${session.id} has no CDR`);
  const cdr = await ctx.cdr({ country_code: session.cdr_country_code, party_id: session.cdr_party_id, id: session.cdr_id });
  if (!cdr) throw new Error(`the CDR of session ${session.id} is missing`);
  if (cdr.currency.toUpperCase() !== session.currency.toUpperCase()) return holdForCurrency(ctx, session, cdr);
  const priced = priceCdr(session, cdr, config.pricePolicy);
  if (priced.mismatch) {
    ctx.log?.warn(
      { session_id: session.id, cdr_id: cdr.id, cdr_total: priced.cdrTotal, engine_total: priced.engineTotal, policy: config.pricePolicy },
      'the CPO’s CDR total differs from our tariff engine by more than one cent',
    );
  }
  return repo.insertBill(ctx.db, {
    session_id: session.id,
    client_id: session.client_id,
    user_id: session.user_id,
    currency: priced.currency,
    ...billAmounts(priced.lines, priced.currency, cdr.total_energy),
    cdr_total: priced.cdrTotal,
    engine_total: priced.engineTotal,
    price_mismatch: priced.mismatch,
    price_source: config.pricePolicy === 'cdr' && cdr.total_cost ? 'cdr' : 'engine',
    created_at: ctx.clock.now(),
  });
}

/**
 * A CDR in another currency than the session's tariff and payment hold: never converted at a rate we would have to
 * guess, never billed in a currency the user did not agree to. The bill is held for the operator with its reason
 * (nothing captured, no invoice) until released (held-bills.ts: at the session's own tariff, or waived).
 */
async function holdForCurrency(ctx: InvoicingContext, session: SessionRow, cdr: CDR): Promise<repo.BillRow> {
  const cdrCurrency = cdr.currency.toUpperCase();
  const cdrTotal = cdr.total_cost ? new Big(String(cdr.total_cost.incl_vat ?? cdr.total_cost.excl_vat)).toString() : null;
  const reason =
    `the CDR ${cdr.country_code}*${cdr.party_id}*${cdr.id} is in ${cdrCurrency}${cdrTotal === null ? '' : ` (total ${cdrTotal} ${cdrCurrency})`}, ` +
    `the session's tariff and payment hold in ${session.currency.toUpperCase()}: not converted; released by the operator`;
  ctx.log?.warn(
    { session_id: session.id, cdr_id: cdr.id, cdr_currency: cdrCurrency, hold_currency: session.currency, reason },
    'bill held for the operator (charging-access bills held): the CDR is in another currency than the session’s hold',
  );
  return repo.insertBill(ctx.db, {
    session_id: session.id,
    client_id: session.client_id,
    user_id: session.user_id,
    step: 'held',
    currency: cdrCurrency,
    lines: [],
    net: 0,
    vat: 0,
    gross: 0,
    cdr_total: cdrTotal,
    engine_total: '0',
    price_mismatch: false,
    price_source: 'cdr',
    created_at: ctx.clock.now(),
    held_reason: reason,
  });
}

/**
 * Whether to capture the hold. Yes when it covers the bill or the rest beyond it can be charged on its own (at
 * least the processor's minimum charge). When the rest is below that minimum but the whole amount is not, the
 * hold is released and the whole amount charged off-session instead. When even the whole amount is below the
 * minimum, the hold is captured (a capture has no minimum) and the rest is waived (see `settle`).
 * Decided from the bill and the hold alone, so a re-run after a crash takes the same path with the same keys.
 */
export const capturable = (gross: number, held: number, currency: string) =>
  gross <= held || gross - held >= minimumCharge(currency) || gross < minimumCharge(currency);

/** Step 2: capture up to the hold, charge the rest off-session, a failed charge becomes a debt. */
async function settle(ctx: InvoicingContext, session: SessionRow, bill: repo.BillRow): Promise<void> {
  const { db, clock, log } = ctx;
  const captured = await captureHold(ctx, session, bill);
  const excess = bill.gross - captured;
  let charged = 0;
  let intentId: string | null = null;
  let debt: { paymentIntentId: string; clientSecret: string } | undefined;
  // Below the processor's minimum charge nothing can take the rest: not a charge (refused on every retry) and
  // not a debt (its payment would be refused the same way). It is waived, and the invoice says so.
  const waived = excess > 0 && excess < minimumCharge(bill.currency) ? excess : 0;
  if (waived > 0) {
    log?.warn(
      { session_id: session.id, amount: waived, currency: bill.currency },
      'the rest of the bill is below the processor’s minimum charge and no hold covers it: waived',
    );
  } else if (excess > 0) {
    const outcome = await ctx.payments.chargeOffSession({
      clientId: session.client_id,
      userId: session.user_id,
      paymentMethodId: session.payment_method_id,
      amount: excess,
      currency: bill.currency,
      reference: `session:${session.id}:charge`,
      idempotencyKey: `session:${session.id}:charge:${excess}`,
      description: `Charging session ${session.id}`,
    });
    if (outcome.status === 'processing') throw new RetryLater(30_000, 'the final charge is processing');
    if (outcome.status === 'succeeded') {
      ctx.crash('bill:charged');
      charged = outcome.amountReceived;
      intentId = outcome.paymentIntentId;
    } else {
      const id = outcome.paymentIntentId;
      const intent = id ? await ctx.payments.paymentIntent(id) : undefined;
      if (!id || !intent) throw new Error(`the failed final charge of session ${session.id} left no payment intent to pay the debt with`);
      intentId = id;
      debt = { paymentIntentId: id, clientSecret: intent.clientSecret };
      log?.warn({ session_id: session.id, amount: excess, status: outcome.status }, 'the final charge failed: the user owes it (debt)');
    }
  }
  await db.transaction(async (tx) => {
    if (debt) {
      const row: repo.DebtRow = {
        session_id: session.id,
        client_id: session.client_id,
        user_id: session.user_id,
        payment_method_id: session.payment_method_id,
        payment_intent_id: debt.paymentIntentId,
        client_secret: debt.clientSecret,
        amount: excess,
        currency: bill.currency,
        status: 'unpaid',
        created_at: clock.now(),
        paid_at: null,
      };
      if (await repo.insertDebt(tx, row)) await recordDebtEvent(ctx, tx, 'debt.created', row);
    }
    await repo.settleBill(tx, session.id, { captured, charged, waived, charge_payment_intent_id: intentId }, clock.now());
  });
}

/** What the session's hold pays of the bill (in minor units): captured now or before; a hold not used is released. */
async function captureHold(ctx: InvoicingContext, session: SessionRow, bill: repo.BillRow): Promise<number> {
  const hold = (await ctx.payments.getHolds(ctx.db, session.client_id, [session.hold_reference])).get(session.hold_reference);
  let captured = 0;
  const sameCurrency = hold?.currency.toUpperCase() === bill.currency;
  if (hold && sameCurrency && hold.status === 'captured') captured = hold.amountCaptured;
  else if (hold && sameCurrency && hold.status === 'authorized' && capturable(bill.gross, hold.amountCapturable, bill.currency)) {
    const amount = Math.min(bill.gross, hold.amountCapturable);
    try {
      captured = (await ctx.payments.captureHold(session.client_id, session.hold_reference, amount)).amountCaptured;
      ctx.crash('bill:captured');
    } catch (error) {
      // Not capturable after all (lapsed meanwhile): the whole amount is charged below.
      if (!(error instanceof AppError && error.code === 'conflict')) throw error;
      ctx.log?.warn({ session_id: session.id }, 'the hold could not be captured; charging the whole amount');
    }
  }
  if (hold && captured === 0 && RELEASABLE.includes(hold.status)) await ctx.payments.releaseHold(session.client_id, session.hold_reference);
  return captured;
}

/** Step 3: the invoice, with the issuer's next number in the same transaction. */
async function issue(ctx: InvoicingContext, session: SessionRow, bill: repo.BillRow): Promise<void> {
  const { db, config } = ctx;
  const billing = await ctx.users.getBillingDetails(db, session.client_id, session.user_id);
  const paymentMethod = await paymentMethodOf(ctx, db, { clientId: session.client_id, userId: session.user_id }, session.payment_method_id);
  const now = ctx.clock.now();
  await db.transaction(async (tx) => {
    const locked = await repo.findBill(tx, session.id, { forUpdate: true });
    if (locked?.step !== 'settled') return;
    await repo.markBillInvoiced(tx, session.id, now);
    // The number last: its counter row is locked from here to the commit (every invoice of the issuer waits for it).
    const number = await repo.nextInvoiceNumber(tx, config.numberPrefix);
    const document = invoiceDocument(config, session, billing, locked, invoiceNumberText(config.numberPrefix, number), now, paymentMethod);
    const invoice: repo.InvoiceRow = {
      id: randomUUID(),
      issuer: config.numberPrefix,
      number,
      number_text: document.number,
      client_id: session.client_id,
      user_id: session.user_id,
      session_id: session.id,
      currency: bill.currency,
      net: locked.net,
      vat: locked.vat,
      gross: locked.gross,
      refunded: false,
      document: { ...document, issueDate: now.toISOString() },
      issued_at: now,
    };
    await repo.insertInvoice(tx, invoice);
    // The session's live stream carries it too: the session's cost is final and invoiced.
    await recordEvent(
      tx,
      { clientId: invoice.client_id, userId: invoice.user_id, type: 'invoice.created', object: await invoiceView(ctx, invoice), sessionId: session.id },
      now,
    );
  });
}
