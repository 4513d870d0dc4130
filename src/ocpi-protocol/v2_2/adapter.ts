// OCPI 2.2 as the service speaks it: the one place where what differs between
// 2.2 and 2.2.1 is mapped, both ways. The rest of the service reads and
// writes 2.2.1 objects; the 2.2 edge (routes under /ocpi/2.2), pulls,
// commands and pushes to a 2.2 connection call these.
//
// What differs between OCPI 2.2 and 2.2.1 (changelog "Changes between OCPI
// 2.2 and 2.2.1"), module by module, for the modules we use:
//
//   credentials, versions   the same objects; the version number is "2.2".
//   transport               the same routing headers and status codes, but
//                           4000 "Hub generic error" is 2.2.1's (never sent to
//                           a 2.2 peer: we send no hub codes at all). 2.2's
//                           text on the Authorization header was not clear
//                           about Base64 (2.2.1 added the note): 2.2 peers
//                           commonly send and expect the token unencoded, so
//                           a 2.2 connection's token form is detected (first
//                           Base64, then unencoded on a 401) or configured
//                           (--raw-tokens), per connection, as for any peer.
//   sessions, cdrs          CdrToken: country_code and party_id are 2.2.1's
//                           (mandatory there, absent in 2.2). A 2.2 Session or
//                           CDR sent to us names our token without them: the
//                           token is the eMSP's the message was sent to (ours),
//                           so they are filled with our party
//                           (cdrTokenFrom22). Our answers to a 2.2 peer's GET
//                           leave them out (cdrTokenTo22).
//   cdrs                    CDR.home_charging_compensation is 2.2.1's
//                           (optional; a 2.2 CDR has none). CdrLocation:
//                           postal_code is required in 2.2 (optional in
//                           2.2.1), state is 2.2.1's; SignedData.public_key
//                           and SignedValue's plain_data/signed_data/url were
//                           CiStrings (512) in 2.2: all of it read the same.
//   commands                StartSession.connector_id is 2.2.1's: a 2.2 CPO
//                           gets START_SESSION for the EVSE, without it (the
//                           charge point picks the connector).
//   locations               Capability START_SESSION_CONNECTOR_REQUIRED,
//                           ConnectorTypes NEMA_*, GBT_*, CHAOJI,
//                           DOMESTIC_M/N/O and PowerTypes AC_2_PHASE and
//                           AC_2_PHASE_SPLIT are 2.2.1's: a 2.2 CPO sends none
//                           of them, nothing to map (we only receive).
//   tariffs, tokens         no difference.
//   hubclientinfo           no difference.
import type { PartyRef } from '../transport.ts';

export const OCPI_2_2 = '2.2';

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A 2.2 CdrToken as 2.2.1's: the token of a Session or CDR sent to us is ours (the eMSP the CPO sends it to), so its
 * party is ours, `emsp`. A party the CPO did name (a 2.2 peer that already sends 2.2.1's fields) is kept.
 */
export function cdrTokenFrom22(token: unknown, emsp: PartyRef): unknown {
  if (!isRecord(token)) return token;
  return { country_code: emsp.country_code, party_id: emsp.party_id, ...token };
}

/** A 2.2.1 CdrToken as 2.2's: without country_code and party_id. */
export function cdrTokenTo22(token: unknown): unknown {
  if (!isRecord(token)) return token;
  const { country_code: _cc, party_id: _pid, ...rest } = token;
  return rest;
}

/** A Session (or a Session PATCH, or a CDR: both carry cdr_token) a 2.2 CPO sent, as 2.2.1's. */
export function withCdrTokenFrom22(body: unknown, emsp: PartyRef): unknown {
  if (!isRecord(body) || body.cdr_token === undefined) return body;
  return { ...body, cdr_token: cdrTokenFrom22(body.cdr_token, emsp) };
}

/** A stored Session or CDR as a 2.2 peer reads it (GET on our Receiver): its cdr_token without the party fields. */
export function withCdrTokenTo22(object: unknown): unknown {
  if (!isRecord(object) || object.cdr_token === undefined) return object;
  return { ...object, cdr_token: cdrTokenTo22(object.cdr_token) };
}

/** A START_SESSION as 2.2 has it: without connector_id (2.2.1 added it for OCPP 1.x charge points). */
export function startSessionTo22<T extends Json>(command: T): Omit<T, 'connector_id'> {
  const { connector_id: _connector, ...rest } = command;
  return rest;
}

/** An object pulled from a 2.2 CPO's Sender interface of `module`, as 2.2.1's (Sessions and CDRs: the token's party is ours). */
export function pulledFrom22(module: string, object: unknown, emsp: PartyRef): unknown {
  return module === 'sessions' || module === 'cdrs' ? withCdrTokenFrom22(object, emsp) : object;
}
