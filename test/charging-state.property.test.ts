// Property-based tests of the charging session's status (src/modules/charging/state.ts): the transition table
// itself, and changeStatus, the one function that writes a status, against real PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { SessionStatus } from '../src/modules/charging/repository.ts';
import * as repo from '../src/modules/charging/repository.ts';
import { changeStatus, INITIAL_STATUS, isAllowed, nextStatus, SESSION_STATUSES, type SessionEvent, TRANSITIONS } from '../src/modules/charging/state.ts';
import { manualClock } from '../src/platform/clock.ts';
import type { Database } from '../src/platform/db.ts';
import { insertSessionFor } from './events-support.ts';
import { createTestDatabase } from './helpers.ts';

const EVENTS = Object.keys(TRANSITIONS) as SessionEvent[];
const status = fc.constantFrom(...SESSION_STATUSES);
const event = fc.constantFrom(...EVENTS);

// The changes of status a session may go through, written out once more on purpose: a change to the table that
// is not also made here fails this file. contract.md's pending -> active -> stopping -> completed and failed from
// pending, plus what the CPO's reports add (state.ts says why).
const EXPECTED: readonly (readonly [SessionStatus, SessionStatus])[] = [
  ['pending', 'active'],
  ['pending', 'stopping'],
  ['pending', 'failed'],
  ['pending', 'completed'],
  ['active', 'stopping'],
  ['active', 'failed'],
  ['active', 'completed'],
  ['stopping', 'active'],
  ['stopping', 'stopping'],
  ['stopping', 'failed'],
  ['stopping', 'completed'],
  ['failed', 'completed'],
];
const expected = (from: SessionStatus, to: SessionStatus) => EXPECTED.some(([f, t]) => f === from && t === to);

/** Where a run of events takes a session (an event the table refuses leaves the status as it is). */
function walk(events: readonly SessionEvent[], from: SessionStatus = INITIAL_STATUS): SessionStatus[] {
  const path = [from];
  for (const e of events) path.push(nextStatus(path.at(-1) as SessionStatus, e) ?? (path.at(-1) as SessionStatus));
  return path;
}

/** Shortest runs of events from the initial status to each status reachable from it. */
function shortestPaths(): Map<SessionStatus, SessionEvent[]> {
  const paths = new Map<SessionStatus, SessionEvent[]>([[INITIAL_STATUS, []]]);
  const queue: SessionStatus[] = [INITIAL_STATUS];
  for (let current = queue.shift(); current !== undefined; current = queue.shift()) {
    for (const e of EVENTS) {
      const next = nextStatus(current, e);
      if (next !== undefined && !paths.has(next)) {
        paths.set(next, [...(paths.get(current) as SessionEvent[]), e]);
        queue.push(next);
      }
    }
  }
  return paths;
}

describe('the transition table', () => {
  test('no path leads out of completed; out of failed, only the CDR leads (to completed)', () => {
    fc.assert(
      fc.property(status, fc.array(event, { maxLength: 30 }), (start, events) => {
        const path = walk(events, start);
        for (const [i, s] of path.entries()) {
          const next = path[i + 1];
          if (next === undefined) break;
          if (s === 'completed') assert.equal(next, 'completed', `left completed by ${events[i]}`);
          if (s === 'failed' && next !== 'failed') {
            assert.equal(next, 'completed', `left failed by ${events[i]}`);
            assert.equal(events[i], 'cdrReceived');
          }
        }
      }),
    );
  });

  test('every transition the table allows is reachable from the initial status', () => {
    const paths = shortestPaths();
    const allowed = EVENTS.flatMap((e) => TRANSITIONS[e].from.map((from) => ({ from, event: e, to: TRANSITIONS[e].to })));
    fc.assert(
      fc.property(fc.constantFrom(...allowed), (transition) => {
        const path = paths.get(transition.from);
        assert.ok(path, `${transition.from} cannot be reached from ${INITIAL_STATUS}`);
        // The shortest way there, then the transition itself.
        assert.deepEqual(walk([...path, transition.event]).slice(-2), [transition.from, transition.to]);
      }),
    );
  });

  test('no other transition is accepted', () => {
    fc.assert(
      fc.property(status, status, (from, to) => {
        assert.equal(isAllowed(from, to), expected(from, to), `${from} -> ${to}`);
      }),
    );
    fc.assert(
      fc.property(status, event, (from, e) => {
        const to = nextStatus(from, e);
        if (to === undefined) assert.ok(!(TRANSITIONS[e].from as readonly SessionStatus[]).includes(from));
        else assert.ok(expected(from, to), `${e}: ${from} -> ${to} is not in the contract`);
      }),
    );
  });

  test('a status is written by changeStatus only: other writes cannot name one', () => {
    // Checked by the type checker (npm run check): updateSession's changes have no status.
    const write = (q: Database) =>
      // @ts-expect-error status is not a column updateSession writes
      repo.updateSession(q, randomUUID(), { status: 'active' }, new Date());
    assert.equal(typeof write, 'function');
  });
});

describe('changeStatus on PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const clock = manualClock();

  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  /** A new session (pending, as the start saga writes it), for a user of its own. */
  async function newSession(): Promise<string> {
    const id = await insertSessionFor(database.db, randomUUID(), randomUUID(), clock.now());
    assert.equal(await statusOf(id), INITIAL_STATUS);
    return id;
  }

  // What changeStatus reads to show the session in its event: these sessions have no hold and no bill.
  const ctx = () => ({ db: database.db, clock, payments: { getHolds: async () => new Map() }, sessionCosts: async () => new Map() });
  const eventsOf = async (id: string) =>
    (await database.db.query<{ type: string }>('SELECT type FROM client_events WHERE session_id = $1 ORDER BY seq', [id])).rows.map((r) => r.type);

  const statusOf = async (id: string) =>
    (await database.db.query<{ status: SessionStatus }>('SELECT status FROM charging_sessions WHERE id = $1', [id])).rows[0]?.status;

  test('from any status, an event is written exactly when the table allows it (the UPDATE is guarded)', async () => {
    await fc.assert(
      fc.asyncProperty(status, event, async (from, e) => {
        const id = await newSession();
        // Put the row in `from` behind the module's back: the guard, not the caller, must refuse what the table does.
        await database.db.query('UPDATE charging_sessions SET status = $2 WHERE id = $1', [id, from]);
        const written = await changeStatus(ctx(), database.db, id, e, { failure_reason: 'test' });
        const to = nextStatus(from, e);
        assert.equal(written?.status, to, `${e} from ${from}`);
        assert.equal(await statusOf(id), to ?? from);
        // One event exactly when the status became another, committed with it (the pool was passed: a transaction of its own).
        assert.deepEqual(await eventsOf(id), to !== undefined && to !== from ? [`charging_session.${to}`] : []);
        if (to === undefined) {
          const { rows } = await database.db.query('SELECT failure_reason FROM charging_sessions WHERE id = $1', [id]);
          assert.equal(rows[0]?.failure_reason, null, 'a refused transition writes none of its changes either');
        }
      }),
      { numRuns: 60 },
    );
  });

  test('a run of events leaves the row where the table says, step by step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 12 }), async (events) => {
        const id = await newSession();
        const path = walk(events);
        for (const [i, e] of events.entries()) {
          await changeStatus(ctx(), database.db, id, e);
          assert.equal(await statusOf(id), path[i + 1], `after ${events.slice(0, i + 1).join(', ')}`);
        }
      }),
      { numRuns: 40 },
    );
  });

  test('a refused stop puts the session back to active: charging_session.active again, at a higher version', async () => {
    const id = await newSession();
    for (const e of ['chargingReported', 'stopAccepted', 'stopRefused'] as const) await changeStatus(ctx(), database.db, id, e);
    const { rows } = await database.db.query<{ type: string; version: number }>(
      `SELECT type, (body->'data'->'object'->>'version')::int AS version FROM client_events WHERE session_id = $1 ORDER BY seq`,
      [id],
    );
    assert.deepEqual(
      rows.map((r) => r.type),
      ['charging_session.active', 'charging_session.stopping', 'charging_session.active'],
    );
    assert.deepEqual(
      rows.map((r) => r.version),
      [2, 3, 4],
    );
  });

  test('a status change rolled back leaves no event', async () => {
    const id = await newSession();
    await assert.rejects(
      database.db.transaction(async (tx) => {
        assert.equal((await changeStatus(ctx(), tx, id, 'chargingReported'))?.status, 'active');
        assert.deepEqual(
          (await tx.query<{ type: string }>('SELECT type FROM client_events WHERE session_id = $1', [id])).rows.map((r) => r.type),
          ['charging_session.active'],
          'recorded in the transaction of the change',
        );
        throw new Error('what came after the change failed');
      }),
      /came after/,
    );
    assert.equal(await statusOf(id), 'pending');
    assert.deepEqual(await eventsOf(id), []);
  });
});
