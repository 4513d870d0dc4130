// The outbound half of a delivery: one signed POST to a client's receiver,
// over the service's kept-alive agents (src/platform/http/outbound.ts), within
// a deadline, never following redirects. In production the host name is
// resolved here and every address it has must be public; the connection is
// then made to that checked address (the agent's lookup is pinned to it), so a
// name that resolves differently a moment later (DNS rebinding) cannot reach
// inside. What goes wrong is told in a few words, without internals.
import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isStaleConnection, outboundAgent } from '../../platform/http/outbound.ts';
import { isNonPublicAddress, type UrlPolicy } from './url-rules.ts';

/** The DNS port: every address of a host name. */
export type Resolve = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface SendOptions {
  timeoutMs: number;
  policy: UrlPolicy;
  resolve: Resolve;
  /** Aborts the request (shutdown): the result then has `aborted`. */
  signal?: AbortSignal | undefined;
}

export interface SendResult {
  /** The HTTP status the receiver answered; null when it did not answer. */
  statusCode: number | null;
  /** Why there is no status (short, for the delivery log); null when there is one. */
  error: string | null;
  durationMs: number;
  /** Cut short by the signal. */
  aborted?: boolean;
}

const USER_AGENT = 'Charging-Access-Webhooks/1.0';
/** Read (and dropped) of an answer's body at most; receivers are told to answer quickly with little. */
const MAX_ANSWER_BYTES = 64 * 1024;

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** A connection failure in a few words: no stack, no address, nothing of our network. */
export function shortError(error: unknown, timeoutMs: number): string {
  const e = error as { code?: string; message?: string } | undefined;
  const code = e?.code ?? '';
  if (code === 'WEBHOOK_TIMEOUT') return `timed out: no answer within ${seconds(timeoutMs)}`;
  if (code === 'WEBHOOK_REFUSED') return e?.message ?? 'refused';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset by the receiver';
  if (code === 'ENOTFOUND') return 'host name not found';
  if (code === 'EAI_AGAIN') return 'host name lookup failed (temporary)';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ETIMEDOUT') return 'host unreachable';
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return `TLS handshake failed (${code})`;
  if (code === 'HPE_INVALID_CONSTANT' || code.startsWith('HPE_')) return 'the answer was not valid HTTP';
  return code ? `connection failed (${code})` : 'connection failed';
}

function refused(message: string): Error {
  return Object.assign(new Error(message), { code: 'WEBHOOK_REFUSED' });
}

/**
 * In production, the one address to connect to: the literal, or the first address of the host name once every
 * address it has is public. Outside production: none (the system's lookup).
 */
async function checkedAddress(url: URL, options: SendOptions): Promise<{ address: string; family: number } | undefined> {
  if (!options.policy.production) return undefined;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host)) {
    if (isNonPublicAddress(host)) throw refused('refused: the URL points to a non-public address');
    return { address: host, family: isIP(host) };
  }
  const addresses = await options.resolve(host);
  if (addresses.length === 0) throw Object.assign(new Error('no address'), { code: 'ENOTFOUND' });
  if (addresses.some((a) => isNonPublicAddress(a.address)))
    throw refused('refused: the host name resolves to a private, local or otherwise non-public address');
  return addresses[0];
}

/** A lookup that answers the checked address whatever it is asked (Node asks for all addresses when it races IPv4 and IPv6). */
function pinnedLookup(pinned: { address: string; family: number }): LookupFunction {
  return ((_hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (lookupOptions?.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  }) as LookupFunction;
}

function post(url: URL, requestOptions: RequestOptions, body: string, options: SendOptions): Promise<number> {
  const attempt = (firstTry: boolean) =>
    new Promise<number>((resolve, reject) => {
      const onResponse = (res: IncomingMessage) => {
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) res.destroy();
        });
        // The status is what counts; a body cut short or too long does not change it.
        res.on('close', () => resolve(res.statusCode ?? 0));
        res.on('error', () => {});
      };
      const req = url.protocol === 'https:' ? httpsRequest(url, requestOptions, onResponse) : httpRequest(url, requestOptions, onResponse);
      const timeout = () => Object.assign(new Error('timeout'), { code: 'WEBHOOK_TIMEOUT' });
      // The socket timeout covers silence; the deadline covers a receiver that trickles.
      const deadline = setTimeout(() => req.destroy(timeout()), options.timeoutMs);
      req.on('timeout', () => req.destroy(timeout()));
      req.on('error', (error) => (firstTry && isStaleConnection(req, error) ? attempt(false).then(resolve, reject) : reject(error)));
      const abort = () => req.destroy(Object.assign(new Error('aborted'), { code: 'WEBHOOK_ABORTED' }));
      options.signal?.addEventListener('abort', abort, { once: true });
      req.on('close', () => {
        clearTimeout(deadline);
        options.signal?.removeEventListener('abort', abort);
      });
      if (options.signal?.aborted) abort();
      req.end(body);
    });
  return attempt(true);
}

/** POSTs `body` with `headers` (the signature) to `target`; never throws. */
export async function sendEvent(target: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const url = new URL(target);
    const pinned = await checkedAddress(url, options);
    const requestOptions: RequestOptions = {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': USER_AGENT,
        ...headers,
      },
      timeout: options.timeoutMs,
      agent: outboundAgent(url),
      ...(pinned ? { lookup: pinnedLookup(pinned) } : {}),
    };
    const statusCode = await post(url, requestOptions, body, options);
    return { statusCode, error: null, durationMs: elapsed() };
  } catch (error) {
    if (options.signal?.aborted)
      return { statusCode: null, error: 'interrupted: the service shut down during the attempt', durationMs: elapsed(), aborted: true };
    return { statusCode: null, error: shortError(error, options.timeoutMs), durationMs: elapsed() };
  }
}
