// The client events outbox (src/modules/events/outbox.ts) on a real PostgreSQL: an event commits or rolls back with
// the transaction it is recorded in, it is fanned out to exactly the client's enabled endpoints that subscribe to
// its type (or '*'), a ping reaches only its endpoint, and the NOTIFY arrives after commit, not before.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { EVENTS_CHANNEL, type EventBody, purgeEvents, recordEvent } from '../src/modules/events/outbox.ts';
import { type Database, listen } from '../src/platform/db.ts';
import { createTestDatabase } from './helpers.ts';

let db: Database;
let drop: () => Promise<void>;
const now = new Date('2026-11-24T10:00:00Z');

before(async () => {
  ({ db, drop } = await createTestDatabase());
});
after(() => drop());

async function newClient(): Promise<string> {
  const id = randomUUID();
  await db.query(`INSERT INTO api_clients (id, name, created_at) VALUES ($1, $2, $3)`, [id, `client ${id}`, now]);
  return id;
}

async function newEndpoint(clientId: string, events: string[], enabled = true): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO webhook_endpoints (id, client_id, url, events, enabled, created_at, updated_at) VALUES ($1, $2, 'https://example.org/hook', $3, $4, $5, $5)`,
    [id, clientId, events, enabled, now],
  );
  return id;
}

async function deliveriesOf(eventId: string): Promise<string[]> {
  const { rows } = await db.query<{ endpoint_id: string }>('SELECT endpoint_id FROM webhook_deliveries WHERE event_id = $1 ORDER BY endpoint_id', [eventId]);
  return rows.map((r) => r.endpoint_id);
}

describe('client events outbox', () => {
  it('fans an event out to the enabled endpoints of its client that subscribe to its type', async () => {
    const client = await newClient();
    const other = await newClient();
    const all = await newEndpoint(client, ['*']);
    const typed = await newEndpoint(client, ['invoice.created', 'charging_session.active']);
    await newEndpoint(client, ['debt.created']);
    await newEndpoint(client, ['*'], false);
    await newEndpoint(other, ['*']);
    const userId = randomUUID();
    const recorded = await db.transaction((tx) =>
      recordEvent(tx, { clientId: client, userId, type: 'invoice.created', object: { id: 'inv', total: 1234 } }, now),
    );
    assert.equal(recorded.deliveries, 2);
    assert.deepEqual(await deliveriesOf(recorded.body.id), [all, typed].sort());
    const { rows } = await db.query<{ body: EventBody; client_id: string; type: string }>('SELECT body, client_id, type FROM client_events WHERE seq = $1', [
      recorded.seq,
    ]);
    assert.deepEqual(rows[0]?.body, {
      id: recorded.body.id,
      type: 'invoice.created',
      created_at: now.toISOString(),
      data: { object: { id: 'inv', total: 1234 } },
      user_id: userId,
    });
    assert.equal(rows[0]?.client_id, client);
  });

  it('rolls back with the change it belongs to', async () => {
    const client = await newClient();
    await newEndpoint(client, ['*']);
    let eventId = '';
    await assert.rejects(
      db.transaction(async (tx) => {
        eventId = (await recordEvent(tx, { clientId: client, userId: null, type: 'user.deleted', object: {} }, now)).body.id;
        throw new Error('the change failed');
      }),
      /the change failed/,
    );
    const { rows } = await db.query('SELECT 1 FROM client_events WHERE id = $1', [eventId]);
    assert.equal(rows.length, 0);
    assert.deepEqual(await deliveriesOf(eventId), []);
  });

  it('sends a ping to the one endpoint named, even one subscribed to nothing of it', async () => {
    const client = await newClient();
    const target = await newEndpoint(client, ['debt.paid']);
    await newEndpoint(client, ['*']);
    const recorded = await recordEvent(db, { clientId: client, userId: null, type: 'ping', object: { message: 'ping' }, endpointId: target }, now);
    assert.deepEqual(await deliveriesOf(recorded.body.id), [target]);
  });

  it('notifies listeners after commit, naming the session', async () => {
    const client = await newClient();
    const sessionId = randomUUID();
    const heard: string[] = [];
    const listener = listen(db, EVENTS_CHANNEL, (payload) => {
      if (payload) heard.push(payload);
    });
    try {
      // LISTEN is issued asynchronously: wait until a notification of our own comes through.
      const deadline = Date.now() + 5_000;
      while (heard.length === 0 && Date.now() < deadline) {
        await db.query(`SELECT pg_notify($1, 'warm-up')`, [EVENTS_CHANNEL]);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      heard.length = 0;
      let seq = 0;
      await db.transaction(async (tx) => {
        seq = (await recordEvent(tx, { clientId: client, userId: randomUUID(), type: 'charging_session.active', object: {}, sessionId }, now)).seq;
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.deepEqual(heard, [], 'nothing is heard before the commit');
      });
      const until = Date.now() + 5_000;
      while (heard.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(seq > 0);
      assert.deepEqual(heard, [JSON.stringify([sessionId])]);
    } finally {
      await listener.stop();
    }
  });

  it('forgets old events whose deliveries are finished, with their log; an event with a delivery still due stays', async () => {
    const client = await newClient();
    const endpoint = await newEndpoint(client, ['*']);
    const old = new Date('2026-09-01T00:00:00Z');
    const delivered = await recordEvent(db, { clientId: client, userId: null, type: 'user.deleted', object: {} }, old);
    const retrying = await recordEvent(db, { clientId: client, userId: null, type: 'user.deleted', object: {} }, old);
    const recent = await recordEvent(db, { clientId: client, userId: null, type: 'user.deleted', object: {} }, now);
    await db.query(`UPDATE webhook_deliveries SET next_attempt_at = NULL, delivered_at = $2 WHERE event_id = $1`, [delivered.body.id, old]);
    await db.query(`UPDATE webhook_deliveries SET next_attempt_at = NULL, delivered_at = $2 WHERE event_id = $1`, [recent.body.id, now]);
    await db.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, finished_at, status_code)
       SELECT id, 1, $2, $2, 200 FROM webhook_deliveries WHERE event_id = $1`,
      [delivered.body.id, old],
    );
    const attemptedDeliveries = (await db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE event_id = $1', [delivered.body.id])).rows.map(
      (r) => r.id,
    );
    assert.equal(attemptedDeliveries.length, 1);
    const forgotten = await purgeEvents(db, new Date(now.getTime() - 30 * 24 * 3_600_000), 1);
    assert.ok(forgotten >= 1);
    const left = async (eventId: string) => (await db.query('SELECT 1 FROM client_events WHERE id = $1', [eventId])).rows.length;
    assert.equal(await left(delivered.body.id), 0, 'an old event delivered everywhere is forgotten');
    assert.deepEqual(await deliveriesOf(delivered.body.id), [], 'with its deliveries');
    assert.equal(await left(retrying.body.id), 1, 'an old event still being retried stays');
    assert.deepEqual(await deliveriesOf(retrying.body.id), [endpoint]);
    assert.equal(await left(recent.body.id), 1, 'a recent one stays');
    const { rows } = await db.query('SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = ANY ($1)', [attemptedDeliveries]);
    assert.equal(rows.length, 0, 'and their attempts');
  });
});
