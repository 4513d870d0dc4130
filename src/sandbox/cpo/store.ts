// The sandbox CPO's SQL (schema cpo_sandbox, migration 0008): peers and their
// credentials tokens, sessions, CDRs, the outbox of pushes, pushed tokens and
// changed EVSE statuses. Every function takes a pool or a transaction.
import type { Cdr } from '../../ocpi-protocol/cdrs.ts';
import type { CredentialsRole } from '../../ocpi-protocol/credentials.ts';
import type { EvseStatus } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Session } from '../../ocpi-protocol/sessions.ts';
import type { Token } from '../../ocpi-protocol/tokens.ts';
import type { PageQuery } from '../../ocpi-protocol/transport.ts';
import type { Endpoint } from '../../ocpi-protocol/versions.ts';
import type { Queryable } from '../../platform/db.ts';
import type { StatusOverride } from './network.ts';

const S = 'cpo_sandbox';

// ---------------------------------------------------------------------------
// Peers

export type PeerStatus = 'PENDING' | 'REGISTERING' | 'REGISTERED' | 'UNREGISTERED';

export interface Peer {
  id: string;
  status: PeerStatus;
  tokenA: string | null;
  ourToken: string | null;
  theirToken: string | null;
  theirVersionsUrl: string | null;
  version: string | null;
  endpoints: Endpoint[];
  roles: CredentialsRole[];
  pinnedCertificate: string | null;
  rawToken: boolean;
}

interface PeerRow {
  id: string;
  status: PeerStatus;
  token_a: string | null;
  our_token: string | null;
  their_token: string | null;
  their_versions_url: string | null;
  version: string | null;
  endpoints: Endpoint[];
  roles: CredentialsRole[];
  pinned_certificate: string | null;
  raw_token: boolean;
}

const toPeer = (r: PeerRow): Peer => ({
  id: r.id,
  status: r.status,
  tokenA: r.token_a,
  ourToken: r.our_token,
  theirToken: r.their_token,
  theirVersionsUrl: r.their_versions_url,
  version: r.version,
  endpoints: r.endpoints,
  roles: r.roles,
  pinnedCertificate: r.pinned_certificate,
  rawToken: r.raw_token,
});

const PEER_COLUMNS: Record<Exclude<keyof Peer, 'id'>, string> = {
  status: 'status',
  tokenA: 'token_a',
  ourToken: 'our_token',
  theirToken: 'their_token',
  theirVersionsUrl: 'their_versions_url',
  version: 'version',
  endpoints: 'endpoints',
  roles: 'roles',
  pinnedCertificate: 'pinned_certificate',
  rawToken: 'raw_token',
};

const jsonColumns = new Set(['endpoints', 'roles']);

export async function insertPeer(db: Queryable, peer: Peer, now: Date): Promise<void> {
  const fields = Object.entries(PEER_COLUMNS) as [keyof typeof PEER_COLUMNS, string][];
  const values = fields.map(([field, column]) => (jsonColumns.has(column) ? JSON.stringify(peer[field]) : peer[field]));
  await db.query(
    `INSERT INTO ${S}.peers (id, ${fields.map(([, c]) => c).join(', ')}, created_at, updated_at)
     VALUES ($1, ${fields.map((_, i) => `$${i + 2}`).join(', ')}, $${fields.length + 2}, $${fields.length + 2})`,
    [peer.id, ...values, now],
  );
}

export async function updatePeer(db: Queryable, id: string, changes: Partial<Omit<Peer, 'id'>>, now: Date): Promise<void> {
  const entries = Object.entries(changes) as [keyof typeof PEER_COLUMNS, unknown][];
  const sets = entries.map(([field], i) => `${PEER_COLUMNS[field]} = $${i + 3}`);
  const values = entries.map(([field, value]) => (jsonColumns.has(PEER_COLUMNS[field]) ? JSON.stringify(value) : value));
  await db.query(`UPDATE ${S}.peers SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1`, [id, now, ...values]);
}

export async function deletePeer(db: Queryable, id: string): Promise<void> {
  await db.query(`DELETE FROM ${S}.peers WHERE id = $1`, [id]);
}

export async function findPeer(db: Queryable, id: string): Promise<Peer | undefined> {
  const { rows } = await db.query<PeerRow>(`SELECT * FROM ${S}.peers WHERE id = $1`, [id]);
  return rows[0] ? toPeer(rows[0]) : undefined;
}

/** The peer a credentials token belongs to: a registration token (TOKEN_A) of a pending peer, or the token of a registering or registered one. */
export async function findPeerByToken(db: Queryable, token: string): Promise<{ peer: Peer; tokenA: boolean } | undefined> {
  const { rows } = await db.query<PeerRow>(
    `SELECT * FROM ${S}.peers
     WHERE (token_a = $1 AND status = 'PENDING') OR (our_token = $1 AND status IN ('REGISTERING', 'REGISTERED'))
     LIMIT 1`,
    [token],
  );
  const row = rows[0];
  return row ? { peer: toPeer(row), tokenA: row.token_a === token && row.status === 'PENDING' } : undefined;
}

export async function listPeers(db: Queryable, status?: PeerStatus): Promise<Peer[]> {
  const { rows } = await db.query<PeerRow>(`SELECT * FROM ${S}.peers ${status ? 'WHERE status = $1' : ''} ORDER BY created_at, id`, status ? [status] : []);
  return rows.map(toPeer);
}

// ---------------------------------------------------------------------------
// Sessions and CDRs

export interface SessionRow<Sim> {
  id: string;
  peerId: string;
  locationId: string;
  evseUid: string;
  status: Session['status'];
  scenario: string | null;
  data: Session;
  sim: Sim;
  lastUpdated: Date;
}

interface SessionDbRow<Sim> {
  id: string;
  peer_id: string;
  location_id: string;
  evse_uid: string;
  status: Session['status'];
  scenario: string | null;
  data: Session;
  sim: Sim;
  last_updated: Date;
}

const toSession = <Sim>(r: SessionDbRow<Sim>): SessionRow<Sim> => ({
  id: r.id,
  peerId: r.peer_id,
  locationId: r.location_id,
  evseUid: r.evse_uid,
  status: r.status,
  scenario: r.scenario,
  data: r.data,
  sim: r.sim,
  lastUpdated: r.last_updated,
});

export async function insertSession<Sim>(db: Queryable, row: SessionRow<Sim>, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO ${S}.sessions (id, peer_id, location_id, evse_uid, status, scenario, data, sim, last_updated, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [row.id, row.peerId, row.locationId, row.evseUid, row.status, row.scenario, JSON.stringify(row.data), JSON.stringify(row.sim), row.lastUpdated, now],
  );
}

export async function saveSession<Sim>(db: Queryable, row: SessionRow<Sim>): Promise<void> {
  await db.query(`UPDATE ${S}.sessions SET status = $2, data = $3, sim = $4, last_updated = $5 WHERE id = $1`, [
    row.id,
    row.status,
    JSON.stringify(row.data),
    JSON.stringify(row.sim),
    row.lastUpdated,
  ]);
}

export async function openSessionIds(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${S}.sessions WHERE status IN ('PENDING', 'ACTIVE') ORDER BY seq`);
  return rows.map((r) => r.id);
}

/** The session, locked for this transaction; undefined when it is not open any more. */
export async function lockOpenSession<Sim>(db: Queryable, id: string): Promise<SessionRow<Sim> | undefined> {
  const { rows } = await db.query<SessionDbRow<Sim>>(`SELECT * FROM ${S}.sessions WHERE id = $1 AND status IN ('PENDING', 'ACTIVE') FOR UPDATE`, [id]);
  return rows[0] ? toSession(rows[0]) : undefined;
}

export async function findSession<Sim>(db: Queryable, id: string): Promise<SessionRow<Sim> | undefined> {
  const { rows } = await db.query<SessionDbRow<Sim>>(`SELECT * FROM ${S}.sessions WHERE id = $1`, [id]);
  return rows[0] ? toSession(rows[0]) : undefined;
}

export async function evseHasOpenSession(db: Queryable, locationId: string, evseUid: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM ${S}.sessions WHERE location_id = $1 AND evse_uid = $2 AND status IN ('PENDING', 'ACTIVE') LIMIT 1`, [
    locationId,
    evseUid,
  ]);
  return rows.length > 0;
}

async function page<T>(db: Queryable, table: 'sessions' | 'cdrs', peerId: string, q: PageQuery): Promise<{ items: T[]; total: number }> {
  const where = ['peer_id = $1'];
  const values: unknown[] = [peerId];
  if (q.date_from) {
    values.push(q.date_from);
    where.push(`last_updated >= $${values.length}`);
  }
  if (q.date_to) {
    values.push(q.date_to);
    where.push(`last_updated < $${values.length}`);
  }
  const filter = where.join(' AND ');
  const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${S}.${table} WHERE ${filter}`, values);
  const { rows } = await db.query<{ data: T }>(
    `SELECT data FROM ${S}.${table} WHERE ${filter} ORDER BY seq LIMIT $${values.length + 1} OFFSET $${values.length + 2}`,
    [...values, q.limit, q.offset],
  );
  return { items: rows.map((r) => r.data), total: count.rows[0]?.n ?? 0 };
}

export const sessionPage = (db: Queryable, peerId: string, q: PageQuery) => page<Session>(db, 'sessions', peerId, q);
export const cdrPage = (db: Queryable, peerId: string, q: PageQuery) => page<Cdr>(db, 'cdrs', peerId, q);

export async function insertCdr(db: Queryable, peerId: string, cdr: Cdr): Promise<void> {
  await db.query(`INSERT INTO ${S}.cdrs (id, peer_id, session_id, data, last_updated) VALUES ($1, $2, $3, $4, $5)`, [
    cdr.id,
    peerId,
    cdr.session_id,
    JSON.stringify(cdr),
    new Date(cdr.last_updated),
  ]);
}

export async function findCdrBySession(db: Queryable, sessionId: string): Promise<Cdr | undefined> {
  const { rows } = await db.query<{ data: Cdr }>(`SELECT data FROM ${S}.cdrs WHERE session_id = $1`, [sessionId]);
  return rows[0]?.data;
}

// ---------------------------------------------------------------------------
// Outbox

export interface OutboxMessage {
  peerId: string;
  orderingKey: string;
  kind: 'session_put' | 'session_patch' | 'cdr';
  method: 'PUT' | 'PATCH' | 'POST';
  url: string;
  body: unknown;
  routing: Record<string, string>;
  dueAt: Date;
}

export interface OutboxEntry extends OutboxMessage {
  id: number;
  attempts: number;
  createdAt: Date;
}

export interface OutboxRecord extends OutboxEntry {
  deliveredAt: Date | null;
  failedAt: Date | null;
  lastStatus: number | null;
  lastError: string | null;
  replyLocation: string | null;
}

interface OutboxDbRow {
  id: number;
  peer_id: string;
  ordering_key: string;
  kind: OutboxMessage['kind'];
  method: OutboxMessage['method'];
  url: string;
  body: unknown;
  routing: Record<string, string>;
  due_at: Date;
  attempts: number;
  created_at: Date;
  delivered_at: Date | null;
  failed_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  reply_location: string | null;
}

const toOutbox = (r: OutboxDbRow): OutboxRecord => ({
  id: Number(r.id),
  peerId: r.peer_id,
  orderingKey: r.ordering_key,
  kind: r.kind,
  method: r.method,
  url: r.url,
  body: r.body,
  routing: r.routing,
  dueAt: r.due_at,
  attempts: r.attempts,
  createdAt: r.created_at,
  deliveredAt: r.delivered_at,
  failedAt: r.failed_at,
  lastStatus: r.last_status,
  lastError: r.last_error,
  replyLocation: r.reply_location,
});

export async function enqueue(db: Queryable, messages: OutboxMessage[], now: Date): Promise<void> {
  for (const m of messages) {
    await db.query(
      `INSERT INTO ${S}.outbox (peer_id, ordering_key, kind, method, url, body, routing, due_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [m.peerId, m.orderingKey, m.kind, m.method, m.url, JSON.stringify(m.body), JSON.stringify(m.routing), m.dueAt, now],
    );
  }
}

/** The oldest pending message of each ordering key, when due and not leased; leased to the caller until `leaseUntil`. */
export async function claimDue(db: Queryable, now: Date, leaseUntil: Date, limit: number): Promise<OutboxEntry[]> {
  const { rows } = await db.query<OutboxDbRow>(
    `UPDATE ${S}.outbox o SET lease_until = $2, attempts = o.attempts + 1
     WHERE o.id IN (
       SELECT id FROM (
         SELECT DISTINCT ON (ordering_key) id, due_at, lease_until FROM ${S}.outbox
         WHERE delivered_at IS NULL AND failed_at IS NULL ORDER BY ordering_key, id
       ) heads
       WHERE due_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
       ORDER BY due_at, id LIMIT $3
     )
     RETURNING o.*`,
    [now, leaseUntil, limit],
  );
  return rows.map(toOutbox).sort((a, b) => a.id - b.id);
}

export async function recordOutcome(
  db: Queryable,
  id: number,
  outcome: { delivered: boolean; failed: boolean; status: number | null; error: string | null; nextAttemptAt: Date | null; location?: string | null; at: Date },
): Promise<void> {
  await db.query(
    `UPDATE ${S}.outbox SET lease_until = NULL, last_status = $2, last_error = $3,
       delivered_at = CASE WHEN $4 THEN $6::timestamptz END, failed_at = CASE WHEN $5 THEN $6::timestamptz END,
       due_at = COALESCE($7, due_at), reply_location = COALESCE($8, reply_location)
     WHERE id = $1`,
    [id, outcome.status, outcome.error, outcome.delivered, outcome.failed, outcome.at, outcome.nextAttemptAt, outcome.location ?? null],
  );
}

export async function listOutbox(db: Queryable, orderingKey?: string): Promise<OutboxRecord[]> {
  const { rows } = await db.query<OutboxDbRow>(
    `SELECT * FROM ${S}.outbox ${orderingKey ? 'WHERE ordering_key = $1' : ''} ORDER BY id`,
    orderingKey ? [orderingKey] : [],
  );
  return rows.map(toOutbox);
}

/** Undelivered messages of a peer that went away are given up. */
export async function failPeerOutbox(db: Queryable, peerId: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE ${S}.outbox SET failed_at = $2, last_error = 'the peer unregistered', lease_until = NULL
     WHERE peer_id = $1 AND delivered_at IS NULL AND failed_at IS NULL`,
    [peerId, now],
  );
}

// ---------------------------------------------------------------------------
// Tokens pushed by eMSPs

/** Stores a pushed token; `receivedBy`: our parties (CC*PID) the push reached, added to those it reached before. */
export async function upsertToken(db: Queryable, peerId: string, token: Token, receivedBy: readonly string[]): Promise<boolean> {
  const { rows } = await db.query<{ created: boolean }>(
    `INSERT INTO ${S}.tokens (peer_id, country_code, party_id, uid, type, data, last_updated, received_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (peer_id, country_code, party_id, uid, type) DO UPDATE
       SET data = EXCLUDED.data, last_updated = EXCLUDED.last_updated,
           received_by = ARRAY(SELECT DISTINCT r FROM unnest(${S}.tokens.received_by || EXCLUDED.received_by) AS r ORDER BY r)
     RETURNING (xmax = 0) AS created`,
    [peerId, token.country_code, token.party_id, token.uid, token.type, JSON.stringify(token), new Date(token.last_updated), [...receivedBy].sort()],
  );
  return rows[0]?.created ?? false;
}

/** Which of our parties (CC*PID) received the token of this uid, by any peer. */
export async function tokenReceivers(db: Queryable, uid: string): Promise<string[]> {
  const { rows } = await db.query<{ party: string }>(`SELECT DISTINCT unnest(received_by) AS party FROM ${S}.tokens WHERE uid = $1 ORDER BY party`, [uid]);
  return rows.map((r) => r.party);
}

export async function findToken(db: Queryable, peerId: string, countryCode: string, partyId: string, uid: string, type: string): Promise<Token | undefined> {
  const { rows } = await db.query<{ data: Token }>(
    `SELECT data FROM ${S}.tokens WHERE peer_id = $1 AND country_code = $2 AND party_id = $3 AND uid = $4 AND type = $5`,
    [peerId, countryCode, partyId, uid, type],
  );
  return rows[0]?.data;
}

// ---------------------------------------------------------------------------
// EVSE statuses

export async function saveEvseStatus(db: Queryable, o: StatusOverride): Promise<void> {
  await db.query(
    `INSERT INTO ${S}.evse_status (location_id, evse_uid, status, last_updated) VALUES ($1, $2, $3, $4)
     ON CONFLICT (location_id, evse_uid) DO UPDATE SET status = EXCLUDED.status, last_updated = EXCLUDED.last_updated`,
    [o.location_id, o.evse_uid, o.status, o.last_updated],
  );
}

export async function loadEvseStatuses(db: Queryable): Promise<StatusOverride[]> {
  const { rows } = await db.query<{ location_id: string; evse_uid: string; status: EvseStatus; last_updated: Date }>(
    `SELECT location_id, evse_uid, status, last_updated FROM ${S}.evse_status`,
  );
  return rows;
}
