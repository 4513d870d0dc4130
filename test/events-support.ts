// What the client-event tests share: a Server-Sent Events client over real HTTP(S) that parses the stream as an
// EventSource would, the session's stored events once a stream has received them all, and a session row for a user
// (the stream tests drive its events themselves, the state machine's property test its status).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import * as chargingRepo from '../src/modules/charging/repository.ts';
import type { Queryable } from '../src/platform/db.ts';

export interface SseEvent {
  id: string;
  event: string;
  data: string;
}

export interface SseClient {
  status: number;
  headers: IncomingMessage['headers'];
  /** A problem body, when the answer was not a stream. */
  body: unknown;
  events: SseEvent[];
  comments: string[];
  /** Settles when the server ends the stream: 'end' (a clean end) or 'aborted' (cut off). */
  ended: Promise<'end' | 'aborted'>;
  /** Resolves once `count` events arrived (rejects after `timeoutMs`). */
  waitForEvents(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  waitForComments(count: number, timeoutMs?: number): Promise<void>;
  /** Starts reading a stream opened with `paused` (until then nothing is read off the connection). */
  resume(): void;
  close(): void;
}

async function until(check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Opens `url` (http or https) as an event stream with a bearer token; extra headers (Last-Event-ID) as given. With
 * `paused`, the stream's body is not read until resume(): a client that does not keep up.
 */
export function openSse(url: string, token: string, headers: Record<string, string> = {}, options: { ca?: string; paused?: boolean } = {}): Promise<SseClient> {
  const target = new URL(url);
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, ...headers }, ...(options.ca ? { ca: options.ca } : {}) },
      (res) => {
        const events: SseEvent[] = [];
        const comments: string[] = [];
        let buffer = '';
        let text = '';
        const streaming = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
        const ended = new Promise<'end' | 'aborted'>((settle) => {
          res.on('end', () => settle('end'));
          res.on('aborted', () => settle('aborted'));
          res.on('error', () => settle('aborted'));
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (!streaming) {
            text += chunk;
            return;
          }
          buffer += chunk;
          for (let cut = buffer.indexOf('\n\n'); cut !== -1; cut = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const fields: Partial<SseEvent> = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else if (line.startsWith('id: ')) fields.id = line.slice(4);
              else if (line.startsWith('event: ')) fields.event = line.slice(7);
              else if (line.startsWith('data: ')) fields.data = line.slice(6);
            }
            if (fields.data !== undefined) events.push({ id: fields.id ?? '', event: fields.event ?? 'message', data: fields.data });
          }
        });
        const client: SseClient = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: undefined,
          events,
          comments,
          ended,
          async waitForEvents(count, timeoutMs = 10_000) {
            await until(() => events.length >= count, `${count} events (got ${events.map((e) => e.event).join(', ')})`, timeoutMs);
            return events.slice(0, count);
          },
          waitForComments: (count, timeoutMs = 10_000) => until(() => comments.length >= count, `${count} comments`, timeoutMs),
          resume: () => res.resume(),
          close: () => req.destroy(),
        };
        if (streaming) {
          if (options.paused) res.pause();
          resolve(client);
          return;
        }
        res.on('end', () => {
          client.body = text ? JSON.parse(text) : undefined;
          resolve(client);
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * The session's events as stored, once the stream has received as many: a check of what a stream carries ("and
 * nothing else") compares it with these, rather than looking after a fixed pause.
 */
export async function storedOnceReceived(db: Queryable, sse: SseClient, sessionId: string, timeoutMs = 10_000) {
  const { rows } = await db.query<{ seq: number; type: string; body: string }>(
    'SELECT seq, type, body::text AS body FROM client_events WHERE session_id = $1 ORDER BY seq',
    [sessionId],
  );
  await sse.waitForEvents(rows.length, timeoutMs);
  return rows;
}

/**
 * A pending session of the user, written as the start saga writes it (no hold, no CPO) at `at`, on an EVSE of its
 * own: for tests that drive its events or its status themselves.
 */
export async function insertSessionFor(db: Queryable, clientId: string, userId: string, at: Date = new Date()): Promise<string> {
  const id = randomUUID();
  const row = await chargingRepo.insertSession(db, {
    id,
    client_id: clientId,
    user_id: userId,
    payment_method_id: 'pm_test',
    evse_id: `DE*ABC*E${id.slice(0, 8)}`,
    station_id: 'station-1',
    country_code: 'DE',
    party_id: 'ABC',
    operator_name: null,
    location_id: 'LOC1',
    evse_uid: `E-${id}`,
    connector_id: null,
    hold_reference: `session:${id}`,
    pre_authorization_amount: 5000,
    currency: 'EUR',
    tariff: { country_code: 'DE', party_id: 'ABC', id: 'T1', currency: 'EUR', elements: [], last_updated: at.toISOString() } as never,
    tariff_is_fallback: false,
    time_zone: 'UTC',
    starting_fee: null,
    station_info: {
      station_name: null,
      station_address: null,
      country: null,
      station_speed: null,
      connector_standard: null,
      connector_power: null,
      support_phone: null,
      latitude: null,
      longitude: null,
    },
    is_partner: false,
    logo_url: null,
    user_facing_session_prices: {
      kwh_price: null,
      time_price: null,
      session_fee: null,
      blocking_fee: null,
      starting_fee: null,
      grace_period_minutes: null,
      blocking_cap: null,
      currency: 'EUR',
    },
    created_at: at,
  });
  assert.ok(row);
  return id;
}
