// The charging_session.* client events: one per status change (recorded by changeStatus, state.ts, and at the
// session's creation, start.ts), and charging_session.progress when the CPO's reports change what the session has
// delivered or cost, at most one per session per progressIntervalMs. Each is recorded in the transaction of the
// change, with the session exactly as GET .../charging-sessions/<id>/ answers it at that version.
import Big from 'big.js';
import type { Queryable } from '../../platform/db.ts';
import { type EventType, recordEvent } from '../events/outbox.ts';
import type { SessionChanges, SessionRow, SessionStatus } from './repository.ts';
import { type ViewContext, view } from './views.ts';

const STATUS_EVENTS: Record<SessionStatus, EventType> = {
  pending: 'charging_session.pending',
  active: 'charging_session.active',
  stopping: 'charging_session.stopping',
  completed: 'charging_session.completed',
  failed: 'charging_session.failed',
};

/** What recording a session's event needs: the session view's sources and the clock. */
export type SessionEventContext = ViewContext;

async function record(ctx: SessionEventContext, tx: Queryable, row: SessionRow, type: EventType): Promise<void> {
  const object = await view(ctx, tx, row);
  await recordEvent(tx, { clientId: row.client_id, userId: row.user_id, type, object, sessionId: row.id }, ctx.clock.now());
}

/** The event of the status `row` has just taken (pending at creation, then every change); call in that change's transaction. */
export function recordStatusEvent(ctx: SessionEventContext, tx: Queryable, row: SessionRow): Promise<void> {
  return record(ctx, tx, row, STATUS_EVENTS[row.status]);
}

/** charging_session.progress for `row` as a write that set progress_event_at left it (see progressDue). */
export function recordProgressEvent(ctx: SessionEventContext, tx: Queryable, row: SessionRow): Promise<void> {
  return record(ctx, tx, row, 'charging_session.progress');
}

/**
 * Whether a write of `changes` to the locked session `row`, which keeps its status, makes a progress event: the
 * session is charging (active, or stopping with the CPO's last figures still coming; a pending one has delivered
 * nothing, its first cost estimate is no progress), the energy delivered or the estimated cost changes, and the
 * last progress event (progress_event_at, on the row so that every process sees it) is at least `intervalMs` old.
 * The caller then writes progress_event_at = now with the changes and records the event.
 */
export function progressDue(row: SessionRow, changes: SessionChanges, now: Date, intervalMs: number): boolean {
  if (row.status !== 'active' && row.status !== 'stopping') return false;
  const energyChanged = changes.consumed_energy !== undefined && !new Big(changes.consumed_energy).eq(new Big(row.consumed_energy));
  const costChanged = changes.estimated_cost !== undefined && changes.estimated_cost !== row.estimated_cost;
  if (!energyChanged && !costChanged) return false;
  return row.progress_event_at === null || now.getTime() - row.progress_event_at.getTime() >= intervalMs;
}
