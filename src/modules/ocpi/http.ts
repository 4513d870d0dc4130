// The OCPI edge of the service: every answer is the OCPI envelope, every
// request is authenticated by a credentials token that names a connection,
// errors carry OCPI status codes, and request/correlation ids are echoed.
// Requests to functional modules may name their party in the OCPI-from
// routing headers (it must be one the connection holds: a party of its
// credentials or, over a hub, one the hub reports, and then the object must be
// that party's) and their addressee in the OCPI-to headers (it must be us);
// our answers to them carry the routing headers back (from: us, to: the
// requesting party). A peer's token is taken Base64-encoded or as it is.
import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { envelope, HEADER, invalidParameters, OCPI_STATUS, OcpiError, type PartyRef, routingHeaders, tokenCandidates } from '../../ocpi-protocol/transport.ts';
import { isOcpiRecording, recordOcpiExchange, routingHeadersOf } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import { isDatabaseUnavailable } from '../../platform/db.ts';
import { setRateLimitHeaders } from '../../platform/http/rate-limit.ts';
import type { RateLimiter } from '../../platform/rate-limit/limiter.ts';
import { isHub } from './connections-context.ts';
import type { Connection } from './repository.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The connection whose credentials token authenticated this OCPI request. */
    ocpiConnection?: Connection;
    /** The credentials token the peer presented (decoded). */
    ocpiToken?: string;
    /** The peer sent its token unencoded (an OCPI 2.1.1/2.2 habit). */
    ocpiRawToken?: boolean;
    /** The party of the connection a functional module's request comes from, when its OCPI-from headers name one. */
    ocpiParty?: PartyRef;
    /** The request's token is allowed on its module (recordings: whether its answer must carry routing headers). */
    ocpiAuthenticated?: boolean;
    /** The request reached the OCPI layer: authenticated, its body read as JSON, a route matched (recordings). */
    ocpiReached?: boolean;
  }
}

export interface OcpiAuth {
  /** The connection a token belongs to (cached briefly; `fresh`: read from the database whatever the cache holds). */
  connectionForToken(token: string, options?: { fresh?: boolean }): Promise<Connection | undefined>;
  /** Records how the peer presents its token ('raw' or 'base64') when it is not what the connection last recorded. */
  recordTokenForm(connection: Connection, form: 'raw' | 'base64'): Promise<void>;
  /** Whether a party is one the connection speaks for (a hub: one of the parties its ClientInfo reports). */
  holdsParty(connection: Connection, party: PartyRef): Promise<boolean>;
}

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Which routes a TOKEN_A (before registration) may use. */
export type TokenAccess = 'registration' | 'registered';

/** What a route's config may say: which tokens it takes, the OCPI version it is of (default 2.2.1), and whether it is a configuration module. */
export interface OcpiRouteConfig {
  ocpiAccess?: TokenAccess;
  ocpiVersion?: string;
  /** A configuration module that takes a registered token (hubclientinfo): not routed, no routing headers. */
  ocpiConfiguration?: boolean;
}

/** The OCPI part of the config of the route a request matched (none for a request no route matched). */
export const routeConfigOf = (request: FastifyRequest): OcpiRouteConfig | undefined => request.routeOptions.config as OcpiRouteConfig | undefined;

const COUNTRY_CODE = /^[A-Za-z]{2}$/;
const PARTY_ID = /^[A-Za-z0-9]{3}$/;

/** The party a request's OCPI-from headers name, when both are there and well-formed. */
function fromHeaders(request: FastifyRequest): PartyRef | undefined {
  const cc = request.headers[HEADER.fromCountryCode];
  const pid = request.headers[HEADER.fromPartyId];
  return typeof cc === 'string' && typeof pid === 'string' && COUNTRY_CODE.test(cc) && PARTY_ID.test(pid)
    ? { country_code: cc.toUpperCase(), party_id: pid.toUpperCase() }
    : undefined;
}

/**
 * The requesting party of a functional module's request: the one its
 * OCPI-from headers name, which must be a party the connection holds (2001
 * otherwise: the request names a sender this token does not speak for); none
 * when the headers are absent (a peer-to-peer platform may leave them out).
 */
async function requestingParty(request: FastifyRequest, connection: Connection, auth: OcpiAuth): Promise<PartyRef | undefined> {
  const present = request.headers[HEADER.fromCountryCode] !== undefined || request.headers[HEADER.fromPartyId] !== undefined;
  if (!present) return undefined;
  const party = fromHeaders(request);
  if (!party) throw invalidParameters('OCPI-from-country-code and OCPI-from-party-id must both name a party (2 letters, 3 letters or digits)');
  const held = connection.roles.some((r) => r.country_code.toUpperCase() === party.country_code && r.party_id.toUpperCase() === party.party_id);
  // A hub forwards the requests of the parties behind it with their OCPI-from (transport_and_format, "Party to Party
  // via Hub"): those are the parties its ClientInfo reported, not its credentials roles (only HUB).
  if (!held && !(isHub(connection) && (await auth.holdsParty(connection, party)))) {
    throw invalidParameters(`OCPI-from names ${party.country_code}*${party.party_id}, a party this connection does not hold`);
  }
  return party;
}

/**
 * A request a hub forwards names its original party in OCPI-from, and we route it by that party, not the hub's:
 * a client-owned object's party (the URL's country_code/party_id) must be that party. The hub's own party in
 * OCPI-from (a Broadcast Push it relays) leaves the URL's party to decide.
 */
function checkForwardedParty(request: FastifyRequest, connection: Connection): void {
  const from = request.ocpiParty;
  if (!from || !isHub(connection)) return;
  if (connection.roles.some((r) => r.role === 'HUB' && r.country_code.toUpperCase() === from.country_code && r.party_id.toUpperCase() === from.party_id))
    return;
  const params = request.params as { country_code?: unknown; party_id?: unknown } | undefined;
  const cc = typeof params?.country_code === 'string' ? params.country_code.toUpperCase() : undefined;
  const pid = typeof params?.party_id === 'string' ? params.party_id.toUpperCase() : undefined;
  if (cc !== undefined && pid !== undefined && (cc !== from.country_code || pid !== from.party_id)) {
    throw invalidParameters(`the hub forwards this for ${from.country_code}*${from.party_id} (OCPI-from), but the object is of ${cc}*${pid}`);
  }
}

/**
 * A functional module's request addressed by its OCPI-to headers (transport_and_format, Message Routing) must be
 * addressed to us. We are one eMSP party, not a hub nor a platform hosting others: a message for another party
 * cannot be routed on and is refused (HTTP 200, 2001: the OCPI-to headers are an invalid parameter; 4001 "unknown
 * receiver" is a hub's code). Absent OCPI-to headers are accepted: a peer-to-peer request or an open routing
 * request (to whoever receives it). Party ids are CiStrings: compared without regard to case.
 */
function checkAddressedToUs(request: FastifyRequest, us: PartyRef): void {
  const cc = request.headers[HEADER.toCountryCode];
  const pid = request.headers[HEADER.toPartyId];
  if (cc === undefined && pid === undefined) return;
  if (typeof cc !== 'string' || typeof pid !== 'string' || !COUNTRY_CODE.test(cc) || !PARTY_ID.test(pid)) {
    throw invalidParameters('OCPI-to-country-code and OCPI-to-party-id must both name a party (2 letters, 3 letters or digits)');
  }
  if (cc.toUpperCase() !== us.country_code.toUpperCase() || pid.toUpperCase() !== us.party_id.toUpperCase()) {
    throw invalidParameters(
      `OCPI-to names ${cc.toUpperCase()}*${pid.toUpperCase()}, not this eMSP (${us.country_code}*${us.party_id}); we route no messages to other parties`,
    );
  }
}

/** Whether a request is for a functional module (routed): a known route that is not versions or credentials. */
function isFunctionalRoute(request: FastifyRequest): boolean {
  const config = routeConfigOf(request);
  // OCPI 2.1.1 has no message routing: its routes (routes-v2_1_1.ts) answer without routing headers.
  if (config?.ocpiVersion === '2.1.1' || config?.ocpiConfiguration) return false;
  return request.routeOptions.url !== undefined && (config?.ocpiAccess ?? 'registered') === 'registered';
}

/**
 * The party our answer goes to (its OCPI-to headers): the requesting party as
 * its OCPI-from headers name it (the mirror the spec's "Direct response"
 * asks for), else the connection's party of the URL, else its first CPO party.
 */
function answerTo(request: FastifyRequest): PartyRef | undefined {
  const named = request.ocpiParty ?? fromHeaders(request);
  if (named) return named;
  const roles = request.ocpiConnection?.roles ?? [];
  const params = request.params as { country_code?: unknown; party_id?: unknown } | undefined;
  const cc = typeof params?.country_code === 'string' ? params.country_code.toUpperCase() : undefined;
  const pid = typeof params?.party_id === 'string' ? params.party_id.toUpperCase() : undefined;
  const role = roles.find((r) => r.country_code.toUpperCase() === cc && r.party_id.toUpperCase() === pid) ?? roles.find((r) => r.role === 'CPO') ?? roles[0];
  return role ? { country_code: role.country_code.toUpperCase(), party_id: role.party_id.toUpperCase() } : undefined;
}

/**
 * Installs authentication, the envelope error handler and the 404 handler on
 * an encapsulated Fastify context (the /ocpi prefix).
 */
export function installOcpiEdge(
  app: FastifyInstance,
  deps: { auth: OcpiAuth; clock: Clock; us: PartyRef; rateLimit?: { limiter: RateLimiter; perMinute: number } },
): void {
  app.decorateRequest('ocpiConnection', undefined);
  app.decorateRequest('ocpiToken', undefined);
  app.decorateRequest('ocpiRawToken', false);
  app.decorateRequest('ocpiParty', undefined);
  app.decorateRequest('ocpiAuthenticated', false);
  app.decorateRequest('ocpiReached', false);

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
      // The token as sent: OCPI 2.1.1 peers, and many 2.2 peers, do not Base64-encode it. Both forms are accepted from
      // every connection (our tokens are 43 characters, never a clean Base64 round trip, so the two cannot collide).
      connection = await deps.auth.connectionForToken(candidates.raw);
      token = candidates.raw;
      raw = true;
    }
    if (!connection || token === undefined) throw new OcpiError(401, OCPI_STATUS.clientError, 'Unknown credentials token');
    const form = raw ? 'raw' : 'base64';
    if (connection.incoming_token_form !== form) await deps.auth.recordTokenForm(connection, form);
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
    const access = routeConfigOf(request)?.ocpiAccess ?? 'registered';
    if (access === 'registered' && connection.incoming_token_kind !== 'C') {
      // The cache may predate a handshake that completed a moment ago (in this process or another, whose
      // announcement is on its way): the database decides before the peer is refused.
      const fresh = await deps.auth.connectionForToken(token, { fresh: true });
      if (fresh?.incoming_token_kind !== 'C') {
        throw new OcpiError(401, OCPI_STATUS.clientError, 'This token only allows the versions and credentials modules; register first');
      }
      connection = fresh;
      request.ocpiConnection = fresh;
    }
    request.ocpiAuthenticated = true;
    // Functional modules are routed (configuration modules, hubclientinfo among them, are not: their headers are not read).
    if (access === 'registered' && !routeConfigOf(request)?.ocpiConfiguration) {
      const party = await requestingParty(request, connection, deps.auth);
      if (party) request.ocpiParty = party;
      checkAddressedToUs(request, deps.us);
    }
  });

  // After the body was read as JSON and the request passed authentication: it reached the OCPI layer (when a route matched).
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.url !== undefined) request.ocpiReached = true;
    if (request.ocpiConnection) checkForwardedParty(request, request.ocpiConnection);
  });

  // Answers of functional modules carry the routing headers: from us, to the requesting party.
  // (Versions and credentials are configuration modules: "routing headers SHALL NOT be used with these modules".)
  app.addHook('onSend', async (request, reply, payload) => {
    if (isFunctionalRoute(request)) {
      const to = answerTo(request);
      const headers = to ? routingHeaders(deps.us, to) : { 'OCPI-from-country-code': deps.us.country_code, 'OCPI-from-party-id': deps.us.party_id };
      void reply.headers(headers);
    }
    if (isOcpiRecording()) recordAnswer(request, reply, payload);
    return payload;
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof OcpiError) {
      // Every refusal is logged (most are HTTP 200 with a 2xxx/3xxx code), except those of a bad token or of a peer
      // over its rate limit: they come in floods.
      if (error.httpStatus !== 401 && error.httpStatus !== 429) {
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

/** The OCPI module a route serves: the segment after the version (versions for the versions list and details). */
function moduleOfRoute(route: string | undefined): string | null {
  if (route === undefined) return null;
  return /\/\d+\.\d+(?:\.\d+)?\/([a-z_]+)/.exec(route)?.[1] ?? 'versions';
}

/** The OCPI version of a route when it is not 2.2.1 (2.2, 2.1.1: routes carry it in their config). */
const versionOfRoute = (request: FastifyRequest) => {
  const version = routeConfigOf(request)?.ocpiVersion;
  return version === '2.2.1' ? undefined : version;
};

/** Our answer, for the CI check of routing headers and status codes (only with recording on). */
function recordAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
  const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
  const code = /"status_code":(\d+)/.exec(text)?.[1];
  const route = request.routeOptions.url;
  recordOcpiExchange({
    direction: 'answer',
    sender: 'emsp',
    method: request.method,
    path: route ?? request.url.split('?')[0] ?? '',
    module: moduleOfRoute(route),
    status: reply.statusCode,
    ocpi_status: code === undefined ? null : Number(code),
    routing: routingHeadersOf(reply.getHeaders()),
    authenticated: request.ocpiAuthenticated === true,
    reached_ocpi_layer: request.ocpiReached === true,
    ...(versionOfRoute(request) ? { version: versionOfRoute(request) } : {}),
  });
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

/**
 * A request under /ocpi that failed before routing (a URL that is not validly percent-encoded, so no OCPI resource is
 * addressed): HTTP `status` (400) with the OCPI envelope (2001), request and correlation ids echoed as on every answer.
 */
export function ocpiPreRoutingAnswer(reply: FastifyReply, request: FastifyRequest, clock: Clock, status: number, message: string): FastifyReply {
  const correlation = request.headers[HEADER.correlationId];
  void reply.header('X-Correlation-ID', typeof correlation === 'string' && CORRELATION_ID.test(correlation) ? correlation : randomUUID());
  void reply.header('X-Request-ID', request.id);
  return sendOcpi(reply, clock, status, undefined, OCPI_STATUS.invalidParameters, message);
}

/** The connection of an authenticated OCPI request. */
export function connectionOf(request: FastifyRequest): Connection {
  const connection = request.ocpiConnection;
  if (!connection) throw new OcpiError(401, OCPI_STATUS.clientError, 'Unknown credentials token');
  return connection;
}
