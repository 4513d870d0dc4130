// The Sessions Receiver: a CPO reads back, PUTs and PATCHes its Sessions; a
// stored change is told to other modules (events.sessionChanged) in the same
// transaction.
import type { Finding } from '../../ocpi-protocol/reader/rules.ts';
import { readSession, readSessionPatch } from '../../ocpi-protocol/reader/session-cdr.ts';
import { invalidParameters, OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import type { Session } from '../../ocpi-protocol/validate.ts';
import { objectIdOf, recordFindings } from './quality.ts';
import { checkOwnKey, locationKey, type PartyPath, type ReceiversContext, requireLastUpdated, requireObject, requireParty, taken } from './receiver-context.ts';
import * as repo from './repository.ts';

export async function getSession(ctx: ReceiversContext, connection: repo.Connection, party: PartyPath, sessionId: string) {
  await requireParty(ctx, connection, party, 'read');
  const stored = await repo.findSession(ctx.db, locationKey(party, sessionId));
  if (!stored || stored.connection_id !== connection.id) throw new OcpiError(404, OCPI_STATUS.clientError, `Unknown session ${sessionId}`);
  return stored.data;
}

/** Stores a pushed Session; true when it was new (answered 201). */
export async function putSession(ctx: ReceiversContext, connection: repo.Connection, party: PartyPath, sessionId: string, body: unknown): Promise<boolean> {
  await requireParty(ctx, connection, party);
  const object = requireObject(body);
  checkOwnKey(object, party, sessionId);
  const key = locationKey(party, sessionId);
  const session = await taken(ctx, connection, 'sessions', objectIdOf(key), readSession({ ...object, ...key }));
  return ctx.db.transaction(async (tx) => {
    const written = await repo.upsertSession(tx, connection.id, session, ctx.clock.now());
    if (written) await ctx.events?.sessionChanged?.(tx, session, connection.id);
    return written === 'created';
  });
}

export async function patchSession(ctx: ReceiversContext, connection: repo.Connection, party: PartyPath, sessionId: string, body: unknown) {
  await requireParty(ctx, connection, party);
  const patch = requireObject(body);
  const stamp = requireLastUpdated(patch);
  checkOwnKey(patch, party, sessionId);
  const key = locationKey(party, sessionId);
  const read = readSessionPatch(patch);
  const findings: Finding[] = [...read.findings];
  try {
    if (!read.ok) throw invalidParameters(read.message);
    await applySessionPatch(ctx, connection, key, { ...read.value, last_updated: stamp }, findings);
  } finally {
    await recordFindings(ctx, connection.id, 'sessions', [{ objectId: objectIdOf(key), findings }]);
  }
}

async function applySessionPatch(
  ctx: ReceiversContext,
  connection: repo.Connection,
  key: ReturnType<typeof locationKey>,
  patch: Record<string, unknown>,
  findings: Finding[],
) {
  const sessionId = key.id;
  const stamp = patch.last_updated as string;
  await ctx.db.transaction(async (tx) => {
    const stored = await repo.findSession(tx, key, { forUpdate: true });
    if (!stored || stored.connection_id !== connection.id) throw new OcpiError(404, OCPI_STATUS.clientError, `Unknown session ${sessionId}`);
    if (stored.last_updated.getTime() > Date.parse(stamp)) return undefined;
    const current = stored.data as Session;
    // charging_periods in a PATCH are added to the stored ones (mod_sessions); everything else replaces.
    // A period already stored (same start) is not added again: a repeated PATCH changes nothing.
    const known = current.charging_periods ?? [];
    const starts = new Set(known.map((p) => Date.parse(p.start_date_time)));
    const periods = (Array.isArray(patch.charging_periods) ? (patch.charging_periods as typeof known) : []).filter(
      (p) => !starts.has(Date.parse(p.start_date_time)),
    );
    const merged = { ...current, ...patch, ...key, charging_periods: [...known, ...periods] };
    const reading = readSession(merged);
    findings.push(...reading.findings);
    if (!reading.ok) throw invalidParameters(reading.message.replace(/^Session/, 'Session after PATCH'));
    const next = reading.value;
    await repo.upsertSession(tx, connection.id, next, ctx.clock.now());
    await ctx.events?.sessionChanged?.(tx, next, connection.id);
  });
}
