// SQL for users and billing details. Every query takes the client id: another
// client's user is simply not found.
import type { NamedStatement, Queryable } from '../../platform/db.ts';
import { isUniqueViolation } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';

export interface UserRow {
  id: string;
  client_id: string;
  email: string | null;
  locale: string;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface BillingDetailsRow {
  account_type: 'personal' | 'business';
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  vat_number: string | null;
  tax_id: string | null;
  line1: string | null;
  postal_code: string | null;
  city: string | null;
  country: string | null;
  updated_at: Date;
}

const USER_COLUMNS = 'id, client_id, email, locale, external_id, created_at, updated_at';
const PAGE_COLUMNS = USER_COLUMNS.split(', ')
  .map((column) => `u.${column}`)
  .join(', ');

export const externalIdTaken = () =>
  new AppError('conflict', 'custom_properties.external_id: another user of this client already has this external id.', {
    errors: [{ field: 'custom_properties.external_id', message: 'is already used by another user' }],
  });

const INSERT_USERS: NamedStatement = {
  name: 'users.insert',
  text: `INSERT INTO users (id, client_id, email, locale, external_id, created_at, updated_at)
         SELECT id, client_id, email, locale, external_id, created_at, created_at
           FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
             AS u (id, client_id, email, locale, external_id, created_at)
         ON CONFLICT (client_id, external_id) WHERE deleted_at IS NULL AND external_id IS NOT NULL DO NOTHING
         RETURNING ${USER_COLUMNS}`,
};

/**
 * Inserts users (of any clients) in one statement; answers each user's row in the order given, or
 * undefined for a user whose external id another live user of its client already has (also one
 * earlier in the same call). Rows are written in (client, external id) order, so two calls that
 * share external ids wait for each other in the same order and never deadlock.
 */
export async function insertUsers(db: Queryable, users: readonly Omit<UserRow, 'updated_at'>[]): Promise<(UserRow | undefined)[]> {
  // A stable sort: users with the same external id stay in the order given (the first one given gets it).
  const ordered = [...users].sort((a, b) => compare(a.client_id, b.client_id) || compare(a.external_id ?? '', b.external_id ?? ''));
  const { rows } = await db.query<UserRow>(INSERT_USERS, [
    ordered.map((user) => user.id),
    ordered.map((user) => user.client_id),
    ordered.map((user) => user.email),
    ordered.map((user) => user.locale),
    ordered.map((user) => user.external_id),
    ordered.map((user) => user.created_at),
  ]);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return users.map((user) => byId.get(user.id));
}

/** One user (insertUsers with one); AppError conflict if its external id is taken. */
export async function insertUser(db: Queryable, user: Omit<UserRow, 'updated_at'>): Promise<UserRow> {
  const [row] = await insertUsers(db, [user]);
  if (!row) throw externalIdTaken();
  return row;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export async function findLiveUserForClient(
  db: Queryable,
  clientId: string,
  userId: string,
  options: { forUpdate?: boolean } = {},
): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>(options.forUpdate ? FIND_LIVE_USER_FOR_UPDATE : FIND_LIVE_USER, [clientId, userId]);
  return rows[0];
}

// Every request about a user reads it first (a poll of its session too): prepared once per connection.
const FIND_LIVE_USER: NamedStatement = {
  name: 'users.find-live',
  text: `SELECT ${USER_COLUMNS} FROM users WHERE client_id = $1 AND id = $2 AND deleted_at IS NULL`,
};
const FIND_LIVE_USER_FOR_UPDATE: NamedStatement = { name: 'users.find-live-for-update', text: `${FIND_LIVE_USER.text} FOR UPDATE` };

/** Users per bucket of the list (migration 0018); the head is settled into buckets once it holds twice as many. */
export const USER_LIST_BUCKET_SIZE = 1_000;

/**
 * Newest first; `search` matches the id (when a UUID) or the external id exactly. Without a search the page is
 * found through the list's buckets (usersPage); with one, the few matches are counted as they are read.
 */
export async function listLiveUsersForClient(
  db: Queryable,
  clientId: string,
  filter: { search?: { id: string | null; externalId: string } },
  page: { limit: number; offset: number },
  bucketSize: number = USER_LIST_BUCKET_SIZE,
): Promise<{ count: number; rows: UserRow[] }> {
  if (!filter.search) return usersPage(db, clientId, page, bucketSize);
  const params: unknown[] = [clientId, filter.search.externalId, filter.search.id];
  const where = 'client_id = $1 AND deleted_at IS NULL AND (external_id = $2 OR id = $3::uuid)';
  const { rows } = await db.query<UserRow & { total: number }>(
    `SELECT ${USER_COLUMNS}, count(*) OVER () AS total FROM users WHERE ${where}
      ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`,
    [...params, page.limit, page.offset],
  );
  if (rows.length > 0) return { count: rows[0]?.total ?? 0, rows: rows.map(withoutTotal) };
  if (page.offset === 0) return { count: 0, rows: [] };
  const { rows: counted } = await db.query<{ total: number }>(`SELECT count(*) AS total FROM users WHERE ${where}`, params);
  return { count: counted[0]?.total ?? 0, rows: [] };
}

const withoutTotal = <T extends { total: number }>({ total: _total, ...row }: T): Omit<T, 'total'> => row;

/**
 * The count is the buckets' sum plus the head (the live users at or above the newest bucket's hi: an index-only
 * range). The page starts in the head (an OFFSET below its size) or inside the bucket that holds position `offset`:
 * from that bucket's hi down the index, skipping fewer than one bucket. The newest hi is read first, so that the
 * planner sees the head's bound; the page is then one statement over the buckets up to that hi (a settle in between
 * only adds buckets above it), so the count and the page come from one snapshot. A head that grew past twice the
 * bucket size is settled afterwards, for the next page.
 */
async function usersPage(db: Queryable, clientId: string, page: { limit: number; offset: number }, bucketSize: number) {
  // As text: a Date would drop the microseconds of a key that did not come from this process's clock.
  // (Named apart from the column, which ORDER BY must mean: the text would sort as text.)
  const { rows: tops } = await db.query<{ hi_at: string; hi_id: string }>(
    'SELECT hi_created_at::text AS hi_at, hi_id FROM user_list_buckets WHERE client_id = $1 ORDER BY hi_created_at DESC, hi_id DESC LIMIT 1',
    [clientId],
  );
  const top = tops[0];
  // A page past the end has no keys: one row of nulls carrying the count.
  const { rows } = await db.query<(UserRow | { [K in keyof UserRow]: null }) & { total: number; head: number }>(
    `WITH head AS (
       SELECT count(*) AS n FROM users
        WHERE client_id = $1 AND deleted_at IS NULL AND (created_at, id) >= ($4::timestamptz, $5::uuid)
     ), buckets AS (
       SELECT hi_created_at, hi_id, live, sum(live) OVER (ORDER BY hi_created_at DESC, hi_id DESC) AS through
         FROM user_list_buckets WHERE client_id = $1 AND (hi_created_at, hi_id) <= ($4::timestamptz, $5::uuid)
     ), start AS (
       (SELECT hi_created_at, hi_id, $3::bigint - (SELECT n FROM head) - (through - live) AS skip FROM buckets
         WHERE $3::bigint >= (SELECT n FROM head) AND through > $3::bigint - (SELECT n FROM head)
         ORDER BY through LIMIT 1)
       UNION ALL
       SELECT 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', $3::bigint WHERE $3::bigint < (SELECT n FROM head)
     ), keys AS (
       SELECT created_at, id FROM users
        WHERE client_id = $1 AND deleted_at IS NULL
          AND (created_at, id) < (coalesce((SELECT hi_created_at FROM start), '-infinity'), (SELECT hi_id FROM start))
        ORDER BY created_at DESC, id DESC OFFSET (SELECT skip FROM start) LIMIT $2
     ), counted AS (
       SELECT (SELECT n FROM head) AS head, (SELECT n FROM head) + coalesce((SELECT max(through) FROM buckets), 0) AS total
     )
     SELECT ${PAGE_COLUMNS}, c.total, c.head
       FROM counted c LEFT JOIN (keys k JOIN users u ON u.id = k.id) ON true
      ORDER BY k.created_at DESC, k.id DESC`,
    [clientId, page.limit, page.offset, top?.hi_at ?? '-infinity', top?.hi_id ?? '00000000-0000-0000-0000-000000000000'],
  );
  const first = rows[0];
  if (first && first.head > 2 * bucketSize) await settleUserList(db, clientId, bucketSize);
  const users: UserRow[] = [];
  for (const { total: _total, head: _head, ...row } of rows) if (row.id !== null) users.push(row);
  return { count: first?.total ?? 0, rows: users };
}

/**
 * Cuts full buckets off the client's head (migration 0018). It waits at most `waitMs` for the client's sign-ups in
 * flight (new ones wait behind it meanwhile), then gives up until the next page: 0 buckets.
 */
export async function settleUserList(db: Queryable, clientId: string, bucketSize: number = USER_LIST_BUCKET_SIZE, waitMs = 50): Promise<number> {
  try {
    const { rows } = await db.query<{ made: number }>('SELECT settle_user_list_buckets($1, $2, $3) AS made', [clientId, bucketSize, waitMs]);
    return rows[0]?.made ?? 0;
  } catch (error) {
    if ((error as { code?: string }).code === '55P03') return 0; // lock_not_available
    throw error;
  }
}

export async function updateUser(
  db: Queryable,
  clientId: string,
  userId: string,
  changes: { email?: string | null; locale?: string; external_id?: string | null },
  at: Date,
): Promise<UserRow | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [clientId, userId, at];
  for (const [column, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  }
  try {
    const { rows } = await db.query<UserRow>(
      `UPDATE users SET ${[...sets, 'updated_at = $3'].join(', ')}
        WHERE client_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING ${USER_COLUMNS}`,
      params,
    );
    return rows[0];
  } catch (error) {
    if (isUniqueViolation(error, 'users_client_external_id_key')) throw externalIdTaken();
    throw error;
  }
}

/** The user as deleting it left it (for the change hooks and the user.deleted event), or undefined when there was no live user to delete. */
export async function softDeleteUser(
  db: Queryable,
  clientId: string,
  userId: string,
  at: Date,
): Promise<(TokenUserRow & { external_id: string | null; deleted_at: Date }) | undefined> {
  const { rows } = await db.query<TokenUserRow & { external_id: string | null; deleted_at: Date }>(
    `UPDATE users SET deleted_at = $3, updated_at = $3 WHERE client_id = $1 AND id = $2 AND deleted_at IS NULL
     RETURNING ${TOKEN_USER_COLUMNS}, external_id, deleted_at`,
    [clientId, userId, at],
  );
  return rows[0];
}

export async function findBillingDetails(db: Queryable, clientId: string, userId: string): Promise<BillingDetailsRow | undefined> {
  const { rows } = await db.query<BillingDetailsRow>(
    `SELECT account_type, first_name, last_name, company_name, vat_number, tax_id, line1, postal_code, city, country, updated_at
       FROM billing_details WHERE client_id = $1 AND user_id = $2`,
    [clientId, userId],
  );
  return rows[0];
}

export async function replaceBillingDetails(
  db: Queryable,
  clientId: string,
  userId: string,
  details: Omit<BillingDetailsRow, 'updated_at'>,
  at: Date,
): Promise<BillingDetailsRow> {
  const { rows } = await db.query<BillingDetailsRow>(
    `INSERT INTO billing_details (user_id, client_id, account_type, first_name, last_name, company_name, vat_number, tax_id, line1, postal_code, city, country, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (user_id) DO UPDATE SET
       account_type = EXCLUDED.account_type, first_name = EXCLUDED.first_name, last_name = EXCLUDED.last_name,
       company_name = EXCLUDED.company_name, vat_number = EXCLUDED.vat_number, tax_id = EXCLUDED.tax_id,
       line1 = EXCLUDED.line1, postal_code = EXCLUDED.postal_code, city = EXCLUDED.city, country = EXCLUDED.country,
       updated_at = EXCLUDED.updated_at
     WHERE billing_details.client_id = EXCLUDED.client_id
     RETURNING account_type, first_name, last_name, company_name, vat_number, tax_id, line1, postal_code, city, country, updated_at`,
    [
      userId,
      clientId,
      details.account_type,
      details.first_name,
      details.last_name,
      details.company_name,
      details.vat_number,
      details.tax_id,
      details.line1,
      details.postal_code,
      details.city,
      details.country,
      at,
    ],
  );
  return rows[0] as BillingDetailsRow;
}

/** A user as the OCPI Tokens module shows it to CPOs (every client's users: CPOs authorize across tenants). */
export interface TokenUserRow {
  id: string;
  locale: string;
  deleted: boolean;
  last_updated: Date;
}

const TOKEN_USER_COLUMNS = 'id, locale, deleted_at IS NOT NULL AS deleted, updated_at AS last_updated';

/** Users changed in [from, to), oldest change first, with the total count; for the OCPI Tokens sender interface. */
export async function listUsersForTokens(
  db: Queryable,
  filter: { from?: Date; to?: Date },
  page: { offset: number; limit: number },
): Promise<{ count: number; rows: TokenUserRow[] }> {
  const { rows } = await db.query<TokenUserRow & { total: number }>(
    `SELECT ${TOKEN_USER_COLUMNS}, count(*) OVER () AS total FROM users
      WHERE ($1::timestamptz IS NULL OR updated_at >= $1) AND ($2::timestamptz IS NULL OR updated_at < $2)
      ORDER BY updated_at, id OFFSET $3 LIMIT $4`,
    [filter.from ?? null, filter.to ?? null, page.offset, page.limit],
  );
  if (rows.length === 0 && page.offset > 0) {
    const { rows: counted } = await db.query<{ n: number }>(
      `SELECT count(*) AS n FROM users WHERE ($1::timestamptz IS NULL OR updated_at >= $1) AND ($2::timestamptz IS NULL OR updated_at < $2)`,
      [filter.from ?? null, filter.to ?? null],
    );
    return { count: counted[0]?.n ?? 0, rows: [] };
  }
  return { count: rows[0]?.total ?? 0, rows: rows.map(({ total: _total, ...row }) => row) };
}

export async function findUserForToken(db: Queryable, userId: string): Promise<TokenUserRow | undefined> {
  const { rows } = await db.query<TokenUserRow>(`SELECT ${TOKEN_USER_COLUMNS} FROM users WHERE id = $1`, [userId]);
  return rows[0];
}
