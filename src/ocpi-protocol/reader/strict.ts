// The last step of every reader: the object, normalized, must pass its strict
// 2.2.1 schema. Optional fields that only describe (directions, images, a
// postal code) and are still invalid are left out first; what fails after
// that refuses the object, with the fields named.
import type { OcpiParser } from '../validate.ts';
import { type Finding, pointer, shown } from './rules.ts';

export type Strict<T> = { ok: true; value: T } | { ok: false; message: string };

function describe(errors: { path: string; message: string }[]): string {
  return errors
    .slice(0, 5)
    .map((e) => `${e.path || '/'} ${e.message}`)
    .join('; ');
}

/**
 * `value` checked against `parse`; invalid `droppable` fields (top-level names)
 * are deleted from it first, each noted as display-field-dropped.
 */
export function strictly<T>(
  parse: OcpiParser<T>,
  value: Record<string, unknown>,
  path: string,
  findings: Finding[],
  droppable: readonly string[] = [],
): Strict<T> {
  let result = parse(value);
  if (result.ok) return result;
  let dropped = false;
  for (const error of result.errors) {
    const field = error.path.split('/')[1] ?? '';
    if (droppable.includes(field) && field in value) {
      findings.push({ rule: 'display-field-dropped', path: pointer(path, field), detail: `${error.path} ${error.message}`.slice(0, 80) });
      delete value[field];
      dropped = true;
    }
  }
  if (dropped) result = parse(value);
  return result.ok ? result : { ok: false, message: describe(result.errors.map((e) => ({ ...e, path: `${path}${e.path}` }))) };
}

/** Cuts a too-long text field to `max` characters (text-truncated). */
export function truncate(value: Record<string, unknown>, field: string, max: number, path: string, findings: Finding[]): void {
  const text = value[field];
  if (typeof text !== 'string' || text.length <= max) return;
  value[field] = text.slice(0, max);
  findings.push({ rule: 'text-truncated', path: pointer(path, field), detail: `${text.length} -> ${max} characters, ${shown(text.slice(0, 20))}` });
}
