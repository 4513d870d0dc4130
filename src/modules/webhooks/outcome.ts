// What one attempt's answer does, in one transaction: the attempt is closed
// in the log; a 2xx delivers and ends the endpoint's failing run; 410 Gone
// disables the endpoint; anything else (another status, a timeout, no
// connection) schedules the next attempt (schedule.ts), and an endpoint
// whose attempts have all failed for 3 days is disabled. When the service
// disables an endpoint, its pending deliveries stop. A worker whose lease was
// lost (it was too slow, and another process took the delivery) only closes
// its attempt: the delivery is the other process's now.
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import * as repo from './repository.ts';
import { nextAttemptAt, RETRY_WINDOW_MS } from './schedule.ts';
import type { SendResult } from './send.ts';

interface OutcomeContext {
  db: Database;
  clock: Clock;
  /** 0..1, for the retry jitter. */
  random: () => number;
}

type Verdict = 'delivered' | 'gone' | 'failed';

function verdictOf(result: SendResult): Verdict {
  const status = result.statusCode;
  if (status !== null && status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'gone';
  return 'failed';
}

interface Recorded {
  /** False when the lease had been lost: nothing but the attempt was recorded. */
  recorded: boolean;
  verdict: Verdict;
  nextAttemptAt: Date | null;
  /** Why the endpoint was disabled by this attempt, if it was. */
  disabled: string | null;
}

const GONE_REASON = 'The endpoint answered 410 Gone: deliveries stopped. Enable it again (PATCH enabled: true) to resume.';
const failingReason = (since: Date) =>
  `Every delivery attempt failed for 3 days (since ${since.toISOString()}): deliveries stopped. Enable it again (PATCH enabled: true) to resume.`;

/** Records the attempt `claimed.attempts` of `claimed` (leased under `token`) with its result. */
export async function recordOutcome(ctx: OutcomeContext, claimed: repo.ClaimedDelivery, token: string, result: SendResult): Promise<Recorded> {
  const now = ctx.clock.now();
  const verdict = verdictOf(result);
  return ctx.db.transaction(async (tx) => {
    // Locks in one order, the endpoint's row first: an outcome that disables the endpoint writes its other
    // deliveries, so it must never wait for a delivery whose own outcome holds it while waiting for the endpoint.
    const endpoint = await repo.lockEndpointState(tx, claimed.endpoint_id);
    const leased = await repo.lockLeasedDelivery(tx, claimed.id, token);
    await repo.closeAttempt(tx, {
      deliveryId: claimed.id,
      attempt: claimed.attempts,
      now,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
    });
    if (!leased) return { recorded: false, verdict, nextAttemptAt: null, disabled: null };
    let disabled: string | null = null;
    if (endpoint && verdict === 'delivered') await repo.setEndpointFailingSince(tx, claimed.endpoint_id, null);
    if (endpoint && verdict === 'gone' && endpoint.enabled) disabled = GONE_REASON;
    if (endpoint && verdict === 'failed') {
      const since = endpoint.failing_since ?? now;
      await repo.setEndpointFailingSince(tx, claimed.endpoint_id, since);
      if (endpoint.enabled && now.getTime() - since.getTime() >= RETRY_WINDOW_MS) disabled = failingReason(since);
    }
    if (disabled) await repo.disableEndpoint(tx, claimed.endpoint_id, disabled, now);
    // Stopped by the service (now or while this attempt was in flight): no further attempt. Paused by the client:
    // the delivery keeps its schedule and waits.
    const stopped = disabled !== null || (endpoint !== undefined && !endpoint.enabled && endpoint.disabled_reason !== null);
    const next = verdict === 'failed' && !stopped ? nextAttemptAt(claimed.created_at, claimed.attempts, now, ctx.random) : null;
    await repo.finishDelivery(tx, {
      deliveryId: claimed.id,
      statusCode: result.statusCode,
      error: result.error,
      deliveredAt: verdict === 'delivered' ? now : null,
      nextAttemptAt: next,
    });
    return { recorded: true, verdict, nextAttemptAt: next, disabled };
  });
}
