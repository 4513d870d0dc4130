// The webhook delivery worker of one process. Deliveries are rows of
// webhook_deliveries (the outbox recordEvent fills, src/modules/events/outbox.ts),
// shared by every process on the database: a worker claims due ones under a
// lease (repository.ts claimDueDeliveries), sends each with no transaction
// open (send.ts), and records its outcome (outcome.ts). It wakes on the
// NOTIFY that follows recorded events (EVENTS_CHANNEL) and on a timer, for
// retries that come due. At most `concurrency` deliveries are in flight in
// the process and `perEndpoint` per endpoint across processes, each bounded
// by the timeout, so a slow or dead receiver holds a few slots of its own and
// nothing of the API or of other endpoints. A process killed mid-delivery
// leaves its lease to expire (timeout + LEASE_MARGIN_MS); the next claim
// sends the delivery again, with the same webhook-id: at least once.
// stop() stops claiming, lets what is in flight finish within the grace
// period, then cuts off the rest and gives it back (due at once).
import { randomUUID } from 'node:crypto';
import { backgroundFailures } from '../../platform/background.ts';
import type { Clock } from '../../platform/clock.ts';
import type { WebhookSettings } from '../../platform/config.ts';
import { type Database, listen } from '../../platform/db.ts';
import { waitForWake, wake } from '../../platform/wake.ts';
import { EVENTS_CHANNEL } from '../events/outbox.ts';
import { recordOutcome } from './outcome.ts';
import * as repo from './repository.ts';
import { type Resolve, type SendResult, sendEvent, systemResolve } from './send.ts';
import { signedHeaders } from './signing.ts';
import type { UrlPolicy } from './url-rules.ts';

/** A lease outlasts the longest attempt (the timeout) by this much: time to record its outcome. */
export const LEASE_MARGIN_MS = 5_000;
const INTERRUPTED = 'interrupted: the process sending it stopped before the answer was recorded';

type DeliveryLog = (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface WebhookDeliveryDeps {
  db: Database;
  clock: Clock;
  settings: WebhookSettings;
  policy: UrlPolicy;
  /** DNS (production's address checks); default: the system resolver. */
  resolve?: Resolve;
  /** 0..1 for the retry jitter; default Math.random. */
  random?: () => number;
  log?: DeliveryLog;
  /** Look for due deliveries (retries) this often besides notifications (default 1000 ms). */
  pollMs?: number;
  /** How long stop() lets deliveries in flight finish before cutting them off (default 10 s). */
  graceMs?: number;
}

export interface WebhookDelivery {
  /** Delivers in the background until stop(). */
  start(): void;
  /** Stops claiming; deliveries in flight get the grace period (at most `remainingMs`), then are cut off and given back. */
  stop(remainingMs?: number): Promise<void>;
  /** Claims and sends every due delivery (also those that become due meanwhile) until none is left; resolves to how many attempts were made. */
  runDue(): Promise<number>;
}

interface WorkerContext {
  readonly deps: WebhookDeliveryDeps;
  readonly resolve: Resolve;
  readonly random: () => number;
  readonly log: DeliveryLog;
  readonly claimFailed: (error: Error) => void;
  readonly recordFailed: (error: Error) => void;
  /** Cuts off the attempts in flight (stop(), once the grace period is over). */
  readonly abort: AbortController;
  readonly active: Set<Promise<void>>;
  /** Slots taken by a claim in flight. */
  reserved: number;
  stopping: boolean;
  pending: boolean;
  wakeUp: (() => void) | undefined;
}

async function attempt(ctx: WorkerContext, claimed: repo.ClaimedDelivery, token: string): Promise<void> {
  const { deps, log } = ctx;
  const fields = { deliveryId: claimed.id, endpointId: claimed.endpoint_id, eventId: claimed.event_id, attempt: claimed.attempts };
  const headers = signedHeaders(claimed, claimed.event_id, claimed.body, deps.clock.now());
  const result: SendResult = await sendEvent(claimed.url, headers, claimed.body, {
    timeoutMs: deps.settings.timeoutMs,
    policy: deps.policy,
    resolve: ctx.resolve,
    signal: ctx.abort.signal,
  });
  try {
    if (result.aborted) {
      await repo.releaseDelivery(deps.db, { deliveryId: claimed.id, token, attempt: claimed.attempts }, deps.clock.now(), result.error ?? INTERRUPTED);
      log('info', 'webhook delivery cut off by the shutdown; due again at once', fields);
      return;
    }
    const recorded = await recordOutcome({ db: deps.db, clock: deps.clock, random: ctx.random }, claimed, token, result);
    const outcome = { ...fields, status: result.statusCode, error: result.error, ms: result.durationMs };
    if (!recorded.recorded) log('warn', 'webhook delivery outcome discarded: its lease expired (another process took it) or its endpoint was deleted', outcome);
    else if (recorded.verdict === 'delivered') log('debug', 'webhook delivered', outcome);
    else log('info', 'webhook delivery attempt failed', { ...outcome, nextAttemptAt: recorded.nextAttemptAt?.toISOString() ?? null });
    if (recorded.disabled)
      log('warn', 'webhook endpoint disabled', { endpointId: claimed.endpoint_id, clientId: claimed.client_id, reason: recorded.disabled });
  } catch (error) {
    // The lease is kept: once it expires the delivery is claimed and sent again.
    ctx.recordFailed(error instanceof Error ? error : new Error(String(error)));
  }
}

/** Claims into the free slots and starts each attempt; how many it claimed, and whether it got all it asked for. */
async function fill(ctx: WorkerContext): Promise<{ claimed: number; full: boolean }> {
  const { deps } = ctx;
  const want = deps.settings.concurrency - ctx.active.size - ctx.reserved;
  if (want <= 0 || ctx.stopping) return { claimed: 0, full: false };
  ctx.reserved += want;
  const token = randomUUID();
  let claimed: repo.ClaimedDelivery[];
  try {
    const now = deps.clock.now();
    claimed = await repo.claimDueDeliveries(deps.db, {
      now,
      leaseUntil: new Date(now.getTime() + deps.settings.timeoutMs + LEASE_MARGIN_MS),
      token,
      perEndpoint: deps.settings.perEndpoint,
      limit: want,
      interrupted: INTERRUPTED,
    });
  } finally {
    ctx.reserved -= want;
  }
  for (const delivery of claimed) {
    const run: Promise<void> = attempt(ctx, delivery, token).finally(() => {
      ctx.active.delete(run);
      // A slot (and maybe an endpoint's slot) is free again.
      wake(ctx);
    });
    ctx.active.add(run);
  }
  return { claimed: claimed.length, full: claimed.length === want };
}

async function runLoop(ctx: WorkerContext): Promise<void> {
  const pollMs = ctx.deps.pollMs ?? 1_000;
  while (!ctx.stopping) {
    ctx.pending = false;
    try {
      // Again only while a claim filled every free slot: the claim ranks every endpoint's due deliveries against its
      // slots in one statement, so a claim that came back short left nothing eligible (a finished attempt wakes us).
      let result = await fill(ctx);
      while (result.full && !ctx.stopping) result = await fill(ctx);
    } catch (error) {
      ctx.claimFailed(error instanceof Error ? error : new Error(String(error)));
      ctx.pending = false;
    }
    if (!ctx.stopping) await waitForWake(ctx, pollMs);
  }
}

async function drain(ctx: WorkerContext): Promise<number> {
  let count = 0;
  for (;;) {
    const { claimed, full } = await fill(ctx);
    count += claimed;
    if (full) continue;
    if (ctx.active.size === 0) return count;
    await Promise.race(ctx.active);
  }
}

/** Waits for the attempts in flight, at most `ms`; true if they all ended. */
async function settle(ctx: WorkerContext, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    while (ctx.active.size > 0) {
      const ended = await Promise.race([Promise.allSettled([...ctx.active]).then(() => true), timeout]);
      if (!ended) return false;
    }
    return true;
  } finally {
    clearTimeout(timer);
  }
}

export function createWebhookDelivery(deps: WebhookDeliveryDeps): WebhookDelivery {
  const log: DeliveryLog = (level, message, fields) => {
    try {
      deps.log?.(level, message, fields);
    } catch {}
  };
  const ctx: WorkerContext = {
    deps,
    resolve: deps.resolve ?? systemResolve,
    random: deps.random ?? Math.random,
    log,
    // A database outage: one warning each, not one line per delivery or per poll.
    claimFailed: backgroundFailures((level, message, fields) => log(level, message, fields), 'claiming webhook deliveries failed; retried at the next poll'),
    recordFailed: backgroundFailures(
      (level, message, fields) => log(level, message, fields),
      'recording a webhook delivery outcome failed; the delivery is sent again when its lease expires',
    ),
    abort: new AbortController(),
    active: new Set(),
    reserved: 0,
    stopping: false,
    pending: false,
    wakeUp: undefined,
  };
  let loop: Promise<void> | undefined;
  let draining: Promise<number> | undefined;
  let listener: { stop(): Promise<void> } | undefined;

  return {
    start() {
      if (loop) return;
      const listenFailed = backgroundFailures(
        (level, message, fields) => log(level, message, fields),
        'event notifications interrupted; reconnecting (polling meanwhile)',
      );
      listener = listen(deps.db, EVENTS_CHANNEL, () => wake(ctx), listenFailed);
      loop = runLoop(ctx)
        .catch((error: unknown) => log('error', 'the webhook delivery loop stopped on an unexpected error', { err: (error as Error).message }))
        .finally(() => {
          loop = undefined;
        });
    },
    async stop(remainingMs?: number) {
      ctx.stopping = true;
      ctx.wakeUp?.();
      const closing = listener;
      listener = undefined;
      await Promise.all([closing?.stop(), loop, draining?.catch(() => {})]);
      if (!(await settle(ctx, Math.min(deps.graceMs ?? 10_000, remainingMs ?? Number.POSITIVE_INFINITY)))) {
        // Cut off, each attempt gives its delivery back (one short statement) and ends.
        ctx.abort.abort();
        await settle(ctx, 2_000);
      }
    },
    runDue() {
      draining ??= drain(ctx).finally(() => {
        draining = undefined;
      });
      return draining;
    },
  };
}
