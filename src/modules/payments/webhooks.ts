// The processor's webhooks: verified, applied at most once per event id (a
// failed one is delivered and applied again), each applied by re-reading the
// object it names from the processor and writing conditionally, so applying
// twice is harmless. Payment methods are brought in line under the owner's
// customer claim (mirror.ts); payment intents are merged into their hold
// (holds.ts) and then told to the modules that follow them.
import type { Clock } from '../../platform/clock.ts';
import type { Queryable } from '../../platform/db.ts';
import type { PaymentsContext } from './context.ts';
import { holdChanges, merge, refresh } from './holds.ts';
import { refreshPaymentMethod } from './mirror.ts';
import type { ProcessorEvent } from './processor.ts';
import { ask } from './processor-calls.ts';
import * as repo from './repository.ts';

/**
 * The processor's event types this service acts on: what a Stripe webhook endpoint of ours must enable (README), and
 * all that the payment sandbox sends us. Any other is acknowledged and dropped.
 */
export const HANDLED_EVENT_TYPES: readonly string[] = [
  'setup_intent.succeeded',
  'payment_method.attached',
  'payment_method.detached',
  'payment_method.updated',
  'payment_method.automatically_updated',
  'payment_intent.created',
  'payment_intent.processing',
  'payment_intent.requires_action',
  'payment_intent.amount_capturable_updated',
  'payment_intent.partially_funded',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Told that a payment intent changed (a verified webhook), once its hold was
 * brought in line; re-read it with paymentIntent() before acting. Called with
 * the pool, outside any transaction (it may ask the processor); an error has
 * the webhook delivered again.
 */
export type PaymentIntentListener = (db: Queryable, paymentIntentId: string) => Promise<void>;

export interface WebhooksContext extends PaymentsContext {
  /** Called at each payment_intent event, in order: given when the service is made (src/modules.ts). */
  intentListeners: readonly PaymentIntentListener[];
}

/**
 * A payment_intent event: the hold with that intent, or, when the answer to
 * placing it was never recorded (a crash between the processor's call and
 * our write), the hold our metadata names (merge takes it only if it has no
 * other intent); its state and intent id are recorded.
 */
async function applyIntentEvent(ctx: PaymentsContext, paymentIntentId: string): Promise<void> {
  const hold = await repo.findHoldByIntent(ctx.db, ctx.account, paymentIntentId);
  if (hold) {
    await refresh(ctx, hold);
    return;
  }
  const intent = await ctx.processor.retrievePaymentIntent(paymentIntentId);
  const holdId = intent?.metadata.hold_id;
  if (!intent || !holdId || !UUID.test(holdId)) return;
  const unrecorded = await repo.findHold(ctx.db, holdId);
  if (unrecorded?.account === ctx.account) await merge(ctx, unrecorded, holdChanges(intent.outcome));
}

async function applyEvent(ctx: WebhooksContext, event: ProcessorEvent): Promise<void> {
  if (!event.object || !HANDLED_EVENT_TYPES.includes(event.type)) return;
  switch (event.object.type) {
    case 'setup_intent': {
      const intent = await ctx.processor.retrieveSetupIntent(event.object.id);
      if (intent?.status === 'succeeded' && intent.paymentMethodId) await refreshPaymentMethod(ctx, intent.paymentMethodId);
      return;
    }
    case 'payment_method':
      await refreshPaymentMethod(ctx, event.object.id);
      return;
    case 'payment_intent':
      await applyIntentEvent(ctx, event.object.id);
      for (const listener of ctx.intentListeners) await listener(ctx.db, event.object.id);
      return;
    default:
      return;
  }
}

/**
 * Applies a processor webhook: verified on the raw body (throws
 * WebhookSignatureError), dropped if its id was handled before, otherwise
 * the object it names is re-read from the processor and our state brought
 * in line. The event is recorded as handled only then: one whose handling
 * failed is delivered again and applied again.
 */
export async function handleWebhook(ctx: WebhooksContext, rawBody: Buffer, signature: string | undefined): Promise<{ duplicate: boolean; type: string }> {
  const { db, account, clock } = ctx;
  const event = ctx.processor.verifyWebhook(rawBody, signature, clock.now());
  if (await repo.webhookEventHandled(db, account, event.id)) return { duplicate: true, type: event.type };
  await ask(ctx, () => applyEvent(ctx, event));
  const recorded = await repo.recordWebhookEvent(db, account, event.id, event.type, clock.now());
  return { duplicate: !recorded, type: event.type };
}

/**
 * Forgets handled webhook event ids after 30 days (Stripe stops redelivering
 * after 3), and the claims of holders that died, a day after they lapsed
 * (nobody took them over); run periodically. Answers the events forgotten.
 */
export async function purgeHandledWebhookEvents(db: Queryable, clock: Clock): Promise<number> {
  await repo.purgeLapsedClaims(db, 24 * 3_600_000);
  return repo.purgeWebhookEvents(db, new Date(clock.now().getTime() - 30 * 24 * 3_600_000));
}
