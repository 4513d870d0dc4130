// The one reader of Locations, EVSEs and Connectors, whether pulled from a
// CPO's Sender interface or pushed to our Receiver: the rules of every object
// (schema-rules.ts), then the Location's own: coordinates to 2.2.1's
// precision, the time zone derived when missing, "24:00" as the end of the
// day, unknown EVSE statuses UNKNOWN, over-long texts cut. What cannot be used
// is left out at the smallest level: a connector, an EVSE (no uid, no usable
// connector), or the Location itself only when it has no id, no usable
// coordinates or no time zone that can be told.
import type { TSchema } from 'typebox';
import { CONNECTOR_FORMATS, EVSE_STATUSES, type EvseStatus, OcpiConnector, OcpiEvse, OcpiLocation, POWER_TYPES } from '../locations-tariffs.ts';
import { validator } from '../validate.ts';
import { readCoordinates, readTimeZone } from './geo.ts';
import { type Finding, isRejection, pointer, type Reading, refused, shown } from './rules.ts';
import { applySchemaRules, copyJson } from './schema-rules.ts';
import { strictly, truncate } from './strict.ts';

/** A schema of an object without one of its properties (the part read by its own reader). */
function without(schema: TSchema, name: string): TSchema {
  const s = schema as unknown as { properties: Record<string, unknown>; required?: string[] };
  return {
    ...s,
    properties: Object.fromEntries(Object.entries(s.properties).filter(([k]) => k !== name)),
    required: (s.required ?? []).filter((k) => k !== name),
  } as unknown as TSchema;
}

const LOCATION_FIELDS = without(OcpiLocation, 'evses');
const EVSE_FIELDS = without(OcpiEvse, 'connectors');
// What a reader takes is recorded (when recording is on) for the CI check against the official OpenAPI: the strict writer.
const strictLocation = validator(OcpiLocation, 'Location');
const strictEvse = validator(OcpiEvse);
const strictConnector = validator(OcpiConnector);

/** Optional fields that only describe: left out when invalid, the object is taken. */
const LOCATION_DISPLAY = ['name', 'postal_code', 'state', 'directions', 'operator', 'suboperator', 'owner', 'images', 'related_locations', 'energy_mix'];
const EVSE_DISPLAY = ['floor_level', 'physical_reference', 'directions', 'images', 'parking_restrictions', 'status_schedule'];
const CONNECTOR_DISPLAY = ['terms_and_conditions'];

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const hasId = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** A part of a Location left out (an EVSE or connector): the finding names it. */
function leftOut(findings: Finding[], rule: Finding['rule'], path: string, part: string, detail?: string): undefined {
  findings.push({ rule, path, part, ...(detail === undefined ? {} : { detail }) });
  return undefined;
}

function readConnectorIn(raw: unknown, path: string, findings: Finding[], evseUid: string): OcpiConnector | undefined {
  if (!isRecord(raw)) return leftOut(findings, 'invalid', path, `${evseUid}/?`, 'not an object');
  applySchemaRules(OcpiConnector, raw, path, findings);
  if (!hasId(raw.id)) return leftOut(findings, 'no-id', pointer(path, 'id'), `${evseUid}/?`);
  const part = `${evseUid}/${raw.id}`;
  for (const [field, known] of [
    ['format', CONNECTOR_FORMATS],
    ['power_type', POWER_TYPES],
  ] as const) {
    if (!(known as readonly unknown[]).includes(raw[field])) return leftOut(findings, 'unknown-enum-refused', pointer(path, field), part, shown(raw[field]));
  }
  const checked = strictly(strictConnector, raw, path, findings, CONNECTOR_DISPLAY);
  return checked.ok ? checked.value : leftOut(findings, 'invalid', path, part, checked.message);
}

/** An EVSE's status schedule without entries of a status 2.2.1 does not know. */
function knownSchedule(evse: Record<string, unknown>, path: string, findings: Finding[]): void {
  if (!Array.isArray(evse.status_schedule)) return;
  evse.status_schedule = evse.status_schedule.filter((entry, i) => {
    const status = isRecord(entry) ? entry.status : undefined;
    if ((EVSE_STATUSES as readonly unknown[]).includes(status)) return true;
    findings.push({ rule: 'unknown-enum-dropped', path: pointer(pointer(pointer(path, 'status_schedule'), i), 'status'), detail: shown(status) });
    return false;
  });
}

/** An EVSE status as 2.2.1 spells it (enum-case), or UNKNOWN for one it does not know (unknown-status). */
export function readEvseStatus(raw: unknown, path: string, findings: Finding[]): EvseStatus {
  if ((EVSE_STATUSES as readonly unknown[]).includes(raw)) return raw as EvseStatus;
  const spelled = typeof raw === 'string' ? EVSE_STATUSES.find((s) => s === raw.trim().toUpperCase()) : undefined;
  findings.push(
    spelled
      ? { rule: 'enum-case', path, detail: `${shown(raw)} -> ${shown(spelled)}` }
      : { rule: 'unknown-status', path, detail: `${shown(raw)} -> "UNKNOWN"` },
  );
  return spelled ?? 'UNKNOWN';
}

function readEvseIn(raw: unknown, path: string, findings: Finding[]): OcpiEvse | undefined {
  if (!isRecord(raw)) return leftOut(findings, 'invalid', path, '?', 'not an object');
  applySchemaRules(EVSE_FIELDS, raw, path, findings);
  if (!hasId(raw.uid)) return leftOut(findings, 'no-evse-uid', pointer(path, 'uid'), hasId(raw.evse_id) ? raw.evse_id : '?');
  const uid = raw.uid;
  raw.status = readEvseStatus(raw.status, pointer(path, 'status'), findings);
  knownSchedule(raw, path, findings);
  if (raw.coordinates !== undefined) {
    const coordinates = readCoordinates(raw.coordinates, pointer(path, 'coordinates'), findings);
    if (coordinates) raw.coordinates = coordinates;
    else {
      findings.push({ rule: 'display-field-dropped', path: pointer(path, 'coordinates'), detail: shown(raw.coordinates) });
      delete raw.coordinates;
    }
  }
  const connectors: OcpiConnector[] = [];
  const rawConnectors = Array.isArray(raw.connectors) ? raw.connectors : [];
  rawConnectors.forEach((c, i) => {
    const at = pointer(pointer(path, 'connectors'), i);
    const connector = readConnectorIn(c, at, findings, uid);
    if (!connector) return;
    if (connectors.some((k) => k.id === connector.id)) leftOut(findings, 'duplicate-uid', pointer(at, 'id'), `${uid}/${connector.id}`);
    else connectors.push(connector);
  });
  if (connectors.length === 0) return leftOut(findings, 'evse-without-connectors', pointer(path, 'connectors'), uid);
  raw.connectors = connectors;
  const checked = strictly(strictEvse, raw, path, findings, EVSE_DISPLAY);
  return checked.ok ? checked.value : leftOut(findings, 'invalid', path, uid, checked.message);
}

/** "24:00" as the end of a regular-hours period: the end of the day, "23:59" in 2.2.1's syntax. */
function clampDayEnd(location: Record<string, unknown>, findings: Finding[]): void {
  const hours = isRecord(location.opening_times) ? location.opening_times.regular_hours : undefined;
  if (!Array.isArray(hours)) return;
  hours.forEach((period, i) => {
    if (isRecord(period) && (period.period_end === '24:00' || period.period_end === '24:00:00')) {
      findings.push({ rule: 'period-end-24h', path: `/opening_times/regular_hours/${i}/period_end`, detail: `${shown(period.period_end)} -> "23:59"` });
      period.period_end = '23:59';
    }
  });
}

function readLocationIn(location: Record<string, unknown>, findings: Finding[]): Reading<OcpiLocation> {
  applySchemaRules(LOCATION_FIELDS, location, '', findings);
  if (!hasId(location.id)) return refused(findings, 'no-id', '/id', 'a Location needs an id');
  const coordinates = readCoordinates(location.coordinates, '/coordinates', findings);
  if (!coordinates)
    return refused(findings, 'no-coordinates', '/coordinates', '/coordinates must be a latitude and longitude in decimal degrees', shown(location.coordinates));
  location.coordinates = coordinates;
  const zone = readTimeZone(location.time_zone, coordinates, location.country, '/time_zone', findings);
  if (zone === undefined)
    return refused(findings, 'no-time-zone', '/time_zone', '/time_zone is missing and cannot be derived from the coordinates', shown(location.time_zone));
  location.time_zone = zone;
  clampDayEnd(location, findings);
  truncate(location, 'address', 45, '', findings);
  truncate(location, 'city', 45, '', findings);
  truncate(location, 'name', 255, '', findings);
  if (Array.isArray(location.evses)) {
    const evses: OcpiEvse[] = [];
    location.evses.forEach((e, i) => {
      const evse = readEvseIn(e, `/evses/${i}`, findings);
      if (!evse) return;
      if (evses.some((k) => k.uid === evse.uid)) leftOut(findings, 'duplicate-uid', `/evses/${i}/uid`, evse.uid);
      else evses.push(evse);
    });
    location.evses = evses;
  }
  const checked = strictly(strictLocation, location, '', findings, LOCATION_DISPLAY);
  if (!checked.ok) return refused(findings, 'invalid', '', checked.message, checked.message);
  return { ok: true, value: checked.value, findings };
}

/**
 * A Location as a CPO sent it, read. The value given is not changed, unless
 * `inPlace` (a page just parsed, that nothing else holds: no copy to make).
 */
export function readLocation(raw: unknown, options: { inPlace?: boolean } = {}): Reading<OcpiLocation> {
  const findings: Finding[] = [];
  if (!isRecord(raw)) return refused(findings, 'invalid', '', 'a Location must be a JSON object');
  return readLocationIn(options.inPlace ? raw : copyJson(raw), findings);
}

/** An EVSE pushed on its own (PUT of .../{location_id}/{evse_uid}). */
export function readEvse(raw: unknown): Reading<OcpiEvse> {
  const findings: Finding[] = [];
  const evse = readEvseIn(isRecord(raw) ? copyJson(raw) : raw, '', findings);
  return evse ? { ok: true, value: evse, findings } : { ok: false, message: rejectionMessage(findings), findings };
}

/** A Connector pushed on its own (PUT of .../{evse_uid}/{connector_id}). */
export function readConnector(raw: unknown, evseUid: string): Reading<OcpiConnector> {
  const findings: Finding[] = [];
  const connector = readConnectorIn(isRecord(raw) ? copyJson(raw) : raw, '', findings, evseUid);
  return connector ? { ok: true, value: connector, findings } : { ok: false, message: rejectionMessage(findings), findings };
}

/** What the CPO is told when the object it pushed is refused: the refusing findings, fields named. */
export function rejectionMessage(findings: Finding[]): string {
  const explain = (f: Finding): string => {
    if (f.rule === 'invalid') return f.detail ?? `${f.path || '/'} is invalid`;
    const what: Partial<Record<Finding['rule'], string>> = {
      'no-id': 'is required',
      'no-evse-uid': 'is required',
      'evse-without-connectors': 'has no connector that can be used',
      'duplicate-uid': 'is used twice',
      'unknown-enum-refused': `is not a 2.2.1 value (${f.detail ?? ''})`,
    };
    return `${f.path || '/'} ${what[f.rule] ?? f.detail ?? 'is invalid'}`;
  };
  const refusals = findings.filter(isRejection);
  return refusals.length === 0 ? 'the object cannot be used' : refusals.slice(-3).map(explain).join('; ');
}
