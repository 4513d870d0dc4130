// What the page asks of the API, in one place. The token is the playground's own: minted by the service for this
// page (GET /playground/token, src/playground/token.ts), short-lived, and fetched again before it expires.
import type { PriceGroup } from './price-words.ts';

export interface TileQuery {
  z: number;
  x: number[];
  y: number[];
  connector_types?: string[];
  only_available?: boolean;
  only_partners?: boolean;
  operators?: string[];
  power_groups?: string[];
  max_price?: number;
}

export interface TileFeature {
  geometry: { coordinates: string[] };
  properties: { count: number; expansion_zoom?: number; speed: string; status: string };
  station_id?: string;
  cluster_id?: string;
  custom_properties?: { is_partner: boolean };
  price_properties?: { price: string; type: string; currency: string };
}

export interface Station {
  id: string;
  name: string;
  address: string;
  coordinates: { latitude: string; longitude: string };
  opening_times: { twentyfourseven: boolean; regular_hours: { weekday: string; period_begin: string; period_end: string }[] };
  operator: { name: string; contact: { phone: string | null } };
  evses: { evse_id: string; status: string }[];
  price_groups: PriceGroup[];
  speed: string;
  status: string;
  is_partner: boolean;
}

export interface User {
  id: string;
  email?: string | null;
}

export interface PaymentMethod {
  id: string;
  type: string;
  default: boolean;
  card?: { brand: string; last4: string; expiration_date: string };
  paypal?: { email: string | null };
}

export interface Session {
  id: string;
  status: string;
  is_active: boolean;
  evse_id: string;
  station_id: string;
  duration: number | null;
  consumed_energy: string;
  estimated_cost: string | null;
  failure_reason: string | null;
  session_cost: { invoice_download: string | null; invoice_summary: string; currency: string };
  user_facing_session_prices: { currency: string };
  station_info: { station_name: string | null };
  version: number;
}

export interface Invoice {
  id: string;
  number: string;
  link: string;
  total: string;
  currency: string;
}

/** An event of a session's live stream: the body a webhook of it carries. */
export interface SessionEvent {
  id: string;
  type: string;
  data: { object: unknown };
}

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
