// How the OCPI interface reads request bodies. status_codes: a request that
// is valid JSON, authenticated and addresses an existing resource has reached
// the OCPI layer, and "an HTTP error status code MUST NOT be returned" to it;
// only "a message [that] does not contain a valid JSON string" is HTTP 400.
// So a body is read as JSON whatever its Content-Type says (CPOs send
// text/plain, application/octet-stream, vendor types or none), a method
// without a body (DELETE) may carry an empty one, and valid JSON that we
// refuse to process (a __proto__ key) is a 2001 in an HTTP 200 answer, not
// the 400 of a body that is not JSON.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidJson, invalidParameters } from '../../ocpi-protocol/transport.ts';

/** Methods whose requests carry no body: an empty one is no body. */
const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** Deeper than any OCPI object (a CDR's charging periods are 5 levels down): refused before anything walks it. */
export const MAX_BODY_DEPTH = 64;

/**
 * What in a parsed body is refused: the path of the first key that could change an object's prototype when merged
 * (__proto__, constructor.prototype), or a nesting deeper than MAX_BODY_DEPTH. A walk with a stack of its own, in
 * document order: a body nested thousands deep (a few kB of brackets) must be a 2001, not a stack overflow (a 500)
 * here or in a reader that recurses after it.
 */
function refusedPart(value: unknown): string | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth >= MAX_BODY_DEPTH) return `${item.path || '/'}: nested deeper than ${MAX_BODY_DEPTH} levels is not accepted`;
    const children: { value: unknown; path: string; depth: number }[] = [];
    for (const [key, child] of Object.entries(item.value)) {
      const at = `${item.path}/${key}`;
      if (key === '__proto__') return `${at}: a __proto__ or constructor.prototype key is not accepted`;
      if (key === 'constructor' && child !== null && typeof child === 'object' && 'prototype' in child) {
        return `${at}/prototype: a __proto__ or constructor.prototype key is not accepted`;
      }
      children.push({ value: child, path: at, depth: item.depth + 1 });
    }
    // Reversed onto the stack: the first child is looked into first, as a recursive walk would.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as (typeof children)[number]);
  }
  return undefined;
}

/** A request body as the OCPI layer takes it: JSON whatever the media type, refused as status_codes says. */
export function readOcpiBody(request: Pick<FastifyRequest, 'method'>, body: string): unknown {
  if (body.trim() === '') {
    if (BODYLESS.has(request.method)) return undefined;
    throw invalidJson('The request body must not be empty');
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw invalidJson('The request body is not valid JSON');
  }
  const refused = refusedPart(value);
  if (refused) throw invalidParameters(refused);
  return value;
}

/** Installs the body parsing above on the OCPI scope, for every media type (and none). */
export function installOcpiBodyParsing(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  const parse = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
    try {
      done(null, readOcpiBody(request, typeof body === 'string' ? body : body.toString('utf8')));
    } catch (error) {
      done(error as Error);
    }
  };
  app.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'string' }, parse);
  app.addContentTypeParser('*', { parseAs: 'string' }, parse);
}
