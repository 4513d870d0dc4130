// A CPO peer as a handshake reads it: every URL we will call is held to the
// https rule, the peer's versions are fetched and the one we speak chosen, and
// the endpoints of that version listed. ConnectionError is how a connection
// to a peer fails on our side (the CLI shows its message).
import { isIP } from 'node:net';
import { type OcpiPeerAuth, OcpiTransportError, ocpiData } from '../../ocpi-protocol/client.ts';
import { OCPI_STATUS, ocpiLayerError } from '../../ocpi-protocol/transport.ts';
import { endpointsFrom211, OCPI_2_1_1 } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import { OCPI_2_2 } from '../../ocpi-protocol/v2_2/adapter.ts';
import { type OcpiParseResult, parseVersionDetails, parseVersions } from '../../ocpi-protocol/validate.ts';
import type * as repo from './repository.ts';

export const OCPI_VERSION = '2.2.1';

/** The versions we speak, best first: a handshake settles on the first of these the peer offers too (the highest common one). */
export const OUR_VERSIONS = [OCPI_VERSION, OCPI_2_2, OCPI_2_1_1] as const;

/** The version a connection speaks (one whose handshake predates versions: 2.2.1, the only one then). */
export const versionOf = (connection: { version?: string | null }): string => connection.version ?? OCPI_VERSION;

export class ConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionError';
  }
}

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

/** The version of a handshake: the best of ours the peer also offers (`only`: that one, the version whose credentials endpoint the peer called). */
export function commonVersion(offered: readonly string[], only?: string): string | undefined {
  return OUR_VERSIONS.find((v) => (only === undefined || v === only) && offered.includes(v));
}

/** GET the peer's versions, choose the highest we share (or `only`), GET its details. */
export async function fetchPeerVersion(auth: OcpiPeerAuth, versionsUrl: string, timeoutMs: number, only?: string): Promise<PeerVersion> {
  checkPeerUrl(versionsUrl, 'The versions URL');
  const { data: list } = await ocpiData<unknown>(auth, { method: 'GET', url: versionsUrl, module: 'versions', timeoutMs });
  const versions = parseVersions(list);
  if (!versions.ok) throw new ConnectionError(`the peer's version list is not valid OCPI: ${describe(versions.errors)}`);
  const version = commonVersion(
    versions.value.map((v) => v.version),
    only,
  );
  const chosen = versions.value.find((v) => v.version === version);
  if (!chosen) {
    throw ocpiLayerError(
      OCPI_STATUS.unsupportedVersion,
      `no common OCPI version: the peer offers ${versions.value.map((v) => v.version).join(', ') || 'none'}, we speak ${only ?? OUR_VERSIONS.join(', ')}`,
    );
  }
  const detailsUrl = new URL(chosen.url, versionsUrl).toString();
  checkPeerUrl(detailsUrl, 'The version details URL');
  const { data: detailsData } = await ocpiData<unknown>(auth, { method: 'GET', url: detailsUrl, module: 'versions', timeoutMs });
  // 2.1.1 endpoints carry no role: the adapter gives each the one a CPO plays.
  const details = chosen.version === OCPI_2_1_1 ? endpointsFrom211(detailsData) : mapResult(parseVersionDetails(detailsData), (d) => d.endpoints);
  if (!details.ok) throw new ConnectionError(`the peer's version details are not valid OCPI: ${describe(details.errors)}`);
  // Every endpoint we will call (with our token, our users' tokens, commands) is held to the same https rule as the versions URL.
  const endpoints = details.value.map((e) => ({
    identifier: e.identifier,
    role: e.role,
    url: checkPeerUrl(new URL(e.url, detailsUrl).toString(), `The ${e.identifier} endpoint`).toString(),
  }));
  if (!endpoints.some((e) => e.identifier === 'credentials')) {
    throw ocpiLayerError(OCPI_STATUS.noMatchingEndpoints, 'the peer lists no credentials endpoint');
  }
  return { versions_url: versionsUrl, version: chosen.version, endpoints };
}

/**
 * fetchPeerVersion with the token in the form `auth` says (Base64-encoded unless raw) and, when that is refused with
 * HTTP 401, once more in the other form: an OCPI 2.1.1 (or 2.2) peer compares the token as it is, and a peer may expect
 * Base64 whatever it sends us. `auth.rawToken` is left as the form that worked (the connection sends that one).
 */
export async function fetchPeerVersionEitherForm(auth: OcpiPeerAuth, versionsUrl: string, timeoutMs: number, only?: string): Promise<PeerVersion> {
  try {
    return await fetchPeerVersion(auth, versionsUrl, timeoutMs, only);
  } catch (error) {
    if (!(error instanceof OcpiTransportError) || error.httpStatus !== 401) throw error;
    auth.rawToken = !auth.rawToken;
    return fetchPeerVersion(auth, versionsUrl, timeoutMs, only);
  }
}

function mapResult<T, U>(result: OcpiParseResult<T>, f: (value: T) => U): OcpiParseResult<U> {
  return result.ok ? { ok: true, value: f(result.value) } : result;
}

export function describe(errors: { path: string; message: string }[]): string {
  return errors
    .slice(0, 5)
    .map((e) => `${e.path || '/'} ${e.message}`)
    .join('; ');
}

export function endpointOf(connection: Pick<repo.Connection, 'endpoints'>, identifier: string, role: 'SENDER' | 'RECEIVER'): string | undefined {
  return connection.endpoints.find((e) => e.identifier === identifier && e.role === role)?.url;
}
