// The answers about sessions: a session as clients read it (contract.md's fields plus ours), the list, one
// session, and the rating a user gives it.

import Big from 'big.js';
import type { Queryable } from '../../platform/db.ts';
import { notFound } from '../../platform/errors.ts';
import { fromMinorUnits } from '../../platform/money.ts';
import type { Hold } from '../payments/service.ts';
import { type ChargingContext, type SessionCost, UUID } from './context.ts';
import * as repo from './repository.ts';
import type { ChargingSessionView } from './schemas.ts';
import { isUnfinished } from './state.ts';

/** A session as clients read it: the schema's type, with the status narrowed to the state table's. */
export type SessionView = ChargingSessionView & { status: repo.SessionStatus };

function emptyCost(currency: string): SessionCost {
  return {
    kwh_cost: null,
    time_cost: null,
    session_fee_cost: null,
    blocking_fee_cost: null,
    starting_fee_cost: null,
    invoice_download: null,
    invoice_vat: fromMinorUnits(0, currency),
    invoice_summary: fromMinorUnits(0, currency),
    invoice_credits: fromMinorUnits(0, currency),
    invoice_discount: fromMinorUnits(0, currency),
    currency,
  };
}

/**
 * What happened to the money held for this session. A failed attempt whose hold a later session took over shares
 * that hold (its reference) with it, but what became of it is the later session's doing: the failed one says
 * `transferred` and names the session, never that session's `captured`.
 */
function preAuthorizationOf(row: repo.SessionRow, hold: Hold | undefined, takenOverBy: string | undefined): SessionView['pre_authorization'] {
  const amount = fromMinorUnits(row.pre_authorization_amount, row.currency);
  const currency = row.currency.toUpperCase();
  if (takenOverBy) return { amount, currency, status: 'transferred', transferred_to: takenOverBy };
  return { amount, currency, status: hold?.status ?? 'pending', ...(row.adopted_hold_of ? { transferred_from: row.adopted_hold_of } : {}) };
}

function viewOf(row: repo.SessionRow, hold: Hold | undefined, cost: SessionCost | undefined, now: Date, takenOverBy?: string): SessionView {
  // A running session's duration: to now, or to the CPO's latest report when its clock is ahead of ours.
  const running = row.status === 'active' || row.status === 'stopping';
  const end = row.end_time ?? (running ? new Date(Math.max(now.getTime(), row.reported_at?.getTime() ?? 0)) : null);
  return {
    id: row.id,
    status: row.status,
    is_active: isUnfinished(row.status),
    start_time: row.start_time?.toISOString() ?? null,
    end_time: row.end_time?.toISOString() ?? null,
    duration: row.start_time && end ? Math.max(0, Math.floor((end.getTime() - row.start_time.getTime()) / 1000)) : null,
    consumed_energy: new Big(row.consumed_energy).toFixed(3),
    evse_id: row.evse_id,
    station_id: row.station_id,
    station_info: row.station_info,
    is_partner: row.is_partner,
    logo_url: row.logo_url,
    user_facing_session_prices: row.user_facing_session_prices,
    session_cost: cost ?? emptyCost(row.currency),
    estimated_cost: row.estimated_cost === null ? null : fromMinorUnits(row.estimated_cost, row.currency),
    pre_authorization: preAuthorizationOf(row, hold, takenOverBy),
    payment_method_id: row.payment_method_id,
    failure_reason: row.failure_reason,
    rates: row.rates,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    version: row.version,
  };
}

/** What a session's view is read from: its hold (payments), its costs (invoicing) and the clock (duration). */
export interface ViewContext extends Pick<ChargingContext, 'sessionCosts' | 'clock'> {
  payments: Pick<ChargingContext['payments'], 'getHolds'>;
}

/** Sessions as clients read them, with their holds and (once billed) their costs. */
export async function views(ctx: ViewContext, q: Queryable, clientId: string, rows: repo.SessionRow[]): Promise<SessionView[]> {
  // One after the other: `q` may be a transaction's client, which runs one query at a time (pg 9 refuses more).
  const holds = await ctx.payments.getHolds(q, clientId, [...new Set(rows.map((r) => r.hold_reference))]);
  const costs = await ctx.sessionCosts(
    q,
    clientId,
    rows.filter((r) => r.status === 'completed').map((r) => r.id),
  );
  const takeovers = await repo.findHoldTakeovers(
    q,
    clientId,
    rows.filter((r) => r.status === 'failed').map((r) => r.id),
  );
  const now = ctx.clock.now();
  return rows.map((row) => viewOf(row, holds.get(row.hold_reference), costs.get(row.id), now, takeovers.get(row.id)));
}

export async function view(ctx: ViewContext, q: Queryable, row: repo.SessionRow): Promise<SessionView> {
  return (await views(ctx, q, row.client_id, [row]))[0] as SessionView;
}

/**
 * The user's session; another client's or user's is "not found". The user's own check comes with the session in one
 * read (every poll of a session passes here); only when there is no session is the user looked at alone, so that an
 * unknown or deleted user is told as such.
 */
export async function requireSession(ctx: ChargingContext, q: Queryable, clientId: string, userId: string, sessionId: string): Promise<repo.SessionRow> {
  const row = UUID.test(sessionId) && UUID.test(userId) ? await repo.findClientSession(q, clientId, userId.toLowerCase(), sessionId.toLowerCase()) : undefined;
  if (row) return row;
  await ctx.users.requireUser(q, clientId, userId);
  throw notFound('Charging session');
}

export async function listSessions(
  ctx: ChargingContext,
  clientId: string,
  userId: string,
  status: repo.SessionStatus | undefined,
  page: { limit: number; offset: number },
): Promise<{ count: number; results: SessionView[] }> {
  await ctx.users.requireUser(ctx.db, clientId, userId);
  const { count, rows } = await repo.listSessions(ctx.db, clientId, userId, status, page);
  return { count, results: await views(ctx, ctx.db, clientId, rows) };
}

export async function getSession(ctx: ChargingContext, clientId: string, userId: string, sessionId: string): Promise<SessionView> {
  return view(ctx, ctx.db, await requireSession(ctx, ctx.db, clientId, userId, sessionId));
}

export async function rateSession(
  ctx: ChargingContext,
  tx: Queryable,
  clientId: string,
  userId: string,
  sessionId: string,
  rates: number | null,
): Promise<SessionView> {
  const row = await requireSession(ctx, tx, clientId, userId, sessionId);
  return view(ctx, tx, (await repo.updateSession(tx, row.id, { rates }, ctx.clock.now())) as repo.SessionRow);
}
