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
const TIME = new RegExp(TIME_PATTERN);

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isStringSchema = (s: SchemaNode) => s.type === 'string' || (Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string'));

/** Under these parts of an object, values identify a driver or carry signed meter data: findings there never show values. */
const SECRET = /\/(cdr_token|signed_data)(\/|$)/;

function note(findings: Finding[], rule: Finding['rule'], path: string, from: unknown, to: unknown): void {
  findings.push(SECRET.test(path) ? { rule, path } : { rule, path, detail: `${shown(from)} -> ${shown(to)}` });
}

/**
 * A copy of a JSON value to normalize (readers never change what they are given, unless told to work in place).
 * JSON's own round trip: twice as fast as structuredClone on these objects, and they are JSON.
 */
export const copyJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A date-time in a near-miss format as OCPI's (UTC, with seconds), or undefined when it is none. */
export function looseDateTime(value: string): string | undefined {
  const m = LOOSE_DATE_TIME.exec(value.trim());
  if (!m) return undefined;
  const [, date, hh, mm, ss, fraction, zone] = m;
  const offset = zone === undefined || zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${date}T${hh}:${mm}:${ss ?? '00'}${fraction ?? ''}${offset}`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** The rules of a scalar; `at` gives its path, only computed for a finding (most values need none). */
function scalar(schema: SchemaNode, value: unknown, at: () => string, findings: Finding[]): unknown {
  if (typeof value !== 'string') return value;
  const closed = Array.isArray(schema.enum) ? (schema.enum as unknown[]) : undefined;
  const known = closed ?? schema[KNOWN_VALUES];
  if (known && !known.includes(value)) {
    const spelled = known.find((k) => typeof k === 'string' && k.toUpperCase() === value.trim().toUpperCase());
    if (spelled !== undefined) {
      note(findings, 'enum-case', at(), value, spelled);
      return spelled;
    }
    if (!closed) findings.push({ rule: 'unknown-enum-kept', path: at(), detail: shown(value) });
    return value;
  }
  if ((schema.type === 'number' && NUMBER.test(value.trim())) || (schema.type === 'integer' && INTEGER.test(value.trim()))) {
    note(findings, 'number-as-string', at(), value, Number(value));
    return Number(value);
  }
  if (schema.pattern === DATE_TIME.source && !DATE_TIME.test(value)) {
    const instant = looseDateTime(value);
    if (instant !== undefined) {
      note(findings, 'date-time-format', at(), value, instant);
      return instant;
    }
  }
  if (schema.pattern === TIME_PATTERN && !TIME.test(value)) {
    const m = LOOSE_TIME.exec(value.trim());
    const time = m ? `${(m[1] as string).padStart(2, '0')}:${m[2]}` : undefined;
    if (time !== undefined && TIME.test(time)) {
      note(findings, 'time-format', at(), value, time);
      return time;
    }
  }
  return value;
}

/** An object schema's properties, prepared once per schema: the walk runs for every object a CPO sends. */
interface PreparedProperty {
  key: string;
  schema: SchemaNode;
  required: boolean;
  string: boolean;
  container: boolean;
}
const prepared = new WeakMap<SchemaNode, PreparedProperty[]>();

function propertiesOf(node: SchemaNode): PreparedProperty[] {
  let list = prepared.get(node);
  if (!list) {
    const required = new Set(node.required ?? []);
    list = Object.entries(node.properties ?? {}).map(([key, schema]) => ({
      key,
      schema,
      required: required.has(key),
      string: isStringSchema(schema),
      container: schema.type === 'object' || schema.type === 'array',
    }));
    prepared.set(node, list);
  }
  return list;
}

/**
 * Applies the rules of every object to `value` along `schema`, in place where
 * it is an object or array; returns the value to use (a scalar may be replaced).
 */
export function applySchemaRules(schema: TSchema, value: unknown, path: string, findings: Finding[]): unknown {
  const node = schema as SchemaNode;
  if (node.type === 'object' && node.properties && isRecord(value)) {
    for (const p of propertiesOf(node)) {
      const v = value[p.key];
      if (v === undefined) continue;
      if (!p.required && v === null) {
        delete value[p.key];
        findings.push({ rule: 'null-as-absent', path: pointer(path, p.key) });
      } else if (!p.required && v === '' && p.string) {
        delete value[p.key];
        findings.push({ rule: 'empty-string-as-absent', path: pointer(path, p.key) });
      } else if (p.container) {
        value[p.key] = applySchemaRules(p.schema as TSchema, v, pointer(path, p.key), findings);
      } else if (typeof v === 'string') {
        // Numbers, booleans and nulls need no rule: only strings and containers are walked.
        value[p.key] = scalar(p.schema, v, () => pointer(path, p.key), findings);
      }
    }
    return value;
  }
  if (node.type === 'array' && node.items && Array.isArray(value)) {
    const items = node.items;
    const string = isStringSchema(items);
    let clean = true;
    for (const item of value) if (item === null || (item === '' && string)) clean = false;
    if (!clean) {
      const kept: unknown[] = [];
      value.forEach((item, index) => {
        if (item === null) findings.push({ rule: 'null-as-absent', path: pointer(path, index) });
        else if (item === '' && string) findings.push({ rule: 'empty-string-as-absent', path: pointer(path, index) });
        else kept.push(item);
      });
      value.splice(0, value.length, ...kept);
    }
    const container = items.type === 'object' || items.type === 'array';
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (container) value[i] = applySchemaRules(items as TSchema, item, pointer(path, i), findings);
      else if (typeof item === 'string') value[i] = scalar(items, item, () => pointer(path, i), findings);
    }
    return value;
  }
  return scalar(node, value, () => path, findings);
}
