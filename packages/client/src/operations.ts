// Types over the generated `paths` (src/generated/api.ts): which paths a method has, what a call of one takes
// (path and query parameters, the JSON body) and what it answers. Nothing here exists at run time.
import type { paths } from './generated/api.ts';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The API's paths that have `M` (e.g. PathsWith<'post'>: every path you can POST to). */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: { responses: unknown } } ? P : never;
}[keyof paths];

/** The operation `M P` as openapi-typescript generated it. */
export type Operation<M extends Method, P extends PathsWith<M>> = paths[P] extends { [K in M]: infer O } ? O : never;

type Parameters<O> = O extends { parameters: infer X } ? X : object;
type IsEmpty<T> = [T] extends [never] ? true : [T] extends [undefined] ? true : false;

type PathPart<O> = Parameters<O> extends { path: infer X } ? (IsEmpty<X> extends true ? object : { path: X }) : object;

type QueryPart<O> =
  Parameters<O> extends { query: infer Q }
    ? IsEmpty<Q> extends true
      ? object
      : { query: Q }
    : Parameters<O> extends { query?: infer Q }
      ? IsEmpty<Q> extends true
        ? object
        : { query?: Q }
      : object;

type JsonOf<R> = [NonNullable<R>] extends [never] ? never : NonNullable<R> extends { content: { 'application/json': infer B } } ? B : never;

/** A body the document leaves open (`unknown`: the routes that take none, or `{}`) is optional. */
type BodyPart<O> = O extends { requestBody?: infer R }
  ? IsEmpty<JsonOf<R>> extends true
    ? object
    : unknown extends JsonOf<R>
      ? { body?: JsonOf<R> }
      : object extends Pick<O, 'requestBody'>
        ? { body?: JsonOf<R> }
        : { body: JsonOf<R> }
  : object;

/** What every call takes besides the operation's own parameters. */
export interface CallOptions {
  /** Cancels the call (and its retries, and the wait between them). */
  signal?: AbortSignal;
  /**
   * Writes only. The Idempotency-Key to send: by default a new random key per call (the same on each of its
   * retries). Pass your own to make a call safe to repeat across restarts of your app, or `false` to send none (the
   * write is then never retried).
   */
  idempotencyKey?: string | false;
  /** Extra headers (e.g. X-Request-Id to correlate with the service's logs). */
  headers?: Record<string, string>;
}

/** The options of a call of `M P`: `path` and `query` as the operation declares them, `body` for writes. */
export type RequestOptions<M extends Method, P extends PathsWith<M>> = PathPart<Operation<M, P>> &
  QueryPart<Operation<M, P>> &
  BodyPart<Operation<M, P>> &
  CallOptions;

/** `[options]` when every option is optional, else `[options]` required: calls without parameters stay short. */
export type OptionsArg<M extends Method, P extends PathsWith<M>> =
  object extends RequestOptions<M, P> ? [options?: RequestOptions<M, P>] : [options: RequestOptions<M, P>];

type SuccessStatus = 200 | 201 | 202 | 203 | 204;

/** The JSON a successful call of `M P` answers (undefined for 204 No Content). */
export type ResponseOf<M extends Method, P extends PathsWith<M>> =
  Operation<M, P> extends { responses: infer R }
    ? {
        [S in keyof R]: S extends SuccessStatus ? (R[S] extends { content: { 'application/json': infer J } } ? J : undefined) : never;
      }[keyof R]
    : never;

/** The GET paths that answer a page (`{count, next, previous, results}`): what `paginate` walks. */
export type PaginatedPath = {
  [P in PathsWith<'get'>]: ResponseOf<'get', P> extends { results: unknown[]; next: string | null } ? P : never;
}[PathsWith<'get'>];

/** One result of the paginated list at `P`. */
export type ItemOf<P extends PaginatedPath> = ResponseOf<'get', P> extends { results: (infer T)[] } ? T : never;
