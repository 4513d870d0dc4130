// Sign-ups without an Idempotency-Key that arrive together commit together (src/platform/group-commit.ts,
// the users routes): fewer transactions than requests under a burst, yet every request keeps its own answer:
// its user, or its own 409 when its external id is taken (also by a neighbour in the same group), another
// client's users never visible, a request that fails the whole transaction failing alone, and the
// database going away answering every waiting request (503) rather than half of them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Queryable } from '../src/platform/db.ts';
import { groupCommit, type Outcome } from '../src/platform/group-commit.ts';
import { assertProblem, setupTestApp, type TestContext, type TestResponse } from './helpers.ts';
import { registerPeer } from './ocpi-support.ts';

let t: TestContext;
let token: string;
let clientId: string;

before(async () => {
  t = await setupTestApp();
  ({ token, clientId } = await t.newClient());
});
after(() => t.close());

const LIST = '/api/v1/users/';

/** Rows written by one transaction share its xmin: how many transactions wrote these users. */
async function transactionsOf(ids: readonly string[]): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>('SELECT count(DISTINCT xmin::text)::int AS n FROM users WHERE id = ANY($1::uuid[])', [ids]);
  return rows[0]?.n ?? 0;
}

describe('sign-ups committed in groups', () => {
  test('a burst of 60 sign-ups commits in fewer transactions, and every user is there as answered', async () => {
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        t.call('POST', LIST, { token, body: { email: `u${i}@example.com`, custom_properties: { external_id: `burst-${i}` } } }),
      ),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      answers.map(() => 201),
    );
    const ids = answers.map((answer) => answer.body.id as string);
    assert.equal(new Set(ids).size, 60);
    assert.ok((await transactionsOf(ids)) < 60, `60 sign-ups in ${await transactionsOf(ids)} transactions`);
    for (const [i, answer] of answers.entries()) {
      const read = await t.call('GET', `${LIST}${answer.body.id}/`, { token });
      assert.equal(read.status, 200);
      assert.deepEqual(read.body, answer.body);
      assert.equal(read.body.email, `u${i}@example.com`);
      assert.equal(read.body.custom_properties.external_id, `burst-${i}`);
    }
  });

  test('an external id wanted by several requests of a group goes to one; the others answer 409 alone, and only created users are pushed to CPOs', async () => {
    await registerPeer(t.ocpi, t, {
      name: 'cpo-tokens',
      parties: [{ country_code: 'NL', party_id: 'TOK' }],
      endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: 'https://cpo-tokens.example/ocpi/2.2.1/tokens' }],
    });
    const taken = await t.call('POST', LIST, { token, body: { custom_properties: { external_id: 'already' } } });
    assert.equal(taken.status, 201);
    const wants = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? 'shared' : i % 3 === 1 ? 'already' : `own-${i}`));
    const answers = await Promise.all(wants.map((external_id) => t.call('POST', LIST, { token, body: { custom_properties: { external_id } } })));
    const statusOf = (want: string) => answers.filter((_, i) => wants[i] === want).map((answer) => answer.status);
    assert.deepEqual(statusOf('shared').sort(), [201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    assert.deepEqual(statusOf('already'), Array(10).fill(409));
    for (const [i, answer] of answers.entries()) {
      if (answer.status === 409) {
        assertProblem(answer, 409, 'conflict');
        assert.deepEqual(answer.body.errors, [{ field: 'custom_properties.external_id', message: 'is already used by another user' }]);
      } else assert.equal(answer.body.custom_properties.external_id, wants[i]);
    }
    const created = answers.filter((answer) => answer.status === 201).map((answer) => answer.body.id as string);
    assert.equal(created.length, 11);
    assert.ok((await transactionsOf(created)) < created.length);
    const { rows } = await t.db.query<{ uid: string }>(
      `SELECT o.body ->> 'uid' AS uid FROM ocpi_outbox o JOIN ocpi_connections c ON c.id = o.connection_id
        WHERE c.name = 'cpo-tokens' AND o.module = 'tokens' AND o.body ->> 'uid' <> $1`,
      [taken.body.id],
    );
    assert.deepEqual(rows.map((row) => row.uid).sort(), [...created].sort());
    const { rows: shared } = await t.db.query('SELECT id FROM users WHERE client_id = $1 AND external_id = $2', [clientId, 'shared']);
    assert.equal(shared.length, 1);
  });

  test('two clients in one burst: each gets its own users, the same external id for both, and sees only its own', async () => {
    const other = await t.newClient();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        t.call('POST', LIST, { token: i % 2 ? other.token : token, body: { custom_properties: { external_id: `both-${i >> 1}` } } }),
      ),
    );
    assert.ok(answers.every((answer) => answer.status === 201));
    for (const [i, answer] of answers.entries()) {
      const [owner, stranger] = i % 2 ? [other.token, token] : [token, other.token];
      assert.equal((await t.call('GET', `${LIST}${answer.body.id}/`, { token: owner })).status, 200);
      assert.equal((await t.call('GET', `${LIST}${answer.body.id}/`, { token: stranger })).status, 404);
    }
    const mine = await t.call('GET', `${LIST}?search=both-3`, { token: other.token });
    assert.equal(mine.body.count, 1);
  });

  test('a sign-up that fails the whole transaction fails alone: its neighbours are created', async () => {
    await t.db.query(`CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                      BEGIN IF NEW.email = 'poison@example.com' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await t.db.query('CREATE TRIGGER refuse_poison BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION refuse_poison()');
    try {
      const emails = Array.from({ length: 30 }, (_, i) => (i === 17 ? 'poison@example.com' : `fine-${i}@example.com`));
      const answers = await Promise.all(emails.map((email) => t.call('POST', LIST, { token, body: { email } })));
      assertProblem(answers[17] as TestResponse, 500, 'unexpected_error');
      assert.doesNotMatch(answers[17]?.text ?? '', /refused by the test/);
      const others = answers.filter((_, i) => i !== 17);
      assert.deepEqual(
        others.map((answer) => answer.status),
        others.map(() => 201),
      );
      const { rows } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM users WHERE email LIKE 'fine-%' OR email = 'poison@example.com'");
      assert.equal(rows[0]?.n, 29);
    } finally {
      await t.db.query('DROP TRIGGER refuse_poison ON users');
      await t.db.query('DROP FUNCTION refuse_poison()');
    }
  });
});

describe('sign-ups with an Idempotency-Key, committed in groups', () => {
  const storedKeys = async (keys: readonly string[]) => {
    const { rows } = await t.db.query<{ key: string; response_status: number; response_body: { id: string } }>(
      'SELECT key, response_status, response_body FROM idempotency_keys WHERE client_id = $1 AND key = ANY($2::text[]) ORDER BY key',
      [clientId, keys],
    );
    return rows;
  };

  test('a burst of keyed and unkeyed sign-ups: fewer transactions; each key stores its own answer, replayed as it was', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `burst-key-${String(i).padStart(2, '0')}`);
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        t.call('POST', LIST, { token, body: { email: `k${i}@example.com` }, ...(i < 40 ? { headers: { 'idempotency-key': keys[i] as string } } : {}) }),
      ),
    );
    assert.ok(answers.every((answer) => answer.status === 201 && answer.headers['idempotent-replayed'] === undefined));
    const ids = answers.map((answer) => answer.body.id as string);
    const keyedIn = await transactionsOf(ids.slice(0, 40));
    assert.ok(keyedIn < 40, `40 keyed sign-ups in ${keyedIn} transactions`);
    const stored = await storedKeys(keys);
    assert.deepEqual(
      stored.map((row) => [row.key, row.response_status, row.response_body.id]),
      keys.map((key, i) => [key, 201, ids[i]]),
    );
    const replays = await Promise.all(
      keys.map((key, i) => t.call('POST', LIST, { token, body: { email: `k${i}@example.com` }, headers: { 'idempotency-key': key } })),
    );
    for (const [i, replay] of replays.entries()) {
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, answers[i]?.body);
    }
    const { rows } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM users WHERE client_id = $1 AND email LIKE 'k%@example.com'", [clientId]);
    assert.equal(rows[0]?.n, 60);
  });

  test('twins in one burst: one user per key, every twin answers it; the key with another body then answers 422', async () => {
    const bodyOf = (i: number) => ({ custom_properties: { external_id: `twin-${i % 4}` } });
    const requests = Array.from({ length: 24 }, (_, i) => ({ key: `twin-key-${i % 4}`, body: bodyOf(i) }));
    const answers = await Promise.all(requests.map(({ key, body }) => t.call('POST', LIST, { token, body, headers: { 'idempotency-key': key } })));
    const other = await t.call('POST', LIST, {
      token,
      body: { custom_properties: { external_id: 'twin-other' } },
      headers: { 'idempotency-key': 'twin-key-0' },
    });
    assertProblem(other, 422, 'idempotency_conflict');
    for (let k = 0; k < 4; k++) {
      const twins = answers.slice(0, 24).filter((_, i) => i % 4 === k);
      assert.ok(twins.every((answer) => answer.status === 201));
      assert.equal(new Set(twins.map((answer) => answer.body.id)).size, 1, `key ${k}: one user`);
      assert.equal(twins.filter((answer) => answer.headers['idempotent-replayed'] === undefined).length, 1, `key ${k}: one ran, the others replayed`);
    }
    const { rows } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM users WHERE client_id = $1 AND external_id LIKE 'twin-%'", [clientId]);
    assert.equal(rows[0]?.n, 4);
  });

  test('a keyed sign-up refused in its group (external id taken) stores nothing: its key runs again once the id is free', async () => {
    const holder = await t.call('POST', LIST, { token, body: { custom_properties: { external_id: 'held' } } });
    assert.equal(holder.status, 201);
    const keys = Array.from({ length: 12 }, (_, i) => `held-key-${i}`);
    const answers = await Promise.all(
      keys.map((key, i) =>
        t.call('POST', LIST, { token, body: { custom_properties: { external_id: i === 5 ? 'held' : `free-${i}` } }, headers: { 'idempotency-key': key } }),
      ),
    );
    assertProblem(answers[5] as TestResponse, 409, 'conflict');
    assert.equal(answers.filter((answer) => answer.status === 201).length, 11);
    assert.deepEqual(
      (await storedKeys(keys)).map((row) => row.key),
      keys.filter((_, i) => i !== 5).sort(),
    );
    assert.equal((await t.call('DELETE', `${LIST}${holder.body.id}/`, { token })).status, 204);
    const again = await t.call('POST', LIST, {
      token,
      body: { custom_properties: { external_id: 'held' } },
      headers: { 'idempotency-key': keys[5] as string },
    });
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], undefined);
  });
});

describe('groupCommit', () => {
  /** One group at a time, each item written as itself after `before` ran in the group's transaction; counts the writes. */
  function oneAtATime(before: (tx: Queryable, items: readonly number[]) => Promise<void>) {
    let writes = 0;
    const group = groupCommit<number, number>({
      db: t.db,
      maxInFlight: 1,
      async write(tx, items) {
        writes++;
        await before(tx, items);
        return items.map((item) => ({ ok: true, value: item }));
      },
    });
    return { submit: group.submit, writes: () => writes };
  }

  test('groups take what waits when a slot frees, at most maxGroup, at most maxInFlight at once', async () => {
    const groups: number[][] = [];
    let inFlight = 0;
    let most = 0;
    const committed: number[] = [];
    const group = groupCommit<number, number>({
      db: t.db,
      maxGroup: 8,
      maxInFlight: 2,
      committed: (size) => committed.push(size),
      async write(tx, items) {
        inFlight++;
        most = Math.max(most, inFlight);
        groups.push([...items]);
        await tx.query('SELECT pg_sleep(0.02)');
        inFlight--;
        return items.map((item): Outcome<number> => (item % 10 === 9 ? { ok: false, error: new Error(`no ${item}`) } : { ok: true, value: item * 2 }));
      },
    });
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => group.submit(i)));
    results.forEach((result, i) => {
      if (i % 10 === 9) assert.equal(result.status === 'rejected' && (result.reason as Error).message, `no ${i}`);
      else assert.deepEqual(result, { status: 'fulfilled', value: i * 2 });
    });
    assert.equal(most, 2);
    // Two groups run at once, so which of them begins its write (or commits) first is the scheduler's: the groups
    // are compared in submit order of their first item.
    groups.sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
    assert.deepEqual(
      groups.flat(),
      Array.from({ length: 40 }, (_, i) => i),
    );
    assert.deepEqual(
      groups.map((g) => g.length),
      [1, 1, 8, 8, 8, 8, 6],
    );
    assert.deepEqual(
      committed.sort((a, b) => a - b),
      [1, 1, 6, 8, 8, 8, 8],
    );
  });

  test('a group retried item by item stops retrying once the database is unavailable: the rest answer that at once', async () => {
    const group = oneAtATime(async (tx, items) => {
      if (items.length > 1) throw new Error('one of the group is at fault');
      // The first retry alone finds the database gone (its connection ends under it).
      await tx.query('SELECT pg_terminate_backend(pg_backend_pid())');
    });
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => group.submit(i)));
    // The first went alone (and found the database gone); the other five failed as a group, then the first of
    // them alone did too: the remaining four were not tried.
    assert.ok(results.every((result) => result.status === 'rejected'));
    assert.equal(group.writes(), 1 + 1 + 1);
    for (const result of results.slice(2)) assert.match(String((result as PromiseRejectedResult).reason), /terminat/i);
  });

  test('when the connection dies mid-group, every item of it answers the failure, and none is written again alone', async () => {
    const group = oneAtATime(async (tx, items) => {
      if (items.length > 1) await tx.query('SELECT pg_terminate_backend(pg_backend_pid())');
      await tx.query('SELECT pg_sleep(0.05)');
    });
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => group.submit(i)));
    assert.deepEqual(results[0], { status: 'fulfilled', value: 0 });
    const rest = results.slice(1);
    assert.ok(rest.every((result) => result.status === 'rejected'));
    assert.equal(group.writes(), 2);
    assert.equal((await t.call('GET', '/readyz')).status, 200);
  });
});
