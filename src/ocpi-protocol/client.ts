// Outbound OCPI calls: JSON over HTTP(S) with the credentials token, request
// and correlation ids, a timeout on every call, retries with backoff where the
// method allows it, and pagination that follows the peer's Link headers.
import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isStaleConnection, outboundAgent } from '../platform/http/outbound.ts';
import { authorizationHeader, HEADER, nextLink, type OcpiEnvelope } from './transport.ts';
import { isOcpiRecording, recordOcpiExchange, routingHeadersOf } from './validate.ts';

export interface OcpiPeerAuth {
  /** The credentials token we present to the peer. */
  token: string;
  /** Send the token unencoded (OCPI 2.1.1/2.2 peers); 2.2.1 wants Base64. */
  rawToken?: boolean;
  /** For a peer on loopback with a self-signed certificate: accept exactly this certificate (PEM). */
  pinnedCertificatePem?: string;
  /** Told how every call to this peer ended, after its retries (metrics). */
  observe?: (module: string, outcome: OcpiCallOutcome) => void;
  /** Who calls ('emsp', 'cpo-sandbox'): with recording on (CI), each call is recorded under this name; unnamed calls are not. */
  sender?: string;
  /** The OCPI version spoken with this peer, when known (recordings: a 2.1.1 exchange is held to 2.1.1's rules). */
  version?: string | null;
}

/** How a call ended: an OCPI success, a refusal (HTTP 4xx or OCPI 2xxx), 429, a server error (5xx, OCPI 3xxx/4xxx, not OCPI), no answer. */
export type OcpiCallOutcome = 'success' | 'rejected' | 'rate_limited' | 'error' | 'unreachable';

function outcomeOf(status: number, envelope: OcpiEnvelope<unknown> | undefined): OcpiCallOutcome {
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'error';
  if (status >= 400) return 'rejected';
  const code = envelope?.status_code;
  if (code === undefined) return 'error';
  if (code >= 1000 && code < 2000) return 'success';
  return code >= 2000 && code < 3000 ? 'rejected' : 'error';
}

export interface OcpiCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  /** The OCPI module called (versions, credentials, locations, tokens, commands, ...), as metrics show it. */
  module?: string;
  body?: unknown;
  headers?: Record<string, string>;
  correlationId?: string;
  /** Per attempt; default 10 s. */
  timeoutMs?: number;
  /** Further attempts after a transport failure, a timeout or an HTTP 5xx/429; default 2 for GET/PUT/DELETE, 0 otherwise. */
  retries?: number;
  /** Aborts the call (shutdown): the request is cut off and the call fails at once, without retries. */
  signal?: AbortSignal;
}

export interface OcpiReply<T = unknown> {
  status: number;
  headers: IncomingHttpHeaders;
  /** The envelope, when the body was one. */
  envelope?: OcpiEnvelope<T>;
  requestId: string;
}

/** The peer could not be reached, did not answer in time, or answered something that is not OCPI. */
export class OcpiTransportError extends Error {
  readonly httpStatus: number | undefined;
  readonly retryable: boolean;
  constructor(message: string, httpStatus: number | undefined, retryable: boolean) {
    super(message);
    this.name = 'OcpiTransportError';
    this.httpStatus = httpStatus;
    this.retryable = retryable;
  }
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

function send(auth: OcpiPeerAuth, call: OcpiCall, requestId: string): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const url = new URL(call.url);
  const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
  const headers: Record<string, string> = {
    authorization: authorizationHeader(auth.token, auth.rawToken),
    accept: 'application/json',
    'x-request-id': requestId,
    'x-correlation-id': call.correlationId ?? requestId,
    ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
    ...(call.headers ?? {}),
  };
  const timeoutMs = call.timeoutMs ?? 10_000;
  // A pooled, kept-alive connection; for a pinned certificate, its agent's TLS context accepts exactly that one.
  const options = { method: call.method, headers, timeout: timeoutMs, agent: outboundAgent(url, auth.pinnedCertificatePem) };
  const attempt = (firstTry: boolean) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
      const onResponse = (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) req.destroy(new OcpiTransportError('the answer is too large', res.statusCode, false));
          else chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      };
      const req = url.protocol === 'https:' ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
      // The socket timeout covers idle time; the overall deadline covers a peer that trickles bytes.
      const deadline = setTimeout(() => req.destroy(new OcpiTransportError(`no answer within ${timeoutMs} ms`, undefined, true)), timeoutMs);
      req.on('timeout', () => req.destroy(new OcpiTransportError(`no answer within ${timeoutMs} ms`, undefined, true)));
      // A kept-alive connection the peer had just closed: the request never reached it, send it once more on a new one.
      req.on('error', (error) => (firstTry && isStaleConnection(req, error) ? attempt(false).then(resolve, reject) : reject(error)));
      const abort = () => req.destroy(new OcpiTransportError('the call was aborted', undefined, false));
      call.signal?.addEventListener('abort', abort, { once: true });
      req.on('close', () => {
        clearTimeout(deadline);
        call.signal?.removeEventListener('abort', abort);
      });
      if (call.signal?.aborted) abort();
      req.end(payload);
    });
  return attempt(true);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** Backoff before attempt n+1: 200 ms, 800 ms, 3.2 s, ... with jitter. */
export const retryDelayMs = (attempt: number) => Math.round(200 * 4 ** attempt * (0.75 + Math.random() * 0.5));

/** Records a call of a named sender for the CI check (routing headers, status codes); only when recording is on. */
function recordCall(auth: OcpiPeerAuth, call: OcpiCall, reply: OcpiReply<unknown> | undefined): void {
  if (!auth.sender || !isOcpiRecording()) return;
  recordOcpiExchange({
    direction: 'request',
    sender: auth.sender,
    method: call.method,
    path: new URL(call.url).pathname,
    module: call.module ?? null,
    status: reply?.status ?? null,
    ocpi_status: reply?.envelope?.status_code ?? null,
    routing: routingHeadersOf(call.headers ?? {}),
    ...(auth.version && auth.version !== '2.2.1' ? { version: auth.version } : {}),
  });
}

export async function ocpiRequest<T = unknown>(auth: OcpiPeerAuth, call: OcpiCall): Promise<OcpiReply<T>> {
  if (auth.sender && isOcpiRecording()) {
    try {
      const reply = await observed<T>(auth, call);
      recordCall(auth, call, reply);
      return reply;
    } catch (error) {
      recordCall(auth, call, undefined);
      throw error;
    }
  }
  return observed<T>(auth, call);
}

async function observed<T>(auth: OcpiPeerAuth, call: OcpiCall): Promise<OcpiReply<T>> {
  if (!auth.observe) return requestWithRetries<T>(auth, call);
  const observe = auth.observe;
  const module = call.module ?? 'other';
  try {
    const reply = await requestWithRetries<T>(auth, call);
    observe(module, outcomeOf(reply.status, reply.envelope));
    return reply;
  } catch (error) {
    observe(module, 'unreachable');
    throw error;
  }
}

/** The call, retried where its method allows. */
async function requestWithRetries<T>(auth: OcpiPeerAuth, call: OcpiCall): Promise<OcpiReply<T>> {
  const retries = call.retries ?? (call.method === 'GET' || call.method === 'PUT' || call.method === 'DELETE' ? 2 : 0);
  for (let attempt = 0; ; attempt++) {
    const requestId = randomUUID();
    try {
      const { status, headers, text } = await send(auth, call, requestId);
      if ((status >= 500 || status === 429) && attempt < retries && !call.signal?.aborted) {
        await sleep(retryDelayMs(attempt));
        continue;
      }
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      const envelope =
        body && typeof body === 'object' && typeof (body as { status_code?: unknown }).status_code === 'number' ? (body as OcpiEnvelope<T>) : undefined;
      return { status, headers, requestId, ...(envelope ? { envelope } : {}) };
    } catch (error) {
      const transport =
        error instanceof OcpiTransportError
          ? error
          : new OcpiTransportError(`cannot reach ${new URL(call.url).host}: ${(error as Error).message}`, undefined, true);
      if (!transport.retryable || attempt >= retries || call.signal?.aborted) throw transport;
      await sleep(retryDelayMs(attempt));
    }
  }
}

/** The data of a successful answer (HTTP 2xx and OCPI 1xxx), else an error saying what the peer answered. */
export async function ocpiData<T>(auth: OcpiPeerAuth, call: OcpiCall): Promise<{ data: T | undefined; reply: OcpiReply<T> }> {
  const reply = await ocpiRequest<T>(auth, call);
  const code = reply.envelope?.status_code;
  if (reply.status < 200 || reply.status >= 300 || code === undefined || code < 1000 || code >= 2000) {
    throw new OcpiTransportError(
      `${call.method} ${new URL(call.url).pathname} answered HTTP ${reply.status}${code === undefined ? ' without an OCPI envelope' : ` with OCPI ${code}`}` +
        (reply.envelope?.status_message ? ` (${reply.envelope.status_message.slice(0, 200)})` : ''),
      reply.status,
      reply.status >= 500 || reply.status === 429,
    );
  }
  return { data: reply.envelope?.data, reply };
}

export interface PageOptions {
  date_from?: Date;
  date_to?: Date;
  limit?: number;
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Stops following Link headers after this many pages (a runaway peer); default 100,000. */
  maxPages?: number;
  /** The OCPI module paged (locations, tariffs, ...), as metrics show it. */
  module?: string;
}

/**
 * Every page of a paginated GET, following rel="next" Links. A peer that sends
 * no Link but an X-Total-Count beyond what it returned is paged by offset.
 */
export async function* ocpiPages<T>(auth: OcpiPeerAuth, url: string, options: PageOptions = {}): AsyncGenerator<{ items: T[]; total?: number }> {
  const first = new URL(url);
  if (options.date_from) first.searchParams.set('date_from', options.date_from.toISOString());
  if (options.date_to) first.searchParams.set('date_to', options.date_to.toISOString());
  if (options.limit) first.searchParams.set('limit', String(options.limit));
  let next: string | undefined = first.toString();
  let offset = 0;
  const maxPages = options.maxPages ?? 100_000;
  for (let pages = 0; next !== undefined && pages < maxPages; pages++) {
    const call: OcpiCall = {
      method: 'GET',
      url: next,
      ...(options.module ? { module: options.module } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
    };
    const { data, reply } = await ocpiData<T[]>(auth, call);
    if (data !== undefined && !Array.isArray(data))
      throw new OcpiTransportError(`GET ${new URL(next).pathname} answered data that is not a list`, reply.status, false);
    const items = data ?? [];
    const totalHeader = Number(reply.headers[HEADER.totalCount]);
    const total = Number.isFinite(totalHeader) ? totalHeader : undefined;
    yield total === undefined ? { items } : { items, total };
    offset += items.length;
    const link = nextLink(reply.headers[HEADER.link] as string | undefined);
    if (link) {
      // The next page is on the server we asked: our credentials token goes to no other host, whatever the Link says.
      const linked = new URL(link, next);
      if (linked.origin !== first.origin) {
        throw new OcpiTransportError(`GET ${first.pathname} answered a Link to another server (${linked.origin.slice(0, 100)})`, reply.status, false);
      }
      next = linked.toString();
    } else if (total !== undefined && items.length > 0 && offset < total) {
      const byOffset = new URL(first);
      byOffset.searchParams.set('offset', String(offset));
      next = byOffset.toString();
    } else next = undefined;
  }
}
