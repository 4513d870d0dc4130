// The PaymentProcessor port: everything the service asks of a card processor.
// Expected outcomes (authorized, needs customer authentication, declined,
// processing) are values; only transport or unexpected failures throw
// (PaymentProcessorError). Amounts are integer minor units.

export type PaymentMethodType = 'card' | 'paypal';

/** The processor account the ids below belong to; switching accounts never reuses the old ids. */
export type ProcessorAccount = 'stripe_sandbox' | 'stripe_test' | 'stripe_live';

export interface ProcessorInfo {
  name: 'stripe';
  account: ProcessorAccount;
  /** True when the processor is the built-in sandbox (clients confirm through /sandbox/... instead of the processor's SDK). */
  sandbox: boolean;
  publishableKey: string;
}

export interface ProcessorPaymentMethod {
  id: string;
  /** The customer it is attached to; null once detached. */
  customerId: string | null;
  type: 'card' | 'paypal' | 'apple_pay' | 'google_pay' | 'other';
  /** When the processor created it (attached it, for methods set up through a setup intent). */
  created: Date;
  card: { brand: string; last4: string; expMonth: number; expYear: number; cardholderName: string | null } | null;
  paypal: { email: string | null } | null;
}

export interface ProcessorSetupIntent {
  id: string;
  clientSecret: string;
  status: 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing' | 'canceled' | 'succeeded';
  customerId: string | null;
  paymentMethodId: string | null;
}

/** Where a payment intent (a hold or a charge) stands, as a value. */
export type PaymentOutcome =
  /** Funds held (manual capture), capturable up to amountCapturable until captureBefore. */
  | { status: 'authorized'; paymentIntentId: string; amountCapturable: number; captureBefore: Date | null }
  /** Charged (automatic capture, or a hold captured). */
  | { status: 'succeeded'; paymentIntentId: string; amountReceived: number }
  /** The customer must authenticate (3-D Secure) with this client secret through the processor's SDK. */
  | { status: 'requires_action'; paymentIntentId: string; clientSecret: string; code: string | null }
  /** Refused; `retryable`: the same method may work later (e.g. insufficient funds), as opposed to a hard decline. */
  | { status: 'declined'; paymentIntentId: string | null; code: string; declineCode: string | null; message: string; retryable: boolean }
  /** The processor has not decided yet; a webhook will tell. */
  | { status: 'processing'; paymentIntentId: string }
  /** Canceled: released by us, or lapsed (reason automatic: the authorization expired uncaptured). */
  | { status: 'canceled'; paymentIntentId: string; reason: string | null };

export interface ProcessorPaymentIntent {
  id: string;
  outcome: PaymentOutcome;
  amount: number;
  amountCapturable: number;
  amountReceived: number;
  currency: string;
  customerId: string | null;
  clientSecret: string;
  captureMethod: 'manual' | 'automatic';
  /** Ours, as sent when it was made (e.g. hold_id). */
  metadata: Record<string, string>;
  created: Date;
}

export interface ChargeRequest {
  customerId: string;
  paymentMethodId: string;
  paymentMethodType: PaymentMethodType;
  /** Minor units (cents). */
  amount: number;
  /** ISO 4217, any case. */
  currency: string;
  /** Ours, stable per operation (e.g. `session:<id>:hold`): a retry never charges twice. */
  idempotencyKey: string;
  description?: string;
  metadata?: Record<string, string>;
}

export type CaptureResult =
  | { status: 'captured'; paymentIntentId: string; amountCaptured: number }
  /** Nothing to capture any more (released, lapsed, or never authorized). */
  | { status: 'not_capturable'; paymentIntentId: string; intentStatus: string; reason: string | null };

export type ReleaseResult =
  | { status: 'released'; paymentIntentId: string; reason: string | null }
  /** Already captured: nothing to release. */
  | { status: 'not_releasable'; paymentIntentId: string; intentStatus: string };

/** A verified webhook event: which object changed. Re-read the object; never trust the payload's copy. */
export interface ProcessorEvent {
  id: string;
  type: string;
  created: Date;
  object: { type: string; id: string } | null;
}

export interface PaymentProcessor {
  readonly info: ProcessorInfo;

  /** Creates the processor's customer for one of our users; the idempotency key makes concurrent first calls create one. */
  createCustomer(input: { idempotencyKey: string; metadata: Record<string, string>; description?: string }): Promise<{ customerId: string }>;

  /** A setup intent for saving a method for later off-session use; the client confirms it with the processor's SDK. */
  createSetupIntent(input: {
    customerId: string;
    paymentMethodType: PaymentMethodType;
    metadata: Record<string, string>;
    idempotencyKey?: string;
  }): Promise<ProcessorSetupIntent>;
  retrieveSetupIntent(id: string): Promise<ProcessorSetupIntent | undefined>;

  /** All methods attached to the customer. */
  listPaymentMethods(customerId: string): Promise<ProcessorPaymentMethod[]>;
  /** Undefined when the processor does not know the id. */
  retrievePaymentMethod(id: string): Promise<ProcessorPaymentMethod | undefined>;
  /** Detaches; a method that is no longer attached counts as done. */
  detachPaymentMethod(id: string): Promise<'detached' | 'not_attached'>;
  /** Mirrors our default to the customer (invoice_settings.default_payment_method); null clears it. */
  setDefaultPaymentMethod(customerId: string, paymentMethodId: string | null): Promise<void>;

  /** Holds `amount` (manual capture, off-session, confirmed at once). */
  placeHold(request: ChargeRequest): Promise<PaymentOutcome>;
  /** Captures up to the held amount (the rest is released). */
  captureHold(input: { paymentIntentId: string; amount: number; idempotencyKey: string }): Promise<CaptureResult>;
  /** Releases a hold (cancels the payment intent). */
  releaseHold(input: { paymentIntentId: string; idempotencyKey: string }): Promise<ReleaseResult>;
  /** Charges off-session at once (automatic capture), e.g. what a session cost beyond its hold. */
  chargeOffSession(request: ChargeRequest): Promise<PaymentOutcome>;
  retrievePaymentIntent(id: string): Promise<ProcessorPaymentIntent | undefined>;
  /**
   * The customer's payment intent whose metadata has `key` = `value`, made at
   * or after `createdSince` (newest first; undefined when there is none): how
   * a hold whose answer was lost is found once its idempotency key may have
   * expired at the processor.
   */
  findPaymentIntent(input: { customerId: string; metadataKey: string; metadataValue: string; createdSince: Date }): Promise<ProcessorPaymentIntent | undefined>;

  /** Verifies a webhook's signature on the raw body (tolerance 5 min against `receivedAt`); throws WebhookSignatureError. */
  verifyWebhook(rawBody: Buffer, signatureHeader: string | undefined, receivedAt: Date): ProcessorEvent;
}

/** The processor could not be reached or answered unexpectedly (not a decline): retry later. */
export class PaymentProcessorError extends Error {
  readonly retryable: boolean;
  readonly processorCode: string | undefined;
  constructor(message: string, options: { retryable: boolean; processorCode?: string; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PaymentProcessorError';
    this.retryable = options.retryable;
    this.processorCode = options.processorCode;
  }
}

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}
