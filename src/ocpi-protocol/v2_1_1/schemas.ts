// OCPI 2.1.1 shapes, written from the 2.1.1 spec's tables (mod_locations,
// mod_tariffs, mod_sessions, mod_cdrs, mod_tokens, mod_commands, credentials,
// version_information_endpoint), for what a 2.1.1 peer sends us. They check
// the fields the conversions to 2.2.1 (from-peer.ts) rely on and the 2.1.1
// cardinalities; the converted object is then held to the 2.2.1 schema.
import { type Static, Type } from 'typebox';
import { BusinessDetails } from '../credentials.ts';
import { CiString, CountryCode, DateTime, PartyId } from '../types.ts';
import { OcpiUrl } from '../versions.ts';

const Str = (max: number) => Type.String({ maxLength: max });
const Loose = Type.Object({}, { additionalProperties: true });

/** Connector (2.1.1): voltage, amperage and one tariff_id where 2.2.1 has max_voltage, max_amperage and tariff_ids. */
export const Connector211 = Type.Object({
  id: CiString(36),
  standard: Type.String({ minLength: 1 }),
  format: Type.String({ minLength: 1 }),
  power_type: Type.String({ minLength: 1 }),
  voltage: Type.Integer({ minimum: 0 }),
  amperage: Type.Integer({ minimum: 0 }),
  tariff_id: Type.Optional(Str(36)),
  terms_and_conditions: Type.Optional(Type.String()),
  last_updated: DateTime,
});
export type Connector211 = Static<typeof Connector211>;

export const Evse211 = Type.Object({
  uid: CiString(39),
  evse_id: Type.Optional(Str(48)),
  status: Type.String({ minLength: 1 }),
  connectors: Type.Array(Connector211, { minItems: 1 }),
  last_updated: DateTime,
});
export type Evse211 = Static<typeof Evse211> & Record<string, unknown>;

export const LOCATION_TYPES_211 = ['ON_STREET', 'PARKING_GARAGE', 'UNDERGROUND_GARAGE', 'PARKING_LOT', 'OTHER', 'UNKNOWN'] as const;

/** Location (2.1.1): no country_code/party_id/publish, a `type` where 2.2.1 has parking_type, time_zone optional. */
export const Location211 = Type.Object({
  id: CiString(39),
  type: Type.String({ enum: [...LOCATION_TYPES_211] }),
  name: Type.Optional(Str(255)),
  address: Str(45),
  city: Str(45),
  postal_code: Str(10),
  country: Type.String({ minLength: 3, maxLength: 3 }),
  coordinates: Type.Object({ latitude: Type.String(), longitude: Type.String() }),
  evses: Type.Optional(Type.Array(Evse211)),
  time_zone: Type.Optional(Str(255)),
  last_updated: DateTime,
});
export type Location211 = Static<typeof Location211> & Record<string, unknown>;

export const PriceComponent211 = Type.Object({
  type: Type.String({ enum: ['ENERGY', 'FLAT', 'PARKING_TIME', 'TIME'] }),
  price: Type.Number({ minimum: 0 }),
  step_size: Type.Integer({ minimum: 0 }),
});

/** Tariff (2.1.1): no country_code/party_id, type, min/max price or validity dates; price components without vat. */
export const Tariff211 = Type.Object({
  id: CiString(36),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  tariff_alt_text: Type.Optional(Type.Array(Loose)),
  tariff_alt_url: Type.Optional(Type.String()),
  elements: Type.Array(Type.Object({ price_components: Type.Array(PriceComponent211, { minItems: 1 }), restrictions: Type.Optional(Loose) }), {
    minItems: 1,
  }),
  energy_mix: Type.Optional(Loose),
  last_updated: DateTime,
});
export type Tariff211 = Static<typeof Tariff211>;

export const CdrDimension211 = Type.Object({
  type: Type.String({ enum: ['ENERGY', 'FLAT', 'MAX_CURRENT', 'MIN_CURRENT', 'PARKING_TIME', 'TIME'] }),
  volume: Type.Number(),
});
export const ChargingPeriod211 = Type.Object({ start_date_time: DateTime, dimensions: Type.Array(CdrDimension211, { minItems: 1 }) });
export type ChargingPeriod211 = Static<typeof ChargingPeriod211>;

/** Session (2.1.1): start_datetime/end_datetime, auth_id for the token, a location object, total_cost a number. */
export const Session211 = Type.Object({
  id: CiString(36),
  start_datetime: DateTime,
  end_datetime: Type.Optional(DateTime),
  kwh: Type.Number(),
  auth_id: Str(36),
  // 2.1.1 has AUTH_REQUEST and WHITELIST; COMMAND (2.2) is what many 2.1.1 CPOs send for a remote start: accepted.
  auth_method: Type.String({ enum: ['AUTH_REQUEST', 'WHITELIST', 'COMMAND'] }),
  location: Location211,
  meter_id: Type.Optional(Str(255)),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  charging_periods: Type.Optional(Type.Array(ChargingPeriod211)),
  total_cost: Type.Optional(Type.Number()),
  status: Type.String({ enum: ['ACTIVE', 'COMPLETED', 'INVALID', 'PENDING'] }),
  last_updated: DateTime,
});
export type Session211 = Static<typeof Session211>;

/** CDR (2.1.1): stop_date_time, auth_id, a location object, 2.1.1 tariffs, total_cost a number; no session_id. */
export const Cdr211 = Type.Object({
  id: CiString(36),
  start_date_time: DateTime,
  stop_date_time: DateTime,
  auth_id: Str(36),
  // 2.1.1 has AUTH_REQUEST and WHITELIST; COMMAND (2.2) is what many 2.1.1 CPOs send for a remote start: accepted.
  auth_method: Type.String({ enum: ['AUTH_REQUEST', 'WHITELIST', 'COMMAND'] }),
  location: Location211,
  meter_id: Type.Optional(Str(255)),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  tariffs: Type.Optional(Type.Array(Tariff211)),
  charging_periods: Type.Array(ChargingPeriod211, { minItems: 1 }),
  total_cost: Type.Number(),
  total_energy: Type.Number(),
  total_time: Type.Number({ minimum: 0 }),
  total_parking_time: Type.Optional(Type.Number({ minimum: 0 })),
  remark: Type.Optional(Str(255)),
  last_updated: DateTime,
});
export type Cdr211 = Static<typeof Cdr211>;

/** Token (2.1.1): no country_code/party_id/contract_id; type OTHER or RFID; auth_id names the contract. */
export const Token211 = Type.Object({
  uid: CiString(36),
  type: Type.String({ enum: ['OTHER', 'RFID'] }),
  auth_id: CiString(36),
  visual_number: Type.Optional(Str(64)),
  issuer: Type.String({ minLength: 1, maxLength: 64 }),
  valid: Type.Boolean(),
  whitelist: Type.String({ enum: ['ALWAYS', 'ALLOWED', 'ALLOWED_OFFLINE', 'NEVER'] }),
  language: Type.Optional(Type.String({ minLength: 2, maxLength: 2 })),
  last_updated: DateTime,
});
export type Token211 = Static<typeof Token211>;

export const COMMAND_RESPONSE_TYPES_211 = ['NOT_SUPPORTED', 'REJECTED', 'ACCEPTED', 'TIMEOUT', 'UNKNOWN_SESSION'] as const;
/** CommandResponse (2.1.1): the CPO's answer to a command and, later, the result POSTed to response_url: only `result`. */
export const CommandResponse211 = Type.Object({ result: Type.String({ enum: [...COMMAND_RESPONSE_TYPES_211] }) });
export type CommandResponse211 = Static<typeof CommandResponse211>;

/** Credentials (2.1.1): one party, no roles. */
export const Credentials211 = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 64, pattern: '^[!-~]+$' }),
  url: OcpiUrl,
  business_details: BusinessDetails,
  party_id: PartyId,
  country_code: CountryCode,
});
export type Credentials211 = Static<typeof Credentials211>;

/** Version details (2.1.1): endpoints without a role. */
export const VersionDetails211 = Type.Object({
  version: Type.String({ minLength: 1 }),
  endpoints: Type.Array(Type.Object({ identifier: Type.String({ minLength: 1 }), url: OcpiUrl }), { minItems: 1 }),
});
export type VersionDetails211 = Static<typeof VersionDetails211>;
