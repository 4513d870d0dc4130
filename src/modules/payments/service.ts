// Payments: the factory. It only assembles the rules over one context; each
// rule lives in a file named for its part, whose header says how it plays
// with the others:
//   processor-calls.ts  asking the processor: no connection held meanwhile, failures as 503/500
//   claims.ts           what must not run twice at once, across instances
//   customers.ts        the user's processor customer, and the claim named after it
//   mirror.ts           our copy of the user's payment methods, and the default rules
//   methods.ts          setup intents and payment methods (the API); removal and its guards
//   holds.ts            holds for charging sessions: place, capture, release; states only move forward
//   hold-sweep.ts       holds a crash left pending
//   charges.ts          charges without a hold, and where a payment intent stands
//   webhooks.ts         the processor's webhooks
// Every user-facing function takes the caller's client id; another client's
// user or payment method is "not found". SQL lives in repository.ts.
import type { Queryable } from '../../platform/db.ts';
import { chargeOffSession, paymentIntent } from './charges.ts';
import { type PaymentsContextDeps, paymentsContext } from './context.ts';
import { type HoldSweepOptions, type HoldSweepResult, sweepHolds } from './hold-sweep.ts';
import { captureHold, getHold, getHolds, type HoldRequest, placeHold, refreshHold, releaseHold } from './holds.ts';
import {
  createSetupIntent,
  getPaymentMethod,
  listPaymentMethods,
  type MethodsContext,
  type PaymentMethodRemovalGuard,
  removePaymentMethod,
  setDefaultPaymentMethod,
} from './methods.ts';
import type { PaymentMethodType } from './processor.ts';
import { handleWebhook, type PaymentIntentListener, type WebhooksContext } from './webhooks.ts';

export type { PaymentsLog } from './context.ts';
export type { HoldSweepOptions, HoldSweepResult } from './hold-sweep.ts';
export type { Hold, HoldRequest } from './holds.ts';
export { paymentMethodView } from './method-events.ts';
export type { PaymentMethodRemovalGuard } from './methods.ts';
export { type PaymentIntentListener, purgeHandledWebhookEvents } from './webhooks.ts';

export interface PaymentsServiceDeps extends PaymentsContextDeps {
  /** The users module's check: the live user of this client, or AppError not_found. */
  requireUser: MethodsContext['requireUser'];
  /** Other modules' say in removing a payment method (charging's, invoicing's): each may refuse. */
  removalGuards?: readonly PaymentMethodRemovalGuard[];
  /** Other modules following payment intents they made (invoicing's debts): called once the webhook's hold changes are written. */
  intentListeners?: readonly PaymentIntentListener[];
}

export function createPaymentsService(deps: PaymentsServiceDeps) {
  const ctx: MethodsContext & WebhooksContext = {
    ...paymentsContext(deps),
    requireUser: deps.requireUser,
    removalGuards: deps.removalGuards ?? [],
    intentListeners: deps.intentListeners ?? [],
  };

  return {
    info: deps.processor.info,

    paymentIntent: (id: string) => paymentIntent(ctx, id),

    // Setup intents and payment methods (the API): methods.ts.
    createSetupIntent: (clientId: string, userId: string, pmType: PaymentMethodType) => createSetupIntent(ctx, clientId, userId, pmType),
    listPaymentMethods: (clientId: string, userId: string, page: { limit: number; offset: number }) => listPaymentMethods(ctx, clientId, userId, page),
    getPaymentMethod: (tx: Queryable, clientId: string, userId: string, paymentMethodId: string) =>
      getPaymentMethod(ctx, tx, clientId, userId, paymentMethodId),
    removePaymentMethod: (clientId: string, userId: string, paymentMethodId: string) => removePaymentMethod(ctx, clientId, userId, paymentMethodId),
    setDefaultPaymentMethod: (clientId: string, userId: string, paymentMethodId: string) => setDefaultPaymentMethod(ctx, clientId, userId, paymentMethodId),

    // Holds (used by charging): holds.ts; charges without a hold: charges.ts.
    placeHold: (request: HoldRequest) => placeHold(ctx, request),
    getHold: (clientId: string, reference: string) => getHold(ctx, clientId, reference),
    getHolds: (q: Queryable, clientId: string, references: readonly string[]) => getHolds(ctx, q, clientId, references),
    refreshHold: (clientId: string, reference: string) => refreshHold(ctx, clientId, reference),
    captureHold: (clientId: string, reference: string, amount: number) => captureHold(ctx, clientId, reference, amount),
    releaseHold: (clientId: string, reference: string) => releaseHold(ctx, clientId, reference),
    chargeOffSession: (request: HoldRequest & { idempotencyKey: string }) => chargeOffSession(ctx, request),

    // The processor's webhooks: webhooks.ts.
    handleWebhook: (rawBody: Buffer, signature: string | undefined) => handleWebhook(ctx, rawBody, signature),
  };
}

export type PaymentsService = ReturnType<typeof createPaymentsService>;

/**
 * Resolves holds a crash left pending (run periodically, e.g. hourly): placed
 * again with their idempotency key while the processor still knows it (23 h),
 * later looked up by their metadata, and `failed` when the processor never
 * made them.
 */
export function sweepPendingHolds(deps: PaymentsContextDeps, options?: HoldSweepOptions): Promise<HoldSweepResult> {
  return sweepHolds(paymentsContext(deps), options);
}
