// The outbound half of a delivery: one signed POST to a client's receiver,
// over the service's kept-alive agents (src/platform/http/outbound.ts), within
// a deadline, never following redirects. In production the host name is
// resolved here and every address it has must be public; the connection is
// then made to that checked address (the agent's lookup is pinned to it), so a
// name that resolves differently a moment later (DNS rebinding) cannot reach
// inside. The deadline and the abort signal cover the whole attempt, the
// lookup included: a resolver that hangs ends the attempt at its deadline like
// a silent receiver, so an attempt never outlives its lease (delivery.ts) and
// no other process sends the same delivery while this one still could. What
// goes wrong is told in a few words, without internals.
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

interface SendOptions {
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
function shortError(error: unknown, timeoutMs: number): string {
  const e = error as { code?: string; message?: string } | undefined;
  const code = e?.code ?? '';
  if (code === 'WEBHOOK_TIMEOUT') return `timed out: no answer within ${seconds(timeoutMs)}`;
  if (code === 'WEBHOOK_LOOKUP_TIMEOUT') return `timed out: the host name was not resolved within ${seconds(timeoutMs)}`;
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

const timeout = () => Object.assign(new Error('timeout'), { code: 'WEBHOOK_TIMEOUT' });

/**
 * What `work` gives, or the signal's reason once it aborts first (started work cannot be cancelled: its result is
 * dropped). Already aborted: the work is not started.
 */
function untilAborted<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The host name's addresses, within the attempt's deadline (a lookup that outlasts it is a timeout of its own). */
async function resolveWithin(host: string, options: SendOptions, signal: AbortSignal): Promise<{ address: string; family: number }[]> {
  try {
    return await untilAborted(() => options.resolve(host), signal);
  } catch (error) {
    if ((error as { code?: string } | undefined)?.code !== 'WEBHOOK_TIMEOUT') throw error;
    throw Object.assign(new Error('lookup timeout'), { code: 'WEBHOOK_LOOKUP_TIMEOUT' });
  }
}

/**
 * In production, the one address to connect to: the literal, or the first address of the host name once every
 * address it has is public. Outside production: none (the system's lookup).
 */
async function checkedAddress(url: URL, options: SendOptions, signal: AbortSignal): Promise<{ address: string; family: number } | undefined> {
  if (!options.policy.production) return undefined;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host)) {
    if (isNonPublicAddress(host)) throw refused('refused: the URL points to a non-public address');
    return { address: host, family: isIP(host) };
  }
  const addresses = await resolveWithin(host, options, signal);
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

/**
 * The POST, cut off (destroyed with the signal's reason) when `signal` aborts: the attempt's deadline, which covers
 * a silent receiver and one that trickles alike, or shutdown.
 */
function post(url: URL, requestOptions: RequestOptions, body: string, signal: AbortSignal): Promise<number> {
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
      req.on('error', (error) => (firstTry && isStaleConnection(req, error) ? attempt(false).then(resolve, reject) : reject(error)));
      const abort = () => req.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal.addEventListener('abort', abort, { once: true });
      req.on('close', () => signal.removeEventListener('abort', abort));
      if (signal.aborted) abort();
      req.end(body);
    });
  return attempt(true);
}

/** POSTs `body` with `headers` (the signature) to `target`; never throws. */
export async function sendEvent(target: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // One signal for the whole attempt, from the lookup to the answer's end: its deadline, or the caller's abort.
  const cut = new AbortController();
  const timer = setTimeout(() => cut.abort(timeout()), options.timeoutMs);
  const shutdown = () => cut.abort(options.signal?.reason);
  if (options.signal?.aborted) shutdown();
  options.signal?.addEventListener('abort', shutdown, { once: true });
  const signal = cut.signal;
  try {
    const url = new URL(target);
    const pinned = await checkedAddress(url, options, signal);
    const requestOptions: RequestOptions = {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': USER_AGENT,
        ...headers,
      },
      agent: outboundAgent(url),
      ...(pinned ? { lookup: pinnedLookup(pinned) } : {}),
    };
    const statusCode = await post(url, requestOptions, body, signal);
    return { statusCode, error: null, durationMs: elapsed() };
  } catch (error) {
    if (options.signal?.aborted)
      return { statusCode: null, error: 'interrupted: the service shut down during the attempt', durationMs: elapsed(), aborted: true };
    return { statusCode: null, error: shortError(error, options.timeoutMs), durationMs: elapsed() };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', shutdown);
  }
}
