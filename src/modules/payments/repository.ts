// SQL of payments: customers, the payment-method mirror, holds and handled
// webhook events. Queries for a user's data take the client id (another
// client's rows are not found) and the processor account.
import type { NamedStatement, Queryable } from '../../platform/db.ts';

/** Whose payment data: one user of one client, at one processor account. */
export interface Owner {
  clientId: string;
  userId: string;
  account: string;
}

export interface CustomerRow {
  client_id: string;
  user_id: string;
  account: string;
  customer_id: string;
}

export interface PaymentMethodRow {
  id: string;
  client_id: string;
  user_id: string;
  customer_id: string;
  type: string;
  card_brand: string | null;
  card_last4: string | null;
  card_exp_month: number | null;
  card_exp_year: number | null;
  cardholder_name: string | null;
  paypal_email: string | null;
  is_default: boolean;
  created_at: Date;
}

const PM_COLUMNS =
  'id, client_id, user_id, customer_id, type, card_brand, card_last4, card_exp_month, card_exp_year, cardholder_name, paypal_email, is_default, created_at';

// --- customers ------------------------------------------------------------------

export async function findCustomer(db: Queryable, owner: Owner, options: { forUpdate?: boolean } = {}): Promise<CustomerRow | undefined> {
  const { rows } = await db.query<CustomerRow>(options.forUpdate ? FIND_CUSTOMER_FOR_UPDATE : FIND_CUSTOMER, [owner.clientId, owner.userId, owner.account]);
  return rows[0];
}

// The hot reads of the money path (a start, a poll of a session, a webhook) are prepared once per connection.
const FIND_CUSTOMER: NamedStatement = {
  name: 'payments.find-customer',
  text: 'SELECT client_id, user_id, account, customer_id FROM payment_customers WHERE client_id = $1 AND user_id = $2 AND account = $3',
};
const FIND_CUSTOMER_FOR_UPDATE: NamedStatement = { name: 'payments.find-customer-for-update', text: `${FIND_CUSTOMER.text} FOR UPDATE` };

/** The owner of a processor customer (webhooks arrive without a client). */
export async function findCustomerOwner(db: Queryable, account: string, customerId: string): Promise<CustomerRow | undefined> {
  const { rows } = await db.query<CustomerRow>(
    'SELECT client_id, user_id, account, customer_id FROM payment_customers WHERE account = $1 AND customer_id = $2',
    [account, customerId],
  );
  return rows[0];
}

export async function insertCustomer(db: Queryable, owner: Owner, customerId: string, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO payment_customers (client_id, user_id, account, customer_id, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (user_id, account) DO NOTHING`,
    [owner.clientId, owner.userId, owner.account, customerId, at],
  );
}

// --- payment methods ------------------------------------------------------------

/** Newest first. */
export async function listPaymentMethods(
  db: Queryable,
  owner: Owner,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: PaymentMethodRow[] }> {
  const params = [owner.clientId, owner.userId, owner.account];
  const where = 'client_id = $1 AND user_id = $2 AND account = $3';
  const { rows } = await db.query<PaymentMethodRow & { total: number }>(
    `SELECT ${PM_COLUMNS}, count(*) OVER () AS total FROM payment_methods WHERE ${where}
      ORDER BY created_at DESC, seq DESC LIMIT $4 OFFSET $5`,
    [...params, page.limit, page.offset],
  );
  if (rows.length > 0) return { count: rows[0]?.total ?? 0, rows };
  if (page.offset === 0) return { count: 0, rows: [] };
  const { rows: counted } = await db.query<{ total: number }>(`SELECT count(*) AS total FROM payment_methods WHERE ${where}`, params);
  return { count: counted[0]?.total ?? 0, rows: [] };
}

export async function allPaymentMethods(db: Queryable, owner: Owner): Promise<PaymentMethodRow[]> {
  const { rows } = await db.query<PaymentMethodRow>(
    `SELECT ${PM_COLUMNS} FROM payment_methods WHERE client_id = $1 AND user_id = $2 AND account = $3 ORDER BY created_at DESC, seq DESC`,
    [owner.clientId, owner.userId, owner.account],
  );
  return rows;
}

export async function findPaymentMethod(db: Queryable, owner: Owner, id: string): Promise<PaymentMethodRow | undefined> {
  const { rows } = await db.query<PaymentMethodRow>(FIND_PAYMENT_METHOD, [owner.clientId, owner.userId, owner.account, id]);
  return rows[0];
}

const FIND_PAYMENT_METHOD: NamedStatement = {
  name: 'payments.find-method',
  text: `SELECT ${PM_COLUMNS} FROM payment_methods WHERE client_id = $1 AND user_id = $2 AND account = $3 AND id = $4`,
};

/** Whoever's it is (webhooks). */
export async function findPaymentMethodById(db: Queryable, account: string, id: string): Promise<PaymentMethodRow | undefined> {
  const { rows } = await db.query<PaymentMethodRow>(`SELECT ${PM_COLUMNS} FROM payment_methods WHERE account = $1 AND id = $2`, [account, id]);
  return rows[0];
}

export interface PaymentMethodDetails {
  id: string;
  customerId: string;
  type: string;
  cardBrand: string | null;
  cardLast4: string | null;
  cardExpMonth: number | null;
  cardExpYear: number | null;
  cardholderName: string | null;
  paypalEmail: string | null;
  createdAt: Date;
}

/** Inserts or refreshes a mirrored method; a refresh that changes nothing writes nothing. True when the method is new to the mirror. */
export async function upsertPaymentMethod(db: Queryable, owner: Owner, pm: PaymentMethodDetails, at: Date): Promise<boolean> {
  const { rows } = await db.query<{ inserted: boolean }>(
    `INSERT INTO payment_methods (id, account, client_id, user_id, customer_id, type, card_brand, card_last4, card_exp_month, card_exp_year,
                                  cardholder_name, paypal_email, created_at, mirrored_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     ON CONFLICT (account, id) DO UPDATE SET
       type = EXCLUDED.type, card_brand = EXCLUDED.card_brand, card_last4 = EXCLUDED.card_last4,
       card_exp_month = EXCLUDED.card_exp_month, card_exp_year = EXCLUDED.card_exp_year,
       cardholder_name = EXCLUDED.cardholder_name, paypal_email = EXCLUDED.paypal_email, mirrored_at = EXCLUDED.mirrored_at
     WHERE payment_methods.client_id = EXCLUDED.client_id AND payment_methods.user_id = EXCLUDED.user_id
       AND (payment_methods.type, payment_methods.card_brand, payment_methods.card_last4, payment_methods.card_exp_month,
            payment_methods.card_exp_year, payment_methods.cardholder_name, payment_methods.paypal_email)
           IS DISTINCT FROM (EXCLUDED.type, EXCLUDED.card_brand, EXCLUDED.card_last4, EXCLUDED.card_exp_month,
            EXCLUDED.card_exp_year, EXCLUDED.cardholder_name, EXCLUDED.paypal_email)
     RETURNING xmax = 0 AS inserted`,
    [
      pm.id,
      owner.account,
      owner.clientId,
      owner.userId,
      pm.customerId,
      pm.type,
      pm.cardBrand,
      pm.cardLast4,
      pm.cardExpMonth,
      pm.cardExpYear,
      pm.cardholderName,
      pm.paypalEmail,
      pm.createdAt,
      at,
    ],
  );
  return rows[0]?.inserted === true;
}

/** Removes the method from the mirror: the row as it was, or undefined when there was none. */
export async function deletePaymentMethod(db: Queryable, owner: Owner, id: string): Promise<PaymentMethodRow | undefined> {
  const { rows } = await db.query<PaymentMethodRow>(
    `DELETE FROM payment_methods WHERE client_id = $1 AND user_id = $2 AND account = $3 AND id = $4 RETURNING ${PM_COLUMNS}`,
    [owner.clientId, owner.userId, owner.account, id],
  );
  return rows[0];
}

/** Makes `id` the owner's only default (two statements: the one-default index is checked row by row). */
export async function setDefaultPaymentMethod(db: Queryable, owner: Owner, id: string): Promise<void> {
  const params = [owner.clientId, owner.userId, owner.account, id];
  await db.query('UPDATE payment_methods SET is_default = false WHERE client_id = $1 AND user_id = $2 AND account = $3 AND is_default AND id <> $4', params);
  await db.query('UPDATE payment_methods SET is_default = true WHERE client_id = $1 AND user_id = $2 AND account = $3 AND id = $4 AND NOT is_default', params);
}

/** The owner has no default any more if `id` was it (a default the processor could not be told of is taken back). */
export async function unsetDefaultPaymentMethod(db: Queryable, owner: Owner, id: string): Promise<void> {
  await db.query('UPDATE payment_methods SET is_default = false WHERE client_id = $1 AND user_id = $2 AND account = $3 AND id = $4 AND is_default', [
    owner.clientId,
    owner.userId,
    owner.account,
    id,
  ]);
}

// --- holds ------------------------------------------------------------------------

export type HoldStatus = 'pending' | 'authorized' | 'requires_action' | 'processing' | 'declined' | 'captured' | 'released' | 'expired' | 'failed';

/** A hold in these states still uses its payment method, and may still change. */
export const ACTIVE_HOLD_STATUSES: readonly HoldStatus[] = ['pending', 'authorized', 'requires_action', 'processing'];

/** Final: a hold in one of these states never changes again (updateHold refuses). `failed`: never placed at the processor. */
export const FINAL_HOLD_STATUSES: readonly HoldStatus[] = ['declined', 'captured', 'released', 'expired', 'failed'];

export interface HoldRow {
  id: string;
  account: string;
  client_id: string;
  user_id: string;
  payment_method_id: string;
  reference: string;
  idempotency_key: string;
  payment_intent_id: string | null;
  amount: number;
  currency: string;
  amount_capturable: number;
  amount_captured: number;
  status: HoldStatus;
  client_secret: string | null;
  failure_code: string | null;
  failure_message: string | null;
  capture_before: Date | null;
  created_at: Date;
  updated_at: Date;
}

const HOLD_COLUMNS = `id, account, client_id, user_id, payment_method_id, reference, idempotency_key, payment_intent_id, amount, currency,
  amount_capturable, amount_captured, status, client_secret, failure_code, failure_message, capture_before, created_at, updated_at`;

/** Records a new pending hold; undefined when its reference (or idempotency key) is already taken, e.g. by a concurrent first call. */
export async function insertHold(
  db: Queryable,
  hold: Pick<
    HoldRow,
    'id' | 'account' | 'client_id' | 'user_id' | 'payment_method_id' | 'reference' | 'idempotency_key' | 'amount' | 'currency' | 'created_at'
  >,
): Promise<HoldRow | undefined> {
  const { rows } = await db.query<HoldRow>(
    `INSERT INTO payment_holds (id, account, client_id, user_id, payment_method_id, reference, idempotency_key, amount, currency, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $10)
     ON CONFLICT DO NOTHING RETURNING ${HOLD_COLUMNS}`,
    [
      hold.id,
      hold.account,
      hold.client_id,
      hold.user_id,
      hold.payment_method_id,
      hold.reference,
      hold.idempotency_key,
      hold.amount,
      hold.currency,
      hold.created_at,
    ],
  );
  return rows[0];
}

/** The hold for a reference (references are unique per account, whichever client's). */
export async function findHoldByReference(db: Queryable, account: string, reference: string) {
  const { rows } = await db.query<HoldRow>(FIND_HOLD_BY_REFERENCE, [account, reference]);
  return rows[0];
}

/** Several sessions' holds at once (a list of sessions). */
const FIND_HOLDS_BY_REFERENCES: NamedStatement = {
  name: 'payments.find-holds-by-references',
  text: `SELECT ${HOLD_COLUMNS} FROM payment_holds WHERE account = $1 AND reference = ANY($2)`,
};
const FIND_HOLD_BY_REFERENCE: NamedStatement = {
  name: 'payments.find-hold-by-reference',
  text: `SELECT ${HOLD_COLUMNS} FROM payment_holds WHERE account = $1 AND reference = $2`,
};

/** The holds of these references (any order); missing references are absent. */
export async function findHoldsByReferences(db: Queryable, account: string, references: readonly string[]): Promise<HoldRow[]> {
  if (references.length === 0) return [];
  // One reference (every poll of a session) by its own statement: PostgreSQL plans `= ANY($2)` anew on each run.
  const { rows } =
    references.length === 1
      ? await db.query<HoldRow>(FIND_HOLD_BY_REFERENCE, [account, references[0]])
      : await db.query<HoldRow>(FIND_HOLDS_BY_REFERENCES, [account, references]);
  return rows;
}

export async function findHoldByIntent(db: Queryable, account: string, paymentIntentId: string) {
  const { rows } = await db.query<HoldRow>(`SELECT ${HOLD_COLUMNS} FROM payment_holds WHERE account = $1 AND payment_intent_id = $2`, [
    account,
    paymentIntentId,
  ]);
  return rows[0];
}

/** The hold as it now stands. */
export async function findHold(db: Queryable, id: string): Promise<HoldRow | undefined> {
  const { rows } = await db.query<HoldRow>(`SELECT ${HOLD_COLUMNS} FROM payment_holds WHERE id = $1`, [id]);
  return rows[0];
}

/** Holds still pending (the processor's answer never recorded) that were made before `before`, oldest first. */
export async function pendingHolds(db: Queryable, account: string, before: Date, limit: number): Promise<HoldRow[]> {
  const { rows } = await db.query<HoldRow>(
    `SELECT ${HOLD_COLUMNS} FROM payment_holds WHERE account = $1 AND status = 'pending' AND created_at < $2 ORDER BY created_at LIMIT $3`,
    [account, before, limit],
  );
  return rows;
}

export type HoldChanges = Partial<
  Pick<
    HoldRow,
    'payment_intent_id' | 'amount_capturable' | 'amount_captured' | 'status' | 'client_secret' | 'failure_code' | 'failure_message' | 'capture_before'
  >
>;

/**
 * The order a hold moves in: a state is only ever written over an earlier (or
 * the same) one, so a processor read that arrives late, after a newer state
 * was recorded, changes nothing. The final states are last.
 */
const HOLD_PROGRESS: Record<HoldStatus, number> = {
  pending: 0,
  requires_action: 1,
  processing: 2,
  authorized: 3,
  declined: 4,
  captured: 4,
  released: 4,
  expired: 4,
  failed: 4,
};

/** The states a hold may move to `status` from: the active ones not past it. */
export function statesUpTo(status: HoldStatus): HoldStatus[] {
  return ACTIVE_HOLD_STATUSES.filter((s) => HOLD_PROGRESS[s] <= HOLD_PROGRESS[status]);
}

/**
 * Applies `changes` if the hold is in one of the `from` states (by default
 * any that is not final: a final state is never left) and, with
 * `paymentIntentId`, if it has no payment intent recorded or that one;
 * undefined when it does not, and nothing is written.
 */
export async function updateHold(
  db: Queryable,
  id: string,
  changes: HoldChanges,
  at: Date,
  from: readonly HoldStatus[] = ACTIVE_HOLD_STATUSES,
  paymentIntentId?: string,
): Promise<HoldRow | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [id, at, from, FINAL_HOLD_STATUSES, paymentIntentId ?? null];
  for (const [column, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  }
  const { rows } = await db.query<HoldRow>(
    `UPDATE payment_holds SET ${[...sets, 'updated_at = $2'].join(', ')}
      WHERE id = $1 AND status = ANY($3) AND NOT status = ANY($4)
        AND ($5::text IS NULL OR payment_intent_id IS NULL OR payment_intent_id = $5) RETURNING ${HOLD_COLUMNS}`,
    params,
  );
  return rows[0];
}

export async function countActiveHolds(db: Queryable, owner: Owner, paymentMethodId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM payment_holds
      WHERE client_id = $1 AND user_id = $2 AND account = $3 AND payment_method_id = $4 AND status = ANY($5)`,
    [owner.clientId, owner.userId, owner.account, paymentMethodId, ACTIVE_HOLD_STATUSES],
  );
  return rows[0]?.n ?? 0;
}

// --- claims -------------------------------------------------------------------------

export interface ClaimRequest {
  key: string;
  token: string;
  purpose: string;
  leaseMs: number;
}

/** Takes the claim unless someone else holds it (a lapsed one is taken over); true when taken. */
export async function takeClaim(db: Queryable, claim: ClaimRequest): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO payment_claims (key, token, purpose, expires_at) VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')
     ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, purpose = EXCLUDED.purpose, expires_at = EXCLUDED.expires_at
     WHERE payment_claims.expires_at < clock_timestamp()`,
    [claim.key, claim.token, claim.purpose, claim.leaseMs],
  );
  return rowCount === 1;
}

/**
 * True when the claim is still the token's, locked until `tx` ends (so it
 * cannot be taken over before what is written under it commits).
 */
export async function stillClaimed(tx: Queryable, key: string, token: string): Promise<boolean> {
  const { rows } = await tx.query('SELECT 1 FROM payment_claims WHERE key = $1 AND token = $2 FOR UPDATE', [key, token]);
  return rows.length === 1;
}

/** Whether someone holds `key` for `purpose` (and has not let it lapse). */
export async function claimedFor(db: Queryable, key: string, purpose: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM payment_claims WHERE key = $1 AND purpose = $2 AND expires_at >= clock_timestamp()', [key, purpose]);
  return rows.length === 1;
}

export async function dropClaim(db: Queryable, key: string, token: string): Promise<void> {
  await db.query('DELETE FROM payment_claims WHERE key = $1 AND token = $2', [key, token]);
}

/** Forgets claims that lapsed over `ms` ago (their holders died and nobody needed them since). */
export async function purgeLapsedClaims(db: Queryable, ms: number): Promise<void> {
  await db.query("DELETE FROM payment_claims WHERE expires_at < clock_timestamp() - $1 * interval '1 millisecond'", [ms]);
}

// --- webhook events -----------------------------------------------------------------

const WEBHOOK_EVENT_HANDLED: NamedStatement = {
  name: 'payments.webhook-event-handled',
  text: 'SELECT 1 FROM payment_webhook_events WHERE account = $1 AND event_id = $2',
};

export async function webhookEventHandled(db: Queryable, account: string, eventId: string): Promise<boolean> {
  const { rows } = await db.query(WEBHOOK_EVENT_HANDLED, [account, eventId]);
  return rows.length === 1;
}

/** Records an event as handled; false when it already was (a redelivery). */
export async function recordWebhookEvent(db: Queryable, account: string, eventId: string, type: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO payment_webhook_events (account, event_id, type, received_at) VALUES ($1, $2, $3, $4) ON CONFLICT (account, event_id) DO NOTHING`,
    [account, eventId, type, at],
  );
  return rowCount === 1;
}

/** Forgets handled events older than `before` (the processor stops redelivering after three days). */
export async function purgeWebhookEvents(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM payment_webhook_events WHERE received_at < $1', [before]);
  return rowCount ?? 0;
}
