// The users list through its buckets (migration 0018): the count and every page equal what counting and skipping
// every row gives, whatever the order of sign-ups, deletions and settles, and under concurrent sign-ups.
// Buckets of 3 users here (1,000 in the service), so that short scenarios cut many.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { insertUser, listLiveUsersForClient, settleUserList, softDeleteUser } from '../src/modules/users/repository.ts';
import type { Database } from '../src/platform/db.ts';
import { createTestDatabase } from './helpers.ts';

let db: Database;
let drop: () => Promise<void>;

before(async () => {
  ({ db, drop } = await createTestDatabase());
});
after(() => drop());

const BUCKET = 3;

async function newClient(): Promise<string> {
  const id = randomUUID();
  await db.query('INSERT INTO api_clients (id, name, created_at) VALUES ($1, $2, now())', [id, `buckets-${id}`]);
  return id;
}

/** The list as counting and skipping every row gives it. */
async function naivePage(clientId: string, page: { limit: number; offset: number }) {
  const { rows } = await db.query<{ id: string; total: number }>(
    `SELECT id, (SELECT count(*) FROM users WHERE client_id = $1 AND deleted_at IS NULL) AS total FROM users
      WHERE client_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
    [clientId, page.limit, page.offset],
  );
  const { rows: counted } = await db.query<{ n: number }>('SELECT count(*) AS n FROM users WHERE client_id = $1 AND deleted_at IS NULL', [clientId]);
  return { count: counted[0]?.n ?? 0, ids: rows.map((row) => row.id) };
}

async function assertSameAsNaive(clientId: string, page: { limit: number; offset: number }) {
  const listed = await listLiveUsersForClient(db, clientId, {}, page, BUCKET);
  const expected = await naivePage(clientId, page);
  assert.equal(listed.count, expected.count, `count at ${JSON.stringify(page)}`);
  assert.deepEqual(
    listed.rows.map((row) => row.id),
    expected.ids,
    `page ${JSON.stringify(page)}`,
  );
}

type Op =
  | { kind: 'insert'; at: number; sameAsPrevious: boolean }
  | { kind: 'delete'; pick: number }
  | { kind: 'settle' }
  | { kind: 'read'; offset: number; limit: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('insert' as const), at: fc.integer({ min: 0, max: 60 }), sameAsPrevious: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('settle' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('read' as const), offset: fc.integer({ min: 0, max: 60 }), limit: fc.integer({ min: 1, max: 7 }) }) },
);

describe('users list buckets', () => {
  test('count and pages equal the naive ones after any sign-ups (also older than the buckets), deletions and settles', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
        const clientId = await newClient();
        const base = Date.UTC(2026, 0, 1);
        const live: string[] = [];
        let previous = new Date(base);
        for (const step of ops) {
          if (step.kind === 'insert') {
            // Minutes from a base, in any order: many land below buckets already cut; equal times tie on the id.
            const at = step.sameAsPrevious ? previous : new Date(base + step.at * 60_000);
            previous = at;
            const user = await insertUser(db, { id: randomUUID(), client_id: clientId, email: null, locale: 'en', external_id: null, created_at: at });
            live.push(user.id);
          } else if (step.kind === 'delete' && live.length > 0) {
            const [id] = live.splice(step.pick % live.length, 1);
            assert.ok(await softDeleteUser(db, clientId, id as string, new Date(base)));
          } else if (step.kind === 'settle') {
            await settleUserList(db, clientId, BUCKET);
          } else if (step.kind === 'read') {
            await assertSameAsNaive(clientId, step);
          }
        }
        const total = live.length;
        for (let offset = 0; offset <= total + 1; offset++) await assertSameAsNaive(clientId, { offset, limit: 2 });
      }),
      { numRuns: 60 },
    );
  });

  test('a page read settles a long head, and the buckets then hold every user but fewer than two buckets', async () => {
    const clientId = await newClient();
    for (let i = 0; i < 20; i++) {
      await insertUser(db, {
        id: randomUUID(),
        client_id: clientId,
        email: null,
        locale: 'en',
        external_id: null,
        created_at: new Date(Date.UTC(2026, 0, 1, 0, i)),
      });
    }
    await listLiveUsersForClient(db, clientId, {}, { offset: 0, limit: 5 }, BUCKET);
    const { rows } = await db.query<{ buckets: number; live: number }>(
      'SELECT count(*) AS buckets, sum(live)::int AS live FROM user_list_buckets WHERE client_id = $1',
      [clientId],
    );
    assert.deepEqual(rows[0], { buckets: 6, live: 18 });
    await assertSameAsNaive(clientId, { offset: 7, limit: 5 });
  });

  test('sign-ups in flight while a settle runs are counted once, in the right bucket', async () => {
    const clientId = await newClient();
    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
    for (let i = 0; i < 10; i++)
      await insertUser(db, { id: randomUUID(), client_id: clientId, email: null, locale: 'en', external_id: null, created_at: at(2 * i) });
    // Sign-ups whose keys fall between the users already there, held open while the settle is asked for.
    const open = await Promise.all(Array.from({ length: 4 }, () => db.checkOut()));
    for (const [i, { client }] of open.entries()) {
      await client.query('BEGIN');
      await insertUser(client, { id: randomUUID(), client_id: clientId, email: null, locale: 'en', external_id: null, created_at: at(2 * i + 1) });
    }
    const settling = settleUserList(db, clientId, BUCKET, 30_000);
    // Once the settle waits for their lock, they commit.
    for (;;) {
      const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
      if ((rows[0]?.n ?? 0) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (const { client, release } of open) {
      await client.query('COMMIT');
      release();
    }
    assert.ok((await settling) > 0, 'the settle waited for them and then cut buckets');
    // And sign-ups that waited for the settle land in the buckets it cut.
    await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        insertUser(db, {
          id: randomUUID(),
          client_id: clientId,
          email: null,
          locale: 'en',
          external_id: null,
          created_at: new Date(at(2 * i + 1).getTime() + 1),
        }),
      ),
    );
    for (let offset = 0; offset <= 18; offset++) await assertSameAsNaive(clientId, { offset, limit: 3 });
  });

  test('a settle gives up (0 buckets) when a sign-up of that client stays in flight past its lock timeout', async () => {
    const clientId = await newClient();
    for (let i = 0; i < 10; i++) {
      await insertUser(db, {
        id: randomUUID(),
        client_id: clientId,
        email: null,
        locale: 'en',
        external_id: null,
        created_at: new Date(Date.UTC(2026, 0, 1, 0, i)),
      });
    }
    const { client, release } = await db.checkOut();
    try {
      await client.query('BEGIN');
      await insertUser(client, { id: randomUUID(), client_id: clientId, email: null, locale: 'en', external_id: null, created_at: new Date() });
      assert.equal(await settleUserList(db, clientId, BUCKET), 0);
      await client.query('COMMIT');
    } finally {
      release();
    }
    assert.equal(await settleUserList(db, clientId, BUCKET), 3);
    await assertSameAsNaive(clientId, { offset: 0, limit: 20 });
  });
});
