// SQL of the OCPI module: connections (credentials, endpoints, parties),
// sessions, CDRs, commands and the outbox of pushes.
import { createHash } from 'node:crypto';
import type { NamedStatement, Queryable } from '../../platform/db.ts';

export type ConnectionStatus = 'invited' | 'connected' | 'disconnected';

export interface Endpoint {
  identifier: string;
  role: string;
  url: string;
}

export type TokenPush = 'each-party' | 'once';

export interface PeerRole {
  role: string;
  country_code: string;
  party_id: string;
  business_details: { name: string; website?: string; logo?: unknown };
}

export interface Connection {
  id: string;
  name: string;
  status: ConnectionStatus;
  incoming_token_kind: 'A' | 'C';
  outgoing_token: string | null;
  /** We present our token to the peer unencoded (configured, or detected in the handshake), else Base64-encoded. */
  raw_tokens: boolean;
  /** How the peer presents its token to us, as last seen (null: not seen yet). */
  incoming_token_form: 'raw' | 'base64' | null;
  /** Token pushes to a platform of several CPO parties: one per party ('each-party') or one to its first party ('once'). */
  token_push: TokenPush;
  versions_url: string | null;
  version: string | null;
  endpoints: Endpoint[];
  roles: PeerRole[];
  expected_party: string | null;
  created_at: Date;
  updated_at: Date;
  last_synced_at: Date | null;
}

/**
 * Where the database announces every change of a connection (a trigger, migration 0024: status, tokens, roles,
 * endpoints...), whichever process made it; the payload is the connection's id. Serving processes clear their
 * token cache on it.
 */
export const CONNECTIONS_CHANNEL = 'ocpi_connections';

export const tokenDigest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

const COLUMNS = `id, name, status, incoming_token_kind, outgoing_token, raw_tokens, incoming_token_form, token_push, versions_url, version,
                 endpoints, roles, expected_party, created_at, updated_at, last_synced_at`;

/** COLUMNS of a connection joined as `c`. */
const COLUMNS_OF_C = COLUMNS.split(',')
  .map((column) => `c.${column.trim()}`)
  .join(', ');

export async function insertConnection(
  db: Queryable,
  row: Pick<Connection, 'id' | 'name' | 'status' | 'incoming_token_kind' | 'raw_tokens' | 'expected_party'> & {
    incoming_token: string | null;
    versions_url?: string | null;
    token_push?: TokenPush;
  },
  at: Date,
): Promise<Connection> {
  const { rows } = await db.query<Connection>(
    `INSERT INTO ocpi_connections (id, name, status, incoming_token_sha256, incoming_token_kind, raw_tokens, expected_party, versions_url, token_push,
                                   created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
     RETURNING ${COLUMNS}`,
    [
      row.id,
      row.name,
      row.status,
      row.incoming_token === null ? null : tokenDigest(row.incoming_token),
      row.incoming_token_kind,
      row.raw_tokens,
      row.expected_party,
      row.versions_url ?? null,
      row.token_push ?? 'each-party',
      at,
    ],
  );
  return rows[0] as Connection;
}

export async function findConnectionByIncomingToken(db: Queryable, token: string): Promise<Connection | undefined> {
  const { rows } = await db.query<Connection>(
    `SELECT ${COLUMNS} FROM ocpi_connections WHERE (incoming_token_sha256 = $1 OR pending_token_sha256 = $1) AND status <> 'disconnected'`,
    [tokenDigest(token)],
  );
  return rows[0];
}

/** A token we are about to hand the peer (a renewal): it authenticates the peer until storeCredentials replaces the old one. */
export async function setPendingToken(db: Queryable, id: string, token: string | null): Promise<void> {
  await db.query('UPDATE ocpi_connections SET pending_token_sha256 = $2 WHERE id = $1', [id, token === null ? null : tokenDigest(token)]);
}

export async function findConnection(db: Queryable, id: string, options: { forUpdate?: boolean } = {}): Promise<Connection | undefined> {
  const { rows } = await db.query<Connection>(`SELECT ${COLUMNS} FROM ocpi_connections WHERE id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0];
}

export async function findConnectionByName(db: Queryable, name: string): Promise<Connection | undefined> {
  const { rows } = await db.query<Connection>(`SELECT ${COLUMNS} FROM ocpi_connections WHERE name = $1`, [name]);
  return rows[0];
}

export async function listConnections(db: Queryable): Promise<Connection[]> {
  const { rows } = await db.query<Connection>(`SELECT ${COLUMNS} FROM ocpi_connections ORDER BY created_at, name`);
  return rows;
}

export async function listConnectedConnections(db: Queryable): Promise<Connection[]> {
  const { rows } = await db.query<Connection>(`SELECT ${COLUMNS} FROM ocpi_connections WHERE status = 'connected' ORDER BY created_at`);
  return rows;
}

/** A peer claimed a party that another connection speaks for. */
export class PartyTakenError extends Error {
  readonly parties: string[];
  constructor(parties: string[]) {
    super(`${parties.join(', ')} ${parties.length === 1 ? 'is' : 'are'} registered by another connection`);
    this.name = 'PartyTakenError';
    this.parties = parties;
  }
}

/**
 * Stores the outcome of a credentials exchange: the peer's version, endpoints, roles and token, and our new token for it.
 * A party another connection speaks for is refused (PartyTakenError; call inside a transaction) unless `takeOver`
 * (the operator connecting a CPO anew): otherwise any peer holding a token could claim another CPO's party.
 */
export async function storeCredentials(
  db: Queryable,
  id: string,
  values: {
    name?: string;
    incoming_token: string;
    outgoing_token: string;
    versions_url: string;
    version: string;
    endpoints: Endpoint[];
    roles: PeerRole[];
  },
  at: Date,
  options: { takeOver?: boolean } = {},
): Promise<void> {
  await db.query(
    `UPDATE ocpi_connections
        SET status = 'connected', incoming_token_sha256 = $2, pending_token_sha256 = NULL, incoming_token_kind = 'C', outgoing_token = $3, versions_url = $4,
            version = $5, endpoints = $6, roles = $7, name = coalesce($8, name), updated_at = $9
      WHERE id = $1`,
    [
      id,
      tokenDigest(values.incoming_token),
      values.outgoing_token,
      values.versions_url,
      values.version,
      JSON.stringify(values.endpoints),
      JSON.stringify(values.roles),
      values.name ?? null,
      at,
    ],
  );
  // The parties of the credentials are replaced; those a hub reported (its ClientInfo) stay.
  await db.query(`DELETE FROM ocpi_connection_parties WHERE connection_id = $1 AND source = 'credentials'`, [id]);
  if (values.roles.length > 0) {
    // DISTINCT: a role listed twice (or in two letter cases) is one row. A party a hub reported is taken over by the
    // party's own registration (a direct connection is preferred to a route through a hub), as is any with takeOver.
    const { rows } = await db.query<{ country_code: string; party_id: string; role: string }>(
      `INSERT INTO ocpi_connection_parties (connection_id, country_code, party_id, role)
       SELECT DISTINCT $1::uuid, upper(x.country_code), upper(x.party_id), x.role FROM jsonb_to_recordset($2::jsonb) AS x(country_code text, party_id text, role text)
       ON CONFLICT (country_code, party_id, role) DO UPDATE
         SET connection_id = EXCLUDED.connection_id, source = 'credentials', hub_status = NULL, hub_updated = NULL
         WHERE $3::boolean OR ocpi_connection_parties.source = 'hubclientinfo'
       RETURNING country_code, party_id, role`,
      [id, JSON.stringify(values.roles), options.takeOver === true],
    );
    const stored = new Set(rows.map((r) => `${r.country_code}*${r.party_id}/${r.role}`));
    const taken = values.roles.filter((r) => !stored.has(`${r.country_code.toUpperCase()}*${r.party_id.toUpperCase()}/${r.role}`));
    if (taken.length > 0) throw new PartyTakenError([...new Set(taken.map((r) => `${r.country_code.toUpperCase()}*${r.party_id.toUpperCase()}`))]);
  }
}

export async function markDisconnected(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query(`UPDATE ocpi_connections SET status = 'disconnected', incoming_token_sha256 = NULL, outgoing_token = NULL, updated_at = $2 WHERE id = $1`, [
    id,
    at,
  ]);
  await db.query('DELETE FROM ocpi_connection_parties WHERE connection_id = $1', [id]);
  await db.query('DELETE FROM ocpi_outbox WHERE connection_id = $1', [id]);
}

/** A party a connection speaks for: from its credentials, or behind a hub with the hub's word on its connection status. */
export interface ConnectionParty {
  country_code: string;
  party_id: string;
  role: string;
  source: 'credentials' | 'hubclientinfo';
  /** The hub's ClientInfo status (CONNECTED, OFFLINE, PLANNED, SUSPENDED); null for a party of the credentials. */
  hub_status: string | null;
  hub_updated: Date | null;
}

/**
 * The connected CPO platform (or hub) that speaks for a party (where commands for its locations go), with the hub's
 * word on the party (hub_status: null when the connection is the party's own platform).
 */
export async function findConnectedCpoOfParty(
  db: Queryable,
  countryCode: string,
  partyId: string,
): Promise<(Connection & { hub_status: string | null }) | undefined> {
  const { rows } = await db.query<Connection & { hub_status: string | null }>(
    `SELECT ${COLUMNS_OF_C}, p.hub_status
       FROM ocpi_connection_parties p JOIN ocpi_connections c ON c.id = p.connection_id
      WHERE p.country_code = upper($1) AND p.party_id = upper($2) AND p.role = 'CPO' AND c.status = 'connected'`,
    [countryCode, partyId],
  );
  return rows[0];
}

/** The parties a connection speaks for, CPO parties first. */
export async function partiesOfConnection(db: Queryable, connectionId: string): Promise<ConnectionParty[]> {
  const { rows } = await db.query<ConnectionParty>(
    `SELECT country_code, party_id, role, source, hub_status, hub_updated FROM ocpi_connection_parties WHERE connection_id = $1
      ORDER BY role <> 'CPO', source, country_code, party_id, role`,
    [connectionId],
  );
  return rows;
}

/** Whether the connection speaks for this party, in any role. */
export async function connectionHoldsParty(db: Queryable, connectionId: string, countryCode: string, partyId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM ocpi_connection_parties WHERE connection_id = $1 AND country_code = upper($2) AND party_id = upper($3)', [
    connectionId,
    countryCode,
    partyId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Records how the peer presents its token (raw or base64). */
export async function setIncomingTokenForm(db: Queryable, id: string, form: 'raw' | 'base64'): Promise<void> {
  await db.query('UPDATE ocpi_connections SET incoming_token_form = $2 WHERE id = $1 AND incoming_token_form IS DISTINCT FROM $2', [id, form]);
}

// ---------------------------------------------------------------------------
// Hub client info (mod_hub_client_info): the parties behind a hub

export interface ClientInfoRow {
  country_code: string;
  party_id: string;
  role: string;
  status: string;
  last_updated: string;
}

/**
 * Stores a hub's ClientInfo of a party: 'created', 'updated', or 'ignored' (an older one than stored; or the party
 * is spoken for by another connection, directly or through another hub: that route stays).
 */
export async function upsertHubClient(db: Queryable, connectionId: string, info: ClientInfoRow): Promise<'created' | 'updated' | 'ignored'> {
  const { rows } = await db.query<{ created: boolean }>(
    `INSERT INTO ocpi_connection_parties (connection_id, country_code, party_id, role, source, hub_status, hub_updated)
     VALUES ($1, upper($2), upper($3), $4, 'hubclientinfo', $5, $6)
     ON CONFLICT (country_code, party_id, role) DO UPDATE SET hub_status = EXCLUDED.hub_status, hub_updated = EXCLUDED.hub_updated
       WHERE ocpi_connection_parties.connection_id = EXCLUDED.connection_id AND ocpi_connection_parties.source = 'hubclientinfo'
         AND ocpi_connection_parties.hub_updated <= EXCLUDED.hub_updated
     RETURNING (xmax = 0) AS created`,
    [connectionId, info.country_code, info.party_id, info.role, info.status, info.last_updated],
  );
  const row = rows[0];
  return row === undefined ? 'ignored' : row.created ? 'created' : 'updated';
}

/** A party's ClientInfo as the hub of this connection reported it. */
export async function findHubClient(db: Queryable, connectionId: string, countryCode: string, partyId: string): Promise<ClientInfoRow[]> {
  const { rows } = await db.query<ClientInfoRow & { hub_updated: Date }>(
    `SELECT country_code, party_id, role, hub_status AS status, hub_updated FROM ocpi_connection_parties
      WHERE connection_id = $1 AND country_code = upper($2) AND party_id = upper($3) AND source = 'hubclientinfo' ORDER BY role`,
    [connectionId, countryCode, partyId],
  );
  return rows.map(({ hub_updated, ...r }) => ({ ...r, last_updated: hub_updated.toISOString() }));
}

/** The hub's full list was pulled: parties it no longer lists are no longer valid (mod_hub_client_info, GET). */
export async function dropHubClientsExcept(db: Queryable, connectionId: string, keep: readonly { country_code: string; party_id: string; role: string }[]) {
  await db.query(
    `DELETE FROM ocpi_connection_parties WHERE connection_id = $1 AND source = 'hubclientinfo'
        AND (country_code, party_id, role) NOT IN (SELECT upper(x.country_code), upper(x.party_id), x.role
                                                      FROM jsonb_to_recordset($2::jsonb) AS x(country_code text, party_id text, role text))`,
    [connectionId, JSON.stringify(keep)],
  );
}

export async function setRawTokens(db: Queryable, id: string, rawTokens: boolean): Promise<void> {
  await db.query('UPDATE ocpi_connections SET raw_tokens = $2 WHERE id = $1', [id, rawTokens]);
}

/** The last pull in which every module succeeded. */
export async function markSynced(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query('UPDATE ocpi_connections SET last_synced_at = $2 WHERE id = $1', [id, at]);
}

/** Where the pull of each module of a connection stands (when its last successful pull started). */
export async function syncPositions(db: Queryable, connectionId: string): Promise<Map<string, Date>> {
  const { rows } = await db.query<{ module: string; synced_at: Date }>('SELECT module, synced_at FROM ocpi_sync_positions WHERE connection_id = $1', [
    connectionId,
  ]);
  return new Map(rows.map((r) => [r.module, r.synced_at]));
}

export async function markModuleSynced(db: Queryable, connectionId: string, module: string, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO ocpi_sync_positions (connection_id, module, synced_at) VALUES ($1, $2, $3)
     ON CONFLICT (connection_id, module) DO UPDATE SET synced_at = EXCLUDED.synced_at`,
    [connectionId, module, at],
  );
}

/** True when the connection speaks for this party in this role. */
export async function connectionOwnsParty(db: Queryable, connectionId: string, countryCode: string, partyId: string, role = 'CPO'): Promise<boolean> {
  const { rowCount } = await db.query(
    'SELECT 1 FROM ocpi_connection_parties WHERE connection_id = $1 AND country_code = upper($2) AND party_id = upper($3) AND role = $4',
    [connectionId, countryCode, partyId, role],
  );
  return rowCount === 1;
}

// ---------------------------------------------------------------------------
// Sessions

export interface StoredSession {
  country_code: string;
  party_id: string;
  id: string;
  connection_id: string;
  status: string;
  authorization_reference: string | null;
  data: Record<string, unknown>;
  last_updated: Date;
}

/** What the Sessions a 2.1.1 CDR may belong to are looked up by: their party, token and EVSE. */
export interface SessionLookupKey {
  country_code: string;
  party_id: string;
  token_uid: string;
  location_id: string;
  evse_uid: string;
}

/** How many Sessions of one party, token and EVSE a 2.1.1 CDR is matched against: the newest. */
export const SESSION_CANDIDATES_PER_KEY = 50;

/**
 * A connection's Sessions of each of these parties, tokens and EVSEs (the candidates of 2.1.1 CDRs, which name no
 * session), in one query (the token uid index, migration 0028): for each key its newest SESSION_CANDIDATES_PER_KEY, newest
 * first, so a token that charged thousands of times at one EVSE costs no more to match than one that charged fifty.
 */
export async function sessionsOfTokensAtEvses(
  db: Queryable,
  connectionId: string,
  keys: readonly SessionLookupKey[],
): Promise<(SessionLookupKey & { id: string; start_date_time: string; connector_id: string })[]> {
  const { rows } = await db.query<SessionLookupKey & { id: string; start_date_time: string; connector_id: string }>(
    `SELECT k.country_code, k.party_id, k.token_uid, k.location_id, k.evse_uid, s.id, s.start_date_time, s.connector_id
       FROM jsonb_to_recordset($2::jsonb) AS k(country_code text, party_id text, token_uid text, location_id text, evse_uid text)
       CROSS JOIN LATERAL (
         SELECT s.id, s.data->>'start_date_time' AS start_date_time, s.data->>'connector_id' AS connector_id, s.last_updated
           FROM ocpi_sessions s
          WHERE (s.data->'cdr_token'->>'uid') = k.token_uid AND s.connection_id = $1 AND s.country_code = k.country_code
            AND s.party_id = k.party_id AND s.data->>'location_id' = k.location_id AND s.data->>'evse_uid' = k.evse_uid
          ORDER BY s.last_updated DESC
          LIMIT $3
       ) s
      ORDER BY s.last_updated DESC`,
    [connectionId, JSON.stringify(keys), SESSION_CANDIDATES_PER_KEY],
  );
  return rows;
}

export async function findSession(
  db: Queryable,
  key: { country_code: string; party_id: string; id: string },
  options: { forUpdate?: boolean } = {},
): Promise<StoredSession | undefined> {
  const { rows } = await db.query<StoredSession>(
    `SELECT country_code, party_id, id, connection_id, status, authorization_reference, data, last_updated
       FROM ocpi_sessions WHERE country_code = $1 AND party_id = $2 AND id = $3${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [key.country_code, key.party_id, key.id],
  );
  return rows[0];
}

/** Stores a whole session unless a newer one is stored: 'created' (a new session), 'updated', or false (not written). */
export async function upsertSession(
  db: Queryable,
  connectionId: string,
  session: { country_code: string; party_id: string; id: string; status: string; authorization_reference?: string; last_updated: string },
  at: Date,
): Promise<'created' | 'updated' | false> {
  // xmax is 0 on a row this statement inserted, the updating transaction's id on one it updated.
  const { rows } = await db.query<{ created: boolean }>(
    `INSERT INTO ocpi_sessions (country_code, party_id, id, connection_id, status, authorization_reference, data, last_updated, received_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (country_code, party_id, id) DO UPDATE
       SET status = EXCLUDED.status, authorization_reference = EXCLUDED.authorization_reference, data = EXCLUDED.data,
           last_updated = EXCLUDED.last_updated, received_at = EXCLUDED.received_at
       WHERE ocpi_sessions.last_updated <= EXCLUDED.last_updated AND ocpi_sessions.connection_id = EXCLUDED.connection_id
     RETURNING (xmax = 0) AS created`,
    [
      session.country_code,
      session.party_id,
      session.id,
      connectionId,
      session.status,
      session.authorization_reference ?? null,
      JSON.stringify(session),
      session.last_updated,
      at,
    ],
  );
  const row = rows[0];
  return row === undefined ? false : row.created ? 'created' : 'updated';
}

// ---------------------------------------------------------------------------
// CDRs

export interface StoredCdr {
  country_code: string;
  party_id: string;
  id: string;
  connection_id: string;
  session_id: string | null;
  credit: boolean;
  data: Record<string, unknown>;
  received_at: Date;
}

/** Stores a CDR once; false when a CDR with this id was already stored (CDRs are immutable). */
export async function insertCdr(
  db: Queryable,
  connectionId: string,
  cdr: { country_code: string; party_id: string; id: string; session_id?: string; authorization_reference?: string; credit?: boolean },
  at: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO ocpi_cdrs (country_code, party_id, id, connection_id, session_id, authorization_reference, credit, data, received_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (country_code, party_id, id) DO NOTHING`,
    [
      cdr.country_code,
      cdr.party_id,
      cdr.id,
      connectionId,
      cdr.session_id ?? null,
      cdr.authorization_reference ?? null,
      cdr.credit ?? false,
      JSON.stringify(cdr),
      at,
    ],
  );
  return rowCount === 1;
}

/** CDRs (not credit CDRs) received since `since`, newest first. */
export async function recentCdrs(db: Queryable, since: Date, limit: number): Promise<StoredCdr[]> {
  const { rows } = await db.query<StoredCdr>(
    `SELECT country_code, party_id, id, connection_id, session_id, credit, data, received_at
       FROM ocpi_cdrs WHERE received_at >= $1 AND NOT credit ORDER BY received_at DESC LIMIT $2`,
    [since, limit],
  );
  return rows;
}

export async function findCdr(db: Queryable, key: { country_code: string; party_id: string; id: string }): Promise<StoredCdr | undefined> {
  const { rows } = await db.query<StoredCdr>(
    `SELECT country_code, party_id, id, connection_id, session_id, credit, data, received_at
       FROM ocpi_cdrs WHERE country_code = $1 AND party_id = $2 AND id = $3`,
    [key.country_code, key.party_id, key.id],
  );
  return rows[0];
}

// ---------------------------------------------------------------------------
// Commands

export interface StoredCommand {
  id: string;
  connection_id: string;
  type: string;
  request: Record<string, unknown>;
  status: 'sending' | 'accepted' | 'rejected' | 'failed';
  response: Record<string, unknown> | null;
  result: string | null;
  result_message: string | null;
  created_at: Date;
  responded_at: Date | null;
  result_at: Date | null;
}

const COMMAND_COLUMNS = 'id, connection_id, type, request, status, response, result, result_message, created_at, responded_at, result_at';

export async function insertCommand(
  db: Queryable,
  row: { id: string; connection_id: string; type: string; callback_secret: string; request: unknown },
  at: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO ocpi_commands (id, connection_id, type, callback_secret_sha256, request, status, created_at)
     VALUES ($1, $2, $3, $4, $5, 'sending', $6)`,
    [row.id, row.connection_id, row.type, tokenDigest(row.callback_secret), JSON.stringify(row.request), at],
  );
}

export async function recordCommandResponse(db: Queryable, id: string, status: 'accepted' | 'rejected' | 'failed', response: unknown, at: Date): Promise<void> {
  await db.query(`UPDATE ocpi_commands SET status = $2, response = $3, responded_at = $4 WHERE id = $1 AND status = 'sending'`, [
    id,
    status,
    response === undefined ? null : JSON.stringify(response),
    at,
  ]);
}

/** Stores the CPO's asynchronous result once; the command must belong to this connection and the secret match. */
export async function recordCommandResult(
  db: Queryable,
  key: { id: string; connection_id: string; type: string; callback_secret: string },
  result: { result: string; message?: string },
  at: Date,
): Promise<'stored' | 'duplicate' | 'unknown'> {
  const { rows } = await db.query<{ result: string | null }>(
    `SELECT result FROM ocpi_commands WHERE id = $1 AND connection_id = $2 AND type = $3 AND callback_secret_sha256 = $4 FOR UPDATE`,
    [key.id, key.connection_id, key.type, tokenDigest(key.callback_secret)],
  );
  const row = rows[0];
  if (!row) return 'unknown';
  if (row.result !== null) return 'duplicate';
  await db.query('UPDATE ocpi_commands SET result = $2, result_message = $3, result_at = $4 WHERE id = $1', [
    key.id,
    result.result,
    result.message ?? null,
    at,
  ]);
  return 'stored';
}

export async function findCommand(db: Queryable, id: string): Promise<StoredCommand | undefined> {
  const { rows } = await db.query<StoredCommand>(`SELECT ${COMMAND_COLUMNS} FROM ocpi_commands WHERE id = $1`, [id]);
  return rows[0];
}

// ---------------------------------------------------------------------------
// Outbox

export interface OutboxItem {
  id: number;
  connection_id: string;
  module: string;
  method: 'PUT' | 'PATCH' | 'POST' | 'DELETE';
  path: string;
  body: unknown;
  attempts: number;
}

export async function enqueuePush(
  db: Queryable,
  item: { connection_id: string; module: string; method: string; path: string; body: unknown; dedupe_key?: string },
  at: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO ocpi_outbox (connection_id, module, method, path, body, dedupe_key, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
     ON CONFLICT (connection_id, dedupe_key) WHERE dedupe_key IS NOT NULL
       DO UPDATE SET method = EXCLUDED.method, path = EXCLUDED.path, body = EXCLUDED.body, attempts = 0,
                     next_attempt_at = EXCLUDED.next_attempt_at, last_error = NULL`,
    [item.connection_id, item.module, item.method, item.path, item.body === undefined ? null : JSON.stringify(item.body), item.dedupe_key ?? null, at],
  );
}

const ENQUEUE_TO_RECEIVERS: NamedStatement = {
  name: 'ocpi.enqueue_push_to_receivers',
  text: `INSERT INTO ocpi_outbox (connection_id, module, method, path, body, dedupe_key, next_attempt_at, created_at)
         SELECT c.id, $1, $2, i.path, i.body, i.dedupe_key, $6, $6
           FROM ocpi_connections c, unnest($3::text[], $4::jsonb[], $5::text[]) AS i (path, body, dedupe_key)
          WHERE c.status = 'connected'
            AND EXISTS (SELECT 1 FROM jsonb_array_elements(c.endpoints) e
                         WHERE e ->> 'identifier' = $1 AND e ->> 'role' = 'RECEIVER' AND coalesce(e ->> 'url', '') <> '')
         ON CONFLICT (connection_id, dedupe_key) WHERE dedupe_key IS NOT NULL
           DO UPDATE SET method = EXCLUDED.method, path = EXCLUDED.path, body = EXCLUDED.body, attempts = 0,
                         next_attempt_at = EXCLUDED.next_attempt_at, last_error = NULL`,
};

/**
 * Queues pushes (of one module and method) for every connected CPO with a RECEIVER endpoint of the module (the
 * newest of an object replaces one still waiting), in one statement: nothing when no CPO receives the module.
 * Each item's dedupe key must differ from the others' (one statement cannot replace a row it inserted).
 */
export async function enqueuePushesToReceivers(
  db: Queryable,
  pushes: { module: string; method: string; items: readonly { path: string; body: unknown; dedupe_key: string }[] },
  at: Date,
): Promise<void> {
  if (pushes.items.length === 0) return;
  await db.query(ENQUEUE_TO_RECEIVERS, [
    pushes.module,
    pushes.method,
    pushes.items.map((item) => item.path),
    pushes.items.map((item) => (item.body === undefined ? null : JSON.stringify(item.body))),
    pushes.items.map((item) => item.dedupe_key),
    at,
  ]);
}

/**
 * Claims up to `limit` of the oldest due pushes that no one is sending, in a statement of its own: each is
 * leased until `leaseUntil`, so no other worker sends it meanwhile, and it comes due again only if this one
 * dies. No transaction stays open while pushes travel (a user change that queues a newer push of the same
 * object never waits for a slow CPO; the newer body waits for the lease to end). Pushes to the connections
 * in `except` are left for a later round.
 */
export async function claimDuePushes(db: Queryable, at: Date, leaseUntil: Date, limit: number, except: readonly string[] = []): Promise<OutboxItem[]> {
  const { rows } = await db.query<OutboxItem>(
    `UPDATE ocpi_outbox SET leased_until = $2
      WHERE id IN (SELECT id FROM ocpi_outbox
                    WHERE next_attempt_at <= $1 AND (leased_until IS NULL OR leased_until <= $1) AND NOT (connection_id = ANY($3::uuid[]))
                    ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
      RETURNING id, connection_id, module, method, path, body, attempts`,
    [at, leaseUntil, except, limit],
  );
  return rows.sort((x, y) => Number(x.id) - Number(y.id));
}

const bodyText = (body: unknown) => (body === undefined || body === null ? null : JSON.stringify(body));

/**
 * Pushes done (sent, or refused for good). A newer push of the same object may have replaced a body
 * meanwhile: only the bodies sent are done; a replaced one stays, unleased and due.
 */
export async function completePushes(db: Queryable, items: readonly { id: number; body: unknown }[]): Promise<void> {
  if (items.length === 0) return;
  const ids = items.map((item) => item.id);
  await db.query(
    `WITH done AS (
       DELETE FROM ocpi_outbox o USING unnest($1::bigint[], $2::text[]) AS d(id, body)
        WHERE o.id = d.id AND o.body IS NOT DISTINCT FROM d.body::jsonb
       RETURNING o.id)
     UPDATE ocpi_outbox SET leased_until = NULL WHERE id = ANY($1::bigint[]) AND id NOT IN (SELECT id FROM done)`,
    [ids, items.map((item) => bodyText(item.body))],
  );
}

/** Pushes that can no longer be delivered (their connection is gone or no longer receives the module). */
export async function dropPushes(db: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length > 0) await db.query('DELETE FROM ocpi_outbox WHERE id = ANY($1::bigint[])', [ids]);
}

/** Claimed pushes not sent after all (their CPO failed on another push, or we are stopping): due again at once. */
export async function releasePushes(db: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length > 0) await db.query('UPDATE ocpi_outbox SET leased_until = NULL WHERE id = ANY($1::bigint[])', [ids]);
}

/** A failed push waits until `next`, unless a newer body replaced it meanwhile (that one is due at once). */
export async function postponePush(db: Queryable, id: number, body: unknown, next: Date, error: string): Promise<void> {
  await db.query(
    `UPDATE ocpi_outbox
        SET leased_until = NULL,
            attempts = CASE WHEN body IS NOT DISTINCT FROM $2::jsonb THEN attempts + 1 ELSE attempts END,
            next_attempt_at = CASE WHEN body IS NOT DISTINCT FROM $2::jsonb THEN $3 ELSE next_attempt_at END,
            last_error = CASE WHEN body IS NOT DISTINCT FROM $2::jsonb THEN $4 ELSE last_error END
      WHERE id = $1`,
    [id, bodyText(body), next, error.slice(0, 500)],
  );
}

/** Pushes waiting in the outbox (metrics), by module, with the oldest one's age in seconds. */
export async function pendingPushes(db: Queryable, now: Date): Promise<{ module: string; pending: number; oldestSeconds: number }[]> {
  const { rows } = await db.query<{ module: string; pending: number; oldest: Date }>(
    'SELECT module, count(*) AS pending, min(created_at) AS oldest FROM ocpi_outbox GROUP BY module',
  );
  return rows.map((r) => ({ module: r.module, pending: r.pending, oldestSeconds: Math.max(0, (now.getTime() - r.oldest.getTime()) / 1000) }));
}
