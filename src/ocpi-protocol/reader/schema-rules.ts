// The rules that hold for every OCPI object, applied by walking the object
// along its 2.2.1 schema (the TypeBox schemas of src/ocpi-protocol): optional
// fields sent as "" or null are absent, enum values in another case are the
// spec's, numbers sent as strings are numbers, date-times and times of day in
// near-miss formats are the same instant or time. Fields the schema does not
// name (a CPO's own extensions) are left as they are. Object-specific rules
// (coordinates, time zones, 24:00, VAT) live in each object's reader.
import type { TSchema } from 'typebox';
import { DATE_TIME, KNOWN_VALUES, TIME_PATTERN } from '../types.ts';
import { type Finding, pointer, shown } from './rules.ts';

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  enum?: unknown[];
  pattern?: string;
  [KNOWN_VALUES]?: readonly string[];
}

const LOOSE_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s*([Zz]|[+-]\d{2}:?\d{2})?$/;
const LOOSE_TIME = /^(\d{1,2}):(\d{2})(?::00)?$/;
const NUMBER = /^-?\d+(\.\d+)?$/;
const INTEGER = /^-?\d+$/;

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isStringSchema = (s: SchemaNode) => s.type === 'string' || (Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string'));

/** Under these parts of an object, values identify a driver or carry signed meter data: findings there never show values. */
const SECRET = /\/(cdr_token|signed_data)(\/|$)/;

function note(findings: Finding[], rule: Finding['rule'], path: string, from: unknown, to: unknown): void {
  findings.push(SECRET.test(path) ? { rule, path } : { rule, path, detail: `${shown(from)} -> ${shown(to)}` });
}

/** A date-time in a near-miss format as OCPI's (UTC, with seconds), or undefined when it is none. */
export function looseDateTime(value: string): string | undefined {
  const m = LOOSE_DATE_TIME.exec(value.trim());
  if (!m) return undefined;
  const [, date, hh, mm, ss, fraction, zone] = m;
  const offset = zone === undefined || zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${date}T${hh}:${mm}:${ss ?? '00'}${fraction ?? ''}${offset}`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function scalar(schema: SchemaNode, value: unknown, path: string, findings: Finding[]): unknown {
  if (typeof value !== 'string') return value;
  const closed = Array.isArray(schema.enum) ? (schema.enum as unknown[]) : undefined;
  const known = closed ?? schema[KNOWN_VALUES];
  if (known && !known.includes(value)) {
    const spelled = known.find((k) => typeof k === 'string' && k.toUpperCase() === value.trim().toUpperCase());
    if (spelled !== undefined) {
      note(findings, 'enum-case', path, value, spelled);
      return spelled;
    }
    if (!closed) findings.push({ rule: 'unknown-enum-kept', path, detail: shown(value) });
    return value;
  }
  if ((schema.type === 'number' && NUMBER.test(value.trim())) || (schema.type === 'integer' && INTEGER.test(value.trim()))) {
    note(findings, 'number-as-string', path, value, Number(value));
    return Number(value);
  }
  if (schema.pattern === DATE_TIME.source && !DATE_TIME.test(value)) {
    const instant = looseDateTime(value);
    if (instant !== undefined) {
      note(findings, 'date-time-format', path, value, instant);
      return instant;
    }
  }
  if (schema.pattern === TIME_PATTERN && !new RegExp(TIME_PATTERN).test(value)) {
    const m = LOOSE_TIME.exec(value.trim());
    const time = m ? `${(m[1] as string).padStart(2, '0')}:${m[2]}` : undefined;
    if (time !== undefined && new RegExp(TIME_PATTERN).test(time)) {
      note(findings, 'time-format', path, value, time);
      return time;
    }
  }
  return value;
}

/**
 * Applies the rules of every object to `value` along `schema`, in place where
 * it is an object or array; returns the value to use (a scalar may be replaced).
 */
export function applySchemaRules(schema: TSchema, value: unknown, path: string, findings: Finding[]): unknown {
  const node = schema as SchemaNode;
  if (node.type === 'object' && node.properties && isRecord(value)) {
    const required = new Set(node.required ?? []);
    for (const [key, propertySchema] of Object.entries(node.properties)) {
      if (!(key in value)) continue;
      const at = pointer(path, key);
      const v = value[key];
      if (!required.has(key) && v === null) {
        delete value[key];
        findings.push({ rule: 'null-as-absent', path: at });
      } else if (!required.has(key) && v === '' && isStringSchema(propertySchema)) {
        delete value[key];
        findings.push({ rule: 'empty-string-as-absent', path: at });
      } else {
        value[key] = applySchemaRules(propertySchema as TSchema, v, at, findings);
      }
    }
    return value;
  }
  if (node.type === 'array' && node.items && Array.isArray(value)) {
    const items = node.items;
    const kept: unknown[] = [];
    value.forEach((item, index) => {
      const at = pointer(path, index);
      if (item === null) findings.push({ rule: 'null-as-absent', path: at });
      else if (item === '' && isStringSchema(items)) findings.push({ rule: 'empty-string-as-absent', path: at });
      else kept.push(applySchemaRules(items as TSchema, item, at, findings));
    });
    value.splice(0, value.length, ...kept);
    return value;
  }
  return scalar(node, value, path, findings);
}
