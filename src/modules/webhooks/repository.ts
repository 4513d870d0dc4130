// SQL of webhook endpoints, their deliveries and the attempts of each. Every
// query of a client's objects takes the client id: another client's endpoint
// or delivery is simply not found. The delivery worker's queries (claim,
// outcome) act on deliveries it holds by lease, whoever their client is.
import type { Queryable } from '../../platform/db.ts';

export interface EndpointRow {
  id: string;
  client_id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const ENDPOINT_COLUMNS =
  'id, client_id, url, events, description, enabled, disabled_reason, disabled_at, failing_since, previous_secret_expires_at, created_at, updated_at';

export async function insertEndpoint(
  q: Queryable,
  endpoint: { id: string; client_id: string; url: string; events: string[]; description: string | null; secret: Buffer; created_at: Date },
): Promise<EndpointRow> {
  const { rows } = await q.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, client_id, url, events, description, secret, enabled, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, true, $7, $7) RETURNING ${ENDPOINT_COLUMNS}`,
    [endpoint.id, endpoint.client_id, endpoint.url, endpoint.events, endpoint.description, endpoint.secret, endpoint.created_at],
  );
  return rows[0] as EndpointRow;
}

export async function findEndpointForClient(
  q: Queryable,
  clientId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<EndpointRow | undefined> {
  const { rows } = await q.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE client_id = $1 AND id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [clientId, id],
  );
  return rows[0];
}

/** Oldest first: the order in which the client created them. */
export async function listEndpointsForClient(
  q: Queryable,
  clientId: string,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: EndpointRow[] }> {
  const [{ rows: counted }, { rows }] = await Promise.all([
    q.query<{ total: number }>('SELECT count(*) AS total FROM webhook_endpoints WHERE client_id = $1', [clientId]),
    q.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE client_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`, [
      clientId,
      page.limit,
      page.offset,
    ]),
  ]);
  return { count: counted[0]?.total ?? 0, rows };
}

export interface EndpointChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

/**
 * Applies the changes sent. Enabling an endpoint clears its failure state (why and when it was disabled, and since
 * when it fails); disabling it records when.
 */
export async function updateEndpoint(q: Queryable, clientId: string, id: string, changes: EndpointChanges, now: Date): Promise<EndpointRow | undefined> {
  const { rows } = await q.query<EndpointRow>(
    `UPDATE webhook_endpoints SET
       url = coalesce($3, url),
       events = coalesce($4, events),
       description = CASE WHEN $5::boolean THEN $6 ELSE description END,
       enabled = coalesce($7::boolean, enabled),
       disabled_reason = CASE WHEN $7::boolean IS NULL OR $7::boolean = enabled THEN disabled_reason ELSE NULL END,
       disabled_at = CASE WHEN $7::boolean IS NULL OR $7::boolean = enabled THEN disabled_at WHEN $7::boolean THEN NULL ELSE $8 END,
       failing_since = CASE WHEN $7::boolean AND NOT enabled THEN NULL ELSE failing_since END,
       updated_at = $8
     WHERE client_id = $1 AND id = $2
     RETURNING ${ENDPOINT_COLUMNS}`,
    [clientId, id, changes.url ?? null, changes.events ?? null, changes.description !== undefined, changes.description ?? null, changes.enabled ?? null, now],
  );
  return rows[0];
}

export async function deleteEndpoint(q: Queryable, clientId: string, id: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM webhook_endpoints WHERE client_id = $1 AND id = $2', [clientId, id]);
  return (rowCount ?? 0) > 0;
}

/** The new secret signs from now on; the one it replaces signs beside it until `previousUntil`. */
export async function rotateSecret(
  q: Queryable,
  clientId: string,
  id: string,
  secret: Buffer,
  now: Date,
  previousUntil: Date,
): Promise<EndpointRow | undefined> {
  const { rows } = await q.query<EndpointRow>(
    `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $4, secret = $3, updated_at = $5
     WHERE client_id = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
    [clientId, id, secret, previousUntil, now],
  );
  return rows[0];
}

// ---------------------------------------------------------------------------
// The delivery log

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  leased_until: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  finished_at: Date | null;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
}

const DELIVERY_COLUMNS =
  'id, endpoint_id, event_id, event_type, attempts, last_status, last_error, last_attempt_at, next_attempt_at, delivered_at, leased_until, created_at';

/** An endpoint's deliveries, newest first. */
export async function listDeliveriesForEndpoint(
  q: Queryable,
  clientId: string,
  endpointId: string,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: DeliveryRow[] }> {
  const [{ rows: counted }, { rows }] = await Promise.all([
    q.query<{ total: number }>('SELECT count(*) AS total FROM webhook_deliveries WHERE client_id = $1 AND endpoint_id = $2', [clientId, endpointId]),
    q.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE client_id = $1 AND endpoint_id = $2
        ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [clientId, endpointId, page.limit, page.offset],
    ),
  ]);
  return { count: counted[0]?.total ?? 0, rows };
}

export async function findDeliveryForClient(q: Queryable, clientId: string, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  const { rows } = await q.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE client_id = $1 AND endpoint_id = $2 AND id = $3`, [
    clientId,
    endpointId,
    id,
  ]);
  return rows[0];
}

/** The attempts of these deliveries (of this client), oldest first. */
export async function attemptsOf(q: Queryable, clientId: string, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  const { rows } = await q.query<AttemptRow>(
    `SELECT a.delivery_id, a.attempt, a.started_at, a.finished_at, a.status_code, a.error, a.duration_ms
       FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.client_id = $1 AND a.delivery_id = ANY($2::uuid[])
      ORDER BY a.delivery_id, a.attempt`,
    [clientId, deliveryIds],
  );
  return rows;
}

/**
 * Makes the delivery due at `now` (again), whatever became of it, unless an attempt is in flight (its lease has not
 * expired): undefined then, and when there is no such delivery.
 */
export async function makeDeliveryDue(q: Queryable, clientId: string, endpointId: string, id: string, now: Date): Promise<DeliveryRow | undefined> {
  const { rows } = await q.query<DeliveryRow>(
    `UPDATE webhook_deliveries SET next_attempt_at = $4
      WHERE client_id = $1 AND endpoint_id = $2 AND id = $3 AND (leased_until IS NULL OR leased_until <= $4)
      RETURNING ${DELIVERY_COLUMNS}`,
    [clientId, endpointId, id, now],
  );
  return rows[0];
}

// ---------------------------------------------------------------------------
// The operator's view (CLI): across clients.

export async function listEndpointsOfClient(q: Queryable, clientId: string): Promise<(EndpointRow & { pending: number; failed: number })[]> {
  const { rows } = await q.query<EndpointRow & { pending: number; failed: number }>(
    `SELECT ${ENDPOINT_COLUMNS.split(', ')
      .map((c) => `e.${c}`)
      .join(', ')},
            (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.next_attempt_at IS NOT NULL) AS pending,
            (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.next_attempt_at IS NULL AND d.delivered_at IS NULL) AS failed
       FROM webhook_endpoints e WHERE e.client_id = $1 ORDER BY e.created_at, e.id`,
    [clientId],
  );
  return rows;
}

export async function findEndpoint(q: Queryable, id: string): Promise<EndpointRow | undefined> {
  const { rows } = await q.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`, [id]);
  return rows[0];
}

// ---------------------------------------------------------------------------
// The delivery worker: claims under a lease, and the outcome of each attempt.

/** Serializes claims across processes, so that the per-endpoint bound holds over all of them. */
export const CLAIM_LOCK = 727_274_019;

/** A delivery taken by a worker, with what it takes to send it. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  client_id: string;
  event_id: string;
  event_type: string;
  /** The number of this attempt (1 for the first). */
  attempts: number;
  created_at: Date;
  url: string;
  secret: Buffer;
  previous_secret: Buffer | null;
  previous_secret_expires_at: Date | null;
  /** The event as stored: the request body, byte for byte. */
  body: string;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints under a lease until `leaseUntil`, oldest due first, at
 * most `perEndpoint` in flight per endpoint (counting other processes' unexpired leases). An expired lease is a
 * process that died mid-delivery: its delivery is due still, and its open attempt is closed as interrupted. Each
 * claim opens its attempt. Claims are serialized by an advisory lock (a claim is a few milliseconds), so two
 * processes never both fill an endpoint's last slot. The endpoints are walked one by one (an index probe each), so
 * one endpoint's backlog never hides another's due deliveries. That walk costs a probe per enabled endpoint, so it
 * is made only once `isAnyDeliveryDue` found a due delivery of an enabled endpoint: with none (most claims: every poll and every event's
 * NOTIFY of every process) a claim is one probe of the due index, without the lock.
 */
export async function claimDueDeliveries(
  db: Queryable & { transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> },
  claim: { now: Date; leaseUntil: Date; token: string; perEndpoint: number; limit: number; interrupted: string },
): Promise<ClaimedDelivery[]> {
  if (!(await isAnyDeliveryDue(db, claim.now))) return [];
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [CLAIM_LOCK]);
    const { rows } = await tx.query<ClaimedDelivery>(
      `WITH candidates AS (
         SELECT p.id, p.next_attempt_at,
                row_number() OVER (PARTITION BY e.id ORDER BY p.next_attempt_at, p.id)
                  + (SELECT count(*) FROM webhook_deliveries b WHERE b.endpoint_id = e.id AND b.leased_until > $1) AS slot
           FROM webhook_endpoints e
          CROSS JOIN LATERAL (
            SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
             WHERE d.endpoint_id = e.id AND d.next_attempt_at <= $1 AND (d.leased_until IS NULL OR d.leased_until <= $1)
             ORDER BY d.next_attempt_at, d.id
             LIMIT $4
          ) p
          WHERE e.enabled
       ), picks AS (
         SELECT id FROM candidates WHERE slot <= $4 ORDER BY next_attempt_at, id LIMIT $5
       ), claimed AS (
         UPDATE webhook_deliveries d
            SET leased_until = $2, lease_token = $3, attempts = d.attempts + 1, last_attempt_at = $1
           FROM picks
          WHERE d.id = picks.id AND d.next_attempt_at <= $1 AND (d.leased_until IS NULL OR d.leased_until <= $1)
          RETURNING d.id, d.endpoint_id, d.client_id, d.event_seq, d.event_id, d.event_type, d.attempts, d.created_at
       ), closed AS (
         UPDATE webhook_delivery_attempts a SET finished_at = $1, error = $6
           FROM claimed c WHERE a.delivery_id = c.id AND a.finished_at IS NULL
         RETURNING 1
       ), opened AS (
         INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at)
         SELECT id, attempts, $1 FROM claimed
         ON CONFLICT DO NOTHING
         RETURNING 1
       )
       SELECT c.id, c.endpoint_id, c.client_id, c.event_id, c.event_type, c.attempts, c.created_at,
              e.url, e.secret, e.previous_secret, e.previous_secret_expires_at, ev.body::text AS body
         FROM claimed c
         JOIN webhook_endpoints e ON e.id = c.endpoint_id
         JOIN client_events ev ON ev.seq = c.event_seq
        ORDER BY c.id`,
      [claim.now, claim.leaseUntil, claim.token, claim.perEndpoint, claim.limit, claim.interrupted],
    );
    return rows;
  });
}

/**
 * Whether some delivery of an enabled endpoint is due and not in flight (or its lease expired). A paused endpoint's
 * deliveries stay due (they go once it is enabled again) but never send a claim to the walk. The deliveries due by
 * time are read oldest first (index webhook_deliveries_due, migration 0033; the ORDER BY keeps the planner on it)
 * until the first one not in flight whose endpoint is enabled (a primary-key probe, memoized per endpoint): it costs
 * the deliveries in flight and the due ones of paused endpoints at most (10,000 of them: about 3 ms), without the lock.
 */
async function isAnyDeliveryDue(q: Queryable, now: Date): Promise<boolean> {
  const { rows } = await q.query(
    `SELECT 1 FROM webhook_deliveries d
      WHERE d.next_attempt_at <= $1 AND (d.leased_until IS NULL OR d.leased_until <= $1)
        AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)
      ORDER BY d.next_attempt_at
      LIMIT 1`,
    [now],
  );
  return rows.length > 0;
}

/** Closes an attempt with its outcome (if nobody closed it meanwhile). */
export async function closeAttempt(
  q: Queryable,
  attempt: { deliveryId: string; attempt: number; now: Date; statusCode: number | null; error: string | null; durationMs: number },
): Promise<void> {
  await q.query(
    `UPDATE webhook_delivery_attempts SET finished_at = $3, status_code = $4, error = $5, duration_ms = $6
      WHERE delivery_id = $1 AND attempt = $2 AND finished_at IS NULL`,
    [attempt.deliveryId, attempt.attempt, attempt.now, attempt.statusCode, attempt.error, attempt.durationMs],
  );
}

/** Whether this worker's lease on the delivery still holds (the row is then locked until the transaction ends). */
export async function lockLeasedDelivery(q: Queryable, deliveryId: string, token: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 AND lease_token = $2 FOR UPDATE', [deliveryId, token]);
  return rows.length > 0;
}

interface EndpointState {
  client_id: string;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
}

export async function lockEndpointState(q: Queryable, endpointId: string): Promise<EndpointState | undefined> {
  const { rows } = await q.query<EndpointState>('SELECT client_id, enabled, disabled_reason, failing_since FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [
    endpointId,
  ]);
  return rows[0];
}

export async function setEndpointFailingSince(q: Queryable, endpointId: string, failingSince: Date | null): Promise<void> {
  await q.query('UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1 AND failing_since IS DISTINCT FROM $2', [endpointId, failingSince]);
}

/** The service disables the endpoint (410 Gone, or failing for 3 days): its other pending deliveries stop. */
export async function disableEndpoint(q: Queryable, endpointId: string, reason: string, now: Date): Promise<number> {
  await q.query('UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, disabled_at = $3, updated_at = $3 WHERE id = $1', [
    endpointId,
    reason,
    now,
  ]);
  const { rowCount } = await q.query('UPDATE webhook_deliveries SET next_attempt_at = NULL WHERE endpoint_id = $1 AND next_attempt_at IS NOT NULL', [
    endpointId,
  ]);
  return rowCount ?? 0;
}

/** Ends the lease with the attempt's outcome: delivered (at `deliveredAt`), due again at `nextAttemptAt`, or neither. */
export async function finishDelivery(
  q: Queryable,
  outcome: { deliveryId: string; statusCode: number | null; error: string | null; deliveredAt: Date | null; nextAttemptAt: Date | null },
): Promise<void> {
  await q.query(
    `UPDATE webhook_deliveries SET leased_until = NULL, lease_token = NULL, last_status = $2, last_error = $3,
            delivered_at = coalesce($4, delivered_at), next_attempt_at = $5
      WHERE id = $1`,
    [outcome.deliveryId, outcome.statusCode, outcome.error, outcome.deliveredAt, outcome.nextAttemptAt],
  );
}

/**
 * Gives back a delivery whose attempt was cut short (the process shutting down): its attempt is closed as
 * interrupted and it is due at once, for another process or the next start.
 */
export async function releaseDelivery(q: Queryable, claimed: { deliveryId: string; token: string; attempt: number }, now: Date, error: string): Promise<void> {
  await q.query(
    `WITH released AS (
       UPDATE webhook_deliveries SET leased_until = NULL, lease_token = NULL, next_attempt_at = $4, last_error = $5
        WHERE id = $1 AND lease_token = $2 RETURNING id
     )
     UPDATE webhook_delivery_attempts SET finished_at = $4, error = $5
      WHERE delivery_id IN (SELECT id FROM released) AND attempt = $3 AND finished_at IS NULL`,
    [claimed.deliveryId, claimed.token, claimed.attempt, now, error],
  );
}
