// OCPI 2.2.1 Location, EVSE, Connector and Tariff objects (mod_locations,
// mod_tariffs), written from the spec's tables. The catalogue is stored as CPOs
// send them; these schemas validate everything that enters it (generator, file
// import, OCPI receiver interfaces), and the sandbox CPO network sends the same.
import { type Static, Type } from 'typebox';
import { CiString, DateOnly, DateTime, DisplayText, OpenEnum, Price, Time } from './types.ts';

export const EVSE_STATUSES = ['AVAILABLE', 'BLOCKED', 'CHARGING', 'INOPERATIVE', 'OUTOFORDER', 'PLANNED', 'REMOVED', 'RESERVED', 'UNKNOWN'] as const;
export type EvseStatus = (typeof EVSE_STATUSES)[number];

export const CONNECTOR_STANDARDS = [
  'CHADEMO',
  'CHAOJI',
  'DOMESTIC_A',
  'DOMESTIC_B',
  'DOMESTIC_C',
  'DOMESTIC_D',
  'DOMESTIC_E',
  'DOMESTIC_F',
  'DOMESTIC_G',
  'DOMESTIC_H',
  'DOMESTIC_I',
  'DOMESTIC_J',
  'DOMESTIC_K',
  'DOMESTIC_L',
  'DOMESTIC_M',
  'DOMESTIC_N',
  'DOMESTIC_O',
  'GBT_AC',
  'GBT_DC',
  'IEC_60309_2_single_16',
  'IEC_60309_2_three_16',
  'IEC_60309_2_three_32',
  'IEC_60309_2_three_64',
  'IEC_62196_T1',
  'IEC_62196_T1_COMBO',
  'IEC_62196_T2',
  'IEC_62196_T2_COMBO',
  'IEC_62196_T3A',
  'IEC_62196_T3C',
  'NEMA_5_20',
  'NEMA_6_30',
  'NEMA_6_50',
  'NEMA_10_30',
  'NEMA_10_50',
  'NEMA_14_30',
  'NEMA_14_50',
  'PANTOGRAPH_BOTTOM_UP',
  'PANTOGRAPH_TOP_DOWN',
  'TESLA_R',
  'TESLA_S',
] as const;
export type ConnectorStandard = (typeof CONNECTOR_STANDARDS)[number];

export const CONNECTOR_FORMATS = ['SOCKET', 'CABLE'] as const;
export const POWER_TYPES = ['AC_1_PHASE', 'AC_2_PHASE', 'AC_2_PHASE_SPLIT', 'AC_3_PHASE', 'DC'] as const;
export const CAPABILITIES = [
  'CHARGING_PROFILE_CAPABLE',
  'CHARGING_PREFERENCES_CAPABLE',
  'CHIP_CARD_SUPPORT',
  'CONTACTLESS_CARD_SUPPORT',
  'CREDIT_CARD_PAYABLE',
  'DEBIT_CARD_PAYABLE',
  'PED_TERMINAL',
  'REMOTE_START_STOP_CAPABLE',
  'RESERVABLE',
  'RFID_READER',
  'START_SESSION_CONNECTOR_REQUIRED',
  'TOKEN_GROUP_CAPABLE',
  'UNLOCK_CAPABLE',
] as const;
export const PARKING_RESTRICTIONS = ['EV_ONLY', 'PLUGGED', 'DISABLED', 'CUSTOMERS', 'MOTORCYCLES'] as const;
export const PARKING_TYPES = ['ALONG_MOTORWAY', 'PARKING_GARAGE', 'PARKING_LOT', 'ON_DRIVEWAY', 'ON_STREET', 'UNDERGROUND_GARAGE'] as const;
export const TARIFF_TYPES = ['AD_HOC_PAYMENT', 'PROFILE_CHEAP', 'PROFILE_FAST', 'PROFILE_GREEN', 'REGULAR'] as const;

export const FACILITIES = [
  'HOTEL',
  'RESTAURANT',
  'CAFE',
  'MALL',
  'SUPERMARKET',
  'SPORT',
  'RECREATION_AREA',
  'NATURE',
  'MUSEUM',
  'BIKE_SHARING',
  'BUS_STOP',
  'TAXI_STAND',
  'TRAM_STOP',
  'METRO_STATION',
  'TRAIN_STATION',
  'AIRPORT',
  'PARKING_LOT',
  'CARPOOL_PARKING',
  'FUEL_STATION',
  'WIFI',
] as const;

export const OcpiConnector = Type.Object({
  id: CiString(36),
  // ConnectorType is an open enum (official OpenAPI): a standard newer than 2.2.1 is valid, and unknown to our projection.
  standard: OpenEnum(CONNECTOR_STANDARDS),
  format: Type.String({ enum: [...CONNECTOR_FORMATS] }),
  power_type: Type.String({ enum: [...POWER_TYPES] }),
  max_voltage: Type.Integer({ minimum: 0 }),
  max_amperage: Type.Integer({ minimum: 0 }),
  max_electric_power: Type.Optional(Type.Integer({ minimum: 0, description: 'Watts' })),
  tariff_ids: Type.Optional(Type.Array(CiString(36))),
  terms_and_conditions: Type.Optional(Type.String()),
  last_updated: DateTime,
});
export type OcpiConnector = Static<typeof OcpiConnector>;

const GeoLocation = Type.Object({
  latitude: Type.String({ pattern: '^-?[0-9]{1,2}\\.[0-9]{5,7}$' }),
  longitude: Type.String({ pattern: '^-?[0-9]{1,3}\\.[0-9]{5,7}$' }),
});

export const OcpiEvse = Type.Object({
  uid: CiString(36),
  evse_id: Type.Optional(CiString(48)),
  status: Type.String({ enum: [...EVSE_STATUSES] }),
  status_schedule: Type.Optional(
    Type.Array(Type.Object({ period_begin: DateTime, period_end: Type.Optional(DateTime), status: Type.String({ enum: [...EVSE_STATUSES] }) })),
  ),
  capabilities: Type.Optional(Type.Array(OpenEnum(CAPABILITIES))),
  connectors: Type.Array(OcpiConnector, { minItems: 1 }),
  floor_level: Type.Optional(Type.String({ maxLength: 4 })),
  coordinates: Type.Optional(GeoLocation),
  physical_reference: Type.Optional(Type.String({ maxLength: 16 })),
  directions: Type.Optional(Type.Array(DisplayText)),
  parking_restrictions: Type.Optional(Type.Array(OpenEnum(PARKING_RESTRICTIONS))),
  images: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  last_updated: DateTime,
});
export type OcpiEvse = Static<typeof OcpiEvse>;

const BusinessDetails = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  website: Type.Optional(Type.String()),
  logo: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

const RegularHours = Type.Object({ weekday: Type.Integer({ minimum: 1, maximum: 7 }), period_begin: Time, period_end: Time });
const ExceptionalPeriod = Type.Object({ period_begin: DateTime, period_end: DateTime });

export const OcpiLocation = Type.Object({
  country_code: CiString(2),
  party_id: CiString(3),
  id: CiString(36),
  publish: Type.Boolean(),
  publish_allowed_to: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  address: Type.String({ maxLength: 45 }),
  city: Type.String({ maxLength: 45 }),
  postal_code: Type.Optional(Type.String({ maxLength: 10 })),
  state: Type.Optional(Type.String({ maxLength: 20 })),
  country: Type.String({ minLength: 3, maxLength: 3, description: 'ISO 3166-1 alpha-3' }),
  coordinates: GeoLocation,
  related_locations: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  parking_type: Type.Optional(OpenEnum(PARKING_TYPES)),
  evses: Type.Optional(Type.Array(OcpiEvse)),
  directions: Type.Optional(Type.Array(DisplayText)),
  operator: Type.Optional(BusinessDetails),
  suboperator: Type.Optional(BusinessDetails),
  owner: Type.Optional(BusinessDetails),
  facilities: Type.Optional(Type.Array(OpenEnum(FACILITIES))),
  time_zone: Type.String({ minLength: 1, maxLength: 255 }),
  opening_times: Type.Optional(
    Type.Object({
      twentyfourseven: Type.Boolean(),
      regular_hours: Type.Optional(Type.Array(RegularHours)),
      exceptional_openings: Type.Optional(Type.Array(ExceptionalPeriod)),
      exceptional_closings: Type.Optional(Type.Array(ExceptionalPeriod)),
    }),
  ),
  charging_when_closed: Type.Optional(Type.Boolean()),
  images: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  energy_mix: Type.Optional(Type.Object({}, { additionalProperties: true })),
  last_updated: DateTime,
});
export type OcpiLocation = Static<typeof OcpiLocation>;

export const OcpiPriceComponent = Type.Object({
  type: Type.String({ enum: ['ENERGY', 'FLAT', 'PARKING_TIME', 'TIME'] }),
  price: Type.Number({ minimum: 0 }),
  vat: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  step_size: Type.Integer({ minimum: 0 }),
});
export type OcpiPriceComponent = Static<typeof OcpiPriceComponent>;

export const OcpiTariffRestrictions = Type.Object({
  start_time: Type.Optional(Time),
  end_time: Type.Optional(Time),
  start_date: Type.Optional(DateOnly),
  end_date: Type.Optional(DateOnly),
  min_kwh: Type.Optional(Type.Number({ minimum: 0 })),
  max_kwh: Type.Optional(Type.Number({ minimum: 0 })),
  min_current: Type.Optional(Type.Number({ minimum: 0 })),
  max_current: Type.Optional(Type.Number({ minimum: 0 })),
  min_power: Type.Optional(Type.Number({ minimum: 0 })),
  max_power: Type.Optional(Type.Number({ minimum: 0 })),
  min_duration: Type.Optional(Type.Integer({ minimum: 0 })),
  max_duration: Type.Optional(Type.Integer({ minimum: 0 })),
  day_of_week: Type.Optional(Type.Array(Type.String({ enum: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] }))),
  reservation: Type.Optional(Type.String({ enum: ['RESERVATION', 'RESERVATION_EXPIRES'] })),
});
export type OcpiTariffRestrictions = Static<typeof OcpiTariffRestrictions>;

export const OcpiTariff = Type.Object({
  country_code: CiString(2),
  party_id: CiString(3),
  id: CiString(36),
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  type: Type.Optional(OpenEnum(TARIFF_TYPES)),
  tariff_alt_text: Type.Optional(Type.Array(DisplayText)),
  tariff_alt_url: Type.Optional(Type.String()),
  min_price: Type.Optional(Price),
  max_price: Type.Optional(Price),
  elements: Type.Array(
    Type.Object({ price_components: Type.Array(OcpiPriceComponent, { minItems: 1 }), restrictions: Type.Optional(OcpiTariffRestrictions) }),
    { minItems: 1 },
  ),
  start_date_time: Type.Optional(DateTime),
  end_date_time: Type.Optional(DateTime),
  energy_mix: Type.Optional(Type.Object({}, { additionalProperties: true })),
  last_updated: DateTime,
});
export type OcpiTariff = Static<typeof OcpiTariff>;
