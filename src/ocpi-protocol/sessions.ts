// OCPI 2.2.1 Sessions module (mod_sessions.asciidoc): the Session object a CPO
// pushes while a driver charges, and the PATCH body that updates it. The
// classes Sessions share with CDRs (CdrToken, AuthMethod, ChargingPeriod,
// CdrDimension, from mod_cdrs.asciidoc) live here; cdrs.ts imports them.
// Written from the spec's tables.
import { type Static, Type } from 'typebox';
import { TokenType } from './tokens.ts';
import { CiString, CountryCode, DateTime, OpenEnum, PartyId, Price } from './types.ts';

export { PROFILE_TYPES, ProfileType } from './tokens.ts';

export const SESSION_STATUSES = ['ACTIVE', 'COMPLETED', 'INVALID', 'PENDING', 'RESERVATION'] as const;
export const SessionStatus = Type.Enum(SESSION_STATUSES);
export type SessionStatus = Static<typeof SessionStatus>;

export const AUTH_METHODS = ['AUTH_REQUEST', 'COMMAND', 'WHITELIST'] as const;
export const AuthMethod = Type.Enum(AUTH_METHODS);
export type AuthMethod = Static<typeof AuthMethod>;

/** CdrDimensionType. CURRENT, ENERGY_EXPORT, ENERGY_IMPORT, POWER and STATE_OF_CHARGE are meant for Sessions only (SESSION_ONLY_DIMENSIONS). */
export const CDR_DIMENSION_TYPES = [
  'CURRENT',
  'ENERGY',
  'ENERGY_EXPORT',
  'ENERGY_IMPORT',
  'MAX_CURRENT',
  'MIN_CURRENT',
  'MAX_POWER',
  'MIN_POWER',
  'PARKING_TIME',
  'POWER',
  'RESERVATION_TIME',
  'STATE_OF_CHARGE',
  'TIME',
] as const;
/** An open enum (official OpenAPI): a dimension newer than 2.2.1 is valid, and priced by nothing. */
export const CdrDimensionType = OpenEnum(CDR_DIMENSION_TYPES);
export type CdrDimensionType = (typeof CDR_DIMENSION_TYPES)[number];
export const SESSION_ONLY_DIMENSIONS = ['CURRENT', 'ENERGY_EXPORT', 'ENERGY_IMPORT', 'POWER', 'STATE_OF_CHARGE'] as const satisfies readonly CdrDimensionType[];

/** The currency of a Session or CDR: ISO 4217, string(3). */
export const Currency = Type.String({ minLength: 3, maxLength: 3, pattern: '^[A-Z]{3}$' });

export const CdrDimension = Type.Object({
  type: CdrDimensionType,
  volume: Type.Number(),
});
export type CdrDimension = Static<typeof CdrDimension>;

export const ChargingPeriod = Type.Object({
  start_date_time: DateTime,
  dimensions: Type.Array(CdrDimension, { minItems: 1 }),
  tariff_id: Type.Optional(CiString(36)),
});
export type ChargingPeriod = Static<typeof ChargingPeriod>;

/** CdrToken (mod_cdrs): the token that started a session, as the CPO identifies it. */
export const CdrToken = Type.Object({
  country_code: CountryCode,
  party_id: PartyId,
  uid: CiString(36),
  type: TokenType,
  contract_id: CiString(36),
});
export type CdrToken = Static<typeof CdrToken>;

export const Session = Type.Object({
  country_code: CountryCode,
  party_id: PartyId,
  id: CiString(36),
  start_date_time: DateTime,
  end_date_time: Type.Optional(DateTime),
  kwh: Type.Number(),
  cdr_token: CdrToken,
  auth_method: AuthMethod,
  authorization_reference: Type.Optional(CiString(36)),
  location_id: CiString(36),
  /** "#NA" while a reservation has no EVSE assigned yet. */
  evse_uid: CiString(36),
  /** "#NA" while a reservation has no connector assigned yet. */
  connector_id: CiString(36),
  meter_id: Type.Optional(Type.String({ maxLength: 255 })),
  currency: Currency,
  charging_periods: Type.Optional(Type.Array(ChargingPeriod)),
  total_cost: Type.Optional(Price),
  status: SessionStatus,
  last_updated: DateTime,
});
export type Session = Static<typeof Session>;

/**
 * The body of a PATCH on a Session: any Session field, and always
 * last_updated. Its charging_periods are appended to the stored ones.
 */
export const SessionPatch = Type.Object({ ...Type.Partial(Session).properties, last_updated: DateTime });
export type SessionPatch = Static<typeof SessionPatch>;
