// Setup intents: create, confirm (succeeds and attaches, needs 3-D Secure,
// or is declined), cancel, and what the browser stand-in does with a client
// secret (enter a card or approve PayPal, pass or fail 3-D Secure).
import type { CardBehaviour } from './cards.ts';
import { clone, type EngineContext, type StoredPaymentMethod, type StoredSetupIntent, seconds } from './context.ts';
import { customerOr404 } from './customers.ts';
import { invalidRequest, SandboxError, type StripeErrorBody, unexpectedState } from './errors.ts';
import { emit } from './events.ts';
import type { FormObject } from './form.ts';
import { AWAITING_CONFIRMATION, answeringIntent, nextAction, PAYMENT_METHOD_TYPES, typesParam } from './intents.ts';
import { type LastError, newId, randomToken, type SetupIntentObject, sameSecret } from './objects.ts';
import { Params } from './params.ts';
import { attach, cardPaymentMethod, paymentMethodOr404, paypalPaymentMethod, resolvePaymentMethod, savePaymentMethod } from './payment-methods.ts';
import { loadOr404 } from './reads.ts';
import * as store from './store.ts';

/** What the browser stand-in sends to confirm a setup intent. */
export interface BrowserSetupInput {
  clientSecret: string;
  cardNumber?: string;
  expMonth?: number;
  expYear?: number;
  cardholderName?: string;
  wallet?: 'apple_pay' | 'google_pay';
  paypal?: 'approve' | 'decline';
  paypalEmail?: string;
}

function setupNeedsAuthentication(behaviour: CardBehaviour): boolean {
  return behaviour === 'authenticate_always' || behaviour === 'authenticate_unless_set_up';
}

export async function setupIntentOr404(ctx: EngineContext, id: string): Promise<StoredSetupIntent> {
  return loadOr404<SetupIntentObject>(ctx, 'setup_intent', id, { forUpdate: true });
}

export async function setupIntentBySecret(ctx: EngineContext, id: string, clientSecret: string): Promise<StoredSetupIntent> {
  return loadOr404<SetupIntentObject>(ctx, 'setup_intent', id, { forUpdate: true, visible: (si) => sameSecret(si.client_secret, clientSecret) });
}

export async function createSetupIntent(ctx: EngineContext, raw: FormObject): Promise<SetupIntentObject> {
  const typesName = typesParam(ctx.apiVersion);
  const params = new Params(raw, ['customer', typesName, 'usage', 'metadata', 'description', 'confirm', 'payment_method', 'return_url', 'expand']);
  params.expand([]);
  const customerId = params.string('customer') || null;
  if (customerId) await customerOr404(ctx, customerId, 'customer');
  const allowed = params.stringArray(typesName);
  const types = allowed ?? ['card'];
  if (types.length === 0) throw invalidRequest(`${typesName} must not be empty.`, { param: typesName });
  for (const type of types) {
    if (!(PAYMENT_METHOD_TYPES as readonly string[]).includes(type)) {
      throw invalidRequest(`The payment method type "${type}" is invalid. Please ensure the provided type is activated in your dashboard.`, {
        param: typesName,
      });
    }
  }
  const id = newId('seti');
  const data: SetupIntentObject = {
    id,
    object: 'setup_intent',
    created: seconds(ctx.now),
    allowed_payment_method_types: allowed ?? null,
    application: null,
    automatic_payment_methods: null,
    cancellation_reason: null,
    client_secret: `${id}_secret_${randomToken(24)}`,
    customer: customerId,
    description: params.nullableString('description') ?? null,
    excluded_payment_method_types: null,
    flow_directions: null,
    last_setup_error: null,
    latest_attempt: null,
    livemode: false,
    mandate: null,
    metadata: params.metadata() ?? {},
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_options: {},
    payment_method_types: types,
    single_use_mandate: null,
    status: 'requires_payment_method',
    usage: params.oneOf('usage', ['off_session', 'on_session']) ?? 'off_session',
  };
  const stored: StoredSetupIntent = { id, object: 'setup_intent', customer: customerId, created: data.created, data, internal: {}, expiresAt: null };
  params.string('return_url');
  const pmParam = params.string('payment_method') || undefined;
  let resolved: { pm: StoredPaymentMethod; isNew: boolean } | undefined;
  if (pmParam) {
    resolved = await resolvePaymentMethod(ctx, pmParam, 'payment_method');
    data.payment_method = resolved.pm.id;
    data.status = 'requires_confirmation';
    if (resolved.isNew) await savePaymentMethod(ctx, resolved.pm, true);
  }
  await store.insertObject(ctx.tx, stored);
  await emit(ctx, 'setup_intent.created', data);
  if (params.boolean('confirm')) {
    if (!resolved) throw invalidRequest('You cannot confirm this SetupIntent because it is missing a payment method.', { param: 'payment_method' });
    return runSetup(ctx, stored, { pm: resolved.pm, isNew: false });
  }
  return data;
}

export async function retrieveSetupIntent(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<SetupIntentObject> {
  const params = new Params(raw, ['expand', 'client_secret']);
  params.expand([]);
  return (await loadOr404<SetupIntentObject>(ctx, 'setup_intent', id as string)).data;
}

function assertConfirmable(si: StoredSetupIntent) {
  if (!AWAITING_CONFIRMATION.includes(si.data.status)) {
    throw unexpectedState('setup_intent', `You cannot confirm this SetupIntent because it has a status of ${si.data.status}.`, si.data);
  }
}

export async function confirmSetupIntent(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<SetupIntentObject> {
  const params = new Params(raw, ['payment_method', 'return_url', 'expand', 'use_stripe_sdk']);
  params.expand([]);
  params.string('return_url');
  params.boolean('use_stripe_sdk');
  const si = await setupIntentOr404(ctx, id as string);
  assertConfirmable(si);
  const pmParam = params.string('payment_method') || si.data.payment_method;
  if (!pmParam) throw invalidRequest('You cannot confirm this SetupIntent because it is missing a payment method.', { param: 'payment_method' });
  return runSetup(ctx, si, await resolvePaymentMethod(ctx, pmParam, 'payment_method'));
}

/** Sets up the payment method on the intent: succeeds (attached), needs authentication, or is declined. */
async function runSetup(ctx: EngineContext, si: StoredSetupIntent, resolved: { pm: StoredPaymentMethod; isNew: boolean }): Promise<SetupIntentObject> {
  const { pm, isNew } = resolved;
  if (!si.data.payment_method_types.includes(pm.data.type)) {
    throw invalidRequest(
      `The PaymentMethod provided (${pm.data.type}) is not allowed for this SetupIntent. Please attach a PaymentMethod of one of the following types: ${si.data.payment_method_types.join(', ')}.`,
      { param: 'payment_method' },
    );
  }
  if (pm.data.customer !== null && pm.data.customer !== si.data.customer) {
    throw invalidRequest('The provided PaymentMethod is attached to another customer.', { param: 'payment_method' });
  }
  if (pm.internal.consumed) throw invalidRequest('This PaymentMethod was detached from a Customer and may not be used again.', { param: 'payment_method' });
  if (isNew) await savePaymentMethod(ctx, pm, true);
  if (pm.internal.behaviour === 'declined') {
    const error: LastError = {
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'generic_decline',
      message: 'Your card was declined.',
      payment_method: clone(pm.data),
      doc_url: 'https://stripe.com/docs/error-codes/card-declined',
    };
    Object.assign(si.data, { status: 'requires_payment_method', payment_method: null, next_action: null, last_setup_error: error });
    await store.saveObject(ctx.tx, si);
    await emit(ctx, 'setup_intent.setup_failed', si.data);
    const body: StripeErrorBody = {
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'generic_decline',
      message: error.message,
      setup_intent: clone(si.data),
      payment_method: clone(pm.data),
    };
    throw new SandboxError(402, body, { commit: true });
  }
  if (setupNeedsAuthentication(pm.internal.behaviour)) {
    Object.assign(si.data, {
      status: 'requires_action',
      payment_method: pm.id,
      last_setup_error: null,
      next_action: nextAction(ctx, 'setup_intents', si.id, si.data.client_secret),
    });
    await store.saveObject(ctx.tx, si);
    await emit(ctx, 'setup_intent.requires_action', si.data);
    return si.data;
  }
  return succeedSetup(ctx, si, pm);
}

async function succeedSetup(ctx: EngineContext, si: StoredSetupIntent, pm: StoredPaymentMethod): Promise<SetupIntentObject> {
  if (si.data.usage === 'off_session') pm.internal = { ...pm.internal, setUpOffSession: true };
  if (si.data.customer) await attach(ctx, pm, false, si.data.customer);
  await store.saveObject(ctx.tx, pm);
  Object.assign(si.data, { status: 'succeeded', payment_method: pm.id, next_action: null, last_setup_error: null });
  await store.saveObject(ctx.tx, si);
  await emit(ctx, 'setup_intent.succeeded', si.data);
  return si.data;
}

/** The customer declined or failed authentication: the intent asks for a payment method again. */
async function failSetup(ctx: EngineContext, si: StoredSetupIntent, message: string, pm?: StoredPaymentMethod): Promise<SetupIntentObject> {
  Object.assign(si.data, {
    status: 'requires_payment_method',
    payment_method: null,
    next_action: null,
    last_setup_error: {
      type: 'invalid_request_error',
      code: 'setup_intent_authentication_failure',
      message,
      ...(pm ? { payment_method: clone(pm.data) } : {}),
    },
  });
  await store.saveObject(ctx.tx, si);
  await emit(ctx, 'setup_intent.setup_failed', si.data);
  return si.data;
}

export async function cancelSetupIntent(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<SetupIntentObject> {
  const params = new Params(raw, ['cancellation_reason', 'expand']);
  params.expand([]);
  const reason = params.oneOf('cancellation_reason', ['abandoned', 'duplicate', 'requested_by_customer']) ?? null;
  const si = await setupIntentOr404(ctx, id as string);
  if (!AWAITING_CONFIRMATION.includes(si.data.status)) {
    throw unexpectedState('setup_intent', `You cannot cancel this SetupIntent because it has a status of ${si.data.status}.`, si.data);
  }
  Object.assign(si.data, { status: 'canceled', cancellation_reason: reason, next_action: null });
  await store.saveObject(ctx.tx, si);
  await emit(ctx, 'setup_intent.canceled', si.data);
  return si.data;
}

/** Confirms a setup intent with a card number or a PayPal approval, as the processor's frontend SDK would. */
export async function confirmSetupIntentInBrowser(ctx: EngineContext, id: string, input: BrowserSetupInput): Promise<SetupIntentObject> {
  const si = await setupIntentBySecret(ctx, id, input.clientSecret);
  assertConfirmable(si);
  if (input.paypal !== undefined) {
    if (!si.data.payment_method_types.includes('paypal')) throw invalidRequest('This SetupIntent does not accept PayPal.', { param: 'paypal' });
    if (input.paypal === 'decline') {
      return failSetup(ctx, si, 'The PayPal account holder declined to authorize this setup.');
    }
    const pm = paypalPaymentMethod(ctx, input.paypalEmail ?? 'sandbox-buyer@example.com');
    return runSetup(ctx, si, { pm, isNew: true });
  }
  if (input.cardNumber === undefined) throw invalidRequest('Send card_number or paypal.', { param: 'card_number' });
  if (!si.data.payment_method_types.includes('card')) throw invalidRequest('This SetupIntent does not accept cards.', { param: 'card_number' });
  if (input.expYear !== undefined && input.expMonth !== undefined) {
    const now = ctx.now;
    if (input.expYear < now.getUTCFullYear() || (input.expYear === now.getUTCFullYear() && input.expMonth < now.getUTCMonth() + 1)) {
      throw new SandboxError(402, { type: 'card_error', code: 'expired_card', message: 'Your card has expired.', param: 'exp_year' });
    }
  }
  const pm = cardPaymentMethod(ctx, input.cardNumber, {
    ...(input.expMonth !== undefined ? { expMonth: input.expMonth } : {}),
    ...(input.expYear !== undefined ? { expYear: input.expYear } : {}),
    name: input.cardholderName ?? null,
    ...(input.wallet ? { wallet: input.wallet } : {}),
  });
  return answeringIntent(
    () => runSetup(ctx, si, { pm, isNew: true }),
    () => si.data,
  );
}

/** Completes (or fails) the 3-D Secure challenge of a setup intent. */
export async function authenticateSetupIntentInBrowser(
  ctx: EngineContext,
  id: string,
  clientSecret: string,
  outcome: 'approve' | 'fail',
): Promise<SetupIntentObject> {
  const si = await setupIntentBySecret(ctx, id, clientSecret);
  if (si.data.status !== 'requires_action' || !si.data.payment_method) {
    throw unexpectedState('setup_intent', `This SetupIntent has a status of ${si.data.status}; only one that requires_action can be authenticated.`, si.data);
  }
  const pm = await paymentMethodOr404(ctx, si.data.payment_method);
  if (outcome === 'approve') return succeedSetup(ctx, si, pm);
  return failSetup(ctx, si, 'The latest attempt to set up the payment method has failed because authentication failed.', pm);
}
