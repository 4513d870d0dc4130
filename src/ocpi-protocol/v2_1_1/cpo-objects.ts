// 2.2.1 CPO objects written as OCPI 2.1.1 has them, from the 2.1.1 spec's
// tables: Locations (a `type`, connectors with voltage/amperage/tariff_id,
// 2.1.1's capabilities and facilities only), Tariffs (no VAT, no party, type,
// price bounds or validity), Sessions (start_datetime, auth_id and a location
// object holding the one EVSE and connector), CDRs (stop_date_time, auth_id,
// a location object, a number total_cost). What a 2.1.1 CPO platform sends:
// our answers to a 2.1.1 CPO's GET of what it pushed to us, and the sandbox
// network's 2.1.1 personality (src/sandbox/cpo/wire.ts). from-peer.ts reads
// the other way; the tests hold what these write to the spec's field lists.
import type { Cdr } from '../cdrs.ts';
import type { OcpiConnector, OcpiEvse, OcpiLocation, OcpiTariff } from '../locations-tariffs.ts';
import type { ChargingPeriod, Session } from '../sessions.ts';

type Json = Record<string, unknown>;

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

/** A Connector as 2.1.1 has it: voltage, amperage and its first tariff as tariff_id (2.1.1 has one). */
export function connectorTo211(c: OcpiConnector): Json {
  return omit({ ...c, voltage: c.max_voltage, amperage: c.max_amperage, tariff_id: c.tariff_ids?.[0] }, [
    'max_voltage',
    'max_amperage',
    'max_electric_power',
    'tariff_ids',
  ]);
}

/** An EVSE as 2.1.1 has it. */
export function evseTo211(e: OcpiEvse): Json {
  return omit(
    { ...e, capabilities: e.capabilities?.filter((c) => CAPABILITIES_211.includes(c)), connectors: e.connectors.map(connectorTo211) },
    ['status_schedule'].filter(() => (e.status_schedule ?? []).length === 0),
  );
}

/** A Location as 2.1.1 has it; `only`: with just that EVSE and connector (the location object of a Session or CDR). */
export function locationTo211(l: OcpiLocation, only?: { evseUid: string; connectorId: string }): Json {
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
      evses: evses.map(evseTo211),
    },
    ['country_code', 'party_id', 'publish', 'publish_allowed_to', 'parking_type', 'state'],
  );
}

/** A Tariff as 2.1.1 has it: prices without VAT (2.1.1 states none), no party, type, bounds or validity. */
export function tariffTo211(t: OcpiTariff): Json {
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
export function chargingPeriodsTo211(periods: readonly ChargingPeriod[]): Json[] {
  return periods.flatMap((p) => {
    const dimensions = p.dimensions.filter((d) => DIMENSIONS_211.includes(d.type));
    return dimensions.length > 0 ? [{ start_date_time: p.start_date_time, dimensions }] : [];
  });
}

/** 2.1.1's AuthMethod has no COMMAND (2.2): a remote start is an authorization the eMSP gave, AUTH_REQUEST. */
export const authMethodTo211 = (m: string | undefined) => (m === 'COMMAND' ? 'AUTH_REQUEST' : m);

/** Session fields renamed as 2.1.1 names them (a whole Session or a PATCH; a whole Session also needs its location object). */
export function sessionPatchTo211(s: Json): Json {
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
  if (s.auth_method !== undefined) out.auth_method = authMethodTo211(s.auth_method as string);
  if (s.total_cost !== undefined) out.total_cost = (s.total_cost as { excl_vat: number }).excl_vat;
  if (Array.isArray(s.charging_periods)) out.charging_periods = chargingPeriodsTo211(s.charging_periods as ChargingPeriod[]);
  if (s.status === 'RESERVATION') out.status = 'PENDING';
  const token = s.cdr_token as { contract_id?: string; uid?: string } | undefined;
  // 2.1.1 names the token by its auth_id: a 2.1.1 Token's auth_id is kept as the 2.2.1 contract_id (the sandbox's
  // tokenIn; from-peer.ts cdrTokenOf211AuthId), so it goes back as it came.
  if (token) out.auth_id = token.contract_id ?? token.uid;
  return out;
}

/** A Session as 2.1.1 has it; `location`: its Location (the location object holds its one EVSE and connector). */
export function sessionTo211(s: Session, location: OcpiLocation): Json {
  return { ...sessionPatchTo211(s as unknown as Json), location: locationTo211(location, { evseUid: s.evse_uid, connectorId: s.connector_id }) };
}

/** A CDR as 2.1.1 has it; `location`: its Location (the location object holds its one EVSE and connector). */
export function cdrTo211(c: Cdr, location: OcpiLocation): Json {
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
    auth_method: authMethodTo211(c.auth_method),
    location: locationTo211(location, { evseUid: c.cdr_location.evse_uid, connectorId: c.cdr_location.connector_id }),
    ...(c.tariffs ? { tariffs: c.tariffs.map(tariffTo211) } : {}),
    charging_periods: chargingPeriodsTo211(c.charging_periods),
    total_cost: c.total_cost.excl_vat,
  };
}
