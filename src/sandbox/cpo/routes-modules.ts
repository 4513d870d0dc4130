// Functional modules: the Sender interfaces of Locations, Tariffs, Sessions
// and CDRs (paginated GETs), the Commands Receiver (START_SESSION,
// STOP_SESSION) and the Tokens Receiver (tokens the eMSP pushes).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Cdr } from '../../ocpi-protocol/cdrs.ts';
import type { OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Session } from '../../ocpi-protocol/sessions.ts';
import { TOKEN_TYPES } from '../../ocpi-protocol/tokens.ts';
import type { PageQuery, PartyRef } from '../../ocpi-protocol/transport.ts';
import {
  HEADER,
  invalidParameters,
  OCPI_STATUS,
  OcpiError,
  ocpiLayerError,
  pageHeaders,
  parsePageQuery,
  unknownObject,
} from '../../ocpi-protocol/transport.ts';
import { parseToken, parseTokenPatch } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import type { Network } from './network.ts';
import type { Quirks } from './quirks.ts';
import { authOf, BASE_PATH, type CpoApp, type HttpTools, ok } from './server.ts';
import type { Simulation } from './simulation.ts';
import type { Peer } from './store.ts';
import * as store from './store.ts';
import type { NetworkTopology } from './topology.ts';
import type { Wire } from './wire.ts';

export interface PageLimits {
  locations: number;
  tariffs: number;
  sessions: number;
  cdrs: number;
}

export interface ModuleRoutesDeps {
  db: Database;
  clock: Clock;
  network: Network;
  simulation: Simulation;
  pageLimits: PageLimits;
  commandTimeoutSeconds: number;
  baseUrl: () => string;
  /** The version the network speaks and its shapes (wire.ts): objects are served, and commands and tokens read, in it. */
  wire: Wire;
  /** Imperfect data to serve (CPO_SANDBOX_QUIRKS): what a quirky CPO would send instead of the network's clean objects. */
  quirks: Quirks;
  /** A platform of parties, or a hub in front of them: whom a command or a Token push reaches. */
  topology: NetworkTopology;
}

type Params = Record<string, string>;
const params = (request: FastifyRequest) => request.params as Params;
const query = (request: FastifyRequest) => request.query as Record<string, unknown>;

function schemaMessage(what: string, errors: { path: string; message: string }[]): string {
  return `invalid ${what}: ${errors
    .slice(0, 5)
    .map((e) => `${e.path || '/'} ${e.message}`)
    .join('; ')}`;
}

/** The eMSP party a peer speaks for (its first EMSP role): the owner of the tokens of its 2.1.1 commands. */
const emspOf = (peer: Peer) => {
  const role = peer.roles.find((r) => r.role === 'EMSP') ?? peer.roles[0];
  return role ? { country_code: role.country_code, party_id: role.party_id } : undefined;
};

/** The token type of a Tokens request: its `type` parameter (2.2.1, default RFID); 2.1.1 has none: the body's, else any of OTHER. */
function tokenType(request: FastifyRequest, wire: Wire): string {
  const bodyType = (request.body as { type?: unknown } | undefined)?.type;
  const type = query(request).type ?? (wire.version === '2.1.1' ? (bodyType ?? 'OTHER') : 'RFID');
  if (typeof type !== 'string' || !(TOKEN_TYPES as readonly string[]).includes(type)) throw invalidParameters(`type must be one of ${TOKEN_TYPES.join(', ')}`);
  return type;
}

/** The party a request's OCPI-to headers name (the server checked they name one of ours, or the hub). */
function addressee(request: FastifyRequest): PartyRef | undefined {
  const cc = request.headers[HEADER.toCountryCode];
  const pid = request.headers[HEADER.toPartyId];
  return typeof cc === 'string' && typeof pid === 'string' ? { country_code: cc.toUpperCase(), party_id: pid.toUpperCase() } : undefined;
}

/** The party a command is about: the owner of its location (START_SESSION) or of its session (STOP_SESSION); undefined when unknown. */
async function commandOwner(deps: ModuleRoutesDeps, command: string, body: unknown): Promise<PartyRef | undefined> {
  const b = (body && typeof body === 'object' ? body : {}) as { location_id?: unknown; session_id?: unknown };
  if (command === 'START_SESSION' && typeof b.location_id === 'string') return deps.network.location(b.location_id);
  if (command === 'STOP_SESSION' && typeof b.session_id === 'string') return (await store.findSession(deps.db, b.session_id))?.data as PartyRef | undefined;
  return undefined;
}

/**
 * A command goes to the party that owns what it is about (transport_and_format, Message Routing: OCPI-to names the
 * receiving party): addressed to another party of ours, it is refused (2001); a hub forwards it only to a party it
 * reports CONNECTED (4003 "connection problem" otherwise) and takes none addressed to itself.
 */
async function checkCommandAddressee(deps: ModuleRoutesDeps, request: FastifyRequest, command: string): Promise<void> {
  const to = addressee(request);
  if (!deps.wire.routing || !to) return;
  const { topology } = deps;
  if (topology.isHub(to)) throw invalidParameters(`address ${command} to the party of the location or session (OCPI-to), not to the hub`);
  const owner = await commandOwner(deps, command, request.body);
  if (owner && (owner.country_code.toUpperCase() !== to.country_code || owner.party_id.toUpperCase() !== to.party_id)) {
    throw invalidParameters(`OCPI-to names ${to.country_code}*${to.party_id}, but what ${command} is about is ${owner.country_code}*${owner.party_id}'s`);
  }
  const status = topology.status(to);
  if (status !== 'CONNECTED') throw ocpiLayerError(OCPI_STATUS.connectionProblem, `${to.country_code}*${to.party_id} is ${status} at this hub`);
}

export function moduleRoutes(deps: ModuleRoutesDeps) {
  const { db, clock, network, simulation, pageLimits, quirks, wire } = deps;
  const P = `${BASE_PATH}/${wire.version}`;
  const endpointUrl = (module: string) => `${deps.baseUrl()}${P}/${module}`;

  function sendPage<T>(reply: FastifyReply, module: string, page: PageQuery, result: { items: T[]; total: number }, shape: (item: T) => unknown) {
    void reply.headers(pageHeaders(endpointUrl(module), page, result.items.length, result.total));
    return ok(reply, clock, result.items.map(shape));
  }

  return (app: CpoApp, http: HttpTools) => {
    // Locations and Tariffs (Sender)
    app.get(`${P}/locations`, async (request, reply) => {
      const page = parsePageQuery(query(request), pageLimits.locations);
      return sendPage(reply, 'locations', page, network.locationPage(page), (l) => wire.location(quirks.location(l) as OcpiLocation));
    });

    app.get(`${P}/locations/:location_id`, async (request, reply) => {
      const location = network.location(params(request).location_id ?? '');
      if (!location) throw unknownObject('unknown location', OCPI_STATUS.unknownLocation);
      return ok(reply, clock, wire.location(quirks.location(network.view(location)) as OcpiLocation));
    });

    app.get(`${P}/locations/:location_id/:evse_uid`, async (request, reply) => {
      const ref = network.evse(params(request).location_id ?? '', params(request).evse_uid ?? '');
      if (!ref) throw unknownObject('unknown location or EVSE', OCPI_STATUS.unknownLocation);
      return ok(reply, clock, wire.evse(quirks.evse(network.viewEvse(ref.location, ref.evse)) as OcpiEvse));
    });

    app.get(`${P}/locations/:location_id/:evse_uid/:connector_id`, async (request, reply) => {
      const ref = network.evse(params(request).location_id ?? '', params(request).evse_uid ?? '');
      const connector = ref?.evse.connectors.find((c) => c.id === params(request).connector_id);
      if (!connector) throw unknownObject('unknown location, EVSE or connector', OCPI_STATUS.unknownLocation);
      return ok(reply, clock, wire.connector(connector));
    });

    app.get(`${P}/tariffs`, async (request, reply) => {
      const page = parsePageQuery(query(request), pageLimits.tariffs);
      return sendPage(reply, 'tariffs', page, network.tariffPage(page), (t) => wire.tariff(quirks.tariff(t) as OcpiTariff));
    });

    // Sessions and CDRs (Sender): the requesting eMSP's own
    app.get(`${P}/sessions`, async (request, reply) => {
      const page = parsePageQuery(query(request), pageLimits.sessions);
      // mod_sessions makes date_from required on this GET (mod_cdrs does not on its own): a strict CPO refuses without it.
      if (page.date_from === undefined) throw invalidParameters('date_from is required on GET sessions');
      return sendPage(reply, 'sessions', page, await store.sessionPage(db, authOf(request).peer.id, page), (s) =>
        wire.session(quirks.sessionOrCdr(s) as Session),
      );
    });

    app.put(`${P}/sessions/:session_id/charging_preferences`, async () => {
      throw new OcpiError(404, OCPI_STATUS.invalidParameters, 'no EVSE of this network supports charging preferences');
    });

    app.get(`${P}/cdrs`, async (request, reply) => {
      const page = parsePageQuery(query(request), pageLimits.cdrs);
      return sendPage(reply, 'cdrs', page, await store.cdrPage(db, authOf(request).peer.id, page), (c) => wire.cdr(quirks.sessionOrCdr(c) as Cdr));
    });

    // Commands (Receiver)
    app.post(`${P}/commands/:command`, async (request, reply) => {
      const { peer } = authOf(request);
      await checkCommandAddressee(deps, request, params(request).command ?? '');
      switch (params(request).command) {
        case 'START_SESSION': {
          const answer = await simulation.startSession(peer, wire.startSessionIn(request.body, emspOf(peer)));
          if (answer !== 'hang') return ok(reply, clock, wire.commandResponse(answer));
          http.holdOpen(reply);
          return reply;
        }
        case 'STOP_SESSION':
          return ok(reply, clock, wire.commandResponse(await simulation.stopSession(peer, request.body)));
        case 'RESERVE_NOW':
        case 'CANCEL_RESERVATION':
        case 'UNLOCK_CONNECTOR':
          return ok(
            reply,
            clock,
            wire.commandResponse({
              result: 'NOT_SUPPORTED',
              timeout: deps.commandTimeoutSeconds,
              message: [{ language: 'en', text: 'this network only takes START_SESSION and STOP_SESSION' }],
            }),
          );
        default:
          throw unknownObject(`unknown command ${params(request).command}`);
      }
    });

    // Tokens (Receiver)
    const tokenPath = `${P}/tokens/:country_code/:party_id/:token_uid`;
    const tokenKey = (request: FastifyRequest) => {
      const p = params(request);
      return { peerId: authOf(request).peer.id, cc: p.country_code ?? '', pid: p.party_id ?? '', uid: p.token_uid ?? '', type: tokenType(request, wire) };
    };

    app.get(tokenPath, async (request, reply) => {
      const k = tokenKey(request);
      const token = await store.findToken(db, k.peerId, k.cc, k.pid, k.uid, k.type);
      if (!token) throw unknownObject('unknown token', OCPI_STATUS.unknownToken);
      return ok(reply, clock, wire.token(token));
    });

    app.put(tokenPath, async (request, reply) => {
      const k = tokenKey(request);
      const parsed = parseToken(wire.tokenIn(request.body, { country_code: k.cc, party_id: k.pid }));
      if (!parsed.ok) throw invalidParameters(schemaMessage('Token', parsed.errors));
      const t = parsed.value;
      if (t.country_code !== k.cc || t.party_id !== k.pid || t.uid !== k.uid || t.type !== k.type) {
        throw invalidParameters('the token in the body is not the one of the URL (country_code, party_id, uid, type)');
      }
      // Which of our parties the push reached: the one it is addressed to, every CONNECTED one for a hub's Broadcast Push.
      const to = addressee(request);
      const receivedBy = to ? deps.topology.tokenReceivers(to) : network.parties.map((p) => `${p.country_code}*${p.party_id}`);
      const created = await store.upsertToken(db, k.peerId, t, receivedBy);
      return ok(reply, clock, undefined, created ? 201 : 200);
    });

    app.patch(tokenPath, async (request, reply) => {
      const k = tokenKey(request);
      const patch = parseTokenPatch(request.body);
      if (!patch.ok) throw invalidParameters(schemaMessage('Token patch', patch.errors));
      const existing = await store.findToken(db, k.peerId, k.cc, k.pid, k.uid, k.type);
      if (!existing) throw unknownObject('unknown token', OCPI_STATUS.unknownToken);
      const merged = parseToken({ ...existing, ...patch.value });
      if (!merged.ok) throw invalidParameters(schemaMessage('Token after the patch', merged.errors));
      const t = merged.value;
      if (t.country_code !== k.cc || t.party_id !== k.pid || t.uid !== k.uid || t.type !== k.type)
        throw invalidParameters('a PATCH may not change the token identity');
      await store.upsertToken(db, k.peerId, t, []);
      return ok(reply, clock);
    });
  };
}
