// EVSE status changes are committed in groups: every caller's change is
// durable when its promise settles, stale and unknown changes are refused per
// change, the newest of two changes of one EVSE wins, and each stored change
// is announced once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { groupCommit } from '../src/modules/stations/ingest.ts';
import { CATALOGUE_CHANNEL } from '../src/modules/stations/repository.ts';
import { listen } from '../src/platform/db.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { ocpiLocation } from './stations-fixtures.ts';

let ctx: TestContext;

before(async () => {
  ctx = await setupTestApp();
  const locations = Array.from({ length: 20 }, (_, i) => ocpiLocation({ id: `B${i}`, lat: 48 + i / 100, lon: 11, evses: [{}, {}] }));
  await ctx.ingestion.ingest({ locations });
});
after(() => ctx.close());

const change = (location: number, evse: number, status: string, at: string) => ({
  country_code: 'DE',
  party_id: 'ABC',
  location_id: `B${location}`,
  uid: `B${location}-${evse}`,
  status,
  last_updated: at,
});

describe('EVSE status group commit', () => {
  it('stores 40 concurrent changes, each announced once, each durable when answered', async () => {
    const received: string[] = [];
    const listener = listen(ctx.db, CATALOGUE_CHANNEL, (payload) => {
      if (payload) received.push(payload);
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    try {
      const changes = Array.from({ length: 40 }, (_, k) => change(k % 20, Math.floor(k / 20) + 1, 'CHARGING', '2026-03-01T10:00:00Z'));
      const results = await Promise.all(
        changes.map(async (c) => {
          const stored = await ctx.ingestion.updateEvseStatus(c);
          const row = await ctx.db.query('SELECT status FROM ocpi_evses WHERE location_id = $1 AND uid = $2', [c.location_id, c.uid]);
          assert.equal(row.rows[0]?.status, 'CHARGING', 'durable once answered');
          return stored;
        }),
      );
      assert.deepEqual(results, Array(40).fill(true));
      const deadline = Date.now() + 5_000;
      while (received.length < 40 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(received.length, 40);
      assert.equal(new Set(received).size, 40);
    } finally {
      await listener.stop();
    }
  });

  it('answers false for an unknown EVSE and an older change, per change in one batch', async () => {
    const results = await Promise.all([
      ctx.ingestion.updateEvseStatus(change(1, 1, 'AVAILABLE', '2026-03-02T00:00:00Z')),
      ctx.ingestion.updateEvseStatus(change(2, 1, 'AVAILABLE', '2026-02-01T00:00:00Z')),
      ctx.ingestion.updateEvseStatus({ ...change(3, 1, 'AVAILABLE', '2026-03-02T00:00:00Z'), uid: 'nope' }),
    ]);
    assert.deepEqual(results, [true, false, false]);
    const stale = await ctx.db.query("SELECT status FROM ocpi_evses WHERE uid = 'B2-1'");
    assert.equal(stale.rows[0]?.status, 'CHARGING');
  });

  it('keeps the newest of two changes of one EVSE in a batch, whatever their order', async () => {
    const results = await Promise.all([
      ctx.ingestion.updateEvseStatus(change(5, 1, 'OUTOFORDER', '2026-03-05T00:00:00Z')),
      ctx.ingestion.updateEvseStatus(change(5, 1, 'BLOCKED', '2026-03-04T00:00:00Z')),
    ]);
    const row = await ctx.db.query("SELECT status, data->>'last_updated' AS stamp FROM ocpi_evses WHERE uid = 'B5-1'");
    assert.equal(row.rows[0]?.status, 'OUTOFORDER');
    assert.equal(row.rows[0]?.stamp, '2026-03-05T00:00:00Z');
    assert.equal(results[0], true);
  });

  it('refuses an invalid status or timestamp before queueing it', async () => {
    await assert.rejects(ctx.ingestion.updateEvseStatus(change(1, 1, 'ASLEEP', '2026-03-06T00:00:00Z')), /status/);
    await assert.rejects(ctx.ingestion.updateEvseStatus(change(1, 1, 'AVAILABLE', 'yesterday')), /last_updated/);
  });
});

describe('status changes racing location rewrites', () => {
  it('loses no status change to a concurrent rewrite of its location, and an older PUT cannot undo it', async () => {
    for (let round = 0; round < 15; round++) {
      const stamp = new Date(Date.parse('2026-04-01T00:00:00Z') + round * 60_000).toISOString();
      const status = round % 2 === 0 ? 'CHARGING' : 'AVAILABLE';
      await Promise.all([
        ctx.ingestion.changeLocation({ country_code: 'DE', party_id: 'ABC', id: 'B7' }, (stored) =>
          stored ? { ...stored, name: `Round ${round}` } : undefined,
        ),
        ctx.ingestion.updateEvseStatus(change(7, 2, status, stamp)),
      ]);
      const location = await ctx.ingestion.findLocation({ country_code: 'DE', party_id: 'ABC', id: 'B7' });
      assert.equal(location?.name, `Round ${round}`);
      assert.equal(location?.evses?.find((e) => e.uid === 'B7-2')?.status, status, `round ${round}: the status survived`);
      assert.ok(Date.parse(location?.last_updated ?? '') >= Date.parse(stamp), 'the location moved with its EVSE');
    }
    const stale = ocpiLocation({ id: 'B7', lat: 48.07, lon: 11, evses: [{}, { status: 'OUTOFORDER' }] });
    await ctx.ingestion.ingest({ locations: [{ ...stale, last_updated: '2026-04-01T00:05:00Z' }] });
    const after = await ctx.ingestion.findLocation({ country_code: 'DE', party_id: 'ABC', id: 'B7' });
    assert.notEqual(after?.evses?.find((e) => e.uid === 'B7-2')?.status, 'OUTOFORDER', 'an older PUT of the location was ignored');
  });
});

describe('groupCommit', () => {
  it('writes items added during a write as the next batch, and fails only the batch that failed', async () => {
    const batches: number[][] = [];
    let fail = false;
    const group = groupCommit<number, number>(async (items) => {
      batches.push(items);
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (fail) throw new Error('write failed');
      return items.map((i) => i * 2);
    }, 3);
    const first = group.add(1);
    const rest = [2, 3, 4, 5].map((i) => group.add(i));
    assert.deepEqual(await Promise.all([first, ...rest]), [2, 4, 6, 8, 10]);
    assert.deepEqual(batches, [[1], [2, 3, 4], [5]]);
    fail = true;
    await assert.rejects(group.add(6), /write failed/);
    fail = false;
    assert.equal(await group.add(7), 14, 'the next batch is written after a failure');
  });
});
