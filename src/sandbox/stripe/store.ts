// SQL of the Stripe sandbox (schema stripe_sandbox): objects, events,
// Idempotency-Key results, webhook deliveries and the account's keys.
import type { Database, NamedStatement, Queryable } from '../../platform/db.ts';

export interface StoredObject<T, I = Record<string, unknown>> {
  id: string;
  object: string;
  customer: string | null;
  created: number;
  data: T;
  internal: I;
  expiresAt: Date | null;
}

interface ObjectRow {
  id: string;
  object: string;
  customer: string | null;
  created: number;
  data: unknown;
  internal: unknown;
  expires_at: Date | null;
}

function fromRow<T, I>(row: ObjectRow): StoredObject<T, I> {
  return {
    id: row.id,
    object: row.object,
    customer: row.customer,
    created: row.created,
    data: row.data as T,
    internal: row.internal as I,
    expiresAt: row.expires_at,
  };
}

export async function loadObject<T, I = Record<string, unknown>>(
  tx: Queryable,
  id: string,
  object: string,
  options: { forUpdate?: boolean } = {},
): Promise<StoredObject<T, I> | undefined> {
  const { rows } = await tx.query<ObjectRow>(options.forUpdate ? FIND_OBJECT_FOR_UPDATE : FIND_OBJECT, [id, object]);
  return rows[0] ? fromRow<T, I>(rows[0]) : undefined;
}

// The sandbox's hot statements (every API call reads objects; every event looks up its endpoints): prepared once per connection.
const FIND_OBJECT: NamedStatement = {
  name: 'stripe-sandbox.find-object',
  text: 'SELECT id, object, customer, created, data, internal, expires_at FROM stripe_sandbox.objects WHERE id = $1 AND object = $2',
};
const FIND_OBJECT_FOR_UPDATE: NamedStatement = { name: 'stripe-sandbox.find-object-for-update', text: `${FIND_OBJECT.text} FOR UPDATE` };
const FIND_IDEMPOTENT_RESULT: NamedStatement = {
  name: 'stripe-sandbox.find-idempotent-result',
  text: 'SELECT fingerprint, status, body FROM stripe_sandbox.idempotency_keys WHERE key = $1 AND created_at >= $2',
};
export async function insertObject(tx: Queryable, stored: StoredObject<unknown, unknown>): Promise<void> {
  await tx.query(`INSERT INTO stripe_sandbox.objects (id, object, customer, created, expires_at, data, internal) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    stored.id,
    stored.object,
    stored.customer,
    stored.created,
    stored.expiresAt,
    JSON.stringify(stored.data),
    JSON.stringify(stored.internal),
  ]);
}

export async function saveObject(tx: Queryable, stored: StoredObject<unknown, unknown>): Promise<void> {
  await tx.query(`UPDATE stripe_sandbox.objects SET customer = $2, expires_at = $3, data = $4, internal = $5 WHERE id = $1`, [
    stored.id,
    stored.customer,
    stored.expiresAt,
    JSON.stringify(stored.data),
    JSON.stringify(stored.internal),
  ]);
}

export interface ListPage<T> {
  data: T[];
  hasMore: boolean;
}

export interface ListOptions {
  limit: number;
  startingAfter?: string | undefined;
  endingBefore?: string | undefined;
}

/** Newest first, cursor-paginated by object id, as Stripe lists are. */
async function listPage<T>(
  tx: Queryable,
  table: string,
  where: string[],
  params: unknown[],
  options: ListOptions,
  pick: (row: Record<string, unknown>) => T,
): Promise<ListPage<T>> {
  const conditions = [...where];
  const values = [...params];
  let ascending = false;
  const cursor = options.startingAfter ?? options.endingBefore;
  if (cursor !== undefined) {
    values.push(cursor);
    const op = options.startingAfter !== undefined ? '<' : '>';
    ascending = options.startingAfter === undefined;
    conditions.push(`(created, seq) ${op} (SELECT created, seq FROM ${table} WHERE id = $${values.length})`);
  }
  values.push(options.limit + 1);
  const order = ascending ? 'created ASC, seq ASC' : 'created DESC, seq DESC';
  const { rows } = await tx.query(
    `SELECT * FROM ${table} ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY ${order} LIMIT $${values.length}`,
    values,
  );
  const hasMore = rows.length > options.limit;
  const page = rows.slice(0, options.limit);
  if (ascending) page.reverse();
  return { data: page.map(pick), hasMore };
}

export function listObjects<T>(
  tx: Queryable,
  filter: { object: string; customer?: string | undefined; type?: string | undefined },
  options: ListOptions,
): Promise<ListPage<T>> {
  const where = ['object = $1'];
  const params: unknown[] = [filter.object];
  if (filter.customer !== undefined) {
    params.push(filter.customer);
    where.push(`customer = $${params.length}`);
  }
  if (filter.type !== undefined) {
    params.push(filter.type);
    where.push(`data->>'type' = $${params.length}`);
  }
  return listPage(tx, 'stripe_sandbox.objects', where, params, options, (row) => row.data as T);
}

/**
 * Records an event and its pending delivery to every webhook endpoint that receives its type, in one statement: the
 * endpoints are read in PostgreSQL (any process creating an event sees every endpoint registered), and the event's
 * `pending_webhooks` is their count.
 */
export async function recordEvent(tx: Queryable, event: { id: string; type: string; created: number; data: unknown }, at: Date): Promise<void> {
  await tx.query(RECORD_EVENT, [event.id, event.type, event.created, JSON.stringify(event.data), at]);
}
const RECORD_EVENT: NamedStatement = {
  name: 'stripe-sandbox.record-event',
  text: `WITH endpoints AS (
           SELECT url FROM stripe_sandbox.webhook_endpoints WHERE $2 = ANY (enabled_events) OR '*' = ANY (enabled_events)
         ), event AS (
           INSERT INTO stripe_sandbox.events (id, type, created, data)
           SELECT $1, $2, $3, jsonb_set($4::jsonb, '{pending_webhooks}', to_jsonb((SELECT count(*) FROM endpoints)::int))
         )
         INSERT INTO stripe_sandbox.webhook_deliveries (event_id, endpoint, next_attempt_at, created_at)
         SELECT $1, url, $5, $5 FROM endpoints ON CONFLICT DO NOTHING`,
};

export async function loadEvent<T>(tx: Queryable, id: string): Promise<T | undefined> {
  const { rows } = await tx.query<{ data: T }>('SELECT data FROM stripe_sandbox.events WHERE id = $1', [id]);
  return rows[0]?.data;
}

export function listEvents<T>(tx: Queryable, filter: { type?: string | undefined }, options: ListOptions): Promise<ListPage<T>> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.type !== undefined) {
    // `payment_intent.*` matches every payment_intent event, as Stripe's filter does.
    params.push(filter.type.endsWith('.*') ? `${filter.type.slice(0, -1)}%` : filter.type);
    where.push(`type LIKE $${params.length}`);
  }
  return listPage(tx, 'stripe_sandbox.events', where, params, options, (row) => row.data as T);
}

// --- Idempotency-Key results ------------------------------------------------

/** Takes the key's lock for this transaction; false when another request holds it. */
export async function tryLockIdempotencyKey(tx: Queryable, key: string): Promise<boolean> {
  const { rows } = await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS ok', [idempotencyLockName(key)]);
  return rows[0]?.ok === true;
}

export const idempotencyLockName = (key: string) => `stripe_sandbox:idempotency:${key}`;

export async function findIdempotencyResult(
  tx: Queryable,
  key: string,
  notBefore: Date,
): Promise<{ fingerprint: string; status: number; body: unknown } | undefined> {
  const { rows } = await tx.query<{ fingerprint: string; status: number; body: unknown }>(FIND_IDEMPOTENT_RESULT, [key, notBefore]);
  return rows[0];
}

export async function storeIdempotencyResult(tx: Queryable, key: string, fingerprint: string, status: number, body: unknown, at: Date): Promise<void> {
  await tx.query(
    `INSERT INTO stripe_sandbox.idempotency_keys (key, fingerprint, status, body, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, body = EXCLUDED.body, created_at = EXCLUDED.created_at`,
    [key, fingerprint, status, JSON.stringify(body), at],
  );
}

// --- Authorization expiry ---------------------------------------------------

export async function dueExpiries(db: Queryable, now: Date, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM stripe_sandbox.objects WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2', [now, limit]);
  return rows.map((r) => r.id);
}

// --- Webhook endpoints --------------------------------------------------------

export interface StoredWebhookEndpoint {
  url: string;
  pinnedCertificatePem?: string;
  headers?: Record<string, string>;
  /** Event types it receives (Stripe's enabled_events); default ['*'], every type. */
  enabledEvents?: readonly string[];
}

/** Registers an endpoint, or updates the one with the same URL. */
export async function upsertWebhookEndpoint(db: Queryable, endpoint: StoredWebhookEndpoint, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO stripe_sandbox.webhook_endpoints (url, pinned_certificate_pem, headers, enabled_events, created_at, updated_at) VALUES ($1, $2, $3, $5, $4, $4)
     ON CONFLICT (url) DO UPDATE SET pinned_certificate_pem = EXCLUDED.pinned_certificate_pem, headers = EXCLUDED.headers,
                                     enabled_events = EXCLUDED.enabled_events, updated_at = EXCLUDED.updated_at`,
    [endpoint.url, endpoint.pinnedCertificatePem ?? null, JSON.stringify(endpoint.headers ?? {}), at, endpoint.enabledEvents ?? ['*']],
  );
}

// --- Webhook deliveries -------------------------------------------------------

export interface DueDelivery {
  eventId: string;
  endpoint: string;
  /** The endpoint as registered now (a delivery to a URL no longer registered goes out with no pin and no extra headers). */
  target: StoredWebhookEndpoint;
  attempts: number;
  createdAt: Date;
  event: unknown;
}

/**
 * Claims due deliveries for `leaseMs` (pushing their next attempt out), so
 * that several sandbox processes never deliver the same one at once.
 */
export async function claimDueDeliveries(db: Database, now: Date, leaseMs: number, limit: number): Promise<DueDelivery[]> {
  const { rows } = await db.query<{
    event_id: string;
    endpoint: string;
    attempts: number;
    created_at: Date;
    data: unknown;
    pinned_certificate_pem: string | null;
    headers: Record<string, string> | null;
  }>(
    `WITH due AS (
       SELECT event_id, endpoint FROM stripe_sandbox.webhook_deliveries
        WHERE next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED),
     claimed AS (
       UPDATE stripe_sandbox.webhook_deliveries d SET next_attempt_at = $2
         FROM due, stripe_sandbox.events e
        WHERE d.event_id = due.event_id AND d.endpoint = due.endpoint AND e.id = d.event_id
       RETURNING d.event_id, d.endpoint, d.attempts, d.created_at, e.data)
     SELECT c.*, w.pinned_certificate_pem, w.headers
       FROM claimed c LEFT JOIN stripe_sandbox.webhook_endpoints w ON w.url = c.endpoint`,
    [now, new Date(now.getTime() + leaseMs), limit],
  );
  return rows.map((r) => ({
    eventId: r.event_id,
    endpoint: r.endpoint,
    target: {
      url: r.endpoint,
      ...(r.pinned_certificate_pem ? { pinnedCertificatePem: r.pinned_certificate_pem } : {}),
      ...(r.headers && Object.keys(r.headers).length > 0 ? { headers: r.headers } : {}),
    },
    attempts: r.attempts,
    createdAt: r.created_at,
    event: r.data,
  }));
}

/** Makes claimed deliveries that were not attempted due at `now` again (their lease given back). */
export async function releaseDeliveries(db: Queryable, deliveries: readonly { eventId: string; endpoint: string }[], now: Date): Promise<void> {
  await db.query(
    `UPDATE stripe_sandbox.webhook_deliveries d SET next_attempt_at = $3
       FROM unnest($1::text[], $2::text[]) AS r (event_id, endpoint)
      WHERE d.event_id = r.event_id AND d.endpoint = r.endpoint AND d.next_attempt_at IS NOT NULL`,
    [deliveries.map((d) => d.eventId), deliveries.map((d) => d.endpoint), now],
  );
}

export async function recordDeliveryAttempt(
  db: Queryable,
  delivery: { eventId: string; endpoint: string },
  outcome: { delivered: boolean; status: number | null; error: string | null; nextAttemptAt: Date | null; at: Date },
): Promise<void> {
  await db.query(
    `UPDATE stripe_sandbox.webhook_deliveries
        SET attempts = attempts + 1, last_status = $3, last_error = $4, next_attempt_at = $5,
            delivered_at = CASE WHEN $6 THEN $7::timestamptz ELSE delivered_at END,
            failed_at = CASE WHEN NOT $6 AND $5::timestamptz IS NULL THEN $7::timestamptz ELSE failed_at END
      WHERE event_id = $1 AND endpoint = $2`,
    [delivery.eventId, delivery.endpoint, outcome.status, outcome.error, outcome.nextAttemptAt, outcome.delivered, outcome.at],
  );
}

export interface DeliveryRecord {
  eventId: string;
  endpoint: string;
  attempts: number;
  deliveredAt: Date | null;
  failedAt: Date | null;
  nextAttemptAt: Date | null;
  lastStatus: number | null;
}

export async function listDeliveries(db: Queryable, eventId?: string): Promise<DeliveryRecord[]> {
  const { rows } = await db.query<{
    event_id: string;
    endpoint: string;
    attempts: number;
    delivered_at: Date | null;
    failed_at: Date | null;
    next_attempt_at: Date | null;
    last_status: number | null;
  }>(
    `SELECT event_id, endpoint, attempts, delivered_at, failed_at, next_attempt_at, last_status FROM stripe_sandbox.webhook_deliveries
      ${eventId ? 'WHERE event_id = $1' : ''} ORDER BY created_at, event_id`,
    eventId ? [eventId] : [],
  );
  return rows.map((r) => ({
    eventId: r.event_id,
    endpoint: r.endpoint,
    attempts: r.attempts,
    deliveredAt: r.delivered_at,
    failedAt: r.failed_at,
    nextAttemptAt: r.next_attempt_at,
    lastStatus: r.last_status,
  }));
}

/** Deliveries still to be made (metrics): neither delivered nor given up, and the oldest one's age in seconds. */
export async function pendingDeliveries(db: Queryable, now: Date): Promise<{ pending: number; oldestSeconds: number }> {
  const { rows } = await db.query<{ pending: number; oldest: Date | null }>(
    'SELECT count(*) AS pending, min(created_at) AS oldest FROM stripe_sandbox.webhook_deliveries WHERE next_attempt_at IS NOT NULL',
  );
  const row = rows[0];
  return { pending: row?.pending ?? 0, oldestSeconds: row?.oldest ? Math.max(0, (now.getTime() - row.oldest.getTime()) / 1000) : 0 };
}

// --- Account ------------------------------------------------------------------

export interface SandboxKeys {
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
}

/** The account's keys: the stored ones, or `fresh` stored now on first use. */
export async function accountKeys(db: Queryable, fresh: SandboxKeys, at: Date): Promise<SandboxKeys> {
  await db.query(
    `INSERT INTO stripe_sandbox.account (id, secret_key, publishable_key, webhook_secret, created_at) VALUES (1, $1, $2, $3, $4)
     ON CONFLICT (id) DO NOTHING`,
    [fresh.secretKey, fresh.publishableKey, fresh.webhookSecret, at],
  );
  const { rows } = await db.query<{ secret_key: string; publishable_key: string; webhook_secret: string }>(
    'SELECT secret_key, publishable_key, webhook_secret FROM stripe_sandbox.account WHERE id = 1',
  );
  const row = rows[0];
  if (!row) throw new Error('the sandbox account could not be created');
  return { secretKey: row.secret_key, publishableKey: row.publishable_key, webhookSecret: row.webhook_secret };
}

/** Drops Idempotency-Key results older than `before` and deliveries finished before it. */
export async function purgeExpired(db: Queryable, before: Date): Promise<void> {
  await db.query('DELETE FROM stripe_sandbox.idempotency_keys WHERE created_at < $1', [before]);
  await db.query('DELETE FROM stripe_sandbox.webhook_deliveries WHERE next_attempt_at IS NULL AND coalesce(delivered_at, failed_at) < $1', [before]);
}
