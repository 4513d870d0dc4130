// The Stripe semantics of the sandbox: customers, setup intents, payment
// methods, payment intents (confirm, capture, cancel, expiry of uncaptured
// authorizations) and events. Every operation runs inside the caller's
// transaction; events are recorded with it and delivered after commit.
import type { Clock } from '../../platform/clock.ts';
import type { Queryable } from '../../platform/db.ts';
import { minimumCharge } from '../../platform/money.ts';
import { type CardBehaviour, TEST_PAYMENT_METHODS, testCard } from './cards.ts';
import { invalidRequest, resourceMissing, SandboxError, type StripeErrorBody, unexpectedState } from './errors.ts';
import type { FormObject } from './form.ts';
import {
  type ChargeObject,
  type CustomerObject,
  type EventObject,
  type LastError,
  type Metadata,
  type NextAction,
  newId,
  type PaymentIntentObject,
  type PaymentMethodInternal,
  type PaymentMethodObject,
  randomToken,
  type SetupIntentObject,
  sameSecret,
} from './objects.ts';
import { LIST_PARAMS, listOptions, Params } from './params.ts';
import * as store from './store.ts';

export interface EngineOptions {
  clock: Clock;
  /** api_version of the events (the account's default version). */
  apiVersion: string;
  /** How long an uncaptured (manual capture) authorization lasts. */
  holdValidityMs: number;
  /** Keys card fingerprints. */
  fingerprintKey: string;
  /** Base URL of the browser stand-in (/sandbox/...), shown in next_action. */
  browserBaseUrl: string | undefined;
  /** Webhook endpoints that get a delivery for each new event (read in the event's transaction). */
  endpoints: (tx: Queryable) => Promise<string[]>;
}

export interface ApiCall {
  method: string;
  /** The request's Stripe-Version (or the account's default). */
  apiVersion: string;
  /** Path under /v1, e.g. /v1/customers/cus_123. */
  path: string;
  params: FormObject;
  requestId: string | null;
  idempotencyKey: string | null;
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

interface Ctx {
  tx: Queryable;
  now: Date;
  apiVersion: string;
  requestId: string | null;
  idempotencyKey: string | null;
}

type Handler = (ctx: Ctx, params: FormObject, ids: string[]) => Promise<unknown>;

const MAX_AMOUNT = 99_999_999;
const PAYMENT_METHOD_TYPES = ['card', 'paypal'] as const;

/**
 * From API version 2026-09-30 (endive) the types a setup or payment intent
 * accepts are sent as allowed_payment_method_types; before, as payment_method_types.
 */
const typesParam = (apiVersion: string) => (apiVersion >= '2026-09-30' ? 'allowed_payment_method_types' : 'payment_method_types');

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const clone = <T>(value: T): T => structuredClone(value);

function emptyBilling(): PaymentMethodObject['billing_details'] {
  return { address: { city: null, country: null, line1: null, line2: null, postal_code: null, state: null }, email: null, name: null, phone: null };
}

type StoredCustomer = store.StoredObject<CustomerObject>;
type StoredPaymentMethod = store.StoredObject<PaymentMethodObject, PaymentMethodInternal>;
type StoredSetupIntent = store.StoredObject<SetupIntentObject>;
type StoredPaymentIntent = store.StoredObject<PaymentIntentObject>;

/** What charging a payment method does. */
type ChargeOutcome = { kind: 'succeeds' } | { kind: 'needs_authentication' } | { kind: 'declined'; code: string; declineCode: string; message: string };

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
function chargeOutcome(internal: PaymentMethodInternal, options: { offSession: boolean; authenticated: boolean }): ChargeOutcome {
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

function setupNeedsAuthentication(behaviour: CardBehaviour): boolean {
  return behaviour === 'authenticate_always' || behaviour === 'authenticate_unless_set_up';
}

export function createEngine(options: EngineOptions) {
  const { clock } = options;

  // --- events ---------------------------------------------------------------

  async function emit(ctx: Ctx, type: string, object: unknown, previous?: Record<string, unknown>): Promise<void> {
    const endpoints = await options.endpoints(ctx.tx);
    const event: EventObject = {
      id: newId('evt'),
      object: 'event',
      api_version: options.apiVersion,
      created: seconds(ctx.now),
      data: { object: clone(object), ...(previous ? { previous_attributes: previous } : {}) },
      livemode: false,
      pending_webhooks: endpoints.length,
      request: { id: ctx.requestId, idempotency_key: ctx.idempotencyKey },
      type,
    };
    await store.insertEvent(ctx.tx, { id: event.id, type, created: event.created, data: event });
    await store.createDeliveries(ctx.tx, event.id, endpoints, ctx.now);
  }

  function nextAction(kind: 'setup_intents' | 'payment_intents', id: string, secret: string): NextAction {
    const base = options.browserBaseUrl;
    const url = base
      ? `${base}/sandbox/?${kind === 'setup_intents' ? 'setup_intent' : 'payment_intent'}=${id}&client_secret=${encodeURIComponent(secret)}`
      : '';
    return { type: 'redirect_to_url', redirect_to_url: { url, return_url: null } };
  }

  // --- loading --------------------------------------------------------------

  async function customerOr404(ctx: Ctx, id: string, param?: string, forUpdate = false): Promise<StoredCustomer> {
    const found = await store.loadObject<CustomerObject>(ctx.tx, id, 'customer', { forUpdate });
    if (!found || found.data.deleted) throw resourceMissing('customer', id, param);
    return found;
  }

  async function paymentMethodOr404(ctx: Ctx, id: string, param?: string): Promise<StoredPaymentMethod> {
    const found = await store.loadObject<PaymentMethodObject, PaymentMethodInternal>(ctx.tx, id, 'payment_method', { forUpdate: true });
    if (!found) throw resourceMissing('payment_method', id, param);
    return found;
  }

  async function setupIntentOr404(ctx: Ctx, id: string): Promise<StoredSetupIntent> {
    const found = await store.loadObject<SetupIntentObject>(ctx.tx, id, 'setup_intent', { forUpdate: true });
    if (!found) throw resourceMissing('setup_intent', id);
    return found;
  }

  async function paymentIntentOr404(ctx: Ctx, id: string): Promise<StoredPaymentIntent> {
    const found = await store.loadObject<PaymentIntentObject>(ctx.tx, id, 'payment_intent', { forUpdate: true });
    if (!found) throw resourceMissing('payment_intent', id);
    await expireIfDue(ctx, found);
    return found;
  }

  /** A new payment method from a card number (never stored: only brand, last 4 and behaviour). */
  function cardPaymentMethod(
    ctx: Ctx,
    number: string,
    details: { expMonth?: number; expYear?: number; name?: string | null; wallet?: 'apple_pay' | 'google_pay' },
  ): StoredPaymentMethod {
    const card = testCard(number, options.fingerprintKey);
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

  function paypalPaymentMethod(ctx: Ctx, email: string): StoredPaymentMethod {
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
  async function resolvePaymentMethod(ctx: Ctx, id: string, param: string): Promise<{ pm: StoredPaymentMethod; isNew: boolean }> {
    const testNumber = Object.hasOwn(TEST_PAYMENT_METHODS, id) ? TEST_PAYMENT_METHODS[id] : undefined;
    if (testNumber) return { pm: cardPaymentMethod(ctx, testNumber, {}), isNew: true };
    return { pm: await paymentMethodOr404(ctx, id, param), isNew: false };
  }

  async function savePaymentMethod(ctx: Ctx, pm: StoredPaymentMethod, isNew: boolean): Promise<void> {
    pm.customer = pm.data.customer;
    if (isNew) await store.insertObject(ctx.tx, pm);
    else await store.saveObject(ctx.tx, pm);
  }

  async function attach(ctx: Ctx, pm: StoredPaymentMethod, isNew: boolean, customerId: string): Promise<void> {
    if (pm.data.customer === customerId) {
      if (isNew) await savePaymentMethod(ctx, pm, true);
      return;
    }
    if (pm.data.customer !== null)
      throw invalidRequest('The payment method you provided has already been attached to a customer.', { param: 'payment_method' });
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

  // --- customers ------------------------------------------------------------

  const CUSTOMER_FIELDS = ['description', 'email', 'name', 'metadata', 'invoice_settings', 'expand'] as const;

  async function createCustomer(ctx: Ctx, raw: FormObject): Promise<CustomerObject> {
    const params = new Params(raw, CUSTOMER_FIELDS);
    params.expand([]);
    const invoice = params.object('invoice_settings', ['default_payment_method']);
    if (invoice?.string('default_payment_method'))
      throw invalidRequest('A new customer has no payment methods to make default.', { param: 'invoice_settings[default_payment_method]' });
    const data: CustomerObject = {
      id: newId('cus'),
      object: 'customer',
      created: seconds(ctx.now),
      description: params.nullableString('description') ?? null,
      email: params.nullableString('email', 512) ?? null,
      name: params.nullableString('name', 256) ?? null,
      metadata: params.metadata() ?? {},
      invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
      livemode: false,
    };
    await store.insertObject(ctx.tx, { id: data.id, object: 'customer', customer: null, created: data.created, data, internal: {}, expiresAt: null });
    await emit(ctx, 'customer.created', data);
    return data;
  }

  async function retrieveCustomer(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<unknown> {
    new Params(raw, ['expand']).expand([]);
    const found = await store.loadObject<CustomerObject>(ctx.tx, id as string, 'customer');
    if (!found) throw resourceMissing('customer', id as string);
    return found.data.deleted ? { id: found.id, object: 'customer', deleted: true } : found.data;
  }

  async function updateCustomer(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<CustomerObject> {
    const params = new Params(raw, CUSTOMER_FIELDS);
    params.expand([]);
    const customer = await customerOr404(ctx, id as string, undefined, true);
    const before = clone(customer.data);
    const previous: Record<string, unknown> = {};
    for (const field of ['description', 'email', 'name'] as const) {
      const value = params.nullableString(field);
      if (value !== undefined && value !== customer.data[field]) {
        previous[field] = customer.data[field];
        customer.data[field] = value;
      }
    }
    const metadata = params.metadata();
    if (metadata !== undefined) {
      previous.metadata = before.metadata;
      customer.data.metadata = metadata === null ? {} : { ...customer.data.metadata, ...metadata };
      // `metadata[key]=` removes that key.
      const sent = raw.metadata;
      if (sent && typeof sent === 'object' && !Array.isArray(sent)) {
        for (const [k, v] of Object.entries(sent)) if (v === '') delete customer.data.metadata[k];
      }
    }
    const invoice = params.object('invoice_settings', ['default_payment_method']);
    const defaultMethod = invoice?.nullableString('default_payment_method');
    if (defaultMethod !== undefined && defaultMethod !== customer.data.invoice_settings.default_payment_method) {
      if (defaultMethod !== null) {
        const param = 'invoice_settings[default_payment_method]';
        const pm = await store.loadObject<PaymentMethodObject>(ctx.tx, defaultMethod, 'payment_method');
        if (!pm) throw resourceMissing('payment_method', defaultMethod, param);
        if (pm.data.customer !== customer.id) {
          throw invalidRequest(
            `The customer does not have a payment method with the ID ${defaultMethod}. The payment method must be attached to the customer.`,
            { param },
          );
        }
      }
      previous.invoice_settings = before.invoice_settings;
      customer.data.invoice_settings = { ...customer.data.invoice_settings, default_payment_method: defaultMethod };
    }
    if (Object.keys(previous).length > 0) {
      await store.saveObject(ctx.tx, customer);
      await emit(ctx, 'customer.updated', customer.data, previous);
    }
    return customer.data;
  }

  async function deleteCustomer(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<unknown> {
    new Params(raw, []);
    const customer = await customerOr404(ctx, id as string, undefined, true);
    const snapshot = clone(customer.data);
    customer.data.deleted = true;
    await store.saveObject(ctx.tx, customer);
    await emit(ctx, 'customer.deleted', snapshot);
    return { id: customer.id, object: 'customer', deleted: true };
  }

  async function listCustomerPaymentMethods(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<unknown> {
    const params = new Params(raw, [...LIST_PARAMS, 'type', 'allow_redisplay']);
    params.expand([]);
    const type = params.string('type') || undefined;
    const customer = await customerOr404(ctx, id as string);
    return listAnswer(
      ctx,
      `/v1/customers/${customer.id}/payment_methods`,
      'payment_method',
      { object: 'payment_method', customer: customer.id, type },
      listOptions(params),
    );
  }

  async function listAnswer(ctx: Ctx, url: string, object: string, filter: Parameters<typeof store.listObjects>[1], list: store.ListOptions) {
    const cursor = list.startingAfter ?? list.endingBefore;
    if (cursor !== undefined && !(await store.loadObject(ctx.tx, cursor, object))) {
      throw resourceMissing(object, cursor, list.startingAfter !== undefined ? 'starting_after' : 'ending_before');
    }
    const page = await store.listObjects(ctx.tx, filter, list);
    return { object: 'list', data: page.data, has_more: page.hasMore, url };
  }

  // --- payment methods ------------------------------------------------------

  async function listPaymentMethods(ctx: Ctx, raw: FormObject): Promise<unknown> {
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

  async function retrievePaymentMethod(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<PaymentMethodObject> {
    new Params(raw, ['expand']).expand([]);
    const found = await store.loadObject<PaymentMethodObject>(ctx.tx, id as string, 'payment_method');
    if (!found) throw resourceMissing('payment_method', id as string);
    return found.data;
  }

  async function attachPaymentMethod(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<PaymentMethodObject> {
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

  async function detachPaymentMethod(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<PaymentMethodObject> {
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

  // --- setup intents ----------------------------------------------------------

  async function createSetupIntent(ctx: Ctx, raw: FormObject): Promise<SetupIntentObject> {
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

  async function retrieveSetupIntent(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<SetupIntentObject> {
    const params = new Params(raw, ['expand', 'client_secret']);
    params.expand([]);
    const found = await store.loadObject<SetupIntentObject>(ctx.tx, id as string, 'setup_intent');
    if (!found) throw resourceMissing('setup_intent', id as string);
    return found.data;
  }

  function assertConfirmable(si: StoredSetupIntent) {
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(si.data.status)) {
      throw unexpectedState('setup_intent', `You cannot confirm this SetupIntent because it has a status of ${si.data.status}.`, si.data);
    }
  }

  async function confirmSetupIntent(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<SetupIntentObject> {
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
  async function runSetup(ctx: Ctx, si: StoredSetupIntent, resolved: { pm: StoredPaymentMethod; isNew: boolean }): Promise<SetupIntentObject> {
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
        next_action: nextAction('setup_intents', si.id, si.data.client_secret),
      });
      await store.saveObject(ctx.tx, si);
      await emit(ctx, 'setup_intent.requires_action', si.data);
      return si.data;
    }
    return succeedSetup(ctx, si, pm);
  }

  async function succeedSetup(ctx: Ctx, si: StoredSetupIntent, pm: StoredPaymentMethod): Promise<SetupIntentObject> {
    if (si.data.usage === 'off_session') pm.internal = { ...pm.internal, setUpOffSession: true };
    if (si.data.customer) await attach(ctx, pm, false, si.data.customer);
    await store.saveObject(ctx.tx, pm);
    Object.assign(si.data, { status: 'succeeded', payment_method: pm.id, next_action: null, last_setup_error: null });
    await store.saveObject(ctx.tx, si);
    await emit(ctx, 'setup_intent.succeeded', si.data);
    return si.data;
  }

  /** The customer declined or failed authentication: the intent asks for a payment method again. */
  async function failSetup(ctx: Ctx, si: StoredSetupIntent, message: string, pm?: StoredPaymentMethod): Promise<SetupIntentObject> {
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

  async function cancelSetupIntent(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<SetupIntentObject> {
    const params = new Params(raw, ['cancellation_reason', 'expand']);
    params.expand([]);
    const reason = params.oneOf('cancellation_reason', ['abandoned', 'duplicate', 'requested_by_customer']) ?? null;
    const si = await setupIntentOr404(ctx, id as string);
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(si.data.status)) {
      throw unexpectedState('setup_intent', `You cannot cancel this SetupIntent because it has a status of ${si.data.status}.`, si.data);
    }
    Object.assign(si.data, { status: 'canceled', cancellation_reason: reason, next_action: null });
    await store.saveObject(ctx.tx, si);
    await emit(ctx, 'setup_intent.canceled', si.data);
    return si.data;
  }

  // --- payment intents ----------------------------------------------------------

  const PI_EXPANDABLE = ['latest_charge', 'payment_method'] as const;

  async function expanded(ctx: Ctx, pi: PaymentIntentObject, expand: string[]): Promise<unknown> {
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

  async function createPaymentIntent(ctx: Ctx, raw: FormObject): Promise<unknown> {
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
    const offSession = offSessionRaw === 'true' || offSessionRaw === 'one_off' || offSessionRaw === 'recurring';
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

  async function retrievePaymentIntent(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<unknown> {
    const params = new Params(raw, ['expand', 'client_secret']);
    const expand = params.expand(PI_EXPANDABLE);
    const pi = await paymentIntentOr404(ctx, id as string);
    return expanded(ctx, pi.data, expand);
  }

  async function listPaymentIntents(ctx: Ctx, raw: FormObject): Promise<unknown> {
    const params = new Params(raw, [...LIST_PARAMS, 'customer']);
    params.expand([]);
    const customer = params.string('customer') || undefined;
    return listAnswer(ctx, '/v1/payment_intents', 'payment_intent', { object: 'payment_intent', customer }, listOptions(params));
  }

  async function confirmPaymentIntent(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<unknown> {
    const params = new Params(raw, [
      'payment_method',
      'off_session',
      'return_url',
      'error_on_requires_action',
      'setup_future_usage',
      'use_stripe_sdk',
      'expand',
    ]);
    const expand = params.expand(PI_EXPANDABLE);
    params.string('return_url');
    params.boolean('error_on_requires_action');
    params.boolean('use_stripe_sdk');
    params.oneOf('setup_future_usage', ['off_session', 'on_session']);
    const offSessionRaw = params.string('off_session');
    const pi = await paymentIntentOr404(ctx, id as string);
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(pi.data.status)) {
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
      offSession: offSessionRaw === 'true' || offSessionRaw === 'one_off' || offSessionRaw === 'recurring',
      authenticated: false,
    });
    return expanded(ctx, pi.data, expand);
  }

  /** Charges (or authorizes) the payment method: succeeds, needs authentication, or is declined (402, committed). */
  async function confirmWith(ctx: Ctx, pi: StoredPaymentIntent, pm: StoredPaymentMethod, mode: { offSession: boolean; authenticated: boolean }): Promise<void> {
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
      Object.assign(pi.data, { status: 'requires_action', last_payment_error: null, next_action: nextAction('payment_intents', pi.id, pi.data.client_secret) });
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
      pi.expiresAt = new Date(ctx.now.getTime() + options.holdValidityMs);
      await store.saveObject(ctx.tx, pi);
      await emit(ctx, 'payment_intent.amount_capturable_updated', pi.data, { amount_capturable: 0 });
    } else {
      pi.data.status = 'succeeded';
      pi.data.amount_received = pi.data.amount;
      await store.saveObject(ctx.tx, pi);
      await emit(ctx, 'payment_intent.succeeded', pi.data);
    }
  }

  async function createCharge(ctx: Ctx, pi: StoredPaymentIntent, pm: StoredPaymentMethod, outcome: ChargeOutcome): Promise<ChargeObject> {
    const succeeded = outcome.kind === 'succeeds';
    const manual = pi.data.capture_method === 'manual';
    const captureBefore = succeeded && manual ? seconds(new Date(ctx.now.getTime() + options.holdValidityMs)) : null;
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

  async function capturePaymentIntent(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<unknown> {
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

  async function cancelPaymentIntent(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<unknown> {
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

  async function cancel(ctx: Ctx, pi: StoredPaymentIntent, reason: string | null, at: Date): Promise<void> {
    Object.assign(pi.data, { status: 'canceled', cancellation_reason: reason, canceled_at: seconds(at), amount_capturable: 0, next_action: null });
    pi.expiresAt = null;
    await store.saveObject(ctx.tx, pi);
    await emit(ctx, 'payment_intent.canceled', pi.data);
  }

  /** An uncaptured authorization past its capture_before is canceled by the processor (cancellation_reason automatic). */
  async function expireIfDue(ctx: Ctx, pi: StoredPaymentIntent): Promise<void> {
    if (pi.data.status === 'requires_capture' && pi.expiresAt && pi.expiresAt.getTime() <= ctx.now.getTime()) {
      await cancel(ctx, pi, 'automatic', pi.expiresAt);
    }
  }

  async function retrieveCharge(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<ChargeObject> {
    new Params(raw, ['expand']).expand([]);
    const found = await store.loadObject<ChargeObject>(ctx.tx, id as string, 'charge');
    if (!found) throw resourceMissing('charge', id as string);
    return found.data;
  }

  // --- events -------------------------------------------------------------------

  async function listEventsHandler(ctx: Ctx, raw: FormObject): Promise<unknown> {
    const params = new Params(raw, [...LIST_PARAMS, 'type', 'types', 'created', 'delivery_success']);
    params.expand([]);
    const list = listOptions(params);
    const cursor = list.startingAfter ?? list.endingBefore;
    if (cursor !== undefined && !(await store.loadEvent(ctx.tx, cursor))) throw resourceMissing('event', cursor, 'starting_after');
    const page = await store.listEvents(ctx.tx, { type: params.string('type') || undefined }, list);
    return { object: 'list', data: page.data, has_more: page.hasMore, url: '/v1/events' };
  }

  async function retrieveEvent(ctx: Ctx, raw: FormObject, [id]: string[]): Promise<unknown> {
    new Params(raw, ['expand']).expand([]);
    const event = await store.loadEvent(ctx.tx, id as string);
    if (!event) throw resourceMissing('event', id as string);
    return event;
  }

  // --- routing ------------------------------------------------------------------

  const ID = '([A-Za-z0-9_]{1,255})';
  const routes: [string, RegExp, Handler][] = [
    ['POST', /^\/v1\/customers$/, createCustomer],
    ['GET', new RegExp(`^/v1/customers/${ID}$`), retrieveCustomer],
    ['POST', new RegExp(`^/v1/customers/${ID}$`), updateCustomer],
    ['DELETE', new RegExp(`^/v1/customers/${ID}$`), deleteCustomer],
    ['GET', new RegExp(`^/v1/customers/${ID}/payment_methods$`), listCustomerPaymentMethods],
    ['GET', /^\/v1\/payment_methods$/, listPaymentMethods],
    ['GET', new RegExp(`^/v1/payment_methods/${ID}$`), retrievePaymentMethod],
    ['POST', new RegExp(`^/v1/payment_methods/${ID}/attach$`), attachPaymentMethod],
    ['POST', new RegExp(`^/v1/payment_methods/${ID}/detach$`), detachPaymentMethod],
    ['POST', /^\/v1\/setup_intents$/, createSetupIntent],
    ['GET', new RegExp(`^/v1/setup_intents/${ID}$`), retrieveSetupIntent],
    ['POST', new RegExp(`^/v1/setup_intents/${ID}/confirm$`), confirmSetupIntent],
    ['POST', new RegExp(`^/v1/setup_intents/${ID}/cancel$`), cancelSetupIntent],
    ['POST', /^\/v1\/payment_intents$/, createPaymentIntent],
    ['GET', /^\/v1\/payment_intents$/, listPaymentIntents],
    ['GET', new RegExp(`^/v1/payment_intents/${ID}$`), retrievePaymentIntent],
    ['POST', new RegExp(`^/v1/payment_intents/${ID}/confirm$`), confirmPaymentIntent],
    ['POST', new RegExp(`^/v1/payment_intents/${ID}/capture$`), capturePaymentIntent],
    ['POST', new RegExp(`^/v1/payment_intents/${ID}/cancel$`), cancelPaymentIntent],
    ['GET', new RegExp(`^/v1/charges/${ID}$`), retrieveCharge],
    ['GET', /^\/v1\/events$/, listEventsHandler],
    ['GET', new RegExp(`^/v1/events/${ID}$`), retrieveEvent],
  ];

  function route(method: string, path: string): { handler: Handler; ids: string[] } | undefined {
    for (const [m, pattern, handler] of routes) {
      if (m !== method) continue;
      const match = pattern.exec(path);
      if (match) return { handler, ids: match.slice(1) };
    }
    return undefined;
  }

  /** Whether a method and path is an API route (unknown ones get Stripe's "Unrecognized request URL"). */
  function recognizes(method: string, path: string): boolean {
    return route(method, path) !== undefined;
  }

  /**
   * Runs one API call in the transaction. A SandboxError with `commit` (a
   * decline) is answered as an error but its changes stay; any other error
   * propagates and the caller rolls back.
   */
  async function handle(tx: Queryable, call: ApiCall): Promise<ApiAnswer & { commit: boolean }> {
    const found = route(call.method, call.path);
    if (!found) throw unrecognized(call.method, call.path);
    const ctx: Ctx = { tx, now: clock.now(), apiVersion: call.apiVersion, requestId: call.requestId, idempotencyKey: call.idempotencyKey };
    try {
      return { status: 200, body: await found.handler(ctx, call.params, found.ids), commit: true };
    } catch (error) {
      if (error instanceof SandboxError && error.commit) return { status: error.status, body: { error: error.body }, commit: true };
      throw error;
    }
  }

  // --- the browser stand-in (what Stripe.js does with a client secret) -----------------

  async function setupIntentBySecret(ctx: Ctx, id: string, clientSecret: string): Promise<StoredSetupIntent> {
    const found = await store.loadObject<SetupIntentObject>(ctx.tx, id, 'setup_intent', { forUpdate: true });
    if (!found || !sameSecret(found.data.client_secret, clientSecret)) throw resourceMissing('setup_intent', id);
    return found;
  }

  async function paymentIntentBySecret(ctx: Ctx, id: string, clientSecret: string): Promise<StoredPaymentIntent> {
    const found = await store.loadObject<PaymentIntentObject>(ctx.tx, id, 'payment_intent', { forUpdate: true });
    if (!found || !sameSecret(found.data.client_secret, clientSecret)) throw resourceMissing('payment_intent', id);
    await expireIfDue(ctx, found);
    return found;
  }

  function browserCtx(tx: Queryable): Ctx {
    return { tx, now: clock.now(), apiVersion: options.apiVersion, requestId: null, idempotencyKey: null };
  }

  /** Keeps a decline's committed changes but answers with the intent as it now stands. */
  async function answeringIntent<T>(work: () => Promise<T>, current: () => T): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof SandboxError && error.commit) return current();
      throw error;
    }
  }

  return {
    handle,
    recognizes,
    expireIfDue: async (tx: Queryable, id: string): Promise<void> => {
      const ctx = browserCtx(tx);
      const pi = await store.loadObject<PaymentIntentObject>(tx, id, 'payment_intent', { forUpdate: true });
      if (pi) await expireIfDue(ctx, pi);
    },

    /** Confirms a setup intent with a card number or a PayPal approval, as the processor's frontend SDK would. */
    async browserConfirmSetupIntent(
      tx: Queryable,
      id: string,
      input: {
        clientSecret: string;
        cardNumber?: string;
        expMonth?: number;
        expYear?: number;
        cardholderName?: string;
        wallet?: 'apple_pay' | 'google_pay';
        paypal?: 'approve' | 'decline';
        paypalEmail?: string;
      },
    ): Promise<SetupIntentObject> {
      const ctx = browserCtx(tx);
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
    },

    /** Completes (or fails) the 3-D Secure challenge of a setup intent. */
    async browserAuthenticateSetupIntent(tx: Queryable, id: string, clientSecret: string, outcome: 'approve' | 'fail'): Promise<SetupIntentObject> {
      const ctx = browserCtx(tx);
      const si = await setupIntentBySecret(ctx, id, clientSecret);
      if (si.data.status !== 'requires_action' || !si.data.payment_method) {
        throw unexpectedState(
          'setup_intent',
          `This SetupIntent has a status of ${si.data.status}; only one that requires_action can be authenticated.`,
          si.data,
        );
      }
      const pm = await paymentMethodOr404(ctx, si.data.payment_method);
      if (outcome === 'approve') return succeedSetup(ctx, si, pm);
      return failSetup(ctx, si, 'The latest attempt to set up the payment method has failed because authentication failed.', pm);
    },

    /** Completes (or fails) the 3-D Secure challenge of a payment intent (on-session, or after an off-session authentication_required). */
    async browserAuthenticatePaymentIntent(tx: Queryable, id: string, clientSecret: string, outcome: 'approve' | 'fail'): Promise<PaymentIntentObject> {
      const ctx = browserCtx(tx);
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
      await store.saveObject(tx, pi);
      await emit(ctx, 'payment_intent.payment_failed', pi.data);
      return pi.data;
    },

    /** The intent a client secret unlocks, for the hosted page. */
    async browserRetrieve(tx: Queryable, kind: 'setup_intent' | 'payment_intent', id: string, clientSecret: string) {
      const ctx = browserCtx(tx);
      return kind === 'setup_intent' ? (await setupIntentBySecret(ctx, id, clientSecret)).data : (await paymentIntentBySecret(ctx, id, clientSecret)).data;
    },
  };
}

export function unrecognized(method: string, path: string): SandboxError {
  return invalidRequest(`Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`, {
    status: 404,
  });
}

export type Engine = ReturnType<typeof createEngine>;

export type { Metadata };
