// The sandbox CPO's HTTP server (Fastify, its own loopback port): OCPI's
// transport rules for every route. The credentials token is checked on every
// request (401 when unknown; a registration token opens only versions and
// credentials); every answer is the OCPI envelope; X-Request-ID and
// X-Correlation-ID are echoed (or made); the routing headers of a functional
// module's request are mirrored in its answer; any body is read as JSON,
// whatever its Content-Type, and garbage gets 2001, never a crash.
// Like a strict CPO platform it requires the four routing headers on every
// request to a functional module (from: a party of the registered eMSP, to:
// one of our parties, or a hub itself) and refuses them on versions,
// credentials and hubclientinfo (2001).

import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { envelope, HEADER, invalidJson, invalidParameters, OCPI_STATUS, OcpiError, type PartyRef } from '../../ocpi-protocol/transport.ts';
import type { Clock } from '../../platform/clock.ts';
import { isDatabaseUnavailable } from '../../platform/db.ts';
import { refuseBadText } from '../../platform/http/input.ts';
import type { Authenticated, Log, Peers } from './peers.ts';

export const BASE_PATH = '/ocpi/cpo';
const MAX_BODY_BYTES = 1024 * 1024;
const MESSAGE_ID = /^[\x21-\x7e]{1,255}$/;

export type CpoApp = FastifyInstance;

export interface ServerDeps {
  clock: Clock;
  peers: Peers;
  log: Log;
  tls?: { cert: string; key: string } | undefined;
  /** How long a request of the TIMEOUT scenario is held before its connection is dropped. */
  hangMs: number;
  /** Whether a request's OCPI-to headers may name this party: one of our CPO parties (or, for a hub, the hub). */
  addressable: (party: PartyRef) => boolean;
}

const authenticated = new WeakMap<FastifyRequest, Authenticated>();

/** The peer of an authenticated request (every route is behind the token check). */
export function authOf(request: FastifyRequest): Authenticated {
  const auth = authenticated.get(request);
  if (!auth) throw new OcpiError(401, OCPI_STATUS.clientError, 'unknown credentials token');
  return auth;
}

/** Versions, version details and credentials: the only modules a registration token may use. */
function isConfigurationPath(pathname: string): boolean {
  if (!pathname.startsWith(`${BASE_PATH}/`)) return false;
  const rest = pathname.slice(BASE_PATH.length + 1).replace(/\/+$/, '');
  return rest === 'versions' || /^[^/]+$/.test(rest) || /^[^/]+\/credentials$/.test(rest);
}

/** Configuration modules (not routed, no routing headers): versions, credentials and a hub's hubclientinfo. */
function isUnroutedPath(pathname: string): boolean {
  return isConfigurationPath(pathname) || /^[^/]+\/hubclientinfo(\/|$)/.test(pathname.slice(BASE_PATH.length + 1));
}

const ROUTING = [HEADER.fromCountryCode, HEADER.fromPartyId, HEADER.toCountryCode, HEADER.toPartyId] as const;
const samePartyAs = (cc: string, pid: string) => (p: PartyRef) => p.country_code.toUpperCase() === cc && p.party_id.toUpperCase() === pid;

/**
 * transport_and_format, Message Routing: the four routing headers "SHALL be
 * implemented for any request/response to/from a Functional Module", and
 * "SHALL NOT be used" with versions and credentials. A request to a
 * functional module must name a party of the eMSP that sent it and one of ours.
 */
function checkRouting(headers: FastifyRequest['headers'], auth: Authenticated, addressable: (party: PartyRef) => boolean, configuration: boolean): void {
  const values = ROUTING.map((name) => headers[name]);
  if (configuration) {
    if (values.some((v) => v !== undefined)) throw invalidParameters('routing headers must not be sent to versions or credentials');
    return;
  }
  const missing = ROUTING.filter((_name, i) => typeof values[i] !== 'string' || values[i] === '');
  if (missing.length > 0) throw invalidParameters(`routing headers missing: ${missing.join(', ')}`);
  const [fromCc, fromPid, toCc, toPid] = values.map((v) => String(v).toUpperCase()) as [string, string, string, string];
  if (!auth.peer.roles.some(samePartyAs(fromCc, fromPid))) throw invalidParameters(`OCPI-from names ${fromCc}*${fromPid}, not a party of this eMSP`);
  if (!addressable({ country_code: toCc, party_id: toPid })) throw invalidParameters(`OCPI-to names ${toCc}*${toPid}, not a party of this network`);
}

export interface HttpTools {
  /** Never answers this request; its connection is dropped after `hangMs` (or when the server closes). */
  holdOpen(reply: FastifyReply): void;
}

export function createServer(deps: ServerDeps, routes: (app: CpoApp, tools: HttpTools) => void) {
  const { clock, peers, log } = deps;
  const held = new Set<ServerResponse>();

  const app = Fastify({
    logger: false,
    bodyLimit: MAX_BODY_BYTES,
    return503OnClosing: true,
    forceCloseConnections: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    serverFactory: (handler) =>
      deps.tls
        ? createHttpsServer({ cert: deps.tls.cert, key: deps.tls.key }, handler as (req: IncomingMessage, res: ServerResponse) => void)
        : createHttpServer(handler as (req: IncomingMessage, res: ServerResponse) => void),
    frameworkErrors: (error, _request, reply) => {
      void (reply as unknown as FastifyReply)
        .code(400)
        .send(envelope(undefined, clock.now(), OCPI_STATUS.invalidParameters, `malformed request: ${error.message}`));
    },
  }) as unknown as CpoApp;

  // Any Content-Type is read as JSON: some peers send text/plain or none.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(invalidJson('the body is not valid JSON'), undefined);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    const requestId = request.headers[HEADER.requestId];
    const correlationId = request.headers[HEADER.correlationId];
    void reply.header('X-Request-ID', typeof requestId === 'string' && MESSAGE_ID.test(requestId) ? requestId : randomUUID());
    void reply.header('X-Correlation-ID', typeof correlationId === 'string' && MESSAGE_ID.test(correlationId) ? correlationId : randomUUID());
    const auth = await peers.authenticate(request.headers.authorization);
    const pathname = request.url.split('?')[0] ?? '';
    const restricted = auth && (auth.tokenA || auth.peer.status !== 'REGISTERED');
    if (!auth || (restricted && !isConfigurationPath(pathname))) {
      void reply.header('WWW-Authenticate', 'Token');
      throw new OcpiError(
        401,
        OCPI_STATUS.clientError,
        auth ? 'this token may only be used for versions and credentials' : 'unknown or missing credentials token',
      );
    }
    authenticated.set(request, auth);
    // An OCPI 2.1.1 network knows no routing headers (wire.ts): none are required.
    if (peers.wire.routing) checkRouting(request.headers, auth, deps.addressable, isUnroutedPath(pathname));
  });

  // Functional modules answer with the routing headers of the request, mirrored.
  app.addHook('onSend', async (request, reply, payload) => {
    if (isUnroutedPath(request.url.split('?')[0] ?? '')) return payload;
    const h = request.headers;
    const pairs: [string | string[] | undefined, string][] = [
      [h[HEADER.fromCountryCode], 'OCPI-to-country-code'],
      [h[HEADER.fromPartyId], 'OCPI-to-party-id'],
      [h[HEADER.toCountryCode], 'OCPI-from-country-code'],
      [h[HEADER.toPartyId], 'OCPI-from-party-id'],
    ];
    for (const [value, name] of pairs) if (typeof value === 'string' && /^[A-Za-z0-9]{2,3}$/.test(value)) void reply.header(name, value);
    return payload;
  });

  // NUL characters and unpaired surrogates are refused before a handler sees them (2001), as on the service's own port.
  refuseBadText(app);

  app.setErrorHandler((error: FastifyError | OcpiError, request, reply) => {
    const now = clock.now();
    if (error instanceof OcpiError) return reply.code(error.httpStatus).send(envelope(undefined, now, error.statusCode, error.message));
    if (isDatabaseUnavailable(error)) {
      void reply.header('Retry-After', '2');
      return reply.code(503).send(envelope(undefined, now, OCPI_STATUS.serverError, 'temporarily unavailable; retry shortly'));
    }
    const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 400 && status < 500) {
      const message = status === 413 ? 'the body is too large' : error.message;
      return reply.code(status).send(envelope(undefined, now, OCPI_STATUS.invalidParameters, message));
    }
    log('error', 'sandbox CPO request failed', { method: request.method, url: request.url, err: error.message, stack: error.stack });
    return reply.code(500).send(envelope(undefined, now, OCPI_STATUS.serverError, 'internal server error'));
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(envelope(undefined, clock.now(), OCPI_STATUS.clientError, `no endpoint at ${request.method} ${request.url.split('?')[0]}`)),
  );

  routes(app, {
    holdOpen(reply) {
      reply.hijack();
      const res = reply.raw;
      held.add(res);
      const timer = setTimeout(() => res.destroy(), deps.hangMs);
      timer.unref();
      res.on('close', () => {
        clearTimeout(timer);
        held.delete(res);
      });
    },
  });

  return {
    app,
    async close(): Promise<void> {
      for (const res of held) res.destroy();
      await app.close();
    },
  };
}

export type CpoServer = ReturnType<typeof createServer>;

/** Sends data in the OCPI envelope. */
export function ok(reply: FastifyReply, clock: Clock, data?: unknown, httpStatus = 200): FastifyReply {
  return reply.code(httpStatus).send(envelope(data, clock.now()));
}
