// What the page asks of the API, in one place. The token is the playground's own: minted by the service for this
// page (GET /playground/token, src/playground/token.ts), short-lived, and fetched again before it expires.
// The objects are the SDK's types, generated from the API's OpenAPI document.
import type { ChargingSession, ClientEvent, Invoice, PaymentMethod, RequestOptions, Station, StationTile, User } from '@charging-access/client';

export type { Invoice, PaymentMethod, Station, User };
export type Session = ChargingSession;
export type TileQuery = NonNullable<RequestOptions<'get', '/api/v1/stations/tile/'>['query']>;
export type TileFeature = StationTile['features'][number];

/** An event of a session's live stream (the body a webhook of it carries), typed by `type`. */
export type SessionEvent = ClientEvent;

export interface PlaygroundApi {
  tile(query: TileQuery, signal?: AbortSignal): Promise<TileFeature[]>;
  partners(): Promise<{ name: string }[]>;
  station(stationId: string): Promise<Station>;
  /** The user, or undefined when it no longer exists (deleted, or made with another demo client). */
  user(userId: string): Promise<User | undefined>;
  /** A user with the billing details charging needs. */
  createDemoUser(): Promise<User>;
  paymentMethods(userId: string): Promise<PaymentMethod[]>;
  /** A setup intent for a card, to confirm on the payment sandbox's page. */
  setupIntent(userId: string): Promise<{ id: string; client_secret: string }>;
  sessions(userId: string): Promise<Session[]>;
  start(userId: string, paymentMethodId: string, evseId: string): Promise<Session>;
  stop(userId: string, sessionId: string): Promise<void>;
  /** The session's events, from the first, as they happen, until `signal` aborts. */
  sessionEvents(userId: string, sessionId: string, signal: AbortSignal): AsyncIterable<SessionEvent>;
}
