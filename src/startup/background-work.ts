// The service's periodic and durable background work: the job runner and the
// charging reconciliation (with CHARGING_JOBS), webhook delivery, and the
// hourly housekeeping.
import type { AppModules } from '../app.ts';
import { EVENT_RETENTION_MS, purgeEvents } from '../modules/events/outbox.ts';
import type { PaymentProcessor } from '../modules/payments/processor.ts';
import { purgeHandledWebhookEvents, sweepPendingHolds } from '../modules/payments/service.ts';
import { createWebhookDelivery } from '../modules/webhooks/delivery.ts';
import type { Database } from '../platform/db.ts';
import { createIdempotency } from '../platform/http/idempotency.ts';
import { createJobRunner, purgeFinished } from '../platform/jobs.ts';
import type { StripeSandbox } from '../sandbox/stripe/index.ts';
import type { StartupContext } from './context.ts';

export function startJobs({ config, log, clock, stops }: StartupContext, { db, modules }: { db: Database; modules: AppModules }): void {
  // Durable background work (billing, hold releases, start deadlines), shared by every process on this database.
  if (config.charging.jobsEnabled && Object.keys(modules.jobHandlers).length > 0) {
    const jobLog = log.child({ component: 'jobs' });
    const jobs = createJobRunner({
      db,
      clock,
      handlers: modules.jobHandlers,
      leaseMs: config.charging.jobLeaseMs,
      concurrency: config.charging.jobConcurrency,
      log: (level, message, fields) => jobLog[level](fields ?? {}, message),
    });
    jobs.start();
    stops.add('job runner', () => jobs.stop());
    const repairs = setInterval(() => {
      modules
        .reconcile()
        .then((repaired) => {
          if (Object.values(repaired).some((n) => n > 0)) log.info(repaired, 'charging reconciliation repaired sessions');
        })
        .catch((error: Error) => log.warn({ reason: error.message }, 'charging reconciliation failed; retried at the next interval'));
    }, config.charging.reconcileIntervalMs);
    repairs.unref();
    stops.add('charging reconciliation', () => clearInterval(repairs));
  }
}

/**
 * Webhook deliveries (JOBS_ENABLED: a process that does background work delivers too), shared by every process on
 * this database. On shutdown, deliveries in flight get what is left of SHUTDOWN_GRACE_MS (the stop list counts one
 * grace for every step), then are cut off and left due for another process or the next start.
 */
export function startWebhookDelivery({ config, log, clock, stops }: StartupContext, { db }: { db: Database }): void {
  if (!config.charging.jobsEnabled) return;
  const deliveryLog = log.child({ component: 'webhooks' });
  const delivery = createWebhookDelivery({
    db,
    clock,
    settings: config.webhooks,
    policy: { production: config.mode === 'production' },
    graceMs: config.shutdownGraceMs,
    log: (level, message, fields) => deliveryLog[level](fields ?? {}, message),
  });
  delivery.start();
  stops.add('webhook delivery', (remainingMs) => delivery.stop(remainingMs));
}

/** Every hour: expired idempotency keys, handled webhook events, client events past their 30 days, old finished jobs and the sandbox's expired records go; pending holds are swept. */
export function startHousekeeping(
  { log, clock, stops }: StartupContext,
  { db, processor, sandbox }: { db: Database; processor: PaymentProcessor; sandbox: StripeSandbox | undefined },
): void {
  const idempotency = createIdempotency({ db, clock });
  const housekeeping = setInterval(() => {
    idempotency.purgeExpired().catch((error: Error) => log.warn({ reason: error.message }, 'purging expired idempotency keys failed'));
    purgeHandledWebhookEvents(db, clock).catch((error: Error) => log.warn({ reason: error.message }, 'purging handled webhook events failed'));
    purgeEvents(db, new Date(clock.now().getTime() - EVENT_RETENTION_MS)).catch((error: Error) =>
      log.warn({ reason: error.message }, 'purging old client events failed'),
    );
    purgeFinished(db, new Date(clock.now().getTime() - 7 * 86_400_000)).catch((error: Error) =>
      log.warn({ reason: error.message }, 'purging finished jobs failed'),
    );
    sandbox?.purgeExpired().catch((error: Error) => log.warn({ reason: error.message }, 'purging the Stripe sandbox’s expired records failed'));
    // Holds a crash left pending are resumed (same idempotency key) or looked up at the processor.
    sweepPendingHolds({ db, clock, processor, log })
      .then((swept) => {
        if (swept.examined > 0) log.info(swept, 'pending payment holds swept');
      })
      .catch((error: Error) => log.warn({ reason: error.message }, 'sweeping pending payment holds failed'));
  }, 60 * 60_000);
  housekeeping.unref();
  stops.add('housekeeping', () => clearInterval(housekeeping));
}
