// Configuration modules (version_information_endpoint.asciidoc,
// credentials.asciidoc): our versions, the 2.2.1 endpoints, and the
// credentials endpoint an eMSP registers, updates and unregisters with.
import type { Endpoint } from '../../ocpi-protocol/versions.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Peers } from './peers.ts';
import { authOf, BASE_PATH, type CpoApp, ok } from './server.ts';

export interface ConfigurationRoutesDeps {
  clock: Clock;
  peers: Peers;
  /** Our public base URL (scheme, host, port), known once listening. */
  baseUrl: () => string;
}

/** Our 2.2.1 endpoints: the Sender side of the CPO's data, the Receiver side of commands and tokens. */
export function ourEndpoints(versionUrl: string): Endpoint[] {
  const endpoint = (identifier: string, role: Endpoint['role']): Endpoint => ({ identifier, role, url: `${versionUrl}/${identifier}` });
  return [
    endpoint('credentials', 'SENDER'),
    endpoint('locations', 'SENDER'),
    endpoint('tariffs', 'SENDER'),
    endpoint('sessions', 'SENDER'),
    endpoint('cdrs', 'SENDER'),
    endpoint('commands', 'RECEIVER'),
    endpoint('tokens', 'RECEIVER'),
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

    app.get(`${BASE_PATH}/${version}`, async (_request, reply) => ok(reply, clock, wire.versionDetails(version, ourEndpoints(versionUrl()))));

    app.get(credentials, async (request, reply) => ok(reply, clock, wire.credentials(peers.current(authOf(request)))));

    app.post(credentials, async (request, reply) => ok(reply, clock, wire.credentials(await peers.register(authOf(request), request.body))));

    app.put(credentials, async (request, reply) => ok(reply, clock, wire.credentials(await peers.update(authOf(request), request.body))));

    app.delete(credentials, async (request, reply) => {
      await peers.unregister(authOf(request));
      return ok(reply, clock);
    });
  };
}
