// Input hygiene for every route, from one root hook: PostgreSQL refuses NUL
// characters in text and lone UTF-16 surrogates in JSON ("\ud800" stored as
// jsonb), and a JS string with a lone surrogate is silently turned into U+FFFD
// on its way to a text column. Such a value is never meaningful input, so it
// is refused before any route sees it, as a validation error naming the field.
//
// The error is shaped like Fastify's schema-validation errors (`validation`,
// `validationContext`), so each scope's own error handler renders it in its
// own form: problem+json for the client API, the OCPI envelope (2001) under
// /ocpi, Stripe's error object under /sandbox/.
import type { FastifyInstance, FastifyRequest } from 'fastify';

export const BAD_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

/** How many offending fields one answer names (a body of a million bad keys is not walked to the end). */
const MAX_REPORTED = 20;

interface BadField {
  /** A JSON pointer, as ajv reports it (the error handlers turn it into `a.b.0`). */
  instancePath: string;
  keyword: 'text';
  params: Record<string, never>;
  message: string;
}

export class BadTextError extends Error {
  readonly statusCode = 400;
  readonly code = 'FST_ERR_VALIDATION';
  readonly validation: BadField[];
  readonly validationContext: 'params' | 'querystring' | 'body';

  constructor(context: 'params' | 'querystring' | 'body', fields: BadField[]) {
    super(fields.map((f) => `${fieldName(f.instancePath, context)} ${BAD_TEXT_MESSAGE}`).join('; '));
    this.name = 'BadTextError';
    this.validation = fields;
    this.validationContext = context;
  }
}

/** True when PostgreSQL (or JSON storage) could not take the string as it is. */
export function isBadText(value: string): boolean {
  return value.includes('\u0000') || !value.isWellFormed();
}

/** A key as it may be shown back: the offending characters become U+FFFD. */
function shown(key: string): string {
  return key.toWellFormed().replaceAll('\u0000', '\uFFFD');
}

const pointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

function fieldName(instancePath: string, context: string): string {
  const path = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  return path.length > 0 ? path.join('.') : context === 'querystring' ? 'query' : context;
}

/** True when a parsed value holds a bad string or key anywhere: the per-request check, building no paths. */
function containsBadText(value: unknown): boolean {
  if (typeof value === 'string') return isBadText(value);
  if (Array.isArray(value)) return value.some(containsBadText);
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const key in value) {
      if (isBadText(key) || containsBadText((value as Record<string, unknown>)[key])) return true;
    }
  }
  return false;
}

/** Walks a parsed value (JSON body, query, params) and lists each bad string or key, by its JSON pointer. */
export function findBadText(value: unknown, path = '', found: BadField[] = []): BadField[] {
  if (found.length >= MAX_REPORTED) return found;
  if (typeof value === 'string') {
    if (isBadText(value)) found.push({ instancePath: path, keyword: 'text', params: {}, message: BAD_TEXT_MESSAGE });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length && found.length < MAX_REPORTED; i++) findBadText(value[i], `${path}/${i}`, found);
  } else if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (found.length >= MAX_REPORTED) break;
      if (isBadText(key)) {
        found.push({ instancePath: `${path}/${pointer(shown(key))}`, keyword: 'text', params: {}, message: BAD_TEXT_MESSAGE });
        continue;
      }
      findBadText(item, `${path}/${pointer(key)}`, found);
    }
  }
  return found;
}

/**
 * A raw body (the webhook scope keeps bytes for signature checks): its JSON
 * is read the way the route will read it; bytes that are not JSON are
 * refused only for a NUL byte.
 */
function findBadTextInBuffer(body: Buffer): BadField[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return body.includes(0) ? [{ instancePath: '', keyword: 'text', params: {}, message: BAD_TEXT_MESSAGE }] : [];
  }
  return findBadText(parsed);
}

function check(request: FastifyRequest): void {
  // Almost every request is clean: a walk that builds no field paths decides; the paths are built for a refusal only.
  if (containsBadText(request.params)) throw new BadTextError('params', findBadText(request.params));
  if (containsBadText(request.query)) throw new BadTextError('querystring', findBadText(request.query));
  if (Buffer.isBuffer(request.body)) {
    const body = findBadTextInBuffer(request.body);
    if (body.length > 0) throw new BadTextError('body', body);
  } else if (containsBadText(request.body)) {
    throw new BadTextError('body', findBadText(request.body));
  }
}

/**
 * Registers the check on the root instance, before any route scope exists, so
 * every route (and the 404 handler) inherits it. preValidation: the body is
 * parsed by then, and no schema, handler or database has seen the values.
 */
export function refuseBadText(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      check(request);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });
}
