// Where a webhook endpoint may point. A client's URL is a request the service
// makes on its behalf from inside the operator's network, so in production it
// must reach a public host only (no SSRF): address literals of private,
// loopback, link-local, unique-local, CGNAT, unspecified and other non-public
// ranges are refused when the endpoint is saved, and what a host name resolves
// to is checked again at every delivery (send.ts), where the connection is made
// to the very address that was checked. Outside production, plain http is
// allowed to loopback hosts only, for receivers on the developer's machine.
import { BlockList, isIP } from 'node:net';

export interface UrlPolicy {
  /** NODE_ENV=production: only public hosts. */
  production: boolean;
}

const MAX_URL_LENGTH = 2_048;

/** Addresses no production webhook may reach. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // unspecified, "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT (shared address space)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible, or NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = Number.parseInt(hex[1] as string, 16);
  const low = Number.parseInt(hex[2] as string, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether an IP address (v4 or v6, without brackets) is one a production webhook may not reach. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return NON_PUBLIC.check(v4, 'ipv4');
  return NON_PUBLIC.check(address, 'ipv6');
}

/** The URL's host as an address literal (IPv6 without its brackets), or undefined for a host name. */
function addressLiteral(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : undefined;
}

/** localhost, 127.0.0.0/8 and ::1: the developer's own machine. */
function isLoopbackHost(hostname: string): boolean {
  const lower = hostname.toLowerCase().replace(/\.$/, '');
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true;
  const literal = addressLiteral(lower);
  if (literal === undefined) return false;
  if (isIP(literal) === 4) return literal.startsWith('127.');
  return literal === '::1' || embeddedIpv4(literal)?.startsWith('127.') === true;
}

/**
 * Why `text` cannot be a webhook endpoint URL under `policy`, or undefined when it can. The message completes
 * "url ..." in a validation error.
 */
export function urlProblem(text: string, policy: UrlPolicy): string | undefined {
  if (text.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL such as https://example.com/webhooks';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials (user:password@); authenticate requests by their signature';
  if (url.hash !== '') return 'must not contain a fragment (#...)';
  const loopback = isLoopbackHost(url.hostname);
  if (policy.production) {
    if (url.protocol !== 'https:') return 'must be an https URL';
    if (loopback) return 'must not point to a loopback host in production';
    const literal = addressLiteral(url.hostname);
    if (literal !== undefined && isNonPublicAddress(literal)) return 'must not point to a private, local or otherwise non-public address';
    if (literal === undefined && !url.hostname.includes('.')) return 'must name a fully qualified public host';
    return undefined;
  }
  if (url.protocol === 'http:' && !loopback) return 'must be an https URL (plain http is allowed only to localhost, 127.0.0.0/8 or [::1] outside production)';
  return undefined;
}
