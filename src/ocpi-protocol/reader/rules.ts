// The tolerant reader's rules, by name: what real CPOs send that OCPI 2.2.1
// does not allow, and what we make of it. A rule either normalizes (the object
// is taken, changed as it says) or rejects (the object, or the part of it the
// rule names, is left out). Every application of a rule is a Finding; the OCPI
// module records them per connection (`charging-access cpo quality NAME`).
// What we store and send back stays strictly valid 2.2.1: every reader ends
// with the strict schema of its object.

export const RULES = {
  // Normalizations: the object is taken.
  'empty-string-as-absent': { kind: 'normalized', says: 'an optional field (or list entry) sent as "" is taken as absent' },
  'null-as-absent': { kind: 'normalized', says: 'an optional field sent as null is taken as absent' },
  'enum-case': { kind: 'normalized', says: "an enum value or time zone in another letter case is taken in the spec's spelling" },
  'number-as-string': { kind: 'normalized', says: 'a number sent as a string ("12.5") is taken as that number' },
  'date-time-format': {
    kind: 'normalized',
    says: 'a date-time with a space for T, without seconds or with a +hhmm offset is taken as the same instant, in UTC',
  },
  'time-format': { kind: 'normalized', says: 'a time of day as "8:00" or "08:00:00" is taken as "08:00"' },
  'coordinates-precision': {
    kind: 'normalized',
    says: 'latitude/longitude with fewer than 5 or more than 7 decimals, a decimal comma, or sent as numbers, are written with 5 to 7 decimals',
  },
  'time-zone-derived': {
    kind: 'normalized',
    says: 'a missing or unknown time_zone is derived: the zone of a country that has one, else the zone at the coordinates',
  },
  'period-end-24h': { kind: 'normalized', says: 'a regular-hours period_end of "24:00" is the end of the day: "23:59"' },
  'end-time-24h': { kind: 'normalized', says: 'a tariff restriction end_time of "24:00" is "00:00", which OCPI defines as the end of the day' },
  'vat-fraction': { kind: 'normalized', says: 'a VAT given as a fraction (0.21) is taken as the percentage (21) when it can only be one (0.01 to 0.30)' },
  'unknown-status': { kind: 'normalized', says: 'an EVSE status outside 2.2.1 is taken as UNKNOWN' },
  'unknown-enum-kept': {
    kind: 'normalized',
    says: 'a value outside 2.2.1 of an open enum (connector standard, capability, facility, parking type, tariff type, dimension) is kept; our station view shows it as unknown',
  },
  'unknown-enum-dropped': { kind: 'normalized', says: 'a status_schedule entry with a status outside 2.2.1 is left out' },
  'text-truncated': { kind: 'normalized', says: 'an address, city or name longer than 2.2.1 allows is cut to its maximum length' },
  'display-field-dropped': {
    kind: 'normalized',
    says: 'an invalid optional field that only describes (directions, images, postal code, floor level, ...) is left out; the object is taken',
  },
  'duplicate-in-page': { kind: 'normalized', says: 'an object sent twice in one page is taken once (the latest last_updated)' },

  // Rejections: the object (or the part named) is left out, the rest is taken.
  'no-id': { kind: 'rejected', says: 'an object without an id is refused' },
  'no-coordinates': { kind: 'rejected', says: 'a Location without usable coordinates (missing, out of range, or 0,0) is refused' },
  'no-time-zone': { kind: 'rejected', says: 'a Location whose time zone is missing and cannot be derived (at sea, in a country of several zones) is refused' },
  'no-evse-uid': { kind: 'rejected', says: 'an EVSE without a uid is left out of its Location' },
  'duplicate-uid': { kind: 'rejected', says: 'a second EVSE (or connector) with the same uid (id) in one Location (EVSE) is left out' },
  'evse-without-connectors': { kind: 'rejected', says: 'an EVSE none of whose connectors can be used is left out of its Location' },
  'vat-ambiguous': { kind: 'rejected', says: 'a tariff with a VAT between 0 and 1 that is no plausible fraction (under 0.01 or over 0.30) is refused' },
  'unknown-enum-refused': {
    kind: 'rejected',
    says: 'a value outside 2.2.1 of a closed enum that decides what we do (connector format and power type, session status, auth method, tariff dimension, weekday) refuses its object',
  },
  invalid: { kind: 'rejected', says: 'an object that still fails the 2.2.1 schema after the rules is refused (its fields named)' },
  'foreign-party': { kind: 'rejected', says: 'an object of a party the connection does not hold is refused' },
  'store-refused': { kind: 'rejected', says: 'an object the database refused to store (alone, the rest of its page was stored) is refused' },
} as const satisfies Record<string, { kind: 'normalized' | 'rejected'; says: string }>;

export type RuleName = keyof typeof RULES;

/** One application of a rule to an object received from a CPO. */
export interface Finding {
  rule: RuleName;
  /** JSON pointer, in the object read, of the value the rule applied to. */
  path: string;
  /** The part of the object the finding is about, when not the object itself (an EVSE uid, "uid/connector id"). */
  part?: string;
  /** What was there and what it became, short and never a secret (values of fields that identify a driver are left out). */
  detail?: string;
}

/**
 * What a reader makes of an object: taken (normalized as the findings say,
 * strictly valid 2.2.1) or refused with a message that names the fields.
 */
export type Reading<T> = { ok: true; value: T; findings: Finding[] } | { ok: false; message: string; findings: Finding[] };

export const isRejection = (finding: Finding): boolean => RULES[finding.rule].kind === 'rejected';

/** A value for a finding's detail: JSON, at most 40 characters. */
export function shown(value: unknown): string {
  const text = value === undefined ? 'absent' : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** A refusal: the rule that refused, and the message the CPO is told (2001). */
export function refused<T>(findings: Finding[], rule: RuleName, path: string, message: string, detail?: string): Reading<T> {
  findings.push({ rule, path, ...(detail === undefined ? {} : { detail }) });
  return { ok: false, message, findings };
}

/** Escapes a property name for a JSON pointer. */
export const pointer = (base: string, key: string | number) => `${base}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
