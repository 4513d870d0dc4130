// What every connections rule is given: the module's dependencies, our
// versions URL and the token cache, as one explicit object built once by
// createConnections (connections.ts). And what more than one rule uses: a
// fresh token, our credentials as we send them, how we authenticate to a peer,
// the roles a peer must have, and the names connections get.
import { randomBytes } from 'node:crypto';
import type { OcpiCallOutcome, OcpiPeerAuth } from '../../ocpi-protocol/client.ts';
import { OCPI_STATUS, ocpiLayerError, type PartyRef, routingHeaders } from '../../ocpi-protocol/transport.ts';
import { credentialsFrom211, OCPI_2_1_1 } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import { credentialsTo211 } from '../../ocpi-protocol/v2_1_1/to-peer.ts';
import { parseCredentials } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { ConnectionError } from './peer-versions.ts';
import * as repo from './repository.ts';

export interface OcpiIdentity {
  countryCode: string;
  partyId: string;
  businessName: string;
  /** Base URL of our OCPI interface, e.g. https://emsp.example.com/ocpi */
  baseUrl: string;
}

export interface ConnectionsDeps {
  db: Database;
  clock: Clock;
  identity: OcpiIdentity;
  timeoutMs: number;
  /** Called with the peer's CPO roles after every successful handshake (operator names for stations). */
  onRoles?: (roles: repo.PeerRole[]) => Promise<void>;
  /** How long a token lookup is cached; a disconnect takes effect within it. */
  cacheTtlMs?: number;
  /** Told how every call to a peer ended, by the peer's connection name (metrics). */
  observeCall?: (peer: string, module: string, outcome: OcpiCallOutcome) => void;
}

export interface ConnectionsContext extends ConnectionsDeps {
  cacheTtlMs: number;
  /** Token lookups (connectionForToken); every rule that changes a connection's tokens or status clears it. */
  cache: Map<string, { connection: repo.Connection | undefined; until: number }>;
  /** Our versions URL, which our credentials carry. */
  versionsUrl: string;
}

export function connectionsContext(deps: ConnectionsDeps): ConnectionsContext {
  return { ...deps, cacheTtlMs: deps.cacheTtlMs ?? 2_000, cache: new Map(), versionsUrl: `${deps.identity.baseUrl}/versions` };
}

/** A fresh credentials token: 32 random bytes, URL-safe (OCPI allows up to 64 printable characters). */
export const newCredentialsToken = () => randomBytes(32).toString('base64url');

export function ourCredentials(ctx: ConnectionsContext, token: string) {
  const { identity } = ctx;
  return {
    token,
    url: ctx.versionsUrl,
    roles: [
      {
        role: 'EMSP',
        party_id: identity.partyId,
        country_code: identity.countryCode,
        business_details: { name: identity.businessName },
      },
    ],
  };
}

/** Our credentials in the shape of `version` (2.1.1: one party, no roles). */
export function ourCredentialsIn(ctx: ConnectionsContext, token: string, version: string | null | undefined) {
  const credentials = ourCredentials(ctx, token);
  return version === OCPI_2_1_1 ? credentialsTo211(credentials as Parameters<typeof credentialsTo211>[0]) : credentials;
}

/** A peer's credentials read in the shape of `version`, as 2.2.1's (2.1.1's single party becomes a CPO role). */
export function parseCredentialsIn(version: string | null | undefined, body: unknown) {
  return version === OCPI_2_1_1 ? credentialsFrom211(body) : parseCredentials(body);
}

/** Whether a connection is to a hub (its credentials name the HUB role: "A Hub SHALL only reports itself as role: Hub"). */
export const isHub = (connection: Pick<repo.Connection, 'roles'>): boolean => connection.roles.some((r) => r.role === 'HUB');

/** The hub's own party (its HUB role), for a connection to a hub. */
export function hubParty(connection: Pick<repo.Connection, 'roles'>): PartyRef | undefined {
  const role = connection.roles.find((r) => r.role === 'HUB');
  return role ? { country_code: role.country_code.toUpperCase(), party_id: role.party_id.toUpperCase() } : undefined;
}

/** Our party, as the OCPI-from headers of our messages name it. */
export function ourParty(ctx: ConnectionsContext): PartyRef {
  return { country_code: ctx.identity.countryCode, party_id: ctx.identity.partyId };
}

/**
 * The routing headers (transport_and_format, Message Routing) of a message
 * from us to a functional module of the connection's platform: to `to` (the
 * party the object belongs to), else the connection's first CPO party. Never
 * for versions or credentials: configuration modules are not routed.
 */
export function routingTo(
  ctx: ConnectionsContext,
  connection: Pick<repo.Connection, 'roles'> & { version?: string | null },
  to?: PartyRef,
): Record<string, string> {
  // OCPI 2.1.1 has no message routing: nothing is sent to a 2.1.1 peer that it does not know.
  if (connection.version === OCPI_2_1_1) return {};
  const party = to ?? connection.roles.find((r) => r.role === 'CPO') ?? connection.roles[0];
  const from = ourParty(ctx);
  if (!party) return { 'OCPI-from-country-code': from.country_code, 'OCPI-from-party-id': from.party_id };
  return routingHeaders(from, { country_code: party.country_code.toUpperCase(), party_id: party.party_id.toUpperCase() });
}

/** The observer of calls to the peer named `peer` (its connection name), when calls are observed; our calls are the eMSP's (recordings). */
export function observer(ctx: ConnectionsContext, peer: string): Pick<OcpiPeerAuth, 'observe' | 'sender'> {
  const observeCall = ctx.observeCall;
  return { sender: 'emsp', ...(observeCall ? { observe: (module, outcome) => observeCall(peer, module, outcome) } : {}) };
}

/**
 * Whether we present our credentials token to the peer as it is (raw) rather than Base64-encoded: a raw-token
 * connection, or any 2.1.1 one (OCPI 2.1.1 sends the token as it is; 2.2.1 Base64-encodes it), whatever was configured.
 */
export const sendsRawToken = (connection: Pick<repo.Connection, 'raw_tokens' | 'version'>): boolean =>
  connection.raw_tokens || connection.version === OCPI_2_1_1;

export function peerAuth(ctx: ConnectionsContext, connection: repo.Connection): OcpiPeerAuth {
  if (!connection.outgoing_token) throw new ConnectionError(`connection ${connection.name} has no credentials token for the peer`);
  return { token: connection.outgoing_token, rawToken: sendsRawToken(connection), version: connection.version, ...observer(ctx, connection.name) };
}

/** Roles must include a CPO (a platform of one or more CPO parties) or be a hub's, and the party the operator named if any. */
export function checkRoles(roles: repo.PeerRole[], expectedParty: string | null): void {
  if (!roles.some((r) => r.role === 'CPO' || r.role === 'HUB')) {
    throw ocpiLayerError(OCPI_STATUS.noMatchingEndpoints, 'the peer has no CPO role and is not a hub; we only connect to CPOs, directly or through a hub');
  }
  if (expectedParty) {
    const [cc, pid] = expectedParty.toUpperCase().split('*');
    if (!roles.some((r) => r.country_code.toUpperCase() === cc && r.party_id.toUpperCase() === pid)) {
      throw new ConnectionError(`the peer's roles do not include the expected party ${expectedParty}`);
    }
  }
}

export async function uniqueName(ctx: ConnectionsContext, wanted: string, exceptId?: string): Promise<string> {
  const base = wanted.trim().slice(0, 90) || 'cpo';
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    const existing = await repo.findConnectionByName(ctx.db, name);
    if (!existing || existing.id === exceptId) return name;
  }
}

export const nameFromRoles = (roles: repo.PeerRole[]) => {
  const cpo = roles.find((r) => r.role === 'CPO') ?? roles[0];
  return cpo ? `${cpo.country_code}*${cpo.party_id}`.toUpperCase() : 'cpo';
};
