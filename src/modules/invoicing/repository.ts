// SQL of bills, debts, invoices, invoice numbers and the shared link secret.
import { randomBytes } from 'node:crypto';
import { oneOrAny, type Queryable } from '../../platform/db.ts';
import type { BillLine } from '../../pricing/price-cdr.ts';

export type { BillLine };

/**
 * priced -> settled -> invoiced; not_billed: nothing to pay; held: kept for the operator (a CDR in another currency
 * than the session's hold; nothing captured, no invoice) until released, to priced or waived (nothing charged).
 */
export type BillStep = 'priced' | 'settled' | 'invoiced' | 'not_billed' | 'held' | 'waived';

export interface BillRow {
  session_id: string;
  client_id: string;
  user_id: string;
  step: BillStep;
  currency: string;
  lines: BillLine[];
  net: number;
  vat: number;
  gross: number;
  cdr_total: string | null;
  engine_total: string;
  price_mismatch: boolean;
  price_source: 'engine' | 'cdr';
  captured: number;
  charged: number;
  /** Left uncollected: a remainder below the processor's minimum charge that no hold covered. */
  waived: number;
  charge_payment_intent_id: string | null;
  /** Why the bill was held for the operator, and since when (null: never held). */
  held_reason: string | null;
  held_at: Date | null;
  /** How the operator released a held bill (billed at the session's tariff, or waived), and when. */
  released_as: 'tariff' | 'waived' | null;
  released_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const BILL_COLUMNS = `session_id, client_id, user_id, step, currency, lines, net, vat, gross, cdr_total, engine_total, price_mismatch, price_source,
  captured, charged, waived, charge_payment_intent_id, held_reason, held_at, released_as, released_at, created_at, updated_at`;

export async function findBill(db: Queryable, sessionId: string, options: { forUpdate?: boolean } = {}): Promise<BillRow | undefined> {
  const { rows } = await db.query<BillRow>(`SELECT ${BILL_COLUMNS} FROM charging_bills WHERE session_id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`, [
    sessionId,
  ]);
  return rows[0];
}

/** Inserts the bill once; the stored one when it exists (a retried job prices again but keeps the first result). */
export async function insertBill(
  db: Queryable,
  bill: Omit<
    BillRow,
    'captured' | 'charged' | 'waived' | 'charge_payment_intent_id' | 'held_reason' | 'held_at' | 'released_as' | 'released_at' | 'updated_at'
  > & { held_reason?: string },
): Promise<BillRow> {
  await db.query(
    `INSERT INTO charging_bills (session_id, client_id, user_id, step, currency, lines, net, vat, gross, cdr_total, engine_total, price_mismatch,
       price_source, held_reason, held_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $15, CASE WHEN $15::text IS NULL THEN NULL ELSE $14::timestamptz END, $14, $14)
     ON CONFLICT (session_id) DO NOTHING`,
    [
      bill.session_id,
      bill.client_id,
      bill.user_id,
      bill.step,
      bill.currency,
      JSON.stringify(bill.lines),
      bill.net,
      bill.vat,
      bill.gross,
      bill.cdr_total,
      bill.engine_total,
      bill.price_mismatch,
      bill.price_source,
      bill.created_at,
      bill.held_reason ?? null,
    ],
  );
  return (await findBill(db, bill.session_id)) as BillRow;
}

/** A held bill released by the operator, billed at the session's tariff: priced anew (the bill job settles and invoices it). */
export async function releaseHeldBillPriced(
  db: Queryable,
  sessionId: string,
  priced: Pick<BillRow, 'step' | 'currency' | 'lines' | 'net' | 'vat' | 'gross' | 'engine_total'>,
  at: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE charging_bills SET step = $2, currency = $3, lines = $4, net = $5, vat = $6, gross = $7, engine_total = $8, cdr_total = NULL,
            price_mismatch = false, price_source = 'engine', released_as = 'tariff', released_at = $9, updated_at = $9
      WHERE session_id = $1 AND step = 'held'`,
    [sessionId, priced.step, priced.currency, JSON.stringify(priced.lines), priced.net, priced.vat, priced.gross, priced.engine_total, at],
  );
  return rowCount === 1;
}

/** A held bill waived by the operator: nothing is charged (the bill job releases the hold), no invoice. */
export async function releaseHeldBillWaived(db: Queryable, sessionId: string, currency: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE charging_bills SET step = 'waived', currency = $2, lines = '[]', net = 0, vat = 0, gross = 0, released_as = 'waived', released_at = $3,
            updated_at = $3
      WHERE session_id = $1 AND step = 'held'`,
    [sessionId, currency, at],
  );
  return rowCount === 1;
}

/** A held bill, with what the operator needs to decide (the session's hold, the CDR), for `bills held`. */
export interface HeldBill {
  session_id: string;
  client_id: string;
  user_id: string;
  held_at: Date;
  held_reason: string;
  cdr_currency: string;
  cdr_total: string | null;
  hold_currency: string;
  hold_amount: number;
  cdr: { country_code: string; party_id: string; id: string };
}

/** Every held bill, oldest first (the operator's view, across clients). */
export async function listHeldBills(db: Queryable): Promise<HeldBill[]> {
  const { rows } = await db.query<HeldBill>(
    `SELECT b.session_id, b.client_id, b.user_id, b.held_at, b.held_reason, b.currency AS cdr_currency, b.cdr_total,
            s.currency AS hold_currency, s.pre_authorization_amount AS hold_amount,
            json_build_object('country_code', s.cdr_country_code, 'party_id', s.cdr_party_id, 'id', s.cdr_id) AS cdr
       FROM charging_bills b JOIN charging_sessions s ON s.id = b.session_id
      WHERE b.step = 'held'
      ORDER BY b.held_at, b.session_id`,
  );
  return rows;
}

export async function settleBill(
  db: Queryable,
  sessionId: string,
  settled: { captured: number; charged: number; waived: number; charge_payment_intent_id: string | null },
  at: Date,
): Promise<void> {
  await db.query(
    `UPDATE charging_bills SET step = 'settled', captured = $2, charged = $3, waived = $4, charge_payment_intent_id = $5, updated_at = $6
      WHERE session_id = $1 AND step = 'priced'`,
    [sessionId, settled.captured, settled.charged, settled.waived, settled.charge_payment_intent_id, at],
  );
}

export async function markBillInvoiced(db: Queryable, sessionId: string, at: Date): Promise<void> {
  await db.query(`UPDATE charging_bills SET step = 'invoiced', updated_at = $2 WHERE session_id = $1 AND step = 'settled'`, [sessionId, at]);
}

/**
 * Which of these sessions' bills are finished (invoiced, nothing to bill, waived) or wait for the operator (held):
 * the bill job has nothing to do for them. Across clients: the reconcile job repairs every client's sessions at once.
 */
export async function sessionsWithFinishedBill(db: Queryable, sessionIds: readonly string[]): Promise<Set<string>> {
  if (sessionIds.length === 0) return new Set();
  const { rows } = await db.query<{ session_id: string }>(
    `SELECT session_id FROM charging_bills WHERE session_id = ANY($1) AND step IN ('invoiced', 'not_billed', 'held', 'waived')`,
    [sessionIds],
  );
  return new Set(rows.map((r) => r.session_id));
}

/** Bills of completed sessions, for the session view (not a held one: its cost is not known until the operator releases it). */
export async function billsOf(db: Queryable, clientId: string, sessionIds: readonly string[]): Promise<BillRow[]> {
  if (sessionIds.length === 0) return [];
  const sessions = oneOrAny('session_id', 2, sessionIds);
  const { rows } = await db.query<BillRow>(`SELECT ${BILL_COLUMNS} FROM charging_bills WHERE client_id = $1 AND ${sessions.condition} AND step <> 'held'`, [
    clientId,
    sessions.value,
  ]);
  return rows;
}

// ---------------------------------------------------------------------------
// Debts

export interface DebtRow {
  session_id: string;
  client_id: string;
  user_id: string;
  payment_method_id: string;
  payment_intent_id: string;
  client_secret: string;
  amount: number;
  currency: string;
  status: 'unpaid' | 'paid';
  created_at: Date;
  paid_at: Date | null;
}

const DEBT_COLUMNS = 'session_id, client_id, user_id, payment_method_id, payment_intent_id, client_secret, amount, currency, status, created_at, paid_at';

/** Inserts the session's debt; false when it has one already (nothing written). */
export async function insertDebt(db: Queryable, debt: Omit<DebtRow, 'status' | 'paid_at'>): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO charging_debts (session_id, client_id, user_id, payment_method_id, payment_intent_id, client_secret, amount, currency, status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'unpaid', $9) ON CONFLICT (session_id) DO NOTHING`,
    [
      debt.session_id,
      debt.client_id,
      debt.user_id,
      debt.payment_method_id,
      debt.payment_intent_id,
      debt.client_secret,
      debt.amount,
      debt.currency,
      debt.created_at,
    ],
  );
  return rowCount === 1;
}

export async function unpaidDebts(
  db: Queryable,
  clientId: string,
  userId: string,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: DebtRow[] }> {
  const [{ rows: counted }, { rows }] = await Promise.all([
    db.query<{ count: number }>(`SELECT count(*) AS count FROM charging_debts WHERE client_id = $1 AND user_id = $2 AND status = 'unpaid'`, [clientId, userId]),
    db.query<DebtRow>(
      `SELECT ${DEBT_COLUMNS} FROM charging_debts WHERE client_id = $1 AND user_id = $2 AND status = 'unpaid'
        ORDER BY created_at DESC, session_id DESC LIMIT $3 OFFSET $4`,
      [clientId, userId, page.limit, page.offset],
    ),
  ]);
  return { count: counted[0]?.count ?? 0, rows };
}

export async function hasUnpaidDebt(db: Queryable, clientId: string, userId: string, paymentMethodId?: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM charging_debts WHERE client_id = $1 AND user_id = $2 AND status = 'unpaid'${paymentMethodId ? ' AND payment_method_id = $3' : ''} LIMIT 1`,
    paymentMethodId ? [clientId, userId, paymentMethodId] : [clientId, userId],
  );
  return rows.length > 0;
}

/** Whether the user (of whichever client: user ids are unique) has an unpaid debt. */
export async function userHasUnpaidDebt(db: Queryable, userId: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM charging_debts WHERE user_id = $1 AND status = 'unpaid' LIMIT 1`, [userId]);
  return rows.length > 0;
}

/** The debt a payment intent pays (of whichever client: payment intent ids are unique). */
export async function findDebtByIntent(db: Queryable, paymentIntentId: string, options: { forUpdate?: boolean } = {}): Promise<DebtRow | undefined> {
  const { rows } = await db.query<DebtRow>(`SELECT ${DEBT_COLUMNS} FROM charging_debts WHERE payment_intent_id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`, [
    paymentIntentId,
  ]);
  return rows[0];
}

/** The debt a session left (paid or not), of this client. */
export async function findDebtOfSession(db: Queryable, clientId: string, sessionId: string): Promise<DebtRow | undefined> {
  const { rows } = await db.query<DebtRow>(`SELECT ${DEBT_COLUMNS} FROM charging_debts WHERE client_id = $1 AND session_id = $2`, [clientId, sessionId]);
  return rows[0];
}

export async function markDebtPaid(db: Queryable, sessionId: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE charging_debts SET status = 'paid', paid_at = $2 WHERE session_id = $1 AND status = 'unpaid'`, [sessionId, at]);
  return rowCount === 1;
}

// ---------------------------------------------------------------------------
// Invoices

export interface InvoiceRow {
  id: string;
  issuer: string;
  number: number;
  number_text: string;
  client_id: string;
  user_id: string;
  session_id: string;
  currency: string;
  net: number;
  vat: number;
  gross: number;
  refunded: boolean;
  document: unknown;
  issued_at: Date;
}

const INVOICE_COLUMNS = 'id, issuer, number, number_text, client_id, user_id, session_id, currency, net, vat, gross, refunded, document, issued_at';

/** The next number of an issuer; taken in the caller's transaction, so a rolled-back invoice leaves no gap. */
export async function nextInvoiceNumber(tx: Queryable, issuer: string): Promise<number> {
  const { rows } = await tx.query<{ last_number: number }>(
    `INSERT INTO invoice_counters (issuer, last_number) VALUES ($1, 1)
     ON CONFLICT (issuer) DO UPDATE SET last_number = invoice_counters.last_number + 1
     RETURNING last_number`,
    [issuer],
  );
  return (rows[0] as { last_number: number }).last_number;
}

export async function insertInvoice(tx: Queryable, invoice: InvoiceRow): Promise<void> {
  await tx.query(`INSERT INTO invoices (${INVOICE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, [
    invoice.id,
    invoice.issuer,
    invoice.number,
    invoice.number_text,
    invoice.client_id,
    invoice.user_id,
    invoice.session_id,
    invoice.currency,
    invoice.net,
    invoice.vat,
    invoice.gross,
    invoice.refunded,
    JSON.stringify(invoice.document),
    invoice.issued_at,
  ]);
}

export async function findInvoice(db: Queryable, id: string): Promise<InvoiceRow | undefined> {
  const { rows } = await db.query<InvoiceRow>(`SELECT ${INVOICE_COLUMNS} FROM invoices WHERE id = $1`, [id]);
  return rows[0];
}

export async function invoicesOfSessions(db: Queryable, clientId: string, sessionIds: readonly string[]): Promise<InvoiceRow[]> {
  if (sessionIds.length === 0) return [];
  const sessions = oneOrAny('session_id', 2, sessionIds);
  const { rows } = await db.query<InvoiceRow>(`SELECT ${INVOICE_COLUMNS} FROM invoices WHERE client_id = $1 AND ${sessions.condition}`, [
    clientId,
    sessions.value,
  ]);
  return rows;
}

export async function listInvoices(
  db: Queryable,
  clientId: string,
  userId: string,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: InvoiceRow[] }> {
  const [{ rows: counted }, { rows }] = await Promise.all([
    db.query<{ count: number }>('SELECT count(*) AS count FROM invoices WHERE client_id = $1 AND user_id = $2', [clientId, userId]),
    db.query<InvoiceRow>(
      `SELECT ${INVOICE_COLUMNS} FROM invoices WHERE client_id = $1 AND user_id = $2 ORDER BY issued_at DESC, number DESC LIMIT $3 OFFSET $4`,
      [clientId, userId, page.limit, page.offset],
    ),
  ]);
  return { count: counted[0]?.count ?? 0, rows };
}

/** A secret every process shares, made on first use. */
export async function serviceSecret(db: Queryable, name: string, at: Date): Promise<Buffer> {
  await db.query('INSERT INTO service_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [name, randomBytes(32), at]);
  const { rows } = await db.query<{ value: Buffer }>('SELECT value FROM service_secrets WHERE name = $1', [name]);
  return (rows[0] as { value: Buffer }).value;
}
