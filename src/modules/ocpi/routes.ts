// The OCPI interface CPOs call, under /ocpi: versions, and per version we
// speak (2.2.1, 2.2, 2.1.1) credentials, the Receiver interfaces (locations,
// tariffs, sessions, cdrs), hub client info, command results, and our Tokens
// sender interface. Handlers parse, call the module, and answer the envelope.
// 2.2.1 and 2.2 share these routes (registerRoutes22x), each under its own
// prefix, with 2.2's few differences mapped by its adapter
// (src/ocpi-protocol/v2_2/adapter.ts); 2.1.1 has routes of its own
// (routes-v2_1_1.ts). Every functional request is in its connection's version.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OCPI_STATUS, OcpiError, pageHeaders, parsePageQuery } from '../../ocpi-protocol/transport.ts';
import { OCPI_2_2, withCdrTokenFrom22, withCdrTokenTo22 } from '../../ocpi-protocol/v2_2/adapter.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import type { RateLimiter } from '../../platform/rate-limit/limiter.ts';
import { installOcpiBodyParsing } from './body-parsing.ts';
import type { Connections } from './connections.ts';
import { connectionOf, installOcpiEdge, routeConfigOf, sendOcpi, type TokenAccess } from './http.ts';
import type { HubClients } from './hub-clients.ts';
import { OCPI_VERSION, versionOf } from './peer-versions.ts';
import type { Receivers } from './receivers.ts';
import { registerRoutes211 } from './routes-v2_1_1.ts';
import type { Tokens } from './tokens.ts';

export interface OcpiRoutesDeps {
  /** For what the 2.1.1 edge looks up before the receivers (the Session a 2.1.1 CDR belongs to). */
  db: Database;
  clock: Clock;
  connections: Connections;
  receivers: Receivers;
  tokens: Tokens;
  /** The ClientInfo a hub pushes (mod_hub_client_info, we are a Receiver). */
  hubClients: HubClients;
  pageLimit: number;
  /** Our OCPI base URL (…/ocpi), for Link headers. */
  baseUrl: string;
  /** Requests per minute per connection (0 = unlimited), counted across processes. */
  rateLimit?: { limiter: RateLimiter; perMinute: number };
}

type Params = Record<string, string>;
const partyOf = (p: Params) => ({ country_code: p.country_code as string, party_id: p.party_id as string });

/**
 * A functional request on the endpoints of one version from a connection that settled on another is refused:
 * everything with a connection is in its negotiated version (its objects would be read in the wrong shape).
 */
function requireConnectionVersion(request: FastifyRequest): void {
  const config = routeConfigOf(request);
  if (request.routeOptions.url === undefined || config?.ocpiAccess === 'registration') return;
  const version = versionOf(connectionOf(request));
  if (version !== (config?.ocpiVersion ?? OCPI_VERSION)) {
    throw new OcpiError(404, OCPI_STATUS.clientError, `This connection speaks OCPI ${version}: use the endpoints of that version`);
  }
}

export function ocpiRoutes(deps: OcpiRoutesDeps) {
  const { clock, connections } = deps;
  return async (app: FastifyInstance) => {
    installOcpiEdge(app, {
      auth: connections,
      clock,
      us: connections.ourParty(),
      ...(deps.rateLimit ? { rateLimit: deps.rateLimit } : {}),
    });
    // OCPI peers send JSON, labelled application/json, text/plain, something else or nothing: all of it is read as JSON.
    installOcpiBodyParsing(app);
    app.addHook('preHandler', async (request) => requireConnectionVersion(request));
    app.get('/versions', { config: { ocpiAccess: 'registration' } }, async (_request, reply) => sendOcpi(reply, clock, 200, connections.versions()));
    registerRoutes22x(app, deps, OCPI_VERSION);
    registerRoutes22x(app, deps, OCPI_2_2);
    // The same interface in OCPI 2.1.1, through the 2.1.1 adapter
    registerRoutes211(app, deps);
  };
}

/**
 * What differs between 2.2.1 and 2.2 at this edge (src/ocpi-protocol/v2_2/adapter.ts): a 2.2 Session or CDR names its
 * token without country_code/party_id (ours are filled in), and our answers to a 2.2 peer's GET leave them out.
 */
function shapesOf(version: string, us: { country_code: string; party_id: string }) {
  const v22 = version === OCPI_2_2;
  return {
    sessionOrCdrIn: (body: unknown) => (v22 ? withCdrTokenFrom22(body, us) : body),
    sessionOrCdrOut: (object: unknown) => (v22 ? withCdrTokenTo22(object) : object),
  };
}

/** Versions details, credentials and hub client info (configuration modules) of `version`. */
function registerConfiguration(app: FastifyInstance, deps: OcpiRoutesDeps, version: string): void {
  const { clock, connections } = deps;
  const V = `/${version}`;
  const registration = { ocpiAccess: 'registration' as TokenAccess, ocpiVersion: version };
  const configuration = { ocpiVersion: version, ocpiConfiguration: true };
  const ok = (reply: FastifyReply, data?: unknown) => sendOcpi(reply, clock, 200, data);
  const call = (request: FastifyRequest) => ({ rawTokenUsed: request.ocpiRawToken === true, version });

  app.get(V, { config: registration }, async (_request, reply) => ok(reply, connections.versionDetails(version)));
  app.get(`${V}/credentials`, { config: registration }, async (request, reply) => ok(reply, connections.ourCredentials(request.ocpiToken as string, version)));
  app.post(`${V}/credentials`, { config: registration }, async (request, reply) =>
    ok(reply, await connections.register(connectionOf(request), request.body, call(request))),
  );
  app.put(`${V}/credentials`, { config: registration }, async (request, reply) =>
    ok(reply, await connections.update(connectionOf(request), request.body, call(request))),
  );
  app.delete(`${V}/credentials`, { config: registration }, async (request, reply) => {
    await connections.unregister(connectionOf(request));
    return ok(reply);
  });

  // Hub client info (Receiver): a hub pushes the connection status of the parties behind it, and may read it back.
  const clientInfoPath = `${V}/hubclientinfo/:country_code/:party_id`;
  app.get(clientInfoPath, { config: configuration }, async (request, reply) =>
    ok(reply, await deps.hubClients.get(connectionOf(request), partyOf(request.params as Params))),
  );
  app.put(clientInfoPath, { config: configuration }, async (request, reply) => {
    const created = await deps.hubClients.put(connectionOf(request), partyOf(request.params as Params), request.body);
    return sendOcpi(reply, clock, created ? 201 : 200, undefined);
  });
}

/** The 2.2.1 interface, or the same interface as OCPI 2.2 under /2.2 (its differences mapped by shapesOf). */
function registerRoutes22x(app: FastifyInstance, deps: OcpiRoutesDeps, version: string): void {
  const { clock, connections, receivers } = deps;
  const V = `/${version}`;
  const registered = { ocpiVersion: version };
  const shapes = shapesOf(version, connections.ourParty());
  const ok = (reply: FastifyReply, data?: unknown) => sendOcpi(reply, clock, 200, data);
  // status_codes: "HTTP `200 - Ok` when the object already existed and has successfully been updated. HTTP `201 - Created`
  // when the object has been newly created in the server system."
  // A Location stored without some of its EVSEs or connectors (the tolerant reader left them out) says which.
  const stored = (reply: FastifyReply, created: boolean, message?: string) =>
    sendOcpi(reply, clock, created ? 201 : 200, undefined, OCPI_STATUS.success, message);

  registerConfiguration(app, deps, version);

  // Locations receiver: {country_code}/{party_id}/{location_id}[/{evse_uid}[/{connector_id}]]
  for (const path of [':location_id', ':location_id/:evse_uid', ':location_id/:evse_uid/:connector_id']) {
    const url = `${V}/locations/:country_code/:party_id/${path}`;
    app.get(url, { config: registered }, async (request, reply) => {
      const p = request.params as Params;
      return ok(reply, await receivers.getLocation(connectionOf(request), partyOf(p), p.location_id as string, p.evse_uid, p.connector_id));
    });
    app.put(url, { config: registered }, async (request, reply) => {
      const p = request.params as Params;
      const outcome = await receivers.putLocation(connectionOf(request), partyOf(p), p.location_id as string, p.evse_uid, p.connector_id, request.body);
      return stored(reply, outcome.created, outcome.message);
    });
    app.patch(url, { config: registered }, async (request, reply) => {
      const p = request.params as Params;
      await receivers.patchLocation(connectionOf(request), partyOf(p), p.location_id as string, p.evse_uid, p.connector_id, request.body);
      return ok(reply);
    });
  }

  // Tariffs receiver
  const tariffPath = `${V}/tariffs/:country_code/:party_id/:tariff_id`;
  app.get(tariffPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    return ok(reply, await receivers.getTariff(connectionOf(request), partyOf(p), p.tariff_id as string));
  });
  app.put(tariffPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    return stored(reply, await receivers.putTariff(connectionOf(request), partyOf(p), p.tariff_id as string, request.body));
  });
  app.delete(tariffPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    await receivers.deleteTariff(connectionOf(request), partyOf(p), p.tariff_id as string);
    return ok(reply);
  });

  // Sessions receiver
  const sessionPath = `${V}/sessions/:country_code/:party_id/:session_id`;
  app.get(sessionPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    return ok(reply, shapes.sessionOrCdrOut(await receivers.getSession(connectionOf(request), partyOf(p), p.session_id as string)));
  });
  app.put(sessionPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    return stored(reply, await receivers.putSession(connectionOf(request), partyOf(p), p.session_id as string, shapes.sessionOrCdrIn(request.body)));
  });
  app.patch(sessionPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    await receivers.patchSession(connectionOf(request), partyOf(p), p.session_id as string, shapes.sessionOrCdrIn(request.body));
    return ok(reply);
  });

  // CDRs receiver
  app.post(`${V}/cdrs`, { config: registered }, async (request, reply) => {
    const { location, created } = await receivers.postCdr(connectionOf(request), shapes.sessionOrCdrIn(request.body));
    // Where the CDR can be read in this version (the receiver names its 2.2.1 URL).
    void reply.header('Location', location.replace(`/${OCPI_VERSION}/cdrs/`, `${V}/cdrs/`));
    return stored(reply, created);
  });
  app.get(`${V}/cdrs/:country_code/:party_id/:cdr_id`, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    return ok(reply, shapes.sessionOrCdrOut(await receivers.getCdr(connectionOf(request), partyOf(p), p.cdr_id as string)));
  });

  // Results of our commands, at the response_url we sent
  app.post(`${V}/commands/:type/:command_id/:secret`, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    await receivers.commandResult(connectionOf(request), p.type as string, p.command_id as string, p.secret as string, request.body);
    return ok(reply);
  });

  // Tokens sender: the list, and real-time authorization (a Token is the same in 2.2 and 2.2.1)
  app.get(`${V}/tokens`, { config: registered }, async (request, reply) => {
    const page = parsePageQuery(request.query as Record<string, unknown>, deps.pageLimit);
    const { total, tokens } = await deps.tokens.list(page);
    void reply.headers(pageHeaders(`${deps.baseUrl}${V}/tokens`, page, tokens.length, total));
    return ok(reply, tokens);
  });
  app.post(`${V}/tokens/:token_uid/authorize`, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    const type = (request.query as Record<string, unknown>).type;
    return ok(reply, await deps.tokens.authorize(p.token_uid as string, typeof type === 'string' ? type : undefined, request.body));
  });
}
