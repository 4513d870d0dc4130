// What every operation of the Stripe sandbox runs with: the caller's
// transaction, the request's clock reading and identity, and the account's
// settings. Each resource file (customers.ts, payment-methods.ts, ...) takes
// it explicitly, so one operation can be read without the others.
import type { Queryable } from '../../platform/db.ts';
import type { FormObject } from './form.ts';
import type { CustomerObject, PaymentIntentObject, PaymentMethodInternal, PaymentMethodObject, SetupIntentObject } from './objects.ts';
import type { StoredObject } from './store.ts';

/** The account's settings, the same for every request. */
export interface AccountSettings {
  /** api_version of the events (the account's default version). */
  apiVersion: string;
  /** How long an uncaptured (manual capture) authorization lasts. */
  holdValidityMs: number;
  /** Keys card fingerprints. */
  fingerprintKey: string;
  /** Base URL of the browser stand-in (/sandbox/...), shown in next_action. */
  browserBaseUrl: string | undefined;
}

export interface EngineContext {
  tx: Queryable;
  now: Date;
  /** The request's Stripe-Version (or the account's default): decides parameter names. */
  apiVersion: string;
  requestId: string | null;
  idempotencyKey: string | null;
  account: AccountSettings;
}

/** One API operation: its decoded parameters and the ids its path carries. */
export type Handler = (ctx: EngineContext, params: FormObject, ids: string[]) => Promise<unknown>;

export type StoredCustomer = StoredObject<CustomerObject>;
export type StoredPaymentMethod = StoredObject<PaymentMethodObject, PaymentMethodInternal>;
export type StoredSetupIntent = StoredObject<SetupIntentObject>;
export type StoredPaymentIntent = StoredObject<PaymentIntentObject>;

export const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
/** Events and error bodies carry a snapshot, never the object that is changed next. */
export const clone = <T>(value: T): T => structuredClone(value);
