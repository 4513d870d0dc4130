// The charging module: assembles its rules over one context (context.ts). Where each rule lives:
//   state.ts       the session statuses and the one transition table every status change goes through
//   start.ts       the start saga (checks, session row, hold, START_SESSION)
//   stop.ts        the user's stop
//   cpo-events.ts  command results, Session updates and CDRs from the CPO
//   jobs.ts        the durable jobs (release a hold, the start deadline, STOP_SESSION at the CPO) and their queues
//   reconcile.ts   the periodic repair of what messages and crashes left behind
//   session-events.ts  the charging_session.* client events (status changes, throttled progress)
//   views.ts       the answers (a session as clients read it, list, get, rate)
//   prices.ts      user-facing prices, the fallback tariff and the running cost estimate
//   guards.ts      what other modules may not do while a session is unfinished
//   repository.ts  the SQL
import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import type { Session as OcpiSession } from '../../ocpi-protocol/sessions.ts';
import { noCrashPoints } from '../../platform/crash-points.ts';
import type { Queryable } from '../../platform/db.ts';
import { type ChargingContext, type ChargingDeps, DEFAULT_CHARGING_CONFIG } from './context.ts';
import * as cpoEvents from './cpo-events.ts';
import { paymentMethodGuard, userDeletionGuard } from './guards.ts';
import * as jobs from './jobs.ts';
import { reconcile } from './reconcile.ts';
import * as repo from './repository.ts';
import { type StartRequest, start } from './start.ts';
import { stop } from './stop.ts';
import { getSession, listSessions, rateSession, requireSession, type SessionView, view } from './views.ts';

export { estimateCost, fallbackTariff, userFacingPrices } from '../../pricing/session-prices.ts';
export type { ChargingConfig, ChargingDeps, ChargingLog, SessionCost } from './context.ts';
export { DEFAULT_CHARGING_CONFIG } from './context.ts';
export { CHARGING_QUEUES } from './jobs.ts';
export { FAILURES } from './state.ts';
export type { SessionView } from './views.ts';

export function createCharging(deps: ChargingDeps) {
  const { crashPoint, ...rest } = deps;
  const ctx: ChargingContext = {
    ...rest,
    config: { ...DEFAULT_CHARGING_CONFIG, ...deps.config },
    crash: crashPoint ?? noCrashPoints,
    pulls: { last: undefined },
  };
  return {
    config: ctx.config,

    /** A session for the invoicing module (any client: billing runs in jobs). */
    sessionForBilling: (id: string) => repo.findSession(ctx.db, id),
    /** Completed sessions updated in [from, to): the invoicing module checks each has its bill. */
    completedBetween: (from: Date, to: Date): Promise<string[]> => repo.completedBetween(ctx.db, from, to, 1000),

    start: async (clientId: string, userId: string, body: StartRequest): Promise<SessionView> => view(ctx, ctx.db, await start(ctx, clientId, userId, body)),
    stop: (clientId: string, userId: string, sessionId: string) => stop(ctx, clientId, userId, sessionId),
    list: (clientId: string, userId: string, status: repo.SessionStatus | undefined, page: { limit: number; offset: number }) =>
      listSessions(ctx, clientId, userId, status, page),
    get: (clientId: string, userId: string, sessionId: string) => getSession(ctx, clientId, userId, sessionId),
    /** The session GET's checks without its answer (the live stream): another client's or user's, or none, is not_found. */
    requireSession: async (clientId: string, userId: string, sessionId: string): Promise<{ id: string }> => {
      const row = await requireSession(ctx, ctx.db, clientId, userId, sessionId);
      return { id: row.id };
    },
    rate: (tx: Queryable, clientId: string, userId: string, sessionId: string, rates: number | null) =>
      rateSession(ctx, tx, clientId, userId, sessionId, rates),

    paymentMethodGuard,
    userDeletionGuard,

    // CPO messages (inside the transaction storing them)
    sessionChanged: (tx: Queryable, ocpi: OcpiSession) => cpoEvents.sessionChanged(ctx, tx, ocpi),
    commandResult: (tx: Queryable, commandId: string, result: { result: string }) => cpoEvents.commandResult(ctx, tx, commandId, result),
    cdrReceived: (tx: Queryable, cdr: CDR, options?: { quiet?: boolean }) => cpoEvents.cdrReceived(ctx, tx, cdr, options),

    // Jobs
    releaseHold: (sessionId: string) => jobs.releaseHold(ctx, sessionId),
    startDeadline: (sessionId: string) => jobs.startDeadline(ctx, sessionId),
    stopAtCpo: (sessionId: string) => jobs.stopAtCpo(ctx, sessionId),
    reconcile: () => reconcile(ctx),
  };
}

export type Charging = ReturnType<typeof createCharging>;
