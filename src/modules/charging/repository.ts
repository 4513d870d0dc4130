// SQL of charging sessions. Queries a client makes take its client id; the
// ones driven by CPO messages and jobs find sessions by their own keys.
import type { OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { NamedStatement, Queryable } from '../../platform/db.ts';
import type { UserFacingPrices } from '../../pricing/session-prices.ts';

export type SessionStatus = 'pending' | 'active' | 'stopping' | 'completed' | 'failed';
export type StartStep = 'holding' | 'held' | 'commanding' | 'accepted' | 'ended';
export const UNFINISHED: readonly SessionStatus[] = ['pending', 'active', 'stopping'];

export interface StationInfo {
  station_name: string | null;
  station_address: string | null;
  country: string | null;
  station_speed: string | null;
  connector_standard: string | null;
  connector_power: number | null;
  support_phone: string | null;
  latitude: string | null;
  longitude: string | null;
}

export type { UserFacingPrices };

export interface SessionRow {
  id: string;
  client_id: string;
  user_id: string;
  payment_method_id: string;
  evse_id: string;
  station_id: string;
  country_code: string;
  party_id: string;
  /** The operator's name as the catalogue had it at the start (for the invoice); null for sessions from before it was kept. */
  operator_name: string | null;
  location_id: string;
  evse_uid: string;
  connector_id: string | null;
  status: SessionStatus;
  start_step: StartStep;
  failure_reason: string | null;
  hold_reference: string;
  adopted_hold_of: string | null;
  pre_authorization_amount: number;
  currency: string;
  tariff: OcpiTariff;
  tariff_is_fallback: boolean;
  time_zone: string;
  starting_fee: { price: string; vat: string } | null;
  station_info: StationInfo;
  is_partner: boolean;
  logo_url: string | null;
  user_facing_session_prices: UserFacingPrices;
  start_command_id: string | null;
  stop_command_id: string | null;
  ocpi_session_id: string | null;
  start_time: Date | null;
  end_time: Date | null;
  reported_at: Date | null;
  consumed_energy: string;
  estimated_cost: number | null;
  rates: number | null;
  accepted_at: Date | null;
  start_deadline: Date | null;
  stop_requested_at: Date | null;
  cdr_country_code: string | null;
  cdr_party_id: string | null;
  cdr_id: string | null;
  /** 1 at the insert, +1 at every write of the row: which state of the session a view or an event shows. */
  version: number;
  /** When the last charging_session.progress event was recorded (the throttle). */
  progress_event_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type NewSession = Omit<
  SessionRow,
  | 'status'
  | 'start_step'
  | 'failure_reason'
  | 'adopted_hold_of'
  | 'start_command_id'
  | 'stop_command_id'
  | 'ocpi_session_id'
  | 'start_time'
  | 'end_time'
  | 'reported_at'
  | 'consumed_energy'
  | 'estimated_cost'
  | 'rates'
  | 'accepted_at'
  | 'start_deadline'
  | 'stop_requested_at'
  | 'cdr_country_code'
  | 'cdr_party_id'
  | 'cdr_id'
  | 'version'
  | 'progress_event_at'
  | 'updated_at'
>;

const COLUMNS = `id, client_id, user_id, payment_method_id, evse_id, station_id, country_code, party_id, operator_name, location_id, evse_uid,
  connector_id, status, start_step, failure_reason, hold_reference, adopted_hold_of, pre_authorization_amount, currency, tariff,
  tariff_is_fallback, time_zone, starting_fee, station_info, is_partner, logo_url, user_facing_session_prices, start_command_id,
  stop_command_id, ocpi_session_id, start_time, end_time, reported_at, consumed_energy::text AS consumed_energy, estimated_cost, rates,
  accepted_at, start_deadline, stop_requested_at, cdr_country_code, cdr_party_id, cdr_id, version, progress_event_at, created_at, updated_at`;
const QUALIFIED_COLUMNS = COLUMNS.split(',')
  .map((column) => `s.${column.trim()}`)
  .join(', ');

/** Inserts a pending session; undefined when the user already has an unfinished one on this EVSE (the unique index). */
export async function insertSession(db: Queryable, s: NewSession): Promise<SessionRow | undefined> {
  const { rows } = await db.query<SessionRow>(
    `INSERT INTO charging_sessions (id, client_id, user_id, payment_method_id, evse_id, station_id, country_code, party_id, location_id,
       evse_uid, connector_id, status, start_step, hold_reference, pre_authorization_amount, currency, tariff, tariff_is_fallback,
       time_zone, starting_fee, station_info, is_partner, logo_url, user_facing_session_prices, created_at, updated_at, operator_name)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', 'holding', $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $23, $24)
     ON CONFLICT (user_id, evse_id) WHERE status IN ('pending', 'active', 'stopping') DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      s.id,
      s.client_id,
      s.user_id,
      s.payment_method_id,
      s.evse_id,
      s.station_id,
      s.country_code,
      s.party_id,
      s.location_id,
      s.evse_uid,
      s.connector_id,
      s.hold_reference,
      s.pre_authorization_amount,
      s.currency,
      JSON.stringify(s.tariff),
      s.tariff_is_fallback,
      s.time_zone,
      s.starting_fee === null ? null : JSON.stringify(s.starting_fee),
      JSON.stringify(s.station_info),
      s.is_partner,
      s.logo_url,
      JSON.stringify(s.user_facing_session_prices),
      s.created_at,
      s.operator_name,
    ],
  );
  return rows[0];
}

export async function findSession(db: Queryable, id: string, options: { forUpdate?: boolean } = {}): Promise<SessionRow | undefined> {
  const { rows } = await db.query<SessionRow>(options.forUpdate ? FIND_SESSION_FOR_UPDATE : FIND_SESSION, [id]);
  return rows[0];
}

// The hot reads of a session (every poll, every CPO message) are prepared once per connection.
const FIND_SESSION: NamedStatement = { name: 'charging.find-session', text: `SELECT ${COLUMNS} FROM charging_sessions WHERE id = $1` };
const FIND_SESSION_FOR_UPDATE: NamedStatement = { name: 'charging.find-session-for-update', text: `${FIND_SESSION.text} FOR UPDATE` };
const FIND_CLIENT_SESSION: NamedStatement = {
  name: 'charging.find-client-session',
  // The user's own check in the same read (a poll's first statement): its session, while the user is not deleted.
  text: `SELECT ${COLUMNS} FROM charging_sessions WHERE id = $1 AND client_id = $2 AND user_id = $3
           AND EXISTS (SELECT 1 FROM users u WHERE u.client_id = $2 AND u.id = $3 AND u.deleted_at IS NULL)`,
};
const FIND_BY_OCPI_SESSION: NamedStatement = {
  name: 'charging.find-by-ocpi-session',
  text: `SELECT ${COLUMNS} FROM charging_sessions WHERE country_code = $1 AND party_id = $2 AND ocpi_session_id = $3`,
};
const FIND_BY_OCPI_SESSION_FOR_UPDATE: NamedStatement = { name: 'charging.find-by-ocpi-session-for-update', text: `${FIND_BY_OCPI_SESSION.text} FOR UPDATE` };

/** The session of this client's user, while the user is not deleted (ids must be UUIDs). */
export async function findClientSession(db: Queryable, clientId: string, userId: string, id: string): Promise<SessionRow | undefined> {
  const { rows } = await db.query<SessionRow>(FIND_CLIENT_SESSION, [id, clientId, userId]);
  return rows[0];
}

export async function findByOcpiSession(
  db: Queryable,
  key: { country_code: string; party_id: string; id: string },
  options: { forUpdate?: boolean } = {},
): Promise<SessionRow | undefined> {
  const { rows } = await db.query<SessionRow>(options.forUpdate ? FIND_BY_OCPI_SESSION_FOR_UPDATE : FIND_BY_OCPI_SESSION, [
    key.country_code,
    key.party_id,
    key.id,
  ]);
  return rows[0];
}

/**
 * The session a CPO message names by neither our id nor a session id we know: the token's user (APP_USER uid =
 * user id) on that EVSE whose START_SESSION was sent, not yet linked to a CPO session or CDR, created by `startedBy`.
 */
export async function findByTokenAndEvse(
  db: Queryable,
  key: { user_id: string; country_code: string; party_id: string; location_id: string; evse_uid: string; startedBy: Date },
  options: { forUpdate?: boolean } = {},
): Promise<SessionRow | undefined> {
  const { rows } = await db.query<SessionRow>(
    `SELECT ${COLUMNS} FROM charging_sessions
      WHERE user_id = $1 AND country_code = $2 AND party_id = $3 AND location_id = $4 AND evse_uid = $5
        AND start_command_id IS NOT NULL AND ocpi_session_id IS NULL AND cdr_id IS NULL AND created_at <= $6
      ORDER BY created_at DESC LIMIT 1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [key.user_id, key.country_code, key.party_id, key.location_id, key.evse_uid, key.startedBy],
  );
  return rows[0];
}

/** Which of these CDRs (by CPO party and id) a session is linked to. */
export async function linkedCdrs(db: Queryable, keys: readonly { country_code: string; party_id: string; id: string }[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await db.query<{ key: string }>(
    `SELECT cdr_country_code || '*' || cdr_party_id || '*' || cdr_id AS key FROM charging_sessions
      WHERE cdr_id IS NOT NULL AND (cdr_country_code, cdr_party_id, cdr_id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`,
    [keys.map((k) => k.country_code), keys.map((k) => k.party_id), keys.map((k) => k.id)],
  );
  return new Set(rows.map((r) => r.key));
}

export async function findByStartCommand(db: Queryable, commandId: string, options: { forUpdate?: boolean } = {}): Promise<SessionRow | undefined> {
  const { rows } = await db.query<SessionRow>(
    `SELECT ${COLUMNS} FROM charging_sessions WHERE start_command_id = $1 OR stop_command_id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [commandId],
  );
  return rows[0];
}

export async function listSessions(
  db: Queryable,
  clientId: string,
  userId: string,
  status: SessionStatus | undefined,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: SessionRow[] }> {
  const filter = status ? ' AND status = $3' : '';
  const params: unknown[] = [clientId, userId, ...(status ? [status] : [])];
  const [{ rows: counted }, { rows }] = await Promise.all([
    db.query<{ count: number }>(`SELECT count(*) AS count FROM charging_sessions WHERE client_id = $1 AND user_id = $2${filter}`, params),
    db.query<SessionRow>(
      `SELECT ${COLUMNS} FROM charging_sessions WHERE client_id = $1 AND user_id = $2${filter}
       ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    ),
  ]);
  return { count: counted[0]?.count ?? 0, rows };
}

/** What a write may change besides the status: a status changes only through changeSessionStatus (state.ts's table). */
export type SessionChanges = Partial<
  Pick<
    SessionRow,
    | 'start_step'
    | 'failure_reason'
    | 'hold_reference'
    | 'adopted_hold_of'
    | 'start_command_id'
    | 'stop_command_id'
    | 'ocpi_session_id'
    | 'start_time'
    | 'end_time'
    | 'reported_at'
    | 'consumed_energy'
    | 'estimated_cost'
    | 'rates'
    | 'accepted_at'
    | 'start_deadline'
    | 'stop_requested_at'
    | 'cdr_country_code'
    | 'cdr_party_id'
    | 'cdr_id'
    | 'progress_event_at'
  >
>;

/** Writes `changes`; with `onlyIf`, only while the session's status is one of them. Undefined when nothing was written. */
export async function updateSession(
  db: Queryable,
  id: string,
  changes: SessionChanges,
  at: Date,
  onlyIf?: readonly SessionStatus[],
): Promise<SessionRow | undefined> {
  return writeSession(db, id, changes, at, onlyIf);
}

/**
 * Moves the session to `to` (with `changes`) only while its status is one of `from`: the status guard makes a
 * transition the row has already left (a concurrent message, a job) write nothing. Undefined when nothing was written;
 * else the row written and the status it had (read under the row's lock by the same statement).
 */
export async function changeSessionStatus(
  db: Queryable,
  id: string,
  transition: { from: readonly SessionStatus[]; to: SessionStatus },
  changes: SessionChanges,
  at: Date,
): Promise<{ row: SessionRow; before: SessionStatus } | undefined> {
  const entries = Object.entries({ ...changes, status: transition.to }).filter(([, v]) => v !== undefined);
  const sets = entries.map(([column], i) => `${column} = $${i + 4}`);
  const { rows } = await db.query<SessionRow & { status_before: SessionStatus }>(
    `UPDATE charging_sessions s SET ${[...sets, 'updated_at = $2', 'version = s.version + 1'].join(', ')}
       FROM (SELECT id, status FROM charging_sessions WHERE id = $1 FOR UPDATE) b
      WHERE s.id = b.id AND b.status = ANY($3)
      RETURNING ${QUALIFIED_COLUMNS}, b.status AS status_before`,
    [id, at, transition.from, ...entries.map(([, v]) => v)],
  );
  const written = rows[0];
  if (!written) return undefined;
  const { status_before: before, ...row } = written;
  return { row, before };
}

async function writeSession(
  db: Queryable,
  id: string,
  changes: SessionChanges & { status?: SessionStatus },
  at: Date,
  onlyIf: readonly SessionStatus[] | undefined,
): Promise<SessionRow | undefined> {
  const entries = Object.entries(changes).filter(([, v]) => v !== undefined);
  const sets = entries.map(([column], i) => `${column} = $${i + 3}`);
  const params: unknown[] = [id, at, ...entries.map(([, v]) => v)];
  const guard = onlyIf ? ` AND status = ANY($${params.length + 1})` : '';
  if (onlyIf) params.push(onlyIf);
  const { rows } = await db.query<SessionRow>(
    `UPDATE charging_sessions SET ${[...sets, 'updated_at = $2', 'version = version + 1'].join(', ')} WHERE id = $1${guard} RETURNING ${COLUMNS}`,
    params,
  );
  return rows[0];
}

/** Whether the user has an unfinished session (or a start in flight) on this EVSE (the unique index's own range). */
export async function hasUnfinishedOnEvse(db: Queryable, clientId: string, userId: string, evseId: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM charging_sessions WHERE user_id = $2 AND evse_id = $3 AND client_id = $1 AND status IN ('pending', 'active', 'stopping')`,
    [clientId, userId, evseId],
  );
  return rows.length > 0;
}

/** Unfinished sessions of a user (any EVSE), e.g. to refuse deleting the user or a payment method in use. */
export async function countUnfinished(db: Queryable, clientId: string, userId: string, paymentMethodId?: string): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*) AS count FROM charging_sessions
      WHERE client_id = $1 AND user_id = $2 AND status IN ('pending', 'active', 'stopping')${paymentMethodId ? ' AND payment_method_id = $3' : ''}`,
    paymentMethodId ? [clientId, userId, paymentMethodId] : [clientId, userId],
  );
  return rows[0]?.count ?? 0;
}

/** Sessions whose start saga stopped before the CPO's answer (a crash, a timeout): older than `before`. */
export async function stalledStarts(db: Queryable, before: Date, limit: number): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `SELECT ${COLUMNS} FROM charging_sessions
      WHERE status = 'pending' AND start_step IN ('holding', 'held', 'commanding') AND updated_at < $1
      ORDER BY updated_at LIMIT $2`,
    [before, limit],
  );
  return rows;
}

/** Accepted starts the CPO never reported a session for by their deadline. */
export async function overdueStarts(db: Queryable, now: Date, limit: number): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `SELECT ${COLUMNS} FROM charging_sessions
      WHERE status = 'pending' AND start_step = 'accepted' AND ocpi_session_id IS NULL AND start_deadline < $1
      ORDER BY start_deadline LIMIT $2`,
    [now, limit],
  );
  return rows;
}

/** Stops not finished: sessions stopping with no news since `before`, or still active after a stop asked before it. */
export async function staleStops(db: Queryable, before: Date, limit: number): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `SELECT ${COLUMNS} FROM charging_sessions
      WHERE (status = 'stopping' AND updated_at < $1) OR (status = 'active' AND stop_requested_at < $1)
      ORDER BY updated_at LIMIT $2`,
    [before, limit],
  );
  return rows;
}

/** Failed sessions whose hold may still hold funds (the release is done by the hold-release job; this finds the ones it missed). */
export async function failedSince(db: Queryable, since: Date, limit: number): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `SELECT ${COLUMNS} FROM charging_sessions WHERE status = 'failed' AND updated_at >= $1 ORDER BY updated_at LIMIT $2`,
    [since, limit],
  );
  return rows;
}

/** Completed sessions updated in [from, to), oldest first (any client: the invoicing module checks each has its bill). */
export async function completedBetween(db: Queryable, from: Date, to: Date, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    "SELECT id FROM charging_sessions WHERE status = 'completed' AND updated_at >= $1 AND updated_at < $2 ORDER BY updated_at LIMIT $3",
    [from, to, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * The user's latest failed attempt (created since `since`) whose hold waited for the customer's authentication, for
 * this payment method and at least `amount`, that no later attempt took over; locked, so one start adopts it.
 */
export async function findAdoptableHold(
  db: Queryable,
  clientId: string,
  key: { userId: string; paymentMethodId: string; failureReason: string; currency: string; amount: number; since: Date },
): Promise<{ id: string; hold_reference: string } | undefined> {
  const { rows } = await db.query<{ id: string; hold_reference: string }>(
    `SELECT s.id, s.hold_reference FROM charging_sessions s
      WHERE s.client_id = $1 AND s.user_id = $2 AND s.payment_method_id = $3 AND s.status = 'failed' AND s.failure_reason = $4
        AND s.currency = $5 AND s.pre_authorization_amount >= $6 AND s.created_at >= $7
        AND NOT EXISTS (SELECT 1 FROM charging_sessions t WHERE t.adopted_hold_of = s.id)
      ORDER BY s.created_at DESC LIMIT 1 FOR UPDATE OF s`,
    [clientId, key.userId, key.paymentMethodId, key.failureReason, key.currency, key.amount, key.since],
  );
  return rows[0];
}

/** Of these failed sessions, those whose hold a later attempt of the same client took over: failed id -> the later session's id. */
export async function findHoldTakeovers(db: Queryable, clientId: string, sessionIds: string[]): Promise<Map<string, string>> {
  if (sessionIds.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; adopted_hold_of: string }>(
    'SELECT id, adopted_hold_of FROM charging_sessions WHERE client_id = $1 AND adopted_hold_of = ANY($2::uuid[])',
    [clientId, sessionIds],
  );
  return new Map(rows.map((r) => [r.adopted_hold_of, r.id]));
}

/** Whether a later attempt took over this session's hold (then the hold is that attempt's to release). */
export async function isHoldAdopted(db: Queryable, sessionId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM charging_sessions WHERE adopted_hold_of = $1', [sessionId]);
  return rows.length > 0;
}
