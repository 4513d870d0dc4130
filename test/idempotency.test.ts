import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createIdempotency, IDEMPOTENCY_IN_FLIGHT_WAIT_MS, IDEMPOTENCY_TTL_MS, requestFingerprint } from '../src/platform/http/idempotency.ts';
import { assertProblem, setupTestApp, type TestContext } from './helpers.ts';

let t: TestContext;

before(async () => {
  t = await setupTestApp();
});
after(() => t.close());

/** A fresh client per test, so user counts and keys are the test's own. */
async function freshToken(): Promise<string> {
  return (await t.newClient()).token;
}

const key = () => `key-${randomUUID()}`;

async function userCount(token: string, search?: string): Promise<number> {
  const res = await t.call('GET', `/api/v1/users/${search ? `?search=${encodeURIComponent(search)}` : ''}`, { token });
  assert.equal(res.status, 200, res.text);
  return res.body.count;
}

async function storedKeys(clientToken: string): Promise<number> {
  const principal = await t.clients.authenticate(`Bearer ${clientToken}`);
  const { rows } = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys WHERE client_id = $1', [principal.clientId]);
  return rows[0]?.n ?? -1;
}

describe('replay', () => {
  test('same key and body: same 201 and body, Idempotent-Replayed on the replay, one user', async () => {
    const token = await freshToken();
    const k = key();
    const body = { email: 'replay@example.com', locale: 'de', custom_properties: { external_id: 'replay-1' } };
    const first = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    t.clock.advance(60_000);
    const second = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assert.equal(second.status, 201, second.text);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.body, first.body);
    assert.equal(second.text, first.text, 'the replayed body is byte-identical');
    assert.match(String(second.headers['content-type']), /^application\/json/);
    assert.equal(await userCount(token, 'replay-1'), 1);
    assert.equal(await userCount(token), 1);
    assert.equal(await storedKeys(token), 1);
  });

  test('the same body with keys in another order is the same request', async () => {
    const token = await freshToken();
    const k = key();
    const first = await t.call('POST', '/api/v1/users/', {
      token,
      headers: { 'idempotency-key': k },
      body: { email: 'order@example.com', locale: 'en', custom_properties: { external_id: 'order-1' } },
    });
    assert.equal(first.status, 201, first.text);
    const second = await t.call('POST', '/api/v1/users/', {
      token,
      headers: { 'idempotency-key': k },
      body: { custom_properties: { external_id: 'order-1' }, locale: 'en', email: 'order@example.com' },
    });
    assert.equal(second.status, 201, second.text);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.body.id, first.body.id);
    assert.equal(await userCount(token), 1);
  });

  test('a replay answers even after the created user changed (the stored answer, not the current state)', async () => {
    const token = await freshToken();
    const k = key();
    const first = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'en' }, headers: { 'idempotency-key': k } });
    assert.equal(first.status, 201);
    const patched = await t.call('PATCH', `/api/v1/users/${first.body.id}/`, { token, body: { locale: 'de' } });
    assert.equal(patched.status, 200);
    const replay = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'en' }, headers: { 'idempotency-key': k } });
    assert.equal(replay.status, 201);
    assert.deepEqual(replay.body, first.body);
  });
});

describe('mismatch', () => {
  test('same key, different body: 422 idempotency_conflict, nothing created', async () => {
    const token = await freshToken();
    const k = key();
    const first = await t.call('POST', '/api/v1/users/', { token, body: { email: 'a@example.com' }, headers: { 'idempotency-key': k } });
    assert.equal(first.status, 201, first.text);
    const second = await t.call('POST', '/api/v1/users/', { token, body: { email: 'b@example.com' }, headers: { 'idempotency-key': k } });
    assertProblem(second, 422, 'idempotency_conflict');
    assert.equal(second.headers['idempotent-replayed'], undefined);
    assert.equal(await userCount(token), 1);
    // The original request still replays.
    const third = await t.call('POST', '/api/v1/users/', { token, body: { email: 'a@example.com' }, headers: { 'idempotency-key': k } });
    assert.equal(third.status, 201);
    assert.equal(third.body.id, first.body.id);
  });

  test('same key on another path or method: 422, and the PATCH is not applied', async () => {
    const token = await freshToken();
    const k = key();
    const created = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'en' }, headers: { 'idempotency-key': k } });
    assert.equal(created.status, 201, created.text);
    const patch = await t.call('PATCH', `/api/v1/users/${created.body.id}/`, { token, body: { locale: 'de' }, headers: { 'idempotency-key': k } });
    assertProblem(patch, 422, 'idempotency_conflict');
    const got = await t.call('GET', `/api/v1/users/${created.body.id}/`, { token });
    assert.equal(got.body.locale, 'en');
    const del = await t.call('DELETE', `/api/v1/users/${created.body.id}/`, { token, headers: { 'idempotency-key': k } });
    assertProblem(del, 422, 'idempotency_conflict');
    assert.equal((await t.call('GET', `/api/v1/users/${created.body.id}/`, { token })).status, 200);
  });
});

describe('concurrency', () => {
  test('50 parallel identical POSTs with one key: one user, the others wait for it and replay its answer', async () => {
    const token = await freshToken();
    const k = key();
    const body = { email: 'race@example.com', custom_properties: { external_id: 'race-1' } };
    const answers = await Promise.all(Array.from({ length: 50 }, () => t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } })));
    assert.deepEqual(
      answers.map((a) => a.status),
      answers.map(() => 201),
      `every twin waits for the first and replays it: ${answers.map((a) => a.status).join(',')}`,
    );
    const ids = new Set(answers.map((a) => a.body.id));
    assert.equal(ids.size, 1, 'every 201 carries the same user');
    assert.equal(answers.filter((a) => a.headers['idempotent-replayed'] === undefined).length, 1, 'exactly one answer is the original');
    assert.equal(await userCount(token), 1);
    assert.equal(await userCount(token, 'race-1'), 1);
    // After the storm, the key replays.
    const later = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assert.equal(later.status, 201);
    assert.equal(later.body.id, [...ids][0]);
    assert.equal(later.headers['idempotent-replayed'], 'true');
  });

  test('30 concurrent replays of a finished key all replay (none is refused by another replay)', async () => {
    const token = await freshToken();
    const k = key();
    const body = { locale: 'de', custom_properties: { external_id: 'replays-1' } };
    const first = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assert.equal(first.status, 201, first.text);
    for (let round = 0; round < 3; round++) {
      const replays = await Promise.all(Array.from({ length: 30 }, () => t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } })));
      assert.deepEqual(
        replays.map((r) => `${r.status} ${r.headers['idempotent-replayed']}`),
        replays.map(() => '201 true'),
      );
      for (const r of replays) assert.equal(r.text, first.text);
    }
    assert.equal(await userCount(token), 1);
  });

  test('a twin in flight (another process holding the key) is waited for, then its answer is replayed', async () => {
    const token = await freshToken();
    const k = key();
    const body = { locale: 'en' };
    const { clientId } = await t.clients.authenticate(`Bearer ${token}`);
    // The twin's answer: a real user (the route's response schema applies to replays).
    const twinsUser = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'de' } });
    assert.equal(twinsUser.status, 201, twinsUser.text);
    // A connection of its own plays the in-flight twin: it holds the key's lock and
    // commits its answer 600 ms later.
    const twin = await t.db.pool.connect();
    try {
      await twin.query('BEGIN');
      await twin.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`idempotency:${clientId}:${k}`]);
      const started = Date.now();
      const waiting = t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
      await new Promise((resolve) => setTimeout(resolve, 600));
      await twin.query(
        `INSERT INTO idempotency_keys (client_id, key, fingerprint, response_status, response_body, created_at)
         VALUES ($1, $2, $3, 201, $4, $5)`,
        [clientId, k, requestFingerprint('POST', '/api/v1/users/', body), twinsUser.text, t.clock.now()],
      );
      await twin.query('COMMIT');
      const answer = await waiting;
      assert.equal(answer.status, 201, answer.text);
      assert.equal(answer.headers['idempotent-replayed'], 'true');
      assert.deepEqual(answer.body, twinsUser.body);
      assert.ok(Date.now() - started >= 550, 'it waited for the twin');
    } finally {
      twin.release();
    }
    assert.equal(await userCount(token), 1, 'the waiting request did not run again');
  });

  test('a twin in flight longer than the wait: 409 conflict after about IDEMPOTENCY_IN_FLIGHT_WAIT_MS, nothing created', async () => {
    const token = await freshToken();
    const k = key();
    const { clientId } = await t.clients.authenticate(`Bearer ${token}`);
    const twin = await t.db.pool.connect();
    try {
      await twin.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`idempotency:${clientId}:${k}`]);
      const started = Date.now();
      const refused = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'en' }, headers: { 'idempotency-key': k } });
      const waited = Date.now() - started;
      assertProblem(refused, 409, 'conflict');
      assert.ok(waited >= IDEMPOTENCY_IN_FLIGHT_WAIT_MS - 300 && waited < IDEMPOTENCY_IN_FLIGHT_WAIT_MS + 2_000, `waited ${waited} ms`);
    } finally {
      await twin.query('SELECT pg_advisory_unlock_all()');
      twin.release();
    }
    assert.equal(await userCount(token), 0);
    // Once the twin is gone, the key runs.
    const after = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'en' }, headers: { 'idempotency-key': k } });
    assert.equal(after.status, 201, after.text);
  });
});

describe('scope and lifetime', () => {
  test('keys are scoped per client: the same key used by two clients creates two users', async () => {
    const a = await freshToken();
    const b = await freshToken();
    const k = key();
    const body = { custom_properties: { external_id: 'shared-ext' } };
    const ra = await t.call('POST', '/api/v1/users/', { token: a, body, headers: { 'idempotency-key': k } });
    const rb = await t.call('POST', '/api/v1/users/', { token: b, body, headers: { 'idempotency-key': k } });
    assert.equal(ra.status, 201, ra.text);
    assert.equal(rb.status, 201, rb.text);
    assert.equal(rb.headers['idempotent-replayed'], undefined);
    assert.notEqual(ra.body.id, rb.body.id);
    assert.equal(await userCount(a), 1);
    assert.equal(await userCount(b), 1);
    // Client b cannot see client a's user through the replay either.
    assertProblem(await t.call('GET', `/api/v1/users/${ra.body.id}/`, { token: b }), 404, 'not_found');
  });

  test('expiry: replayed just before 24 h, executed again after 24 h + 1 s', async () => {
    const token = await freshToken();
    const k = key();
    const body = { email: 'expiry@example.com' };
    const first = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assert.equal(first.status, 201, first.text);
    t.clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    const within = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assert.equal(within.status, 201);
    assert.equal(within.body.id, first.body.id);
    assert.equal(within.headers['idempotent-replayed'], 'true');
    t.clock.advance(2000); // now 24 h + 1 s after the first request
    const afterExpiry = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assert.equal(afterExpiry.status, 201, afterExpiry.text);
    assert.equal(afterExpiry.headers['idempotent-replayed'], undefined);
    assert.notEqual(afterExpiry.body.id, first.body.id);
    assert.equal(await userCount(token), 2);
    assert.equal(await storedKeys(token), 1, 'the expired record was replaced');
    // And the new execution is what replays now.
    const replay = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assert.equal(replay.body.id, afterExpiry.body.id);
  });

  test('an expired key may be reused with a different request', async () => {
    const token = await freshToken();
    const k = key();
    assert.equal((await t.call('POST', '/api/v1/users/', { token, body: { locale: 'en' }, headers: { 'idempotency-key': k } })).status, 201);
    t.clock.advance(IDEMPOTENCY_TTL_MS + 1000);
    const other = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'de' }, headers: { 'idempotency-key': k } });
    assert.equal(other.status, 201, other.text);
    assert.equal(other.body.locale, 'de');
  });
});

describe('failures are not stored', () => {
  test('a 409 external_id conflict is not stored: after freeing the id, the same key succeeds', async () => {
    const token = await freshToken();
    const holder = await t.call('POST', '/api/v1/users/', { token, body: { custom_properties: { external_id: 'busy' } } });
    assert.equal(holder.status, 201);
    const k = key();
    const body = { custom_properties: { external_id: 'busy' } };
    const refused = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assertProblem(refused, 409, 'conflict');
    assert.equal(await storedKeys(token), 0);
    // A retry while still conflicting is executed again (409 again, not replayed).
    const again = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assertProblem(again, 409, 'conflict');
    assert.equal(again.headers['idempotent-replayed'], undefined);
    assert.equal((await t.call('DELETE', `/api/v1/users/${holder.body.id}/`, { token })).status, 204);
    const retried = await t.call('POST', '/api/v1/users/', { token, body, headers: { 'idempotency-key': k } });
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    assert.deepEqual(retried.body.custom_properties, { external_id: 'busy' });
    assert.equal(await userCount(token, 'busy'), 1);
  });

  test('a 400 is not stored: the corrected request succeeds under the same key', async () => {
    const token = await freshToken();
    const k = key();
    const bad = await t.call('POST', '/api/v1/users/', { token, body: { email: 'not-an-email' }, headers: { 'idempotency-key': k } });
    assertProblem(bad, 400, 'validation_error');
    const good = await t.call('POST', '/api/v1/users/', { token, body: { email: 'fixed@example.com' }, headers: { 'idempotency-key': k } });
    assert.equal(good.status, 201, good.text);
    assert.equal(good.body.email, 'fixed@example.com');
  });

  test('a service-level 400 (bad VAT number) is rolled back with its key', async () => {
    const token = await freshToken();
    const user = (await t.call('POST', '/api/v1/users/', { token, body: {} })).body;
    const url = `/api/v1/users/${user.id}/billing-details/`;
    const k = key();
    const bad = await t.call('PUT', url, { token, body: { vat_number: 'DE1' }, headers: { 'idempotency-key': k } });
    assertProblem(bad, 400, 'validation_error');
    assert.equal(await storedKeys(token), 0);
    const good = await t.call('PUT', url, { token, body: { vat_number: 'DE123456789' }, headers: { 'idempotency-key': k } });
    assert.equal(good.status, 200, good.text);
    assert.equal(good.body.vat_number, 'DE123456789');
  });

  test('a 404 is not stored', async () => {
    const token = await freshToken();
    const k = key();
    const res = await t.call('DELETE', '/api/v1/users/00000000-0000-4000-8000-000000000000/', { token, headers: { 'idempotency-key': k } });
    assertProblem(res, 404, 'not_found');
    assert.equal(await storedKeys(token), 0);
  });
});

describe('DELETE and PUT', () => {
  test('DELETE replays 204 with an empty body; without a key the repeat is 404', async () => {
    const token = await freshToken();
    const user = (await t.call('POST', '/api/v1/users/', { token, body: {} })).body;
    const k = key();
    const first = await t.call('DELETE', `/api/v1/users/${user.id}/`, { token, headers: { 'idempotency-key': k } });
    assert.equal(first.status, 204, first.text);
    assert.equal(first.text, '');
    const replay = await t.call('DELETE', `/api/v1/users/${user.id}/`, { token, headers: { 'idempotency-key': k } });
    assert.equal(replay.status, 204, replay.text);
    assert.equal(replay.text, '');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.headers['content-length'] ?? '0', '0');
    assertProblem(await t.call('DELETE', `/api/v1/users/${user.id}/`, { token }), 404, 'not_found');
    assertProblem(await t.call('DELETE', `/api/v1/users/${user.id}/`, { token, headers: { 'idempotency-key': key() } }), 404, 'not_found');
  });

  test('PUT billing-details replays the stored answer and does not write again', async () => {
    const token = await freshToken();
    const user = (await t.call('POST', '/api/v1/users/', { token, body: {} })).body;
    const url = `/api/v1/users/${user.id}/billing-details/`;
    const k = key();
    const body = { first_name: 'Ada', last_name: 'Lovelace', country: 'gb', vat_number: 'gb 123 456 789' };
    const first = await t.call('PUT', url, { token, body, headers: { 'idempotency-key': k } });
    assert.equal(first.status, 200, first.text);
    t.clock.advance(30_000);
    // Someone else changes the details meanwhile.
    const changed = await t.call('PUT', url, { token, body: { first_name: 'Grace' } });
    assert.equal(changed.status, 200);
    const replay = await t.call('PUT', url, { token, body, headers: { 'idempotency-key': k } });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.body, first.body);
    const current = await t.call('GET', url, { token });
    assert.equal(current.body.first_name, 'Grace', 'the replay did not write the details again');
    assert.equal(current.body.updated_at, changed.body.updated_at);
  });
});

describe('invalid keys', () => {
  const cases: [string, string][] = [
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['with spaces', 'my key 1'],
    ['non-ASCII', 'schlüssel-1'],
  ];
  for (const [name, value] of cases) {
    test(`${name}: 400 validation_error naming the header, nothing created`, async () => {
      const token = await freshToken();
      const res = await t.call('POST', '/api/v1/users/', { token, body: {}, headers: { 'idempotency-key': value } });
      assertProblem(res, 400, 'validation_error');
      assert.equal(String(res.body.errors?.[0]?.field).toLowerCase(), 'idempotency-key');
      assert.equal(await userCount(token), 0);
    });
  }

  test('255 visible ASCII characters are accepted', async () => {
    const token = await freshToken();
    const res = await t.call('POST', '/api/v1/users/', { token, body: {}, headers: { 'idempotency-key': `${'!~'.repeat(127)}z` } });
    assert.equal(res.status, 201, res.text);
  });

  test('an invalid key on DELETE is 400 and deletes nothing', async () => {
    const token = await freshToken();
    const user = (await t.call('POST', '/api/v1/users/', { token, body: {} })).body;
    const res = await t.call('DELETE', `/api/v1/users/${user.id}/`, { token, headers: { 'idempotency-key': 'k'.repeat(256) } });
    assertProblem(res, 400, 'validation_error');
    assert.equal((await t.call('GET', `/api/v1/users/${user.id}/`, { token })).status, 200);
  });
});

describe('without the header', () => {
  test('two identical POSTs create two users and store no key', async () => {
    const token = await freshToken();
    const body = { email: 'twice@example.com' };
    const a = await t.call('POST', '/api/v1/users/', { token, body });
    const b = await t.call('POST', '/api/v1/users/', { token, body });
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    assert.notEqual(a.body.id, b.body.id);
    assert.equal(b.headers['idempotent-replayed'], undefined);
    assert.equal(await userCount(token), 2);
    assert.equal(await storedKeys(token), 0);
  });
});

describe('purgeExpired', () => {
  test('deletes the records older than 24 h and keeps the others', async () => {
    const token = await freshToken();
    const oldKeys = [key(), key()];
    for (const k of oldKeys) {
      assert.equal((await t.call('POST', '/api/v1/users/', { token, body: {}, headers: { 'idempotency-key': k } })).status, 201);
    }
    t.clock.advance(IDEMPOTENCY_TTL_MS + 1000);
    const freshKey = key();
    assert.equal((await t.call('POST', '/api/v1/users/', { token, body: {}, headers: { 'idempotency-key': freshKey } })).status, 201);
    t.clock.advance(1000);
    // A record exactly at the edge (created 24 h before now, not older) is kept.
    const edgeKey = key();
    assert.equal((await t.call('POST', '/api/v1/users/', { token, body: {}, headers: { 'idempotency-key': edgeKey } })).status, 201);
    t.clock.advance(IDEMPOTENCY_TTL_MS);

    const cutoff = new Date(t.clock.now().getTime() - IDEMPOTENCY_TTL_MS);
    const { rows: before } = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys WHERE created_at < $1', [cutoff]);
    const expected = before[0]?.n ?? -1;

    const purged = await createIdempotency({ db: t.db, clock: t.clock }).purgeExpired();
    assert.equal(purged, expected);
    assert.ok(purged >= 3, `at least this test's three old records (got ${purged})`);

    const { rows: remainingOld } = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys WHERE created_at < $1', [cutoff]);
    assert.equal(remainingOld[0]?.n, 0);
    const { rows: mine } = await t.db.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE key = ANY($1) ORDER BY key', [
      [...oldKeys, freshKey, edgeKey],
    ]);
    assert.deepEqual(
      mine.map((r) => r.key),
      [edgeKey],
    );
    assert.equal(await createIdempotency({ db: t.db, clock: t.clock }).purgeExpired(), 0, 'a second purge finds nothing');
  });
});
