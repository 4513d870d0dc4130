// The one reader of Sessions (and Session PATCHes) and of CDRs: the rules of
// every object, a CDR's location coordinates to 2.2.1's precision and its
// tariffs read as Tariffs. A status, auth method or connector format/power
// type outside 2.2.1 refuses the object: what we do with a session or a bill
// depends on them, and a guess would charge someone wrongly.
import { Cdr } from '../cdrs.ts';
import { CONNECTOR_FORMATS, POWER_TYPES } from '../locations-tariffs.ts';
import { AUTH_METHODS, SESSION_STATUSES, Session, SessionPatch } from '../sessions.ts';
import { type CDR, validator } from '../validate.ts';
import { readCoordinates } from './geo.ts';
import { type Finding, type Reading, refused, shown } from './rules.ts';
import { applySchemaRules, copyJson } from './schema-rules.ts';
import { strictly } from './strict.ts';
import { applyTariffRules } from './tariff.ts';

const strictSession = validator(Session, 'Session');
const strictSessionPatch = validator(SessionPatch);
const strictCdr = validator(Cdr, 'CDR');

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const hasId = (value: unknown) => typeof value === 'string' && value.trim() !== '';

/** The first of `fields` (JSON pointer, values allowed) whose value is present and not allowed. */
function closedEnums(object: Record<string, unknown>, fields: [string, readonly string[]][], findings: Finding[], what: string): Reading<never> | undefined {
  for (const [field, allowed] of fields) {
    const path = field.split('/');
    let value: unknown = object;
    for (const key of path) value = isRecord(value) ? value[key] : undefined;
    if (value !== undefined && !allowed.includes(value as string)) {
      return refused(findings, 'unknown-enum-refused', `/${field}`, `${what}: /${field} ${shown(value)} is not one of ${allowed.join(', ')}`, shown(value));
    }
  }
  return undefined;
}

const SESSION_ENUMS: [string, readonly string[]][] = [
  ['status', SESSION_STATUSES],
  ['auth_method', AUTH_METHODS],
];

/** A Session as a CPO sent it (pulled, or PUT), read. */
export function readSession(raw: unknown): Reading<Session> {
  const findings: Finding[] = [];
  if (!isRecord(raw)) return refused(findings, 'invalid', '', 'Session: the body must be a JSON object');
  const session = copyJson(raw);
  applySchemaRules(Session, session, '', findings);
  if (!hasId(session.id)) return refused(findings, 'no-id', '/id', 'Session: /id is required');
  const refusal = closedEnums(session, SESSION_ENUMS, findings, 'Session');
  if (refusal) return refusal;
  const checked = strictly(strictSession, session, '', findings);
  if (!checked.ok) return refused(findings, 'invalid', '', `Session: ${checked.message}`, checked.message);
  return { ok: true, value: checked.value, findings };
}

/** The body of a Session PATCH, read (the merged Session is read again with readSession). */
export function readSessionPatch(raw: unknown): Reading<SessionPatch> {
  const findings: Finding[] = [];
  if (!isRecord(raw)) return refused(findings, 'invalid', '', 'Session PATCH: the body must be a JSON object');
  const patch = copyJson(raw);
  applySchemaRules(SessionPatch, patch, '', findings);
  const refusal = closedEnums(patch, SESSION_ENUMS, findings, 'Session PATCH');
  if (refusal) return refusal;
  const checked = strictly(strictSessionPatch, patch, '', findings);
  if (!checked.ok) return refused(findings, 'invalid', '', `Session PATCH: ${checked.message}`, checked.message);
  return { ok: true, value: checked.value, findings };
}

/** A CDR as a CPO sent it (pulled, or POSTed), read. */
export function readCdr(raw: unknown): Reading<CDR> {
  const findings: Finding[] = [];
  if (!isRecord(raw)) return refused(findings, 'invalid', '', 'CDR: the body must be a JSON object');
  const cdr = copyJson(raw);
  applySchemaRules(Cdr, cdr, '', findings);
  if (!hasId(cdr.id)) return refused(findings, 'no-id', '/id', 'CDR: /id is required');
  const refusal = closedEnums(
    cdr,
    [
      ['auth_method', AUTH_METHODS],
      ['cdr_location/connector_format', CONNECTOR_FORMATS],
      ['cdr_location/connector_power_type', POWER_TYPES],
    ],
    findings,
    'CDR',
  );
  if (refusal) return refusal;
  if (isRecord(cdr.cdr_location)) {
    const coordinates = readCoordinates(cdr.cdr_location.coordinates, '/cdr_location/coordinates', findings);
    if (coordinates) cdr.cdr_location.coordinates = coordinates;
  }
  if (Array.isArray(cdr.tariffs)) {
    for (const [i, tariff] of cdr.tariffs.entries()) {
      const message = applyTariffRules(tariff, `/tariffs/${i}`, findings);
      if (message !== undefined) return { ok: false, message: `CDR: ${message}`, findings };
    }
  }
  const checked = strictly(strictCdr, cdr, '', findings);
  if (!checked.ok) return refused(findings, 'invalid', '', `CDR: ${checked.message}`, checked.message);
  return { ok: true, value: checked.value, findings };
}
