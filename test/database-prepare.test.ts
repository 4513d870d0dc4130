// Statements prepared automatically (src/platform/db.ts): a text run with values for the third time in a process is
// prepared on each connection that runs it, and answers as before; DATABASE_AUTO_PREPARE=false prepares nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openSession } from '../src/cli/session.ts';
import { createDatabase, type Database, MAX_AUTO_PREPARED } from '../src/platform/db.ts';
import { createTestDatabase, testConfig } from './helpers.ts';

let db: Database;
let url: string;
let drop: () => Promise<void>;

before(async () => {
  ({ db, url, drop } = await createTestDatabase());
});
after(() => drop());

/** The statements prepared on the connection `work` runs on, after it ran. */
async function preparedAfter(database: Database, work: (q: { query: Database['query'] }) => Promise<void>): Promise<string[]> {
  return database.withClient(async (client) => {
    await work(client);
    const { rows } = await client.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
    return rows.map((row) => row.statement);
  });
}

describe('statements prepared automatically', () => {
  it('a text run with values is prepared from its third run on, answers unchanged; one without values never', async () => {
    // A text of its own (the names are per process and other tests of this file share them).
    const text = `SELECT $1::int + 1 AS n, '${randomUUID()}' AS tag`;
    const plain = `SELECT 41 + 1 AS n, '${randomUUID()}' AS tag`;
    const answers: number[] = [];
    const firstTwo = await preparedAfter(db, async (q) => {
      for (let i = 0; i < 2; i++) answers.push((await q.query<{ n: number }>(text, [i])).rows[0]?.n ?? -1);
    });
    assert.deepEqual(
      firstTwo.filter((s) => s === text),
      [],
      'not prepared after two runs',
    );
    const later = await preparedAfter(db, async (q) => {
      for (let i = 2; i < 6; i++) answers.push((await q.query<{ n: number }>(text, [i])).rows[0]?.n ?? -1);
      for (let i = 0; i < 6; i++) await q.query(plain);
    });
    assert.deepEqual(answers, [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(
      later.filter((s) => s === text),
      [text],
      'prepared once on the connection',
    );
    assert.deepEqual(
      later.filter((s) => s === plain),
      [],
      'a text without values is not prepared',
    );
  });

  it('a statement gone stale on a connection (the schema changed under it) runs again unnamed, and is named anew later', async () => {
    const table = `prepare_stale_${randomUUID().replaceAll('-', '')}`;
    await db.query(`CREATE TABLE ${table} (id int PRIMARY KEY)`);
    await db.query(`INSERT INTO ${table} VALUES (1)`);
    const text = `SELECT * FROM ${table} WHERE id = $1`;
    const rows = await db.withClient(async (client) => {
      for (let i = 0; i < 4; i++) await client.query(text, [1]);
      await client.query(`ALTER TABLE ${table} ADD COLUMN note text DEFAULT 'added'`);
      // PostgreSQL refuses the prepared one now ("cached plan must not change result type").
      const after = (await client.query(text, [1])).rows;
      for (let i = 0; i < 4; i++) await client.query(text, [1]);
      const prepared = await client.query<{ name: string }>('SELECT name FROM pg_prepared_statements WHERE statement = $1 ORDER BY name', [text]);
      return { after, names: prepared.rows.map((r) => r.name) };
    });
    assert.deepEqual(rows.after, [{ id: 1, note: 'added' }]);
    assert.equal(rows.names.length, 2, 'the stale statement and the one named anew');
  });

  it('a text run on the pool itself (db.query, outside a transaction) is prepared too, and a stale one runs again unnamed', async () => {
    // pg-pool runs db.query through the connection's callback form: it was never prepared (issue 17's --statements:
    // statements on the pool were planned on every run, 21% of PostgreSQL's statement time).
    const one = createDatabase(url, { max: 1 });
    const table = `prepare_pool_${randomUUID().replaceAll('-', '')}`;
    try {
      await one.query(`CREATE TABLE ${table} (id int PRIMARY KEY)`);
      await one.query(`INSERT INTO ${table} VALUES (1), (2)`);
      const text = `SELECT * FROM ${table} WHERE id = $1`;
      const answers: unknown[] = [];
      for (let i = 0; i < 4; i++) answers.push((await one.query(text, [1 + (i % 2)])).rows);
      assert.deepEqual(answers, [[{ id: 1 }], [{ id: 2 }], [{ id: 1 }], [{ id: 2 }]]);
      const named = async () =>
        (await one.query<{ name: string }>('SELECT name FROM pg_prepared_statements WHERE statement = $1 ORDER BY name', [text])).rows.map((r) => r.name);
      assert.equal((await named()).length, 1, 'prepared on the pool connection');
      await one.query(`ALTER TABLE ${table} ADD COLUMN note text DEFAULT 'added'`);
      assert.deepEqual((await one.query(text, [1])).rows, [{ id: 1, note: 'added' }], 'the stale statement answers, run unnamed');
      for (let i = 0; i < 3; i++) await one.query(text, [2]);
      assert.equal((await named()).length, 2, 'named anew after more runs (the stale one stays on the connection)');
      // Through the named statement: its own error reaches the caller, and the connection answers on.
      await assert.rejects(one.query(text, ['not a number']), /invalid input syntax/, "a statement's own error still reaches the caller");
      assert.deepEqual((await one.query(text, [2])).rows, [{ id: 2, note: 'added' }]);
    } finally {
      await one.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
      await one.close();
    }
  });

  it('tells once when the pool has named as many texts as it may; a text seen after that runs unprepared, and answers', async () => {
    const told: number[] = [];
    const bounded = createDatabase(url, { max: 1, onAutoPrepareFull: (names) => told.push(names) });
    try {
      const tag = randomUUID();
      const textOf = (i: number) => `SELECT $1::int + ${i} AS n, '${tag}' AS tag`;
      for (let i = 0; i < MAX_AUTO_PREPARED; i++) for (let run = 0; run < 3; run++) await bounded.query(textOf(i), [run]);
      assert.deepEqual(told, [MAX_AUTO_PREPARED], 'told once, at the bound');
      const late = textOf(MAX_AUTO_PREPARED);
      for (let run = 0; run < 4; run++) assert.equal((await bounded.query<{ n: number }>(late, [run])).rows[0]?.n, run + MAX_AUTO_PREPARED);
      const prepared = await bounded.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%' || $1 || '%'", [tag]);
      assert.equal(prepared.rows[0]?.n, MAX_AUTO_PREPARED, 'the texts before the bound, not the one after');
      assert.deepEqual(told, [MAX_AUTO_PREPARED]);
    } finally {
      await bounded.close();
    }
  });

  it('told only once, also when a stale name is forgotten and another text takes its place at the bound', async () => {
    const told: number[] = [];
    const bounded = createDatabase(url, { max: 1, onAutoPrepareFull: (names) => told.push(names) });
    const table = `prepare_bound_${randomUUID().replaceAll('-', '')}`;
    try {
      await bounded.query(`CREATE TABLE ${table} (id int PRIMARY KEY)`);
      const stale = `SELECT * FROM ${table} WHERE id = $1`;
      const textOf = (i: number) => `SELECT $1::int + ${i} AS n, '${table}' AS tag`;
      for (let run = 0; run < 3; run++) await bounded.query(stale, [run]);
      for (let i = 1; i < MAX_AUTO_PREPARED; i++) for (let run = 0; run < 3; run++) await bounded.query(textOf(i), [run]);
      assert.deepEqual(told, [MAX_AUTO_PREPARED]);
      await bounded.query(`ALTER TABLE ${table} ADD COLUMN note text`);
      assert.deepEqual((await bounded.query(stale, [1])).rows, [], 'the stale statement answers (its name forgotten)');
      for (let run = 0; run < 3; run++) await bounded.query(textOf(MAX_AUTO_PREPARED), [run]);
      assert.deepEqual(told, [MAX_AUTO_PREPARED], 'not told again when the count comes back to the bound');
    } finally {
      await bounded.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
      await bounded.close();
    }
  });

  it('prepares nothing when turned off', async () => {
    const off = createDatabase(url, { max: 1, autoPrepare: false });
    try {
      const text = `SELECT $1::int AS n, '${randomUUID()}' AS tag`;
      const prepared = await preparedAfter(off, async (q) => {
        for (let i = 0; i < 6; i++) assert.equal((await q.query<{ n: number }>(text, [i])).rows[0]?.n, i);
      });
      assert.deepEqual(prepared, []);
    } finally {
      await off.close();
    }
  });

  it('an operator command (and `sandbox cpo`) honours DATABASE_AUTO_PREPARE=false as the service does (a pooler in transaction mode)', async () => {
    const session = await openSession(testConfig({ DATABASE_URL: url, DATABASE_AUTO_PREPARE: 'false' }), { poolSize: 1 });
    try {
      const text = `SELECT $1::int AS n, '${randomUUID()}' AS tag`;
      const prepared = await preparedAfter(session.db, async (q) => {
        for (let i = 0; i < 6; i++) await q.query(text, [i]);
      });
      assert.deepEqual(prepared, []);
    } finally {
      await session.close();
    }
  });
});
