// Credentials bookkeeping (credentials.asciidoc) with the eMSP platforms the
// sandbox is connected to, in both directions: an eMSP registers with a
// TOKEN_A we issued (POST on our credentials endpoint), or we register with an
// eMSP given its versions URL and TOKEN_A. PUT renews, DELETE unregisters.
// Each change is stored, then the cache of registered peers (peers.ts) is
// refreshed.
import { randomBytes, randomUUID } from 'node:crypto';
import { type OcpiPeerAuth, OcpiTransportError, ocpiData } from '../../ocpi-protocol/client.ts';
import type { Credentials, CredentialsRole } from '../../ocpi-protocol/credentials.ts';
import { invalidParameters, OCPI_STATUS, OcpiError, ocpiLayerError } from '../../ocpi-protocol/transport.ts';
import { parseCredentials, parseVersionDetails, parseVersions } from '../../ocpi-protocol/validate.ts';
import type { Endpoint } from '../../ocpi-protocol/versions.ts';
import type { Authenticated, PeersDeps } from './peers.ts';
import type { Peer } from './store.ts';
import * as store from './store.ts';

export const OCPI_VERSION = '2.2.1';

export interface RegisterWithOptions {
  /** The eMSP's versions URL. */
  versionsUrl: string;
  /** The eMSP's registration token (its TOKEN_A for us). */
  token: string;
  /** For an eMSP on loopback with a self-signed certificate. */
  pinnedCertificatePem?: string;
}

export interface Registration {
  peerId: string;
  version: string;
  roles: CredentialsRole[];
  endpoints: Endpoint[];
}

/** What the registration rules are given: the peers' dependencies, and how to reload the cache of registered peers after a change. */
export interface RegistrationContext extends PeersDeps {
  refresh: () => Promise<void>;
}

/** A new credentials token: 43 URL-safe characters, never valid Base64 (so never mistaken for an encoded one). */
const newToken = () => randomBytes(32).toString('base64url');

const notAllowed = (message: string) => new OcpiError(405, OCPI_STATUS.clientError, message);
/** Registration problems reached the OCPI layer: HTTP 200, a 3xxx status code. */
const registrationError = (code: number, message: string) => ocpiLayerError(code, message);

function schemaMessage(what: string, errors: { path: string; message: string }[]): string {
  return `${what}: ${errors
    .slice(0, 5)
    .map((e) => `${e.path || '/'} ${e.message}`)
    .join('; ')}`;
}

/** Our credentials roles: each of our parties as a CPO, or a hub's one HUB role (topology.ts). */
const ourRoles = ({ topology }: RegistrationContext): CredentialsRole[] => topology.roles();

export const ourCredentials = (ctx: RegistrationContext, token: string): Credentials => ({ token, url: ctx.versionsUrl(), roles: ourRoles(ctx) });

/** Fetches a peer's versions and the 2.2.1 endpoints; an unencoded token is tried when the Base64 one is refused. */
async function discover(ctx: RegistrationContext, versionsUrl: string, auth: OcpiPeerAuth): Promise<{ endpoints: Endpoint[]; rawToken: boolean }> {
  let url: URL;
  try {
    url = new URL(versionsUrl);
  } catch {
    throw invalidParameters('url is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidParameters('url must be http or https');
  const timeoutMs = ctx.requestTimeoutMs;
  const retries = 1;
  let rawToken = auth.rawToken ?? ctx.wire.rawTokens;
  let versions: unknown;
  try {
    versions = (await ocpiData({ ...auth, rawToken }, { method: 'GET', url: versionsUrl, timeoutMs, retries })).data;
  } catch (error) {
    if (!(error instanceof OcpiTransportError) || error.httpStatus !== 401 || rawToken) throw error;
    rawToken = true;
    versions = (await ocpiData({ ...auth, rawToken }, { method: 'GET', url: versionsUrl, timeoutMs, retries })).data;
  }
  const parsedVersions = parseVersions(versions);
  if (!parsedVersions.ok)
    throw registrationError(OCPI_STATUS.unableToUseClientApi, schemaMessage('the versions endpoint answered an invalid list', parsedVersions.errors));
  // The network speaks one version, its personality (wire.ts).
  const ours = ctx.wire.version;
  const version = parsedVersions.value.find((v) => v.version === ours);
  if (!version) throw registrationError(OCPI_STATUS.unsupportedVersion, `no OCPI ${ours} among the versions offered`);
  const details = parseVersionDetails(
    ctx.wire.endpointsIn((await ocpiData({ ...auth, rawToken }, { method: 'GET', url: version.url, timeoutMs, retries })).data),
  );
  if (!details.ok) throw registrationError(OCPI_STATUS.unableToUseClientApi, schemaMessage('the version details are invalid', details.errors));
  return { endpoints: details.value.endpoints, rawToken };
}

/** discover() for a peer registering with us: its failures are answered as 3001 (or the 3xxx/2001 they already are). */
async function discoverPeer(ctx: RegistrationContext, credentials: Credentials, pinned: string | null): Promise<{ endpoints: Endpoint[]; rawToken: boolean }> {
  try {
    return await discover(ctx, credentials.url, { token: credentials.token, ...(pinned ? { pinnedCertificatePem: pinned } : {}) });
  } catch (error) {
    if (error instanceof OcpiError) throw error;
    throw registrationError(OCPI_STATUS.unableToUseClientApi, `could not use your API: ${(error as Error).message}`);
  }
}

function parseBody(ctx: RegistrationContext, body: unknown): Credentials {
  const parsed = parseCredentials(ctx.wire.credentialsIn(body));
  if (!parsed.ok) throw invalidParameters(schemaMessage('invalid credentials', parsed.errors));
  return parsed.value;
}

async function connect(ctx: RegistrationContext, peer: Peer, body: unknown, status: 'PENDING' | 'REGISTERED'): Promise<Credentials> {
  const { db, clock, log } = ctx;
  const credentials = parseBody(ctx, body);
  const found = await discoverPeer(ctx, credentials, peer.pinnedCertificate);
  const ourToken = newToken();
  await store.updatePeer(
    db,
    peer.id,
    {
      status: 'REGISTERED',
      tokenA: null,
      ourToken,
      theirToken: credentials.token,
      theirVersionsUrl: credentials.url,
      version: ctx.wire.version,
      endpoints: found.endpoints,
      roles: credentials.roles,
      rawToken: found.rawToken,
    },
    clock.now(),
  );
  await ctx.refresh();
  log('info', status === 'PENDING' ? 'an eMSP registered' : 'an eMSP updated its credentials', { peer: peer.id, versionsUrl: credentials.url });
  const registered = await store.findPeer(db, peer.id);
  if (registered) ctx.onRegistered?.(registered);
  return ourCredentials(ctx, ourToken);
}

/** A registration token for one eMSP; `pinnedCertificatePem` when its API is https with a self-signed certificate. */
export async function issueTokenA({ db, clock }: RegistrationContext, options: { pinnedCertificatePem?: string } = {}): Promise<string> {
  const token = newToken();
  const peer: Peer = {
    id: randomUUID(),
    status: 'PENDING',
    tokenA: token,
    ourToken: null,
    theirToken: null,
    theirVersionsUrl: null,
    version: null,
    endpoints: [],
    roles: [],
    pinnedCertificate: options.pinnedCertificatePem ?? null,
    rawToken: false,
  };
  await store.insertPeer(db, peer, clock.now());
  return token;
}

/** GET on our credentials endpoint. */
export function current(ctx: RegistrationContext, auth: Authenticated): Credentials {
  if (auth.peer.status !== 'REGISTERED' || !auth.peer.ourToken) throw notAllowed('not registered: register with POST first');
  return ourCredentials(ctx, auth.peer.ourToken);
}

/** POST: the eMSP registers with the TOKEN_A we issued. */
export function register(ctx: RegistrationContext, auth: Authenticated, body: unknown): Promise<Credentials> {
  if (!auth.tokenA || auth.peer.status !== 'PENDING') throw notAllowed('already registered: use PUT to update the credentials');
  return connect(ctx, auth.peer, body, 'PENDING');
}

/** PUT: new credentials (and endpoints) of a registered eMSP; it gets a new token. */
export function update(ctx: RegistrationContext, auth: Authenticated, body: unknown): Promise<Credentials> {
  if (auth.tokenA || auth.peer.status !== 'REGISTERED') throw notAllowed('not registered: register with POST first');
  return connect(ctx, auth.peer, body, 'REGISTERED');
}

/** DELETE: the eMSP unregisters; its token stops working and pending pushes to it are given up. */
export async function unregister(ctx: RegistrationContext, auth: Authenticated): Promise<void> {
  const { db, clock, log } = ctx;
  if (auth.tokenA || auth.peer.status !== 'REGISTERED') throw notAllowed('not registered');
  const now = clock.now();
  await store.updatePeer(db, auth.peer.id, { status: 'UNREGISTERED', ourToken: null }, now);
  await store.failPeerOutbox(db, auth.peer.id, now);
  await ctx.refresh();
  log('info', 'an eMSP unregistered', { peer: auth.peer.id });
}

/** We register with an eMSP: its versions (with its TOKEN_A), version 2.2.1, then POST our credentials. */
export async function registerWith(ctx: RegistrationContext, options: RegisterWithOptions): Promise<Registration> {
  const { db, clock, log } = ctx;
  const pinned = options.pinnedCertificatePem ? { pinnedCertificatePem: options.pinnedCertificatePem } : {};
  const found = await discover(ctx, options.versionsUrl, { token: options.token, ...pinned });
  const credentialsUrl = found.endpoints.find((e) => e.identifier === 'credentials')?.url;
  if (!credentialsUrl) throw new Error(`the eMSP at ${options.versionsUrl} offers no credentials endpoint`);
  const ourToken = newToken();
  const peer: Peer = {
    id: randomUUID(),
    status: 'REGISTERING',
    tokenA: null,
    ourToken,
    theirToken: options.token,
    theirVersionsUrl: options.versionsUrl,
    version: ctx.wire.version,
    endpoints: found.endpoints,
    roles: [],
    pinnedCertificate: options.pinnedCertificatePem ?? null,
    rawToken: found.rawToken,
  };
  await store.insertPeer(db, peer, clock.now());
  try {
    const { data } = await ocpiData(
      { token: options.token, rawToken: found.rawToken, ...pinned },
      { method: 'POST', url: credentialsUrl, body: ctx.wire.credentials(ourCredentials(ctx, ourToken)), timeoutMs: ctx.requestTimeoutMs },
    );
    const parsed = parseCredentials(ctx.wire.credentialsIn(data));
    if (!parsed.ok) throw new Error(schemaMessage('the eMSP answered invalid credentials', parsed.errors));
    const theirs = parsed.value;
    // From now on we use its new token, also for its versions (which may have moved).
    let endpoints = found.endpoints;
    try {
      endpoints = (await discover(ctx, theirs.url, { token: theirs.token, rawToken: found.rawToken, ...pinned })).endpoints;
    } catch (error) {
      log('warn', 'could not fetch the eMSP endpoints with its new token; keeping those read at registration', { err: (error as Error).message });
    }
    await store.updatePeer(
      db,
      peer.id,
      { status: 'REGISTERED', theirToken: theirs.token, theirVersionsUrl: theirs.url, endpoints, roles: theirs.roles },
      clock.now(),
    );
    await ctx.refresh();
    log('info', 'registered with an eMSP', { peer: peer.id, versionsUrl: theirs.url });
    const registered = await store.findPeer(db, peer.id);
    if (registered) ctx.onRegistered?.(registered);
    return { peerId: peer.id, version: ctx.wire.version, roles: theirs.roles, endpoints };
  } catch (error) {
    await store.deletePeer(db, peer.id);
    throw error;
  }
}
