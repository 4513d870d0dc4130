// The sandbox's background work, as Stripe does it on its side: uncaptured
// authorizations lapse when due, and webhook deliveries are sent, retried
// with growing delays, and given up after three days. Each pass claims its
// deliveries with a lease, so several sandbox processes never send one twice.
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { sharedPasses } from '../../platform/shared-passes.ts';
import type { Engine } from './engine.ts';
import { stripeOrder } from './objects.ts';
import * as store from './store.ts';
import { GIVE_UP_AFTER_MS, postWebhook, retryDelay, signatureHeader } from './webhooks.ts';

const DELIVERY_LEASE_MS = 60_000;

export interface DueWorkResult {
  expired: number;
  delivered: number;
  retried: number;
}

export interface DueWorkContext {
  db: Database;
  clock: Clock;
  engine: Engine;
  /** Signs each delivery's payload. */
  webhookSecret: string;
  log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** Stops a pass: deliveries in flight are cut off, those claimed and not attempted are due again at once. */
  signal?: AbortSignal;
}

/** Lapses the uncaptured authorizations past their capture_before (100 at a time), each in its own transaction. */
export async function expireDue({ db, clock, engine }: DueWorkContext): Promise<number> {
  let count = 0;
  for (const id of await store.dueExpiries(db, clock.now(), 100)) {
    await db.transaction((tx) => engine.expireIfDue(tx, id));
    count++;
  }
  return count;
}

/** Deliveries claimed per statement, and sent at most this many at a time (each worker takes the next one claimed). */
const DELIVERY_BATCH = 200;
const DELIVERY_CONCURRENCY = 32;

interface Delivering {
  delivered: number;
  retried: number;
  /** Claimed but not attempted (the pass was stopped): due again at once, for the next pass or another process. */
  unsent: store.DueDelivery[];
}

/** Sends one delivery and records the attempt, or leaves it unsent when the pass is stopped meanwhile. */
async function deliverOne(ctx: DueWorkContext, delivery: store.DueDelivery, outcome: Delivering): Promise<void> {
  const { db, clock, webhookSecret, log, signal } = ctx;
  const payload = JSON.stringify(stripeOrder(delivery.event), null, 2);
  const sentAt = clock.now();
  const result = await postWebhook(delivery.target, payload, signatureHeader(payload, webhookSecret, Math.floor(sentAt.getTime() / 1000)), 10_000, signal);
  if (signal?.aborted) {
    outcome.unsent.push(delivery);
    return;
  }
  const ok = result.status !== null && result.status >= 200 && result.status < 300;
  const now = clock.now();
  const attempts = delivery.attempts + 1;
  const giveUp = !ok && now.getTime() - delivery.createdAt.getTime() >= GIVE_UP_AFTER_MS;
  const nextAttemptAt = ok || giveUp ? null : new Date(now.getTime() + retryDelay(attempts));
  await store.recordDeliveryAttempt(db, delivery, { delivered: ok, status: result.status, error: result.error, nextAttemptAt, at: now });
  if (ok) {
    outcome.delivered++;
    return;
  }
  outcome.retried++;
  log('warn', 'webhook delivery failed', {
    event: delivery.eventId,
    endpoint: delivery.endpoint,
    status: result.status,
    error: result.error,
    attempts,
    giveUp,
  });
}

/**
 * Sends every due webhook delivery once, recording each attempt and when to retry (or that it gave up): claimed
 * DELIVERY_BATCH at a time, DELIVERY_CONCURRENCY in flight, until a claim finds less than a batch (the backlog is
 * through; what became due meanwhile is the next pass's, so that under a steady stream of events a pass still ends)
 * or `signal` stops the pass. A stopped pass cuts off what is in flight and makes what it claimed but did not
 * attempt due again (nothing is lost; an endpoint may see a cut-off delivery again, as Stripe's endpoints may).
 */
export async function deliverDue(ctx: DueWorkContext): Promise<{ delivered: number; retried: number }> {
  const { db, clock, signal } = ctx;
  const outcome: Delivering = { delivered: 0, retried: 0, unsent: [] };
  while (!signal?.aborted) {
    const due = await store.claimDueDeliveries(db, clock.now(), DELIVERY_LEASE_MS, DELIVERY_BATCH);
    if (due.length === 0) break;
    let next = 0;
    const worker = async () => {
      for (let delivery = due[next++]; delivery; delivery = due[next++]) {
        if (signal?.aborted) outcome.unsent.push(delivery);
        else await deliverOne(ctx, delivery, outcome);
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELIVERY_CONCURRENCY, due.length) }, worker));
    if (due.length < DELIVERY_BATCH) break;
  }
  if (outcome.unsent.length > 0) await store.releaseDeliveries(db, outcome.unsent, clock.now());
  return { delivered: outcome.delivered, retried: outcome.retried };
}

/**
 * Lapses due authorizations and delivers due webhooks. Concurrent calls of
 * `run` share passes (src/platform/shared-passes.ts): a call during a pass gets
 * the one pass after it (a change committed during a pass may have added
 * deliveries it did not see); `stop` waits for the pass under way (cutting off
 * its deliveries in flight) and asks for no more.
 */
export function sharedDueWork(context: DueWorkContext) {
  let stopped = false;
  const stopping = new AbortController();
  const ctx: DueWorkContext = { ...context, signal: context.signal ? AbortSignal.any([context.signal, stopping.signal]) : stopping.signal };
  const passes = sharedPasses(async (): Promise<DueWorkResult> => {
    if (stopped) return { expired: 0, delivered: 0, retried: 0 };
    const expired = await expireDue(ctx);
    const sent = await deliverDue(ctx);
    return { expired, delivered: sent.delivered, retried: sent.retried };
  });

  function run(): Promise<DueWorkResult> {
    if (stopped) return Promise.resolve({ expired: 0, delivered: 0, retried: 0 });
    return passes.run();
  }

  async function stop(): Promise<void> {
    stopped = true;
    stopping.abort();
    await passes.current()?.catch(() => {});
  }

  return { run, stop };
}
