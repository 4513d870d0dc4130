// Charges at once, without a hold (e.g. a session's cost beyond its hold, a
// debt paid later), and where a payment intent stands: what invoicing uses.
import type { PaymentsContext } from './context.ts';
import { type HoldRequest, requirePositiveAmount } from './holds.ts';
import { chargeTypeOf, knownMethod, type MethodsContext } from './methods.ts';
import type { PaymentOutcome } from './processor.ts';
import { ask } from './processor-calls.ts';

/** Charges the user's method off-session at once; the outcome is a value. */
export async function chargeOffSession(ctx: MethodsContext, request: HoldRequest & { idempotencyKey: string }): Promise<PaymentOutcome> {
  requirePositiveAmount(request.amount);
  const { customerId, row } = await knownMethod(ctx, request.clientId, request.userId, request.paymentMethodId);
  return ask(ctx, () =>
    ctx.processor.chargeOffSession({
      customerId,
      paymentMethodId: row.id,
      paymentMethodType: chargeTypeOf(row.type),
      amount: request.amount,
      currency: request.currency,
      idempotencyKey: request.idempotencyKey,
      metadata: { reference: request.reference, user_id: request.userId },
      ...(request.description ? { description: request.description } : {}),
    }),
  );
}

/** Where a payment intent stands at the processor (undefined when it does not know the id). */
export async function paymentIntent(
  ctx: PaymentsContext,
  id: string,
): Promise<{ outcome: PaymentOutcome; clientSecret: string; amount: number; currency: string } | undefined> {
  const intent = await ask(ctx, () => ctx.processor.retrievePaymentIntent(id));
  return intent && { outcome: intent.outcome, clientSecret: intent.clientSecret, amount: intent.amount, currency: intent.currency };
}
