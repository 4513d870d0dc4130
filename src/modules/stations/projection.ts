// The API's Station is a projection of an OCPI Location with its EVSEs:
// status and speed derived from the EVSEs (contract rules), coordinates as
// strings, upper-case weekday names, amenities from OCPI facilities. The
// catalogue (snapshot.ts, catalogue.ts) writes it; these are its rules and shape.

export type Speed = 'slow' | 'fast' | 'turbo';
export type StationStatus = 'free' | 'busy' | 'unknown' | 'error';

export const AMENITIES = [
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
] as const;

/** Connector types clients filter on (interface-spec 2.6, with OCPI's names for the two proprietary ones). */
export const API_CONNECTOR_TYPES = [
  'CHADEMO',
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
  'TESLA_R',
  'TESLA_S',
] as const;

/** interface-spec.md calls OCPI's TESLA_R/TESLA_S by neutral names; both spellings are accepted. */
export const CONNECTOR_TYPE_ALIASES: Record<string, string> = { VENDOR_R: 'TESLA_R', VENDOR_S: 'TESLA_S' };

/** Bit of a connector standard in a station's connector mask (0 for standards clients cannot filter on). */
export function connectorBit(standard: string): number {
  const index = (API_CONNECTOR_TYPES as readonly string[]).indexOf(standard);
  return index < 0 ? 0 : 1 << index;
}

/** Largest EVSE power: slow < 43 kW, fast 43..149.99 kW, turbo >= 150 kW. */
export function speedOf(maxPowerKw: number): Speed {
  if (maxPowerKw >= 150) return 'turbo';
  if (maxPowerKw >= 43) return 'fast';
  return 'slow';
}

/** free if any EVSE AVAILABLE; else busy if any CHARGING/BLOCKED/RESERVED; else error if all OUTOFORDER/INOPERATIVE; else unknown. */
export function statusOf(statuses: readonly string[]): StationStatus {
  if (statuses.includes('AVAILABLE')) return 'free';
  if (statuses.some((s) => s === 'CHARGING' || s === 'BLOCKED' || s === 'RESERVED')) return 'busy';
  if (statuses.length > 0 && statuses.every((s) => s === 'OUTOFORDER' || s === 'INOPERATIVE')) return 'error';
  return 'unknown';
}

export interface StationBase {
  id: string;
  name: string;
  address: string;
  coordinates: { latitude: string; longitude: string };
  opening_times: { twentyfourseven: boolean; regular_hours: { weekday: string; period_begin: string; period_end: string }[] };
  operator: { name: string; contact: { phone: string | null } };
  evses: { evse_id: string; status: string }[];
  last_updated: string;
  speed: Speed;
  status: StationStatus;
  amenities: string[];
  is_partner: boolean;
  logo_url?: string;
}
