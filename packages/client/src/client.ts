// createClient: the typed client of the Charging Access API. It only assembles: calls are transport.ts, lists
// pagination.ts, the live session stream events.ts.
import { type SessionEventsOptions, type StreamedEvent, sessionEvents } from './events.ts';
import type { CallOptions, ItemOf, Method, OptionsArg, PaginatedPath, PathsWith, ResponseOf } from './operations.ts';
import { items, type Page, pages } from './pagination.ts';
import { type RetryOptions, retryPolicy } from './retry.ts';
import { type Answer, type Call, send, type TokenSource, type Transport } from './transport.ts';

export interface ClientOptions {
  /**
   * The service's address, e.g. `https://localhost:8443` (PUBLIC_BASE_URL); paths start with /api/v1/. An address
   * ending in /api/v1 is taken as the same.
   */
  baseUrl: string;
  /** The API client's bearer token, or a function giving the current one (asked before every request). */
  token: TokenSource;
  /** Retries of calls that are safe to repeat (see retry.ts); `false` turns them off. */
  retry?: RetryOptions | false;
  /** How long one request may take before it is abandoned (and retried when safe); default 30 s. */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Headers sent on every request. */
  headers?: Record<string, string>;
  /** Makes the Idempotency-Key of a write that was given none (default: a random UUID). */
  idempotencyKey?: () => string;
}

/** A random UUID v4 from crypto.getRandomValues (randomUUID is missing outside secure contexts in browsers). */
export function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function transportOf(options: ClientOptions): Transport {
  let url: URL | undefined;
  try {
    url = new URL(options.baseUrl);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new TypeError(`baseUrl must be an absolute URL such as https://localhost:8443 (got ${JSON.stringify(options.baseUrl)})`);
  }
  const baseUrl = url.href.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  if (!options.token) throw new TypeError('token is required: the bearer token of your API client');
  return {
    baseUrl,
    token: options.token,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    retry: retryPolicy(options.retry),
    timeoutMs: options.timeoutMs ?? 30_000,
    headers: options.headers ?? {},
    newIdempotencyKey: options.idempotencyKey ?? randomKey,
  };
}

/** A call's options once their types have done their work. */
type LooseOptions = CallOptions & { path?: unknown; query?: unknown; body?: unknown };

const METHODS: Record<Method, Call['method']> = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' };

/** The transport's call for `method path` with the typed options of that operation. */
function callOf(method: Method, path: string, options: LooseOptions = {}): Call {
  return {
    method: METHODS[method],
    path,
    pathParams: options.path as Record<string, string> | undefined,
    query: options.query as Record<string, unknown> | undefined,
    body: options.body,
    idempotencyKey: options.idempotencyKey,
    signal: options.signal,
    headers: options.headers,
  };
}

type Caller<M extends Method> = <P extends PathsWith<M>>(path: P, ...options: OptionsArg<M, P>) => Promise<ResponseOf<M, P>>;

export interface Client {
  /** GET `path`: its JSON, typed. `client.get('/api/v1/users/{user_id}/', { path: { user_id } })`. */
  get: Caller<'get'>;
  post: Caller<'post'>;
  put: Caller<'put'>;
  patch: Caller<'patch'>;
  delete: Caller<'delete'>;
  /** Any call, answering the Response too (its headers: RateLimit-Remaining, Idempotent-Replayed, X-Request-Id). */
  request<M extends Method, P extends PathsWith<M>>(method: M, path: P, ...options: OptionsArg<M, P>): Promise<Answer<ResponseOf<M, P>>>;
  /** Every result of a paginated list, page after page: `for await (const user of client.paginate('/api/v1/users/'))`. */
  paginate<P extends PaginatedPath>(path: P, ...options: OptionsArg<'get', P>): AsyncGenerator<ItemOf<P>, void, undefined>;
  /** The pages themselves (`count`, and `results` a page at a time). */
  pages<P extends PaginatedPath>(path: P, ...options: OptionsArg<'get', P>): AsyncGenerator<Page<ItemOf<P>>, void, undefined>;
  /**
   * A charging session's live events (Server-Sent Events), reconnecting with Last-Event-ID as needed:
   * `for await (const { event } of client.sessionEvents(userId, sessionId)) { ... }`; `break` or the signal ends it.
   */
  sessionEvents(userId: string, sessionId: string, options?: SessionEventsOptions): AsyncGenerator<StreamedEvent, void, undefined>;
}

export function createClient(options: ClientOptions): Client {
  const transport = transportOf(options);
  const caller =
    <M extends Method>(method: M): Caller<M> =>
    async (path, ...rest) =>
      (await send(transport, callOf(method, path, rest[0] as LooseOptions))).data as never;
  return {
    get: caller('get'),
    post: caller('post'),
    put: caller('put'),
    patch: caller('patch'),
    delete: caller('delete'),
    request: (method, path, ...rest) => send(transport, callOf(method, path, rest[0] as LooseOptions)),
    paginate: (path, ...rest) => items(transport, callOf('get', path, rest[0] as LooseOptions)),
    pages: (path, ...rest) => pages(transport, callOf('get', path, rest[0] as LooseOptions)),
    sessionEvents: (userId, sessionId, options) => sessionEvents(transport, userId, sessionId, options),
  };
}
