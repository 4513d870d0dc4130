// The OCPI version the sandbox network speaks on the wire (its personality):
// 2.2.1 (the default), 2.2 (with raw tokens, wire22) or 2.1.1. The network works in 2.2.1 objects throughout;
// this file is the one place where they become what a 2.1.1 CPO sends
// (Locations with voltage/amperage/tariff_id, Tariffs without VAT, Sessions
// and CDRs with auth_id and a location object, CommandResponses, credentials
// of one party, endpoints without roles) and where what a 2.1.1 eMSP sends
// (Tokens without a party, START_SESSION, credentials, version details)
// becomes 2.2.1. Written from the OCPI 2.1.1 spec's tables, independently of
// the readers of the service's adapter (src/ocpi-protocol/v2_1_1/from-peer.ts);
// the CPO objects are written by the adapter's cpo-objects.ts (the one writer
// of 2.1.1 CPO objects, which the service's 2.1.1 GETs use too). The tests
// hold what crosses the wire to the 2.1.1 spec's field lists.
// A 2.1.1 network sends no routing headers (2.1.1 has none) and raw tokens.
import type { Cdr } from '../../ocpi-protocol/cdrs.ts';
import type { CommandResponse, CommandResult, StartSession } from '../../ocpi-protocol/commands.ts';
import type { Credentials } from '../../ocpi-protocol/credentials.ts';
import type { OcpiConnector, OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Session } from '../../ocpi-protocol/sessions.ts';
import type { Token } from '../../ocpi-protocol/tokens.ts';
import { invalidParameters, type PartyRef } from '../../ocpi-protocol/transport.ts';
import { cdrTo211, connectorTo211, evseTo211, locationTo211, sessionPatchTo211, sessionTo211, tariffTo211 } from '../../ocpi-protocol/v2_1_1/cpo-objects.ts';
import { withCdrTokenTo22 } from '../../ocpi-protocol/v2_2/adapter.ts';
import type { Endpoint } from '../../ocpi-protocol/versions.ts';

export const PERSONALITIES = ['2.2.1', '2.2', '2.1.1'] as const;
export type Personality = (typeof PERSONALITIES)[number];

type Json = Record<string, unknown>;

/** What the network needs of itself to write 2.1.1 (a Session or CDR carries its Location object). */
export interface WireNetwork {
  location(id: string): OcpiLocation | undefined;
}

export interface Wire {
  version: Personality;
  /** Whether functional modules carry the four routing headers (2.2.1) or none (2.1.1). */
  routing: boolean;
  /** Whether our credentials token is sent unencoded (2.1.1, 2.2) or Base64-encoded (2.2.1). */
  rawTokens: boolean;
  /** Whether a peer's token is also taken Base64-encoded (2.2.1, and the lenient 2.1.1 network), or only as it is (2.2: compared literally). */
  acceptsEncodedTokens: boolean;
  location(location: OcpiLocation): unknown;
  evse(evse: OcpiEvse): unknown;
  connector(connector: OcpiConnector): unknown;
  tariff(tariff: OcpiTariff): unknown;
  session(session: Session): unknown;
  sessionPatch(patch: Json): unknown;
  cdr(cdr: Cdr): unknown;
  commandResponse(response: CommandResponse): unknown;
  commandResult(result: CommandResult): unknown;
  credentials(credentials: Credentials): unknown;
  versionDetails(version: string, endpoints: Endpoint[]): unknown;
  /** An eMSP's credentials as 2.2.1 has them (2.2.1: as they came). */
  credentialsIn(body: unknown): unknown;
  /** An eMSP's version details' endpoints (2.1.1: with the role an eMSP plays in each). */
  endpointsIn(details: unknown): unknown;
  /** A Token PUT by the eMSP, as 2.2.1 has it; `party`: the eMSP party of the URL. */
  tokenIn(body: unknown, party: PartyRef): unknown;
  token(token: Token): unknown;
  startSessionIn(body: unknown, emsp: PartyRef | undefined): unknown;
}

export const wire221: Wire = {
  version: '2.2.1',
  routing: true,
  rawTokens: false,
  acceptsEncodedTokens: true,
  location: (l) => l,
  evse: (e) => e,
  connector: (c) => c,
  tariff: (t) => t,
  session: (s) => s,
  sessionPatch: (p) => p,
  cdr: (c) => c,
  commandResponse: (r) => r,
  commandResult: (r) => r,
  credentials: (c) => c,
  versionDetails: (version, endpoints) => ({ version, endpoints }),
  credentialsIn: (b) => b,
  endpointsIn: (d) => d,
  tokenIn: (b) => b,
  token: (t) => t,
  startSessionIn: (b) => b,
};

function placeOf(network: WireNetwork, locationId: string): OcpiLocation {
  const location = network.location(locationId);
  if (!location) throw new Error(`no location ${locationId} in the network`);
  return location;
}

/** 2.1.1's CommandResponseType has five values; 2.2.1's results the charge point gives beyond those are refusals. */
function commandResult211(result: string): string {
  return ['ACCEPTED', 'NOT_SUPPORTED', 'REJECTED', 'TIMEOUT', 'UNKNOWN_SESSION'].includes(result) ? result : 'REJECTED';
}

function requireFields(body: unknown, fields: readonly string[], what: string): Json {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidParameters(`${what} must be a JSON object`);
  const missing = fields.filter((f) => (body as Json)[f] === undefined || (body as Json)[f] === null);
  if (missing.length > 0) throw invalidParameters(`${what} (OCPI 2.1.1) lacks ${missing.join(', ')}`);
  return body as Json;
}

/** What an eMSP's 2.1.1 Token must carry (mod_tokens 3.2); one with 2.2.1-only fields is not a 2.1.1 Token. */
function token221Of(body: unknown, party: PartyRef): Json {
  const t = requireFields(body, ['uid', 'type', 'auth_id', 'issuer', 'valid', 'whitelist', 'last_updated'], 'Token');
  const extra = ['country_code', 'party_id', 'contract_id'].filter((f) => t[f] !== undefined);
  if (extra.length > 0) throw invalidParameters(`Token (OCPI 2.1.1) has no ${extra.join(', ')}`);
  if (t.type !== 'OTHER' && t.type !== 'RFID') throw invalidParameters('Token.type (OCPI 2.1.1) is OTHER or RFID');
  const { auth_id, ...rest } = t;
  return { ...rest, country_code: party.country_code, party_id: party.party_id, contract_id: auth_id };
}

const ROLELESS_SENDERS_211 = new Set(['tokens']);

export function wire211(network: WireNetwork): Wire {
  return {
    version: '2.1.1',
    routing: false,
    rawTokens: true,
    acceptsEncodedTokens: true,
    location: (l) => locationTo211(l),
    evse: evseTo211,
    connector: connectorTo211,
    tariff: tariffTo211,
    session: (s) => sessionTo211(s, placeOf(network, s.location_id)),
    sessionPatch: (p) => sessionPatchTo211(p),
    cdr: (c) => cdrTo211(c, placeOf(network, c.cdr_location.id)),
    commandResponse: (r) => ({ result: r.result }),
    commandResult: (r) => ({ result: commandResult211(r.result) }),
    credentials: (c) => {
      const role = c.roles[0];
      if (!role) throw new Error('no party to name in 2.1.1 credentials');
      return { token: c.token, url: c.url, business_details: role.business_details, party_id: role.party_id, country_code: role.country_code };
    },
    versionDetails: (version, endpoints) => ({ version, endpoints: endpoints.map((e) => ({ identifier: e.identifier, url: e.url })) }),
    credentialsIn: (body) => {
      const c = requireFields(body, ['token', 'url', 'business_details', 'party_id', 'country_code'], 'Credentials');
      if (c.roles !== undefined) throw invalidParameters('Credentials (OCPI 2.1.1) have no roles');
      return {
        token: c.token,
        url: c.url,
        roles: [{ role: 'EMSP', business_details: c.business_details, party_id: c.party_id, country_code: c.country_code }],
      };
    },
    endpointsIn: (details) => {
      const d = requireFields(details, ['version', 'endpoints'], 'VersionDetails');
      if (!Array.isArray(d.endpoints)) return d;
      // An eMSP receives locations, tariffs, sessions and cdrs (and command results); it is the sender of tokens.
      const endpoints = (d.endpoints as Json[]).map((e) => {
        if (e.role !== undefined) throw invalidParameters('Endpoint (OCPI 2.1.1) has no role');
        return { ...e, role: ROLELESS_SENDERS_211.has(String(e.identifier)) ? 'SENDER' : 'RECEIVER' };
      });
      return { ...d, endpoints };
    },
    tokenIn: token221Of,
    token: (t) => {
      const { country_code: _cc, party_id: _pid, contract_id, group_id: _g, default_profile_type: _d, energy_contract: _e, ...rest } = t;
      return { ...rest, auth_id: contract_id };
    },
    startSessionIn: (body, emsp) => {
      const s = requireFields(body, ['response_url', 'token', 'location_id'], 'StartSession');
      const extra = ['connector_id', 'authorization_reference'].filter((f) => s[f] !== undefined);
      if (extra.length > 0) throw invalidParameters(`StartSession (OCPI 2.1.1) has no ${extra.join(', ')}`);
      if (!emsp) throw invalidParameters('the eMSP has no party');
      return { ...s, token: token221Of(s.token, emsp) } satisfies Partial<Record<keyof StartSession, unknown>>;
    },
  };
}

/**
 * An OCPI 2.2 CPO of the kind many are: it sends its credentials token unencoded and compares the one it is given as
 * it is (a Base64-encoded token is an unknown token: 401), and writes and reads 2.2's objects, which are 2.2.1's but
 * for what 2.2.1 added (its changelog): no country_code/party_id in a Session's or CDR's cdr_token, no connector_id in
 * START_SESSION (refused: a strict 2.2 CPO does not know it). Routing headers as in 2.2.1 (2.2 introduced them).
 */
export const wire22: Wire = {
  ...wire221,
  version: '2.2',
  rawTokens: true,
  acceptsEncodedTokens: false,
  // A CdrToken as 2.2 has it: 2.2.1 added country_code and party_id (the 2.2 adapter's, as we answer a 2.2 peer).
  session: (s) => withCdrTokenTo22(s),
  sessionPatch: (p) => withCdrTokenTo22(p),
  cdr: (c) => withCdrTokenTo22(c),
  startSessionIn: (body) => {
    if (body && typeof body === 'object' && (body as Json).connector_id !== undefined) {
      throw invalidParameters('StartSession (OCPI 2.2) has no connector_id (OCPI 2.2.1 added it)');
    }
    return body;
  },
};

export function wireFor(version: Personality, network: WireNetwork): Wire {
  return version === '2.1.1' ? wire211(network) : version === '2.2' ? wire22 : wire221;
}
