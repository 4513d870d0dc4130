// What Stripe answers, as the PaymentProcessor's values: payment intents,
// payment methods and setup intents mapped to the port's types, card errors
// as declines (outcomes, not exceptions), every other failure as a
// PaymentProcessorError without the processor's wording about keys or secrets.
import Stripe from 'stripe';
import {
  type PaymentOutcome,
  PaymentProcessorError,
  type ProcessorPaymentIntent,
  type ProcessorPaymentMethod,
  type ProcessorSetupIntent,
} from './processor.ts';

/** Soft declines: the same method may succeed later. */
const RETRYABLE_DECLINES = new Set([
  'insufficient_funds',
  'processing_error',
  'try_again_later',
  'issuer_not_available',
  'reenter_transaction',
  'approve_with_id',
]);

function captureBeforeOf(intent: Stripe.PaymentIntent): Date | null {
  const charge = intent.latest_charge;
  if (!charge || typeof charge === 'string') return null;
  const seconds = charge.payment_method_details?.card?.capture_before;
  return typeof seconds === 'number' ? new Date(seconds * 1000) : null;
}

function declined(intentId: string | null, code: string | undefined, declineCode: string | undefined | null, message: string): PaymentOutcome {
  const reason = declineCode || code || 'declined';
  return {
    status: 'declined',
    paymentIntentId: intentId,
    code: code || 'card_declined',
    declineCode: declineCode || null,
    message,
    retryable: RETRYABLE_DECLINES.has(reason) || RETRYABLE_DECLINES.has(code ?? ''),
  };
}

/** A payment intent's state as a value. */
export function outcomeOf(intent: Stripe.PaymentIntent): PaymentOutcome {
  const id = intent.id;
  switch (intent.status) {
    case 'requires_capture':
      return { status: 'authorized', paymentIntentId: id, amountCapturable: intent.amount_capturable, captureBefore: captureBeforeOf(intent) };
    case 'succeeded':
      return { status: 'succeeded', paymentIntentId: id, amountReceived: intent.amount_received };
    case 'requires_action':
      return { status: 'requires_action', paymentIntentId: id, clientSecret: intent.client_secret ?? '', code: null };
    case 'processing':
      return { status: 'processing', paymentIntentId: id };
    case 'canceled':
      return { status: 'canceled', paymentIntentId: id, reason: intent.cancellation_reason };
    default: {
      // requires_payment_method after a failed attempt (or requires_confirmation: never confirmed).
      const error = intent.last_payment_error;
      if (error?.code === 'authentication_required') {
        return { status: 'requires_action', paymentIntentId: id, clientSecret: intent.client_secret ?? '', code: 'authentication_required' };
      }
      if (error) return declined(id, error.code, error.decline_code, error.message ?? 'The payment was declined.');
      return declined(id, 'incomplete', null, `The payment intent has status ${intent.status}.`);
    }
  }
}

export function paymentIntentOf(intent: Stripe.PaymentIntent): ProcessorPaymentIntent {
  return {
    id: intent.id,
    outcome: outcomeOf(intent),
    amount: intent.amount,
    amountCapturable: intent.amount_capturable,
    amountReceived: intent.amount_received,
    currency: intent.currency,
    customerId: typeof intent.customer === 'string' ? intent.customer : (intent.customer?.id ?? null),
    clientSecret: intent.client_secret ?? '',
    captureMethod: intent.capture_method === 'manual' ? 'manual' : 'automatic',
    metadata: { ...(intent.metadata ?? {}) },
    created: new Date(intent.created * 1000),
  };
}

export function paymentMethodOf(pm: Stripe.PaymentMethod): ProcessorPaymentMethod {
  const customer = typeof pm.customer === 'string' ? pm.customer : (pm.customer?.id ?? null);
  const wallet = pm.card?.wallet?.type;
  const type =
    pm.type === 'card' ? (wallet === 'apple_pay' ? 'apple_pay' : wallet === 'google_pay' ? 'google_pay' : 'card') : pm.type === 'paypal' ? 'paypal' : 'other';
  return {
    id: pm.id,
    customerId: customer,
    type,
    created: new Date(pm.created * 1000),
    card: pm.card
      ? { brand: pm.card.brand, last4: pm.card.last4, expMonth: pm.card.exp_month, expYear: pm.card.exp_year, cardholderName: pm.billing_details?.name ?? null }
      : null,
    paypal: pm.type === 'paypal' ? { email: pm.paypal?.payer_email ?? pm.billing_details?.email ?? null } : null,
  };
}

const SETUP_STATUSES: readonly ProcessorSetupIntent['status'][] = [
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
  'processing',
  'canceled',
  'succeeded',
];

export function setupIntentOf(si: Stripe.SetupIntent): ProcessorSetupIntent {
  const status = SETUP_STATUSES.find((s) => s === si.status);
  if (!status) throw new PaymentProcessorError(`Stripe answered a setup intent status this service does not know (${si.status})`, { retryable: false });
  return {
    id: si.id,
    clientSecret: si.client_secret ?? '',
    status,
    customerId: typeof si.customer === 'string' ? si.customer : (si.customer?.id ?? null),
    paymentMethodId: typeof si.payment_method === 'string' ? si.payment_method : (si.payment_method?.id ?? null),
  };
}

export const isMissing = (error: unknown) =>
  error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing' && error.statusCode === 404;
export const isUnexpectedState = (error: unknown) =>
  error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'payment_intent_unexpected_state';

/** A transport or unexpected failure, without the processor's wording about keys or secrets. */
export function failure(error: unknown, operation: string): PaymentProcessorError {
  if (error instanceof PaymentProcessorError) return error;
  if (error instanceof Stripe.errors.StripeError) {
    const retryable =
      error instanceof Stripe.errors.StripeConnectionError ||
      error instanceof Stripe.errors.StripeAPIError ||
      error instanceof Stripe.errors.StripeRateLimitError ||
      (error.statusCode ?? 0) >= 500;
    const what =
      error instanceof Stripe.errors.StripeAuthenticationError ? 'the processor refused the API key' : `${error.type}${error.code ? ` ${error.code}` : ''}`;
    return new PaymentProcessorError(`Stripe ${operation} failed: ${what}${error.requestId ? ` (request ${error.requestId})` : ''}`, {
      retryable,
      ...(error.code ? { processorCode: error.code } : {}),
      cause: error instanceof Stripe.errors.StripeAuthenticationError ? undefined : error,
    });
  }
  return new PaymentProcessorError(`Stripe ${operation} failed unexpectedly`, { retryable: true, cause: error });
}

/** One call to Stripe, any failure thrown as failure(error, operation). */
export async function call<T>(operation: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw failure(error, operation);
  }
}

/** A card error (or a payment method the processor will not charge) as an outcome; anything else is thrown. */
export function declineOf(error: unknown): PaymentOutcome | undefined {
  if (error instanceof Stripe.errors.StripeCardError) {
    const intent = error.payment_intent;
    if (error.code === 'authentication_required' && intent?.client_secret) {
      return { status: 'requires_action', paymentIntentId: intent.id, clientSecret: intent.client_secret, code: 'authentication_required' };
    }
    return declined(intent?.id ?? null, error.code, error.decline_code, error.message);
  }
  if (error instanceof Stripe.errors.StripeInvalidRequestError && error.param === 'payment_method') {
    return {
      status: 'declined',
      paymentIntentId: null,
      code: error.code ?? 'payment_method_unusable',
      declineCode: null,
      message: error.message,
      retryable: false,
    };
  }
  return undefined;
}
