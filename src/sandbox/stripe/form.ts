// Stripe's request encoding: application/x-www-form-urlencoded with bracket
// nesting, as its SDKs send it: `metadata[user_id]=42`, `expand[0]=latest_charge`,
// `payment_method_types[]=card`, `invoice_settings[default_payment_method]=pm_1`.
// An empty value means "unset" (kept as '' here; each parameter decides).
import { isBadText } from '../../platform/http/input.ts';
import { SandboxError } from './errors.ts';

export type FormValue = string | FormValue[] | FormObject;
export interface FormObject {
  [key: string]: FormValue;
}

const MAX_PARAMS = 1_000;
const MAX_DEPTH = 5;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

function keySegments(key: string): string[] {
  const first = key.indexOf('[');
  if (first === -1) return [key];
  const segments = [key.slice(0, first)];
  const rest = key.slice(first);
  const pattern = /\[([^[\]]*)\]/gy;
  let consumed = 0;
  for (let match = pattern.exec(rest); match; match = pattern.exec(rest)) {
    segments.push(match[1] ?? '');
    consumed = pattern.lastIndex;
  }
  if (consumed !== rest.length) throw invalidKey(key);
  return segments;
}

function invalidKey(key: string): SandboxError {
  return new SandboxError(400, { type: 'invalid_request_error', message: `Invalid parameter name: ${key}`, param: key });
}

/** Objects whose keys are all array indexes become arrays (in index order). */
function arrays(value: FormValue): FormValue {
  if (typeof value === 'string' || Array.isArray(value)) return Array.isArray(value) ? value.map(arrays) : value;
  const keys = Object.keys(value);
  const converted: FormObject = {};
  for (const key of keys) converted[key] = arrays(value[key] as FormValue);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => converted[k] as FormValue);
  }
  return converted;
}

export function decodeForm(text: string): FormObject {
  const root: FormObject = {};
  if (text.length === 0) return root;
  const pairs = new URLSearchParams(text);
  let count = 0;
  for (const [key, value] of pairs) {
    if (++count > MAX_PARAMS) throw new SandboxError(400, { type: 'invalid_request_error', message: 'Too many parameters.' });
    // PostgreSQL cannot store a NUL character (the sandbox keeps objects as jsonb): refused like Stripe refuses bad input.
    if (isBadText(key)) throw invalidKey(key.replaceAll('\u0000', '\uFFFD'));
    if (isBadText(value)) {
      throw new SandboxError(400, { type: 'invalid_request_error', message: `Invalid value for ${key}: it contains a NUL character.`, param: key });
    }
    const segments = keySegments(key);
    if (segments.length > MAX_DEPTH || segments[0] === '' || segments.some((s) => FORBIDDEN.has(s))) throw invalidKey(key);
    let node: FormObject = root;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as string;
      const last = i === segments.length - 1;
      if (segment === '') {
        // `key[]=v`: append to the list being built under the previous segment.
        const index = String(Object.keys(node).length);
        if (!last) throw invalidKey(key);
        node[index] = value;
        break;
      }
      if (last) {
        if (typeof node[segment] === 'object') throw invalidKey(key);
        node[segment] = value;
      } else {
        const next = node[segment];
        if (typeof next === 'string') throw invalidKey(key);
        if (next === undefined) node[segment] = {};
        node = node[segment] as FormObject;
      }
    }
  }
  return arrays(root) as FormObject;
}
