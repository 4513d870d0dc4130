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

/** The path of the first key that could change an object's prototype when merged (__proto__, constructor.prototype). */
function prototypeKey(value: unknown, path = ''): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const at = `${path}/${key}`;
    if (key === '__proto__') return at;
    if (key === 'constructor' && child !== null && typeof child === 'object' && 'prototype' in child) return `${at}/prototype`;
    const found = prototypeKey(child, at);
    if (found) return found;
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
  const forbidden = prototypeKey(value);
  if (forbidden) throw invalidParameters(`${forbidden}: a __proto__ or constructor.prototype key is not accepted`);
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
