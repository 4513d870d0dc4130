// The reads a session's poll runs keep one generic plan on a connection instead of being planned on every run
// (issue 17's --statements: planning was 21% of PostgreSQL's statement time on the charging path). PostgreSQL plans a
// prepared statement anew for its first five runs, then keeps a generic plan unless it looks costlier than the custom
// ones: it always does for `= ANY($n)` (the array's length is unknown), so one value goes by `= $n` (oneOrAny).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { billsOf, invoicesOfSessions } from '../src/modules/invoicing/repository.ts';
import { findHoldsByReferences } from '../src/modules/payments/repository.ts';
import { createDatabase, type Database, type Queryable } from '../src/platform/db.ts';
import { createTestDatabase } from './helpers.ts';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let one: Database;

before(async () => {
  database = await createTestDatabase();
  one = createDatabase(database.url, { max: 1 });
  // Tables with rows and statistics, as in service: on empty ones PostgreSQL may keep even `= ANY`'s generic plan.
  const client = randomUUID();
  await database.db.query(`INSERT INTO api_clients (id, name, created_at) VALUES ($1, 'plans', now())`, [client]);
  await database.db.query(
    `INSERT INTO payment_holds (id, account, client_id, user_id, payment_method_id, reference, idempotency_key, amount, currency, status, created_at, updated_at)
     SELECT gen_random_uuid(), 'acct_test', $1, gen_random_uuid(), 'pm_' || n, 'ref_' || n, 'key_' || n, 500, 'eur', 'captured', now(), now()
       FROM generate_series(1, 5000) AS n`,
    [client],
  );
  await database.db.transaction(async (tx) => {
    await tx.query('SET LOCAL session_replication_role = replica'); // invoices without their sessions (no foreign key check)
    await tx.query(
      `INSERT INTO invoices (id, issuer, number, number_text, client_id, user_id, session_id, currency, net, vat, gross, document, issued_at)
       SELECT gen_random_uuid(), 'CA', n, 'CA-' || n, $1, gen_random_uuid(), gen_random_uuid(), 'EUR', 100, 19, 119, '{}', now()
         FROM generate_series(1, 5000) AS n`,
      [client],
    );
    await tx.query(
      `INSERT INTO charging_bills (session_id, client_id, user_id, step, currency, lines, net, vat, gross, engine_total, price_mismatch, price_source, created_at, updated_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'invoiced', 'EUR', '[]', 100, 19, 119, '1.19', false, 'engine', now(), now()
         FROM generate_series(1, 5000)`,
      [client],
    );
  });
  await database.db.query('ANALYZE payment_holds, invoices, charging_bills');
});
after(async () => {
  await one.close();
  await database.drop();
});

/** How many times PostgreSQL planned the statements `read` sends, over `runs` runs on one connection. */
async function customPlans(
  read: (q: Queryable) => Promise<unknown>,
  table: string,
  on: Database = one,
  runs = 12,
): Promise<{ statement: string; custom: number; generic: number }[]> {
  for (let i = 0; i < runs; i++) await read(on);
  const { rows } = await on.query<{ statement: string; custom: string; generic: string }>(
    `SELECT statement, custom_plans AS custom, generic_plans AS generic FROM pg_prepared_statements WHERE statement LIKE $1`,
    [`%FROM ${table} %`],
  );
  return rows.map((row) => ({ statement: row.statement, custom: Number(row.custom), generic: Number(row.generic) }));
}

describe('the reads of a session poll keep a generic plan', () => {
  test('the premise, on these tables: a read by `= ANY($n)` is planned anew on every run', async () => {
    const control = createDatabase(database.url, { max: 1 });
    try {
      const plans = await customPlans((q) => findHoldsByReferences(q, 'acct_test', [randomUUID(), randomUUID()]), 'payment_holds', control);
      assert.equal(plans.length, 1, JSON.stringify(plans));
      assert.match(plans[0]?.statement ?? '', /= ANY/);
      assert.ok((plans[0]?.custom ?? 0) >= 12, `custom plans: ${JSON.stringify(plans)}`);
    } finally {
      await control.close();
    }
  });

  for (const [name, table, read] of [
    ['the hold of one reference', 'payment_holds', (q: Queryable) => findHoldsByReferences(q, 'acct_test', [randomUUID()])],
    ['the bill of one session', 'charging_bills', (q: Queryable) => billsOf(q, randomUUID(), [randomUUID()])],
    ['the invoice of one session', 'invoices', (q: Queryable) => invoicesOfSessions(q, randomUUID(), [randomUUID()])],
  ] as const) {
    test(`${name}: planned for its first runs only, then a generic plan`, async () => {
      const plans = await customPlans(read, table);
      assert.equal(plans.length, 1, `one statement prepared: ${JSON.stringify(plans)}`);
      assert.ok((plans[0]?.custom ?? 0) <= 5, `custom plans: ${JSON.stringify(plans)}`);
      assert.ok((plans[0]?.generic ?? 0) >= 5, `generic plans: ${JSON.stringify(plans)}`);
    });
  }
});
