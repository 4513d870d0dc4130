// The status of a charging session, as clients read it, and the one table of the changes it may go through.
// contract.md: pending -> active -> stopping -> completed; failed from pending. The CPO's own reports add three
// that follow what happened at the charge point rather than what we expected:
//   - a CDR completes a session we had given up on (failed): the car did charge, and what is delivered is billed;
//   - the charge point refusing a stop it had accepted puts a stopping session back to active;
//   - a CPO declaring a session INVALID fails it whatever it was doing (the CPO will not bill it).
// completed is final; failed is final but for that CDR. Every status write goes through changeStatus, whose
// UPDATE is guarded by the statuses the table allows the change from: a row another message or job has moved
// on meanwhile is left as it is. A change of status records its client event (session-events.ts) in the same
// transaction.
import { atomically, type Queryable } from '../../platform/db.ts';
import type { ChargingContext } from './context.ts';
import type { SessionChanges, SessionRow, SessionStatus } from './repository.ts';
import * as repo from './repository.ts';
import { recordStatusEvent, type SessionEventContext } from './session-events.ts';

export const SESSION_STATUSES = ['pending', 'active', 'stopping', 'completed', 'failed'] as const satisfies readonly SessionStatus[];

/** A session is created pending (the start saga's first step). */
export const INITIAL_STATUS: SessionStatus = 'pending';

interface Transition {
  readonly from: readonly SessionStatus[];
  readonly to: SessionStatus;
}

/** What moves a session's status: each event, the statuses it may come from and the one it leads to. */
export const TRANSITIONS = {
  /** The CPO reports the session ACTIVE: charging has begun. */
  chargingReported: { from: ['pending'], to: 'active' },
  /** The CPO accepted our STOP_SESSION (the user's stop, or ours for a session still running after it). */
  stopAccepted: { from: ['pending', 'active'], to: 'stopping' },
  /** The CPO reports the session COMPLETED: charging is over, its CDR is awaited. */
  endReported: { from: ['pending', 'active', 'stopping'], to: 'stopping' },
  /** The charge point did not stop after all (the STOP_SESSION's asynchronous result): charging goes on. */
  stopRefused: { from: ['stopping'], to: 'active' },
  /** The start did not happen: hold refused, operator refused or unreachable, no session by the deadline, a crash. */
  startFailed: { from: ['pending'], to: 'failed' },
  /** The CPO declares the session INVALID. */
  invalidReported: { from: ['pending', 'active', 'stopping'], to: 'failed' },
  /** The CDR: the cost is final (also for a session we had given up on that the CPO ran anyway). */
  cdrReceived: { from: ['pending', 'active', 'stopping', 'failed'], to: 'completed' },
} as const satisfies Record<string, Transition>;

export type SessionEvent = keyof typeof TRANSITIONS;

/** Why a session failed, as clients read it (failure_reason). */
export const FAILURES = {
  authenticationRequired: 'authentication_required',
  holdDeclined: 'pre_authorization_declined',
  processorUnavailable: 'payment_processor_unavailable',
  rejected: 'rejected_by_operator',
  unreachable: 'operator_unreachable',
  startFailed: 'start_failed_at_charge_point',
  noSession: 'no_session_reported',
  interrupted: 'start_interrupted',
  invalid: 'session_invalid',
} as const;

/** The status `event` leads to from `status`; undefined when the table has no such change. */
export function nextStatus(status: SessionStatus, event: SessionEvent): SessionStatus | undefined {
  const transition: Transition = TRANSITIONS[event];
  return transition.from.includes(status) ? transition.to : undefined;
}

/** Whether some event moves a session from `from` to `to`. */
export function isAllowed(from: SessionStatus, to: SessionStatus): boolean {
  return Object.values(TRANSITIONS).some((t: Transition) => t.to === to && t.from.includes(from));
}

/** A session is unfinished (is_active) until it is completed or failed. */
export function isUnfinished(status: SessionStatus): boolean {
  return repo.UNFINISHED.includes(status);
}

/** What changing a status needs: the clock, and the pool to make a transaction of its own when given no transaction. */
export type StatusContext = SessionEventContext & Pick<ChargingContext, 'db'>;

/**
 * The one way a session's status changes: `event`'s transition with `changes`, written only while the row's
 * status is one the event may come from. Undefined when the row had already moved on (nothing written). When the
 * status is another than before, its event (charging_session.<status>) is recorded in the same transaction: in
 * `q` when it is one, else in a transaction of its own. (endReported of a stopping session keeps its status: no
 * event.)
 */
export function changeStatus(ctx: StatusContext, q: Queryable, id: string, event: SessionEvent, changes: SessionChanges = {}): Promise<SessionRow | undefined> {
  const transition: Transition = TRANSITIONS[event];
  return atomically(ctx.db, q, async (tx) => {
    // One statement locks the row, checks the status it had and writes: no other writer slips in between.
    const changed = await repo.changeSessionStatus(tx, id, transition, changes, ctx.clock.now());
    if (changed && changed.row.status !== changed.before) await recordStatusEvent(ctx, tx, changed.row);
    return changed?.row;
  });
}
