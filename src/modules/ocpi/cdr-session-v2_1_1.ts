// A CDR from an OCPI 2.1.1 CPO names no session (2.2.1 added session_id):
// before it is stored and handed to charging, it is linked to the CPO's
// Session it belongs to, as the 2.1.1 adapter decides (sessionIdOf211Cdr:
// same token and EVSE, the start that matches), so a session we started is
// completed and billed by its CDR like a 2.2.1 one.
import { sessionIdOf211Cdr } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import type { Queryable } from '../../platform/db.ts';
import * as repo from './repository.ts';

interface ConvertedCdr {
  country_code?: unknown;
  party_id?: unknown;
  session_id?: unknown;
  start_date_time?: unknown;
  cdr_token?: { uid?: unknown };
  cdr_location?: { id?: unknown; evse_uid?: unknown; connector_id?: unknown };
}

/** The converted 2.1.1 CDR with the session_id of its Session when one matches; as it was otherwise (or when it already names one). */
export async function linkCdrToSession211<T extends Record<string, unknown>>(db: Queryable, connectionId: string, cdr: T): Promise<T> {
  const c = cdr as ConvertedCdr;
  const place = c.cdr_location;
  if (
    c.session_id !== undefined ||
    typeof c.country_code !== 'string' ||
    typeof c.party_id !== 'string' ||
    typeof c.start_date_time !== 'string' ||
    typeof c.cdr_token?.uid !== 'string' ||
    typeof place?.id !== 'string' ||
    typeof place.evse_uid !== 'string' ||
    typeof place.connector_id !== 'string'
  ) {
    return cdr;
  }
  const candidates = await repo.sessionsOfTokenAtEvse(db, {
    connection_id: connectionId,
    country_code: c.country_code.toUpperCase(),
    party_id: c.party_id.toUpperCase(),
    token_uid: c.cdr_token.uid,
    location_id: place.id,
    evse_uid: place.evse_uid,
  });
  const sessionId = sessionIdOf211Cdr(
    { start_date_time: c.start_date_time, cdr_location: { id: place.id, evse_uid: place.evse_uid, connector_id: place.connector_id } },
    candidates,
  );
  return sessionId === undefined ? cdr : { ...cdr, session_id: sessionId };
}
