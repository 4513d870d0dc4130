// Payment methods: made from a test card number, a Stripe test id
// (pm_card_visa...) or a PayPal approval; attached to and detached from a
// customer (a detached one is consumed and never used again); listed and retrieved.
import { TEST_PAYMENT_METHODS, testCard } from './cards.ts';
import { clone, type EngineContext, type StoredPaymentMethod, seconds } from './context.ts';
import { customerOr404 } from './customers.ts';
import { invalidRequest, SandboxError } from './errors.ts';
import { emit } from './events.ts';
import type { FormObject } from './form.ts';
import { type CustomerObject, newId, type PaymentMethodInternal, type PaymentMethodObject, randomToken } from './objects.ts';
import { LIST_PARAMS, listOptions, Params } from './params.ts';
import { listAnswer, loadOr404 } from './reads.ts';
import * as store from './store.ts';

function emptyBilling(): PaymentMethodObject['billing_details'] {
  return { address: { city: null, country: null, line1: null, line2: null, postal_code: null, state: null }, email: null, name: null, phone: null };
}

export async function paymentMethodOr404(ctx: EngineContext, id: string, param?: string): Promise<StoredPaymentMethod> {
  return loadOr404<PaymentMethodObject, PaymentMethodInternal>(ctx, 'payment_method', id, { param, forUpdate: true });
}

/** A new payment method from a card number (never stored: only brand, last 4 and behaviour). */
export function cardPaymentMethod(
  ctx: EngineContext,
  number: string,
  details: { expMonth?: number; expYear?: number; name?: string | null; wallet?: 'apple_pay' | 'google_pay' },
): StoredPaymentMethod {
  const card = testCard(number, ctx.account.fingerprintKey);
  if (!card) throw new SandboxError(402, { type: 'card_error', code: 'incorrect_number', message: 'Your card number is incorrect.', param: 'number' });
  const year = ctx.now.getUTCFullYear();
  const data: PaymentMethodObject = {
    id: newId('pm'),
    object: 'payment_method',
    type: 'card',
    created: seconds(ctx.now),
    customer: null,
    livemode: false,
    metadata: {},
    allow_redisplay: 'unspecified',
    billing_details: { ...emptyBilling(), name: details.name ?? null },
    card: {
      brand: card.brand,
      display_brand: card.brand,
      last4: card.last4,
      exp_month: details.expMonth ?? 12,
      exp_year: details.expYear ?? year + 3,
      funding: 'credit',
      country: 'US',
      fingerprint: card.fingerprint,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
      networks: { available: [card.brand], preferred: null },
      three_d_secure_usage: { supported: true },
      wallet: details.wallet ? { type: details.wallet, dynamic_last4: card.last4 } : null,
      generated_from: null,
    },
  };
  return { id: data.id, object: 'payment_method', customer: null, created: data.created, data, internal: { behaviour: card.behaviour }, expiresAt: null };
}

export function paypalPaymentMethod(ctx: EngineContext, email: string): StoredPaymentMethod {
  const data: PaymentMethodObject = {
    id: newId('pm'),
    object: 'payment_method',
    type: 'paypal',
    created: seconds(ctx.now),
    customer: null,
    livemode: false,
    metadata: {},
    allow_redisplay: 'unspecified',
    billing_details: { ...emptyBilling(), email },
    paypal: { country: 'DE', payer_email: email, payer_id: randomToken(13).toUpperCase() },
  };
  return { id: data.id, object: 'payment_method', customer: null, created: data.created, data, internal: { behaviour: 'succeeds' }, expiresAt: null };
}

/** A payment_method parameter: an existing one, or one of Stripe's test ids (pm_card_visa...) made into a new one. */
export async function resolvePaymentMethod(ctx: EngineContext, id: string, param: string): Promise<{ pm: StoredPaymentMethod; isNew: boolean }> {
  const testNumber = Object.hasOwn(TEST_PAYMENT_METHODS, id) ? TEST_PAYMENT_METHODS[id] : undefined;
  if (testNumber) return { pm: cardPaymentMethod(ctx, testNumber, {}), isNew: true };
  return { pm: await paymentMethodOr404(ctx, id, param), isNew: false };
}

export async function savePaymentMethod(ctx: EngineContext, pm: StoredPaymentMethod, isNew: boolean): Promise<void> {
  pm.customer = pm.data.customer;
  if (isNew) await store.insertObject(ctx.tx, pm);
  else await store.saveObject(ctx.tx, pm);
}

export async function attach(ctx: EngineContext, pm: StoredPaymentMethod, isNew: boolean, customerId: string): Promise<void> {
  if (pm.data.customer === customerId) {
    if (isNew) await savePaymentMethod(ctx, pm, true);
    return;
  }
  if (pm.data.customer !== null) throw invalidRequest('The payment method you provided has already been attached to a customer.', { param: 'payment_method' });
  if (pm.internal.consumed) {
    throw invalidRequest(
      'This PaymentMethod was previously used without being attached to a Customer or was detached from a Customer, and may not be used again.',
      { param: 'payment_method' },
    );
  }
  pm.data.customer = customerId;
  await savePaymentMethod(ctx, pm, isNew);
  await emit(ctx, 'payment_method.attached', pm.data);
}

export async function listPaymentMethods(ctx: EngineContext, raw: FormObject): Promise<unknown> {
  const params = new Params(raw, [...LIST_PARAMS, 'customer', 'type']);
  params.expand([]);
  const customer = params.string('customer') || undefined;
  if (customer) await customerOr404(ctx, customer, 'customer');
  return listAnswer(
    ctx,
    '/v1/payment_methods',
    'payment_method',
    { object: 'payment_method', customer, type: params.string('type') || undefined },
    listOptions(params),
  );
}

export async function retrievePaymentMethod(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<PaymentMethodObject> {
  new Params(raw, ['expand']).expand([]);
  return (await loadOr404<PaymentMethodObject>(ctx, 'payment_method', id as string)).data;
}

export async function attachPaymentMethod(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<PaymentMethodObject> {
  const params = new Params(raw, ['customer', 'expand']);
  params.expand([]);
  const customerId = params.string('customer', { required: true }) as string;
  const customer = await customerOr404(ctx, customerId, 'customer');
  const { pm, isNew } = await resolvePaymentMethod(ctx, id as string, 'payment_method');
  if (pm.internal.behaviour === 'declined') {
    throw new SandboxError(402, {
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'generic_decline',
      message: 'Your card was declined.',
      param: '',
    });
  }
  await attach(ctx, pm, isNew, customer.id);
  return pm.data;
}

export async function detachPaymentMethod(ctx: EngineContext, raw: FormObject, [id]: string[]): Promise<PaymentMethodObject> {
  new Params(raw, ['expand']).expand([]);
  const pm = await paymentMethodOr404(ctx, id as string);
  const customerId = pm.data.customer;
  if (customerId === null) throw invalidRequest('The payment method you provided is not attached to a customer so detachment is impossible.');
  pm.data.customer = null;
  pm.internal = { ...pm.internal, consumed: true, setUpOffSession: false };
  await savePaymentMethod(ctx, pm, false);
  const customer = await store.loadObject<CustomerObject>(ctx.tx, customerId, 'customer', { forUpdate: true });
  if (customer && customer.data.invoice_settings.default_payment_method === pm.id) {
    const previous = { invoice_settings: clone(customer.data.invoice_settings) };
    customer.data.invoice_settings.default_payment_method = null;
    await store.saveObject(ctx.tx, customer);
    await emit(ctx, 'customer.updated', customer.data, previous);
  }
  await emit(ctx, 'payment_method.detached', pm.data, { customer: customerId });
  return pm.data;
}
