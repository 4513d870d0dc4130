// The periodic repair of what messages and crashes left behind: starts cut short (failed, hold released),
// accepted starts past their deadline, failed sessions whose hold still holds funds, stops the CPO never
// finished, and CDRs that came before anything linked them to a session.
import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import { ADOPT_WITHIN_MS, type ChargingContext } from './context.ts';
import { cdrReceived } from './cpo-events.ts';
import { CHARGING_QUEUES, fail, queueForSession, queueRelease, startDeadline } from './jobs.ts';
import * as repo from './repository.ts';
import { FAILURES } from './state.ts';

export interface Reconciled {
  stalled: number;
  overdue: number;
  released: number;
  stopped_again: number;
  cdrs_matched: number;
}

const DAY_MS = 86_400_000;
/** Hold statuses that still keep the customer's funds. */
const HOLDING = ['authorized', 'requires_action', 'pending', 'processing'];

export async function reconcile(ctx: ChargingContext): Promise<Reconciled> {
  const now = ctx.clock.now();
  const result: Reconciled = { stalled: 0, overdue: 0, released: 0, stopped_again: 0, cdrs_matched: 0 };
  for (const row of await repo.stalledStarts(ctx.db, new Date(now.getTime() - ctx.config.stalledStartMs), 100)) {
    if (await fail(ctx, ctx.db, row.id, FAILURES.interrupted)) result.stalled++;
  }
  for (const row of await repo.overdueStarts(ctx.db, now, 100)) {
    await startDeadline(ctx, row.id);
    result.overdue++;
  }
  result.released = await releaseForgottenHolds(ctx, now);
  result.stopped_again = await stopAgain(ctx, now);
  result.cdrs_matched = await matchCdrsAgain(ctx, now);
  return result;
}

/** Holds of failed sessions (last two days) still holding funds: queued for release again. */
async function releaseForgottenHolds(ctx: ChargingContext, now: Date): Promise<number> {
  let released = 0;
  const failed = await repo.failedSince(ctx.db, new Date(now.getTime() - 2 * DAY_MS), 500);
  const byClient = new Map<string, repo.SessionRow[]>();
  for (const row of failed) byClient.set(row.client_id, [...(byClient.get(row.client_id) ?? []), row]);
  for (const [clientId, rows] of byClient) {
    const holds = await ctx.payments.getHolds(
      ctx.db,
      clientId,
      rows.map((r) => r.hold_reference),
    );
    for (const row of rows) {
      const held = holds.get(row.hold_reference);
      // A hold waiting for the customer's authentication is left for the next start to adopt, for a while.
      const stale = row.failure_reason !== FAILURES.authenticationRequired || now.getTime() - row.updated_at.getTime() > ADOPT_WITHIN_MS;
      if (held && stale && HOLDING.includes(held.status)) {
        if ((await queueRelease(ctx, ctx.db, row.id)).created) released++;
      }
    }
  }
  return released;
}

/**
 * Stops nothing has been heard of for stalledStopMs: first what the CPOs have (missed Session updates and CDRs
 * arrive through the usual path; at most one pull per stalledStopMs), then STOP_SESSION again for sessions still
 * running after the user's stop.
 */
async function stopAgain(ctx: ChargingContext, now: Date): Promise<number> {
  let stopped = 0;
  const staleBefore = new Date(now.getTime() - ctx.config.stalledStopMs);
  const stale = await repo.staleStops(ctx.db, staleBefore, 100);
  if (stale.length > 0 && ctx.pullFromCpos && (ctx.pulls.last === undefined || now.getTime() - ctx.pulls.last >= ctx.config.stalledStopMs)) {
    ctx.pulls.last = now.getTime();
    await ctx.pullFromCpos();
  }
  for (const row of stale) {
    const current = await repo.findSession(ctx.db, row.id);
    if (current?.status !== 'active' || current.stop_requested_at === null || current.stop_requested_at > staleBefore) continue;
    const queued = await queueForSession(ctx, ctx.db, CHARGING_QUEUES.stopAtCpo, row.id);
    if (queued.created) {
      stopped++;
      ctx.log?.warn({ session_id: row.id }, 'a session still runs long after its stop: STOP_SESSION sent again');
    }
  }
  return stopped;
}

/** CDRs no session is linked to (last two days), matched again: a Session naming our id may have come since. */
async function matchCdrsAgain(ctx: ChargingContext, now: Date): Promise<number> {
  if (!ctx.recentCdrs) return 0;
  let matched = 0;
  const cdrs = await ctx.recentCdrs(new Date(now.getTime() - 2 * DAY_MS), 500);
  const keyOf = (cdr: CDR) => ({ country_code: cdr.country_code.toUpperCase(), party_id: cdr.party_id.toUpperCase(), id: cdr.id });
  const linked = await repo.linkedCdrs(ctx.db, cdrs.map(keyOf));
  for (const cdr of cdrs) {
    const key = keyOf(cdr);
    if (linked.has(`${key.country_code}*${key.party_id}*${key.id}`)) continue;
    if (await ctx.db.transaction((tx) => cdrReceived(ctx, tx, cdr, { quiet: true }))) matched++;
  }
  return matched;
}
