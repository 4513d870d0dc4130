// Payment intents: create, confirm (charge or authorize: succeeds, needs
// 3-D Secure, or is declined with its changes committed), capture, cancel,
// the lapse of an uncaptured authorization, and the browser stand-in's 3-D Secure.
import { minimumCharge } from '../../platform/money.ts';
import { chargeOutcome, createCharge } from './charges.ts';
import { clone, type EngineContext, type StoredPaymentIntent, type StoredPaymentMethod, seconds } from './context.ts';
import { customerOr404 } from './customers.ts';
import { invalidRequest, SandboxError, unexpectedState } from './errors.ts';
import { emit } from './events.ts';
import type { FormObject } from './form.ts';
import { AWAITING_CONFIRMATION, answeringIntent, isOffSession, nextAction, PAYMENT_METHOD_TYPES, typesParam } from './intents.ts';
import { type ChargeObject, type LastError, newId, type PaymentIntentObject, type PaymentMethodObject, randomToken, sameSecret } from './objects.ts';
import { LIST_PARAMS, listOptions, Params } from './params.ts';
import { paymentMethodOr404, resolvePaymentMethod, savePaymentMethod } from './payment-methods.ts';
import { listAnswer, loadOr404 } from './reads.ts';
import * as store from './store.ts';

const MAX_AMOUNT = 99_999_999;

const PI_EXPANDABLE = ['latest_charge', 'payment_method'] as const;

export async function paymentIntentOr404(ctx: EngineContext, id: string): Promise<StoredPaymentIntent> {
  const found = await loadOr404<PaymentIntentObject>(ctx, 'payment_intent', id, { forUpdate: true });
  await expireIfDue(ctx, found);
  return found;
}

export async function paymentIntentBySecret(ctx: EngineContext, id: string, clientSecret: string): Promise<StoredPaymentIntent> {
  const found = await loadOr404<PaymentIntentObject>(ctx, 'payment_intent', id, {
    forUpdate: true,
    visible: (pi) => sameSecret(pi.client_secret, clientSecret),
  });
  await expireIfDue(ctx, found);
  return found;
}

async function expanded(ctx: EngineContext, pi: PaymentIntentObject, expand: string[]): Promise<unknown> {
  if (expand.length === 0) return pi;
  const view: Record<string, unknown> = { ...pi };
  if (expand.includes('latest_charge') && typeof pi.latest_charge === 'string') {
    view.latest_charge = (await store.loadObject<ChargeObject>(ctx.tx, pi.latest_charge, 'charge'))?.data ?? null;
  }
  if (expand.includes('payment_method') && pi.payment_method) {
    view.payment_method = (await store.loadObject<PaymentMethodObject>(ctx.tx, pi.payment_method, 'payment_method'))?.data ?? null;
  }
  return view;
}

export async function createPaymentIntent(ctx: EngineContext, raw: FormObject): Promise<unknown> {
  const typesName = typesParam(ctx.apiVersion);
  const params = new Params(raw, [
    'amount',
    'currency',
    'customer',
    'payment_method',
    typesName,
    'capture_method',
    'confirmation_method',
    'confirm',
    'off_session',
    'error_on_requires_action',
    'setup_future_usage',
    'metadata',
    'description',
    'statement_descriptor',
    'return_url',
    'expand',
  ]);
  const expand = params.expand(PI_EXPANDABLE);
  const amount = params.integer('amount', { required: true, max: MAX_AMOUNT }) as number;
  const currency = (params.string('currency', { required: true }) as string).toLowerCase();
  if (!/^[a-z]{3}$/.test(currency))
    throw invalidRequest(`Invalid currency: ${currency}. Stripe currently supports these currencies: eur, usd, gbp, ...`, { param: 'currency' });
  const minimum = minimumCharge(currency);
  if (amount < minimum) {
    throw invalidRequest(`Amount must be at least ${minimum} (in the smallest unit of ${currency.toUpperCase()}).`, {
      param: 'amount',
      code: 'amount_too_small',
    });
  }
  const customerId = params.string('customer') || null;
  if (customerId) await customerOr404(ctx, customerId, 'customer');
  const confirm = params.boolean('confirm') ?? false;
  const offSessionRaw = params.string('off_session');
  const offSession = isOffSession(offSessionRaw);
  if (offSessionRaw !== undefined && offSessionRaw !== '' && !['true', 'false', 'one_off', 'recurring'].includes(offSessionRaw)) {
    throw invalidRequest(`Invalid off_session: ${offSessionRaw}`, { param: 'off_session' });
  }
  if (offSession && !confirm) throw invalidRequest('off_session can only be used when confirm=true.', { param: 'off_session' });
  params.boolean('error_on_requires_action');
  params.string('return_url');
  const types = params.stringArray(typesName);
  for (const type of types ?? []) {
    if (!(PAYMENT_METHOD_TYPES as readonly string[]).includes(type)) {
      throw invalidRequest(`The payment method type "${type}" is invalid.`, { param: typesName });
    }
  }
  const pmParam = params.string('payment_method') || undefined;
  const resolved = pmParam ? await resolvePaymentMethod(ctx, pmParam, 'payment_method') : undefined;
  if (resolved?.isNew) await savePaymentMethod(ctx, resolved.pm, true);
  const id = newId('pi');
  const data: PaymentIntentObject = {
    id,
    object: 'payment_intent',
    created: seconds(ctx.now),
    allowed_payment_method_types: types && types.length > 0 ? types : null,
    amount,
    amount_capturable: 0,
    amount_received: 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: params.oneOf('capture_method', ['automatic', 'automatic_async', 'manual']) ?? 'automatic_async',
    client_secret: `${id}_secret_${randomToken(24)}`,
    confirmation_method: params.oneOf('confirmation_method', ['automatic', 'manual']) ?? 'automatic',
    currency,
    customer: customerId,
    description: params.nullableString('description') ?? null,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata: params.metadata() ?? {},
    next_action: null,
    on_behalf_of: null,
    payment_method: resolved?.pm.id ?? null,
    payment_method_types: types && types.length > 0 ? types : [resolved?.pm.data.type ?? 'card'],
    receipt_email: null,
    setup_future_usage: params.oneOf('setup_future_usage', ['off_session', 'on_session']) ?? null,
    statement_descriptor: params.nullableString('statement_descriptor', 22) ?? null,
    status: resolved ? 'requires_confirmation' : 'requires_payment_method',
  };
  const stored: StoredPaymentIntent = { id, object: 'payment_intent', customer: customerId, created: data.created, data, internal: {}, expiresAt: null };
  await store.insertObject(ctx.tx, stored);
  await emit(ctx, 'payment_intent.created', data);
  if (confirm) {
    if (!resolved) throw invalidRequest('You cannot confirm this PaymentIntent because it is missing a payment method.', { param: 'payment_method' });
    await confirmWith(ctx, stored, resolved.pm, { offSession, authenticated: false });
  }
  return expanded(ctx, stored.data, expand);
}

export async function retrievePaymentIntent(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<unknown> {
  const params = new Params(raw, ['expand', 'client_secret']);
  const expand = params.expand(PI_EXPANDABLE);
  const pi = await paymentIntentOr404(ctx, id as string);
  return expanded(ctx, pi.data, expand);
}

export async function listPaymentIntents(ctx: EngineContext, raw: FormObject): Promise<unknown> {
  const params = new Params(raw, [...LIST_PARAMS, 'customer']);
  params.expand([]);
  const customer = params.string('customer') || undefined;
  return listAnswer(ctx, '/v1/payment_intents', 'payment_intent', { object: 'payment_intent', customer }, listOptions(params));
}

export async function confirmPaymentIntent(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<unknown> {
  const params = new Params(raw, ['payment_method', 'off_session', 'return_url', 'error_on_requires_action', 'setup_future_usage', 'use_stripe_sdk', 'expand']);
  const expand = params.expand(PI_EXPANDABLE);
  params.string('return_url');
  params.boolean('error_on_requires_action');
  params.boolean('use_stripe_sdk');
  params.oneOf('setup_future_usage', ['off_session', 'on_session']);
  const offSessionRaw = params.string('off_session');
  const pi = await paymentIntentOr404(ctx, id as string);
  if (!AWAITING_CONFIRMATION.includes(pi.data.status)) {
    throw unexpectedState(
      'payment_intent',
      `This PaymentIntent's status is ${pi.data.status}, but it must be one of requires_payment_method, requires_confirmation, or requires_action to be confirmed.`,
      pi.data,
    );
  }
  const pmParam = params.string('payment_method') || pi.data.payment_method;
  if (!pmParam) throw invalidRequest('You cannot confirm this PaymentIntent because it is missing a payment method.', { param: 'payment_method' });
  const { pm, isNew } = await resolvePaymentMethod(ctx, pmParam, 'payment_method');
  if (isNew) await savePaymentMethod(ctx, pm, true);
  await confirmWith(ctx, pi, pm, {
    offSession: isOffSession(offSessionRaw),
    authenticated: false,
  });
  return expanded(ctx, pi.data, expand);
}

/** Charges (or authorizes) the payment method: succeeds, needs authentication, or is declined (402, committed). */
async function confirmWith(
  ctx: EngineContext,
  pi: StoredPaymentIntent,
  pm: StoredPaymentMethod,
  mode: { offSession: boolean; authenticated: boolean },
): Promise<void> {
  if (!pi.data.payment_method_types.includes(pm.data.type)) {
    throw invalidRequest(
      `The provided PaymentMethod (${pm.data.type}) is not allowed for this PaymentIntent; allowed types: ${pi.data.payment_method_types.join(', ')}.`,
      { param: 'payment_method' },
    );
  }
  if (pi.data.customer && pm.data.customer && pm.data.customer !== pi.data.customer) {
    throw invalidRequest('The provided PaymentMethod belongs to a different customer than this PaymentIntent.', { param: 'payment_method' });
  }
  if (pm.internal.consumed) throw invalidRequest('This PaymentMethod was detached from a Customer and may not be used again.', { param: 'payment_method' });
  if (pi.data.customer && !pm.data.customer && mode.offSession) {
    throw invalidRequest('The provided PaymentMethod must be attached to the customer to be used off-session.', { param: 'payment_method' });
  }
  pi.data.payment_method = pm.id;
  const outcome = chargeOutcome(pm.internal, mode);
  if (outcome.kind === 'needs_authentication') {
    Object.assign(pi.data, {
      status: 'requires_action',
      last_payment_error: null,
      next_action: nextAction(ctx, 'payment_intents', pi.id, pi.data.client_secret),
    });
    await store.saveObject(ctx.tx, pi);
    await emit(ctx, 'payment_intent.requires_action', pi.data);
    return;
  }
  const charge = await createCharge(ctx, pi, pm, outcome);
  if (outcome.kind === 'declined') {
    const error: LastError = {
      type: 'card_error',
      code: outcome.code,
      decline_code: outcome.declineCode,
      message: outcome.message,
      payment_method: clone(pm.data),
      charge: charge.id,
      doc_url: `https://stripe.com/docs/error-codes/${outcome.code.replaceAll('_', '-')}`,
    };
    Object.assign(pi.data, {
      status: 'requires_payment_method',
      payment_method: null,
      next_action: null,
      last_payment_error: error,
      latest_charge: charge.id,
    });
    await store.saveObject(ctx.tx, pi);
    await emit(ctx, 'payment_intent.payment_failed', pi.data);
    throw new SandboxError(
      402,
      {
        type: 'card_error',
        code: outcome.code,
        decline_code: outcome.declineCode,
        message: outcome.message,
        charge: charge.id,
        payment_intent: clone(pi.data),
        payment_method: clone(pm.data),
      },
      { commit: true },
    );
  }
  pi.data.latest_charge = charge.id;
  pi.data.last_payment_error = null;
  pi.data.next_action = null;
  if (pi.data.capture_method === 'manual') {
    pi.data.status = 'requires_capture';
    pi.data.amount_capturable = pi.data.amount;
    pi.expiresAt = new Date(ctx.now.getTime() + ctx.account.holdValidityMs);
    await store.saveObject(ctx.tx, pi);
    await emit(ctx, 'payment_intent.amount_capturable_updated', pi.data, { amount_capturable: 0 });
  } else {
    pi.data.status = 'succeeded';
    pi.data.amount_received = pi.data.amount;
    await store.saveObject(ctx.tx, pi);
    await emit(ctx, 'payment_intent.succeeded', pi.data);
  }
}

export async function capturePaymentIntent(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<unknown> {
  const params = new Params(raw, ['amount_to_capture', 'metadata', 'expand']);
  const expand = params.expand(PI_EXPANDABLE);
  const requested = params.integer('amount_to_capture', { min: 1 });
  const metadata = params.metadata();
  const pi = await paymentIntentOr404(ctx, id as string);
  if (pi.data.status !== 'requires_capture') {
    throw unexpectedState(
      'payment_intent',
      `This PaymentIntent could not be captured because it has a status of ${pi.data.status}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`,
      pi.data,
    );
  }
  const amount = requested ?? pi.data.amount_capturable;
  if (amount > pi.data.amount_capturable) {
    throw invalidRequest(
      `The amount_to_capture (${amount}) must be less than or equal to the PaymentIntent's amount_capturable (${pi.data.amount_capturable}).`,
      {
        param: 'amount_to_capture',
        code: 'amount_too_large',
      },
    );
  }
  if (metadata) pi.data.metadata = { ...pi.data.metadata, ...metadata };
  Object.assign(pi.data, { status: 'succeeded', amount_received: amount, amount_capturable: 0 });
  pi.expiresAt = null;
  if (typeof pi.data.latest_charge === 'string') {
    const charge = await store.loadObject<ChargeObject>(ctx.tx, pi.data.latest_charge, 'charge', { forUpdate: true });
    if (charge) {
      Object.assign(charge.data, { captured: true, amount_captured: amount, amount_refunded: charge.data.amount - amount });
      await store.saveObject(ctx.tx, charge);
    }
  }
  await store.saveObject(ctx.tx, pi);
  await emit(ctx, 'payment_intent.succeeded', pi.data);
  return expanded(ctx, pi.data, expand);
}

export async function cancelPaymentIntent(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<unknown> {
  const params = new Params(raw, ['cancellation_reason', 'expand']);
  const expand = params.expand(PI_EXPANDABLE);
  const reason = params.oneOf('cancellation_reason', ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned']) ?? null;
  const pi = await paymentIntentOr404(ctx, id as string);
  const cancelable = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'];
  if (!cancelable.includes(pi.data.status)) {
    throw unexpectedState(
      'payment_intent',
      `You cannot cancel this PaymentIntent because it has a status of ${pi.data.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${cancelable.join(', ')}.`,
      pi.data,
    );
  }
  await cancel(ctx, pi, reason, ctx.now);
  return expanded(ctx, pi.data, expand);
}

async function cancel(ctx: EngineContext, pi: StoredPaymentIntent, reason: string | null, at: Date): Promise<void> {
  Object.assign(pi.data, { status: 'canceled', cancellation_reason: reason, canceled_at: seconds(at), amount_capturable: 0, next_action: null });
  pi.expiresAt = null;
  await store.saveObject(ctx.tx, pi);
  await emit(ctx, 'payment_intent.canceled', pi.data);
}

/** An uncaptured authorization past its capture_before is canceled by the processor (cancellation_reason automatic). */
export async function expireIfDue(ctx: EngineContext, pi: StoredPaymentIntent): Promise<void> {
  if (pi.data.status === 'requires_capture' && pi.expiresAt && pi.expiresAt.getTime() <= ctx.now.getTime()) {
    await cancel(ctx, pi, 'automatic', pi.expiresAt);
  }
}

/** Completes (or fails) the 3-D Secure challenge of a payment intent (on-session, or after an off-session authentication_required). */
export async function authenticatePaymentIntentInBrowser(
  ctx: EngineContext,
  id: string,
  clientSecret: string,
  outcome: 'approve' | 'fail',
): Promise<PaymentIntentObject> {
  const pi = await paymentIntentBySecret(ctx, id, clientSecret);
  const pmId =
    pi.data.status === 'requires_action'
      ? pi.data.payment_method
      : pi.data.status === 'requires_payment_method' && pi.data.last_payment_error?.code === 'authentication_required'
        ? (pi.data.last_payment_error.payment_method?.id ?? null)
        : null;
  if (!pmId) {
    throw unexpectedState(
      'payment_intent',
      `This PaymentIntent has a status of ${pi.data.status}; only one that requires authentication can be authenticated.`,
      pi.data,
    );
  }
  const pm = await paymentMethodOr404(ctx, pmId);
  if (outcome === 'approve') {
    return answeringIntent(
      async () => {
        await confirmWith(ctx, pi, pm, { offSession: false, authenticated: true });
        return pi.data;
      },
      () => pi.data,
    );
  }
  Object.assign(pi.data, {
    status: 'requires_payment_method',
    payment_method: null,
    next_action: null,
    last_payment_error: {
      type: 'invalid_request_error',
      code: 'payment_intent_authentication_failure',
      message:
        'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
      payment_method: clone(pm.data),
    },
  });
  await store.saveObject(ctx.tx, pi);
  await emit(ctx, 'payment_intent.payment_failed', pi.data);
  return pi.data;
}
