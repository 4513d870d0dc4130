// A charging session's live stream (GET .../charging-sessions/<id>/events, Server-Sent Events) as an async
// iterator over fetch's body stream, so it runs in browsers and Node alike and carries the bearer token (an
// EventSource cannot). When the connection drops or the service closes the stream (a restart), it reconnects with
// Last-Event-ID and goes on where it was: each event comes once, in order. Stop it with `break` or an AbortSignal.
import { ApiError, apiErrorOf } from './errors.ts';
import type { webhooks } from './generated/api.ts';
import { delayBeforeRetry, isRetryableStatus, type RetryPolicy, sleep } from './retry.ts';
import { fillPath, type Transport } from './transport.ts';

/** Every event type the service sends (webhooks and session streams). */
export type EventType = keyof webhooks;

/** The body of an event of type `T`: `{id, type, created_at, data: {object}, user_id}`, the object typed. */
export type EventOf<T extends EventType> = webhooks[T]['post']['requestBody']['content']['application/json'];

/** Any event, discriminated by `type`: `if (event.type === 'charging_session.progress') event.data.object.consumed_energy`. */
export type ClientEvent = { [T in EventType]: EventOf<T> }[EventType];

/** One Server-Sent Event of a session's stream: its `id` (resume after it with lastEventId) and the event. */
export interface StreamedEvent {
  /** The stream's sequence number of the event (the SSE `id:`). */
  id: string;
  event: ClientEvent;
}

export interface SessionEventsOptions {
  /** Ends the stream (the iteration then throws the signal's reason, an AbortError). */
  signal?: AbortSignal;
  /** Resume after this event id (a StreamedEvent.id you kept); default: every event of the session from its start. */
  lastEventId?: string;
  /**
   * A connection that received nothing (not even the service's keep-alive comment, every SSE_HEARTBEAT_MS, 15 s by
   * default) for this long is taken as dead and opened again; default 45 s.
   */
  idleTimeoutMs?: number;
}

const SESSION_EVENTS_PATH = '/api/v1/users/{user_id}/charging-sessions/{session_id}/events';

/** A Server-Sent Event as the wire has it (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
  /**
   * The reconnection delay the server asks for, in ms: its last `retry:` field on this stream so far (in this
   * message or before it, as an EventSource keeps it), undefined while it sent none.
   */
  retry: number | undefined;
}

/** A line ends at \n, \r\n or a lone \r. */
const LINE_END = /\r\n|\n|\r/;

/** Parses an event stream's text into messages, as an EventSource does: fields, multi-line data, comments ignored. */
export async function* parseEventStream(chunks: AsyncIterable<string>): AsyncGenerator<SseMessage, void, undefined> {
  let buffer = '';
  let message: { id?: string; event?: string; data: string[] } = { data: [] };
  let retry: number | undefined;
  // The last chunk ended with \r: that ended its line at once (the event must not wait for the server's next bytes),
  // so a \n opening the next chunk is the second half of that \r\n, not an empty line.
  let afterCr = false;
  for await (const chunk of chunks) {
    buffer += afterCr && chunk.startsWith('\n') ? chunk.slice(1) : chunk;
    if (chunk !== '') afterCr = false;
    for (let match = LINE_END.exec(buffer); match; match = LINE_END.exec(buffer)) {
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      if (match[0] === '\r' && buffer === '') afterCr = true;
      if (line === '') {
        if (message.data.length > 0) yield { id: message.id, event: message.event ?? 'message', data: message.data.join('\n'), retry };
        message = { data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') message.data.push(value);
      else if (field === 'event') message.event = value;
      else if (field === 'id' && !value.includes('\0')) message.id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
    }
  }
}

/** The response body's text, chunk by chunk; a chunk that does not come within `idleMs` ends it with an error. */
async function* textOf(body: ReadableStream<Uint8Array>, idleMs: number): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the stream was silent for ${idleMs} ms`)), idleMs);
      });
      const { done, value } = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
      if (done) return;
      yield decoder.decode(value, { stream: true });
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

interface Connection {
  transport: Transport;
  url: string;
  signal: AbortSignal;
  lastEventId: string | undefined;
}

/** Opens the stream once; the Response when it is a stream, else throws (ApiError for an error answer). */
async function connect(c: Connection): Promise<Response> {
  const token = typeof c.transport.token === 'function' ? await c.transport.token() : c.transport.token;
  const headers = new Headers({ ...c.transport.headers, authorization: `Bearer ${token}`, accept: 'text/event-stream' });
  if (c.lastEventId !== undefined) headers.set('last-event-id', c.lastEventId);
  const response = await c.transport.fetch(c.url, { method: 'GET', headers, signal: c.signal });
  if (!response.ok) throw await apiErrorOf(response);
  if (!response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await response.body?.cancel().catch(() => {});
    throw new ApiError(response.status, undefined, { requestId: response.headers.get('x-request-id') ?? undefined });
  }
  return response;
}

/** Whether a failed connection is worth opening again: network failures and "not now" answers, not 4xx refusals. */
function reconnectable(error: unknown): boolean {
  if (error instanceof ApiError) return isRetryableStatus(error.status, error.retryAfter) || error.status >= 500;
  return true;
}

/**
 * The session's events as they happen (first those before, unless lastEventId says where to resume). Failed
 * connections are retried with the client's retry policy (a 404, 401 or 400 is thrown at once); a connection that
 * worked resets the count, so a long stream survives any number of service restarts.
 */
export async function* sessionEvents(
  transport: Transport,
  userId: string,
  sessionId: string,
  options: SessionEventsOptions = {},
): AsyncGenerator<StreamedEvent, void, undefined> {
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  const url = `${transport.baseUrl}${fillPath(SESSION_EVENTS_PATH, { user_id: userId, session_id: sessionId })}`;
  const c: Connection = { transport, url, signal, lastEventId: options.lastEventId };
  const idleMs = options.idleTimeoutMs ?? 45_000;
  let failures = 0;
  let serverDelayMs: number | undefined;
  try {
    for (;;) {
      let messages: AsyncGenerator<SseMessage, void, undefined>;
      try {
        messages = parseEventStream(textOf((await connect(c)).body as ReadableStream<Uint8Array>, idleMs));
        failures = 0;
        for (let next = await messages.next(); !next.done; next = await messages.next()) {
          const message = next.value;
          if (message.retry !== undefined) serverDelayMs = message.retry;
          const event = parseEvent(message);
          if (message.id !== undefined) c.lastEventId = message.id;
          yield { id: message.id ?? '', event };
        }
      } catch (error) {
        if (signal.aborted) throw options.signal?.reason ?? error;
        if (error instanceof MalformedEventError) throw error;
        failures++;
        const delay = reconnectable(error) ? reconnectDelay(transport.retry, failures, error, serverDelayMs) : undefined;
        if (delay === undefined) throw error;
        await sleep(delay, signal);
        continue;
      }
      // The service ended the stream (it is stopping, or moving this client elsewhere): open it again where it was.
      await sleep(serverDelayMs ?? transport.retry.baseDelayMs, signal);
    }
  } finally {
    controller.abort();
  }
}

/** An event whose data is not the JSON the service sends: a bug somewhere, not a reason to reconnect. */
export class MalformedEventError extends Error {
  override readonly name = 'MalformedEventError';
}

function parseEvent(message: SseMessage): ClientEvent {
  try {
    return JSON.parse(message.data) as ClientEvent;
  } catch (error) {
    throw new MalformedEventError(`event ${message.id ?? '(no id)'} (${message.event}) has data that is not JSON`, { cause: error });
  }
}

function reconnectDelay(policy: RetryPolicy, failures: number, error: unknown, serverDelayMs: number | undefined): number | undefined {
  const retryAfter = error instanceof ApiError ? error.retryAfter : undefined;
  const delay = delayBeforeRetry(policy, failures, retryAfter);
  return delay === undefined || retryAfter !== undefined ? delay : Math.max(delay, serverDelayMs ?? 0);
}
