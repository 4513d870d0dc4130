// Notifications after commit (src/platform/notify.ts) on a real PostgreSQL: what a transaction of
// Database.transaction notifies is heard only once it has committed, never when it rolls back, and the
// notifications of transactions that commit together arrive merged in few NOTIFYs, every note heard.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Database, listen } from '../src/platform/db.ts';
import { notifyAfterCommit, readNotes } from '../src/platform/notify.ts';
import { createTestDatabase } from './helpers.ts';

let db: Database;
let drop: () => Promise<void>;

before(async () => {
  ({ db, drop } = await createTestDatabase());
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

  it('are refused outside a transaction of Database.transaction: the caller notifies in its own statement', () => {
    assert.equal(notifyAfterCommit(db, 'notify_test_pool', 'x'), false);
  });

  it('reads payloads tolerantly: an array of strings, else "anything"', () => {
    assert.deepEqual(readNotes('["a",""]'), ['a', '']);
    for (const payload of [undefined, '', 'tx-commit', '{"seq":1}', '[1]', '[']) assert.equal(readNotes(payload), undefined, String(payload));
  });
});
