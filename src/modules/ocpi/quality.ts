// The record of what the tolerant reader made of a connection's objects: the
// findings of a page or a push, tallied by rule (counts and the latest
// examples with the objects' ids) and added to the connection's record in one
// write (quality-repository.ts). `charging-access cpo quality NAME` shows it.
import { type Finding, RULES, type RuleName } from '../../ocpi-protocol/reader/rules.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { addQuality, EXAMPLES_KEPT, listQuality, type QualityModule, type QualityRow, type RuleTally } from './quality-repository.ts';

export type { QualityModule, QualityRow } from './quality-repository.ts';

/** The findings of one object, with the id it is known by. */
export interface ObjectFindings {
  objectId: string;
  findings: readonly Finding[];
}

/** country_code*party_id*id of an object as it was sent ("?" for what is missing or not a string). */
export function objectIdOf(object: unknown, fallback?: { country_code: string; party_id: string; id?: string }): string {
  const o = (object !== null && typeof object === 'object' ? object : {}) as Record<string, unknown>;
  const text = (value: unknown, other?: string) => (typeof value === 'string' && value.trim() !== '' ? value : (other ?? '?'));
  return `${text(o.country_code, fallback?.country_code).toUpperCase()}*${text(o.party_id, fallback?.party_id).toUpperCase()}*${text(o.id, fallback?.id)}`;
}

/** The findings of many objects, by rule: how often each applied and its latest examples (oldest first). */
export function tally(objects: readonly ObjectFindings[]): RuleTally[] {
  const byRule = new Map<RuleName, RuleTally>();
  for (const { objectId, findings } of objects) {
    for (const f of findings) {
      let t = byRule.get(f.rule);
      if (!t) {
        t = { rule: f.rule, kind: RULES[f.rule].kind, count: 0, examples: [] };
        byRule.set(f.rule, t);
      }
      t.count += 1;
      t.examples.push({
        object_id: objectId,
        path: f.path,
        ...(f.part === undefined ? {} : { part: f.part }),
        ...(f.detail === undefined ? {} : { detail: f.detail }),
      });
      if (t.examples.length > EXAMPLES_KEPT) t.examples.shift();
    }
  }
  return [...byRule.values()];
}

/** Adds the findings of a page or a push to the connection's record (nothing when there are none). */
export async function recordFindings(
  ctx: { db: Database; clock: Clock },
  connectionId: string,
  module: QualityModule,
  objects: readonly ObjectFindings[],
): Promise<void> {
  const tallies = tally(objects);
  if (tallies.length > 0) await addQuality(ctx.db, connectionId, module, tallies, ctx.clock.now());
}

export interface QualityReport {
  rules: (Omit<QualityRow, 'first_seen' | 'last_seen' | 'examples'> & {
    says: string;
    first_seen: string;
    last_seen: string;
    examples: (Omit<QualityRow['examples'][number], 'seen_at'> & { seen_at: string })[];
  })[];
}

/** A connection's record as the CLI shows it: by rule, rejections first, then by count, with what each rule says. */
export async function qualityReport(db: Database, connectionId: string): Promise<QualityReport> {
  const rows = await listQuality(db, connectionId);
  return {
    rules: rows.map((r) => ({
      ...r,
      says: r.rule in RULES ? RULES[r.rule as RuleName].says : '',
      first_seen: r.first_seen.toISOString(),
      last_seen: r.last_seen.toISOString(),
      examples: r.examples.map((e) => ({ ...e, seen_at: e.seen_at.toISOString() })),
    })),
  };
}
