// A user's change queues its OCPI token push (src/modules/ocpi/tokens.ts userChanged) in one statement inside the
// change's transaction: exactly one push per connected CPO that receives tokens, none for the others, the newest
// token replacing one still waiting; nothing but that one statement when no CPO receives tokens.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TokenUserRow } from '../src/modules/users/repository.ts';
import type { Queryable } from '../src/platform/db.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { registerPeer } from './ocpi-support.ts';

let t: TestContext;
let token: string;

before(async () => {
  t = await setupTestApp();
  ({ token } = await t.newClient());
});
after(() => t.close());

const LIST = '/api/v1/users/';
const receives = (name: string) => [{ identifier: 'tokens', role: 'RECEIVER' as const, url: `https://${name}.example/ocpi/2.2.1/tokens` }];

interface Queued {
  name: string;
  method: string;
  path: string;
  body: { uid: string; valid: boolean; language: string; last_updated: string };
  attempts: number;
}

async function queuedFor(userId: string): Promise<Queued[]> {
  const { rows } = await t.db.query<Queued>(
    `SELECT c.name, o.method, o.path, o.body, o.attempts FROM ocpi_outbox o JOIN ocpi_connections c ON c.id = o.connection_id
      WHERE o.module = 'tokens' AND o.dedupe_key = $1 ORDER BY c.name`,
    [`token:${userId}`],
  );
  return rows;
}

/** A Queryable that counts the statements sent through it. */
function counting(db: Queryable): Queryable & { statements: string[] } {
  const statements: string[] = [];
  return {
    statements,
    query: (text, values) => {
      statements.push(typeof text === 'string' ? text : text.text);
      return db.query(text, values);
    },
  };
}

describe('token pushes queued by user changes', () => {
  test('with no CPO receiving tokens, the hook is one statement and queues nothing', async () => {
    const user: TokenUserRow = { id: '00000000-0000-4000-8000-000000000001', locale: 'en', deleted: false, last_updated: t.clock.now() };
    const tx = counting(t.db);
    await t.ocpi.userChanged(tx, [user]);
    assert.equal(tx.statements.length, 1);
    assert.deepEqual(await queuedFor(user.id), []);
  });

  test('one push per connected CPO receiving tokens; none for a CPO without a tokens receiver, a disconnected or an invited one', async () => {
    await registerPeer(t.ocpi, t, { name: 'cpo-a', parties: [{ country_code: 'NL', party_id: 'AAA' }], endpoints: receives('cpo-a') });
    await registerPeer(t.ocpi, t, { name: 'cpo-b', parties: [{ country_code: 'NL', party_id: 'BBB' }], endpoints: receives('cpo-b') });
    await registerPeer(t.ocpi, t, {
      name: 'cpo-no-tokens',
      parties: [{ country_code: 'NL', party_id: 'CCC' }],
      endpoints: [{ identifier: 'tokens', role: 'SENDER', url: 'https://cpo-c.example/ocpi/2.2.1/tokens' }],
    });
    await registerPeer(t.ocpi, t, { name: 'cpo-gone', parties: [{ country_code: 'NL', party_id: 'DDD' }], endpoints: receives('cpo-gone') });
    await t.db.query(`UPDATE ocpi_connections SET status = 'disconnected' WHERE name = 'cpo-gone'`);
    await t.ocpi.connections.invite({ name: 'cpo-invited' });

    const created = await t.call('POST', LIST, { token, body: { locale: 'en' } });
    assert.equal(created.status, 201, created.text);
    const id: string = created.body.id;
    const first = await queuedFor(id);
    assert.deepEqual(
      first.map((q) => [q.name, q.method, q.path, q.body.uid, q.body.valid, q.body.language, q.attempts]),
      [
        ['cpo-a', 'PUT', `/DE/CAX/${id}?type=APP_USER`, id, true, 'en', 0],
        ['cpo-b', 'PUT', `/DE/CAX/${id}?type=APP_USER`, id, true, 'en', 0],
      ],
    );
    assert.equal(first[0]?.body.last_updated, created.body.updated_at);

    // A change that CPOs do not see (the email) queues nothing new; a new language replaces the waiting push.
    t.clock.advance(1_000);
    assert.equal((await t.call('PATCH', `${LIST}${id}/`, { token, body: { email: 'ada@example.com' } })).status, 200);
    assert.deepEqual(await queuedFor(id), first);
    await t.db.query(`UPDATE ocpi_outbox SET attempts = 3 WHERE dedupe_key = $1`, [`token:${id}`]);
    const patched = await t.call('PATCH', `${LIST}${id}/`, { token, body: { locale: 'de' } });
    assert.equal(patched.status, 200);
    const second = await queuedFor(id);
    assert.deepEqual(
      second.map((q) => [q.name, q.body.language, q.body.last_updated, q.attempts]),
      [
        ['cpo-a', 'de', patched.body.updated_at, 0],
        ['cpo-b', 'de', patched.body.updated_at, 0],
      ],
    );

    // Deleting the user pushes the token as no longer valid.
    t.clock.advance(1_000);
    assert.equal((await t.call('DELETE', `${LIST}${id}/`, { token })).status, 204);
    assert.deepEqual(
      (await queuedFor(id)).map((q) => [q.name, q.body.valid, q.body.last_updated]),
      [
        ['cpo-a', false, t.clock.now().toISOString()],
        ['cpo-b', false, t.clock.now().toISOString()],
      ],
    );
  });

  test('a failed change queues nothing (the push commits with the change)', async () => {
    const first = await t.call('POST', LIST, { token, body: { custom_properties: { external_id: 'taken' } } });
    assert.equal(first.status, 201);
    const { rows: before } = await t.db.query<{ n: number }>(`SELECT count(*) AS n FROM ocpi_outbox WHERE module = 'tokens'`);
    assert.equal((await t.call('POST', LIST, { token, body: { custom_properties: { external_id: 'taken' } } })).status, 409);
    const { rows: afterwards } = await t.db.query<{ n: number }>(`SELECT count(*) AS n FROM ocpi_outbox WHERE module = 'tokens'`);
    assert.equal(afterwards[0]?.n, before[0]?.n);
  });
});
