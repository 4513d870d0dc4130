// What CPOs push to us (the Receiver interfaces): Locations, EVSEs and
// Connectors (PUT/PATCH), Tariffs (PUT/DELETE), Sessions (PUT/PATCH with
// charging periods appended), CDRs (POST, immutable) and command results.
// Every object is validated; ids in the URL must match the body; a connection
// may only send objects of the parties it registered.
import type { OcpiConnector, OcpiEvse, OcpiLocation } from '../../ocpi-protocol/locations-tariffs.ts';
import { invalidParameters, OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import { isDateTime } from '../../ocpi-protocol/types.ts';
import { type CDR, parseCdr, parseCommandResult, parseSession, parseSessionPatch, type Session } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { type Ingestion, InvalidOcpiObject } from '../stations/ingest.ts';
import * as repo from './repository.ts';

export interface PartyPath {
  country_code: string;
  party_id: string;
}

/** Listeners of what CPOs report (the charging module follows sessions, CDRs and command results). */
/**
 * What other modules learn from CPO messages (the charging module follows its
 * sessions). Each runs inside the transaction that stores the message, so
 * what a handler records (a state change, a job) commits with it or not at
 * all; handlers do database work only (anything slower goes to a job). A
 * handler that throws fails the OCPI request, and the CPO sends it again.
 */
export interface OcpiEvents {
  sessionChanged?(tx: Queryable, session: Session, connectionId: string): Promise<void>;
  cdrReceived?(tx: Queryable, cdr: CDR, connectionId: string): Promise<void>;
  commandResult?(tx: Queryable, commandId: string, result: { result: string; message?: string }): Promise<void>;
}

const sameId = (a: string, b: string) => a.toUpperCase() === b.toUpperCase();

function requireObject(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidParameters('the body must be a JSON object');
  return body as Record<string, unknown>;
}

function requireLastUpdated(patch: Record<string, unknown>): string {
  const value = patch.last_updated;
  if (!isDateTime(value)) throw invalidParameters('a PATCH must carry last_updated (an RFC 3339 date-time)');
  return value;
}

function checkMatches(body: Record<string, unknown>, field: string, expected: string): void {
  const value = body[field];
  if (value !== undefined && (typeof value !== 'string' || !sameId(value, expected))) {
    throw invalidParameters(`${field} in the body (${String(value).slice(0, 40)}) differs from the URL (${expected})`);
  }
}

/** A client-owned object's country_code, party_id and id, where present, must be those of the URL (2001 otherwise). */
function checkOwnKey(body: Record<string, unknown>, party: PartyPath, id: string): void {
  checkMatches(body, 'country_code', party.country_code);
  checkMatches(body, 'party_id', party.party_id);
  checkMatches(body, 'id', id);
}

const newer = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b);
const unknownLocation = (id: string) => new OcpiError(404, OCPI_STATUS.unknownLocation, `Unknown location ${id}`);

function invalid(error: unknown): never {
  if (error instanceof InvalidOcpiObject) {
    throw invalidParameters(
      error.errors
        .slice(0, 5)
        .map((e) => `${e.path || '/'} ${e.message}`)
        .join('; '),
    );
  }
  throw error;
}

function ok<T>(result: { ok: true; value: T } | { ok: false; errors: { path: string; message: string }[] }, what: string): T {
  if (result.ok) return result.value;
  throw invalidParameters(
    `${what}: ${result.errors
      .slice(0, 5)
      .map((e) => `${e.path || '/'} ${e.message}`)
      .join('; ')}`,
  );
}

export function createReceivers(deps: { db: Database; clock: Clock; ingestion: Ingestion; events?: OcpiEvents; ocpiBaseUrl: string }) {
  const { db, clock, ingestion } = deps;

  async function requireParty(connection: repo.Connection, party: PartyPath): Promise<void> {
    if (!(await repo.connectionOwnsParty(db, connection.id, party.country_code, party.party_id))) {
      throw new OcpiError(404, OCPI_STATUS.clientError, `Party ${party.country_code}*${party.party_id} is not registered on this connection`);
    }
  }

  // country_code and party_id are case-insensitive (CiString): stored upper-case.
  const locationKey = (party: PartyPath, id: string) => ({ country_code: party.country_code.toUpperCase(), party_id: party.party_id.toUpperCase(), id });

  return {
    // -----------------------------------------------------------------------
    // Locations

    async getLocation(connection: repo.Connection, party: PartyPath, locationId: string, evseUid?: string, connectorId?: string): Promise<unknown> {
      await requireParty(connection, party);
      const location = await ingestion.findLocation(locationKey(party, locationId));
      if (!location) throw unknownLocation(locationId);
      if (evseUid === undefined) return location;
      const evse = location.evses?.find((e) => e.uid === evseUid);
      if (!evse) throw new OcpiError(404, OCPI_STATUS.unknownLocation, `Unknown EVSE ${evseUid} of location ${locationId}`);
      if (connectorId === undefined) return evse;
      const connector = evse.connectors.find((c) => c.id === connectorId);
      if (!connector) throw new OcpiError(404, OCPI_STATUS.unknownLocation, `Unknown connector ${connectorId} of EVSE ${evseUid}`);
      return connector;
    },

    async putLocation(
      connection: repo.Connection,
      party: PartyPath,
      locationId: string,
      evseUid: string | undefined,
      connectorId: string | undefined,
      body: unknown,
    ) {
      await requireParty(connection, party);
      const object = requireObject(body);
      const key = locationKey(party, locationId);
      try {
        if (evseUid === undefined) {
          checkOwnKey(object, party, locationId);
          const location = { ...object, country_code: key.country_code, party_id: key.party_id, id: locationId };
          await ingestion.changeLocation(key, () => location);
          return;
        }
        if (connectorId === undefined) {
          checkMatches(object, 'uid', evseUid);
          const evse = { ...object, uid: evseUid } as unknown as OcpiEvse;
          const result = await ingestion.changeLocation(key, (stored) => {
            if (!stored) throw unknownLocation(locationId);
            const evses = [...(stored.evses ?? [])];
            const at = evses.findIndex((e) => e.uid === evseUid);
            if (at >= 0 && Date.parse((evses[at] as OcpiEvse).last_updated) > Date.parse(String(evse.last_updated))) return undefined;
            if (at >= 0) evses[at] = evse;
            else evses.push(evse);
            return { ...stored, evses, last_updated: newer(stored.last_updated, String(evse.last_updated)) };
          });
          return result;
        }
        checkMatches(object, 'id', connectorId);
        const connector = { ...object, id: connectorId } as unknown as OcpiConnector;
        await ingestion.changeLocation(key, (stored) => {
          const evse = stored?.evses?.find((e) => e.uid === evseUid);
          if (!stored || !evse) throw unknownLocation(stored ? `${locationId}/${evseUid}` : locationId);
          const connectors = [...evse.connectors];
          const at = connectors.findIndex((c) => c.id === connectorId);
          const stamp = String(connector.last_updated);
          // As for an EVSE: a stored connector newer than the one PUT is kept (a late retry must not undo a change).
          if (at >= 0 && Date.parse((connectors[at] as OcpiConnector).last_updated) > Date.parse(stamp)) return undefined;
          if (at >= 0) connectors[at] = connector;
          else connectors.push(connector);
          const changed: OcpiEvse = { ...evse, connectors, last_updated: newer(evse.last_updated, stamp) };
          return { ...stored, evses: (stored.evses ?? []).map((e) => (e.uid === evseUid ? changed : e)), last_updated: newer(stored.last_updated, stamp) };
        });
      } catch (error) {
        invalid(error);
      }
    },

    async patchLocation(
      connection: repo.Connection,
      party: PartyPath,
      locationId: string,
      evseUid: string | undefined,
      connectorId: string | undefined,
      body: unknown,
    ) {
      await requireParty(connection, party);
      const patch = requireObject(body);
      const stamp = requireLastUpdated(patch);
      const key = locationKey(party, locationId);
      try {
        // The frequent case, an EVSE's status, is an in-place update without reading the location.
        const fields = Object.keys(patch);
        if (evseUid !== undefined && connectorId === undefined && fields.every((f) => f === 'status' || f === 'last_updated') && 'status' in patch) {
          if (typeof patch.status !== 'string') throw invalidParameters('status must be a string');
          const changed = await ingestion.updateEvseStatus({ ...key, location_id: key.id, uid: evseUid, status: patch.status, last_updated: stamp });
          if (!changed && !(await ingestion.findLocation(key))?.evses?.some((e) => e.uid === evseUid)) throw unknownLocation(`${locationId}/${evseUid}`);
          return;
        }
        if (evseUid === undefined) {
          checkOwnKey(patch, party, locationId);
        } else if (connectorId === undefined) checkMatches(patch, 'uid', evseUid);
        else checkMatches(patch, 'id', connectorId);
        await ingestion.changeLocation(key, (stored) => {
          if (!stored) throw unknownLocation(locationId);
          if (evseUid === undefined) {
            if (Date.parse(stored.last_updated) > Date.parse(stamp)) return undefined;
            return { ...stored, ...patch, country_code: stored.country_code, party_id: stored.party_id, id: stored.id } as OcpiLocation;
          }
          const evse = stored.evses?.find((e) => e.uid === evseUid);
          if (!evse) throw unknownLocation(`${locationId}/${evseUid}`);
          let changed: OcpiEvse;
          if (connectorId === undefined) {
            if (Date.parse(evse.last_updated) > Date.parse(stamp)) return undefined;
            changed = { ...evse, ...patch, uid: evse.uid } as OcpiEvse;
          } else {
            const connector = evse.connectors.find((c) => c.id === connectorId);
            if (!connector) throw unknownLocation(`${locationId}/${evseUid}/${connectorId}`);
            if (Date.parse(connector.last_updated) > Date.parse(stamp)) return undefined;
            const patched = { ...connector, ...patch, id: connector.id } as OcpiConnector;
            changed = { ...evse, connectors: evse.connectors.map((c) => (c.id === connectorId ? patched : c)), last_updated: newer(evse.last_updated, stamp) };
          }
          return { ...stored, evses: (stored.evses ?? []).map((e) => (e.uid === evseUid ? changed : e)), last_updated: newer(stored.last_updated, stamp) };
        });
      } catch (error) {
        invalid(error);
      }
    },

    // -----------------------------------------------------------------------
    // Tariffs

    async getTariff(connection: repo.Connection, party: PartyPath, tariffId: string) {
      await requireParty(connection, party);
      const tariff = await ingestion.findTariff(locationKey(party, tariffId));
      if (!tariff) throw new OcpiError(404, OCPI_STATUS.clientError, `Unknown tariff ${tariffId}`);
      return tariff;
    },

    async putTariff(connection: repo.Connection, party: PartyPath, tariffId: string, body: unknown) {
      await requireParty(connection, party);
      const object = requireObject(body);
      checkOwnKey(object, party, tariffId);
      const key = locationKey(party, tariffId);
      try {
        await ingestion.putTariff({ ...object, country_code: key.country_code, party_id: key.party_id, id: tariffId });
      } catch (error) {
        invalid(error);
      }
    },

    async deleteTariff(connection: repo.Connection, party: PartyPath, tariffId: string) {
      await requireParty(connection, party);
      if (!(await ingestion.deleteTariff(locationKey(party, tariffId)))) throw new OcpiError(404, OCPI_STATUS.clientError, `Unknown tariff ${tariffId}`);
    },

    // -----------------------------------------------------------------------
    // Sessions

    async getSession(connection: repo.Connection, party: PartyPath, sessionId: string) {
      await requireParty(connection, party);
      const stored = await repo.findSession(db, locationKey(party, sessionId));
      if (!stored || stored.connection_id !== connection.id) throw new OcpiError(404, OCPI_STATUS.clientError, `Unknown session ${sessionId}`);
      return stored.data;
    },

    async putSession(connection: repo.Connection, party: PartyPath, sessionId: string, body: unknown) {
      await requireParty(connection, party);
      const object = requireObject(body);
      checkOwnKey(object, party, sessionId);
      const key = locationKey(party, sessionId);
      const session = ok(parseSession({ ...object, ...key }), 'Session');
      await db.transaction(async (tx) => {
        if (await repo.upsertSession(tx, connection.id, session, clock.now())) await deps.events?.sessionChanged?.(tx, session, connection.id);
      });
    },

    async patchSession(connection: repo.Connection, party: PartyPath, sessionId: string, body: unknown) {
      await requireParty(connection, party);
      const patch = requireObject(body);
      const stamp = requireLastUpdated(patch);
      checkOwnKey(patch, party, sessionId);
      ok(parseSessionPatch(patch), 'Session PATCH');
      const key = locationKey(party, sessionId);
      await db.transaction(async (tx) => {
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
        const next = ok(parseSession(merged), 'Session after PATCH');
        await repo.upsertSession(tx, connection.id, next, clock.now());
        await deps.events?.sessionChanged?.(tx, next, connection.id);
      });
    },

    // -----------------------------------------------------------------------
    // CDRs

    /** Stores a CDR once; returns the URL of our copy (the Location header). A repeated POST is acknowledged, not stored again. */
    async postCdr(connection: repo.Connection, body: unknown): Promise<string> {
      const cdr = ok(parseCdr(body), 'CDR');
      const party = { country_code: cdr.country_code.toUpperCase(), party_id: cdr.party_id.toUpperCase() };
      await requireParty(connection, party);
      const stored = { ...cdr, ...party };
      const inserted = await db.transaction(async (tx) => {
        const fresh = await repo.insertCdr(
          tx,
          connection.id,
          { ...stored, session_id: cdr.session_id, authorization_reference: cdr.authorization_reference, credit: cdr.credit },
          clock.now(),
        );
        if (fresh) await deps.events?.cdrReceived?.(tx, stored as CDR, connection.id);
        return fresh;
      });
      if (!inserted) {
        const existing = await repo.findCdr(db, { ...party, id: cdr.id });
        if (existing && existing.connection_id !== connection.id)
          throw new OcpiError(404, OCPI_STATUS.clientError, `CDR ${cdr.id} belongs to another connection`);
      }
      return `${deps.ocpiBaseUrl}/2.2.1/cdrs/${encodeURIComponent(party.country_code)}/${encodeURIComponent(party.party_id)}/${encodeURIComponent(cdr.id)}`;
    },

    async getCdr(connection: repo.Connection, party: PartyPath, cdrId: string) {
      const stored = await repo.findCdr(db, locationKey(party, cdrId));
      if (!stored || stored.connection_id !== connection.id) throw new OcpiError(404, OCPI_STATUS.clientError, `Unknown CDR ${cdrId}`);
      return stored.data;
    },

    // -----------------------------------------------------------------------
    // Command results (POST to the response_url we gave with a command)

    async commandResult(connection: repo.Connection, type: string, commandId: string, secret: string, body: unknown) {
      const result = ok(parseCommandResult(body), 'CommandResult');
      const outcome = await db.transaction(async (tx) => {
        const recorded = await repo.recordCommandResult(
          tx,
          { id: commandId, connection_id: connection.id, type, callback_secret: secret },
          result.message ? { result: result.result, message: JSON.stringify(result.message) } : { result: result.result },
          clock.now(),
        );
        if (recorded === 'stored') await deps.events?.commandResult?.(tx, commandId, { result: result.result });
        return recorded;
      });
      if (outcome === 'unknown') throw new OcpiError(404, OCPI_STATUS.clientError, 'Unknown command');
    },
  };
}

export type Receivers = ReturnType<typeof createReceivers>;
