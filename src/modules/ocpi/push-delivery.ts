// Delivery of the outbox of pushes to CPOs (token changes today). Pushes are
// claimed from PostgreSQL in batches (the backlog lives there, never in
// memory beyond one batch), sent with no transaction open, several at a time
// per CPO over kept-alive connections, and completed in one statement per
// batch. A CPO is probed with one push before the others go: one that does
// not answer costs one timeout per round, not one per push, and does not hold
// up the other CPOs. Shutdown aborts what is in flight; unsent pushes are
// released for the next round or another process (a token PUT is idempotent).
// One outbox row is one push per connection; its recipients (the OCPI-to
// party of each copy: a hub, each CPO party of a platform, or one) are decided
// when it is sent, from the parties the connection holds then (pushRecipients).

import type { OcpiPeerAuth } from '../../ocpi-protocol/client.ts';
import { OcpiTransportError, ocpiData } from '../../ocpi-protocol/client.ts';
import type { PartyRef } from '../../ocpi-protocol/transport.ts';
import { OCPI_2_1_1 } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import { pushTo211 } from '../../ocpi-protocol/v2_1_1/to-peer.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { endpointOf } from './connections.ts';
import { hubParty } from './connections-context.ts';
import * as repo from './repository.ts';

/** Backoff of failed pushes: 5 s, 30 s, 2 min, 10 min, then hourly. */
const PUSH_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000];

export interface PushDeliveryDeps {
  db: Database;
  clock: Clock;
  auth: (connection: repo.Connection) => OcpiPeerAuth;
  /** The routing headers of a push to the connection (from us, to `to`, else its first party): Tokens is a functional module, every push carries them. */
  routing: (connection: repo.Connection, to?: PartyRef) => Record<string, string>;
  timeoutMs: number;
  log?: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;
  /** Pushes claimed per statement (default 500). */
  batch?: number;
  /** Pushes in flight per CPO once it has answered one (default 16). */
  concurrency?: number;
  /** Stops the delivery: calls in flight are cut off, claimed pushes released. */
  signal?: AbortSignal;
}

interface Outcome {
  done: repo.OutboxItem[];
  released: number[];
  sent: number;
  failed: number;
  unreachable: boolean;
}

/** A CPO's refusal for good (HTTP 4xx other than 401/429, or an OCPI 2xxx answer): the push is dropped, not retried. */
function refusedForGood(error: unknown): boolean {
  return (
    error instanceof OcpiTransportError && error.httpStatus !== undefined && error.httpStatus < 500 && error.httpStatus !== 429 && error.httpStatus !== 401
  );
}

/**
 * Whom a push to a connection is addressed to (its OCPI-to headers), one push each: a hub gets one Broadcast Push,
 * addressed to the hub itself, which relays it to every party behind it (transport_and_format, Broadcast Push); a
 * platform of several CPO parties gets a Token push addressed to each of its CPO parties, or to its first one when it
 * keeps one token store for all of them (token_push 'once'); a 2.1.1 peer, one push (no routing). `parties`: the CPO
 * parties the connection speaks for now, so a party no longer on the connection gets nothing. Undefined: the
 * connection's default party (its first CPO party).
 */
export function pushRecipients(connection: repo.Connection, module: string, parties: readonly PartyRef[]): (PartyRef | undefined)[] {
  const hub = hubParty(connection);
  if (hub) return [hub];
  if (module !== 'tokens' || connection.token_push === 'once' || connection.version === OCPI_2_1_1 || parties.length === 0) return [undefined];
  return [...parties];
}

async function sendOne(
  deps: PushDeliveryDeps,
  connection: repo.Connection,
  base: string,
  item: repo.OutboxItem,
  recipients: readonly (PartyRef | undefined)[],
  outcome: Outcome,
): Promise<void> {
  // The outbox holds 2.2.1 pushes; a 2.1.1 CPO gets them in 2.1.1's shape (the adapter's pushTo211). A Token is the same in 2.2.
  const wire = connection.version === OCPI_2_1_1 ? pushTo211(item) : item;
  const refused: string[] = [];
  try {
    for (const to of recipients) {
      try {
        await ocpiData(deps.auth(connection), {
          method: item.method,
          url: `${base.replace(/\/+$/, '')}${wire.path}`,
          module: item.module,
          body: wire.body ?? undefined,
          headers: deps.routing(connection, to),
          timeoutMs: deps.timeoutMs,
          retries: 0,
          ...(deps.signal ? { signal: deps.signal } : {}),
        });
      } catch (error) {
        // A party that refuses for good does not hold the push back from the others; anything else is retried (all of it: a PUT is idempotent).
        if (deps.signal?.aborted || !refusedForGood(error)) throw error;
        refused.push(`${to ? `${to.country_code}*${to.party_id}: ` : ''}${(error as Error).message}`);
      }
    }
    if (refused.length > 0) {
      deps.log?.('warn', 'a CPO refused a push; dropped', { connection: connection.name, module: item.module, path: item.path, reason: refused.join('; ') });
      outcome.failed++;
    } else outcome.sent++;
    outcome.done.push(item);
  } catch (error) {
    if (deps.signal?.aborted) {
      outcome.released.push(item.id);
    } else {
      const delay = PUSH_DELAYS_MS[Math.min(item.attempts, PUSH_DELAYS_MS.length - 1)] as number;
      await repo.postponePush(deps.db, item.id, item.body, new Date(deps.clock.now().getTime() + delay), (error as Error).message);
      outcome.unreachable = true;
      outcome.failed++;
    }
  }
}

/** One CPO's share of a batch: a probe, then up to `concurrency` at a time while it answers. */
async function deliverToConnection(deps: PushDeliveryDeps, connectionId: string, items: repo.OutboxItem[]): Promise<Outcome> {
  const outcome: Outcome = { done: [], released: [], sent: 0, failed: 0, unreachable: false };
  const connection = await repo.findConnection(deps.db, connectionId);
  // Where each push goes; none when the connection is gone or no longer receives that module.
  const baseOf = (item: repo.OutboxItem) => (connection?.status === 'connected' ? endpointOf(connection, item.module, 'RECEIVER') : undefined);
  const undeliverable = items.filter((item) => !baseOf(item));
  await repo.dropPushes(
    deps.db,
    undeliverable.map((item) => item.id),
  );
  if (!connection) return outcome;
  const queue = items.filter((item) => baseOf(item));
  const parties = (await repo.partiesOfConnection(deps.db, connection.id))
    .filter((p) => p.role === 'CPO' && p.source === 'credentials')
    .map((p) => ({ country_code: p.country_code, party_id: p.party_id }));
  const next = () => (outcome.unreachable || deps.signal?.aborted ? undefined : queue.shift());
  const send = (item: repo.OutboxItem) => sendOne(deps, connection, baseOf(item) as string, item, pushRecipients(connection, item.module, parties), outcome);
  const probe = next();
  if (probe) await send(probe);
  const workers = Math.min(deps.concurrency ?? 16, queue.length);
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let item = next(); item; item = next()) await send(item);
    }),
  );
  outcome.released.push(...queue.map((item) => item.id));
  return outcome;
}

/**
 * Sends due pushes until none is due (or `signal` stops it). Returns how many
 * were sent and how many failed (refused for good, or postponed).
 */
export async function deliverDuePushes(deps: PushDeliveryDeps): Promise<{ sent: number; failed: number }> {
  const batch = deps.batch ?? 500;
  const unreachable = new Set<string>();
  let sent = 0;
  let failed = 0;
  while (!deps.signal?.aborted) {
    const now = deps.clock.now();
    const items = await repo.claimDuePushes(deps.db, now, new Date(now.getTime() + deps.timeoutMs + 60_000), batch, [...unreachable]);
    if (items.length === 0) break;
    const byConnection = Map.groupBy(items, (item) => item.connection_id);
    const outcomes = await Promise.all([...byConnection].map(([connectionId, list]) => deliverToConnection(deps, connectionId, list)));
    await repo.completePushes(
      deps.db,
      outcomes.flatMap((outcome) => outcome.done),
    );
    await repo.releasePushes(
      deps.db,
      outcomes.flatMap((outcome) => outcome.released),
    );
    const connectionIds = [...byConnection.keys()];
    outcomes.forEach((outcome, i) => {
      sent += outcome.sent;
      failed += outcome.failed;
      if (outcome.unreachable) unreachable.add(connectionIds[i] as string);
    });
  }
  return { sent, failed };
}
