// The charging session lookups that CPO messages cause are index reads, not scans of every session (migration
// 0034): by the command a CPO's command result names, and by the token's user for a CPO that echoes neither our
// reference nor its session id. Each statement is the repository's own, explained with sequential scans
// disfavoured: without an index PostgreSQL has no other plan than reading the whole table.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { findByStartCommand, findByTokenAndEvse } from '../src/modules/charging/repository.ts';
import type { NamedStatement, Queryable } from '../src/platform/db.ts';
import { createTestDatabase } from './helpers.ts';

let database: Awaited<ReturnType<typeof createTestDatabase>>;

before(async () => {
  database = await createTestDatabase();
});
after(() => database.drop());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** The generic plan of the one statement `lookup` sends (not run: explained), with sequential scans disfavoured. */
async function planOf(lookup: (q: Queryable) => Promise<unknown>): Promise<PlanNode[]> {
  return database.db.withClient(async (client) => {
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL enable_seqscan = off');
      let plan: PlanNode | undefined;
      const explaining: Queryable = {
        query: (async (statement: string | NamedStatement, values?: unknown[]) => {
          const text = typeof statement === 'string' ? statement : statement.text;
          // The generic plan, as a statement prepared once per connection may keep (values unknown).
          assert.ok(values && values.length > 0);
          const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${text}`);
          plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
          return { rows: [], rowCount: 0, command: 'EXPLAIN', oid: 0, fields: [] };
        }) as Queryable['query'],
      };
      await lookup(explaining);
      assert.ok(plan, 'the lookup sent a statement');
      return nodesOf(plan);
    } finally {
      await client.query('ROLLBACK');
    }
  });
}

const scansOfSessions = (nodes: PlanNode[]) => nodes.filter((node) => node['Relation Name'] === 'charging_sessions').map((node) => node['Node Type']);

describe('charging session lookups caused by CPO messages', () => {
  test('by command id (a command result): index reads of the start and stop commands, no sequential scan', async () => {
    const nodes = await planOf((q) => findByStartCommand(q, randomUUID(), { forUpdate: true }));
    assert.ok(!scansOfSessions(nodes).includes('Seq Scan'), `plan: ${JSON.stringify(scansOfSessions(nodes))}`);
    const indexes = nodes.map((node) => node['Index Name']).filter(Boolean);
    assert.deepEqual([...new Set(indexes)].sort(), ['charging_sessions_start_command_idx', 'charging_sessions_stop_command_idx']);
  });

  test("by the token's user on an EVSE (a CPO that echoes neither reference nor session id): an index read", async () => {
    const nodes = await planOf((q) =>
      findByTokenAndEvse(
        q,
        { user_id: randomUUID(), country_code: 'DE', party_id: 'ABC', location_id: 'L1', evse_uid: 'E1', startedBy: new Date() },
        { forUpdate: true },
      ),
    );
    assert.ok(!scansOfSessions(nodes).includes('Seq Scan'), `plan: ${JSON.stringify(scansOfSessions(nodes))}`);
    assert.ok(nodes.some((node) => node['Index Name'] === 'charging_sessions_unlinked_idx'));
  });
});
