// The OCPI 2.1.1 interface CPOs that speak 2.1.1 call, under /ocpi/2.1.1:
// versions and credentials, the Receiver interfaces (locations, tariffs,
// sessions, cdrs: PUT, PATCH, POST, DELETE, and GET of what the CPO pushed,
// answered in 2.1.1), command results and our Tokens sender. Every body is
// converted at this edge by the 2.1.1 adapter (src/ocpi-protocol/v2_1_1/) and
// handed to the same receivers as 2.2.1's; answers go out in 2.1.1's shape.
// 2.1.1 has no message routing: these routes carry no routing headers (the
// edge leaves them out for routes marked ocpiVersion 2.1.1). Like every
// version's routes, they take functional requests only from connections that
// speak 2.1.1 (routes.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Cdr } from '../../ocpi-protocol/cdrs.ts';
import type { OcpiConnector, OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Session } from '../../ocpi-protocol/sessions.ts';
import { invalidParameters, OCPI_STATUS, type PartyRef, pageHeaders, parsePageQuery } from '../../ocpi-protocol/transport.ts';
import { cdrTo211, connectorTo211, evseTo211, locationTo211, sessionTo211, tariffTo211 } from '../../ocpi-protocol/v2_1_1/cpo-objects.ts';
import {
  cdrFrom211,
  commandResultFrom211,
  connectorFrom211Body,
  connectorFrom211Put,
  evseFrom211,
  evseFrom211Body,
  locationFrom211,
  locationPatchFrom211,
  OCPI_2_1_1,
  sessionFrom211,
  sessionPatchFrom211,
  tariffFrom211,
} from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import { authorizationInfoTo211, tokenTo211 } from '../../ocpi-protocol/v2_1_1/to-peer.ts';
import type { OcpiParseResult } from '../../ocpi-protocol/validate.ts';
import { linkCdrToSession211 } from './cdr-session-v2_1_1.ts';
import { connectionOf, sendOcpi, type TokenAccess } from './http.ts';
import { describe, OCPI_VERSION } from './peer-versions.ts';
import type { Connection } from './repository.ts';
import type { OcpiRoutesDeps } from './routes.ts';

type Params = Record<string, string>;
const V = `/${OCPI_2_1_1}`;
const registered = { ocpiVersion: OCPI_2_1_1 };
const registration = { ocpiAccess: 'registration' as TokenAccess, ocpiVersion: OCPI_2_1_1 };
const partyOf = (p: Params): PartyRef => ({ country_code: p.country_code as string, party_id: p.party_id as string });

/** The converted object, or the 2.1.1 object's faults as an OCPI 2001 (HTTP 200). */
function converted<T>(result: OcpiParseResult<T>, what: string): T {
  if (!result.ok) throw invalidParameters(`${what}: ${describe(result.errors)}`);
  return result.value;
}

/** The party a 2.1.1 CDR is of: the connection's CPO party (2.1.1 credentials name exactly one party; a CDR names none). */
function cpoPartyOf(connection: Connection): PartyRef {
  const role = connection.roles.find((r) => r.role === 'CPO') ?? connection.roles[0];
  if (!role) throw invalidParameters('this connection holds no CPO party');
  return { country_code: role.country_code.toUpperCase(), party_id: role.party_id.toUpperCase() };
}

/**
 * 2.1.1's Token types are RFID and OTHER; our users' tokens go to 2.1.1 peers as OTHER (to-peer.ts) and are APP_USER
 * tokens here. A real-time authorization without a type is for an RFID token (2.1.1's default).
 */
const tokenTypeFrom211 = (type: unknown) => (type === 'OTHER' ? 'APP_USER' : typeof type === 'string' ? type : 'RFID');

export function registerRoutes211(app: FastifyInstance, deps: OcpiRoutesDeps): void {
  const { clock, connections, receivers } = deps;
  const ok = (reply: Parameters<typeof sendOcpi>[0], data?: unknown) => sendOcpi(reply, clock, 200, data);
  const stored = (reply: Parameters<typeof sendOcpi>[0], created: boolean, message?: string) =>
    sendOcpi(reply, clock, created ? 201 : 200, undefined, OCPI_STATUS.success, message);
  const call = (request: FastifyRequest) => ({ rawTokenUsed: request.ocpiRawToken === true, version: OCPI_2_1_1 });
  const us = connections.ourParty();

  // Versions and credentials
  app.get(V, { config: registration }, async (_request, reply) => ok(reply, connections.versionDetails(OCPI_2_1_1)));
  app.get(`${V}/credentials`, { config: registration }, async (request, reply) =>
    ok(reply, connections.ourCredentials(request.ocpiToken as string, OCPI_2_1_1)),
  );
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

  // Locations receiver: the same paths as 2.2.1; the body of each level converted
  const locationPaths = [
    `${V}/locations/:country_code/:party_id/:location_id`,
    `${V}/locations/:country_code/:party_id/:location_id/:evse_uid`,
    `${V}/locations/:country_code/:party_id/:location_id/:evse_uid/:connector_id`,
  ];
  for (const path of locationPaths) {
    app.get(path, { config: registered }, async (request, reply) => {
      const p = request.params as Params;
      const found = await receivers.getLocation(connectionOf(request), partyOf(p), p.location_id as string, p.evse_uid, p.connector_id);
      const shaped = p.connector_id ? connectorTo211(found as OcpiConnector) : p.evse_uid ? evseTo211(found as OcpiEvse) : locationTo211(found as OcpiLocation);
      return ok(reply, shaped);
    });
    app.put(path, { config: registered }, async (request, reply) => {
      const p = request.params as Params;
      const party = partyOf(p);
      const body = p.connector_id
        ? converted(connectorFrom211Put(request.body), 'Connector')
        : p.evse_uid
          ? converted(evseFrom211(request.body), 'EVSE')
          : converted(locationFrom211(request.body, party), 'Location');
      const outcome = await receivers.putLocation(connectionOf(request), party, p.location_id as string, p.evse_uid, p.connector_id, body);
      return stored(reply, outcome.created, outcome.message);
    });
    app.patch(path, { config: registered }, async (request, reply) => {
      const p = request.params as Params;
      const body = p.connector_id ? connectorFrom211Body(request.body) : p.evse_uid ? evseFrom211Body(request.body) : locationPatchFrom211(request.body);
      await receivers.patchLocation(connectionOf(request), partyOf(p), p.location_id as string, p.evse_uid, p.connector_id, body);
      return ok(reply);
    });
  }

  // Tariffs receiver
  const tariffPath = `${V}/tariffs/:country_code/:party_id/:tariff_id`;
  app.get(tariffPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    return ok(reply, tariffTo211((await receivers.getTariff(connectionOf(request), partyOf(p), p.tariff_id as string)) as OcpiTariff));
  });
  app.put(tariffPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    const body = converted(tariffFrom211(request.body, partyOf(p)), 'Tariff');
    return stored(reply, await receivers.putTariff(connectionOf(request), partyOf(p), p.tariff_id as string, body));
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
    const connection = connectionOf(request);
    const session = (await receivers.getSession(connection, partyOf(p), p.session_id as string)) as Session;
    // 2.1.1 carries the Location in the Session: ours as the CPO pushed it (404 when it never sent that Location).
    const location = (await receivers.getLocation(connection, partyOf(p), session.location_id)) as OcpiLocation;
    return ok(reply, sessionTo211(session, location));
  });
  app.put(sessionPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    const body = converted(sessionFrom211(request.body, partyOf(p), us), 'Session');
    return stored(reply, await receivers.putSession(connectionOf(request), partyOf(p), p.session_id as string, body));
  });
  app.patch(sessionPath, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    await receivers.patchSession(connectionOf(request), partyOf(p), p.session_id as string, sessionPatchFrom211(request.body, us));
    return ok(reply);
  });

  // CDRs receiver
  app.post(`${V}/cdrs`, { config: registered }, async (request, reply) => {
    const connection = connectionOf(request);
    const body = converted(cdrFrom211(request.body, cpoPartyOf(connection), us), 'CDR');
    const { location, created } = await receivers.postCdr(connection, await linkCdrToSession211(deps.db, connection.id, body));
    // Where the CDR can be read in 2.1.1 (the receiver names its 2.2.1 URL).
    void reply.header('Location', location.replace(`/${OCPI_VERSION}/cdrs/`, `${V}/cdrs/`));
    return stored(reply, created);
  });
  app.get(`${V}/cdrs/:country_code/:party_id/:cdr_id`, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    const connection = connectionOf(request);
    const cdr = (await receivers.getCdr(connection, partyOf(p), p.cdr_id as string)) as Cdr;
    const location = (await receivers.getLocation(connection, partyOf(p), cdr.cdr_location.id)) as OcpiLocation;
    return ok(reply, cdrTo211(cdr, location));
  });

  // Results of our commands (a 2.1.1 CommandResponse), at the response_url we sent
  app.post(`${V}/commands/:type/:command_id/:secret`, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    const result = converted(commandResultFrom211(request.body), 'CommandResponse');
    await receivers.commandResult(connectionOf(request), p.type as string, p.command_id as string, p.secret as string, result);
    return ok(reply);
  });

  // Tokens sender: the list, and real-time authorization
  app.get(`${V}/tokens`, { config: registered }, async (request, reply) => {
    const page = parsePageQuery(request.query as Record<string, unknown>, deps.pageLimit);
    const { total, tokens } = await deps.tokens.list(page);
    void reply.headers(pageHeaders(`${deps.baseUrl}${V}/tokens`, page, tokens.length, total));
    return ok(reply, tokens.map(tokenTo211));
  });
  app.post(`${V}/tokens/:token_uid/authorize`, { config: registered }, async (request, reply) => {
    const p = request.params as Params;
    const type = tokenTypeFrom211((request.query as Record<string, unknown>).type);
    return ok(reply, authorizationInfoTo211(await deps.tokens.authorize(p.token_uid as string, type, request.body)));
  });
}
