// SQL of the live streams: how far client_events is settled, and a session's events in order.
import type { NamedStatement, Queryable } from '../../platform/db.ts';

/** client_events_horizon (migration 0022): the highest seq drawn, the writers of client_events in flight now, and how many of `watched` still are. */
interface Horizon {
  drawn: number;
  writers: string[];
  watchedRunning: number;
}

const HORIZON: NamedStatement = { name: 'events.horizon', text: 'SELECT drawn, writers, watched_running FROM client_events_horizon($1)' };

export async function horizon(db: Queryable, watched: readonly string[]): Promise<Horizon> {
  const { rows } = await db.query<{ drawn: number; writers: string[]; watched_running: number }>(HORIZON, [watched]);
  const row = rows[0];
  if (!row) throw new Error('client_events_horizon answered no row');
  return { drawn: row.drawn, writers: row.writers, watchedRunning: row.watched_running };
}

/** One event of a session's stream: its body exactly as stored (the text every receiver gets). */
export interface StreamedEvent {
  seq: number;
  type: string;
  body: string;
}

const SESSION_EVENTS: NamedStatement = {
  name: 'events.session-events',
  text: `SELECT seq, type, body::text AS body FROM client_events
          WHERE session_id = $1 AND client_id = $2 AND seq > $3 AND seq <= $4
          ORDER BY seq LIMIT $5`,
};

/** The client's events of a session with `after` < seq <= `upTo`, in seq order, at most `limit`. */
export async function sessionEvents(
  db: Queryable,
  clientId: string,
  sessionId: string,
  range: { after: number; upTo: number },
  limit: number,
): Promise<StreamedEvent[]> {
  const { rows } = await db.query<StreamedEvent>(SESSION_EVENTS, [sessionId, clientId, range.after, range.upTo, limit]);
  return rows;
}

const SESSIONS_WITH_EVENTS: NamedStatement = {
  name: 'events.sessions-with-events',
  text: 'SELECT DISTINCT session_id FROM client_events WHERE seq > $1 AND seq <= $2 AND session_id IS NOT NULL',
};

/** The sessions with events with `after` < seq <= `upTo` (a range of the primary key: the events of a few seconds). */
export async function sessionsWithEvents(db: Queryable, range: { after: number; upTo: number }): Promise<string[]> {
  const { rows } = await db.query<{ session_id: string }>(SESSIONS_WITH_EVENTS, [range.after, range.upTo]);
  return rows.map((row) => row.session_id);
}
