// The CDRs Receiver: a CPO POSTs each CDR once (CDRs are immutable) and may
// read back our copy; a new CDR is told to other modules (events.cdrReceived)
// in the transaction that stores it.
import { readCdr } from '../../ocpi-protocol/reader/session-cdr.ts';
import { OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import type { CDR } from '../../ocpi-protocol/validate.ts';
import { objectIdOf } from './quality.ts';
import { locationKey, type PartyPath, type ReceiversContext, requireParty, taken } from './receiver-context.ts';
import * as repo from './repository.ts';

/**
 * Stores a CDR once; returns the URL of our copy (the Location header) and whether it was new (answered 201). A
 * repeated POST is acknowledged, not stored again.
 */
export async function postCdr(ctx: ReceiversContext, connection: repo.Connection, body: unknown): Promise<{ location: string; created: boolean }> {
  const { db, clock } = ctx;
  // The party is checked before the CDR is read: what another party's CDR holds is not recorded for this connection.
  const sent = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (typeof sent.country_code === 'string' && typeof sent.party_id === 'string') {
    await requireParty(ctx, connection, { country_code: sent.country_code, party_id: sent.party_id });
  }
  const cdr = await taken(ctx, connection, 'cdrs', objectIdOf(body), readCdr(body));
  const party = { country_code: cdr.country_code.toUpperCase(), party_id: cdr.party_id.toUpperCase() };
  await requireParty(ctx, connection, party);
  const stored = { ...cdr, ...party };
  const inserted = await db.transaction(async (tx) => {
    const fresh = await repo.insertCdr(
      tx,
      connection.id,
      { ...stored, session_id: cdr.session_id, authorization_reference: cdr.authorization_reference, credit: cdr.credit },
      clock.now(),
    );
    if (fresh) await ctx.events?.cdrReceived?.(tx, stored as CDR, connection.id);
    return fresh;
  });
  if (!inserted) {
    const existing = await repo.findCdr(db, { ...party, id: cdr.id });
    if (existing && existing.connection_id !== connection.id) throw new OcpiError(404, OCPI_STATUS.clientError, `CDR ${cdr.id} belongs to another connection`);
  }
  const location = `${ctx.ocpiBaseUrl}/2.2.1/cdrs/${encodeURIComponent(party.country_code)}/${encodeURIComponent(party.party_id)}/${encodeURIComponent(cdr.id)}`;
  return { location, created: inserted };
}

export async function getCdr(ctx: ReceiversContext, connection: repo.Connection, party: PartyPath, cdrId: string) {
  const stored = await repo.findCdr(ctx.db, locationKey(party, cdrId));
  if (!stored || stored.connection_id !== connection.id) throw new OcpiError(404, OCPI_STATUS.clientError, `Unknown CDR ${cdrId}`);
  return stored.data;
}
