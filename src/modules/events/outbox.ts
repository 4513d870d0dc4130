// Client events (issue 19): the one way an event comes into being. recordEvent is called on the connection of the
// change that causes it (a transaction), so the event commits or rolls back with that change: an outbox. In the same
// statement it fans the event out to the client's enabled webhook endpoints that subscribe to its type (one
// webhook_deliveries row each, due now). Once it has committed, EVENTS_CHANNEL is notified (src/platform/notify.ts:
// after the commit, coalesced with the other events of this process) so that delivery workers and live streams of
// every process wake up.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../platform/db.ts';
import { notifyAfterCommit } from '../../platform/notify.ts';

/** Every event type a client can receive, in the order the API documents them. */
export const EVENT_TYPES = [
  'charging_session.pending',
  'charging_session.active',
  'charging_session.stopping',
  'charging_session.completed',
  'charging_session.failed',
  'charging_session.progress',
  'invoice.created',
  'payment_method.attached',
  'payment_method.detached',
  'debt.created',
  'debt.paid',
  'user.deleted',
  'ping',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** An endpoint's subscription to every event type. */
export const ALL_EVENTS = '*';

/**
 * PostgreSQL channel, notified once events commit: the payload lists the sessions they belong to (`["<session id>",
 * ""]`, "" for an event of no session), or is empty ("any"): see readNotes in src/platform/notify.ts.
 */
export const EVENTS_CHANNEL = 'client_events';

/** What a client receives: the webhook body and the Server-Sent Event's data, byte for byte the same JSON. */
export interface EventBody {
  id: string;
  type: EventType;
  /** ISO 8601, from the injectable clock. */
  created_at: string;
  data: { object: unknown };
  /** The user the event is about; null for client-level events (ping). */
  user_id: string | null;
}

export interface NewEvent {
  clientId: string;
  userId: string | null;
  type: EventType;
  /** The object as the API shows it (e.g. the charging session as GET .../charging-sessions/<id>/ answers). */
  object: unknown;
  /** For charging_session.* events: the session, so that its live stream finds the event. */
  sessionId?: string | undefined;
  /** Deliver to this endpoint only, whatever it subscribes to (the endpoint's test ping); default: fan out. */
  endpointId?: string | undefined;
}

export interface RecordedEvent {
  seq: number;
  body: EventBody;
  /** Deliveries created for it (endpoints it was fanned out to). */
  deliveries: number;
}

/**
 * Records `event` on `q` (pass the transaction of the change that causes it) and creates its deliveries.
 * Nothing is sent here: the delivery workers send after the commit.
 */
export async function recordEvent(q: Queryable, event: NewEvent, now: Date): Promise<RecordedEvent> {
  const body: EventBody = {
    id: randomUUID(),
    type: event.type,
    created_at: now.toISOString(),
    data: { object: event.object },
    user_id: event.userId,
  };
  const note = event.sessionId ?? '';
  // Outside a transaction of Database.transaction (the pool: a statement of its own), the statement notifies itself.
  const notifiedAtCommit = notifyAfterCommit(q, EVENTS_CHANNEL, note);
  const notify = notifiedAtCommit ? '' : `, pg_notify('${EVENTS_CHANNEL}', json_build_array($9::text)::text)`;
  const { rows } = await q.query<{ seq: number; deliveries: number }>(
    `WITH event AS (
       INSERT INTO client_events (id, client_id, user_id, type, session_id, body, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING seq
     ), fanned AS (
       INSERT INTO webhook_deliveries (id, endpoint_id, client_id, event_seq, event_id, event_type, next_attempt_at, created_at)
       SELECT gen_random_uuid(), e.id, e.client_id, (SELECT seq FROM event), $1, $4, $7, $7
         FROM webhook_endpoints e
        WHERE e.client_id = $2
          AND (CASE WHEN $8::uuid IS NULL THEN e.enabled AND ($4 = ANY (e.events) OR '${ALL_EVENTS}' = ANY (e.events)) ELSE e.id = $8 END)
       RETURNING 1
     )
     SELECT (SELECT seq FROM event) AS seq, (SELECT count(*) FROM fanned) AS deliveries${notify}`,
    [
      body.id,
      event.clientId,
      event.userId,
      event.type,
      event.sessionId ?? null,
      JSON.stringify(body),
      now,
      event.endpointId ?? null,
      ...(notifiedAtCommit ? [] : [note]),
    ],
  );
  const row = rows[0];
  if (!row) throw new Error('recordEvent: the event was not written');
  return { seq: row.seq, body, deliveries: row.deliveries };
}

/** How long events and their delivery log are kept: the delivery log and the live stream's replay reach this far back. */
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;

/**
 * Forgets events older than `before` whose deliveries are all finished (delivered, given up, or for an endpoint since
 * deleted), with those deliveries and their attempts, `batch` rows a statement so that no statement holds many locks.
 * Answers the events forgotten. A delivery still due (an endpoint retrying, a retry asked for) keeps its event.
 */
export async function purgeEvents(q: Queryable, before: Date, batch = 5_000): Promise<number> {
  let forgotten = 0;
  for (;;) {
    const { rows } = await q.query<{ n: number }>(
      `WITH old AS (
         SELECT e.seq FROM client_events e
          WHERE e.created_at < $1
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq AND (d.next_attempt_at IS NOT NULL OR d.leased_until IS NOT NULL))
          ORDER BY e.created_at LIMIT $2
       ), deliveries AS (
         DELETE FROM webhook_deliveries d USING old WHERE d.event_seq = old.seq RETURNING 1
       ), events AS (
         DELETE FROM client_events e USING old WHERE e.seq = old.seq RETURNING 1
       )
       SELECT (SELECT count(*) FROM events) AS n`,
      [before, batch],
    );
    const n = rows[0]?.n ?? 0;
    forgotten += n;
    if (n < batch) return forgotten;
  }
}
