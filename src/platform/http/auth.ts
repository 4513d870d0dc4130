// The bearer-token gate of the client API. The check itself is injected (the
// clients module provides it); this file only wires it into a route scope.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import type { HttpApp } from './server.ts';

export interface Principal {
  clientId: string;
  tokenId: string;
  /** The client's own requests per minute (0 = unlimited); null or absent: the service default. */
  rateLimitPerMinute?: number | null;
}

export type Authenticate = (authorizationHeader: string | undefined) => Promise<Principal>;

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

/** What runs right after authentication in the same hook (the rate limit); a promise only when it must wait. */
export type AfterAuthentication = (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

/**
 * Every route registered in `scope` after this call requires a valid bearer token. `then` (the per-client rate
 * limit) runs in the same hook: one hook less per request is measurable on the cheapest routes.
 */
export function requireBearerToken(scope: HttpApp, authenticate: Authenticate, then?: AfterAuthentication): void {
  scope.decorateRequest('principal', undefined);
  scope.addHook('onRequest', async (request, reply) => {
    request.principal = await authenticate(request.headers.authorization);
    const waiting = then?.(request, reply);
    if (waiting) await waiting;
  });
}

/** The authenticated client of a request inside a protected scope. */
export function clientIdOf(request: FastifyRequest): string {
  if (!request.principal) throw new AppError('unauthorized', 'Missing bearer token.');
  return request.principal.clientId;
}
