// The Stripe semantics of the sandbox, assembled: the operations live in one
// file per resource (customers.ts, payment-methods.ts, setup-intents.ts,
// payment-intents.ts, charges.ts, events.ts) as functions over an explicit
// context (context.ts) and the shared store (store.ts); routes.ts maps the API
// onto them. Every operation runs inside the caller's transaction; events are
// recorded with it and delivered after commit.
import type { Clock } from '../../platform/clock.ts';
import type { Queryable } from '../../platform/db.ts';
import type { AccountSettings, EngineContext } from './context.ts';
import { SandboxError } from './errors.ts';
import type { FormObject } from './form.ts';
import type { Metadata, PaymentIntentObject } from './objects.ts';
import { authenticatePaymentIntentInBrowser, expireIfDue, paymentIntentBySecret } from './payment-intents.ts';
import { recognizes, route, unrecognized } from './routes.ts';
import { authenticateSetupIntentInBrowser, type BrowserSetupInput, confirmSetupIntentInBrowser, setupIntentBySecret } from './setup-intents.ts';
import * as store from './store.ts';

export interface EngineOptions extends AccountSettings {
  clock: Clock;
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

/**
 * Runs one API call in the transaction. A SandboxError with `commit` (a
 * decline) is answered as an error but its changes stay; any other error
 * propagates and the caller rolls back.
 */
export async function handleApiCall(ctx: EngineContext, call: ApiCall): Promise<ApiAnswer & { commit: boolean }> {
  const found = route(call.method, call.path);
  if (!found) throw unrecognized(call.method, call.path);
  try {
    return { status: 200, body: await found.handler(ctx, call.params, found.ids), commit: true };
  } catch (error) {
    if (error instanceof SandboxError && error.commit) return { status: error.status, body: { error: error.body }, commit: true };
    throw error;
  }
}

export function createEngine(options: EngineOptions) {
  const { clock, ...account } = options;

  /** The browser stand-in and the background lapse are not API requests: no request id, the account's API version. */
  const contextWithoutRequest = (tx: Queryable): EngineContext => ({
    tx,
    now: clock.now(),
    apiVersion: account.apiVersion,
    requestId: null,
    idempotencyKey: null,
    account,
  });

  return {
    handle: (tx: Queryable, call: ApiCall) =>
      handleApiCall({ tx, now: clock.now(), apiVersion: call.apiVersion, requestId: call.requestId, idempotencyKey: call.idempotencyKey, account }, call),
    recognizes,
    expireIfDue: async (tx: Queryable, id: string): Promise<void> => {
      const ctx = contextWithoutRequest(tx);
      const pi = await store.loadObject<PaymentIntentObject>(tx, id, 'payment_intent', { forUpdate: true });
      if (pi) await expireIfDue(ctx, pi);
    },
    /** Confirms a setup intent with a card number or a PayPal approval, as the processor's frontend SDK would. */
    browserConfirmSetupIntent: (tx: Queryable, id: string, input: BrowserSetupInput) => confirmSetupIntentInBrowser(contextWithoutRequest(tx), id, input),
    /** Completes (or fails) the 3-D Secure challenge of a setup intent. */
    browserAuthenticateSetupIntent: (tx: Queryable, id: string, clientSecret: string, outcome: 'approve' | 'fail') =>
      authenticateSetupIntentInBrowser(contextWithoutRequest(tx), id, clientSecret, outcome),
    /** Completes (or fails) the 3-D Secure challenge of a payment intent. */
    browserAuthenticatePaymentIntent: (tx: Queryable, id: string, clientSecret: string, outcome: 'approve' | 'fail') =>
      authenticatePaymentIntentInBrowser(contextWithoutRequest(tx), id, clientSecret, outcome),
    /** The intent a client secret unlocks, for the hosted page. */
    async browserRetrieve(tx: Queryable, kind: 'setup_intent' | 'payment_intent', id: string, clientSecret: string) {
      const ctx = contextWithoutRequest(tx);
      return kind === 'setup_intent' ? (await setupIntentBySecret(ctx, id, clientSecret)).data : (await paymentIntentBySecret(ctx, id, clientSecret)).data;
    },
  };
}

export type Engine = ReturnType<typeof createEngine>;

export type { Metadata };
