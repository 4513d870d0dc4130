// The sweep of holds a crash left pending (the processor's answer never
// recorded): run periodically by main.ts. Like every answer to placing a
// hold (holds.ts), what it learns is written only while the hold is still
// pending.
import type { PaymentsContext } from './context.ts';
import { customerIdOf, holdChanges, place } from './holds.ts';
import { ask } from './processor-calls.ts';
import * as repo from './repository.ts';

const HOUR_MS = 3_600_000;

export interface HoldSweepOptions {
  /** Pending holds younger than this may still be on their way (a request in flight): left alone. Default 2 minutes. */
  graceMs?: number;
  /** Younger than this, the processor still knows the idempotency key (Stripe: at least 24 h): placed again with it. Default 23 h. */
  retryWindowMs?: number;
  /** At most this many holds per sweep (oldest first). Default 100. */
  limit?: number;
}

export interface HoldSweepResult {
  /** Pending holds looked at (a webhook may have resolved one meanwhile: then it counts nowhere else). */
  examined: number;
  /** Placed again with their idempotency key: the processor's answer is now recorded. */
  resumed: number;
  /** Older ones whose payment intent was found by our metadata and recorded. */
  found: number;
  /** Older ones the processor never made: now `failed`. */
  failed: number;
  /** Still pending (the processor could not be reached): tried again at the next sweep. */
  unresolved: number;
}

/**
 * Resolves holds left pending by a crash: a younger one is placed again with
 * its idempotency key (the processor answers the intent it made, or makes it
 * now); for an older one the key may be forgotten, so its intent is looked up
 * by our metadata instead of risking a second one, and when there is none the
 * hold is `failed`.
 */
export async function sweepHolds(ctx: PaymentsContext, options: HoldSweepOptions = {}): Promise<HoldSweepResult> {
  const graceMs = options.graceMs ?? 2 * 60_000;
  const retryWindowMs = options.retryWindowMs ?? 23 * HOUR_MS;
  const now = ctx.clock.now();
  const result: HoldSweepResult = { examined: 0, resumed: 0, found: 0, failed: 0, unresolved: 0 };
  for (const pending of await repo.pendingHolds(ctx.db, ctx.account, new Date(now.getTime() - graceMs), options.limit ?? 100)) {
    result.examined++;
    try {
      if (now.getTime() - pending.created_at.getTime() < retryWindowMs) {
        const placed = await place(ctx, pending.id);
        if (placed.status === 'pending') result.unresolved++;
        else result.resumed++;
        continue;
      }
      const customerId = await customerIdOf(ctx, pending);
      const intent = await ask(ctx, () =>
        ctx.processor.findPaymentIntent({
          customerId,
          metadataKey: 'hold_id',
          metadataValue: pending.id,
          // Our clock and the processor's may differ a little.
          createdSince: new Date(pending.created_at.getTime() - HOUR_MS),
        }),
      );
      const changes: repo.HoldChanges = intent
        ? holdChanges(intent.outcome)
        : { status: 'failed', failure_code: 'not_placed', failure_message: 'The hold was never placed at the payment processor.' };
      if (await repo.updateHold(ctx.db, pending.id, changes, ctx.clock.now(), ['pending'])) {
        if (intent) result.found++;
        else result.failed++;
      }
    } catch (error) {
      result.unresolved++;
      ctx.log?.warn({ err: error, hold_id: pending.id }, 'a pending hold could not be resolved; the next sweep tries again');
    }
  }
  return result;
}
