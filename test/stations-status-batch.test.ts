// EVSE status changes are committed in groups: every caller's change is
// durable when its promise settles, stale and unknown changes are refused per
// change, the newest of two changes of one EVSE wins, and each stored change
// is announced once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createIngestion, groupCommit, STATUS_COMMIT_SPACING_MS } from '../src/modules/stations/ingest.ts';
import { CATALOGUE_CHANNEL, updateEvseStatuses } from '../src/modules/stations/repository.ts';
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

/** Payloads announced on the catalogue channel from now on (the listener is connected when this resolves). */
async function listening() {
  const received: string[] = [];
  const listener = listen(ctx.db, CATALOGUE_CHANNEL, (payload) => {
    if (payload) received.push(payload);
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { received, listener };
}

describe('EVSE status group commit', () => {
  it('stores 40 concurrent changes, each announced once, each durable when answered', async () => {
    const { received, listener } = await listening();
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
      // Announced packed: a few notifications carry the 40 changes, each change once.
      const announced = () =>
        received.flatMap((payload) => {
          const parsed = JSON.parse(payload) as { kind: string; changes: { location_id: string; uid: string; status: string }[] };
          assert.equal(parsed.kind, 'evse_statuses');
          assert.ok(Buffer.byteLength(payload) < 8000, 'within PostgreSQL’s payload limit');
          return parsed.changes.map((c) => `${c.location_id}/${c.uid}/${c.status}`);
        });
      const deadline = Date.now() + 5_000;
      while (announced().length < 40 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(announced().length, 40);
      assert.equal(new Set(announced()).size, 40);
      assert.ok(received.length < 40, `fewer notifications (${received.length}) than changes`);
    } finally {
      await listener.stop();
    }
  });

  it('packs announcements below PostgreSQL’s 8000-byte payload limit, in order; each process applies a packed one in place', async () => {
    const { received, listener } = await listening();
    try {
      // 300 changes of EVSEs with 36-character ids (OCPI's longest), sent at once: several payloads.
      const long = (k: number) => `LONG${String(k).padStart(29, '0')}`;
      await ctx.ingestion.ingest({
        locations: Array.from({ length: 150 }, (_, k) => ocpiLocation({ id: long(k), lat: 49 + k / 1000, lon: 12, evses: [{}, {}] })),
      });
      const many = Array.from({ length: 300 }, (_, k) => ({
        ...change(0, 1, 'CHARGING', '2026-03-01T10:00:00Z'),
        location_id: long(k >> 1),
        uid: `${long(k >> 1)}-${(k & 1) + 1}`,
      }));
      assert.equal(many[0]?.uid.length, 35);
      assert.deepEqual(await Promise.all(many.map((c) => ctx.ingestion.updateEvseStatus(c))), Array(300).fill(true));
      const deadline = Date.now() + 5_000;
      const packs = () => received.map((p) => JSON.parse(p) as { kind: string; changes: { uid: string }[] }).filter((p) => p.kind === 'evse_statuses');
      const announced = () => packs().flatMap((p) => p.changes.map((c) => c.uid));
      while (announced().length < 300 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(
        announced(),
        many.map((c) => c.uid),
        'every change once, in order',
      );
      assert.deepEqual(packs()[0]?.changes[0], { ...many[0] }, 'each change as stored, with the stamp as the CPO wrote it');
      assert.ok(packs().length > 1 && packs().length < 30, `${packs().length} notifications`);
      for (const p of received) assert.ok(Buffer.byteLength(p) < 8000, `payload of ${Buffer.byteLength(p)} bytes`);
    } finally {
      await listener.stop();
    }

    // A packed announcement is applied in place by a process's catalogue; one it cannot apply rebuilds it.
    await ctx.catalogue.reload();
    const evse = (location: number, k: number) => ctx.catalogue.evse(`DE*ABC*EB${location}${k}`)?.status;
    assert.equal(evse(7, 1), 'CHARGING');
    const packed = (changes: ReturnType<typeof change>[]) => JSON.stringify({ kind: 'evse_statuses', changes });
    await ctx.catalogue.onChange(packed([change(7, 1, 'OUTOFORDER', '2026-04-01T00:00:00Z'), change(7, 2, 'BLOCKED', '2026-04-01T00:00:00Z')]));
    assert.equal(evse(7, 1), 'OUTOFORDER');
    assert.equal(evse(7, 2), 'BLOCKED');
    // An EVSE this catalogue does not know (stored by another process since its last rebuild): a rebuild from the database.
    await ctx.catalogue.onChange(
      packed([change(8, 1, 'AVAILABLE', '2026-04-01T00:00:00Z'), { ...change(8, 1, 'AVAILABLE', '2026-04-01T00:00:00Z'), uid: 'NEW' }]),
    );
    assert.equal(evse(7, 1), 'CHARGING', 'rebuilt from the database (the in-place changes above were never stored)');
  });

  it('answers false for an unknown EVSE and an older change, per change in one batch', async () => {
    // One batch, written directly (the queue writes a change arriving on an idle queue alone).
    const results = await updateEvseStatuses(ctx.db, [
      change(1, 1, 'AVAILABLE', '2026-03-02T00:00:00Z'),
      change(2, 1, 'AVAILABLE', '2026-02-01T00:00:00Z'),
      { ...change(3, 1, 'AVAILABLE', '2026-03-02T00:00:00Z'), uid: 'nope' },
    ]);
    assert.deepEqual(results, [true, false, false]);
    const stale = await ctx.db.query("SELECT status FROM ocpi_evses WHERE uid = 'B2-1'");
    assert.equal(stale.rows[0]?.status, 'CHARGING');
    // Through the queue, each caller gets its own answer.
    const queued = await Promise.all([
      ctx.ingestion.updateEvseStatus(change(1, 2, 'AVAILABLE', '2026-03-02T00:00:00Z')),
      ctx.ingestion.updateEvseStatus(change(2, 2, 'AVAILABLE', '2026-02-01T00:00:00Z')),
      ctx.ingestion.updateEvseStatus({ ...change(3, 2, 'AVAILABLE', '2026-03-02T00:00:00Z'), uid: 'nope' }),
    ]);
    assert.deepEqual(queued, [true, false, false]);
  });

  it('keeps the newest of two changes of one EVSE in a batch, whatever their order', async () => {
    const results = await updateEvseStatuses(ctx.db, [
      change(5, 1, 'OUTOFORDER', '2026-03-05T00:00:00Z'),
      change(5, 1, 'BLOCKED', '2026-03-04T00:00:00Z'),
      change(6, 1, 'BLOCKED', '2026-03-04T00:00:00Z'),
      change(6, 1, 'OUTOFORDER', '2026-03-05T00:00:00Z'),
    ]);
    assert.deepEqual(results, [true, false, false, true]);
    const rows = await ctx.db.query("SELECT uid, status, data->>'last_updated' AS stamp FROM ocpi_evses WHERE uid IN ('B5-1', 'B6-1') ORDER BY uid");
    assert.deepEqual(
      rows.rows.map((r) => [r.uid, r.status, r.stamp]),
      [
        ['B5-1', 'OUTOFORDER', '2026-03-05T00:00:00Z'],
        ['B6-1', 'OUTOFORDER', '2026-03-05T00:00:00Z'],
      ],
    );
  });

  it('refuses an invalid status or timestamp before queueing it', async () => {
    await assert.rejects(ctx.ingestion.updateEvseStatus(change(1, 1, 'ASLEEP', '2026-03-06T00:00:00Z')), /status/);
    await assert.rejects(ctx.ingestion.updateEvseStatus(change(1, 1, 'AVAILABLE', 'yesterday')), /last_updated/);
    // Stamps JavaScript reads but PostgreSQL would refuse, failing every change written with them.
    for (const stamp of ['1', '2026', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-03-01T24:00:00Z', new Date(0).toString()]) {
      await assert.rejects(ctx.ingestion.updateEvseStatus(change(1, 1, 'AVAILABLE', stamp)), /last_updated/, stamp);
    }
    assert.equal(await ctx.ingestion.updateEvseStatus(change(1, 1, 'AVAILABLE', '2026-03-07T01:02:03.456+02:00')), true, 'an offset is fine');
  });
});

describe('status changes racing location rewrites', () => {
  it('loses no status change to a concurrent rewrite of its location, and an older PUT cannot undo it', async () => {
    for (let round = 0; round < 15; round++) {
      // After a quiet spell, so the status change is written at once and races the rewrite (not spaced after the last round's).
      await new Promise((resolve) => setTimeout(resolve, STATUS_COMMIT_SPACING_MS + 5));
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
    const group = groupCommit<number, number>(
      async (items) => {
        batches.push(items);
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (fail) throw new Error('write failed');
        return items.map((i) => i * 2);
      },
      { max: 3 },
    );
    const first = group.add(1);
    const rest = [2, 3, 4, 5].map((i) => group.add(i));
    assert.deepEqual(await Promise.all([first, ...rest]), [2, 4, 6, 8, 10]);
    assert.deepEqual(batches, [[1], [2, 3, 4], [5]]);
    fail = true;
    await assert.rejects(group.add(6), /write failed/);
    fail = false;
    assert.equal(await group.add(7), 14, 'the next batch is written after a failure');
  });

  it('starts at most one batch per spacing under a stream of items, and writes a lone item at once', async () => {
    const SPACING = 300;
    const started: { at: number; items: number[] }[] = [];
    const group = groupCommit<number, number>(
      async (items) => {
        started.push({ at: performance.now(), items });
        return items;
      },
      { spacingMs: SPACING },
    );
    const t0 = performance.now();
    await group.add(1);
    assert.ok((started[0]?.at ?? Number.POSITIVE_INFINITY) - t0 < SPACING / 2, 'the first item was written without waiting');
    // A stream: one item every 10 ms for about two spacings.
    const stream: Promise<number>[] = [];
    const streamStarted = performance.now();
    for (let i = 2; i <= 60; i++) {
      stream.push(group.add(i));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.deepEqual(
      await Promise.all(stream),
      Array.from({ length: 59 }, (_, k) => k + 2),
      'every item written, each answered its own result',
    );
    assert.deepEqual(
      started.flatMap((s) => s.items),
      Array.from({ length: 60 }, (_, k) => k + 1),
      'every item written once, in order',
    );
    for (let k = 1; k < started.length; k++) {
      const gap = (started[k] as { at: number }).at - (started[k - 1] as { at: number }).at;
      assert.ok(gap >= SPACING - 5, `batch ${k} started ${gap.toFixed(0)} ms after the previous one`);
    }
    // One batch per spacing over the stream (however long a loaded machine made it), plus the first and the last.
    const streamMs = performance.now() - streamStarted;
    assert.ok(started.length <= 2 + Math.ceil(streamMs / SPACING), `${started.length} batches for 60 items over ${streamMs.toFixed(0)} ms`);
    // After a quiet spell longer than the spacing, an item is written at once again.
    await new Promise((resolve) => setTimeout(resolve, SPACING + 50));
    const t1 = performance.now();
    await group.add(61);
    assert.ok((started.at(-1)?.at ?? Number.POSITIVE_INFINITY) - t1 < SPACING / 2, 'a lone item after a quiet spell was written at once');
  });
});

describe('the end of a bulk load', () => {
  it('vacuums and announces; when vacuuming fails, still announces and says why', async () => {
    const { received, listener } = await listening();
    try {
      assert.deepEqual(await ctx.ingestion.finishBulkLoad(), {});
      const { rows } = await ctx.db.query<{ n: number }>("SELECT vacuum_count::int AS n FROM pg_stat_user_tables WHERE relname = 'ocpi_evses'");
      assert.ok((rows[0]?.n ?? 0) >= 1, 'ocpi_evses was vacuumed');
      // A server that cancels the vacuum (a statement_timeout, say).
      const refusing = {
        ...ctx.db,
        query: ((text: string, values?: unknown[]) =>
          /^VACUUM/.test(text) ? Promise.reject(new Error('canceling statement due to statement timeout')) : ctx.db.query(text, values)) as typeof ctx.db.query,
      };
      const result = await createIngestion({ db: refusing, clock: ctx.clock }).finishBulkLoad();
      assert.deepEqual(result, { vacuumError: 'canceling statement due to statement timeout' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(received, [JSON.stringify({ kind: 'reload' }), JSON.stringify({ kind: 'reload' })], 'both loads were announced');
    } finally {
      await listener.stop();
    }
  });
});
