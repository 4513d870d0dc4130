// The Locations Receiver: a CPO reads back, PUTs and PATCHes its Locations,
// EVSEs and Connectors, written through the station ingestion
// (stations/ingest.ts).
import type { OcpiConnector, OcpiEvse, OcpiLocation } from '../../ocpi-protocol/locations-tariffs.ts';
import { invalidParameters, OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import {
  checkMatches,
  checkOwnKey,
  invalid,
  locationKey,
  type PartyPath,
  type ReceiversContext,
  requireLastUpdated,
  requireObject,
  requireParty,
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

/** Stores a pushed Location, EVSE or Connector; true when that object was new (answered 201). */
export async function putLocation(
  ctx: ReceiversContext,
  connection: repo.Connection,
  party: PartyPath,
  locationId: string,
  evseUid: string | undefined,
  connectorId: string | undefined,
  body: unknown,
): Promise<boolean> {
  const { ingestion } = ctx;
  await requireParty(ctx, connection, party);
  const object = requireObject(body);
  const key = locationKey(party, locationId);
  // Whether the object PUT was new: decided on the row as read under its lock, inside changeLocation.
  let created = false;
  try {
    if (evseUid === undefined) {
      checkOwnKey(object, party, locationId);
      const location = { ...object, country_code: key.country_code, party_id: key.party_id, id: locationId };
      await ingestion.changeLocation(key, (stored) => {
        created = stored === undefined;
        return location;
      });
      return created;
    }
    if (connectorId === undefined) {
      checkMatches(object, 'uid', evseUid);
      const evse = { ...object, uid: evseUid } as unknown as OcpiEvse;
      await ingestion.changeLocation(key, (stored) => {
        if (!stored) throw unknownLocation(locationId);
        const evses = [...(stored.evses ?? [])];
        const at = evses.findIndex((e) => e.uid === evseUid);
        created = at < 0;
        if (at >= 0 && Date.parse((evses[at] as OcpiEvse).last_updated) > Date.parse(String(evse.last_updated))) return undefined;
        if (at >= 0) evses[at] = evse;
        else evses.push(evse);
        return { ...stored, evses, last_updated: newer(stored.last_updated, String(evse.last_updated)) };
      });
      return created;
    }
    checkMatches(object, 'id', connectorId);
    const connector = { ...object, id: connectorId } as unknown as OcpiConnector;
    await ingestion.changeLocation(key, (stored) => {
      const evse = stored?.evses?.find((e) => e.uid === evseUid);
      if (!stored || !evse) throw unknownLocation(stored ? `${locationId}/${evseUid}` : locationId);
      const connectors = [...evse.connectors];
      const at = connectors.findIndex((c) => c.id === connectorId);
      created = at < 0;
      const stamp = String(connector.last_updated);
      // As for an EVSE: a stored connector newer than the one PUT is kept (a late retry must not undo a change).
      if (at >= 0 && Date.parse((connectors[at] as OcpiConnector).last_updated) > Date.parse(stamp)) return undefined;
      if (at >= 0) connectors[at] = connector;
      else connectors.push(connector);
      const changed: OcpiEvse = { ...evse, connectors, last_updated: newer(evse.last_updated, stamp) };
      return { ...stored, evses: (stored.evses ?? []).map((e) => (e.uid === evseUid ? changed : e)), last_updated: newer(stored.last_updated, stamp) };
    });
    return created;
  } catch (error) {
    return invalid(error);
  }
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
}
