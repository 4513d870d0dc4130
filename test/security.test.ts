// Authentication and tenant isolation of every protected route.
//
// One shared suite (protectedRouteSuite) runs against each entry of
// PROTECTED_ROUTES: the bearer-token checks for every route, and for routes that
// take an id also the ownership checks (another client's id, an unknown id and a
// malformed id all answer the same 404, and the other client's data is left
// unchanged). Modules that add routes add them to PROTECTED_ROUTES, with their
// own setup/ownerView/stored hooks when the resource is not a user; the last
// test of the file fails for a route of the OpenAPI document that is in none of
// the lists. The signed invoice links (no bearer token) have their own suite.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { recordEvent } from '../src/modules/events/outbox.ts';
import type { Driver } from './charging-support.ts';
import { assertProblem, setupTestApp, type TestAppOptions, type TestContext, type TestResponse } from './helpers.ts';
import { CARDS, connectCard } from './payments-support.ts';
import {
  activeSession,
  closeChargingApp,
  invoicedWithDebt,
  newDriverOf,
  pendingSession,
  rejectedSession,
  setupChargingApp,
  startableEvse,
} from './security-support.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** An API client as the tests see it. */
export interface Client {
  clientId: string;
  token: string;
  jti: string;
}

/** The app a route's tests run on: charging routes need the sandbox CPO network (and its catalogue). */
export type AppKind = 'plain' | 'charging';

export interface ProtectedRoute {
  method: HttpMethod;
  /** The route as the OpenAPI document names it (the coverage test matches it). */
  operation: string;
  /**
   * The request path; routes that act on one resource get its id (collection routes ignore it), and the client
   * that owns the resource (routes whose id sits under a user's id find the user from it).
   */
  path: (id: string, owner?: Client) => string;
  /** Whether the path names one resource: adds the ownership, unknown-id and malformed-id cases. */
  takesId: boolean;
  /** A valid request body, sent on every call (by the owner, by an intruder, with bad tokens). */
  body?: unknown;
  /** Instead of body: a valid body for the resource `id` on this app. */
  bodyFor?: (ctx: TestContext, id: string) => unknown;
  /** The status the owner gets with a valid token. */
  okStatus: number;
  /** Default: plain (no CPO network). */
  app?: AppKind;
  /** Creates, as `owner`, a resource the route can act on and returns its id. Default: a user with billing details. */
  setup?: (t: TestContext, owner: Client) => Promise<string>;
  /** The resource the ownership cases use, when it takes more than setup's (an invoice, a debt). Default: setup. */
  ownedSetup?: (t: TestContext, owner: Client) => Promise<string>;
  /** What the owner sees of the resource through the API. Default: the user and its billing details (both must answer 200). */
  ownerView?: (t: TestContext, owner: Client, id: string) => Promise<unknown>;
  /** Everything stored for a client that the route could change on resource `id`. Default: its users and billing details rows. */
  stored?: (t: TestContext, clientId: string, id: string) => Promise<unknown>;
  /** For an id that sits under a user's id: the path with the id under another user. Adds the cross-user case. */
  pathUnder?: (userId: string, id: string) => string;
  /** The resource belongs to no client (the station catalogue): another client reads it like the owner. */
  shared?: boolean;
  /** The schema's limit on the id (a query parameter): a longer id is a validation error (400), not a 404. */
  idMaxLength?: number;
  /** What the owner may get when the same request is repeated (a second start: 409 already_charging; a second stop: 409 already_stopped). */
  repeatStatuses?: number[];
  /** The answer is a stream that stays open (Server-Sent Events): only its status and headers are awaited. */
  stream?: boolean;
}

const USERS = '/api/v1/users';
const STATIONS = '/api/v1/stations';
const WEBHOOKS = '/api/v1/webhook-endpoints';

// ---------------------------------------------------------------------------
// Webhook endpoint routes: the id is an endpoint of the owner's, with one event delivery queued to it.

const deliveryOfEndpoint = new Map<string, string>();

async function endpointWithDelivery(t: TestContext, owner: Client): Promise<string> {
  const res = await t.call('POST', `${WEBHOOKS}/`, { token: owner.token, body: { url: 'https://hooks.example.com/owner', events: ['*'] } });
  assert.equal(res.status, 201, res.text);
  const event = await recordEvent(t.db, { clientId: owner.clientId, userId: null, type: 'debt.paid', object: { owner: true } }, t.clock.now());
  const { rows } = await t.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2', [event.body.id, res.body.id]);
  deliveryOfEndpoint.set(res.body.id, rows[0]?.id as string);
  return res.body.id;
}

async function endpointView(t: TestContext, owner: Client, id: string): Promise<unknown> {
  const endpoint = await t.call('GET', `${WEBHOOKS}/${id}/`, { token: owner.token });
  assert.equal(endpoint.status, 200, `the owner no longer sees its endpoint: ${endpoint.text}`);
  const deliveries = await t.call('GET', `${WEBHOOKS}/${id}/deliveries/`, { token: owner.token });
  assert.equal(deliveries.status, 200, deliveries.text);
  return { endpoint: endpoint.body, deliveries: deliveries.body };
}

async function webhookRows(t: TestContext, clientId: string): Promise<unknown> {
  const endpoints = await t.db.query('SELECT * FROM webhook_endpoints WHERE client_id = $1 ORDER BY id', [clientId]);
  const deliveries = await t.db.query('SELECT * FROM webhook_deliveries WHERE client_id = $1 ORDER BY id', [clientId]);
  const events = await t.db.query('SELECT id FROM client_events WHERE client_id = $1 ORDER BY seq', [clientId]);
  return { endpoints: endpoints.rows, deliveries: deliveries.rows, events: events.rows };
}

const webhookHooks = { setup: endpointWithDelivery, ownerView: endpointView, stored: webhookRows };

/** Every route that requires a bearer token. Later modules add theirs here. */
export const PROTECTED_ROUTES: ProtectedRoute[] = [
  { method: 'GET', operation: '/api/v1/users/', path: () => `${USERS}/`, takesId: false, okStatus: 200 },
  {
    method: 'POST',
    operation: '/api/v1/users/',
    path: () => `${USERS}/`,
    takesId: false,
    body: { email: 'new@example.com', locale: 'de' },
    okStatus: 201,
  },
  { method: 'GET', operation: '/api/v1/users/{user_id}/', path: (id) => `${USERS}/${id}/`, takesId: true, okStatus: 200 },
  {
    method: 'PATCH',
    operation: '/api/v1/users/{user_id}/',
    path: (id) => `${USERS}/${id}/`,
    takesId: true,
    body: { email: 'intruder@example.com', locale: 'de', custom_properties: null },
    okStatus: 200,
  },
  { method: 'DELETE', operation: '/api/v1/users/{user_id}/', path: (id) => `${USERS}/${id}/`, takesId: true, okStatus: 204 },
  {
    method: 'GET',
    operation: '/api/v1/users/{user_id}/billing-details/',
    path: (id) => `${USERS}/${id}/billing-details/`,
    takesId: true,
    okStatus: 200,
  },
  {
    method: 'PUT',
    operation: '/api/v1/users/{user_id}/billing-details/',
    path: (id) => `${USERS}/${id}/billing-details/`,
    takesId: true,
    body: { account_type: 'personal', first_name: 'Eve', last_name: 'Intruder', country: 'DE' },
    okStatus: 200,
  },
  {
    method: 'GET',
    operation: '/api/v1/users/{user_id}/setup-intents/',
    path: (id) => `${USERS}/${id}/setup-intents/`,
    takesId: true,
    okStatus: 200,
    stored: paymentRows,
  },
  {
    method: 'GET',
    operation: '/api/v1/users/{user_id}/payment-methods/',
    path: (id) => `${USERS}/${id}/payment-methods/`,
    takesId: true,
    okStatus: 200,
    setup: userWithCard,
    ownerView: userAndPaymentMethodsView,
    stored: paymentRows,
  },
  {
    method: 'DELETE',
    operation: '/api/v1/users/{user_id}/payment-methods/{pm_id}/',
    path: (id) => `${USERS}/${id}/payment-methods/${methodOfUser.get(id) ?? 'pm_unknown'}/`,
    takesId: true,
    okStatus: 204,
    setup: userWithCard,
    ownerView: userAndPaymentMethodsView,
    stored: paymentRows,
  },
  {
    method: 'POST',
    operation: '/api/v1/users/{user_id}/payment-methods/{pm_id}/default/',
    path: (id) => `${USERS}/${id}/payment-methods/${methodOfUser.get(id) ?? 'pm_unknown'}/default/`,
    takesId: true,
    okStatus: 204,
    setup: userWithCard,
    ownerView: userAndPaymentMethodsView,
    stored: paymentRows,
  },

  // Stations: bearer token only; the catalogue is the same for every client.
  { method: 'GET', operation: '/api/v1/stations/around/', path: () => `${STATIONS}/around/?latitude=52.52&longitude=13.405`, takesId: false, okStatus: 200 },
  { method: 'GET', operation: '/api/v1/stations/tile/', path: () => `${STATIONS}/tile/?x=0&y=0&z=0`, takesId: false, okStatus: 200 },
  { method: 'GET', operation: '/api/v1/stations/partners/', path: () => `${STATIONS}/partners/`, takesId: false, okStatus: 200 },
  ...(['station_id', 'evse_id'] as const).map(
    (type): ProtectedRoute => ({
      method: 'GET',
      operation: '/api/v1/stations/details/',
      path: (id) => `${STATIONS}/details/?id=${encodeURIComponent(id)}&type=${type}`,
      takesId: true,
      okStatus: 200,
      app: 'charging',
      shared: true,
      idMaxLength: 255,
      setup: (t) => aStation(t, type),
      ownerView: stationView(type),
      stored: async () => null,
    }),
  ),

  // Charging: the start (the user's id), the user's sessions, one session (user and session ids), debts, invoices.
  {
    method: 'POST',
    operation: '/api/v1/users/{user_id}/charging/start/',
    path: (id) => `${USERS}/${id}/charging/start/`,
    takesId: true,
    app: 'charging',
    bodyFor: (ctx, id) => ({ payment_method_id: methodOfUser.get(id) ?? 'pm_unknown', evse_id: startableEvse(ctx) }),
    okStatus: 201,
    repeatStatuses: [409],
    setup: driverUser,
    ownedSetup: userWithPendingSession,
    ownerView: sessionsView,
    stored: chargingRows,
  },
  {
    method: 'GET',
    operation: '/api/v1/users/{user_id}/charging-sessions/',
    path: (id) => `${USERS}/${id}/charging-sessions/`,
    takesId: true,
    app: 'charging',
    okStatus: 200,
    ownedSetup: userWithPendingSession,
    ownerView: sessionsView,
    stored: chargingRows,
  },
  {
    method: 'GET',
    operation: '/api/v1/users/{user_id}/charging-sessions/{session_id}/',
    ...sessionRoute((user, id) => `${USERS}/${user}/charging-sessions/${id}/`),
    okStatus: 200,
    setup: rejectedSessionOf,
    ownedSetup: pendingSessionOf,
  },
  {
    method: 'PATCH',
    operation: '/api/v1/users/{user_id}/charging-sessions/{session_id}/',
    ...sessionRoute((user, id) => `${USERS}/${user}/charging-sessions/${id}/`),
    body: { rates: 4 },
    okStatus: 200,
    setup: rejectedSessionOf,
    ownedSetup: pendingSessionOf,
  },
  {
    method: 'GET',
    operation: '/api/v1/users/{user_id}/charging-sessions/{session_id}/events',
    ...sessionRoute((user, id) => `${USERS}/${user}/charging-sessions/${id}/events`),
    okStatus: 200,
    stream: true,
    setup: rejectedSessionOf,
    ownedSetup: pendingSessionOf,
  },
  {
    method: 'POST',
    operation: '/api/v1/users/{user_id}/charging/stop/{session_id}/',
    ...sessionRoute((user, id) => `${USERS}/${user}/charging/stop/${id}/`),
    okStatus: 204,
    repeatStatuses: [409],
    setup: activeSessionOf,
  },
  {
    method: 'GET',
    operation: '/api/v1/users/{user_id}/charging/debts/',
    path: (id) => `${USERS}/${id}/charging/debts/`,
    takesId: true,
    app: 'charging',
    okStatus: 200,
    ownedSetup: userWithDebt,
    ownerView: listView('charging/debts'),
    stored: billingRows,
  },
  {
    method: 'GET',
    operation: '/api/v1/users/{user_id}/invoices/',
    path: (id) => `${USERS}/${id}/invoices/`,
    takesId: true,
    app: 'charging',
    okStatus: 200,
    ownedSetup: userWithDebt,
    ownerView: listView('invoices'),
    stored: billingRows,
  },

  // Webhook endpoints: the id is the endpoint's (retry: a delivery of it, or an unknown one under another id).
  { method: 'GET', operation: '/api/v1/webhook-endpoints/', path: () => `${WEBHOOKS}/`, takesId: false, okStatus: 200, ...webhookHooks },
  {
    method: 'POST',
    operation: '/api/v1/webhook-endpoints/',
    path: () => `${WEBHOOKS}/`,
    takesId: false,
    body: { url: 'https://hooks.example.com/intruder', events: ['*'] },
    okStatus: 201,
    ...webhookHooks,
  },
  { method: 'GET', operation: '/api/v1/webhook-endpoints/{endpoint_id}/', path: (id) => `${WEBHOOKS}/${id}/`, takesId: true, okStatus: 200, ...webhookHooks },
  {
    method: 'PATCH',
    operation: '/api/v1/webhook-endpoints/{endpoint_id}/',
    path: (id) => `${WEBHOOKS}/${id}/`,
    takesId: true,
    body: { url: 'https://hooks.example.com/intruder', events: ['ping'], description: 'intruder', enabled: false },
    okStatus: 200,
    ...webhookHooks,
  },
  {
    method: 'DELETE',
    operation: '/api/v1/webhook-endpoints/{endpoint_id}/',
    path: (id) => `${WEBHOOKS}/${id}/`,
    takesId: true,
    okStatus: 204,
    ...webhookHooks,
  },
  {
    method: 'POST',
    operation: '/api/v1/webhook-endpoints/{endpoint_id}/rotate-secret/',
    path: (id) => `${WEBHOOKS}/${id}/rotate-secret/`,
    takesId: true,
    okStatus: 200,
    ...webhookHooks,
  },
  {
    method: 'POST',
    operation: '/api/v1/webhook-endpoints/{endpoint_id}/test/',
    path: (id) => `${WEBHOOKS}/${id}/test/`,
    takesId: true,
    okStatus: 202,
    ...webhookHooks,
  },
  {
    method: 'GET',
    operation: '/api/v1/webhook-endpoints/{endpoint_id}/deliveries/',
    path: (id) => `${WEBHOOKS}/${id}/deliveries/`,
    takesId: true,
    okStatus: 200,
    ...webhookHooks,
  },
  {
    method: 'POST',
    operation: '/api/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry/',
    path: (id) => `${WEBHOOKS}/${id}/deliveries/${deliveryOfEndpoint.get(id) ?? randomUUID()}/retry/`,
    takesId: true,
    okStatus: 202,
    ...webhookHooks,
  },
];

/**
 * Routes of the OpenAPI document that take an id but no bearer token, and where their checks live. A route added
 * later that is in neither list, nor in PROTECTED_ROUTES, fails the coverage test at the end of this file.
 */
const SIGNED_LINK_OPERATIONS = ['GET /invoices/{invoice_id}/pdf'];
const CHECKED_ELSEWHERE: { prefix: string; why: string }[] = [
  { prefix: '/problems/', why: 'public pages documenting each error type: the parameter is an error code, not a resource' },
  { prefix: '/ocpi/', why: 'OCPI peers authenticate with their OCPI token (test/ocpi-handshake, ocpi-receivers, ocpi-network)' },
  { prefix: '/sandbox/', why: 'the sandbox payment pages take the intent’s client_secret (test/stripe-sandbox); served only with the sandbox processor' },
];

// ---------------------------------------------------------------------------
// Defaults for user-based routes

async function createUserWithBilling(t: TestContext, owner: Client): Promise<string> {
  const user = await t.call('POST', `${USERS}/`, {
    token: owner.token,
    body: { email: 'owner@example.com', locale: 'en', custom_properties: { external_id: `owner-${randomUUID()}` } },
  });
  assert.equal(user.status, 201, user.text);
  const billing = await t.call('PUT', `${USERS}/${user.body.id}/billing-details/`, {
    token: owner.token,
    body: { account_type: 'personal', first_name: 'Ada', last_name: 'Lovelace', country: 'GB' },
  });
  assert.equal(billing.status, 200, billing.text);
  return user.body.id;
}

async function userAndBillingView(t: TestContext, owner: Client, id: string): Promise<unknown> {
  const user = await t.call('GET', `${USERS}/${id}/`, { token: owner.token });
  assert.equal(user.status, 200, `the owner no longer sees its user: ${user.text}`);
  const billing = await t.call('GET', `${USERS}/${id}/billing-details/`, { token: owner.token });
  assert.equal(billing.status, 200, `the owner no longer sees its billing details: ${billing.text}`);
  return { user: user.body, billing: billing.body };
}

async function usersAndBillingRows(t: TestContext, clientId: string): Promise<unknown> {
  const users = await t.db.query('SELECT * FROM users WHERE client_id = $1 ORDER BY id', [clientId]);
  const billing = await t.db.query('SELECT * FROM billing_details WHERE client_id = $1 ORDER BY user_id', [clientId]);
  return { users: users.rows, billing: billing.rows };
}

// ---------------------------------------------------------------------------
// Payment-method routes: the id is the user's; the path adds that user's card
// (a mangled or unknown user id gets no card, and answers 404 for the user).

const methodOfUser = new Map<string, string>();

async function userWithCard(t: TestContext, owner: Client): Promise<string> {
  const userId = await createUserWithBilling(t, owner);
  const pm = await connectCard(t, { clientId: owner.clientId, token: owner.token, userId }, CARDS.visa);
  methodOfUser.set(userId, pm);
  return userId;
}

async function userAndPaymentMethodsView(t: TestContext, owner: Client, id: string): Promise<unknown> {
  const methods = await t.call('GET', `${USERS}/${id}/payment-methods/`, { token: owner.token });
  assert.equal(methods.status, 200, `the owner no longer sees its payment methods: ${methods.text}`);
  return { user: await userAndBillingView(t, owner, id), methods: methods.body };
}

async function paymentRows(t: TestContext, clientId: string): Promise<unknown> {
  const customers = await t.db.query('SELECT * FROM payment_customers WHERE client_id = $1 ORDER BY user_id', [clientId]);
  const methods = await t.db.query('SELECT * FROM payment_methods WHERE client_id = $1 ORDER BY id', [clientId]);
  return { users: await usersAndBillingRows(t, clientId), customers: customers.rows, methods: methods.rows };
}

// ---------------------------------------------------------------------------
// Charging routes: the id is the user's, or the session's (the path puts it under its user, or under the owner's
// last user for an unknown or malformed session id). Debts and invoices need a whole billed session: only the
// ownership cases make one (ownedSetup).

const userOfSession = new Map<string, string>();
const lastUserOf = new Map<string, string>();

async function driverOf(t: TestContext, owner: Client): Promise<Driver> {
  const driver = await newDriverOf(t, owner);
  methodOfUser.set(driver.userId, driver.pm);
  lastUserOf.set(owner.clientId, driver.userId);
  return driver;
}

const driverOfClient = new Map<string, Promise<Driver>>();

/** The owner's one driver, made on first use (with the owner's token of the moment: a test may replace it). */
async function ownersDriver(t: TestContext, owner: Client): Promise<Driver> {
  let made = driverOfClient.get(owner.clientId);
  if (!made) {
    made = driverOf(t, owner);
    driverOfClient.set(owner.clientId, made);
  }
  return { ...(await made), token: owner.token };
}

async function driverUser(t: TestContext, owner: Client): Promise<string> {
  return (await driverOf(t, owner)).userId;
}

async function userWithPendingSession(t: TestContext, owner: Client): Promise<string> {
  const driver = await driverOf(t, owner);
  await pendingSession(t, driver);
  return driver.userId;
}

async function userWithDebt(t: TestContext, owner: Client): Promise<string> {
  const { userId } = await invoicedWithDebt(t, owner);
  lastUserOf.set(owner.clientId, userId);
  return userId;
}

async function sessionOf(
  t: TestContext,
  owner: Client,
  start: (t: TestContext, driver: Driver) => Promise<string>,
  driverFor: (t: TestContext, owner: Client) => Promise<Driver> = ownersDriver,
): Promise<string> {
  const driver = await driverFor(t, owner);
  const id = await start(t, driver);
  userOfSession.set(id, driver.userId);
  return id;
}

/** A pending session with its hold authorized, of a driver of its own (one pending start per user and EVSE). */
function pendingSessionOf(t: TestContext, owner: Client): Promise<string> {
  return sessionOf(t, owner, pendingSession, driverOf);
}

function rejectedSessionOf(t: TestContext, owner: Client): Promise<string> {
  return sessionOf(t, owner, rejectedSession);
}

function activeSessionOf(t: TestContext, owner: Client): Promise<string> {
  return sessionOf(t, owner, activeSession);
}

/** The hooks every route on one session shares; `path` puts a session id under a user id. */
function sessionRoute(path: (userId: string, id: string) => string) {
  return {
    path: (id: string, owner?: Client) => path(userOfSession.get(id) ?? (owner && lastUserOf.get(owner.clientId)) ?? ':user_id', id),
    pathUnder: path,
    takesId: true,
    app: 'charging' as const,
    ownerView: sessionView,
    stored: sessionRow,
  };
}

/** What a session shows that a call could change (not its live progress: energy, cost, timestamps). */
const sessionState = (s: { id: string; status: string; rates: number | null; evse_id: string; is_active: boolean }) => ({
  id: s.id,
  status: s.status,
  rates: s.rates,
  evse_id: s.evse_id,
  is_active: s.is_active,
});

async function sessionView(t: TestContext, owner: Client, id: string): Promise<unknown> {
  const session = await t.call('GET', `${USERS}/${userOfSession.get(id)}/charging-sessions/${id}/`, { token: owner.token });
  assert.equal(session.status, 200, `the owner no longer sees its session: ${session.text}`);
  return sessionState(session.body);
}

async function sessionsView(t: TestContext, owner: Client, userId: string): Promise<unknown> {
  const sessions = await t.call('GET', `${USERS}/${userId}/charging-sessions/`, { token: owner.token });
  assert.equal(sessions.status, 200, `the owner no longer sees its sessions: ${sessions.text}`);
  return { count: sessions.body.count, results: sessions.body.results.map(sessionState) };
}

function listView(list: 'charging/debts' | 'invoices') {
  return async (t: TestContext, owner: Client, userId: string): Promise<unknown> => {
    const res = await t.call('GET', `${USERS}/${userId}/${list}/`, { token: owner.token });
    assert.equal(res.status, 200, `the owner no longer sees its ${list}: ${res.text}`);
    assert.equal(res.body.count, 1, `the owner has one of ${list}`);
    return res.body;
  };
}

async function sessionRow(t: TestContext, clientId: string, id: string): Promise<unknown> {
  const { rows } = await t.db.query('SELECT id, user_id, status, rates FROM charging_sessions WHERE client_id = $1 AND id = $2', [clientId, id]);
  return rows;
}

/** The client's sessions and holds: a refused start creates none (their statuses move on by themselves). */
async function chargingRows(t: TestContext, clientId: string): Promise<unknown> {
  const sessions = await t.db.query('SELECT id, user_id FROM charging_sessions WHERE client_id = $1 ORDER BY id', [clientId]);
  const holds = await t.db.query('SELECT reference FROM payment_holds WHERE client_id = $1 ORDER BY reference', [clientId]);
  return { sessions: sessions.rows, holds: holds.rows };
}

async function billingRows(t: TestContext, clientId: string): Promise<unknown> {
  const debts = await t.db.query('SELECT session_id, status, amount FROM charging_debts WHERE client_id = $1 ORDER BY session_id', [clientId]);
  const invoices = await t.db.query('SELECT id, session_id, gross FROM invoices WHERE client_id = $1 ORDER BY id', [clientId]);
  return { debts: debts.rows, invoices: invoices.rows };
}

// ---------------------------------------------------------------------------
// Station details: any station of the sandbox network's catalogue.

async function aStation(t: TestContext, type: 'station_id' | 'evse_id'): Promise<string> {
  const { rows } = await t.db.query<{ id: string }>(
    type === 'station_id'
      ? 'SELECT station_id::text AS id FROM ocpi_locations ORDER BY id LIMIT 1'
      : 'SELECT evse_id AS id FROM ocpi_evses WHERE evse_id IS NOT NULL ORDER BY evse_id LIMIT 1',
  );
  assert.ok(rows[0], 'the catalogue has a station');
  return rows[0].id;
}

function stationView(type: 'station_id' | 'evse_id') {
  return async (t: TestContext, owner: Client, id: string): Promise<unknown> => {
    const res = await t.call('GET', `${STATIONS}/details/?id=${encodeURIComponent(id)}&type=${type}`, { token: owner.token });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
}

// ---------------------------------------------------------------------------
// Helpers

/** An app of each kind, and how to make and close one more (the expired-token test moves its own clock). */
const APPS: Record<AppKind, { open(options: TestAppOptions): Promise<TestContext>; close(ctx: TestContext | undefined): Promise<void> }> = {
  plain: { open: setupTestApp, close: async (ctx) => ctx?.close() },
  charging: { open: setupChargingApp, close: closeChargingApp },
};
/** Per kind: t with auth cache TTL 0 (revocation and disabling take effect at once), slow with the default TTL (2 s). */
const apps = {} as Record<AppKind, { t: TestContext; slow: TestContext }>;

/** The signed-link suite's app (its clock moves) and the links of two invoices of two clients. */
let signed: { ctx: TestContext; links: [URL, URL] };

before(async () => {
  const [plain, slowPlain, charging, slowCharging] = await Promise.all([
    APPS.plain.open({ authCacheTtlMs: 0 }),
    APPS.plain.open({}),
    APPS.charging.open({ authCacheTtlMs: 0 }),
    APPS.charging.open({}),
    // Made now, while the other apps start, rather than after every protected route has run.
    signedLinks().then((made) => {
      signed = made;
    }),
  ]);
  apps.plain = { t: plain, slow: slowPlain };
  apps.charging = { t: charging, slow: slowCharging };
});
after(async () => {
  await Promise.all([
    ...(Object.keys(APPS) as AppKind[]).flatMap((kind) => [APPS[kind].close(apps[kind]?.t), APPS[kind].close(apps[kind]?.slow)]),
    APPS.charging.close(signed?.ctx),
  ]);
});

/** Runs `work` when fewer than two other tests hold an app of their own: each app holds database connections. */
const oneMoreApp = (() => {
  let free = 2;
  const waiting: (() => void)[] = [];
  return async (work: () => Promise<void>): Promise<void> => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
})();

function label(route: ProtectedRoute): string {
  return `${route.method} ${route.path(':id')}`;
}

type Auth = { token?: string; authorization?: string };

async function request(ctx: TestContext, route: ProtectedRoute, path: string, id: string, auth: Auth): Promise<TestResponse> {
  const body = route.bodyFor ? route.bodyFor(ctx, id) : route.body;
  if (route.stream) {
    // A stream that stays open: its status and headers, then it is let go (an error answer is read whole).
    const headers: Record<string, string> = {};
    if (auth.token !== undefined) headers.authorization = `Bearer ${auth.token}`;
    if (auth.authorization !== undefined) headers.authorization = auth.authorization;
    const res = await ctx.app.inject({ method: route.method, url: path, headers, payloadAsStream: true });
    const payload = res.stream();
    if (res.statusCode === 200) {
      payload.destroy();
      return { status: 200, headers: res.headers, body: undefined, text: '' };
    }
    let text = '';
    for await (const chunk of payload) text += String(chunk);
    return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
  }
  return ctx.call(route.method, path, {
    ...(auth.token !== undefined ? { token: auth.token } : {}),
    ...(auth.authorization !== undefined ? { headers: { authorization: auth.authorization } } : {}),
    ...(body !== undefined ? { body } : {}),
  });
}

/** Calls the route on resource `id` of `owner` (whose token need not be the one sent). */
function send(ctx: TestContext, route: ProtectedRoute, id: string, auth: Auth, owner: Client): Promise<TestResponse> {
  return request(ctx, route, route.path(id, owner), id, auth);
}

/** 401 unauthorized problem with a Bearer challenge. */
function assertUnauthorized(res: TestResponse): void {
  assertProblem(res, 401, 'unauthorized');
  const challenge = res.headers['www-authenticate'];
  assert.equal(typeof challenge, 'string', 'WWW-Authenticate is present');
  assert.match(String(challenge), /^Bearer(\s|$)/);
}

function privateKeyOf(ctx: TestContext): KeyObject {
  const key = ctx.keys.privateKey;
  assert.ok(key, 'the harness has a private signing key');
  return key;
}

/** The claims the service issues for this client's token, as of the harness clock. */
function claimsOf(ctx: TestContext, client: Client): JWTPayload {
  return {
    iss: ctx.config.jwt.issuer,
    aud: ctx.config.jwt.audience,
    sub: client.clientId,
    jti: client.jti,
    iat: Math.floor(ctx.clock.now().getTime() / 1000),
  };
}

function signEdDSA(payload: JWTPayload, key: KeyObject): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' }).sign(key);
}

function without(payload: JWTPayload, claim: keyof JWTPayload): JWTPayload {
  const copy = { ...payload };
  delete copy[claim];
  return copy;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const otherEd25519Key = generateKeyPairSync('ed25519').privateKey;
const es256Key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

/**
 * Polls every 250 ms until the call answers 401; fails if a call sent more than `limitMs` after the change is still
 * accepted. Time is taken when each call is sent: how long the call itself then takes (a charging start on a
 * loaded machine: seconds) is not the cache's doing.
 */
async function refusedWithin(call: () => Promise<TestResponse>, allowedBefore: number[], limitMs = 5_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const sent = performance.now();
    const res = await call();
    const elapsed = sent - started;
    if (res.status === 401) {
      assertUnauthorized(res);
      assert.ok(elapsed <= limitMs, `refused only after ${Math.round(elapsed)} ms`);
      return elapsed;
    }
    assert.ok(allowedBefore.includes(res.status), `unexpected ${res.status} while waiting for the refusal: ${res.text}`);
    assert.ok(elapsed <= limitMs, `still accepted (${res.status}) after ${Math.round(elapsed)} ms`);
    await sleep(250);
  }
}

// ---------------------------------------------------------------------------
// The shared suite

/** A fresh owner and resource on `ctx`, and checks that a call is refused with 401 (changing nothing stored) or accepted. */
async function arrangeOn(route: ProtectedRoute, ctx: TestContext, make = hooksOf(route).setup) {
  const { setup, stored } = hooksOf(route);
  const owner = await ctx.newClient();
  const id = await make(ctx, owner);
  return {
    owner,
    id,
    async refused(auth: Auth, message?: string) {
      const before = await stored(ctx, owner.clientId, id);
      const res = await send(ctx, route, id, auth, owner);
      assertUnauthorized(res);
      assert.deepEqual(await stored(ctx, owner.clientId, id), before, `a refused ${label(route)} changed nothing${message ? ` (${message})` : ''}`);
    },
    /** The call succeeds on a fresh resource of the owner (a DELETE consumes its target). */
    async accepted(auth: Auth) {
      const res = await send(ctx, route, await setup(ctx, owner), auth, owner);
      assert.equal(res.status, route.okStatus, res.text);
    },
  };
}

/** The route's apps (filled in once the file's before hook has made them), and arrangeOn over them. */
function appsFor(route: ProtectedRoute) {
  const kind = route.app ?? 'plain';
  const on = { kind, t: undefined as unknown as TestContext, slow: undefined as unknown as TestContext };
  before(() => {
    on.t = apps[kind].t;
    on.slow = apps[kind].slow;
  });
  return {
    on,
    arrange: (ctx: TestContext = on.t, make?: (t: TestContext, owner: Client) => Promise<string>) => arrangeOn(route, ctx, make),
  };
}

export function protectedRouteSuite(route: ProtectedRoute): void {
  describe(label(route), () => {
    describe('authentication', () => {
      tokenFormCases(route);
      tokenClaimCases(route);
      revocationCases(route);
    });
    describe('with the default auth cache TTL', () => cachedRevocationCases(route));
    if (!route.takesId) return;
    describe('ownership', () => {
      otherOwnerCases(route);
      unknownIdCases(route);
    });
  });
}

/** Tokens that are malformed, unsigned, signed with another key or algorithm, or altered. */
function tokenFormCases(route: ProtectedRoute): void {
  const { on, arrange } = appsFor(route);
  test(`control: the owner's token, and a token crafted with the same claims and key, get ${route.okStatus}`, async () => {
    const { owner, accepted } = await arrange();
    await accepted({ token: owner.token });
    await accepted({ token: await signEdDSA(claimsOf(on.t, owner), privateKeyOf(on.t)) });
  });

  test('no Authorization header is 401', async () => {
    const { refused } = await arrange();
    await refused({});
    await refused({ authorization: '' }, 'empty header');
  });

  test('a malformed Authorization header is 401', async () => {
    const { owner, refused } = await arrange();
    const headers = [
      'Bearer',
      'Bearer ',
      'Basic xyz',
      `Basic ${Buffer.from(`${owner.clientId}:secret`).toString('base64')}`,
      'Bearer garbage',
      'Bearer a.b.c',
      'Bearer ...',
      owner.token,
      `Token ${owner.token}`,
      `Bearer ${owner.token} extra`,
      `Bearer ${owner.token},${owner.token}`,
      `Bearer ${owner.token.split('.').slice(0, 2).join('.')}`,
    ];
    for (const authorization of headers) await refused({ authorization }, authorization.slice(0, 40));
  });

  test('alg none (unsecured JWT) is 401', async () => {
    const { owner, refused } = await arrange();
    const claims = claimsOf(on.t, owner);
    const unsecured = new UnsecuredJWT(claims).encode();
    await refused({ token: unsecured }, 'alg none, empty signature');
    // A genuine signature under a header that claims alg none.
    const signature = owner.token.split('.')[2];
    await refused({ token: `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.${signature}` }, 'alg none, kept signature');
    await refused({ token: `${b64({ alg: 'NONE' })}.${b64(claims)}.` }, 'alg NONE');
  });

  test('a token signed with another Ed25519 key is 401', async () => {
    const { owner, refused } = await arrange();
    await refused({ token: await signEdDSA(claimsOf(on.t, owner), otherEd25519Key) });
  });

  test('a valid token with its payload altered is 401', async () => {
    const { owner, refused } = await arrange();
    const other = await on.t.newClient();
    const [header, , signature] = owner.token.split('.');
    await refused({ token: `${header}.${b64({ ...claimsOf(on.t, owner), sub: other.clientId, jti: other.jti })}.${signature}` });
  });

  test('HS256 signed with the Ed25519 public key bytes (algorithm confusion) is 401', async () => {
    const { owner, refused } = await arrange();
    const publicKey = createPublicKey(privateKeyOf(on.t));
    const secrets: [string, Uint8Array][] = [
      ['PEM', Buffer.from(publicKey.export({ type: 'spki', format: 'pem' }))],
      ['DER', publicKey.export({ type: 'spki', format: 'der' })],
      ['raw', Buffer.from(String(publicKey.export({ format: 'jwk' }).x), 'base64url')],
    ];
    for (const [name, secret] of secrets) {
      const token = await new SignJWT(claimsOf(on.t, owner)).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(secret);
      await refused({ token }, `HS256 with the ${name} public key`);
    }
  });

  test('an algorithm other than EdDSA (ES256, validly signed) is 401', async () => {
    const { owner, refused } = await arrange();
    await refused({ token: await new SignJWT(claimsOf(on.t, owner)).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(es256Key) });
  });
}

/** Validly signed tokens whose claims are wrong: expired, another issuer or audience, missing or unknown ids. */
function tokenClaimCases(route: ProtectedRoute): void {
  const { on, arrange } = appsFor(route);
  test('an expired token is 401 (after the 30 s clock tolerance)', async () => {
    // Its own app and clock: moving the clock must not race the other (concurrent) tests.
    await oneMoreApp(async () => {
      const ctx = await APPS[on.kind].open({ authCacheTtlMs: 0 });
      try {
        const { owner, accepted, refused } = await arrange(ctx);
        const issued = await ctx.clients.issueToken(owner.clientId, { expiresInMs: 60_000 });
        await accepted({ token: issued.token });
        ctx.clock.advance(60_000 + 25_000); // expired, but within the tolerance
        await accepted({ token: issued.token });
        ctx.clock.advance(10_000); // 35 s past expiry
        await refused({ token: issued.token });
        await accepted({ token: owner.token }); // the client's token without expiry still works
      } finally {
        await APPS[on.kind].close(ctx);
      }
    });
  });

  test('a wrong issuer is 401', async () => {
    const { owner, refused } = await arrange();
    await refused({ token: await signEdDSA({ ...claimsOf(on.t, owner), iss: `${on.t.config.jwt.issuer}-other` }, privateKeyOf(on.t)) });
    await refused({ token: await signEdDSA(without(claimsOf(on.t, owner), 'iss'), privateKeyOf(on.t)) }, 'no iss');
  });

  test('a wrong audience is 401', async () => {
    const { owner, refused } = await arrange();
    await refused({ token: await signEdDSA({ ...claimsOf(on.t, owner), aud: `${on.t.config.jwt.audience}-other` }, privateKeyOf(on.t)) });
    await refused({ token: await signEdDSA({ ...claimsOf(on.t, owner), aud: ['someone-else'] }, privateKeyOf(on.t)) }, 'audience list');
    await refused({ token: await signEdDSA(without(claimsOf(on.t, owner), 'aud'), privateKeyOf(on.t)) }, 'no aud');
  });

  test('a token missing sub, jti or iat, or with a non-UUID sub, is 401', async () => {
    const { owner, refused } = await arrange();
    for (const claim of ['sub', 'jti', 'iat'] as const) {
      await refused({ token: await signEdDSA(without(claimsOf(on.t, owner), claim), privateKeyOf(on.t)) }, `no ${claim}`);
    }
    await refused({ token: await signEdDSA({ ...claimsOf(on.t, owner), sub: 'not-a-uuid' }, privateKeyOf(on.t)) }, 'sub not a UUID');
  });

  test('an unknown client is 401', async () => {
    const { owner, refused } = await arrange();
    await refused({ token: await signEdDSA({ ...claimsOf(on.t, owner), sub: randomUUID() }, privateKeyOf(on.t)) });
  });

  test("another client's token id under this client's subject is 401", async () => {
    const { owner, refused } = await arrange();
    const other = await on.t.newClient();
    await refused({ token: await signEdDSA({ ...claimsOf(on.t, owner), jti: other.jti }, privateKeyOf(on.t)) });
  });

  test('a validly signed token whose jti was never issued (so could never be revoked) is 401', async () => {
    const { owner, refused } = await arrange();
    await refused({ token: await signEdDSA({ ...claimsOf(on.t, owner), jti: randomUUID() }, privateKeyOf(on.t)) });
  });
}

/** Revoked tokens and disabled clients, refused at once (auth cache TTL 0). */
function revocationCases(route: ProtectedRoute): void {
  const { on, arrange } = appsFor(route);
  test('a revoked token is 401 at once with cache TTL 0; the client’s other tokens still work', async () => {
    const { owner, accepted, refused } = await arrange();
    const second = await on.t.clients.issueToken(owner.clientId);
    const revoked = owner.token;
    await accepted({ token: revoked });
    await on.t.clients.revokeToken(owner.jti);
    owner.token = second.token; // the owner sets up further resources with its other token
    await refused({ token: revoked });
    await accepted({ token: second.token });
  });

  test('a disabled client is 401 at once with cache TTL 0, with every token', async () => {
    const { owner, accepted, refused } = await arrange();
    const second = await on.t.clients.issueToken(owner.clientId);
    await accepted({ token: owner.token });
    await accepted({ token: second.token });
    await on.t.clients.disableClient(owner.clientId);
    await refused({ token: owner.token });
    await refused({ token: second.token });
  });
}

/** Revoked tokens and disabled clients, refused within 5 s with the default auth cache TTL. */
function cachedRevocationCases(route: ProtectedRoute): void {
  const { on, arrange } = appsFor(route);
  test('a revoked token is refused within 5 s', async (node) => {
    assert.equal(on.slow.config.authCacheTtlMs, 2_000);
    const { owner, id, accepted } = await arrange(on.slow);
    await accepted({ token: owner.token }); // the credential check is now cached
    await on.slow.clients.revokeToken(owner.jti);
    const elapsed = await refusedWithin(() => send(on.slow, route, id, { token: owner.token }, owner), [route.okStatus, 404, ...(route.repeatStatuses ?? [])]);
    node.diagnostic(`refused ${Math.round(elapsed)} ms after the change`);
  });

  test('a disabled client is refused within 5 s', async (node) => {
    const { owner, id, accepted } = await arrange(on.slow);
    await accepted({ token: owner.token });
    await on.slow.clients.disableClient(owner.clientId);
    const elapsed = await refusedWithin(() => send(on.slow, route, id, { token: owner.token }, owner), [route.okStatus, 404, ...(route.repeatStatuses ?? [])]);
    node.diagnostic(`refused ${Math.round(elapsed)} ms after the change`);
  });
}

/** The route's hooks, with the defaults of a route on one user. */
function hooksOf(route: ProtectedRoute) {
  const setup = route.setup ?? createUserWithBilling;
  return {
    setup,
    owned: route.ownedSetup ?? setup,
    ownerView: route.ownerView ?? userAndBillingView,
    stored: route.stored ?? usersAndBillingRows,
  };
}

/** Another client's id, and the id under another user: the same 404 as an unknown id, nothing changed. */
function otherOwnerCases(route: ProtectedRoute): void {
  const { on, arrange } = appsFor(route);
  const { setup, owned, ownerView, stored } = hooksOf(route);
  if (route.shared) {
    test('the id belongs to no client: another client reads it like the owner', async () => {
      const { owner, id } = await arrange();
      const other = await on.t.newClient();
      const res = await send(on.t, route, id, { token: other.token }, owner);
      assert.equal(res.status, route.okStatus, res.text);
      assert.deepEqual(res.body, await ownerView(on.t, owner, id));
    });
  } else {
    test("another client's id is 404 like an unknown id, and the owner's data is unchanged", async () => {
      const { owner, id } = await arrange(on.t, owned);
      const intruder = await on.t.newClient();
      const viewBefore = await ownerView(on.t, owner, id);
      const storedBefore = await stored(on.t, owner.clientId, id);

      const res = await send(on.t, route, id, { token: intruder.token }, owner);
      assertProblem(res, 404, 'not_found');
      assert.ok(!res.text.includes('owner@example.com') && !res.text.includes('Lovelace'), 'the answer reveals nothing of the resource');
      const unknown = await send(on.t, route, randomUUID(), { token: intruder.token }, owner);
      assertProblem(unknown, 404, 'not_found');
      assert.equal(res.body.detail, unknown.body.detail, 'indistinguishable from an unknown id');

      assert.deepEqual(await ownerView(on.t, owner, id), viewBefore, "the owner's view is unchanged");
      assert.deepEqual(await stored(on.t, owner.clientId, id), storedBefore, "the owner's stored data is unchanged");
      assert.equal((await send(on.t, route, await setup(on.t, owner), { token: owner.token }, owner)).status, route.okStatus, 'control: the owner may');
    });
  }

  const pathUnder = route.pathUnder;
  if (pathUnder) {
    test("the id under another user (another client's, or another of the owner's) is 404 like an unknown id", async () => {
      const { owner, id } = await arrange(on.t, owned);
      const intruder = await on.t.newClient();
      const viewBefore = await ownerView(on.t, owner, id);
      const storedBefore = await stored(on.t, owner.clientId, id);
      for (const [caller, user] of [
        [intruder, await createUserWithBilling(on.t, intruder)],
        [owner, await createUserWithBilling(on.t, owner)],
      ] as const) {
        const res = await request(on.t, route, pathUnder(user, id), id, { token: caller.token });
        assertProblem(res, 404, 'not_found');
        const unknown = await request(on.t, route, pathUnder(user, randomUUID()), id, { token: caller.token });
        assertProblem(unknown, 404, 'not_found');
        assert.equal(res.body.detail, unknown.body.detail, 'indistinguishable from an unknown id');
      }
      assert.deepEqual(await ownerView(on.t, owner, id), viewBefore, "the owner's view is unchanged");
      assert.deepEqual(await stored(on.t, owner.clientId, id), storedBefore, "the owner's stored data is unchanged");
    });
  }
}

/** Unknown and malformed ids: the same 404, the real resource untouched. */
function unknownIdCases(route: ProtectedRoute): void {
  const { on, arrange } = appsFor(route);
  const { owned, ownerView } = hooksOf(route);
  test('an unknown id is 404', async () => {
    const { owner } = await arrange();
    for (const id of [randomUUID(), '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']) {
      assertProblem(await send(on.t, route, id, { token: owner.token }, owner), 404, 'not_found');
    }
  });

  test('a malformed id is 404 with the same detail as an unknown id', async () => {
    const { owner, id } = await arrange(on.t, owned);
    const viewBefore = await ownerView(on.t, owner, id);
    const unknown = await send(on.t, route, randomUUID(), { token: owner.token }, owner);
    assertProblem(unknown, 404, 'not_found');
    const malformed = [
      'not-a-uuid',
      '12345',
      'null',
      id.replaceAll('-', ''), // PostgreSQL would accept these spellings of the real id
      `{${id}}`,
      `${id}0`,
      id.slice(0, -1),
      '%20',
      "1'%20OR%20'1'%3D'1",
      'x'.repeat(200),
    ];
    for (const bad of malformed.filter((spelling) => spelling !== id)) {
      const res = await send(on.t, route, bad, { token: owner.token }, owner);
      assert.equal(res.status, 404, `${bad.slice(0, 40)}: ${res.status} ${res.text.slice(0, 200)}`);
      assertProblem(res, 404, 'not_found');
      assert.equal(res.body.detail, unknown.body.detail, `${bad.slice(0, 40)} is indistinguishable from an unknown id`);
    }
    assert.deepEqual(await ownerView(on.t, owner, id), viewBefore, 'the real resource is untouched');
  });

  const limit = route.idMaxLength;
  test(
    limit === undefined
      ? 'an over-long malformed id (201+ characters) is 404 with the same detail as an unknown id'
      : `an over-long malformed id (201+ characters) is 404 with the same detail as an unknown id up to the schema's ${limit}, a validation error beyond`,
    async () => {
      const { owner } = await arrange();
      const unknown = await send(on.t, route, randomUUID(), { token: owner.token }, owner);
      for (const bad of ['x'.repeat(201), 'x'.repeat(1_000)]) {
        const res = await send(on.t, route, bad, { token: owner.token }, owner);
        if (limit !== undefined && bad.length > limit) {
          assertProblem(res, 400, 'validation_error');
          continue;
        }
        assertProblem(res, 404, 'not_found');
        assert.equal(res.body.detail, unknown.body.detail);
      }
    },
  );
}

// Every test makes its own clients and resources, so the routes and their cases run concurrently.
describe('protected routes', { concurrency: true }, () => {
  for (const route of PROTECTED_ROUTES) protectedRouteSuite(route);
});

// ---------------------------------------------------------------------------
// The signed invoice links: no bearer token; the signature is the credential. A forged, expired or another
// invoice's signature, and an unknown or malformed invoice id, all answer the same 404.

async function signedLinks(): Promise<{ ctx: TestContext; links: [URL, URL] }> {
  const ctx = await APPS.charging.open({});
  const linkOf = async (client: Client) => {
    const { userId } = await invoicedWithDebt(ctx, client);
    const invoices = await ctx.call('GET', `${USERS}/${userId}/invoices/`, { token: client.token });
    assert.equal(invoices.status, 200, invoices.text);
    return new URL(invoices.body.results[0].link);
  };
  try {
    return { ctx, links: await Promise.all([linkOf(await ctx.newClient()), linkOf(await ctx.newClient())]) };
  } catch (error) {
    await APPS.charging.close(ctx);
    throw error;
  }
}

describe('GET /invoices/:id/pdf (signed link)', () => {
  let ctx: TestContext;
  let links: [URL, URL];
  before(() => {
    ({ ctx, links } = signed);
  });

  const invoiceOf = (link: URL) => link.pathname.split('/')[2] as string;
  const get = (invoiceId: string, expires: string | null, signature: string | null) =>
    ctx.call('GET', `/invoices/${invoiceId}/pdf?expires=${expires}&signature=${signature}`);
  // The first character: all six of its bits are signature bits (the last one of 43 carries two padding bits,
  // so changing 'A' to 'B' there decoded to the same signature about once in 16 links).
  const forge = (signature: string) => `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;

  /** The 404 an unknown invoice gets (with a signature made for another one). */
  async function unknownAnswer(): Promise<TestResponse> {
    const [link] = links;
    const unknown = await get(randomUUID(), link.searchParams.get('expires'), link.searchParams.get('signature'));
    assertProblem(unknown, 404, 'not_found');
    return unknown;
  }

  test('control: each link answers its PDF, without a bearer token', async () => {
    for (const link of links) {
      const res = await ctx.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'application/pdf');
    }
  });

  test('a forged signature, or the expiry moved, is 404 like an unknown invoice', async () => {
    const unknown = await unknownAnswer();
    for (const link of links) {
      const id = invoiceOf(link);
      const expires = link.searchParams.get('expires') as string;
      const signature = link.searchParams.get('signature') as string;
      for (const [name, res] of [
        ['one character changed', await get(id, expires, forge(signature))],
        ['a made-up signature', await get(id, expires, 'AAAA')],
        ['an empty signature', await get(id, expires, '')],
        ['a later expiry', await get(id, String(Number(expires) + 86_400), signature)],
        ['an earlier expiry', await get(id, String(Number(expires) - 1), signature)],
      ] as const) {
        assertProblem(res, 404, 'not_found');
        assert.equal(res.body.detail, unknown.body.detail, name);
      }
    }
  });

  test("another invoice's signature (another client's invoice) is 404 like an unknown invoice", async () => {
    const unknown = await unknownAnswer();
    const [a, b] = links;
    for (const [target, signed] of [
      [a, b],
      [b, a],
    ] as const) {
      const res = await get(invoiceOf(target), signed.searchParams.get('expires'), signed.searchParams.get('signature'));
      assertProblem(res, 404, 'not_found');
      assert.equal(res.body.detail, unknown.body.detail);
    }
  });

  test('a malformed invoice id is 404 like an unknown one', async () => {
    const unknown = await unknownAnswer();
    const [link] = links;
    const id = invoiceOf(link);
    for (const bad of [id.replaceAll('-', ''), id.toUpperCase(), `{${id}}`, `${id}0`, 'null', '%20', 'x'.repeat(201)]) {
      const res = await get(bad, link.searchParams.get('expires'), link.searchParams.get('signature'));
      assertProblem(res, 404, 'not_found');
      assert.equal(res.body.detail, unknown.body.detail, bad.slice(0, 40));
    }
  });

  // Last: it moves the clock of this suite's app.
  test('an expired link is 404 like an unknown invoice', async () => {
    const unknown = await unknownAnswer();
    ctx.clock.advance(ctx.config.invoicing.linkTtlMs + 1_000);
    for (const link of links) {
      const res = await ctx.call('GET', `${link.pathname}${link.search}`);
      assertProblem(res, 404, 'not_found');
      assert.equal(res.body.detail, unknown.body.detail);
    }
  });
});

// ---------------------------------------------------------------------------
// Coverage: every route of the OpenAPI document that takes an id (a path parameter, or a query parameter named
// id or *_id), and every route behind the bearer token, is in one of the lists above.

interface Operation {
  key: string;
  path: string;
  bearer: boolean;
  takesId: boolean;
}

async function documentedOperations(ctx: TestContext): Promise<Operation[]> {
  const res = await ctx.call('GET', '/api/v1/openapi.json');
  assert.equal(res.status, 200, res.text);
  type Op = { parameters?: { in: string; name: string }[]; security?: Record<string, unknown>[] };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(res.body.paths as Record<string, Record<string, Op>>)) {
    for (const [method, op] of Object.entries(methods)) {
      operations.push({
        key: `${method.toUpperCase()} ${path}`,
        path,
        bearer: (op.security ?? []).some((s) => 'bearerAuth' in s),
        takesId: (op.parameters ?? []).some((p) => p.in === 'path' || (p.in === 'query' && /(^|_)id$/.test(p.name))),
      });
    }
  }
  return operations;
}

describe('coverage', () => {
  test('every documented route that takes an id or a bearer token is covered by a suite of this file', async () => {
    const operations = await documentedOperations(apps.plain.t);
    const protectedKeys = new Map(PROTECTED_ROUTES.map((r) => [`${r.method} ${r.operation}`, r]));
    const uncovered: string[] = [];
    for (const op of operations) {
      const route = protectedKeys.get(op.key);
      if (route) {
        assert.ok(op.bearer, `${op.key} is in PROTECTED_ROUTES but the document asks no bearer token for it`);
        assert.equal(route.takesId, op.takesId, `${op.key}: takesId`);
      } else if (op.bearer) {
        uncovered.push(`${op.key} (bearer token): add it to PROTECTED_ROUTES`);
      } else if (op.takesId && !SIGNED_LINK_OPERATIONS.includes(op.key) && !CHECKED_ELSEWHERE.some((c) => op.path.startsWith(c.prefix))) {
        uncovered.push(`${op.key} (takes an id, no bearer token): give it a suite here, or say in CHECKED_ELSEWHERE where it is checked`);
      }
    }
    assert.deepEqual(uncovered, [], 'routes without security tests');
    const documented = new Set(operations.map((op) => op.key));
    for (const key of [...protectedKeys.keys(), ...SIGNED_LINK_OPERATIONS]) assert.ok(documented.has(key), `${key} is listed here but not documented`);
  });
});
