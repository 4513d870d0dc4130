// The eMSP platforms the sandbox is connected to (peers), and how each is
// found and called: its endpoints, token and routing party. The credentials
// exchanges that connect and disconnect them are in registration.ts.
// Registered peers are cached in memory; the database is the truth.
import type { OcpiPeerAuth } from '../../ocpi-protocol/client.ts';
import type { Credentials } from '../../ocpi-protocol/credentials.ts';
import { type PartyRef, tokenCandidates } from '../../ocpi-protocol/transport.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import type { Network } from './network.ts';
import * as registration from './registration.ts';
import type { Peer } from './store.ts';
import * as store from './store.ts';
import type { NetworkTopology } from './topology.ts';
import type { Wire } from './wire.ts';

export { OCPI_VERSION, type RegisterWithOptions, type Registration } from './registration.ts';

export type Log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface PeersDeps {
  db: Database;
  clock: Clock;
  network: Network;
  log: Log;
  /** Our versions URL (known once listening). */
  versionsUrl: () => string;
  requestTimeoutMs: number;
  /** The OCPI version the network speaks on the wire, and its shapes (wire.ts). */
  wire: Wire;
  /** How the network presents its parties (a platform, or a hub in front of them): its credentials roles. */
  topology: NetworkTopology;
  /** Told of every eMSP that registered, or registered anew (a hub pushes it its ClientInfo). */
  onRegistered?: (peer: Peer) => void;
}

export interface Authenticated {
  peer: Peer;
  /** The request came with the registration token (TOKEN_A): only versions and credentials are open to it. */
  tokenA: boolean;
}

/**
 * The peer of an Authorization header, trying the Base64-decoded token first, then the value as sent; only the value as
 * sent when the network takes no encoded tokens (its 2.2 personality).
 */
async function authenticate(db: Database, header: string | undefined, wire: Wire): Promise<Authenticated | undefined> {
  const candidates = tokenCandidates(header);
  if (!candidates) return undefined;
  for (const token of [wire.acceptsEncodedTokens ? candidates.decoded : undefined, candidates.raw]) {
    if (token === undefined) continue;
    const found = await store.findPeerByToken(db, token);
    if (found) return found;
  }
  return undefined;
}

export function createPeers(deps: PeersDeps) {
  const { db } = deps;
  const registered = new Map<string, Peer>();

  async function refresh(): Promise<void> {
    const peers = await store.listPeers(db, 'REGISTERED');
    registered.clear();
    for (const peer of peers) registered.set(peer.id, peer);
  }

  const ctx: registration.RegistrationContext = { ...deps, refresh };

  return {
    ourCredentials: (token: string): Credentials => registration.ourCredentials(ctx, token),
    /** The OCPI version the network speaks (its personality), and its shapes. */
    wire: deps.wire,
    refresh,

    /** Registered peers, from the cache. */
    registered(): Peer[] {
      return [...registered.values()];
    },

    get(peerId: string): Peer | undefined {
      return registered.get(peerId);
    },

    list: () => store.listPeers(db),

    /** The URL of a peer's endpoint for a module and interface role, without a trailing slash. */
    endpoint(peer: Peer, identifier: string, role: 'SENDER' | 'RECEIVER'): string | undefined {
      const found = peer.endpoints.find((e) => e.identifier === identifier && e.role === role);
      return found?.url.replace(/\/+$/, '');
    },

    /** How to call a peer (our calls are the sandbox network's, as recordings name them). */
    auth(peer: Peer): OcpiPeerAuth {
      return {
        token: peer.theirToken ?? '',
        rawToken: peer.rawToken || deps.wire.rawTokens,
        version: deps.wire.version,
        sender: 'cpo-sandbox',
        ...(peer.pinnedCertificate ? { pinnedCertificatePem: peer.pinnedCertificate } : {}),
      };
    },

    /** The eMSP party a peer speaks for (its first EMSP role), for the OCPI-to routing headers. */
    party(peer: Peer): PartyRef | undefined {
      const role = peer.roles.find((r) => r.role === 'EMSP') ?? peer.roles[0];
      return role ? { country_code: role.country_code, party_id: role.party_id } : undefined;
    },

    /** The peer of an Authorization header, trying the Base64-decoded token first, then the value as sent. */
    authenticate: (header: string | undefined): Promise<Authenticated | undefined> => authenticate(db, header, deps.wire),

    /** A registration token for one eMSP; `pinnedCertificatePem` when its API is https with a self-signed certificate. */
    issueTokenA: (options: { pinnedCertificatePem?: string } = {}): Promise<string> => registration.issueTokenA(ctx, options),

    /** GET on our credentials endpoint. */
    current: (auth: Authenticated): Credentials => registration.current(ctx, auth),

    /** POST: the eMSP registers with the TOKEN_A we issued. */
    register: (auth: Authenticated, body: unknown): Promise<Credentials> => registration.register(ctx, auth, body),

    /** PUT: new credentials (and endpoints) of a registered eMSP; it gets a new token. */
    update: (auth: Authenticated, body: unknown): Promise<Credentials> => registration.update(ctx, auth, body),

    /** DELETE: the eMSP unregisters; its token stops working and pending pushes to it are given up. */
    unregister: (auth: Authenticated): Promise<void> => registration.unregister(ctx, auth),

    /** We register with an eMSP: its versions (with its TOKEN_A), version 2.2.1, then POST our credentials. */
    registerWith: (options: registration.RegisterWithOptions): Promise<registration.Registration> => registration.registerWith(ctx, options),
  };
}

export type Peers = ReturnType<typeof createPeers>;
