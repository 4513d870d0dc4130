// OCPI 2.2.1 CDRs module (mod_cdrs.asciidoc): the Charge Detail Record a CPO
// posts when a session is over, sealed with the Location, EVSE, Connector,
// Tariffs and Token as they were at its start. ChargingPeriod, CdrDimension,
// CdrToken and AuthMethod are shared with Sessions and come from sessions.ts.
// Written from the spec's tables.
import { type Static, Type } from 'typebox';
import { CONNECTOR_FORMATS, CONNECTOR_STANDARDS, OcpiTariff, POWER_TYPES } from './locations-tariffs.ts';
import { AuthMethod, CdrToken, ChargingPeriod, Currency } from './sessions.ts';
import { CiString, CountryCode, DateTime, OpenEnum, PartyId, Price } from './types.ts';

export { CONNECTOR_FORMATS, POWER_TYPES };

/** GeoLocation (mod_locations): decimal degrees as strings, string(10) and string(11), with the spec's regexes. */
export const GeoLocation = Type.Object({
  latitude: Type.String({ maxLength: 10, pattern: '^-?[0-9]{1,2}\\.[0-9]{5,7}$' }),
  longitude: Type.String({ maxLength: 11, pattern: '^-?[0-9]{1,3}\\.[0-9]{5,7}$' }),
});
export type GeoLocation = Static<typeof GeoLocation>;

/**
 * CdrLocation: the part of the Location relevant to a CDR. evse_uid, evse_id
 * and connector_id may be "#NA" for a reservation that never became a session.
 */
export const CdrLocation = Type.Object({
  id: CiString(36),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  address: Type.String({ maxLength: 45 }),
  city: Type.String({ maxLength: 45 }),
  postal_code: Type.Optional(Type.String({ maxLength: 10 })),
  state: Type.Optional(Type.String({ maxLength: 20 })),
  country: Type.String({ minLength: 3, maxLength: 3, description: 'ISO 3166-1 alpha-3' }),
  coordinates: GeoLocation,
  evse_uid: CiString(36),
  evse_id: CiString(48),
  connector_id: CiString(36),
  connector_standard: OpenEnum(CONNECTOR_STANDARDS),
  connector_format: Type.Enum(CONNECTOR_FORMATS),
  connector_power_type: Type.Enum(POWER_TYPES),
});
export type CdrLocation = Static<typeof CdrLocation>;

export const SignedValue = Type.Object({
  nature: CiString(32),
  plain_data: Type.String({ maxLength: 5000 }),
  signed_data: Type.String({ maxLength: 5000 }),
});
export type SignedValue = Static<typeof SignedValue>;

export const SignedData = Type.Object({
  encoding_method: CiString(36),
  encoding_method_version: Type.Optional(Type.Integer()),
  public_key: Type.Optional(Type.String({ maxLength: 512 })),
  signed_values: Type.Array(SignedValue, { minItems: 1 }),
  url: Type.Optional(Type.String({ maxLength: 512 })),
});
export type SignedData = Static<typeof SignedData>;

/**
 * The CDR. Beyond the table: a credit CDR (credit: true) must name the CDR it
 * credits (credit_reference_id), and only a credit CDR may use the 37 to 39
 * characters of `id` (normal CDRs keep to 36).
 */
export const Cdr = Type.Object(
  {
    country_code: CountryCode,
    party_id: PartyId,
    id: CiString(39),
    start_date_time: DateTime,
    end_date_time: DateTime,
    session_id: Type.Optional(CiString(36)),
    cdr_token: CdrToken,
    auth_method: AuthMethod,
    authorization_reference: Type.Optional(CiString(36)),
    cdr_location: CdrLocation,
    meter_id: Type.Optional(Type.String({ maxLength: 255 })),
    currency: Currency,
    tariffs: Type.Optional(Type.Array(OcpiTariff)),
    charging_periods: Type.Array(ChargingPeriod, { minItems: 1 }),
    signed_data: Type.Optional(SignedData),
    total_cost: Price,
    total_fixed_cost: Type.Optional(Price),
    total_energy: Type.Number(),
    total_energy_cost: Type.Optional(Price),
    total_time: Type.Number({ minimum: 0 }),
    total_time_cost: Type.Optional(Price),
    total_parking_time: Type.Optional(Type.Number({ minimum: 0 })),
    total_parking_cost: Type.Optional(Price),
    total_reservation_cost: Type.Optional(Price),
    remark: Type.Optional(Type.String({ maxLength: 255 })),
    invoice_reference_id: Type.Optional(CiString(39)),
    credit: Type.Optional(Type.Boolean()),
    credit_reference_id: Type.Optional(CiString(39)),
    home_charging_compensation: Type.Optional(Type.Boolean()),
    last_updated: DateTime,
  },
  {
    if: { required: ['credit'], properties: { credit: { const: true } } },
    // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword, not a thenable; the schema is never awaited.
    then: { required: ['credit_reference_id'] },
    else: { properties: { id: { maxLength: 36 } } },
  },
);
export type Cdr = Static<typeof Cdr>;

/** The spec's name for the object. */
export const CDR = Cdr;
export type CDR = Cdr;
