// The OCPI edge of the service: every answer is the OCPI envelope, every
// request is authenticated by a credentials token that names a connection,
// errors carry OCPI status codes, and request/correlation ids are echoed.
import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { envelope, HEADER, OCPI_STATUS, OcpiError, tokenCandidates } from '../../ocpi-protocol/transport.ts';
import type { Clock } from '../../platform/clock.ts';
import { isDatabaseUnavailable } from '../../platform/db.ts';
import { setRateLimitHeaders } from '../../platform/http/rate-limit.ts';
import type { RateLimiter } from '../../platform/rate-limit/limiter.ts';
import type { Connection } from './repository.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The connection whose credentials token authenticated this OCPI request. */
    ocpiConnection?: Connection;
    /** The credentials token the peer presented (decoded). */
    ocpiToken?: string;
    /** The peer sent its token unencoded (an OCPI 2.1.1/2.2 habit). */
    ocpiRawToken?: boolean;
  }
}

export interface OcpiAuth {
  /** The connection a token belongs to (cached briefly). */
  connectionForToken(token: string): Promise<Connection | undefined>;
}

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Which routes a TOKEN_A (before registration) may use. */
export type TokenAccess = 'registration' | 'registered';

/**
 * Installs authentication, the envelope error handler and the 404 handler on
 * an encapsulated Fastify context (the /ocpi prefix).
 */
export function installOcpiEdge(app: FastifyInstance, deps: { auth: OcpiAuth; clock: Clock; rateLimit?: { limiter: RateLimiter; perMinute: number } }): void {
  app.decorateRequest('ocpiConnection', undefined);
  app.decorateRequest('ocpiToken', undefined);
  app.decorateRequest('ocpiRawToken', false);

  app.addHook('onRequest', async (request, reply) => {
    const correlation = request.headers[HEADER.correlationId];
    void reply.header('X-Correlation-ID', typeof correlation === 'string' && CORRELATION_ID.test(correlation) ? correlation : randomUUID());
    void reply.header('X-Request-ID', request.id);
    const candidates = tokenCandidates(request.headers.authorization);
    if (!candidates) throw new OcpiError(401, OCPI_STATUS.clientError, 'Authorization: Token <credentials token> is required');
    let connection: Connection | undefined;
    let token: string | undefined;
    let raw = false;
    if (candidates.decoded !== undefined) {
      connection = await deps.auth.connectionForToken(candidates.decoded);
      token = candidates.decoded;
    }
    if (!connection) {
      const byRaw = await deps.auth.connectionForToken(candidates.raw);
      // An unencoded token is accepted only from connections configured for OCPI 2.1.1/2.2 peers
      // (and a TOKEN_A: the registration then marks the connection as such a peer).
      if (byRaw && (byRaw.raw_tokens || byRaw.incoming_token_kind === 'A')) {
        connection = byRaw;
        token = candidates.raw;
        raw = true;
      }
    }
    if (!connection || token === undefined) throw new OcpiError(401, OCPI_STATUS.clientError, 'Unknown credentials token');
    request.ocpiConnection = connection;
    request.ocpiToken = token;
    request.ocpiRawToken = raw;
    const rateLimit = deps.rateLimit;
    if (rateLimit && rateLimit.perMinute > 0) {
      const decision = await rateLimit.limiter.decide(`ocpi:${connection.id}`, rateLimit.perMinute);
      setRateLimitHeaders(reply, decision);
      if (!decision.allowed) {
        // OCPI defines no status for this: a transport-level refusal (HTTP 429, as the 401 of a bad token is) with
        // the generic client error 2000 in the envelope; Retry-After says when the peer's next window opens.
        void reply.header('Retry-After', String(decision.resetSeconds));
        throw new OcpiError(429, OCPI_STATUS.clientError, `Too many requests: this connection may make ${rateLimit.perMinute} requests per minute`);
      }
    }
    const access = (request.routeOptions.config as { ocpiAccess?: TokenAccess } | undefined)?.ocpiAccess ?? 'registered';
    if (access === 'registered' && connection.incoming_token_kind !== 'C') {
      throw new OcpiError(401, OCPI_STATUS.clientError, 'This token only allows the versions and credentials modules; register first');
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof OcpiError) {
      // Refusals of a bad token or of a peer over its rate limit come in floods: not logged one by one.
      if (error.httpStatus >= 400 && error.httpStatus !== 401 && error.httpStatus !== 429) {
        request.log.info({ ocpi_status: error.statusCode, peer_request_id: request.id, reason: error.message }, 'OCPI request refused');
      }
      return sendOcpi(reply, deps.clock, error.httpStatus, undefined, error.statusCode, error.message);
    }
    if (error.validation || (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)) {
      const message = error.validation ? `${error.validationContext ?? 'request'}: ${error.message}` : safeClientMessage(error);
      request.log.info({ ocpi_status: OCPI_STATUS.invalidParameters, peer_request_id: request.id, reason: message }, 'OCPI request refused');
      const status = error.statusCode === 413 || error.statusCode === 415 ? error.statusCode : 400;
      return sendOcpi(reply, deps.clock, status, undefined, OCPI_STATUS.invalidParameters, message);
    }
    if (isDatabaseUnavailable(error)) {
      // The peer retries (OCPI: a 5xx is temporary); nothing was stored.
      request.log.warn({ peer_request_id: request.id, reason: error.message }, 'OCPI request answered 503: the database is unavailable');
      void reply.header('Retry-After', '2');
      return sendOcpi(reply, deps.clock, 503, undefined, OCPI_STATUS.serverError, 'Temporarily unavailable; retry shortly');
    }
    request.log.error({ err: error, peer_request_id: request.id }, 'OCPI request failed');
    return sendOcpi(reply, deps.clock, 500, undefined, OCPI_STATUS.serverError, 'Internal error; quote the X-Request-ID to the operator');
  });

  app.setNotFoundHandler((request, reply) =>
    sendOcpi(reply, deps.clock, 404, undefined, OCPI_STATUS.clientError, `No OCPI endpoint at ${request.method} ${request.url.split('?')[0]}`),
  );
}

function safeClientMessage(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Request bodies must be application/json';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body is too large';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The request body must not be empty';
    default:
      return 'The request body is not valid JSON';
  }
}

export function sendOcpi(
  reply: FastifyReply,
  clock: Clock,
  httpStatus: number,
  data: unknown,
  statusCode: number = OCPI_STATUS.success,
  message?: string,
): FastifyReply {
  return reply
    .code(httpStatus)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(envelope(data, clock.now(), statusCode, message)));
}

/** The connection of an authenticated OCPI request. */
export function connectionOf(request: FastifyRequest): Connection {
  const connection = request.ocpiConnection;
  if (!connection) throw new OcpiError(401, OCPI_STATUS.clientError, 'Unknown credentials token');
  return connection;
}
