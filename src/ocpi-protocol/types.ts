// OCPI 2.2.1 data types shared by every module (types.asciidoc): strings with
// a maximum length, DateTime, DisplayText, Price. Written from the spec's text.
import { Type } from 'typebox';

/** Case-insensitive string of at most `max` characters (OCPI CiString). */
export const CiString = (max: number) => Type.String({ minLength: 1, maxLength: max });

export const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/** OCPI DateTime: RFC 3339 in UTC; a missing zone is read as UTC (the spec's "Z" is recommended, not required of peers). */
export const DateTime = Type.String({ pattern: DATE_TIME.source, description: 'RFC 3339 date-time' });

/**
 * Whether `value` is an OCPI DateTime that denotes a real instant (month 1-12, a day its month has, 00:00:00 to
 * 23:59:59): what PostgreSQL's timestamptz accepts too, so one bad stamp cannot fail a statement that stores others.
 */
export function isDateTime(value: unknown): value is string {
  const m = typeof value === 'string' ? DATE_TIME.exec(value) : null;
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day && hour <= 23 && minute <= 59 && second <= 59;
}

export const TIME_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
export const Time = Type.String({ pattern: TIME_PATTERN });
export const DateOnly = Type.String({ pattern: '^[12][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' });
export const DisplayText = Type.Object({ language: Type.String({ minLength: 2, maxLength: 2 }), text: Type.String({ maxLength: 512 }) });
export const Price = Type.Object({ excl_vat: Type.Number(), incl_vat: Type.Optional(Type.Number()) });

export const CountryCode = Type.String({ pattern: '^[A-Za-z]{2}$' });
export const PartyId = Type.String({ pattern: '^[A-Za-z0-9]{3}$' });

/** The schema keyword listing an open enum's known values (see OpenEnum). */
export const KNOWN_VALUES = 'x-known-values';

/**
 * An OCPI enum the official OpenAPI marks "open-enum" (ConnectorType, Facility, TariffType, CdrDimensionType, ...):
 * the listed values are the known ones and others may appear (newer versions, vendors). Any non-empty string is
 * valid; the known values are kept under KNOWN_VALUES so the tolerant reader (reader/) can tell an unknown one.
 */
export const OpenEnum = <const T extends readonly string[]>(values: T, options: { maxLength?: number } = {}) =>
  Type.String({ minLength: 1, maxLength: options.maxLength ?? 255, [KNOWN_VALUES]: values, description: `Open enum; known values: ${values.join(', ')}` });
