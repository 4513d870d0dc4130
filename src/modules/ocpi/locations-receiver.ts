// The Locations Receiver: a CPO reads back, PUTs and PATCHes its Locations,
// EVSEs and Connectors, read by the tolerant reader (ocpi-protocol/reader/,
// what it makes of them recorded for the connection) and written through the
// station ingestion (stations/ingest.ts).
import type { OcpiConnector, OcpiEvse, OcpiLocation } from '../../ocpi-protocol/locations-tariffs.ts';
import { readConnector, readEvse, readEvseStatus, readLocation } from '../../ocpi-protocol/reader/location.ts';
import { type Finding, isRejection } from '../../ocpi-protocol/reader/rules.ts';
import { invalidParameters, OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import { objectIdOf, recordFindings } from './quality.ts';
import {
  aboutPart,
  checkMatches,
  checkOwnKey,
  invalid,
  leftOutMessage,
  locationKey,
  type PartyPath,
  type ReceiversContext,
  requireLastUpdated,
  requireObject,
  requireParty,
  taken,
} from './receiver-context.ts';
import type * as repo from './repository.ts';

const newer = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b);
const unknownLocation = (id: string) => new OcpiError(404, OCPI_STATUS.unknownLocation, `Unknown location ${id}`);

export async function getLocation(
  ctx: ReceiversContext,
  connection: repo.Connection,
  party: PartyPath,
  locationId: string,
  evseUid?: string,
  connectorId?: string,
): Promise<unknown> {
  await requireParty(ctx, connection, party, 'read');
  const location = await ctx.ingestion.findLocation(locationKey(party, locationId));
  if (!location) throw unknownLocation(locationId);
  if (evseUid === undefined) return location;
  const evse = location.evses?.find((e) => e.uid === evseUid);
  if (!evse) throw new OcpiError(404, OCPI_STATUS.unknownLocation, `Unknown EVSE ${evseUid} of location ${locationId}`);
  if (connectorId === undefined) return evse;
  const connector = evse.connectors.find((c) => c.id === connectorId);
  if (!connector) throw new OcpiError(404, OCPI_STATUS.unknownLocation, `Unknown connector ${connectorId} of EVSE ${evseUid}`);
  return connector;
}

/** What a PUT stored: whether the object was new (answered 201), and which parts of it were left out, if any. */
export interface PutOutcome {
  created: boolean;
  message?: string;
}

/** A Location PUT whole: read by the tolerant reader (EVSEs and connectors that cannot be used are left out), then stored. */
async function putWholeLocation(ctx: ReceiversContext, connection: repo.Connection, key: ReturnType<typeof locationKey>, object: Record<string, unknown>) {
  const reading = readLocation({ ...object, country_code: key.country_code, party_id: key.party_id, id: key.id });
  const location = await taken(ctx, connection, 'locations', objectIdOf(key), reading);
  let created = false;
  await ctx.ingestion.changeLocation(key, (stored) => {
    created = stored === undefined;
    return location;
  });
  const message = leftOutMessage(reading.findings, isRejection);
  return { created, ...(message ? { message } : {}) };
}

/** Stores a pushed Location, EVSE or Connector, read by the tolerant reader. */
export async function putLocation(
  ctx: ReceiversContext,
  connection: repo.Connection,
  party: PartyPath,
  locationId: string,
  evseUid: string | undefined,
  connectorId: string | undefined,
  body: unknown,
): Promise<PutOutcome> {
  const { ingestion } = ctx;
  await requireParty(ctx, connection, party);
  const object = requireObject(body);
  const key = locationKey(party, locationId);
  const objectId = objectIdOf(key);
  // Whether the object PUT was new: decided on the row as read under its lock, inside changeLocation.
  let created = false;
  try {
    if (evseUid === undefined) {
      checkOwnKey(object, party, locationId);
      return await putWholeLocation(ctx, connection, key, object);
    }
    if (connectorId === undefined) {
      checkMatches(object, 'uid', evseUid);
      const evse = await taken(ctx, connection, 'locations', objectId, readEvse({ ...object, uid: evseUid }), evseUid);
      await ingestion.changeLocation(key, (stored) => {
        if (!stored) throw unknownLocation(locationId);
        const evses = [...(stored.evses ?? [])];
        const at = evses.findIndex((e) => e.uid === evseUid);
        created = at < 0;
        if (at >= 0 && Date.parse((evses[at] as OcpiEvse).last_updated) > Date.parse(evse.last_updated)) return undefined;
        if (at >= 0) evses[at] = evse;
        else evses.push(evse);
        return { ...stored, evses, last_updated: newer(stored.last_updated, evse.last_updated) };
      });
      return { created };
    }
    checkMatches(object, 'id', connectorId);
    const connector = await taken(ctx, connection, 'locations', objectId, readConnector({ ...object, id: connectorId }, evseUid), `${evseUid}/${connectorId}`);
    await ingestion.changeLocation(key, (stored) => {
      const evse = stored?.evses?.find((e) => e.uid === evseUid);
      if (!stored || !evse) throw unknownLocation(stored ? `${locationId}/${evseUid}` : locationId);
      const connectors = [...evse.connectors];
      const at = connectors.findIndex((c) => c.id === connectorId);
      created = at < 0;
      const stamp = connector.last_updated;
      // As for an EVSE: a stored connector newer than the one PUT is kept (a late retry must not undo a change).
      if (at >= 0 && Date.parse((connectors[at] as OcpiConnector).last_updated) > Date.parse(stamp)) return undefined;
      if (at >= 0) connectors[at] = connector;
      else connectors.push(connector);
      const changed: OcpiEvse = { ...evse, connectors, last_updated: newer(evse.last_updated, stamp) };
      return { ...stored, evses: (stored.evses ?? []).map((e) => (e.uid === evseUid ? changed : e)), last_updated: newer(stored.last_updated, stamp) };
    });
    return { created };
  } catch (error) {
    return invalid(error);
  }
}

/** What a PATCH addresses: the Location, one of its EVSEs, or one connector of an EVSE. */
interface PatchTarget {
  locationId: string;
  evseUid: string | undefined;
  connectorId: string | undefined;
  stamp: string;
}

/**
 * The stored Location with a PATCH applied (undefined when the stored object is newer), read again by the tolerant
 * reader: a patched EVSE or connector that can no longer be used refuses the PATCH (2001), it is not left out.
 */
function patched(stored: OcpiLocation | undefined, patch: Record<string, unknown>, target: PatchTarget, findings: Finding[]): OcpiLocation | undefined {
  const { locationId, evseUid, connectorId, stamp } = target;
  if (!stored) throw unknownLocation(locationId);
  const read = (next: unknown): OcpiLocation => {
    const reading = readLocation(next);
    findings.push(...reading.findings);
    if (!reading.ok) throw invalidParameters(reading.message);
    return reading.value;
  };
  if (evseUid === undefined) {
    if (Date.parse(stored.last_updated) > Date.parse(stamp)) return undefined;
    return read({ ...stored, ...patch, country_code: stored.country_code, party_id: stored.party_id, id: stored.id });
  }
  const evse = stored.evses?.find((e) => e.uid === evseUid);
  if (!evse) throw unknownLocation(`${locationId}/${evseUid}`);
  let changed: unknown;
  if (connectorId === undefined) {
    if (Date.parse(evse.last_updated) > Date.parse(stamp)) return undefined;
    changed = { ...evse, ...patch, uid: evse.uid };
  } else {
    const connector = evse.connectors.find((c) => c.id === connectorId);
    if (!connector) throw unknownLocation(`${locationId}/${evseUid}/${connectorId}`);
    if (Date.parse(connector.last_updated) > Date.parse(stamp)) return undefined;
    const patchedConnector = readConnector({ ...connector, ...patch, id: connector.id }, evseUid);
    findings.push(...aboutPart(patchedConnector.findings, `${evseUid}/${connectorId}`));
    if (!patchedConnector.ok) throw invalidParameters(patchedConnector.message);
    changed = {
      ...evse,
      connectors: evse.connectors.map((c) => (c.id === connectorId ? patchedConnector.value : c)),
      last_updated: newer(evse.last_updated, stamp),
    };
  }
  const patchedEvse = readEvse(changed);
  findings.push(...aboutPart(patchedEvse.findings, evseUid));
  if (!patchedEvse.ok) throw invalidParameters(patchedEvse.message);
  const evses = (stored.evses ?? []).map((e) => (e.uid === evseUid ? patchedEvse.value : e));
  return read({ ...stored, evses, last_updated: newer(stored.last_updated, stamp) });
}

export async function patchLocation(
  ctx: ReceiversContext,
  connection: repo.Connection,
  party: PartyPath,
  locationId: string,
  evseUid: string | undefined,
  connectorId: string | undefined,
  body: unknown,
) {
  const { ingestion } = ctx;
  await requireParty(ctx, connection, party);
  const patch = requireObject(body);
  const stamp = requireLastUpdated(patch);
  const key = locationKey(party, locationId);
  const findings: Finding[] = [];
  try {
    // The frequent case, an EVSE's status, is an in-place update without reading the location.
    const fields = Object.keys(patch);
    if (evseUid !== undefined && connectorId === undefined && fields.every((f) => f === 'status' || f === 'last_updated') && 'status' in patch) {
      if (typeof patch.status !== 'string') throw invalidParameters('status must be a string');
      const status = readEvseStatus(patch.status, '/status', findings);
      findings.splice(0, findings.length, ...aboutPart(findings, evseUid));
      const changed = await ingestion.updateEvseStatus({ ...key, location_id: key.id, uid: evseUid, status, last_updated: stamp });
      if (!changed && !(await ingestion.findLocation(key))?.evses?.some((e) => e.uid === evseUid)) throw unknownLocation(`${locationId}/${evseUid}`);
      return;
    }
    if (evseUid === undefined) {
      checkOwnKey(patch, party, locationId);
    } else if (connectorId === undefined) checkMatches(patch, 'uid', evseUid);
    else checkMatches(patch, 'id', connectorId);
    await ingestion.changeLocation(key, (stored) => patched(stored, patch, { locationId, evseUid, connectorId, stamp }, findings));
  } catch (error) {
    invalid(error);
  } finally {
    await recordFindings(ctx, connection.id, 'locations', [{ objectId: objectIdOf(key), findings }]);
  }
}
