// The OCPI 2.2.1 interface CPOs call, under /ocpi: versions, credentials,
// the Receiver interfaces (locations, tariffs, sessions, cdrs), command
// results, and our Tokens sender interface. Handlers parse, call the module,
// and answer the envelope.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { OCPI_STATUS, pageHeaders, parsePageQuery } from '../../ocpi-protocol/transport.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import type { RateLimiter } from '../../platform/rate-limit/limiter.ts';
import { installOcpiBodyParsing } from './body-parsing.ts';
import type { Connections } from './connections.ts';
import { connectionOf, installOcpiEdge, sendOcpi, type TokenAccess } from './http.ts';
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
  pageLimit: number;
  /** Our OCPI base URL (…/ocpi), for Link headers. */
  baseUrl: string;
  /** Requests per minute per connection (0 = unlimited), counted across processes. */
  rateLimit?: { limiter: RateLimiter; perMinute: number };
}

type Params = Record<string, string>;
const registration = { ocpiAccess: 'registration' as TokenAccess };
const partyOf = (p: Params) => ({ country_code: p.country_code as string, party_id: p.party_id as string });

export function ocpiRoutes(deps: OcpiRoutesDeps) {
  const { clock, connections, receivers } = deps;
  return async (app: FastifyInstance) => {
    installOcpiEdge(app, { auth: connections, clock, us: connections.ourParty(), ...(deps.rateLimit ? { rateLimit: deps.rateLimit } : {}) });
    // OCPI peers send JSON, labelled application/json, text/plain, something else or nothing: all of it is read as JSON.
    installOcpiBodyParsing(app);
    const ok = (reply: Parameters<typeof sendOcpi>[0], data?: unknown) => sendOcpi(reply, clock, 200, data);
    // status_codes: "HTTP `200 - Ok` when the object already existed and has successfully been updated. HTTP `201 - Created`
    // when the object has been newly created in the server system."
    // A Location stored without some of its EVSEs or connectors (the tolerant reader left them out) says which.
    const stored = (reply: Parameters<typeof sendOcpi>[0], created: boolean, message?: string) =>
      sendOcpi(reply, clock, created ? 201 : 200, undefined, OCPI_STATUS.success, message);
    const rawTokenUsed = (request: FastifyRequest) => request.ocpiRawToken === true;

    // Versions and credentials (a TOKEN_A is enough here)
    app.get('/versions', { config: registration }, async (_request, reply) => ok(reply, connections.versions()));
    app.get('/2.2.1', { config: registration }, async (_request, reply) => ok(reply, connections.versionDetails()));
    app.get('/2.2.1/credentials', { config: registration }, async (request, reply) => ok(reply, connections.ourCredentials(request.ocpiToken as string)));
    app.post('/2.2.1/credentials', { config: registration }, async (request, reply) =>
      ok(reply, await connections.register(connectionOf(request), request.body, { rawTokenUsed: rawTokenUsed(request) })),
    );
    app.put('/2.2.1/credentials', { config: registration }, async (request, reply) =>
      ok(reply, await connections.update(connectionOf(request), request.body, { rawTokenUsed: rawTokenUsed(request) })),
    );
    app.delete('/2.2.1/credentials', { config: registration }, async (request, reply) => {
      await connections.unregister(connectionOf(request));
      return ok(reply);
    });

    // Locations receiver: {country_code}/{party_id}/{location_id}[/{evse_uid}[/{connector_id}]]
    const locationPaths = [
      '/2.2.1/locations/:country_code/:party_id/:location_id',
      '/2.2.1/locations/:country_code/:party_id/:location_id/:evse_uid',
      '/2.2.1/locations/:country_code/:party_id/:location_id/:evse_uid/:connector_id',
    ];
    for (const path of locationPaths) {
      app.get(path, async (request, reply) => {
        const p = request.params as Params;
        return ok(reply, await receivers.getLocation(connectionOf(request), partyOf(p), p.location_id as string, p.evse_uid, p.connector_id));
      });
      app.put(path, async (request, reply) => {
        const p = request.params as Params;
        const outcome = await receivers.putLocation(connectionOf(request), partyOf(p), p.location_id as string, p.evse_uid, p.connector_id, request.body);
        return stored(reply, outcome.created, outcome.message);
      });
      app.patch(path, async (request, reply) => {
        const p = request.params as Params;
        await receivers.patchLocation(connectionOf(request), partyOf(p), p.location_id as string, p.evse_uid, p.connector_id, request.body);
        return ok(reply);
      });
    }

    // Tariffs receiver
    const tariffPath = '/2.2.1/tariffs/:country_code/:party_id/:tariff_id';
    app.get(tariffPath, async (request, reply) => {
      const p = request.params as Params;
      return ok(reply, await receivers.getTariff(connectionOf(request), partyOf(p), p.tariff_id as string));
    });
    app.put(tariffPath, async (request, reply) => {
      const p = request.params as Params;
      return stored(reply, await receivers.putTariff(connectionOf(request), partyOf(p), p.tariff_id as string, request.body));
    });
    app.delete(tariffPath, async (request, reply) => {
      const p = request.params as Params;
      await receivers.deleteTariff(connectionOf(request), partyOf(p), p.tariff_id as string);
      return ok(reply);
    });

    // Sessions receiver
    const sessionPath = '/2.2.1/sessions/:country_code/:party_id/:session_id';
    app.get(sessionPath, async (request, reply) => {
      const p = request.params as Params;
      return ok(reply, await receivers.getSession(connectionOf(request), partyOf(p), p.session_id as string));
    });
    app.put(sessionPath, async (request, reply) => {
      const p = request.params as Params;
      return stored(reply, await receivers.putSession(connectionOf(request), partyOf(p), p.session_id as string, request.body));
    });
    app.patch(sessionPath, async (request, reply) => {
      const p = request.params as Params;
      await receivers.patchSession(connectionOf(request), partyOf(p), p.session_id as string, request.body);
      return ok(reply);
    });

    // CDRs receiver
    app.post('/2.2.1/cdrs', async (request, reply) => {
      const { location, created } = await receivers.postCdr(connectionOf(request), request.body);
      void reply.header('Location', location);
      return stored(reply, created);
    });
    app.get('/2.2.1/cdrs/:country_code/:party_id/:cdr_id', async (request, reply) => {
      const p = request.params as Params;
      return ok(reply, await receivers.getCdr(connectionOf(request), partyOf(p), p.cdr_id as string));
    });

    // Results of our commands, at the response_url we sent
    app.post('/2.2.1/commands/:type/:command_id/:secret', async (request, reply) => {
      const p = request.params as Params;
      await receivers.commandResult(connectionOf(request), p.type as string, p.command_id as string, p.secret as string, request.body);
      return ok(reply);
    });

    // Tokens sender: the list, and real-time authorization
    app.get('/2.2.1/tokens', async (request, reply) => {
      const page = parsePageQuery(request.query as Record<string, unknown>, deps.pageLimit);
      const { total, tokens } = await deps.tokens.list(page);
      void reply.headers(pageHeaders(`${deps.baseUrl}/2.2.1/tokens`, page, tokens.length, total));
      return ok(reply, tokens);
    });
    app.post('/2.2.1/tokens/:token_uid/authorize', async (request, reply) => {
      const p = request.params as Params;
      const type = (request.query as Record<string, unknown>).type;
      return ok(reply, await deps.tokens.authorize(p.token_uid as string, typeof type === 'string' ? type : undefined, request.body));
    });

    // The same interface in OCPI 2.1.1, through the 2.1.1 adapter
    registerRoutes211(app, deps);
  };
}
