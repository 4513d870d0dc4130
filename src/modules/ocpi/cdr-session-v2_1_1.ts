// A CDR from an OCPI 2.1.1 CPO names no session (2.2.1 added session_id):
// before it is stored and handed to charging, it is linked to the CPO's
// Session it belongs to, as the 2.1.1 adapter decides (sessionIdOf211Cdr:
// same token and EVSE, the start that matches), so a session we started is
// completed and billed by its CDR like a 2.2.1 one. The CDRs of a pulled page
// are linked together, with one query for all their candidate Sessions.
import { type SessionCandidate, sessionIdOf211Cdr } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
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

/** What a CDR's Session is looked up by (its party, token and EVSE), and what picks among them (its start, its connector); none when it names a session already or lacks a part. */
function lookupOf(cdr: Record<string, unknown>) {
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
    return undefined;
  }
  const key = {
    country_code: c.country_code.toUpperCase(),
    party_id: c.party_id.toUpperCase(),
    token_uid: c.cdr_token.uid,
    location_id: place.id,
    evse_uid: place.evse_uid,
  };
  return { key, start: c.start_date_time, place: { id: place.id, evse_uid: place.evse_uid, connector_id: place.connector_id } };
}

const keyText = (k: repo.SessionLookupKey) => JSON.stringify([k.country_code, k.party_id, k.token_uid, k.location_id, k.evse_uid]);

/**
 * The converted 2.1.1 CDRs, each with the session_id of its Session when one matches (as it was otherwise, or when it
 * already names one): one query for the candidate Sessions of them all.
 */
export async function linkCdrsToSessions211<T extends Record<string, unknown>>(db: Queryable, connectionId: string, cdrs: readonly T[]): Promise<T[]> {
  const lookups = cdrs.map(lookupOf);
  const keys = new Map<string, repo.SessionLookupKey>();
  for (const l of lookups) if (l) keys.set(keyText(l.key), l.key);
  if (keys.size === 0) return [...cdrs];
  const candidates = new Map<string, SessionCandidate[]>();
  for (const row of await repo.sessionsOfTokensAtEvses(db, connectionId, [...keys.values()])) {
    const k = keyText(row);
    candidates.set(k, [...(candidates.get(k) ?? []), row]);
  }
  return cdrs.map((cdr, i) => {
    const l = lookups[i];
    if (!l) return cdr;
    const sessionId = sessionIdOf211Cdr({ start_date_time: l.start, cdr_location: l.place }, candidates.get(keyText(l.key)) ?? []);
    return sessionId === undefined ? cdr : { ...cdr, session_id: sessionId };
  });
}

/** One converted 2.1.1 CDR (a push) linked as linkCdrsToSessions211 does. */
export async function linkCdrToSession211<T extends Record<string, unknown>>(db: Queryable, connectionId: string, cdr: T): Promise<T> {
  return (await linkCdrsToSessions211(db, connectionId, [cdr]))[0] as T;
}
