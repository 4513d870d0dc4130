// Charges: what a charge attempt does by card behaviour (the decline
// table), the charge object each attempt leaves, and retrieving it.
import { type EngineContext, type StoredPaymentIntent, type StoredPaymentMethod, seconds } from './context.ts';
import type { FormObject } from './form.ts';
import { type ChargeObject, newId, type PaymentMethodInternal } from './objects.ts';
import { Params } from './params.ts';
import { loadOr404 } from './reads.ts';
import * as store from './store.ts';

/** What charging a payment method does. */
export type ChargeOutcome = { kind: 'succeeds' } | { kind: 'needs_authentication' } | { kind: 'declined'; code: string; declineCode: string; message: string };

const DECLINES = {
  generic: { kind: 'declined', code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' },
  insufficientFunds: { kind: 'declined', code: 'card_declined', declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  authenticationRequired: {
    kind: 'declined',
    code: 'authentication_required',
    declineCode: 'authentication_required',
    message: 'Your card was declined. This transaction requires authentication.',
  },
} as const satisfies Record<string, ChargeOutcome>;

/** A charge attempt's result by card behaviour; `authenticated`: the customer just passed 3-D Secure. */
export function chargeOutcome(internal: PaymentMethodInternal, options: { offSession: boolean; authenticated: boolean }): ChargeOutcome {
  switch (internal.behaviour) {
    case 'insufficient_funds':
      return DECLINES.insufficientFunds;
    case 'charge_declined':
    case 'declined':
      return DECLINES.generic;
    case 'authenticate_always':
      if (options.authenticated) return { kind: 'succeeds' };
      return options.offSession ? DECLINES.authenticationRequired : { kind: 'needs_authentication' };
    case 'authenticate_unless_set_up':
      if (options.authenticated) return { kind: 'succeeds' };
      if (options.offSession) return internal.setUpOffSession ? { kind: 'succeeds' } : DECLINES.authenticationRequired;
      return { kind: 'needs_authentication' };
    default:
      return { kind: 'succeeds' };
  }
}

export async function createCharge(ctx: EngineContext, pi: StoredPaymentIntent, pm: StoredPaymentMethod, outcome: ChargeOutcome): Promise<ChargeObject> {
  const succeeded = outcome.kind === 'succeeds';
  const manual = pi.data.capture_method === 'manual';
  const captureBefore = succeeded && manual ? seconds(new Date(ctx.now.getTime() + ctx.account.holdValidityMs)) : null;
  const data: ChargeObject = {
    id: newId('ch'),
    object: 'charge',
    created: seconds(ctx.now),
    amount: pi.data.amount,
    amount_captured: succeeded && !manual ? pi.data.amount : 0,
    amount_refunded: 0,
    captured: succeeded && !manual,
    currency: pi.data.currency,
    customer: pi.data.customer,
    failure_code: outcome.kind === 'declined' ? outcome.code : null,
    failure_message: outcome.kind === 'declined' ? outcome.message : null,
    livemode: false,
    metadata: {},
    outcome: succeeded
      ? { network_status: 'approved_by_network', reason: null, seller_message: 'Payment complete.', type: 'authorized' }
      : {
          network_status: 'declined_by_network',
          reason: outcome.kind === 'declined' ? outcome.declineCode : null,
          seller_message: 'The bank did not return any further details with this decline.',
          type: 'issuer_declined',
        },
    paid: succeeded,
    payment_intent: pi.id,
    payment_method: pm.id,
    payment_method_details:
      pm.data.type === 'paypal'
        ? { type: 'paypal', paypal: { payer_email: pm.data.paypal?.payer_email ?? '' } }
        : {
            type: 'card',
            card: {
              brand: pm.data.card?.brand ?? 'unknown',
              last4: pm.data.card?.last4 ?? '',
              exp_month: pm.data.card?.exp_month ?? 12,
              exp_year: pm.data.card?.exp_year ?? 2099,
              capture_before: captureBefore,
            },
          },
    refunded: false,
    status: succeeded ? 'succeeded' : 'failed',
  };
  await store.insertObject(ctx.tx, { id: data.id, object: 'charge', customer: pi.data.customer, created: data.created, data, internal: {}, expiresAt: null });
  return data;
}

export async function retrieveCharge(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<ChargeObject> {
  new Params(raw, ['expand']).expand([]);
  return (await loadOr404<ChargeObject>(ctx, 'charge', id as string)).data;
}
