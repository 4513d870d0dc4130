// The bearer-token gate of the client API. The check itself is injected (the
// clients module provides it); this file only wires it into a route scope.
import type { FastifyRequest } from 'fastify';
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

/** Every route registered in `scope` after this call requires a valid bearer token. */
export function requireBearerToken(scope: HttpApp, authenticate: Authenticate): void {
  scope.decorateRequest('principal', undefined);
  scope.addHook('onRequest', async (request) => {
    request.principal = await authenticate(request.headers.authorization);
  });
}

/** The authenticated client of a request inside a protected scope. */
export function clientIdOf(request: FastifyRequest): string {
  if (!request.principal) throw new AppError('unauthorized', 'Missing bearer token.');
  return request.principal.clientId;
}
