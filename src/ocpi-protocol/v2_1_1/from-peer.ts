// What an OCPI 2.1.1 CPO sends, as the 2.2.1 objects the rest of the service
// reads: Locations (EVSEs, Connectors), Tariffs, Sessions and CDRs (auth_id
// and a location object), command responses and results, credentials and
// version details. The one place where 2.1.1 is read: the receivers, pulls,
// commands and handshakes call these and never see a 2.1.1 shape.
// Each conversion that decides something is a named function saying why.
// The party of an object (2.1.1 objects carry none) comes from the caller:
// the URL of a push, or the connection's only party (2.1.1 credentials name
// one party).
import { countryByAlpha2 } from '../../platform/european-countries.ts';
import type { Credentials, CredentialsRole } from '../credentials.ts';
import type { PartyRef } from '../transport.ts';
import { type OcpiParseResult, validator } from '../validate.ts';
import type { Endpoint } from '../versions.ts';
import {
  Cdr211,
  type ChargingPeriod211,
  CommandResponse211,
  Connector211,
  Credentials211,
  Evse211,
  Location211,
  Session211,
  Tariff211,
  VersionDetails211,
} from './schemas.ts';

export const OCPI_2_1_1 = '2.1.1';

// With recording on (CI), every 2.1.1 object a peer sent that we read is recorded under "2.1.1/<object>" and held
// to the 2.1.1 spec's field lists by scripts/ocpi-official-check.ts (scripts/ocpi-211-fields.ts).
const parseLocation211 = validator(Location211, '2.1.1/Location');
const parseEvse211 = validator(Evse211, '2.1.1/EVSE');
const parseConnector211 = validator(Connector211, '2.1.1/Connector');
const parseTariff211 = validator(Tariff211, '2.1.1/Tariff');
const parseSession211 = validator(Session211, '2.1.1/Session');
const parseCdr211 = validator(Cdr211, '2.1.1/CDR');
const parseCommandResponse211 = validator(CommandResponse211, '2.1.1/CommandResponse');
const parseCredentials211 = validator(Credentials211, '2.1.1/Credentials');
const parseVersionDetails211 = validator(VersionDetails211, '2.1.1/VersionDetails');

type Result<T> = OcpiParseResult<T>;
const fail = (path: string, message: string): { ok: false; errors: { path: string; message: string }[] } => ({ ok: false, errors: [{ path, message }] });
const withoutUndefined = <T extends Record<string, unknown>>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/**
 * The VAT rate of a 2.1.1 Tariff's prices. 2.1.1 prices exclude VAT and state no rate (unlike 2.2.1's component `vat`,
 * whose absence means "no VAT applies"); leaving it out would bill a 2.1.1 CPO's charging without VAT. The rate of
 * the CPO's country (its credentials' country_code) applies; a country we have no rate for gets none (left out).
 */
export function vatOf211Tariff(party: PartyRef): number | undefined {
  const rate = countryByAlpha2(party.country_code)?.vat;
  return rate === undefined ? undefined : Number(rate);
}

/** 2.1.1's LocationType is 2.2.1's parking_type for the four parking kinds; OTHER and UNKNOWN say nothing a 2.2.1 reader can use: omitted. */
export function parkingTypeOf211LocationType(type: string): string | undefined {
  return ['ON_STREET', 'PARKING_GARAGE', 'UNDERGROUND_GARAGE', 'PARKING_LOT'].includes(type) ? type : undefined;
}

/** A 2.1.1 Connector as 2.2.1's: voltage and amperage are the maxima 2.2.1 names so; its one tariff_id becomes the list tariff_ids. */
export function connectorFrom211(connector: Connector211 & Record<string, unknown>): Record<string, unknown> {
  const { voltage, amperage, tariff_id, ...rest } = connector;
  return withoutUndefined({ ...rest, max_voltage: voltage, max_amperage: amperage, tariff_ids: tariff_id ? [tariff_id] : undefined });
}

function evseFrom211Object(evse: Evse211): Record<string, unknown> {
  return { ...evse, connectors: evse.connectors.map((c) => connectorFrom211(c as Connector211 & Record<string, unknown>)) };
}

function locationObjectFrom211(location: Location211, party: PartyRef): Result<Record<string, unknown>> {
  const { type, evses, ...rest } = location;
  return {
    ok: true,
    value: withoutUndefined({
      ...rest,
      country_code: party.country_code,
      party_id: party.party_id,
      // 2.1.1 has no publish flag: every Location a CPO lists is meant to be shown.
      publish: true,
      parking_type: parkingTypeOf211LocationType(type),
      // time_zone is optional in 2.1.1 and required in 2.2.1: when the CPO leaves it out, the tolerant reader that
      // every Location goes through next derives it (its country's zone, else the zone at its coordinates).
      evses: evses?.map(evseFrom211Object),
    }),
  };
}

/** A 2.1.1 Location (with its EVSEs and Connectors) as 2.2.1's, of `party`. */
export function locationFrom211(body: unknown, party: PartyRef): Result<Record<string, unknown>> {
  const parsed = parseLocation211(body);
  return parsed.ok ? locationObjectFrom211(parsed.value as Location211, party) : parsed;
}

/** A 2.1.1 EVSE pushed on its own (PUT .../{location_id}/{evse_uid}) as 2.2.1's; its faults named as 2.1.1 names its fields. */
export function evseFrom211(body: unknown): Result<Record<string, unknown>> {
  const parsed = parseEvse211(body);
  return parsed.ok ? { ok: true, value: evseFrom211Object(parsed.value as Evse211) } : parsed;
}

/** A 2.1.1 Connector pushed on its own (PUT .../{evse_uid}/{connector_id}) as 2.2.1's; its faults named as 2.1.1 names its fields. */
export function connectorFrom211Put(body: unknown): Result<Record<string, unknown>> {
  const parsed = parseConnector211(body);
  return parsed.ok ? { ok: true, value: connectorFrom211(parsed.value as Connector211 & Record<string, unknown>) } : parsed;
}

/** A PATCH of a 2.1.1 EVSE: its connectors, when present, renamed as connectorFrom211 does. */
export function evseFrom211Body(body: unknown): Record<string, unknown> | unknown {
  if (!body || typeof body !== 'object' || !Array.isArray((body as { connectors?: unknown }).connectors)) return body;
  const evse = body as Evse211;
  return { ...evse, connectors: evse.connectors.map((c) => (c && typeof c === 'object' ? connectorFrom211(c as Connector211 & Record<string, unknown>) : c)) };
}

/** A 2.1.1 Connector pushed on its own, or a PATCH of one: voltage/amperage/tariff_id renamed where present. */
export function connectorFrom211Body(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  return connectorFrom211(body as Connector211 & Record<string, unknown>);
}

/** A PATCH of a 2.1.1 Location: its `type` becomes parking_type; the rest is named alike. */
export function locationPatchFrom211(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const { type, ...rest } = body as Record<string, unknown>;
  return typeof type === 'string' ? withoutUndefined({ ...rest, parking_type: parkingTypeOf211LocationType(type) }) : rest;
}

/** A 2.1.1 Tariff as 2.2.1's, of `party` (price components carry no vat in 2.1.1: left out, as 2.2.1 allows). */
export function tariffFrom211(body: unknown, party: PartyRef): Result<Record<string, unknown>> {
  const parsed = parseTariff211(body);
  if (!parsed.ok) return parsed;
  return { ok: true, value: tariffObjectFrom211(parsed.value, party) };
}

function tariffObjectFrom211(tariff: Tariff211, party: PartyRef): Record<string, unknown> {
  const vat = vatOf211Tariff(party);
  const elements = tariff.elements.map((e) => ({ ...e, price_components: e.price_components.map((c) => (vat === undefined ? c : { ...c, vat })) }));
  return { ...tariff, elements, country_code: party.country_code, party_id: party.party_id };
}

/**
 * Where a 2.1.1 Session or CDR took place: its location object includes "only the relevant EVSE and connector",
 * so the one EVSE and its one connector name them (2.2.1's location_id, evse_uid, connector_id). A location object
 * with several EVSEs or connectors does not say which one was used: refused, not guessed.
 */
export function placeOf211Location(location: Location211): Result<{ location: Location211; evse: Evse211; connector: Connector211 }> {
  const evses = location.evses ?? [];
  if (evses.length !== 1) return fail('/location/evses', `must hold exactly the EVSE used (it holds ${evses.length})`);
  const evse = evses[0] as Evse211;
  if (evse.connectors.length !== 1) return fail('/location/evses/0/connectors', `must hold exactly the connector used (it holds ${evse.connectors.length})`);
  return { ok: true, value: { location, evse, connector: evse.connectors[0] as Connector211 } };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The 2.2.1 CdrToken of a 2.1.1 auth_id. 2.1.1 Sessions and CDRs name their token only by the Token's auth_id, and
 * the tokens we issue to 2.1.1 peers carry the user's id as auth_id (to-peer.ts, authIdOfToken): an auth_id that is
 * a user id is that user's APP_USER token (uid = the user id), the token our sessions are matched by. Any other
 * auth_id (a token not ours, a free-charging card) is kept as an OTHER token of that auth_id. The token belongs to
 * the eMSP the message was sent to: `emsp` (2.1.1 tokens carry no party).
 */
export function cdrTokenOf211AuthId(authId: string, emsp: PartyRef): Record<string, unknown> {
  const ours = UUID.test(authId);
  return {
    country_code: emsp.country_code,
    party_id: emsp.party_id,
    uid: ours ? authId.toLowerCase() : authId,
    type: ours ? 'APP_USER' : 'OTHER',
    contract_id: authId,
  };
}

/**
 * 2.1.1 charging periods as 2.2.1's. FLAT has no counterpart among 2.2.1's dimensions (a flat fee is priced from
 * the tariff, not measured): dropped; a period left without dimensions is dropped too (2.2.1 wants one or more).
 */
export function chargingPeriodsFrom211(periods: ChargingPeriod211[]): Record<string, unknown>[] {
  return periods.flatMap((p) => {
    const dimensions = p.dimensions.filter((d) => d.type !== 'FLAT');
    return dimensions.length > 0 ? [{ start_date_time: p.start_date_time, dimensions }] : [];
  });
}

/** A 2.1.1 cost (a number, excluding VAT) as 2.2.1's Price: excl_vat; incl_vat is not known and is left out. */
export const priceOf211Cost = (cost: number) => ({ excl_vat: cost });

/** A 2.1.1 Session as 2.2.1's, of `party`, its token ours (`emsp`). 2.1.1 has no authorization_reference: matched by token, EVSE and time. */
export function sessionFrom211(body: unknown, party: PartyRef, emsp: PartyRef): Result<Record<string, unknown>> {
  const parsed = parseSession211(body);
  if (!parsed.ok) return parsed;
  const s = parsed.value as Session211 & Record<string, unknown>;
  const place = placeOf211Location(s.location as Location211);
  if (!place.ok) return place;
  const { start_datetime, end_datetime, auth_id, location: _location, total_cost, charging_periods, ...rest } = s;
  return {
    ok: true,
    value: withoutUndefined({
      ...rest,
      country_code: party.country_code,
      party_id: party.party_id,
      start_date_time: start_datetime,
      end_date_time: end_datetime,
      cdr_token: cdrTokenOf211AuthId(auth_id, emsp),
      location_id: place.value.location.id,
      evse_uid: place.value.evse.uid,
      connector_id: place.value.connector.id,
      charging_periods: charging_periods ? chargingPeriodsFrom211(charging_periods) : undefined,
      total_cost: total_cost === undefined ? undefined : priceOf211Cost(total_cost),
    }),
  };
}

/** A PATCH of a 2.1.1 Session: fields renamed as sessionFrom211 does, for those present. */
export function sessionPatchFrom211(body: unknown, emsp: PartyRef): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const { start_datetime, end_datetime, auth_id, location, total_cost, charging_periods, ...rest } = body as Record<string, unknown>;
  const patch: Record<string, unknown> = { ...rest };
  if (start_datetime !== undefined) patch.start_date_time = start_datetime;
  if (end_datetime !== undefined) patch.end_date_time = end_datetime;
  if (typeof auth_id === 'string') patch.cdr_token = cdrTokenOf211AuthId(auth_id, emsp);
  if (typeof total_cost === 'number') patch.total_cost = priceOf211Cost(total_cost);
  else if (total_cost !== undefined) patch.total_cost = total_cost;
  if (Array.isArray(charging_periods)) patch.charging_periods = chargingPeriodsFrom211(charging_periods as ChargingPeriod211[]);
  if (location !== undefined) {
    const parsed = parseLocation211(location);
    const place = parsed.ok ? placeOf211Location(parsed.value as Location211) : parsed;
    if (!place.ok)
      patch.location = location; // left for the 2.2.1 check to refuse (an unknown field of a wrong shape)
    else Object.assign(patch, { location_id: place.value.location.id, evse_uid: place.value.evse.uid, connector_id: place.value.connector.id });
  }
  return patch;
}

/**
 * A 2.1.1 CDR's location object as 2.2.1's CdrLocation. evse_id is optional in 2.1.1 and required in a 2.2.1
 * CdrLocation: an EVSE without one is named by its uid (the CPO's own identification of it).
 */
export function cdrLocationOf211(place: { location: Location211; evse: Evse211; connector: Connector211 }): Record<string, unknown> {
  const { location, evse, connector } = place;
  return withoutUndefined({
    id: location.id,
    name: location.name,
    address: location.address,
    city: location.city,
    postal_code: location.postal_code,
    country: location.country,
    coordinates: { latitude: location.coordinates.latitude, longitude: location.coordinates.longitude },
    evse_uid: evse.uid,
    evse_id: evse.evse_id ?? evse.uid,
    connector_id: connector.id,
    connector_standard: connector.standard,
    connector_format: connector.format,
    connector_power_type: connector.power_type,
  });
}

/** A 2.1.1 CDR as 2.2.1's, of `party`, its token ours (`emsp`). 2.1.1 has no session_id: the CDR is matched by token, EVSE and time. */
export function cdrFrom211(body: unknown, party: PartyRef, emsp: PartyRef): Result<Record<string, unknown>> {
  const parsed = parseCdr211(body);
  if (!parsed.ok) return parsed;
  const c = parsed.value as Cdr211 & Record<string, unknown>;
  const place = placeOf211Location(c.location as Location211);
  if (!place.ok) return place;
  const periods = chargingPeriodsFrom211(c.charging_periods);
  if (periods.length === 0) return fail('/charging_periods', 'must hold a period with a dimension other than FLAT');
  const { stop_date_time, auth_id, location: _location, total_cost, charging_periods: _periods, tariffs, ...rest } = c;
  return {
    ok: true,
    value: withoutUndefined({
      ...rest,
      country_code: party.country_code,
      party_id: party.party_id,
      end_date_time: stop_date_time,
      cdr_token: cdrTokenOf211AuthId(auth_id, emsp),
      cdr_location: cdrLocationOf211(place.value),
      charging_periods: periods,
      tariffs: tariffs?.map((t) => tariffObjectFrom211(t, party)),
      total_cost: priceOf211Cost(total_cost),
    }),
  };
}

/**
 * A 2.1.1 CommandResponse type as the 2.2.1 CommandResult type of a command's asynchronous result. The five
 * values map to themselves, but UNKNOWN_SESSION (no 2.2.1 result names it): FAILED, the command did not succeed.
 */
export function commandResultTypeOf211(result: string): string {
  return result === 'UNKNOWN_SESSION' ? 'FAILED' : result;
}

/** The result a 2.1.1 CPO POSTs to our response_url (a CommandResponse) as 2.2.1's CommandResult. */
export function commandResultFrom211(body: unknown): Result<{ result: string }> {
  const parsed = parseCommandResponse211(body);
  return parsed.ok ? { ok: true, value: { result: commandResultTypeOf211(parsed.value.result) } } : parsed;
}

/**
 * A 2.1.1 CPO's immediate answer to a command as 2.2.1's CommandResponse. 2.1.1 gives no timeout: `timeoutSeconds`
 * (how long we wait for the result anyway) fills it. TIMEOUT (the charge point did not answer the CPO) is a refusal
 * of this command: REJECTED, with TIMEOUT as its message.
 */
export function commandResponseFrom211(
  body: unknown,
  timeoutSeconds: number,
): Result<{ result: string; timeout: number; message?: { language: string; text: string }[] }> {
  const parsed = parseCommandResponse211(body);
  if (!parsed.ok) return parsed;
  const result = parsed.value.result;
  if (result === 'TIMEOUT') return { ok: true, value: { result: 'REJECTED', timeout: timeoutSeconds, message: [{ language: 'en', text: 'TIMEOUT' }] } };
  return { ok: true, value: { result, timeout: timeoutSeconds } };
}

/** 2.1.1 credentials as 2.2.1's. 2.1.1 has no roles: a party that exchanges credentials with an eMSP is a CPO (the only peers we connect to). */
export function credentialsFrom211(body: unknown): Result<Credentials> {
  const parsed = parseCredentials211(body);
  if (!parsed.ok) return parsed;
  const c = parsed.value;
  const role: CredentialsRole = { role: 'CPO', business_details: c.business_details, party_id: c.party_id, country_code: c.country_code };
  return { ok: true, value: { token: c.token, url: c.url, roles: [role] } };
}

/**
 * A 2.1.1 CPO's endpoints with the role 2.2.1 gives each (2.1.1 endpoints have none): the CPO receives commands and
 * tokens; of every other module (locations, tariffs, sessions, cdrs, credentials) it is the sender.
 */
export function endpointRoleOf211(identifier: string): 'SENDER' | 'RECEIVER' {
  return identifier === 'commands' || identifier === 'tokens' ? 'RECEIVER' : 'SENDER';
}

/** 2.1.1 version details as 2.2.1's endpoints. */
export function endpointsFrom211(body: unknown): Result<Endpoint[]> {
  const parsed = parseVersionDetails211(body);
  if (!parsed.ok) return parsed;
  return { ok: true, value: parsed.value.endpoints.map((e) => ({ identifier: e.identifier, role: endpointRoleOf211(e.identifier), url: e.url })) };
}

/** An object pulled from a 2.1.1 CPO's Sender interface of `module`, as 2.2.1's; `party`: the connection's CPO party, `emsp`: us. */
export function pulledFrom211(
  module: 'tariffs' | 'locations' | 'sessions' | 'cdrs',
  object: unknown,
  party: PartyRef,
  emsp: PartyRef,
): Result<Record<string, unknown>> {
  switch (module) {
    case 'tariffs':
      return tariffFrom211(object, party);
    case 'locations':
      return locationFrom211(object, party);
    case 'sessions':
      return sessionFrom211(object, party, emsp);
    case 'cdrs':
      return cdrFrom211(object, party, emsp);
  }
}

/** A Session as sessionOf211Cdr weighs it (2.2.1 fields, as stored). */
export interface SessionCandidate {
  id: string;
  start_date_time: string;
  location_id: string;
  evse_uid: string;
  connector_id: string;
}

/** How far apart a CDR's start and its Session's start may be (CPOs round or re-stamp the start; 2.1.1 says nothing). */
const START_TOLERANCE_MS = 5 * 60_000;

/**
 * The CPO's Session a 2.1.1 CDR is of: 2.1.1 CDRs carry no session_id (2.2.1 added it), and without it the CDR of a
 * session we know cannot be linked to it. `candidates`: the connection's Sessions of the same party, token and EVSE.
 * The one at the same connector that started at the CDR's start_date_time; else the one whose start is nearest
 * within 5 minutes; none when two are equally near (never guessed) or none is near.
 */
export function sessionIdOf211Cdr(
  cdr: { start_date_time: string; cdr_location: { id: string; evse_uid: string; connector_id: string } },
  candidates: readonly SessionCandidate[],
): string | undefined {
  const start = Date.parse(cdr.start_date_time);
  const near = candidates
    .filter((s) => s.location_id === cdr.cdr_location.id && s.evse_uid === cdr.cdr_location.evse_uid && s.connector_id === cdr.cdr_location.connector_id)
    .map((s) => ({ id: s.id, gap: Math.abs(Date.parse(s.start_date_time) - start) }))
    .filter((s) => Number.isFinite(s.gap) && s.gap <= START_TOLERANCE_MS)
    .sort((a, b) => a.gap - b.gap);
  const [best, next] = near;
  if (!best || (next && next.gap === best.gap)) return undefined;
  return best.id;
}
