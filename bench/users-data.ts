// Data of the users benchmark (bench/users.ts): N users of one client and what users have (payment methods, charging
// sessions, bills, invoices, debts), written through the real schema (its constraints, indexes and triggers) with
// generate_series in chunks, then VACUUM (ANALYZE). A few users get a real processor customer and card through the
// API and the Stripe sandbox, so that their payment-method list has something to sync.
//
// Per user number g (1..N): created 30 s apart, newest last; every 10th has an external id; every 100th (g % 100 = 7)
// is soft-deleted; even g have a processor customer and one card in the mirror (bulk rows: never listed, their list
// would sync with a processor that does not know them); odd g have a completed session (billed and invoiced) and a
// failed one; g % 50 = 1 also owe a debt. One heavy user (g = 3) has HEAVY_SESSIONS more sessions, half invoiced.
import type { Database } from '../src/platform/db.ts';

export interface PerUserData {
  liveUsers: number;
  /** Users with sessions and invoices (odd g), spread over the table. */
  sampleUsers: string[];
  externalIds: string[];
  /** Users with a customer and a card at the Stripe sandbox (made through the API). */
  processorUsers: string[];
  debtors: string[];
  heavyUser: string;
  heavySessions: number;
  heavyInvoices: number;
}

const CHUNK = 100_000;
const HEAVY_SESSIONS = 2_000;
const SAMPLE = 200;

const STATION_INFO = {
  station_name: 'Bench Station',
  station_address: 'Hauptstraße 1, 10115 Berlin',
  country: 'DEU',
  station_speed: 'fast',
  connector_standard: 'IEC_62196_T2_COMBO',
  connector_power: 50,
  support_phone: null,
  latitude: '52.520000',
  longitude: '13.405000',
};
const PRICES = {
  kwh_price: '0.59',
  time_price: null,
  session_fee: null,
  blocking_fee: null,
  starting_fee: null,
  grace_period_minutes: null,
  blocking_cap: null,
  currency: 'EUR',
};

/** The user's id for number g: deterministic, so the per-user rows can name it without a join. */
const userId = (g: string) => `md5('bench-user-' || ${g})::uuid`;

async function chunked(db: Database, total: number, what: string, log: (m: string) => void, statement: string, params: unknown[]) {
  const started = performance.now();
  for (let from = 1; from <= total; from += CHUNK) {
    await db.query(statement, [...params, from, Math.min(total, from + CHUNK - 1)]);
  }
  log(`  ${what}: ${total.toLocaleString('en')} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function loadRows(db: Database, clientId: string, users: number, log: (m: string) => void): Promise<void> {
  const base = new Date(Date.now() - users * 30_000 - 60_000).toISOString();
  await chunked(
    db,
    users,
    'users',
    log,
    `INSERT INTO users (id, client_id, email, locale, external_id, created_at, updated_at, deleted_at)
     SELECT ${userId('g')}, $1, 'user' || g || '@example.com', CASE WHEN g % 5 = 0 THEN 'de' ELSE 'en' END,
            CASE WHEN g % 10 = 0 THEN 'ext-' || g END, at, at, CASE WHEN g % 100 = 7 THEN at + interval '1 day' END
       FROM generate_series($3::int, $4::int) g, LATERAL (SELECT $2::timestamptz + g * interval '30 seconds' AS at) t`,
    [clientId, base],
  );
  await chunked(
    db,
    users,
    'payment customers and cards (even users)',
    log,
    `WITH c AS (
       INSERT INTO payment_customers (client_id, user_id, account, customer_id, created_at)
       SELECT $1, ${userId('g')}, 'stripe_sandbox', 'cus_bench' || g, $2::timestamptz + g * interval '30 seconds'
         FROM generate_series($3::int, $4::int) g WHERE g % 2 = 0
       RETURNING user_id, customer_id, created_at)
     INSERT INTO payment_methods (id, account, client_id, user_id, customer_id, type, card_brand, card_last4, card_exp_month, card_exp_year,
                                  is_default, created_at, mirrored_at)
     SELECT 'pm_bench' || substr(customer_id, 10), 'stripe_sandbox', $1, user_id, customer_id, 'card', 'visa', '4242', 12, 2030, true,
            created_at, created_at
       FROM c`,
    [clientId, base],
  );
  await loadSessions(db, clientId, users, base, log);
}

async function loadSessions(db: Database, clientId: string, users: number, base: string, log: (m: string) => void): Promise<void> {
  // Two sessions per odd user; s = 2g (completed) and 2g + 1 (failed); the heavy user's extra ones take s > 2 * users + 1.
  const sessionRows = (numbers: string, user: string) =>
    `INSERT INTO charging_sessions (id, client_id, user_id, payment_method_id, evse_id, station_id, country_code, party_id, location_id, evse_uid,
        status, start_step, failure_reason, hold_reference, pre_authorization_amount, currency, tariff, tariff_is_fallback, time_zone, station_info,
        is_partner, user_facing_session_prices, start_time, end_time, consumed_energy, estimated_cost, created_at, updated_at)
     SELECT md5('bench-session-' || s)::uuid, $1, ${userId(user)}, 'pm_bench', 'DE*BEN*E0001', 'LOC0001', 'DE', 'BEN', 'LOC0001', 'EVSE0001',
            CASE WHEN s % 2 = 0 THEN 'completed' ELSE 'failed' END, 'ended', CASE WHEN s % 2 = 1 THEN 'charging_provider_error' END,
            'session:' || md5('bench-session-' || s)::uuid, 5000, 'EUR', '{}', true, 'Europe/Berlin', $3::jsonb, false, $4::jsonb,
            at, at + interval '40 minutes', CASE WHEN s % 2 = 0 THEN 21.5 ELSE 0 END, CASE WHEN s % 2 = 0 THEN 1269 END, at, at
       FROM ${numbers}, LATERAL (SELECT $2::timestamptz + s * interval '15 seconds' AS at) t`;
  const json = [JSON.stringify(STATION_INFO), JSON.stringify(PRICES)];
  await chunked(
    db,
    users,
    'charging sessions (odd users, 2 each)',
    log,
    `${sessionRows('generate_series($5::int, $6::int) g, LATERAL (VALUES (2 * g), (2 * g + 1)) v(s)', 'g')} WHERE g % 2 = 1`,
    [clientId, base, ...json],
  );
  await db.query(sessionRows(`generate_series($5::int, $6::int) s`, '3'), [clientId, base, ...json, 2 * users + 2, 2 * users + 1 + HEAVY_SESSIONS]);
  // Bills and invoices of the completed sessions (s even), numbered by s.
  const billed = (numbers: string, user: string) =>
    `WITH done AS (
       SELECT md5('bench-session-' || s)::uuid AS id, ${userId(user)} AS user_id, $2::timestamptz + s * interval '15 seconds' + interval '40 minutes' AS at, s
         FROM ${numbers}),
     b AS (
       INSERT INTO charging_bills (session_id, client_id, user_id, step, currency, lines, net, vat, gross, engine_total, price_mismatch, price_source,
                                   captured, created_at, updated_at)
       SELECT id, $1, user_id, 'invoiced', 'EUR', $3::jsonb, 1066, 203, 1269, '12.69', false, 'engine', 1269, at, at FROM done)
     INSERT INTO invoices (id, issuer, number, number_text, client_id, user_id, session_id, currency, net, vat, gross, document, issued_at)
     SELECT md5('bench-invoice-' || s)::uuid, 'bench', s, 'BENCH-' || s, $1, user_id, id, 'EUR', 1066, 203, 1269, '{}', at FROM done`;
  const lines = JSON.stringify([
    {
      component: 'energy',
      description: 'Energy',
      quantity: '21.500',
      unit: 'kWh',
      unit_price: '0.59',
      net: '10.66',
      vat_rate: '19',
      vat: '2.03',
      gross: '12.69',
    },
  ]);
  await chunked(
    db,
    users,
    'bills and invoices (completed sessions)',
    log,
    billed(`generate_series($4::int, $5::int) g, LATERAL (SELECT 2 * g AS s) v WHERE g % 2 = 1`, 'g'),
    [clientId, base, lines],
  );
  await db.query(billed(`generate_series($4::int, $5::int) s WHERE s % 2 = 0`, '3'), [clientId, base, lines, 2 * users + 2, 2 * users + 1 + HEAVY_SESSIONS]);
  await chunked(
    db,
    users,
    'debts (g % 50 = 1)',
    log,
    `INSERT INTO charging_debts (session_id, client_id, user_id, payment_method_id, payment_intent_id, client_secret, amount, currency, status, created_at)
     SELECT md5('bench-session-' || (2 * g))::uuid, $1, ${userId('g')}, 'pm_bench', 'pi_bench' || g, 'pi_bench' || g || '_secret', 1269, 'EUR', 'unpaid', now()
       FROM generate_series($2::int, $3::int) g WHERE g % 50 = 1`,
    [clientId],
  );
}

/** Users with a customer and a card at the Stripe sandbox, made as a client app makes them (setup intent, confirm). */
async function processorUsers(baseUrl: string, token: string, count: number): Promise<string[]> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const user = (await (await fetch(`${baseUrl}/api/v1/users/`, { method: 'POST', headers, body: JSON.stringify({ locale: 'en' }) })).json()) as {
      id: string;
    };
    const intent = (await (await fetch(`${baseUrl}/api/v1/users/${user.id}/setup-intents/`, { headers })).json()) as { id: string; client_secret: string };
    const confirmed = await fetch(`${baseUrl}/sandbox/setup_intents/${intent.id}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_secret: intent.client_secret, card_number: '4242424242424242' }),
    });
    if (confirmed.status !== 200) throw new Error(`sandbox confirm: ${confirmed.status} ${await confirmed.text()}`);
    ids.push(user.id);
  }
  return ids;
}

export async function loadUsers(options: {
  db: Database;
  baseUrl: string;
  token: string;
  clientId: string;
  users: number;
  log: (m: string) => void;
}): Promise<PerUserData> {
  const { db, clientId, users, log } = options;
  log(`loading ${users.toLocaleString('en')} users of one client and their rows`);
  const started = performance.now();
  await loadRows(db, clientId, users, log);
  const processor = await processorUsers(options.baseUrl, options.token, 50);
  const vacuum = performance.now();
  await db.query('VACUUM (ANALYZE) users, payment_customers, payment_methods, charging_sessions, charging_bills, invoices, charging_debts');
  log(`  VACUUM (ANALYZE) in ${((performance.now() - vacuum) / 1000).toFixed(1)} s; all loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const pick = async (where: string) => {
    const { rows } = await db.query<{ v: string }>(
      `SELECT ${where} AS v FROM generate_series(1, $1::int) i, LATERAL (SELECT (i - 1) * $2::int / $1::int + 1 AS g) x`,
      [SAMPLE, users],
    );
    return rows.map((row) => row.v);
  };
  const { rows: live } = await db.query<{ n: number }>('SELECT count(*) AS n FROM users WHERE client_id = $1 AND deleted_at IS NULL', [clientId]);
  return {
    liveUsers: live[0]?.n ?? 0,
    // Odd, and not soft-deleted (g % 100 = 7 are): g = 2k + 1 with g % 100 <> 7.
    sampleUsers: await pick(`${userId('(CASE WHEN (g | 1) % 100 = 7 THEN (g | 1) + 2 ELSE g | 1 END)')}::text`),
    externalIds: await pick(`'ext-' || greatest(10, g / 10 * 10)`),
    processorUsers: processor,
    debtors: await pick(`${userId('(greatest(1, g / 50 * 50 - 49))')}::text`),
    heavyUser: (await pick(userId('3'))).slice(0, 1)[0] as string,
    heavySessions: HEAVY_SESSIONS + 2,
    heavyInvoices: HEAVY_SESSIONS / 2 + 1,
  };
}
