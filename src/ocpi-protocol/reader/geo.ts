// Where a Location is: its coordinates written as 2.2.1 wants them (5 to 7
// decimals, as strings), and its time zone, derived from the coordinates when
// the CPO sent none or one that is no IANA zone.
import tzLookup from '@photostructure/tz-lookup';
import Big from 'big.js';
import { countryByAlpha3 } from '../../platform/european-countries.ts';
import { type Finding, shown } from './rules.ts';

const DECIMAL = /^[+-]?\d{1,3}([.,]\d+)?$/;
/** The 2.2.1 patterns (mod_locations GeoLocation). */
const LATITUDE = /^-?[0-9]{1,2}\.[0-9]{5,7}$/;
const LONGITUDE = /^-?[0-9]{1,3}\.[0-9]{5,7}$/;

/** A coordinate as a decimal string, or undefined when it is none (a number is written without exponent). */
function decimalText(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? new Big(value).toFixed() : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return DECIMAL.test(text) ? text.replace(',', '.').replace(/^\+/, '') : undefined;
}

/** `text` with 5 to 7 decimals: padded with zeros below 5, rounded half-up to 7 above. */
function withDecimals(text: string): string {
  const decimals = text.includes('.') ? (text.split('.')[1] as string).length : 0;
  return new Big(text).toFixed(Math.min(7, Math.max(5, decimals)));
}

export interface Coordinates {
  latitude: string;
  longitude: string;
}

/**
 * The coordinates as 2.2.1 writes them, or undefined when they cannot be used:
 * missing, not decimal degrees, out of range, or both zero (a placeholder, not
 * a place). Notes `coordinates-precision` when they had to be rewritten.
 */
export function readCoordinates(raw: unknown, path: string, findings: Finding[]): Coordinates | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const { latitude, longitude } = raw as Record<string, unknown>;
  if (typeof latitude === 'string' && typeof longitude === 'string' && LATITUDE.test(latitude) && LONGITUDE.test(longitude)) {
    // Already as 2.2.1 writes them (the common case): only the range and the 0,0 placeholder are checked.
    const [lat, lon] = [Number(latitude), Number(longitude)];
    return Math.abs(lat) > 90 || Math.abs(lon) > 180 || (lat === 0 && lon === 0) ? undefined : { latitude, longitude };
  }
  const lat = decimalText(latitude);
  const lon = decimalText(longitude);
  if (lat === undefined || lon === undefined) return undefined;
  const latNumber = Number(lat);
  const lonNumber = Number(lon);
  if (Math.abs(latNumber) > 90 || Math.abs(lonNumber) > 180 || (latNumber === 0 && lonNumber === 0)) return undefined;
  const result = { latitude: withDecimals(lat), longitude: withDecimals(lon) };
  if (!LATITUDE.test(result.latitude) || !LONGITUDE.test(result.longitude)) return undefined;
  if (result.latitude !== latitude || result.longitude !== longitude) {
    findings.push({
      rule: 'coordinates-precision',
      path,
      detail: `${shown(latitude)},${shown(longitude)} -> ${result.latitude},${result.longitude}`,
    });
  }
  return result;
}

const zones = new Map<string, string | undefined>();

/** The IANA zone a name denotes, in its own spelling (any letter case accepted), or undefined when it is none. */
export function ianaZone(name: string): string | undefined {
  if (zones.has(name)) return zones.get(name);
  let zone: string | undefined;
  // Offsets ("+01:00") and abbreviations Intl knows are no tzdata names: a zone name starts with a letter and is no offset.
  if (/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) {
    try {
      zone = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      zone = undefined;
    }
  }
  if (zones.size < 10_000) zones.set(name, zone);
  return zone;
}

/** Countries of our table with more than one zone (islands): at sea, their zone cannot be told. */
const SEVERAL_ZONES = new Set(['ESP', 'PRT', 'FRA']);

/**
 * The Location's time zone: the one sent when it is an IANA zone (in the spec's
 * spelling); else the zone of its country when the country has one (our table
 * of European countries: a station near a border is in its country's zone,
 * which a lookup by coordinates can miss by a few kilometres); else the zone at
 * its coordinates. Undefined when none can be told (at sea, the lookup answers
 * an Etc/ zone).
 */
export function readTimeZone(raw: unknown, coordinates: Coordinates, country: unknown, path: string, findings: Finding[]): string | undefined {
  if (typeof raw === 'string' && raw.trim() !== '') {
    const zone = ianaZone(raw.trim());
    if (zone !== undefined) {
      if (zone !== raw) findings.push({ rule: 'enum-case', path, detail: `${shown(raw)} -> ${shown(zone)}` });
      return zone;
    }
  }
  const facts = typeof country === 'string' && !SEVERAL_ZONES.has(country.toUpperCase()) ? countryByAlpha3(country) : undefined;
  let zone: string | undefined = facts?.timeZone ?? tzLookup(Number(coordinates.latitude), Number(coordinates.longitude));
  if (zone.startsWith('Etc/')) zone = undefined;
  if (zone !== undefined) findings.push({ rule: 'time-zone-derived', path, detail: `${shown(raw)} -> ${shown(zone)}` });
  return zone;
}
