// OCPI connections to CPO platforms: the credentials handshake in both
// directions (we register with a CPO that gave us a TOKEN_A, or a CPO registers
// with a TOKEN_A we issued), credential updates and unregistration, and the
// token lookup that authenticates every OCPI request.
import { randomBytes, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { type OcpiCallOutcome, type OcpiPeerAuth, OcpiTransportError, ocpiData } from '../../ocpi-protocol/client.ts';
import { OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import { parseCredentials, parseVersionDetails, parseVersions } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import * as repo from './repository.ts';

export const OCPI_VERSION = '2.2.1';

/** The modules we implement, with our role in each. */
export const OUR_ENDPOINTS: readonly { identifier: string; role: 'SENDER' | 'RECEIVER'; path: string }[] = [
  { identifier: 'credentials', role: 'SENDER', path: 'credentials' },
  { identifier: 'credentials', role: 'RECEIVER', path: 'credentials' },
  { identifier: 'locations', role: 'RECEIVER', path: 'locations' },
  { identifier: 'tariffs', role: 'RECEIVER', path: 'tariffs' },
  { identifier: 'sessions', role: 'RECEIVER', path: 'sessions' },
  { identifier: 'cdrs', role: 'RECEIVER', path: 'cdrs' },
  { identifier: 'commands', role: 'SENDER', path: 'commands' },
  { identifier: 'tokens', role: 'SENDER', path: 'tokens' },
];

export interface OcpiIdentity {
  countryCode: string;
  partyId: string;
  businessName: string;
  /** Base URL of our OCPI interface, e.g. https://emsp.example.com/ocpi */
  baseUrl: string;
}

export class ConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/** A fresh credentials token: 32 random bytes, URL-safe (OCPI allows up to 64 printable characters). */
export const newCredentialsToken = () => randomBytes(32).toString('base64url');

/** Peers must be reached over https, except on this machine (the sandbox network, a local test peer). */
export function checkPeerUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConnectionError(`${what} is not a URL: ${value.slice(0, 200)}`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new ConnectionError(`${what} must be an https URL (plain http only on this machine): ${url.origin}`);
  }
  return url;
}

export interface PeerVersion {
  versions_url: string;
  version: string;
  endpoints: repo.Endpoint[];
}

/** GET the peer's versions, choose 2.2.1, GET its details. */
export async function fetchPeerVersion(auth: OcpiPeerAuth, versionsUrl: string, timeoutMs: number): Promise<PeerVersion> {
  checkPeerUrl(versionsUrl, 'The versions URL');
  const { data: list } = await ocpiData<unknown>(auth, { method: 'GET', url: versionsUrl, module: 'versions', timeoutMs });
  const versions = parseVersions(list);
  if (!versions.ok) throw new ConnectionError(`the peer's version list is not valid OCPI: ${describe(versions.errors)}`);
  const chosen = versions.value.find((v) => v.version === OCPI_VERSION);
  if (!chosen) {
    throw new OcpiError(
      400,
      OCPI_STATUS.unsupportedVersion,
      `no common OCPI version: the peer offers ${versions.value.map((v) => v.version).join(', ') || 'none'}, we speak ${OCPI_VERSION}`,
    );
  }
  const detailsUrl = new URL(chosen.url, versionsUrl).toString();
  checkPeerUrl(detailsUrl, 'The version details URL');
  const { data: detailsData } = await ocpiData<unknown>(auth, { method: 'GET', url: detailsUrl, module: 'versions', timeoutMs });
  const details = parseVersionDetails(detailsData);
  if (!details.ok) throw new ConnectionError(`the peer's version details are not valid OCPI: ${describe(details.errors)}`);
  // Every endpoint we will call (with our token, our users' tokens, commands) is held to the same https rule as the versions URL.
  const endpoints = details.value.endpoints.map((e) => ({
    identifier: e.identifier,
    role: e.role,
    url: checkPeerUrl(new URL(e.url, detailsUrl).toString(), `The ${e.identifier} endpoint`).toString(),
  }));
  if (!endpoints.some((e) => e.identifier === 'credentials')) {
    throw new OcpiError(400, OCPI_STATUS.noMatchingEndpoints, 'the peer lists no credentials endpoint');
  }
  return { versions_url: versionsUrl, version: OCPI_VERSION, endpoints };
}

function describe(errors: { path: string; message: string }[]): string {
  return errors
    .slice(0, 5)
    .map((e) => `${e.path || '/'} ${e.message}`)
    .join('; ');
}

export function endpointOf(connection: Pick<repo.Connection, 'endpoints'>, identifier: string, role: 'SENDER' | 'RECEIVER'): string | undefined {
  return connection.endpoints.find((e) => e.identifier === identifier && e.role === role)?.url;
}

export function createConnections(deps: {
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
}) {
  const { db, clock, identity } = deps;
  const cacheTtlMs = deps.cacheTtlMs ?? 2_000;
  const cache = new Map<string, { connection: repo.Connection | undefined; until: number }>();

  const versionsUrl = `${identity.baseUrl}/versions`;
  const ourCredentials = (token: string) => ({
    token,
    url: versionsUrl,
    roles: [
      {
        role: 'EMSP',
        party_id: identity.partyId,
        country_code: identity.countryCode,
        business_details: { name: identity.businessName },
      },
    ],
  });

  /** The observer of calls to the peer named `peer` (its connection name), when calls are observed. */
  const observer = (peer: string): Pick<OcpiPeerAuth, 'observe'> => {
    const observeCall = deps.observeCall;
    return observeCall ? { observe: (module, outcome) => observeCall(peer, module, outcome) } : {};
  };

  function peerAuth(connection: repo.Connection): OcpiPeerAuth {
    if (!connection.outgoing_token) throw new ConnectionError(`connection ${connection.name} has no credentials token for the peer`);
    return { token: connection.outgoing_token, rawToken: connection.raw_tokens, ...observer(connection.name) };
  }

  /** Roles must include a CPO, and the party the operator named if any. */
  function checkRoles(roles: repo.PeerRole[], expectedParty: string | null): void {
    if (!roles.some((r) => r.role === 'CPO')) throw new OcpiError(400, OCPI_STATUS.noMatchingEndpoints, 'the peer has no CPO role; we only connect to CPOs');
    if (expectedParty) {
      const [cc, pid] = expectedParty.toUpperCase().split('*');
      if (!roles.some((r) => r.country_code.toUpperCase() === cc && r.party_id.toUpperCase() === pid)) {
        throw new ConnectionError(`the peer's roles do not include the expected party ${expectedParty}`);
      }
    }
  }

  async function uniqueName(wanted: string, exceptId?: string): Promise<string> {
    const base = wanted.trim().slice(0, 90) || 'cpo';
    for (let n = 1; ; n++) {
      const name = n === 1 ? base : `${base}-${n}`;
      const existing = await repo.findConnectionByName(db, name);
      if (!existing || existing.id === exceptId) return name;
    }
  }

  const nameFromRoles = (roles: repo.PeerRole[]) => {
    const cpo = roles.find((r) => r.role === 'CPO') ?? roles[0];
    return cpo ? `${cpo.country_code}*${cpo.party_id}`.toUpperCase() : 'cpo';
  };

  return {
    versionsUrl,
    ourCredentials,
    peerAuth,

    versions: () => [{ version: OCPI_VERSION, url: `${identity.baseUrl}/${OCPI_VERSION}` }],
    versionDetails: () => ({
      version: OCPI_VERSION,
      endpoints: OUR_ENDPOINTS.map((e) => ({ identifier: e.identifier, role: e.role, url: `${identity.baseUrl}/${OCPI_VERSION}/${e.path}` })),
    }),

    async connectionForToken(token: string): Promise<repo.Connection | undefined> {
      const now = Date.now();
      const hit = cache.get(token);
      if (hit && hit.until > now) return hit.connection;
      const connection = await repo.findConnectionByIncomingToken(db, token);
      if (cache.size > 10_000) cache.clear();
      cache.set(token, { connection, until: now + cacheTtlMs });
      return connection;
    },
    forgetCachedTokens: () => cache.clear(),

    /** `cpo invite`: a TOKEN_A for a CPO that will register with us. */
    async invite(options: { name?: string; rawTokens?: boolean } = {}): Promise<{ token: string; versions_url: string; name: string }> {
      const token = newCredentialsToken();
      const name = await uniqueName(options.name ?? `invited-${randomUUID().slice(0, 8)}`);
      await repo.insertConnection(
        db,
        {
          id: randomUUID(),
          name,
          status: 'invited',
          incoming_token: token,
          incoming_token_kind: 'A',
          raw_tokens: options.rawTokens ?? false,
          expected_party: null,
        },
        clock.now(),
      );
      return { token, versions_url: versionsUrl, name };
    },

    /**
     * `cpo connect`: we register with a CPO that gave us its versions URL and a
     * TOKEN_A. Our TOKEN_B is stored before the POST (the CPO fetches our
     * endpoints with it during the POST); its TOKEN_C is what we use afterwards.
     */
    async connect(options: { versionsUrl: string; token: string; party?: string; name?: string; rawTokens?: boolean }): Promise<repo.Connection> {
      if (options.party && !/^[A-Za-z]{2}\*[A-Za-z0-9]{3}$/.test(options.party)) throw new ConnectionError('--party must look like DE*ABC');
      // The connection is named after the handshake: until then its calls count under the name asked for, else the peer's host.
      const auth: OcpiPeerAuth = { token: options.token, rawToken: options.rawTokens ?? false, ...observer(options.name ?? new URL(options.versionsUrl).host) };
      const peer = await fetchPeerVersion(auth, options.versionsUrl, deps.timeoutMs);
      const credentialsUrl = endpointOf(peer, 'credentials', 'RECEIVER') ?? endpointOf(peer, 'credentials', 'SENDER');
      if (!credentialsUrl) throw new ConnectionError('the peer lists no credentials endpoint');
      if (!peer.endpoints.some((e) => e.identifier === 'locations')) {
        throw new ConnectionError('the peer lists no locations endpoint; a CPO without locations is of no use to us');
      }
      const tokenB = newCredentialsToken();
      const id = randomUUID();
      await repo.insertConnection(
        db,
        {
          id,
          name: await uniqueName(`connecting-${id.slice(0, 8)}`),
          status: 'invited',
          incoming_token: tokenB,
          incoming_token_kind: 'A',
          raw_tokens: options.rawTokens ?? false,
          expected_party: options.party?.toUpperCase() ?? null,
          versions_url: options.versionsUrl,
        },
        clock.now(),
      );
      try {
        const { data } = await ocpiData<unknown>(auth, {
          method: 'POST',
          url: credentialsUrl,
          module: 'credentials',
          body: ourCredentials(tokenB),
          timeoutMs: deps.timeoutMs * 3,
        });
        const credentials = parseCredentials(data);
        if (!credentials.ok) throw new ConnectionError(`the peer answered credentials that are not valid OCPI: ${describe(credentials.errors)}`);
        const roles = credentials.value.roles as repo.PeerRole[];
        checkRoles(roles, options.party ?? null);
        // The peer may have moved its versions (its credentials url); our endpoints are those of the version we chose.
        const name = await uniqueName(options.name ?? nameFromRoles(roles), id);
        await db.transaction(async (tx) => {
          await repo.storeCredentials(
            tx,
            id,
            {
              name,
              incoming_token: tokenB,
              outgoing_token: credentials.value.token,
              versions_url: credentials.value.url,
              version: peer.version,
              endpoints: peer.endpoints,
              roles,
            },
            clock.now(),
            // The operator connects this CPO: its parties move here from an older connection.
            { takeOver: true },
          );
        });
        cache.clear();
        await deps.onRoles?.(roles);
        return (await repo.findConnection(db, id)) as repo.Connection;
      } catch (error) {
        await repo.markDisconnected(db, id, clock.now());
        cache.clear();
        throw error;
      }
    },

    /** POST credentials: a CPO holding our TOKEN_A registers. Answers our credentials with a new TOKEN_C. */
    async register(connection: repo.Connection, body: unknown, options: { rawTokenUsed: boolean }) {
      if (connection.incoming_token_kind !== 'A') throw new OcpiError(405, OCPI_STATUS.clientError, 'Already registered; use PUT to update the credentials');
      return exchange(connection, body, options.rawTokenUsed);
    },

    /** PUT credentials: a registered CPO sends new credentials (new token, moved endpoints). */
    async update(connection: repo.Connection, body: unknown, options: { rawTokenUsed: boolean }) {
      if (connection.incoming_token_kind !== 'C') throw new OcpiError(405, OCPI_STATUS.clientError, 'Not registered yet; use POST to register');
      return exchange(connection, body, options.rawTokenUsed);
    },

    /** DELETE credentials: the CPO unregisters; both sides stop talking. */
    async unregister(connection: repo.Connection): Promise<void> {
      if (connection.incoming_token_kind !== 'C') throw new OcpiError(405, OCPI_STATUS.clientError, 'Not registered');
      await repo.markDisconnected(db, connection.id, clock.now());
      cache.clear();
    },

    /** `cpo disconnect NAME`: unregister at the CPO (best effort) and stop using the connection. */
    async disconnect(name: string): Promise<{ peerInformed: boolean; error?: string }> {
      const connection = await repo.findConnectionByName(db, name);
      if (!connection || connection.status === 'disconnected') throw new ConnectionError(`no connection named ${name}`);
      let peerInformed = false;
      let error: string | undefined;
      const url = endpointOf(connection, 'credentials', 'RECEIVER') ?? endpointOf(connection, 'credentials', 'SENDER');
      if (connection.status === 'connected' && url && connection.outgoing_token) {
        try {
          await ocpiData(peerAuth(connection), { method: 'DELETE', url, module: 'credentials', timeoutMs: deps.timeoutMs, retries: 1 });
          peerInformed = true;
        } catch (e) {
          error = (e as Error).message;
        }
      }
      await repo.markDisconnected(db, connection.id, clock.now());
      cache.clear();
      return error === undefined ? { peerInformed } : { peerInformed, error };
    },

    /** Rotates both tokens of a connection (PUT of new credentials to the CPO). */
    async rotate(name: string): Promise<void> {
      const connection = await repo.findConnectionByName(db, name);
      if (connection?.status !== 'connected') throw new ConnectionError(`no connected connection named ${name}`);
      const url = endpointOf(connection, 'credentials', 'RECEIVER') ?? endpointOf(connection, 'credentials', 'SENDER');
      if (!url) throw new ConnectionError('the peer lists no credentials endpoint');
      const tokenB = newCredentialsToken();
      // Both tokens work while the PUT is in flight: the peer checks the new one by fetching our versions with it.
      await repo.setPendingToken(db, connection.id, tokenB);
      cache.clear();
      let data: unknown;
      try {
        ({ data } = await ocpiData<unknown>(peerAuth(connection), {
          method: 'PUT',
          url,
          module: 'credentials',
          body: ourCredentials(tokenB),
          timeoutMs: deps.timeoutMs * 3,
          retries: 0,
        }));
      } catch (error) {
        await repo.setPendingToken(db, connection.id, null);
        cache.clear();
        throw error;
      }
      const credentials = parseCredentials(data);
      if (!credentials.ok) throw new ConnectionError(`the peer answered credentials that are not valid OCPI: ${describe(credentials.errors)}`);
      await db.transaction((tx) =>
        repo.storeCredentials(
          tx,
          connection.id,
          {
            incoming_token: tokenB,
            outgoing_token: credentials.value.token,
            versions_url: credentials.value.url,
            version: connection.version ?? OCPI_VERSION,
            endpoints: connection.endpoints,
            roles: credentials.value.roles as repo.PeerRole[],
          },
          clock.now(),
        ),
      );
      cache.clear();
    },

    list: () => repo.listConnections(db),
    findByName: (name: string) => repo.findConnectionByName(db, name),
  };

  async function exchange(connection: repo.Connection, body: unknown, rawTokenUsed: boolean) {
    const credentials = parseCredentials(body);
    if (!credentials.ok) throw new OcpiError(400, OCPI_STATUS.invalidParameters, `credentials: ${describe(credentials.errors)}`);
    const roles = credentials.value.roles as repo.PeerRole[];
    checkRoles(roles, connection.expected_party);
    // A peer that sent its TOKEN_A unencoded is an OCPI 2.1.1/2.2 implementation: answer it in kind.
    const rawTokens = connection.raw_tokens || rawTokenUsed;
    let peer: PeerVersion;
    try {
      peer = await fetchPeerVersion(
        { token: credentials.value.token, rawToken: rawTokens, ...observer(connection.name) },
        credentials.value.url,
        deps.timeoutMs,
      );
    } catch (error) {
      if (error instanceof OcpiError) throw error;
      const reason = error instanceof OcpiTransportError || error instanceof ConnectionError ? error.message : 'unexpected error';
      throw new OcpiError(400, OCPI_STATUS.unableToUseClientApi, `cannot use your API: ${reason}`);
    }
    const tokenC = newCredentialsToken();
    const name = connection.name.startsWith('invited-') ? await uniqueName(nameFromRoles(roles), connection.id) : connection.name;
    await db
      .transaction(async (tx) => {
        const locked = await repo.findConnection(tx, connection.id, { forUpdate: true });
        if (!locked || locked.status === 'disconnected' || locked.incoming_token_kind !== connection.incoming_token_kind) {
          throw new OcpiError(405, OCPI_STATUS.clientError, 'The registration changed meanwhile; start again');
        }
        if (rawTokens !== connection.raw_tokens) await repo.setRawTokens(tx, connection.id, rawTokens);
        await repo.storeCredentials(
          tx,
          connection.id,
          {
            name,
            incoming_token: tokenC,
            outgoing_token: credentials.value.token,
            versions_url: credentials.value.url,
            version: peer.version,
            endpoints: peer.endpoints,
            roles,
          },
          clock.now(),
        );
      })
      .catch((error: unknown) => {
        if (error instanceof repo.PartyTakenError) throw new OcpiError(400, OCPI_STATUS.clientError, `roles: ${error.message}`);
        throw error;
      });
    cache.clear();
    await deps.onRoles?.(roles);
    return ourCredentials(tokenC);
  }
}

export type Connections = ReturnType<typeof createConnections>;
