// The charging module's durable jobs: releasing a failed session's hold, failing a start the CPO never reported,
// and STOP_SESSION for sessions that run when they should not. Each is idempotent and retried until it succeeds.
import { atomically, type Queryable } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import { cancelQueued, enqueue } from '../../platform/jobs.ts';
import { INVOICING_QUEUES } from '../invoicing/queues.ts';
import type { ChargingContext } from './context.ts';
import * as repo from './repository.ts';
import { changeStatus, FAILURES, type StatusContext } from './state.ts';

export const CHARGING_QUEUES = {
  releaseHold: 'charging.release-hold',
  startDeadline: 'charging.start-deadline',
  /** STOP_SESSION for a session we gave up on that runs anyway, or one still running after the user's stop. */
  stopAtCpo: 'charging.stop-at-cpo',
  reconcile: 'charging.reconcile',
  /** The invoicing module's queue: a completed session's bill, queued here when its CDR arrives. */
  bill: INVOICING_QUEUES.bill,
} as const;

/** A job about one session (keyed by it: queued twice, it runs once). */
export function queueForSession(
  ctx: Pick<ChargingContext, 'clock'>,
  q: Queryable,
  queue: (typeof CHARGING_QUEUES)[keyof typeof CHARGING_QUEUES],
  sessionId: string,
  options: { maxAttempts?: number; runAt?: Date } = {},
) {
  return enqueue(q, { queue, payload: { session_id: sessionId }, key: sessionId, ...options }, ctx.clock.now());
}

/**
 * The start is settled (the CPO reported the session, or it failed): its deadline job goes, so sessions that
 * start do not leave a job each to wake up for nothing after the start timeout.
 */
export const cancelStartDeadline = (q: Queryable, sessionId: string) => cancelQueued(q, CHARGING_QUEUES.startDeadline, sessionId);

export const queueRelease = (ctx: Pick<ChargingContext, 'clock'>, q: Queryable, sessionId: string) =>
  queueForSession(ctx, q, CHARGING_QUEUES.releaseHold, sessionId, { maxAttempts: 50 });

/**
 * Marks a pending session failed and queues the release of its hold (unless the customer is to authenticate it):
 * the status, its event and the jobs commit together (in `q`, or in a transaction of their own).
 */
export function fail(ctx: StatusContext, q: Queryable, id: string, reason: string, options: { release?: boolean } = {}): Promise<repo.SessionRow | undefined> {
  return atomically(ctx.db, q, async (tx) => {
    const failed = await changeStatus(ctx, tx, id, 'startFailed', { start_step: 'ended', failure_reason: reason });
    if (failed) await cancelStartDeadline(tx, failed.id);
    if (failed && options.release !== false) await queueRelease(ctx, tx, failed.id);
    return failed;
  });
}

/** Releases a session's hold (idempotent); a hold another attempt took over, or a completed session's, is left alone. */
export async function releaseHold(ctx: ChargingContext, sessionId: string): Promise<void> {
  const row = await repo.findSession(ctx.db, sessionId);
  if (row?.status !== 'failed') return;
  if (await repo.isHoldAdopted(ctx.db, row.id)) return;
  if (row.adopted_hold_of === null && row.hold_reference !== `session:${row.id}`) return;
  try {
    await ctx.payments.releaseHold(row.client_id, row.hold_reference);
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return; // never placed
    throw error;
  }
}

/** The start deadline: no Session reported by then, the session fails and its hold is released. */
export async function startDeadline(ctx: ChargingContext, sessionId: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const row = await repo.findSession(tx, sessionId, { forUpdate: true });
    if (row?.status !== 'pending' || row.ocpi_session_id) return;
    if (row.start_deadline && row.start_deadline > ctx.clock.now()) return;
    await fail(ctx, tx, row.id, FAILURES.noSession);
    ctx.log?.warn({ session_id: row.id }, 'no session reported by the CPO within the start timeout');
  });
}

/**
 * STOP_SESSION for a session we gave up on that the CPO runs anyway, or for one still running after the user
 * asked to stop (the first STOP_SESSION lost, or a crash before it was recorded); retried until answered.
 */
export async function stopAtCpo(ctx: ChargingContext, sessionId: string): Promise<void> {
  const { db, clock } = ctx;
  const row = await repo.findSession(db, sessionId);
  if (!row?.ocpi_session_id) return;
  const orphan = row.status === 'failed';
  const unstopped = row.status === 'active' && row.stop_requested_at !== null;
  if (!orphan && !unstopped) return;
  // The attempt is recorded first: the next one comes stalledStopMs later, whatever the CPO answers.
  if (unstopped) await repo.updateSession(db, row.id, { stop_requested_at: clock.now() }, clock.now(), ['active']);
  const outcome = await ctx.commands.stopSession({ country_code: row.country_code, party_id: row.party_id, session_id: row.ocpi_session_id });
  if (outcome.outcome === 'unreachable') throw new Error(`STOP_SESSION at the CPO: ${outcome.reason}`);
  if (outcome.outcome === 'rejected') {
    ctx.log?.warn({ session_id: row.id, result: outcome.result, orphan }, 'the CPO refused to stop a session');
    return;
  }
  if (unstopped) await changeStatus(ctx, db, row.id, 'stopAccepted');
}
