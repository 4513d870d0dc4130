// The one PaymentProcessor adapter: Stripe, through its official SDK with a
// pinned API version. The same code talks to api.stripe.com in production and
// to the built-in sandbox (apiBase) in development and tests.
// The factory only assembles the SDK client and the operations, which live in:
//   stripe-values.ts           Stripe's answers and errors as the port's values (outcomes, declines, failures)
//   stripe-payment-methods.ts  customers, setup intents, payment methods
//   stripe-payment-intents.ts  holds, off-session charges, capture, release, reading intents back
// Webhook signatures are checked here (verifyWebhook): no call, only the SDK's check.
import Stripe from 'stripe';
import type { Metrics } from '../../platform/metrics.ts';
import { type PaymentProcessor, type ProcessorAccount, type ProcessorEvent, WebhookSignatureError } from './processor.ts';
import { observedProcessor } from './processor-metrics.ts';
import { captureHold, charge, findPaymentIntent, releaseHold, retrievePaymentIntent } from './stripe-payment-intents.ts';
import {
  createCustomer,
  createSetupIntent,
  detachPaymentMethod,
  listPaymentMethods,
  retrievePaymentMethod,
  retrieveSetupIntent,
  setDefaultPaymentMethod,
} from './stripe-payment-methods.ts';

export { outcomeOf } from './stripe-values.ts';

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

function verifyWebhook(stripe: Stripe, webhookSecret: string, rawBody: Buffer, signatureHeader: string | undefined, receivedAt: Date): ProcessorEvent {
  if (!signatureHeader) throw new WebhookSignatureError('The Stripe-Signature header is missing.');
  let event: Stripe.Event;
  try {
    event = stripe.webhooks.constructEvent(rawBody, signatureHeader, webhookSecret, WEBHOOK_TOLERANCE_SECONDS, undefined, receivedAt.getTime());
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
}

export function createStripeProcessor(options: StripeProcessorOptions): PaymentProcessor {
  const stripe = new Stripe(options.secretKey, clientOptions(options));
  const info = { name: 'stripe' as const, account: accountOf(options), sandbox: options.sandbox === true, publishableKey: options.publishableKey };

  const processor: PaymentProcessor = {
    info,

    // Customers, setup intents, payment methods: stripe-payment-methods.ts.
    createCustomer: (input) => createCustomer(stripe, input),
    createSetupIntent: (input) => createSetupIntent(stripe, input),
    retrieveSetupIntent: (id) => retrieveSetupIntent(stripe, id),
    listPaymentMethods: (customerId) => listPaymentMethods(stripe, customerId),
    retrievePaymentMethod: (id) => retrievePaymentMethod(stripe, id),
    detachPaymentMethod: (id) => detachPaymentMethod(stripe, id),
    setDefaultPaymentMethod: (customerId, paymentMethodId) => setDefaultPaymentMethod(stripe, customerId, paymentMethodId),

    // Holds, charges and payment intents: stripe-payment-intents.ts.
    placeHold: (request) => charge(stripe, request, 'manual', 'placing a hold'),
    chargeOffSession: (request) => charge(stripe, request, 'automatic', 'charging off-session'),
    captureHold: (input) => captureHold(stripe, input),
    releaseHold: (input) => releaseHold(stripe, input),
    retrievePaymentIntent: (id) => retrievePaymentIntent(stripe, id),
    findPaymentIntent: (input) => findPaymentIntent(stripe, input),

    verifyWebhook: (rawBody, signatureHeader, receivedAt) => verifyWebhook(stripe, options.webhookSecret, rawBody, signatureHeader, receivedAt),
  };
  return options.metrics ? observedProcessor(processor, options.metrics) : processor;
}
