// A small durable job queue on PostgreSQL (table `jobs`, migration 0009),
// shared by every service process on the database.
//
// - enqueue() is an INSERT on the caller's connection: inside a transaction
//   the job commits (or rolls back) with the change it follows from. Once it
//   has committed, the `jobs` channel is notified with its queue (coalesced,
//   src/platform/notify.ts) so idle workers wake up.
// - A singleton key allows one unfinished (queued or running) job per
//   (queue, key): enqueueing it again meanwhile returns that job (created:
//   false). Once the job is done or failed, the key can be enqueued again.
//   Note that a key deduplicates against a job already *running*: work whose
//   input changed after the run started needs a key that names the change
//   (or none).
// - A worker claims due jobs (FOR UPDATE SKIP LOCKED, so workers never take
//   the same job) under a lease that it renews while the handler runs. A
//   lease only expires when its worker stops renewing (killed, frozen, cut
//   off from the database); any worker then takes the job back, and that
//   lost run counts as an attempt. Delivery is therefore at least once: a
//   handler must be idempotent (a worker that lost its lease still finishes
//   its handler, but its outcome is not recorded).
// - A handler that throws: the job is queued again after a backoff (1 s,
//   2 s, 4 s ... capped at 5 min, each step jittered between half and all of
//   it); after max_attempts runs it is `failed` (kept, logged as error). A
//   handler that throws RetryLater is queued again after the delay it asks for,
//   logged as info: the run still counts as an attempt (so a job cannot defer
//   itself forever), and at max_attempts it fails like any other.
// - All times come from the injectable clock and are passed as parameters.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { backgroundFailures } from './background.ts';
import type { Clock } from './clock.ts';
import { type Database, listen, type Queryable } from './db.ts';
import { notifyAfterCommit, readNotes } from './notify.ts';
import { waitForWake, wake } from './wake.ts';

export const JOBS_CHANNEL = 'jobs';
export const DEFAULT_MAX_ATTEMPTS = 10;
const MAX_ERROR_LENGTH = 500;
const BASE_RETRY_DELAY_MS = 1_000;
const MAX_RETRY_DELAY_MS = 5 * 60_000;

export interface NewJob {
  queue: string;
  /** Stored as JSON: what the handler receives (Dates become strings). */
  payload: unknown;
  /** Singleton key: one unfinished job per (queue, key). */
  key?: string | undefined;
  /** Not before (default: now). */
  runAt?: Date | undefined;
  /** Runs before the job is failed (default 10). */
  maxAttempts?: number | undefined;
}

/**
 * Adds a job; with `key`, returns the unfinished job of that key instead if there is one (created: false).
 * Pass a transaction to commit the job with the change it follows from.
 */
export async function enqueue(q: Queryable, job: NewJob, now: Date): Promise<{ id: number; created: boolean }> {
  if (typeof job.queue !== 'string' || job.queue === '') throw new TypeError('job queue must be a non-empty string');
  const maxAttempts = job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new RangeError('maxAttempts must be an integer of at least 1');
  const payload = JSON.stringify(job.payload ?? null);
  const key = job.key ?? null;
  // In a transaction of Database.transaction, the runners are told once it has committed (coalesced, see
  // src/platform/notify.ts); otherwise the statement notifies itself (delivered at its commit).
  const notify = notifyAfterCommit(q, JOBS_CHANNEL, job.queue) ? '' : `, pg_notify('${JOBS_CHANNEL}', json_build_array($1::text)::text)`;
  // A key held by a job that finishes between the INSERT and the SELECT: the INSERT is tried again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const inserted = await q.query<{ id: number }>(
      `WITH inserted AS (
         INSERT INTO jobs (queue, key, payload, state, run_at, attempts, max_attempts, created_at, updated_at)
         VALUES ($1, $2, $3::jsonb, 'queued', $4, 0, $5, $6, $6)
         ON CONFLICT (queue, key) WHERE state IN ('queued', 'running') DO NOTHING
         RETURNING id
       )
       SELECT id${notify} FROM inserted`,
      [job.queue, key, payload, job.runAt ?? now, maxAttempts, now],
    );
    const created = inserted.rows[0];
    if (created) return { id: created.id, created: true };
    const existing = await q.query<{ id: number }>("SELECT id FROM jobs WHERE queue = $1 AND key = $2 AND state IN ('queued', 'running')", [job.queue, key]);
    const found = existing.rows[0];
    if (found) return { id: found.id, created: false };
  }
  throw new Error(`could not enqueue job ${job.queue}/${key}: its key kept changing hands`);
}

/**
 * Withdraws the queued (not yet running) job of `key` in `queue`: what it was to do is no longer needed
 * (a start deadline once the CPO reported the session). Pass the transaction of the change that made it moot.
 */
export async function cancelQueued(q: Queryable, queue: string, key: string): Promise<boolean> {
  const { rowCount } = await q.query("DELETE FROM jobs WHERE queue = $1 AND key = $2 AND state = 'queued'", [queue, key]);
  return (rowCount ?? 0) > 0;
}

/** Deletes done jobs finished before `olderThan` (failed ones are kept for the operator); returns how many. */
export async function purgeFinished(db: Queryable, olderThan: Date): Promise<number> {
  const result = await db.query("DELETE FROM jobs WHERE state = 'done' AND finished_at < $1", [olderThan]);
  return result.rowCount ?? 0;
}

/**
 * Unfinished jobs per queue (metrics): queued and running counts, and how long the oldest due queued job has
 * waited since it became due. One aggregate per state, each over its partial index, so finished jobs cost nothing.
 */
export async function queueFigures(db: Queryable, now: Date): Promise<{ queue: string; queued: number; running: number; oldestDueSeconds: number }[]> {
  const { rows } = await db.query<{ queue: string; state: 'queued' | 'running'; jobs: number; oldest_due: Date | null }>(
    `SELECT queue, 'queued' AS state, count(*) AS jobs, min(run_at) FILTER (WHERE run_at <= $1) AS oldest_due FROM jobs WHERE state = 'queued' GROUP BY queue
     UNION ALL
     SELECT queue, 'running', count(*), NULL FROM jobs WHERE state = 'running' GROUP BY queue`,
    [now],
  );
  const byQueue = new Map<string, { queue: string; queued: number; running: number; oldestDueSeconds: number }>();
  for (const row of rows) {
    const figures = byQueue.get(row.queue) ?? { queue: row.queue, queued: 0, running: 0, oldestDueSeconds: 0 };
    byQueue.set(row.queue, figures);
    if (row.state === 'running') figures.running = row.jobs;
    else {
      figures.queued = row.jobs;
      if (row.oldest_due) figures.oldestDueSeconds = Math.max(0, (now.getTime() - row.oldest_due.getTime()) / 1000);
    }
  }
  return [...byQueue.values()];
}

/** Thrown by a handler: run the job again after `delayMs`, logged as info rather than as a failure (the run still counts as an attempt). */
export class RetryLater extends Error {
  readonly delayMs: number;
  constructor(delayMs: number, message?: string) {
    super(message ?? `retry in ${delayMs} ms`);
    this.name = 'RetryLater';
    this.delayMs = Math.max(0, delayMs);
  }
}

/** Delay before the run after failed run number `attempt` (1-based): 1 s, 2 s, 4 s ... capped at 5 min, each between half and all of its step. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(MAX_RETRY_DELAY_MS, BASE_RETRY_DELAY_MS * 2 ** Math.min(Math.max(attempt - 1, 0), 20));
  return Math.round(step / 2 + (random() * step) / 2);
}

export interface JobContext {
  jobId: number;
  queue: string;
  key: string | null;
  /** 1 for the first run. */
  attempt: number;
  maxAttempts: number;
}

/** The payload is the stored JSON: a handler declares (and should check) its shape. */
export type JobHandler = (payload: never, ctx: JobContext) => Promise<void>;

export type JobLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface JobRunnerOptions {
  db: Database;
  clock: Clock;
  /** One handler per queue; a runner claims jobs of these queues only. */
  handlers: Record<string, JobHandler>;
  log?: JobLog;
  /** Handlers running at once (default 4). */
  concurrency?: number;
  /** Look for due jobs this often besides notifications (default 1000 ms). */
  pollMs?: number;
  /** A claimed job is held this long, renewed every third of it while its handler runs (default 30 s). */
  leaseMs?: number;
  /** Delay before the next run after failed run number `attempt` (default retryDelayMs). */
  retryDelay?: (attempt: number) => number;
  /** Worker id stored in locked_by (default host:pid:random). */
  id?: string;
}

export interface JobRunner {
  readonly id: string;
  /** Runs due jobs in the background until stop(): woken by enqueue notifications, polling as a fallback. */
  start(): void;
  /** Stops claiming and waits for the running handlers. */
  stop(): Promise<void>;
  /** Claims and runs every due job (including those that become due meanwhile) until none is left; resolves to how many ran. */
  runDue(): Promise<number>;
}

interface ClaimedJob {
  id: number;
  queue: string;
  key: string | null;
  payload: unknown;
  attempts: number;
  max_attempts: number;
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? (error.name && error.name !== 'Error' ? `${error.name}: ${error.message}` : error.message) : String(error);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

/**
 * What a runner's rules share: its settings, and the state of its runs (each runner has its own). The rules
 * below take it as their first argument; createJobRunner makes it and assembles them.
 */
interface RunnerContext {
  readonly db: Database;
  readonly clock: Clock;
  readonly handlers: Record<string, JobHandler>;
  /** Never throws (see createJobRunner). */
  readonly log: JobLog;
  readonly concurrency: number;
  readonly pollMs: number;
  readonly leaseMs: number;
  readonly retryDelay: (attempt: number) => number;
  /** Worker id stored in locked_by. */
  readonly id: string;
  /** The queues this runner claims from: those it has a handler for. */
  readonly queues: string[];
  readonly claimFailed: (error: Error) => void;
  /** Running executions. */
  readonly active: Set<Promise<void>>;
  /** Slots taken by claims in flight (the loop and runDue share the concurrency). */
  reserved: number;
  /** Jobs this runner holds: id -> the attempt it runs (its lease is renewed). */
  readonly held: Map<number, number>;
  heartbeat: NodeJS.Timeout | undefined;
  stopping: boolean;
  pending: boolean;
  wakeUp: (() => void) | undefined;
}

function leaseEnd(ctx: RunnerContext, now: Date): Date {
  return new Date(now.getTime() + ctx.leaseMs);
}

/** Takes back jobs whose worker stopped renewing their lease: queued again, or failed if that run was their last. */
async function recoverExpired(ctx: RunnerContext, now: Date): Promise<void> {
  const { db, queues, log } = ctx;
  const { rows } = await db.query<{ id: number; queue: string; state: string; attempts: number; worker: string | null }>(
    `UPDATE jobs j SET
       state = CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'queued' END,
       finished_at = CASE WHEN j.attempts >= j.max_attempts THEN $1::timestamptz END,
       last_error = 'lease expired: worker ' || coalesce(j.locked_by, '?') || ' stopped during the run',
       locked_by = NULL, locked_until = NULL, updated_at = $1
     FROM (SELECT id, locked_by FROM jobs WHERE state = 'running' AND locked_until <= $1 AND queue = ANY($2::text[]) FOR UPDATE SKIP LOCKED) old
     WHERE j.id = old.id
     RETURNING j.id, j.queue, j.state, j.attempts, old.locked_by AS worker`,
    [now, queues],
  );
  for (const row of rows) {
    const fields = { jobId: row.id, queue: row.queue, attempt: row.attempts, worker: row.worker };
    if (row.state === 'failed') log('error', 'job failed: its worker stopped during its last attempt', fields);
    else log('warn', 'job taken back: its worker stopped during the run', fields);
  }
}

async function claim(ctx: RunnerContext, limit: number): Promise<ClaimedJob[]> {
  const { db, clock, id, queues } = ctx;
  if (queues.length === 0) return [];
  const now = clock.now();
  await recoverExpired(ctx, now);
  const { rows } = await db.query<ClaimedJob>(
    `WITH next AS MATERIALIZED (
       SELECT id FROM jobs
       WHERE state = 'queued' AND run_at <= $3 AND queue = ANY($4::text[])
       ORDER BY run_at, id
       LIMIT $5
       FOR UPDATE SKIP LOCKED
     )
     UPDATE jobs j SET state = 'running', attempts = j.attempts + 1, locked_by = $1, locked_until = $2, updated_at = $3
     FROM next WHERE j.id = next.id
     RETURNING j.id, j.queue, j.key, j.payload, j.attempts, j.max_attempts`,
    [id, leaseEnd(ctx, now), now, queues, limit],
  );
  return rows.sort((a, b) => a.id - b.id);
}

async function renewLeases(ctx: RunnerContext): Promise<void> {
  const { db, clock, id, held, log } = ctx;
  const ids = [...held.keys()];
  if (ids.length === 0) return;
  try {
    const { rows } = await db.query<{ id: number }>(
      "UPDATE jobs SET locked_until = $1 WHERE id = ANY($2::bigint[]) AND state = 'running' AND locked_by = $3 RETURNING id",
      [leaseEnd(ctx, clock.now()), ids, id],
    );
    const renewed = new Set(rows.map((r) => r.id));
    for (const jobId of ids) {
      if (!renewed.has(jobId) && held.delete(jobId))
        log('warn', 'job lease lost: another worker may run it; this run will not be recorded', { jobId, worker: id });
    }
  } catch (error) {
    log('warn', 'renewing job leases failed; retried', { err: errorText(error), worker: id });
  }
}

/** Records a run's outcome if this runner still holds the job (same worker, same attempt). */
async function finish(ctx: RunnerContext, job: ClaimedJob, set: string, values: unknown[]): Promise<boolean> {
  const result = await ctx.db.query(
    `UPDATE jobs SET ${set}, locked_by = NULL, locked_until = NULL
     WHERE id = $1 AND state = 'running' AND locked_by = $2 AND attempts = $3`,
    [job.id, ctx.id, job.attempts, ...values],
  );
  return result.rowCount === 1;
}

async function execute(ctx: RunnerContext, job: ClaimedJob): Promise<void> {
  const { clock, handlers, held, log, retryDelay } = ctx;
  const fields = { jobId: job.id, queue: job.queue, attempt: job.attempts, worker: ctx.id };
  let outcome: { ok: true } | { ok: false; error: unknown };
  try {
    const handler = handlers[job.queue];
    if (!handler) throw new Error(`no handler for queue ${job.queue}`);
    await handler(job.payload as never, { jobId: job.id, queue: job.queue, key: job.key, attempt: job.attempts, maxAttempts: job.max_attempts });
    outcome = { ok: true };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (held.get(job.id) === job.attempts) held.delete(job.id);
  try {
    const now = clock.now();
    let recorded: boolean;
    if (outcome.ok) {
      recorded = await finish(ctx, job, "state = 'done', finished_at = $4, updated_at = $4", [now]);
    } else {
      const { error } = outcome;
      const message = errorText(error);
      const last = job.attempts >= job.max_attempts;
      if (last) {
        recorded = await finish(ctx, job, "state = 'failed', finished_at = $4, updated_at = $4, last_error = $5", [now, message]);
        if (recorded) log('error', 'job failed: no attempts left', { ...fields, maxAttempts: job.max_attempts, err: message });
      } else {
        const later = error instanceof RetryLater;
        const delay = later ? error.delayMs : Math.max(0, retryDelay(job.attempts));
        const runAt = new Date(now.getTime() + delay);
        recorded = await finish(ctx, job, "state = 'queued', run_at = $5, updated_at = $4, last_error = $6", [now, runAt, message]);
        if (recorded) {
          if (later) log('info', 'job asked to run again later', { ...fields, delayMs: delay, reason: message });
          else log('warn', 'job attempt failed; retried later', { ...fields, delayMs: delay, err: message });
        }
      }
    }
    if (!recorded) log('warn', 'job outcome discarded: its lease was lost and the job taken back', { ...fields, ok: outcome.ok });
  } catch (error) {
    // The lease is no longer renewed: once it expires the job is taken back and run again.
    log('error', 'recording a job outcome failed; the job will run again when its lease expires', { ...fields, err: errorText(error) });
  }
}

function launch(ctx: RunnerContext, job: ClaimedJob): void {
  const { active, held, leaseMs } = ctx;
  held.set(job.id, job.attempts);
  if (!ctx.heartbeat) {
    ctx.heartbeat = setInterval(() => void renewLeases(ctx), Math.max(10, Math.floor(leaseMs / 3)));
    ctx.heartbeat.unref();
  }
  const run: Promise<void> = execute(ctx, job).finally(() => {
    active.delete(run);
    if (active.size === 0 && ctx.heartbeat) {
      clearInterval(ctx.heartbeat);
      ctx.heartbeat = undefined;
    }
    wake(ctx);
  });
  active.add(run);
}

/** Claims into the free slots; true if it took as many jobs as it asked for (more may be due). */
async function fill(ctx: RunnerContext): Promise<{ claimed: number; full: boolean }> {
  const want = ctx.concurrency - ctx.active.size - ctx.reserved;
  if (want <= 0 || ctx.stopping) return { claimed: 0, full: false };
  ctx.reserved += want;
  let jobs: ClaimedJob[];
  try {
    jobs = await claim(ctx, want);
  } finally {
    ctx.reserved -= want;
  }
  for (const job of jobs) launch(ctx, job);
  return { claimed: jobs.length, full: jobs.length === want };
}

async function runLoop(ctx: RunnerContext): Promise<void> {
  while (!ctx.stopping) {
    ctx.pending = false;
    try {
      let result = await fill(ctx);
      while (result.full) result = await fill(ctx);
    } catch (error) {
      ctx.claimFailed(error instanceof Error ? error : new Error(errorText(error)));
      ctx.pending = false;
    }
    if (!ctx.stopping) await waitForWake(ctx, ctx.pollMs);
  }
}

async function drain(ctx: RunnerContext): Promise<number> {
  let count = 0;
  for (;;) {
    const { claimed, full } = await fill(ctx);
    count += claimed;
    if (full) continue;
    // Nothing running and nothing (more) due: done. Otherwise a finished run frees a slot (and may have made jobs due).
    if (ctx.active.size === 0) return count;
    await Promise.race(ctx.active);
  }
}

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { db, clock, handlers } = options;
  // A throwing logger must not break the loop nor leave a rejected promise behind.
  const log: JobLog = (level, message, fields) => {
    try {
      options.log?.(level, message, fields);
    } catch {}
  };
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
  const pollMs = options.pollMs ?? 1_000;
  const leaseMs = options.leaseMs ?? 30_000;
  const retryDelay = options.retryDelay ?? ((attempt: number) => retryDelayMs(attempt));
  const id = options.id ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const queues = Object.keys(handlers);
  const claimFailed = backgroundFailures(
    (level, message, fields) => log(level, message, { ...fields, worker: id }),
    'claiming jobs failed; retried at the next poll',
  );
  const ctx: RunnerContext = {
    db,
    clock,
    handlers,
    log,
    concurrency,
    pollMs,
    leaseMs,
    retryDelay,
    id,
    queues,
    claimFailed,
    active: new Set(),
    reserved: 0,
    held: new Map(),
    heartbeat: undefined,
    stopping: false,
    pending: false,
    wakeUp: undefined,
  };

  let loop: Promise<void> | undefined;
  let draining: Promise<number> | undefined;
  let listener: { stop(): Promise<void> } | undefined;

  return {
    id,
    start() {
      if (loop) return;
      ctx.stopping = false;
      listener = listen(
        db,
        JOBS_CHANNEL,
        (payload) => {
          const named = readNotes(payload);
          if (named === undefined || named.some((queue) => queues.includes(queue))) wake(ctx);
        },
        (error) => log('warn', 'job notifications interrupted; reconnecting (polling meanwhile)', { err: error.message, worker: id }),
      );
      loop = runLoop(ctx)
        .catch((error: unknown) => log('error', 'the job loop stopped on an unexpected error', { err: errorText(error), worker: id }))
        .finally(() => {
          loop = undefined;
        });
    },
    async stop() {
      ctx.stopping = true;
      ctx.wakeUp?.();
      const closing = listener;
      listener = undefined;
      await Promise.all([closing?.stop(), loop, draining]);
      while (ctx.active.size > 0) await Promise.allSettled([...ctx.active]);
      ctx.stopping = false;
    },
    runDue() {
      draining ??= drain(ctx).finally(() => {
        draining = undefined;
      });
      return draining;
    },
  };
}
