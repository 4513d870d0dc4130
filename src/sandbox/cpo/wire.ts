// The OCPI version the sandbox network speaks on the wire (its personality):
// 2.2.1 (the default) or 2.1.1. The network works in 2.2.1 objects throughout;
// this file is the one place where they become what a 2.1.1 CPO sends
// (Locations with voltage/amperage/tariff_id, Tariffs without VAT, Sessions
// and CDRs with auth_id and a location object, CommandResponses, credentials
// of one party, endpoints without roles) and where what a 2.1.1 eMSP sends
// (Tokens without a party, START_SESSION, credentials, version details)
// becomes 2.2.1. Written from the OCPI 2.1.1 spec's tables, independently of
// the service's adapter (src/ocpi-protocol/v2_1_1/), which it is tested against.
// A 2.1.1 network sends no routing headers (2.1.1 has none) and raw tokens.
import type { Cdr } from '../../ocpi-protocol/cdrs.ts';
import type { CommandResponse, CommandResult, StartSession } from '../../ocpi-protocol/commands.ts';
import type { Credentials } from '../../ocpi-protocol/credentials.ts';
import type { OcpiConnector, OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { ChargingPeriod, Session } from '../../ocpi-protocol/sessions.ts';
import type { Token } from '../../ocpi-protocol/tokens.ts';
import { invalidParameters, type PartyRef } from '../../ocpi-protocol/transport.ts';
import type { Endpoint } from '../../ocpi-protocol/versions.ts';

export const PERSONALITIES = ['2.2.1', '2.1.1'] as const;
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
  /** Whether our credentials token is sent unencoded (2.1.1) or Base64-encoded (2.2.1). */
  rawTokens: boolean;
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

const omit = (o: Json, keys: readonly string[]): Json => Object.fromEntries(Object.entries(o).filter(([k, v]) => !keys.includes(k) && v !== undefined));

// 2.1.1 enumerations that 2.2.1 extended: values 2.1.1 does not know are left out.
const CAPABILITIES_211 = ['CHARGING_PROFILE_CAPABLE', 'CREDIT_CARD_PAYABLE', 'REMOTE_START_STOP_CAPABLE', 'RESERVABLE', 'RFID_READER', 'UNLOCK_CAPABLE'];
const FACILITIES_211 = [
  'HOTEL',
  'RESTAURANT',
  'CAFE',
  'MALL',
  'SUPERMARKET',
  'SPORT',
  'RECREATION_AREA',
  'NATURE',
  'MUSEUM',
  'BUS_STOP',
  'TAXI_STAND',
  'TRAIN_STATION',
  'AIRPORT',
  'CARPOOL_PARKING',
  'FUEL_STATION',
  'WIFI',
];
const DIMENSIONS_211 = ['ENERGY', 'FLAT', 'MAX_CURRENT', 'MIN_CURRENT', 'PARKING_TIME', 'TIME'];
const LOCATION_TYPES_211 = ['ON_STREET', 'PARKING_GARAGE', 'UNDERGROUND_GARAGE', 'PARKING_LOT'];

function connector211(c: OcpiConnector): Json {
  return omit({ ...c, voltage: c.max_voltage, amperage: c.max_amperage, tariff_id: c.tariff_ids?.[0] }, [
    'max_voltage',
    'max_amperage',
    'max_electric_power',
    'tariff_ids',
  ]);
}

function evse211(e: OcpiEvse): Json {
  return omit(
    { ...e, capabilities: e.capabilities?.filter((c) => CAPABILITIES_211.includes(c)), connectors: e.connectors.map(connector211) },
    ['status_schedule'].filter(() => (e.status_schedule ?? []).length === 0),
  );
}

/** A Location as 2.1.1 has it; `only`: with just that EVSE and connector (the location object of a Session or CDR). */
function location211(l: OcpiLocation, only?: { evseUid: string; connectorId: string }): Json {
  let evses = l.evses ?? [];
  if (only) {
    evses = evses.filter((e) => e.uid === only.evseUid).map((e) => ({ ...e, connectors: e.connectors.filter((c) => c.id === only.connectorId) }));
  }
  return omit(
    {
      ...l,
      type: l.parking_type && LOCATION_TYPES_211.includes(l.parking_type) ? l.parking_type : 'UNKNOWN',
      postal_code: l.postal_code ?? '',
      facilities: l.facilities?.filter((f) => FACILITIES_211.includes(f)),
      evses: evses.map(evse211),
    },
    ['country_code', 'party_id', 'publish', 'publish_allowed_to', 'parking_type', 'state'],
  );
}

function tariff211(t: OcpiTariff): Json {
  return omit(
    {
      ...t,
      elements: t.elements.map((e) => ({
        price_components: e.price_components.map((c) => omit(c, ['vat'])),
        ...(e.restrictions ? { restrictions: omit(e.restrictions, ['min_current', 'max_current', 'reservation']) } : {}),
      })),
    },
    ['country_code', 'party_id', 'type', 'min_price', 'max_price', 'start_date_time', 'end_date_time'],
  );
}

/** Charging periods with 2.1.1's dimensions only (a period left with none is left out: 2.1.1 wants one or more). */
function periods211(periods: readonly ChargingPeriod[]): Json[] {
  return periods.flatMap((p) => {
    const dimensions = p.dimensions.filter((d) => DIMENSIONS_211.includes(d.type));
    return dimensions.length > 0 ? [{ start_date_time: p.start_date_time, dimensions }] : [];
  });
}

/** 2.1.1's AuthMethod has no COMMAND (2.2): a remote start is an authorization the eMSP gave, AUTH_REQUEST. */
const authMethod211 = (m: string | undefined) => (m === 'COMMAND' ? 'AUTH_REQUEST' : m);

/** Session fields renamed as 2.1.1 names them (a whole Session or a PATCH). */
function sessionFields211(s: Json): Json {
  const out: Json = omit(s, [
    'country_code',
    'party_id',
    'start_date_time',
    'end_date_time',
    'cdr_token',
    'authorization_reference',
    'location_id',
    'evse_uid',
    'connector_id',
    'total_cost',
    'charging_periods',
    'auth_method',
  ]);
  if (s.start_date_time !== undefined) out.start_datetime = s.start_date_time;
  if (s.end_date_time !== undefined) out.end_datetime = s.end_date_time;
  if (s.auth_method !== undefined) out.auth_method = authMethod211(s.auth_method as string);
  if (s.total_cost !== undefined) out.total_cost = (s.total_cost as { excl_vat: number }).excl_vat;
  if (Array.isArray(s.charging_periods)) out.charging_periods = periods211(s.charging_periods as ChargingPeriod[]);
  if (s.status === 'RESERVATION') out.status = 'PENDING';
  const token = s.cdr_token as { contract_id?: string; uid?: string } | undefined;
  // 2.1.1 names the token by its auth_id, which the eMSP's 2.1.1 Token gave us (kept as contract_id, see tokenIn).
  if (token) out.auth_id = token.contract_id ?? token.uid;
  return out;
}

function placeOf(network: WireNetwork, locationId: string, evseUid: string, connectorId: string): Json {
  const location = network.location(locationId);
  if (!location) throw new Error(`no location ${locationId} in the network`);
  return location211(location, { evseUid, connectorId });
}

function cdr211(network: WireNetwork, c: Cdr): Json {
  const out = omit(c as unknown as Json, [
    'country_code',
    'party_id',
    'end_date_time',
    'session_id',
    'cdr_token',
    'authorization_reference',
    'cdr_location',
    'signed_data',
    'total_cost',
    'total_fixed_cost',
    'total_energy_cost',
    'total_time_cost',
    'total_parking_cost',
    'total_reservation_cost',
    'invoice_reference_id',
    'credit',
    'credit_reference_id',
    'home_charging_compensation',
    'charging_periods',
    'tariffs',
    'auth_method',
  ]);
  return {
    ...out,
    stop_date_time: c.end_date_time,
    auth_id: c.cdr_token.contract_id,
    auth_method: authMethod211(c.auth_method),
    location: placeOf(network, c.cdr_location.id, c.cdr_location.evse_uid, c.cdr_location.connector_id),
    ...(c.tariffs ? { tariffs: c.tariffs.map(tariff211) } : {}),
    charging_periods: periods211(c.charging_periods),
    total_cost: c.total_cost.excl_vat,
  };
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
    location: (l) => location211(l),
    evse: evse211,
    connector: connector211,
    tariff: tariff211,
    session: (s) => ({ ...sessionFields211(s as unknown as Json), location: placeOf(network, s.location_id, s.evse_uid, s.connector_id) }),
    sessionPatch: (p) => sessionFields211(p),
    cdr: (c) => cdr211(network, c),
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

export function wireFor(version: Personality, network: WireNetwork): Wire {
  return version === '2.1.1' ? wire211(network) : wire221;
}
