// What an invoice says about how it was paid: the payment method in words
// ("Visa •••• 4242"), and, when the PDF is fetched, the payment state as it is
// now: an amount that was due when the invoice was issued (a debt) and was paid
// since reads "Paid on <date>", never a stale "Amount due".
import type { Queryable } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import { fromMinorUnits } from '../../platform/money.ts';
import type { PaymentMethodView } from '../payments/schemas.ts';
import type { InvoicingContext } from './context.ts';
import * as repo from './repository.ts';

const BRANDS: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
  diners: 'Diners Club',
  jcb: 'JCB',
  unionpay: 'UnionPay',
  cartes_bancaires: 'Cartes Bancaires',
};

/** A payment method as an invoice names it: brand and last four digits of a card, PayPal with its e-mail. */
export function paymentMethodWords(method: PaymentMethodView): string {
  const wallet = method.type === 'apple_pay' ? 'Apple Pay ' : method.type === 'google_pay' ? 'Google Pay ' : '';
  if (method.card) return `${wallet}${BRANDS[method.card.brand] ?? method.card.brand} •••• ${method.card.last4}`;
  if (method.type === 'paypal') return method.paypal?.email ? `PayPal (${method.paypal.email})` : 'PayPal';
  return method.type;
}

/** The user's payment method in words; undefined when it is no longer known (removed since), so the invoice omits it. */
export async function paymentMethodOf(
  ctx: Pick<InvoicingContext, 'payments'>,
  q: Queryable,
  owner: { clientId: string; userId: string },
  paymentMethodId: string,
): Promise<string | undefined> {
  try {
    return paymentMethodWords(await ctx.payments.getPaymentMethod(q, owner.clientId, owner.userId, paymentMethodId));
  } catch (error) {
    if (error instanceof AppError && error.status === 404) return undefined;
    throw error;
  }
}

const isoDate = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The notes as they stand now: when the session's debt (the amount due the invoice names) was paid since the
 * invoice was issued, its "Amount due" note becomes the date and method of that payment.
 */
export async function currentPaymentNotes(
  ctx: Pick<InvoicingContext, 'db' | 'payments'>,
  invoice: repo.InvoiceRow,
  notes: readonly string[],
): Promise<string[]> {
  if (!notes.some((note) => note.startsWith('Amount due:'))) return [...notes];
  const debt = await repo.findDebtOfSession(ctx.db, invoice.client_id, invoice.session_id);
  if (debt?.status !== 'paid' || !debt.paid_at) return [...notes];
  const method = await paymentMethodOf(ctx, ctx.db, { clientId: debt.client_id, userId: debt.user_id }, debt.payment_method_id);
  const paid = `Paid on ${isoDate(debt.paid_at)}: ${fromMinorUnits(debt.amount, debt.currency)} ${debt.currency}${method ? ` with ${method}` : ''} (the amount due after the final charge failed). Nothing is due.`;
  return notes.map((note) => (note.startsWith('Amount due:') ? paid : note));
}
