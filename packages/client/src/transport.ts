// One call of the API: the URL from the path template and parameters, the bearer token, the Idempotency-Key of a
// write, the JSON body; then the answer, or an ApiError, with retries as retry.ts decides.
import { ApiError, apiErrorOf, retryAfterSeconds, TimeoutError } from './errors.ts';
import { IDEMPOTENT_WRITES } from './generated/operations.ts';
import { delayBeforeRetry, isRetryableStatus, type RetryPolicy, sleep } from './retry.ts';

export type TokenSource = string | (() => string | Promise<string>);

/** What every call of one client shares. */
export interface Transport {
  /** The service's address, without a trailing slash (paths start with /api/v1/). */
  baseUrl: string;
  token: TokenSource;
  fetch: typeof fetch;
  retry: RetryPolicy;
  timeoutMs: number;
  headers: Record<string, string>;
  newIdempotencyKey: () => string;
}

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path template, as in the OpenAPI document: /api/v1/users/{user_id}/. */
  path: string;
  pathParams?: Record<string, string | number> | undefined;
  query?: Record<string, unknown> | undefined;
  body?: unknown;
  idempotencyKey?: string | false | undefined;
  signal?: AbortSignal | undefined;
  headers?: Record<string, string> | undefined;
  /** Replaces the query string (a `next` link's); the path and everything else stay. */
  search?: string | undefined;
}

export interface Answer<T> {
  data: T;
  response: Response;
}

/** The path template filled in: each `{name}` from `params`, encoded; a missing one is an error, not "undefined". */
export function fillPath(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined || value === null || value === '') throw new TypeError(`path parameter ${name} is missing for ${template}`);
    return encodeURIComponent(String(value));
  });
}

/** The query string as the API reads it: arrays as repeated parameters, booleans as true/false, absent values left out. */
function queryString(query: Record<string, unknown> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      params.append(name, String(item));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function urlOf(transport: Transport, call: Call): string {
  return `${transport.baseUrl}${fillPath(call.path, call.pathParams)}${call.search ?? queryString(call.query)}`;
}

async function headersOf(transport: Transport, call: Call, idempotencyKey: string | undefined): Promise<Headers> {
  const token = typeof transport.token === 'function' ? await transport.token() : transport.token;
  const headers = new Headers({ ...transport.headers, ...call.headers });
  headers.set('authorization', `Bearer ${token}`);
  headers.set('accept', 'application/json, application/problem+json');
  if (call.body !== undefined) headers.set('content-type', 'application/json');
  if (idempotencyKey !== undefined) headers.set('idempotency-key', idempotencyKey);
  return headers;
}

/** The Idempotency-Key a call sends: none for reads and for writes the API takes none on, else the caller's or a new one. */
function idempotencyKeyOf(transport: Transport, call: Call): string | undefined {
  if (call.method === 'GET' || call.idempotencyKey === false) return undefined;
  if (!IDEMPOTENT_WRITES.has(`${call.method} ${call.path}`)) return undefined;
  return call.idempotencyKey ?? transport.newIdempotencyKey();
}

/** fetch with the client's timeout joined to the caller's signal. */
async function fetchOnce(transport: Transport, url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<Response> {
  const timeout = AbortSignal.timeout(transport.timeoutMs);
  try {
    return await transport.fetch(url, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (error) {
    if (timeout.aborted && !signal?.aborted) throw new TimeoutError(`${init.method} ${url}: no answer within ${transport.timeoutMs} ms`, { cause: error });
    throw error;
  }
}

/** Whether a failure without an answer may be retried: not the caller's own abort. */
function retryableFailure(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return false;
  return error instanceof TimeoutError || error instanceof TypeError; // fetch's network failure is a TypeError
}

async function readBody<T>(response: Response): Promise<T> {
  const text = await response.text();
  if (response.status === 204 || text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(response.status, undefined, { requestId: response.headers.get('x-request-id') ?? undefined });
  }
}

/** Sends `call`, retrying what retry.ts allows; the answer's JSON, or throws ApiError (or the last network failure). */
export async function send<T>(transport: Transport, call: Call): Promise<Answer<T>> {
  const idempotencyKey = idempotencyKeyOf(transport, call);
  const safe = call.method === 'GET' || idempotencyKey !== undefined;
  const url = urlOf(transport, call);
  const body = call.body === undefined ? undefined : JSON.stringify(call.body);
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetchOnce(transport, url, { method: call.method, headers: await headersOf(transport, call, idempotencyKey), body }, call.signal);
    } catch (error) {
      const delay = safe && retryableFailure(error, call.signal) ? delayBeforeRetry(transport.retry, attempt, undefined) : undefined;
      if (delay === undefined) throw error;
      await sleep(delay, call.signal);
      continue;
    }
    if (response.ok) return { data: await readBody<T>(response), response };
    const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
    const delay = safe && isRetryableStatus(response.status, retryAfter) ? delayBeforeRetry(transport.retry, attempt, retryAfter) : undefined;
    if (delay === undefined) throw await apiErrorOf(response);
    await response.body?.cancel().catch(() => {});
    await sleep(delay, call.signal);
  }
}
