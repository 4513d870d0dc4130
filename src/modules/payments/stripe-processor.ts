// The one PaymentProcessor adapter: Stripe, through its official SDK with a
// pinned API version. The same code talks to api.stripe.com in production and
// to the built-in sandbox (apiBase) in development and tests.
import Stripe from 'stripe';
import type { Metrics } from '../../platform/metrics.ts';
import {
  type CaptureResult,
  type ChargeRequest,
  type PaymentOutcome,
  type PaymentProcessor,
  PaymentProcessorError,
  type ProcessorAccount,
  type ProcessorEvent,
  type ProcessorPaymentIntent,
  type ProcessorPaymentMethod,
  type ProcessorSetupIntent,
  type ReleaseResult,
  WebhookSignatureError,
} from './processor.ts';
import { observedProcessor } from './processor-metrics.ts';

/** Pinned: what the adapter was written and tested against (the SDK's own version). */
export const STRIPE_API_VERSION = '2026-10-28.endive';

/** Stripe's default signature tolerance: a webhook signed more than 5 minutes ago is refused. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export interface StripeProcessorOptions {
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
  /** Base URL of the API: https://api.stripe.com (default), or the sandbox's http://127.0.0.1:<port>. */
  apiBase?: string;
  /** True when apiBase is the built-in sandbox. */
  sandbox?: boolean;
  /** Network retries of the SDK (with Stripe idempotency keys): default 2. */
  maxNetworkRetries?: number;
  timeoutMs?: number;
  /** Where calls are counted by operation and outcome (METRICS_PORT); without it none are. */
  metrics?: Pick<Metrics, 'processorCall'>;
}

/** Soft declines: the same method may succeed later. */
const RETRYABLE_DECLINES = new Set([
  'insufficient_funds',
  'processing_error',
  'try_again_later',
  'issuer_not_available',
  'reenter_transaction',
  'approve_with_id',
]);

function accountOf(options: StripeProcessorOptions): ProcessorAccount {
  if (options.sandbox) return 'stripe_sandbox';
  return /^(sk|rk)_live_/.test(options.secretKey) ? 'stripe_live' : 'stripe_test';
}

function clientOptions(options: StripeProcessorOptions): ConstructorParameters<typeof Stripe>[1] {
  const base = new URL(options.apiBase ?? 'https://api.stripe.com');
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  return {
    apiVersion: STRIPE_API_VERSION,
    host: base.hostname.replace(/^\[|\]$/g, ''),
    port: base.port ? Number(base.port) : protocol === 'http' ? 80 : 443,
    protocol,
    maxNetworkRetries: options.maxNetworkRetries ?? 2,
    timeout: options.timeoutMs ?? 20_000,
    telemetry: false,
    appInfo: { name: 'charging-access' },
  };
}

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

function paymentIntentOf(intent: Stripe.PaymentIntent): ProcessorPaymentIntent {
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

function paymentMethodOf(pm: Stripe.PaymentMethod): ProcessorPaymentMethod {
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

function setupIntentOf(si: Stripe.SetupIntent): ProcessorSetupIntent {
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

const isMissing = (error: unknown) => error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing' && error.statusCode === 404;
const isUnexpectedState = (error: unknown) => error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'payment_intent_unexpected_state';

/** A transport or unexpected failure, without the processor's wording about keys or secrets. */
function failure(error: unknown, operation: string): PaymentProcessorError {
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

export function createStripeProcessor(options: StripeProcessorOptions): PaymentProcessor {
  const stripe = new Stripe(options.secretKey, clientOptions(options));
  const info = { name: 'stripe' as const, account: accountOf(options), sandbox: options.sandbox === true, publishableKey: options.publishableKey };

  async function call<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw failure(error, operation);
    }
  }

  /** A card error (or a payment method the processor will not charge) as an outcome; anything else is thrown. */
  function declineOf(error: unknown): PaymentOutcome | undefined {
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

  async function charge(request: ChargeRequest, captureMethod: 'manual' | 'automatic', operation: string): Promise<PaymentOutcome> {
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

  async function retrievePaymentMethod(id: string): Promise<ProcessorPaymentMethod | undefined> {
    try {
      return paymentMethodOf(await stripe.paymentMethods.retrieve(id));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw failure(error, 'retrieving a payment method');
    }
  }

  async function retrieveIntent(id: string): Promise<Stripe.PaymentIntent | undefined> {
    try {
      return await stripe.paymentIntents.retrieve(id, { expand: ['latest_charge'] });
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw failure(error, 'retrieving a payment intent');
    }
  }

  const processor: PaymentProcessor = {
    info,

    createCustomer: (input) =>
      call('creating a customer', async () => {
        const customer = await stripe.customers.create(
          { metadata: input.metadata, ...(input.description ? { description: input.description } : {}) },
          { idempotencyKey: input.idempotencyKey },
        );
        return { customerId: customer.id };
      }),

    createSetupIntent: (input) =>
      call('creating a setup intent', async () =>
        setupIntentOf(
          await stripe.setupIntents.create(
            { customer: input.customerId, allowed_payment_method_types: [input.paymentMethodType], usage: 'off_session', metadata: input.metadata },
            input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : undefined,
          ),
        ),
      ),

    async retrieveSetupIntent(id) {
      try {
        return setupIntentOf(await stripe.setupIntents.retrieve(id));
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw failure(error, 'retrieving a setup intent');
      }
    },

    listPaymentMethods: (customerId) =>
      call('listing payment methods', async () => {
        const methods: ProcessorPaymentMethod[] = [];
        for await (const pm of stripe.customers.listPaymentMethods(customerId, { limit: 100 })) methods.push(paymentMethodOf(pm));
        return methods;
      }),

    retrievePaymentMethod,

    async detachPaymentMethod(id) {
      const current = await retrievePaymentMethod(id);
      if (!current?.customerId) return 'not_attached';
      try {
        await stripe.paymentMethods.detach(id);
        return 'detached';
      } catch (error) {
        // Detached meanwhile (a retry, another instance): done all the same.
        const now = await retrievePaymentMethod(id);
        if (!now?.customerId) return 'not_attached';
        throw failure(error, 'detaching a payment method');
      }
    },

    setDefaultPaymentMethod: (customerId, paymentMethodId) =>
      call('setting the default payment method', async () => {
        await stripe.customers.update(customerId, { invoice_settings: { default_payment_method: paymentMethodId ?? '' } });
      }),

    placeHold: (request) => charge(request, 'manual', 'placing a hold'),

    chargeOffSession: (request) => charge(request, 'automatic', 'charging off-session'),

    async captureHold(input): Promise<CaptureResult> {
      try {
        const intent = await stripe.paymentIntents.capture(
          input.paymentIntentId,
          { amount_to_capture: input.amount },
          { idempotencyKey: input.idempotencyKey },
        );
        return { status: 'captured', paymentIntentId: intent.id, amountCaptured: intent.amount_received };
      } catch (error) {
        if (!isUnexpectedState(error)) throw failure(error, 'capturing a hold');
        const intent = await retrieveIntent(input.paymentIntentId);
        if (intent?.status === 'succeeded') return { status: 'captured', paymentIntentId: intent.id, amountCaptured: intent.amount_received };
        return {
          status: 'not_capturable',
          paymentIntentId: input.paymentIntentId,
          intentStatus: intent?.status ?? 'unknown',
          reason: intent?.cancellation_reason ?? null,
        };
      }
    },

    async releaseHold(input): Promise<ReleaseResult> {
      try {
        const intent = await stripe.paymentIntents.cancel(input.paymentIntentId, {}, { idempotencyKey: input.idempotencyKey });
        return { status: 'released', paymentIntentId: intent.id, reason: intent.cancellation_reason };
      } catch (error) {
        if (!isUnexpectedState(error)) throw failure(error, 'releasing a hold');
        const intent = await retrieveIntent(input.paymentIntentId);
        if (intent?.status === 'canceled') return { status: 'released', paymentIntentId: intent.id, reason: intent.cancellation_reason };
        return { status: 'not_releasable', paymentIntentId: input.paymentIntentId, intentStatus: intent?.status ?? 'unknown' };
      }
    },

    async retrievePaymentIntent(id): Promise<ProcessorPaymentIntent | undefined> {
      const intent = await retrieveIntent(id);
      return intent ? paymentIntentOf(intent) : undefined;
    },

    async findPaymentIntent(input): Promise<ProcessorPaymentIntent | undefined> {
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
      const intent = found ? await retrieveIntent(found) : undefined;
      return intent ? paymentIntentOf(intent) : undefined;
    },

    verifyWebhook(rawBody, signatureHeader, receivedAt): ProcessorEvent {
      if (!signatureHeader) throw new WebhookSignatureError('The Stripe-Signature header is missing.');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, signatureHeader, options.webhookSecret, WEBHOOK_TOLERANCE_SECONDS, undefined, receivedAt.getTime());
      } catch (error) {
        if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
          throw new WebhookSignatureError(/tolerance/i.test(error.message) ? 'The signature is too old.' : 'The signature does not match the payload.');
        }
        throw new WebhookSignatureError('The payload is not a Stripe event.');
      }
      const object = (event.data as { object?: { object?: unknown; id?: unknown } } | undefined)?.object;
      return {
        id: event.id,
        type: event.type,
        created: new Date(event.created * 1000),
        object: object && typeof object.object === 'string' && typeof object.id === 'string' ? { type: object.object, id: object.id } : null,
      };
    },
  };
  return options.metrics ? observedProcessor(processor, options.metrics) : processor;
}
