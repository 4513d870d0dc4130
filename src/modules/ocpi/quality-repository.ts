// SQL of the data-quality record (migration 0025): per connection, module and
// rule, a count and the latest 5 examples, written in turn into 5 slots.
import type { Database } from '../../platform/db.ts';

/** Examples kept per (connection, module, rule): the latest, older ones overwritten. */
export const EXAMPLES_KEPT = 5;

export type QualityModule = 'locations' | 'tariffs' | 'sessions' | 'cdrs';

export interface QualityExample {
  object_id: string;
  part?: string;
  path: string;
  detail?: string;
}

/** What one batch of objects (a page, a push) adds for one rule: how often it applied, and its latest examples, oldest first. */
export interface RuleTally {
  rule: string;
  kind: 'normalized' | 'rejected';
  count: number;
  examples: QualityExample[];
}

export interface QualityRow {
  module: QualityModule;
  rule: string;
  kind: 'normalized' | 'rejected';
  count: number;
  first_seen: Date;
  last_seen: Date;
  /** Newest first. */
  examples: (QualityExample & { seen_at: Date })[];
}

/**
 * Adds a batch's tallies to the counts and writes its examples into the next
 * slots, in one transaction. Rows are locked in rule order, so concurrent
 * batches of one connection (a pull and a push) wait for each other instead
 * of deadlocking, and each gets its own slots.
 */
export async function addQuality(db: Database, connectionId: string, module: QualityModule, tallies: RuleTally[], at: Date): Promise<void> {
  if (tallies.length === 0) return;
  const sorted = [...tallies].sort((a, b) => (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ rule: string; count: string }>(
      `INSERT INTO ocpi_quality_counts AS q (connection_id, module, rule, kind, count, first_seen, last_seen)
       SELECT $1, $2, t.rule, t.kind, t.n, $3, $3
         FROM unnest($4::text[], $5::text[], $6::bigint[]) WITH ORDINALITY AS t(rule, kind, n, i)
        ORDER BY t.i
       ON CONFLICT (connection_id, module, rule) DO UPDATE
         SET count = q.count + EXCLUDED.count, kind = EXCLUDED.kind, last_seen = greatest(q.last_seen, EXCLUDED.last_seen)
       RETURNING rule, count`,
      [connectionId, module, at, sorted.map((t) => t.rule), sorted.map((t) => t.kind), sorted.map((t) => t.count)],
    );
    const totals = new Map(rows.map((r) => [r.rule, Number(r.count)]));
    const examples = sorted.flatMap((t) => {
      const kept = t.examples.slice(-EXAMPLES_KEPT);
      const total = totals.get(t.rule) ?? kept.length;
      // The batch's examples take the slots of its last applications: the newest lands in slot (total - 1) mod 5.
      return kept.map((e, i) => ({
        rule: t.rule,
        seq: total - kept.length + i + 1,
        slot: (((total - kept.length + i) % EXAMPLES_KEPT) + EXAMPLES_KEPT) % EXAMPLES_KEPT,
        object_id: e.object_id.slice(0, 120),
        part: e.part?.slice(0, 80) ?? null,
        path: e.path.slice(0, 160),
        detail: e.detail?.slice(0, 200) ?? null,
      }));
    });
    if (examples.length === 0) return;
    await tx.query(
      `INSERT INTO ocpi_quality_examples AS e (connection_id, module, rule, slot, seq, object_id, part, path, detail, seen_at)
       SELECT $1, $2, x.rule, x.slot, x.seq, x.object_id, x.part, x.path, x.detail, $3
         FROM jsonb_to_recordset($4::jsonb) AS x(rule text, slot smallint, seq bigint, object_id text, part text, path text, detail text)
       ON CONFLICT (connection_id, module, rule, slot) DO UPDATE
         SET seq = EXCLUDED.seq, object_id = EXCLUDED.object_id, part = EXCLUDED.part, path = EXCLUDED.path, detail = EXCLUDED.detail, seen_at = EXCLUDED.seen_at`,
      [connectionId, module, at, JSON.stringify(examples)],
    );
  });
}

/** A connection's counts by module and rule, with their examples (newest first). */
export async function listQuality(db: Database, connectionId: string): Promise<QualityRow[]> {
  const { rows } = await db.query<Omit<QualityRow, 'count' | 'examples'> & { count: string; examples: (QualityExample & { seen_at: string })[] }>(
    `SELECT q.module, q.rule, q.kind, q.count, q.first_seen, q.last_seen,
            coalesce((SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object('object_id', e.object_id, 'part', e.part, 'path', e.path,
                                                                            'detail', e.detail, 'seen_at', e.seen_at))
                                       ORDER BY e.seq DESC)
                        FROM ocpi_quality_examples e
                       WHERE e.connection_id = q.connection_id AND e.module = q.module AND e.rule = q.rule), '[]'::jsonb) AS examples
       FROM ocpi_quality_counts q
      WHERE q.connection_id = $1
      ORDER BY q.kind DESC, q.count DESC, q.module, q.rule`,
    [connectionId],
  );
  return rows.map((r) => ({ ...r, count: Number(r.count), examples: r.examples.map((e) => ({ ...e, seen_at: new Date(e.seen_at) })) }));
}
