// OCPI connections to CPO platforms: the credentials handshake in both
// directions (we register with a CPO that gave us a TOKEN_A, or a CPO registers
// with a TOKEN_A we issued), credential updates and unregistration, and the
// token lookup that authenticates every OCPI request.
// The factory only assembles; the rules live in files named for their part:
//   connections-context.ts  what every rule is given, and what several share (our credentials, peer auth, roles, names)
//   peer-versions.ts        a peer's versions and endpoints as a handshake reads them; the https rule for its URLs
//   credentials-to-cpo.ts   what we send to a CPO: `cpo connect`, `cpo rotate`, `cpo disconnect`
//   credentials-from-cpo.ts what a CPO sends us: registration with the TOKEN_A of `cpo invite`, updates, unregistration

import type { PartyRef } from '../../ocpi-protocol/transport.ts';
import { OCPI_2_1_1 } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import { versionDetailsTo211 } from '../../ocpi-protocol/v2_1_1/to-peer.ts';
import { listen } from '../../platform/db.ts';
import { type ConnectionsContext, type ConnectionsDeps, connectionsContext, ourCredentialsIn, ourParty, peerAuth, routingTo } from './connections-context.ts';
import { type CredentialsCall, invite, register, unregister, update } from './credentials-from-cpo.ts';
import { connect, disconnect, rotate } from './credentials-to-cpo.ts';
import { OCPI_VERSION, OUR_VERSIONS } from './peer-versions.ts';
import * as repo from './repository.ts';

export { newCredentialsToken, type OcpiIdentity } from './connections-context.ts';
export { ConnectionError, checkPeerUrl, endpointOf, fetchPeerVersion, OCPI_VERSION, type PeerVersion } from './peer-versions.ts';

/**
 * The modules we implement, with our role in each. Credentials once, as SENDER (version_information_endpoint: "for
 * the `credentials` module, the value of the role property is not relevant as this module is the same for all roles.
 * It is advised to send "SENDER" as the InterfaceRole for one's own credentials endpoint").
 */
export const OUR_ENDPOINTS: readonly { identifier: string; role: 'SENDER' | 'RECEIVER'; path: string }[] = [
  { identifier: 'credentials', role: 'SENDER', path: 'credentials' },
  { identifier: 'locations', role: 'RECEIVER', path: 'locations' },
  { identifier: 'tariffs', role: 'RECEIVER', path: 'tariffs' },
  { identifier: 'sessions', role: 'RECEIVER', path: 'sessions' },
  { identifier: 'cdrs', role: 'RECEIVER', path: 'cdrs' },
  { identifier: 'commands', role: 'SENDER', path: 'commands' },
  { identifier: 'tokens', role: 'SENDER', path: 'tokens' },
  // A hub pushes the status of the parties behind it (2.2 and 2.2.1; 2.1.1 has no hubs, versionDetailsTo211 leaves it out).
  { identifier: 'hubclientinfo', role: 'RECEIVER', path: 'hubclientinfo' },
];

/**
 * The connection whose token a peer's request carries, cached for cacheTtlMs (a safety net: every change of a
 * connection, by any process, clears the cache of every process that follows the changes, see followChanges).
 * `fresh` reads the database whatever the cache holds (before refusing a request on what the cache said).
 */
async function connectionForToken(ctx: ConnectionsContext, token: string, options: { fresh?: boolean } = {}): Promise<repo.Connection | undefined> {
  const { cache } = ctx;
  // Wall time, not the injected clock: this bounds how stale a cache entry may be, not a rule of the domain.
  const now = Date.now();
  const hit = options.fresh ? undefined : cache.get(token);
  if (hit && hit.until > now) return hit.connection;
  const connection = await repo.findConnectionByIncomingToken(ctx.db, token);
  if (cache.size > 10_000) cache.clear();
  cache.set(token, { connection, until: now + ctx.cacheTtlMs });
  return connection;
}

export function createConnections(deps: ConnectionsDeps) {
  const ctx = connectionsContext(deps);
  const { db, identity } = ctx;

  return {
    versionsUrl: ctx.versionsUrl,
    /** Our credentials in the shape of `version` (default 2.2.1). */
    ourCredentials: (token: string, version: string = OCPI_VERSION) => ourCredentialsIn(ctx, token, version),
    peerAuth: (connection: repo.Connection) => peerAuth(ctx, connection),
    /** Our party (the OCPI-from headers of what we send and answer on functional modules). */
    ourParty: () => ourParty(ctx),
    /** Routing headers of a call to a functional module of the connection: to `to`, else its first CPO party. */
    routingTo: (connection: Pick<repo.Connection, 'roles'> & { version?: string | null }, to?: PartyRef) => routingTo(ctx, connection, to),

    /** The versions we speak, best first: 2.2.1, 2.2 and 2.1.1. */
    versions: () => OUR_VERSIONS.map((version) => ({ version, url: `${identity.baseUrl}/${version}` })),
    /** Our endpoints of `version` (2.2: as 2.2.1's; 2.1.1: without roles, as 2.1.1 lists them). */
    versionDetails: (version: string = OCPI_VERSION) => {
      const endpoints = OUR_ENDPOINTS.map((e) => ({ identifier: e.identifier, role: e.role, url: `${identity.baseUrl}/${version}/${e.path}` }));
      return version === OCPI_2_1_1 ? versionDetailsTo211(endpoints) : { version, endpoints };
    },

    connectionForToken: (token: string, options?: { fresh?: boolean }) => connectionForToken(ctx, token, options),
    /** Records how the peer presents its token (raw or Base64), on the connection and in the cached copy. */
    async recordTokenForm(connection: repo.Connection, form: 'raw' | 'base64'): Promise<void> {
      await repo.setIncomingTokenForm(db, connection.id, form);
      connection.incoming_token_form = form;
    },
    /** Whether the connection speaks for `party` (a hub: a party its ClientInfo reported). */
    holdsParty: (connection: repo.Connection, party: PartyRef) => repo.connectionHoldsParty(db, connection.id, party.country_code, party.party_id),
    forgetCachedTokens: () => ctx.cache.clear(),
    /**
     * Follows the connection changes every process makes (a handshake completed by the CLI's `cpo connect`, a
     * rotation, an unregistration): each one, announced by the database at its commit, clears this process's token
     * cache; so does a reconnect of the listener (announcements may have been missed meanwhile). For serving processes.
     */
    followChanges: (onError?: (error: Error) => void) => listen(db, repo.CONNECTIONS_CHANNEL, () => ctx.cache.clear(), onError),

    // What a CPO sends us (invite, register, update, unregister): credentials-from-cpo.ts;
    // what we send it (connect, disconnect, rotate): credentials-to-cpo.ts.
    invite: (options?: { name?: string; rawTokens?: boolean; tokenPush?: repo.TokenPush }) => invite(ctx, options),
    connect: (options: { versionsUrl: string; token: string; party?: string; name?: string; rawTokens?: boolean; tokenPush?: repo.TokenPush }) =>
      connect(ctx, options),
    register: (connection: repo.Connection, body: unknown, options: CredentialsCall) => register(ctx, connection, body, options),
    update: (connection: repo.Connection, body: unknown, options: CredentialsCall) => update(ctx, connection, body, options),
    unregister: (connection: repo.Connection) => unregister(ctx, connection),
    disconnect: (name: string) => disconnect(ctx, name),
    rotate: (name: string) => rotate(ctx, name),

    list: () => repo.listConnections(db),
    findByName: (name: string) => repo.findConnectionByName(db, name),
    /** The parties a connection speaks for (credentials roles; behind a hub, those its ClientInfo reported, with their status). */
    parties: (connection: Pick<repo.Connection, 'id'>) => repo.partiesOfConnection(db, connection.id),
  };
}

export type Connections = ReturnType<typeof createConnections>;
