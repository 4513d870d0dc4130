// Notifications after commit (src/platform/notify.ts) on a real PostgreSQL: what a transaction of
// Database.transaction notifies is heard only once it has committed, never when it rolls back, and the
// notifications of transactions that commit together arrive merged in few NOTIFYs, every note heard.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENTS_CHANNEL, recordEvent } from '../src/modules/events/outbox.ts';
import { createDatabase, type Database, listen } from '../src/platform/db.ts';
import { enqueue, JOBS_CHANNEL } from '../src/platform/jobs.ts';
import { notifyAfterCommit, readNotes } from '../src/platform/notify.ts';
import { createTestDatabase } from './helpers.ts';

let db: Database;
let url: string;
let drop: () => Promise<void>;

before(async () => {
  ({ db, url, drop } = await createTestDatabase());
});
after(() => drop());

/** Listens on `channel` until a warm-up notification came through (LISTEN is issued asynchronously). */
async function hearing(channel: string): Promise<{ payloads: (string | undefined)[]; stop(): Promise<void> }> {
  const payloads: (string | undefined)[] = [];
  const listener = listen(db, channel, (payload) => payloads.push(payload));
  await listener.ready;
  await db.query('SELECT pg_notify($1, $2)', [channel, 'warm-up']);
  for (let i = 0; i < 250 && !payloads.includes('warm-up'); i++) await sleep(20);
  payloads.length = 0;
  return { payloads, stop: () => listener.stop() };
}

async function waitUntil(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 250 && !done(); i++) await sleep(20);
  assert.ok(done(), `waited 5 s for ${what}`);
}

describe('notifications after commit', () => {
  it('are heard only after the commit, naming every note once, and never for a transaction that rolled back', async () => {
    const heard = await hearing('notify_test_commit');
    try {
      await db.transaction(async (tx) => {
        assert.equal(notifyAfterCommit(tx, 'notify_test_commit', 'a'), true);
        assert.equal(notifyAfterCommit(tx, 'notify_test_commit', 'a'), true);
        assert.equal(notifyAfterCommit(tx, 'notify_test_commit', 'b'), true);
        await sleep(100);
        assert.deepEqual(heard.payloads, [], 'nothing before the commit');
      });
      await assert.rejects(
        db.transaction(async (tx) => {
          notifyAfterCommit(tx, 'notify_test_commit', 'rolled-back');
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      // A statement failed and the work caught its error: PostgreSQL answers the COMMIT with ROLLBACK. The
      // transaction is a failure (not taken for committed) and notifies nothing.
      await db.query('CREATE TABLE IF NOT EXISTS notify_test_rows (n int PRIMARY KEY)');
      await assert.rejects(
        db.transaction(async (tx) => {
          notifyAfterCommit(tx, 'notify_test_commit', 'aborted');
          await tx.query('INSERT INTO notify_test_rows VALUES (1)');
          await tx.query('SELECT 1 / 0').catch(() => {});
        }),
        /rolled back at COMMIT/,
      );
      assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM notify_test_rows')).rows[0]?.n, 0);
      await waitUntil(() => heard.payloads.length > 0, 'the notification');
      await sleep(150);
      assert.deepEqual(heard.payloads, ['["a","b"]']);
    } finally {
      await heard.stop();
    }
  });

  it('merges the notifications of transactions that commit together into few NOTIFYs, losing none', async () => {
    const heard = await hearing('notify_test_merge');
    try {
      const notes = Array.from({ length: 60 }, (_, i) => `session-${i}`);
      await Promise.all(
        notes.map((note) =>
          db.transaction(async (tx) => {
            await tx.query('SELECT 1');
            notifyAfterCommit(tx, 'notify_test_merge', note);
          }),
        ),
      );
      const union = () => new Set(heard.payloads.flatMap((p) => readNotes(p) ?? []));
      await waitUntil(() => union().size === notes.length, 'every note');
      await sleep(150);
      assert.deepEqual([...union()].sort(), [...notes].sort());
      // One NOTIFY at most every 20 ms: 60 commits of a pool of 10 connections take far fewer windows than commits.
      assert.ok(heard.payloads.length < notes.length / 2, `${heard.payloads.length} NOTIFYs for ${notes.length} commits`);
    } finally {
      await heard.stop();
    }
  });

  it('say "anything" (an empty payload) when the notes would not fit one NOTIFY', async () => {
    const heard = await hearing('notify_test_many');
    try {
      await db.transaction(async (tx) => {
        for (let i = 0; i < 500; i++) notifyAfterCommit(tx, 'notify_test_many', `a-rather-long-note-standing-for-a-session-${i}`);
      });
      await waitUntil(() => heard.payloads.length > 0, 'the notification');
      assert.equal(readNotes(heard.payloads[0]), undefined);
    } finally {
      await heard.stop();
    }
  });

  it('are refused outside a transaction of Database.transaction: the caller notifies in its own statement', async () => {
    assert.equal(notifyAfterCommit(db, 'notify_test_pool', 'x'), false);
    // What the modules do then: an event or a job recorded on the pool notifies at its own statement's commit.
    const events = await hearing(EVENTS_CHANNEL);
    const jobs = await hearing(JOBS_CHANNEL);
    try {
      const sessionId = randomUUID();
      const now = new Date();
      await recordEvent(db, { clientId: randomUUID(), userId: null, type: 'charging_session.pending', object: {}, sessionId }, now);
      await enqueue(db, { queue: 'notify-test-queue', payload: {} }, now);
      await waitUntil(() => events.payloads.length > 0 && jobs.payloads.length > 0, 'both notifications');
      assert.deepEqual(events.payloads, [JSON.stringify([sessionId])]);
      assert.deepEqual(jobs.payloads, ['["notify-test-queue"]']);
    } finally {
      await events.stop();
      await jobs.stop();
    }
  });

  it('a transaction rolled back at COMMIT is a database failure its observer is told of (25P02)', async () => {
    const seen: Error[] = [];
    const observed = createDatabase(url, { max: 1, onError: (error) => seen.push(error) });
    try {
      await assert.rejects(
        observed.transaction(async (tx) => {
          await tx.query('SELECT 1 / 0').catch(() => {});
        }),
        (error: Error & { code?: string }) => error.code === '25P02',
      );
      assert.deepEqual(
        seen.map((error) => (error as Error & { code?: string }).code),
        ['25P02'],
      );
    } finally {
      await observed.close();
    }
  });

  it('pending when the database is closed are sent first, not dropped', async () => {
    const heard = await hearing('notify_test_close');
    const other = createDatabase(url, { max: 2 });
    try {
      // A first NOTIFY just sent: the next one waits out the coalescing interval, and the close comes within it.
      await other.transaction(async (tx) => notifyAfterCommit(tx, 'notify_test_close', 'first'));
      await waitUntil(() => heard.payloads.length > 0, 'the first notification');
      await other.transaction(async (tx) => notifyAfterCommit(tx, 'notify_test_close', 'pending at the close'));
      await other.close();
      await waitUntil(() => heard.payloads.length > 1, 'the notification pending at the close');
      assert.deepEqual(heard.payloads, ['["first"]', '["pending at the close"]']);
    } finally {
      await heard.stop();
    }
  });

  it('reads payloads tolerantly: an array of strings, else "anything"', () => {
    assert.deepEqual(readNotes('["a",""]'), ['a', '']);
    for (const payload of [undefined, '', 'tx-commit', '{"seq":1}', '[1]', '[']) assert.equal(readNotes(payload), undefined, String(payload));
  });
});
