// Parameter checks with Stripe's messages: unknown parameters, missing
// required ones, integers, booleans and enumerations are refused with 400
// invalid_request_error naming the parameter.
import { invalidRequest } from './errors.ts';
import type { FormObject, FormValue } from './form.ts';

export class Params {
  private readonly values: FormObject;
  private readonly prefix: string;

  constructor(values: FormObject, allowed: readonly string[], prefix = '') {
    this.values = values;
    this.prefix = prefix;
    for (const key of Object.keys(values)) {
      if (!allowed.includes(key)) throw invalidRequest(`Received unknown parameter: ${this.name(key)}`, { param: this.name(key) });
    }
  }

  private name(key: string): string {
    return this.prefix ? `${this.prefix}[${key}]` : key;
  }

  has(key: string): boolean {
    return this.values[key] !== undefined;
  }

  private scalar(key: string): string | undefined {
    const value = this.values[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw invalidRequest(`Invalid ${this.name(key)}: must be a string`, { param: this.name(key) });
    return value;
  }

  private missing(key: string) {
    return invalidRequest(`Missing required param: ${this.name(key)}.`, { param: this.name(key) });
  }

  /** A string; '' counts as given-and-empty (Stripe's way to unset a field). */
  string(key: string, options: { required?: boolean; maxLength?: number } = {}): string | undefined {
    const value = this.scalar(key);
    if (value === undefined || (options.required && value === '')) {
      if (options.required) throw this.missing(key);
      return undefined;
    }
    if (options.maxLength !== undefined && value.length > options.maxLength) {
      throw invalidRequest(`Invalid ${this.name(key)}: must be at most ${options.maxLength} characters`, { param: this.name(key) });
    }
    return value;
  }

  /** A non-empty string or null when sent empty (unset). */
  nullableString(key: string, maxLength = 5000): string | null | undefined {
    const value = this.string(key, { maxLength });
    return value === '' ? null : value;
  }

  integer(key: string, options: { required?: boolean; min?: number; max?: number } = {}): number | undefined {
    const value = this.scalar(key);
    if (value === undefined || value === '') {
      if (options.required) throw this.missing(key);
      return undefined;
    }
    if (!/^-?\d{1,15}$/.test(value)) throw invalidRequest(`Invalid integer: ${value}`, { param: this.name(key) });
    const n = Number(value);
    if (options.min !== undefined && n < options.min) {
      throw invalidRequest(`This value must be greater than or equal to ${options.min}.`, { param: this.name(key) });
    }
    if (options.max !== undefined && n > options.max) {
      throw invalidRequest(`This value must be less than or equal to ${options.max}.`, { param: this.name(key) });
    }
    return n;
  }

  boolean(key: string): boolean | undefined {
    const value = this.scalar(key);
    if (value === undefined || value === '') return undefined;
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw invalidRequest(`Invalid boolean: ${value}`, { param: this.name(key) });
  }

  oneOf<const T extends string>(key: string, allowed: readonly T[]): T | undefined {
    const value = this.scalar(key);
    if (value === undefined || value === '') return undefined;
    if (!(allowed as readonly string[]).includes(value)) {
      const list = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')}, or ${allowed.at(-1)}` : allowed.join('');
      throw invalidRequest(`Invalid ${this.name(key)}: must be one of ${list}`, { param: this.name(key) });
    }
    return value as T;
  }

  stringArray(key: string): string[] | undefined {
    const value = this.values[key];
    if (value === undefined) return undefined;
    if (value === '') return [];
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
      throw invalidRequest(`Invalid array`, { param: this.name(key) });
    }
    return value as string[];
  }

  /** A nested hash such as invoice_settings[...]; '' means empty. */
  object(key: string, allowed: readonly string[]): Params | undefined {
    const value: FormValue | undefined = this.values[key];
    if (value === undefined) return undefined;
    if (value === '') return new Params({}, allowed, this.name(key));
    if (typeof value !== 'object' || Array.isArray(value)) throw invalidRequest(`Invalid object`, { param: this.name(key) });
    return new Params(value, allowed, this.name(key));
  }

  /** metadata[key]=value; `metadata=` clears it (null). Up to 50 keys of 40 characters, values of 500. */
  metadata(key = 'metadata'): Record<string, string> | null | undefined {
    const value = this.values[key];
    if (value === undefined) return undefined;
    if (value === '') return null;
    if (typeof value !== 'object' || Array.isArray(value)) throw invalidRequest('Invalid object', { param: this.name(key) });
    const entries = Object.entries(value);
    if (entries.length > 50) throw invalidRequest('You can have at most 50 metadata keys.', { param: this.name(key) });
    const result: Record<string, string> = {};
    for (const [k, v] of entries) {
      if (typeof v !== 'string') throw invalidRequest('Invalid metadata value: must be a string', { param: `${this.name(key)}[${k}]` });
      if (k.length > 40) throw invalidRequest('Metadata keys can be at most 40 characters.', { param: `${this.name(key)}[${k}]` });
      if (v.length > 500) throw invalidRequest('Metadata values can be at most 500 characters.', { param: `${this.name(key)}[${k}]` });
      if (v !== '') result[k] = v;
    }
    return result;
  }

  expand(expandable: readonly string[]): string[] {
    const list = this.stringArray('expand') ?? [];
    for (const path of list) {
      if (!expandable.includes(path)) throw invalidRequest(`This property cannot be expanded (${path}).`, { param: 'expand' });
    }
    return list;
  }
}

export const LIST_PARAMS = ['limit', 'starting_after', 'ending_before', 'expand'] as const;

export function listOptions(params: Params): { limit: number; startingAfter: string | undefined; endingBefore: string | undefined } {
  const startingAfter = params.string('starting_after') || undefined;
  const endingBefore = params.string('ending_before') || undefined;
  if (startingAfter && endingBefore) throw invalidRequest('You may only specify one of these parameters: starting_after, ending_before.');
  return { limit: params.integer('limit', { min: 1, max: 100 }) ?? 10, startingAfter, endingBefore };
}
