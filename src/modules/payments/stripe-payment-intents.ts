// Payment intents at Stripe: holds (manual capture) and off-session charges,
// capturing and releasing a hold, and reading an intent back. A capture or
// release that finds the intent already moved reads it again and answers
// where it stands.
import type Stripe from 'stripe';
import type { CaptureResult, ChargeRequest, PaymentOutcome, PaymentProcessor, ProcessorPaymentIntent, ReleaseResult } from './processor.ts';
import { call, declineOf, failure, isMissing, isUnexpectedState, outcomeOf, paymentIntentOf } from './stripe-values.ts';

/** placeHold (manual capture) and chargeOffSession (automatic): confirmed off-session at once; a decline is an outcome. */
export async function charge(stripe: Stripe, request: ChargeRequest, captureMethod: 'manual' | 'automatic', operation: string): Promise<PaymentOutcome> {
  try {
    const intent = await stripe.paymentIntents.create(
      {
        amount: request.amount,
        currency: request.currency.toLowerCase(),
        customer: request.customerId,
        payment_method: request.paymentMethodId,
        allowed_payment_method_types: [request.paymentMethodType],
        capture_method: captureMethod,
        confirm: true,
        off_session: true,
        ...(request.description ? { description: request.description } : {}),
        ...(request.metadata ? { metadata: request.metadata } : {}),
        expand: ['latest_charge'],
      },
      { idempotencyKey: request.idempotencyKey },
    );
    return outcomeOf(intent);
  } catch (error) {
    const outcome = declineOf(error);
    if (outcome) return outcome;
    throw failure(error, operation);
  }
}

async function retrieveIntent(stripe: Stripe, id: string): Promise<Stripe.PaymentIntent | undefined> {
  try {
    return await stripe.paymentIntents.retrieve(id, { expand: ['latest_charge'] });
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw failure(error, 'retrieving a payment intent');
  }
}

export async function captureHold(stripe: Stripe, input: Parameters<PaymentProcessor['captureHold']>[0]): Promise<CaptureResult> {
  try {
    const intent = await stripe.paymentIntents.capture(input.paymentIntentId, { amount_to_capture: input.amount }, { idempotencyKey: input.idempotencyKey });
    return { status: 'captured', paymentIntentId: intent.id, amountCaptured: intent.amount_received };
  } catch (error) {
    if (!isUnexpectedState(error)) throw failure(error, 'capturing a hold');
    const intent = await retrieveIntent(stripe, input.paymentIntentId);
    if (intent?.status === 'succeeded') return { status: 'captured', paymentIntentId: intent.id, amountCaptured: intent.amount_received };
    return {
      status: 'not_capturable',
      paymentIntentId: input.paymentIntentId,
      intentStatus: intent?.status ?? 'unknown',
      reason: intent?.cancellation_reason ?? null,
    };
  }
}

export async function releaseHold(stripe: Stripe, input: Parameters<PaymentProcessor['releaseHold']>[0]): Promise<ReleaseResult> {
  try {
    const intent = await stripe.paymentIntents.cancel(input.paymentIntentId, {}, { idempotencyKey: input.idempotencyKey });
    return { status: 'released', paymentIntentId: intent.id, reason: intent.cancellation_reason };
  } catch (error) {
    if (!isUnexpectedState(error)) throw failure(error, 'releasing a hold');
    const intent = await retrieveIntent(stripe, input.paymentIntentId);
    if (intent?.status === 'canceled') return { status: 'released', paymentIntentId: intent.id, reason: intent.cancellation_reason };
    return { status: 'not_releasable', paymentIntentId: input.paymentIntentId, intentStatus: intent?.status ?? 'unknown' };
  }
}

export async function retrievePaymentIntent(stripe: Stripe, id: string): Promise<ProcessorPaymentIntent | undefined> {
  const intent = await retrieveIntent(stripe, id);
  return intent ? paymentIntentOf(intent) : undefined;
}

export async function findPaymentIntent(
  stripe: Stripe,
  input: Parameters<PaymentProcessor['findPaymentIntent']>[0],
): Promise<ProcessorPaymentIntent | undefined> {
  // Listed by customer, newest first (search is not available everywhere and lags behind): stop at createdSince.
  const since = Math.floor(input.createdSince.getTime() / 1000);
  const found = await call('listing payment intents', async () => {
    for await (const intent of stripe.paymentIntents.list({ customer: input.customerId, limit: 100 })) {
      if (intent.created < since) return undefined;
      if (intent.metadata?.[input.metadataKey] === input.metadataValue) return intent.id;
    }
    return undefined;
  });
  // Read again with its latest charge (capture_before), as retrievePaymentIntent answers it.
  const intent = found ? await retrieveIntent(stripe, found) : undefined;
  return intent ? paymentIntentOf(intent) : undefined;
}
