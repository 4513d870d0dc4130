// Configuration modules (version_information_endpoint.asciidoc,
// credentials.asciidoc, mod_hub_client_info.asciidoc): our versions, the
// endpoints of the version we speak, the credentials endpoint an eMSP
// registers, updates and unregisters with, and a hub's ClientInfo list.
import { pageHeaders, parsePageQuery } from '../../ocpi-protocol/transport.ts';
import type { Endpoint } from '../../ocpi-protocol/versions.ts';
import type { Clock } from '../../platform/clock.ts';
import { pageOfObjects } from './network.ts';
import type { Peers } from './peers.ts';
import { authOf, BASE_PATH, type CpoApp, ok } from './server.ts';
import type { NetworkTopology } from './topology.ts';

export interface ConfigurationRoutesDeps {
  clock: Clock;
  peers: Peers;
  /** Our public base URL (scheme, host, port), known once listening. */
  baseUrl: () => string;
  /** A platform's parties, or a hub in front of them (its ClientInfo list). */
  topology: NetworkTopology;
}

/** Our endpoints: the Sender side of the CPO's data, the Receiver side of commands and tokens; a hub's Sender side of hubclientinfo. */
export function ourEndpoints(versionUrl: string, hub = false): Endpoint[] {
  const endpoint = (identifier: string, role: Endpoint['role']): Endpoint => ({ identifier, role, url: `${versionUrl}/${identifier}` });
  return [
    endpoint('credentials', 'SENDER'),
    endpoint('locations', 'SENDER'),
    endpoint('tariffs', 'SENDER'),
    endpoint('sessions', 'SENDER'),
    endpoint('cdrs', 'SENDER'),
    endpoint('commands', 'RECEIVER'),
    endpoint('tokens', 'RECEIVER'),
    ...(hub ? [endpoint('hubclientinfo', 'SENDER')] : []),
  ];
}

export function configurationRoutes(deps: ConfigurationRoutesDeps) {
  const { clock, peers } = deps;
  // The one version the network speaks (its personality): its shapes are the wire's.
  const { wire } = peers;
  const version = wire.version;
  const versionUrl = () => `${deps.baseUrl()}${BASE_PATH}/${version}`;
  const credentials = `${BASE_PATH}/${version}/credentials`;

  return (app: CpoApp) => {
    app.get(`${BASE_PATH}/versions`, async (_request, reply) => ok(reply, clock, [{ version, url: versionUrl() }]));

    app.get(`${BASE_PATH}/${version}`, async (_request, reply) =>
      ok(reply, clock, wire.versionDetails(version, ourEndpoints(versionUrl(), deps.topology.hub !== undefined))),
    );

    // A hub's ClientInfo list (mod_hub_client_info, Sender interface), paginated, filtered on last_updated.
    if (deps.topology.hub) {
      app.get(`${BASE_PATH}/${version}/hubclientinfo`, async (request, reply) => {
        const page = parsePageQuery(request.query as Record<string, unknown>, 100);
        const { items, total } = pageOfObjects(deps.topology.clientInfos(), page);
        void reply.headers(pageHeaders(`${versionUrl()}/hubclientinfo`, page, items.length, total));
        return ok(reply, clock, items);
      });
    }

    app.get(credentials, async (request, reply) => ok(reply, clock, wire.credentials(peers.current(authOf(request)))));

    app.post(credentials, async (request, reply) => ok(reply, clock, wire.credentials(await peers.register(authOf(request), request.body))));

    app.put(credentials, async (request, reply) => ok(reply, clock, wire.credentials(await peers.update(authOf(request), request.body))));

    app.delete(credentials, async (request, reply) => {
      await peers.unregister(authOf(request));
      return ok(reply, clock);
    });
  };
}
