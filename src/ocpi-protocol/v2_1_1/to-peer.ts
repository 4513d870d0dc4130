// What we send to an OCPI 2.1.1 CPO, from the 2.2.1 objects the service
// builds: Tokens (no country_code/party_id, type OTHER), START_SESSION and
// STOP_SESSION, credentials (one party, no roles), our version details
// (endpoints without roles) and real-time authorization answers. The one
// place where 2.1.1 is written; from-peer.ts reads it.
import type { Credentials } from '../credentials.ts';
import { recordOcpiMessage } from '../validate.ts';
import type { Token211 } from './schemas.ts';

/** What of a 2.2.1 Token a 2.1.1 Token is made of. */
export interface Token221 {
  uid: string;
  type: string;
  contract_id: string;
  visual_number?: string | undefined;
  issuer: string;
  valid: boolean;
  whitelist: string;
  language?: string | undefined;
  last_updated: string;
}

/**
 * 2.1.1 knows two token types, RFID and OTHER: an app user's token (APP_USER, AD_HOC_USER in 2.2.1) is OTHER ("other
 * type of token"); an RFID card stays RFID.
 */
export function tokenTypeTo211(type: string): 'OTHER' | 'RFID' {
  return type === 'RFID' ? 'RFID' : 'OTHER';
}

/**
 * The auth_id of a token we send to a 2.1.1 CPO: the token's uid (the user's id, 36 characters, the most 2.1.1's
 * auth_id holds). 2.1.1 Sessions and CDRs name their token only by auth_id; carrying the uid there lets
 * from-peer.ts (cdrTokenOf211AuthId) find the user again without a lookup table. The human-readable contract id
 * (2.2.1's contract_id) travels as visual_number.
 */
export function authIdOfToken(token: Pick<Token221, 'uid'>): string {
  return token.uid;
}

/** What we write, recorded under "2.1.1/<object>" with recording on (CI: held to the 2.1.1 spec's field lists). */
function written<T>(object: string, message: T): T {
  recordOcpiMessage(`2.1.1/${object}`, message);
  return message;
}

/** A 2.2.1 Token as 2.1.1's: no country_code, party_id, contract_id, group_id, profile or energy contract. */
export function tokenTo211(token: Token221): Token211 {
  const out: Token211 = {
    uid: token.uid,
    type: tokenTypeTo211(token.type),
    auth_id: authIdOfToken(token),
    visual_number: token.visual_number ?? token.contract_id,
    issuer: token.issuer,
    valid: token.valid,
    whitelist: token.whitelist as Token211['whitelist'],
    last_updated: token.last_updated,
  };
  if (token.language) out.language = token.language;
  return written('Token', out);
}

/**
 * A START_SESSION as 2.1.1 has it: response_url, token, location_id and evse_uid. 2.1.1 has no connector_id (the
 * charge point picks the connector of the EVSE) and no authorization_reference (the Session is matched by token,
 * EVSE and time).
 */
export function startSessionTo211(command: { response_url: string; token: Token221; location_id: string; evse_uid?: string | undefined }) {
  return written('StartSession', {
    response_url: command.response_url,
    token: tokenTo211(command.token),
    location_id: command.location_id,
    ...(command.evse_uid ? { evse_uid: command.evse_uid } : {}),
  });
}

/** A STOP_SESSION as 2.1.1 has it (the same two fields as 2.2.1). */
export function stopSessionTo211(command: { response_url: string; session_id: string }) {
  return written('StopSession', { response_url: command.response_url, session_id: command.session_id });
}

/** Our 2.2.1 credentials as 2.1.1's: the one party of our EMSP role, its business details, no roles list. */
export function credentialsTo211(credentials: Credentials) {
  const role = credentials.roles.find((r) => r.role === 'EMSP') ?? credentials.roles[0];
  if (!role) throw new Error('credentials without a role');
  return written('Credentials', {
    token: credentials.token,
    url: credentials.url,
    business_details: role.business_details,
    party_id: role.party_id,
    country_code: role.country_code,
  });
}

/** Our version details as 2.1.1's: identifier and url per endpoint (2.1.1 has no roles and no hubclientinfo module). */
export function versionDetailsTo211(endpoints: readonly { identifier: string; url: string }[]) {
  return written('VersionDetails', {
    version: '2.1.1',
    endpoints: endpoints.filter((e) => e.identifier !== 'hubclientinfo').map((e) => ({ identifier: e.identifier, url: e.url })),
  });
}

/** A 2.2.1 AuthorizationInfo as 2.1.1's: allowed, location, info (2.1.1 has no token or authorization_reference in it). */
export function authorizationInfoTo211(info: { allowed: string; location?: unknown; info?: unknown }) {
  return { allowed: info.allowed, ...(info.location ? { location: info.location } : {}), ...(info.info ? { info: info.info } : {}) };
}

/**
 * A push of our outbox (a Token PUT to .../{country_code}/{party_id}/{uid}?type=APP_USER, built in 2.2.1's shape)
 * as a 2.1.1 CPO takes it: the body a 2.1.1 Token, and no `type` parameter (2.1.1's Tokens PUT has none: a uid names
 * one token). Other modules' pushes are left as they are.
 */
export function pushTo211(push: { module: string; path: string; body: unknown }): { path: string; body: unknown } {
  if (push.module !== 'tokens') return { path: push.path, body: push.body };
  const path = push.path.replace(/\?.*$/, '');
  const body = push.body as Token221 | null | undefined;
  return { path, body: body && typeof body === 'object' && typeof body.uid === 'string' && typeof body.last_updated === 'string' ? tokenTo211(body) : body };
}
