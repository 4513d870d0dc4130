// The Stripe API objects the sandbox keeps, in Stripe's JSON shape (the subset
// of fields the service and a client developer read), and their ids.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { CardBehaviour } from './cards.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random base62 string, as Stripe's ids and secrets are made of. */
export function randomToken(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out.length === length ? out : out + randomToken(length - out.length);
}

export const newId = (prefix: string) => `${prefix}_${randomToken(24)}`;

/** Compares a presented secret (API key, client secret) with the real one in constant time. */
export function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type Metadata = Record<string, string>;

export interface CustomerObject {
  id: string;
  object: 'customer';
  created: number;
  description: string | null;
  email: string | null;
  name: string | null;
  metadata: Metadata;
  invoice_settings: { custom_fields: null; default_payment_method: string | null; footer: null; rendering_options: null };
  livemode: false;
  deleted?: true;
}

export interface CardDetails {
  brand: string;
  display_brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  funding: 'credit';
  country: 'US';
  fingerprint: string;
  checks: { address_line1_check: null; address_postal_code_check: null; cvc_check: 'pass' | null };
  networks: { available: string[]; preferred: null };
  three_d_secure_usage: { supported: true };
  /** Set when the card came from a wallet (Apple Pay, Google Pay). */
  wallet: { type: 'apple_pay' | 'google_pay'; dynamic_last4: string } | null;
  generated_from: null;
}

export interface PaymentMethodObject {
  id: string;
  object: 'payment_method';
  type: 'card' | 'paypal';
  created: number;
  customer: string | null;
  livemode: false;
  metadata: Metadata;
  allow_redisplay: 'unspecified';
  billing_details: {
    address: { city: null; country: null; line1: null; line2: null; postal_code: null; state: null };
    email: string | null;
    name: string | null;
    phone: null;
  };
  card?: CardDetails;
  paypal?: { country: string; payer_email: string; payer_id: string };
}

/** What the sandbox knows of a payment method beyond its JSON. */
export interface PaymentMethodInternal {
  behaviour: CardBehaviour;
  /** Set up for off-session use (a succeeded setup intent with usage off_session). */
  setUpOffSession?: boolean;
  /** Detached once: Stripe refuses to attach such a method again. */
  consumed?: boolean;
}

export interface LastError {
  type: 'card_error' | 'invalid_request_error';
  code: string;
  decline_code?: string;
  message: string;
  payment_method?: PaymentMethodObject;
  charge?: string;
  doc_url?: string;
}

export interface NextAction {
  type: 'redirect_to_url';
  redirect_to_url: { url: string; return_url: string | null };
}

export type SetupIntentStatus = 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing' | 'canceled' | 'succeeded';

export interface SetupIntentObject {
  id: string;
  object: 'setup_intent';
  created: number;
  allowed_payment_method_types: string[] | null;
  application: null;
  automatic_payment_methods: null;
  cancellation_reason: string | null;
  client_secret: string;
  customer: string | null;
  description: string | null;
  excluded_payment_method_types: null;
  flow_directions: null;
  last_setup_error: LastError | null;
  latest_attempt: null;
  livemode: false;
  mandate: null;
  metadata: Metadata;
  next_action: NextAction | null;
  on_behalf_of: null;
  payment_method: string | null;
  payment_method_options: Record<string, unknown>;
  payment_method_types: string[];
  single_use_mandate: null;
  status: SetupIntentStatus;
  usage: 'off_session' | 'on_session';
}

export type PaymentIntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'requires_capture'
  | 'canceled'
  | 'succeeded';

export interface PaymentIntentObject {
  id: string;
  object: 'payment_intent';
  created: number;
  allowed_payment_method_types: string[] | null;
  amount: number;
  amount_capturable: number;
  amount_received: number;
  application: null;
  application_fee_amount: null;
  automatic_payment_methods: null;
  canceled_at: number | null;
  cancellation_reason: string | null;
  capture_method: 'automatic' | 'automatic_async' | 'manual';
  client_secret: string;
  confirmation_method: 'automatic' | 'manual';
  currency: string;
  customer: string | null;
  description: string | null;
  excluded_payment_method_types: null;
  last_payment_error: LastError | null;
  latest_charge: string | ChargeObject | null;
  livemode: false;
  metadata: Metadata;
  next_action: NextAction | null;
  on_behalf_of: null;
  payment_method: string | null;
  payment_method_types: string[];
  receipt_email: null;
  setup_future_usage: 'off_session' | 'on_session' | null;
  statement_descriptor: string | null;
  status: PaymentIntentStatus;
}

export interface ChargeObject {
  id: string;
  object: 'charge';
  created: number;
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
  currency: string;
  customer: string | null;
  failure_code: string | null;
  failure_message: string | null;
  livemode: false;
  metadata: Metadata;
  outcome: { network_status: string; reason: string | null; seller_message: string; type: string };
  paid: boolean;
  payment_intent: string;
  payment_method: string;
  payment_method_details: {
    type: 'card' | 'paypal';
    card?: { brand: string; last4: string; exp_month: number; exp_year: number; capture_before: number | null };
    paypal?: { payer_email: string };
  };
  refunded: boolean;
  status: 'succeeded' | 'failed';
}

export interface EventObject {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: unknown; previous_attributes?: Record<string, unknown> };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

/**
 * Stripe's key order: id, object, then the other fields alphabetically (the
 * database's jsonb does not keep the order objects were written in).
 */
export function stripeOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripeOrder);
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ['id', 'object']) if (Object.hasOwn(source, key)) out[key] = stripeOrder(source[key]);
  for (const key of Object.keys(source).sort()) if (key !== 'id' && key !== 'object') out[key] = stripeOrder(source[key]);
  return out;
}

/** The client-side view of an intent (what Stripe.js answers with a client secret): no customer, no metadata. */
export function clientView<T extends SetupIntentObject | PaymentIntentObject>(intent: T): Omit<T, 'customer' | 'metadata'> {
  const { customer: _customer, metadata: _metadata, ...view } = intent;
  return stripeOrder(view) as Omit<T, 'customer' | 'metadata'>;
}
