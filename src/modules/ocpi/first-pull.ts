// The first pull after a CPO registered with us (it used the TOKEN_A of `cpo
// invite`): its tariffs, locations, sessions and CDRs are pulled right after
// the handshake, in the background, not inside its POST /credentials (whose
// answer the CPO waits for). The job is queued in the transaction that stores
// the credentials, so neither a crash nor a restart loses it; any process's
// job runner takes it. A module the CPO fails to deliver is tried again with
// the job's backoff (the modules already pulled keep their sync position, so
// a retry pulls only what changed for them); after the last attempt the
// periodic reconciliation takes over.

import type { Queryable } from '../../platform/db.ts';
import { enqueue, type JobContext } from '../../platform/jobs.ts';
import * as repo from './repository.ts';
import type { OcpiLog } from './service.ts';
import type { Sync } from './sync.ts';

export const OCPI_QUEUES = {
  /** Pull a CPO's data right after it registered with us (first-pull.ts). */
  firstPull: 'ocpi.first-pull',
} as const;

const ATTEMPTS = 8;

/** Queues the first pull of a connection; call in the transaction that stores its credentials. */
export async function queueFirstPull(tx: Queryable, connectionId: string, now: Date): Promise<void> {
  await enqueue(tx, { queue: OCPI_QUEUES.firstPull, payload: { connection_id: connectionId }, key: connectionId, maxAttempts: ATTEMPTS }, now);
}

export interface FirstPullContext {
  db: Queryable;
  sync: Pick<Sync, 'syncConnection'>;
  log: OcpiLog;
}

/** The job: pulls every module of the connection (in full on the first attempt), unless it was unregistered meanwhile. */
export async function firstPull(ctx: FirstPullContext, payload: { connection_id?: unknown }, job: Pick<JobContext, 'attempt' | 'maxAttempts'>): Promise<void> {
  if (typeof payload.connection_id !== 'string') throw new Error('first pull job without a connection_id');
  const connection = await repo.findConnection(ctx.db, payload.connection_id);
  if (connection?.status !== 'connected') return;
  const counts = await ctx.sync.syncConnection(connection, { full: job.attempt === 1 });
  if (counts.failed.length === 0) return;
  const failed = counts.failed.map((f) => `${f.module}: ${f.reason}`).join('; ');
  if (job.attempt < job.maxAttempts) throw new Error(`not pulled yet from ${connection.name}: ${failed}`);
  ctx.log('warn', 'the first pull from a CPO that registered could not get every module; the periodic reconciliation pulls them', {
    connection: connection.name,
    failed,
  });
}
