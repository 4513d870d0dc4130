// A payment method as clients read it (the API's view), and the client events that carry it:
// payment_method.attached when a method becomes usable for the user (the mirror learns of it: the processor's
// webhook, a list or a start that adopts it) and payment_method.detached when it leaves the mirror (removed
// through the API, or detached at the processor). Each is recorded in the transaction that changes the mirror.
import type { Queryable } from '../../platform/db.ts';
import { recordEvent } from '../events/outbox.ts';
import type { PaymentsContext } from './context.ts';
import * as repo from './repository.ts';
import type { PaymentMethodView } from './schemas.ts';

function expirationDate(month: number | null, year: number | null): string {
  if (month === null || year === null) return '';
  return `${String(month).padStart(2, '0')}/${String(year % 100).padStart(2, '0')}`;
}

export function paymentMethodView(row: repo.PaymentMethodRow): PaymentMethodView {
  const view: PaymentMethodView = {
    id: row.id,
    type: row.type === 'paypal' || row.type === 'apple_pay' || row.type === 'google_pay' ? row.type : 'card',
    default: row.is_default,
    created_at: row.created_at.toISOString(),
  };
  if (row.type !== 'paypal') {
    view.card = {
      brand: row.card_brand ?? 'unknown',
      last4: row.card_last4 ?? '',
      expiration_date: expirationDate(row.card_exp_month, row.card_exp_year),
      cardholder_name: row.cardholder_name,
    };
  } else {
    view.paypal = { email: row.paypal_email };
  }
  return view;
}

/** payment_method.attached for each of `ids` (new to the mirror in `tx`), as `tx` shows them now (with the default it set). */
export async function recordAttached(ctx: Pick<PaymentsContext, 'clock'>, tx: Queryable, owner: repo.Owner, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const row = await repo.findPaymentMethod(tx, owner, id);
    if (!row) continue;
    await recordEvent(tx, { clientId: owner.clientId, userId: owner.userId, type: 'payment_method.attached', object: paymentMethodView(row) }, ctx.clock.now());
  }
}

/** payment_method.detached for a method `tx` removed from the mirror, as it was. */
export async function recordDetached(ctx: Pick<PaymentsContext, 'clock'>, tx: Queryable, owner: repo.Owner, row: repo.PaymentMethodRow): Promise<void> {
  await recordEvent(tx, { clientId: owner.clientId, userId: owner.userId, type: 'payment_method.detached', object: paymentMethodView(row) }, ctx.clock.now());
}
