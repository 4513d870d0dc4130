// Debts: a final charge that failed is owed by the user, who pays it with the
// processor's SDK (the payment intent's client secret). While a debt is unpaid
// the user cannot start charging, a CPO's real-time authorization answers
// NO_CREDIT, and no payment method can be removed.
import { atomically, type Queryable } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import { fromMinorUnits } from '../../platform/money.ts';
import { recordEvent } from '../events/outbox.ts';
import type { InvoicingContext } from './context.ts';
import * as repo from './repository.ts';
import type { DebtView } from './schemas.ts';

/** A debt as clients read it (GET .../charging/debts/, and the debt.* events). */
export function debtView(d: repo.DebtRow): DebtView {
  return {
    session_id: d.session_id,
    payment_intent_client_secret: d.client_secret,
    amount: fromMinorUnits(d.amount, d.currency),
    currency: d.currency,
  };
}

/**
 * debt.created or debt.paid, in the transaction that inserted the debt or marked it paid. The session's live
 * stream carries it too (a debt is what a session left unpaid).
 */
export function recordDebtEvent(ctx: Pick<InvoicingContext, 'clock'>, tx: Queryable, type: 'debt.created' | 'debt.paid', debt: repo.DebtRow): Promise<unknown> {
  return recordEvent(tx, { clientId: debt.client_id, userId: debt.user_id, type, object: debtView(debt), sessionId: debt.session_id }, ctx.clock.now());
}

/** The user's unpaid debts; each is re-read from the processor first (a payment whose webhook is late clears it). */
export async function listDebts(
  ctx: InvoicingContext,
  clientId: string,
  userId: string,
  page: { limit: number; offset: number },
): Promise<{ count: number; results: DebtView[] }> {
  await ctx.users.requireUser(ctx.db, clientId, userId);
  let listed = await repo.unpaidDebts(ctx.db, clientId, userId, page);
  let cleared = false;
  for (const debt of listed.rows) cleared = (await refreshDebt(ctx, debt.payment_intent_id)) || cleared;
  if (cleared) listed = await repo.unpaidDebts(ctx.db, clientId, userId, page);
  return {
    count: listed.count,
    results: listed.rows.map(debtView),
  };
}

/** Marks a debt paid when its payment intent succeeded, with its debt.paid event (in `q`, or a transaction of its own); true when it changed. */
export async function refreshDebt(ctx: InvoicingContext, paymentIntentId: string, q: Queryable = ctx.db): Promise<boolean> {
  const intent = await ctx.payments.paymentIntent(paymentIntentId);
  if (intent?.outcome.status !== 'succeeded') return false;
  const paid = await atomically(ctx.db, q, async (tx) => {
    const debt = await repo.findDebtByIntent(tx, paymentIntentId);
    if (!debt || !(await repo.markDebtPaid(tx, debt.session_id, ctx.clock.now()))) return undefined;
    await recordDebtEvent(ctx, tx, 'debt.paid', debt);
    return debt;
  });
  if (paid) ctx.log?.info({ session_id: paid.session_id }, 'a charging debt was paid');
  return paid !== undefined;
}

/** The payments module's hook: a debt paid through the processor's SDK clears when its webhook arrives. */
export async function paymentIntentChanged(ctx: InvoicingContext, tx: Queryable, paymentIntentId: string): Promise<void> {
  const debt = await repo.findDebtByIntent(tx, paymentIntentId, { forUpdate: true });
  if (debt?.status === 'unpaid') await refreshDebt(ctx, paymentIntentId, tx);
}

/** Real-time authorization of a user's token by a CPO: NO_CREDIT while a debt is unpaid, as a start is refused. */
export async function authorizationCheck(ctx: Pick<InvoicingContext, 'db'>, userId: string): Promise<'NO_CREDIT' | undefined> {
  return (await repo.userHasUnpaidDebt(ctx.db, userId)) ? 'NO_CREDIT' : undefined;
}

/** Removal guard of payment methods: not while a debt is unpaid. */
export async function paymentMethodGuard(tx: Queryable, target: { clientId: string; userId: string; paymentMethodId: string }): Promise<void> {
  if (await repo.hasUnpaidDebt(tx, target.clientId, target.userId)) {
    throw new AppError('payment_error', 'The user has an unpaid charging debt; pay it before removing a payment method.');
  }
}
