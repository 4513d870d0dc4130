// The sandbox's background work, as Stripe does it on its side: uncaptured
// authorizations lapse when due, and webhook deliveries are sent, retried
// with growing delays, and given up after three days. Each pass claims its
// deliveries with a lease, so several sandbox processes never send one twice.
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
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

/** Sends every due webhook delivery once, recording each attempt and when to retry (or that it gave up). */
export async function deliverDue({ db, clock, webhookSecret, log }: DueWorkContext): Promise<{ delivered: number; retried: number }> {
  let delivered = 0;
  let retried = 0;
  for (;;) {
    const due = await store.claimDueDeliveries(db, clock.now(), DELIVERY_LEASE_MS, 20);
    if (due.length === 0) break;
    await Promise.all(
      due.map(async (delivery) => {
        const payload = JSON.stringify(stripeOrder(delivery.event), null, 2);
        const sentAt = clock.now();
        const result = await postWebhook(delivery.target, payload, signatureHeader(payload, webhookSecret, Math.floor(sentAt.getTime() / 1000)));
        const ok = result.status !== null && result.status >= 200 && result.status < 300;
        const now = clock.now();
        const attempts = delivery.attempts + 1;
        const giveUp = !ok && now.getTime() - delivery.createdAt.getTime() >= GIVE_UP_AFTER_MS;
        const nextAttemptAt = ok || giveUp ? null : new Date(now.getTime() + retryDelay(attempts));
        await store.recordDeliveryAttempt(db, delivery, { delivered: ok, status: result.status, error: result.error, nextAttemptAt, at: now });
        if (ok) delivered++;
        else {
          retried++;
          log('warn', 'webhook delivery failed', {
            event: delivery.eventId,
            endpoint: delivery.endpoint,
            status: result.status,
            error: result.error,
            attempts,
            giveUp,
          });
        }
      }),
    );
    // Deliveries that failed just now are due again only later; those claimed are leased.
  }
  return { delivered, retried };
}

/**
 * Lapses due authorizations and delivers due webhooks. Concurrent calls of
 * `run` share one pass (and one more if asked meanwhile: a change committed
 * during a pass may have added deliveries it did not see); `stop` waits for
 * the pass under way and asks for no more.
 */
export function sharedDueWork(ctx: DueWorkContext) {
  let running: Promise<DueWorkResult> | undefined;
  let again = false;
  let stopped = false;

  function run(): Promise<DueWorkResult> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      const total: DueWorkResult = { expired: 0, delivered: 0, retried: 0 };
      do {
        again = false;
        total.expired += await expireDue(ctx);
        const sent = await deliverDue(ctx);
        total.delivered += sent.delivered;
        total.retried += sent.retried;
      } while (again && !stopped);
      return total;
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  async function stop(): Promise<void> {
    stopped = true;
    await running?.catch(() => {});
  }

  return { run, stop };
}
