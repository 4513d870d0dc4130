// What the shared security suite (security.test.ts) needs to own on the charging routes: an app with a sandbox
// CPO network, and for one API client a driver, a charging session (pending, or active on a free EVSE) and an
// invoice with an unpaid debt. Everything is made through the API, except the CPO's CDR, which is handed to the
// charging module as the OCPI receiver hands it over.
import assert from 'node:assert/strict';
import type { SessionRow } from '../src/modules/charging/repository.ts';
import { insertCdr } from '../src/modules/ocpi/repository.ts';
import type { CDR } from '../src/ocpi-protocol/cdrs.ts';
import type { CpoSandbox, Scenario } from '../src/sandbox/cpo/index.ts';
import { type Driver, newDriver, scenarioEvse, startCpoNetwork } from './charging-support.ts';
import { setupTestApp, type TestAppOptions, type TestContext, type TestResponse } from './helpers.ts';
import { CARDS, eventually, USERS } from './payments-support.ts';

/** An API client as the security suite sees it (its token may be replaced during a test). */
export interface ApiClient {
  clientId: string;
  token: string;
}

const networks = new Map<TestContext, CpoSandbox>();

/** An app listening for the sandbox CPO network it is connected to, with its job runner started. */
export async function setupChargingApp(options: TestAppOptions = {}): Promise<TestContext> {
  const ctx = await setupTestApp({ listen: 0, ...options });
  // Simulated time runs 10x (not the usual 600x): a car takes minutes to fill, so an active session stays
  // active while a test compares what is stored before and after a refused call.
  networks.set(ctx, await startCpoNetwork(ctx, { timeCompression: 10 }));
  ctx.jobs.start();
  return ctx;
}

export async function closeChargingApp(ctx: TestContext | undefined): Promise<void> {
  if (!ctx) return;
  await networks.get(ctx)?.close();
  networks.delete(ctx);
  await ctx.close();
}

function evseOf(ctx: TestContext, scenario: Scenario): string {
  const cpo = networks.get(ctx);
  assert.ok(cpo, 'the app was set up with setupChargingApp');
  return scenarioEvse(cpo, scenario);
}

/**
 * The EVSE the start route is called with: NORESULT accepts every START_SESSION and then never answers, so the
 * session stays pending and the EVSE free however many tests start on it at once.
 */
export const startableEvse = (ctx: TestContext) => evseOf(ctx, 'NORESULT');

/** A new user of `client` with complete billing details and a card. */
export function newDriverOf(ctx: TestContext, client: ApiClient, card: string = CARDS.visa): Promise<Driver> {
  // newDriver adds a user to the owner it is given; the owner's own userId is not used.
  return newDriver(ctx, { owner: { clientId: client.clientId, token: client.token, userId: '' }, card });
}

export function startCharging(ctx: TestContext, driver: Driver, evseId: string): Promise<TestResponse> {
  return ctx.call('POST', `${USERS}/${driver.userId}/charging/start/`, { token: driver.token, body: { payment_method_id: driver.pm, evse_id: evseId } });
}

/** A pending session (its hold authorized) that stays pending: see startableEvse. */
export async function pendingSession(ctx: TestContext, driver: Driver): Promise<string> {
  const res = await startCharging(ctx, driver, startableEvse(ctx));
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

/** A session the operator rejected: failed at once, so the user may have any number of them. */
export async function rejectedSession(ctx: TestContext, driver: Driver): Promise<string> {
  const res = await startCharging(ctx, driver, evseOf(ctx, 'REJECT'));
  assert.equal(res.status, 424, res.text);
  const sessions = await ctx.call('GET', `${USERS}/${driver.userId}/charging-sessions/?page_size=1`, { token: driver.token });
  assert.equal(sessions.status, 200, sessions.text);
  assert.equal(sessions.body.results[0]?.status, 'failed', sessions.text);
  return sessions.body.results[0].id;
}

const freeEvses = new Map<TestContext, Promise<string[]>>();

/** An EVSE nobody has been given yet: AVAILABLE, startable remotely, no scenario. */
async function freeEvse(ctx: TestContext): Promise<string> {
  let pool = freeEvses.get(ctx);
  if (!pool) {
    pool = ctx.db
      .query<{ evse_id: string }>(
        `SELECT evse_id FROM ocpi_evses
          WHERE status = 'AVAILABLE' AND evse_id IS NOT NULL AND evse_id NOT LIKE '%*ESCN*%'
            AND data->'capabilities' ? 'REMOTE_START_STOP_CAPABLE'
          ORDER BY evse_id`,
      )
      .then((result) => result.rows.map((row) => row.evse_id));
    freeEvses.set(ctx, pool);
  }
  const evseId = (await pool).shift();
  assert.ok(evseId, 'a free EVSE is left in the sandbox network');
  return evseId;
}

/** An active session (charging, reported by the operator) on an EVSE of its own: one the user may stop. */
export async function activeSession(ctx: TestContext, driver: Driver): Promise<string> {
  const res = await startCharging(ctx, driver, await freeEvse(ctx));
  assert.equal(res.status, 201, res.text);
  const id: string = res.body.id;
  await eventually(
    async () => {
      const session = await ctx.call('GET', `${USERS}/${driver.userId}/charging-sessions/${id}/`, { token: driver.token });
      assert.equal(session.status, 200, session.text);
      assert.notEqual(session.body.status, 'failed', session.text);
      return session.body.status === 'active' ? true : undefined;
    },
    `session ${id} active`,
    // Seconds on a quiet machine; a CI machine shared with other work (load 8+) took longer than 10 s.
    30_000,
  );
  return id;
}

// One invoice-with-debt at a time per app: each is made on the NOSTART EVSE, which holds the EVSE until its
// command result is sent, so two at once would see it occupied.
const invoiceQueues = new Map<TestContext, Promise<unknown>>();

/**
 * A completed session of a new user of `client`, billed and invoiced, whose final charge failed: one invoice and
 * one unpaid debt. The CDR costs more than any hold (at most 150 currency units), so the bill must charge the
 * rest off-session; the card asks for authentication on every payment, so that charge fails without the customer.
 */
export function invoicedWithDebt(ctx: TestContext, client: ApiClient): Promise<{ userId: string; sessionId: string }> {
  const queued = (invoiceQueues.get(ctx) ?? Promise.resolve()).then(() => makeInvoiceWithDebt(ctx, client));
  invoiceQueues.set(
    ctx,
    queued.catch(() => undefined),
  );
  return queued;
}

async function makeInvoiceWithDebt(ctx: TestContext, client: ApiClient): Promise<{ userId: string; sessionId: string }> {
  const driver = await newDriverOf(ctx, client, CARDS.authenticateAlways);
  const evseId = evseOf(ctx, 'NOSTART');
  const first = await startCharging(ctx, driver, evseId);
  assert.equal(first.status, 402, first.text);
  const secret = first.body.error.payment_intent_client_secret as string;
  const approved = await ctx.call('POST', `/sandbox/payment_intents/${secret.slice(0, secret.indexOf('_secret_'))}/authenticate`, {
    body: { client_secret: secret, outcome: 'approve' },
  });
  assert.equal(approved.status, 200, approved.text);
  const started = await startCharging(ctx, driver, evseId);
  assert.equal(started.status, 201, started.text);
  const sessionId: string = started.body.id;

  const [hold] = (
    await ctx.db.query<{ currency: string }>(
      `SELECT h.currency FROM payment_holds h JOIN charging_sessions s ON s.hold_reference = h.reference WHERE s.id = $1`,
      [sessionId],
    )
  ).rows;
  assert.ok(hold, 'the session has a hold');
  await deliverCdr(ctx, sessionId, hold.currency.toUpperCase());
  await eventually(
    async () => {
      const debts = await ctx.call('GET', `${USERS}/${driver.userId}/charging/debts/`, { token: driver.token });
      const invoices = await ctx.call('GET', `${USERS}/${driver.userId}/invoices/`, { token: driver.token });
      return debts.body?.count === 1 && invoices.body?.count === 1 ? true : undefined;
    },
    `the debt and the invoice of ${sessionId}`,
    30_000,
  );
  return { userId: driver.userId, sessionId };
}

/** The CPO's CDR of the session: 1,000 kWh at 0.40 + 19 % VAT (476.00). */
async function deliverCdr(ctx: TestContext, sessionId: string, currency: string): Promise<void> {
  const [row] = (await ctx.db.query<SessionRow>('SELECT * FROM charging_sessions WHERE id = $1', [sessionId])).rows;
  assert.ok(row);
  const cdr = cdrOfSession(row, { id: `SEC-${sessionId.slice(0, 8)}`, currency, kwh: 1000, pricePerKwh: 0.4, vat: 19, minutes: 30, end: ctx.clock.now() });
  const { rows: connections } = await ctx.db.query<{ id: string }>("SELECT id FROM ocpi_connections WHERE status = 'connected' LIMIT 1");
  const charging = ctx.modules.charging;
  assert.ok(charging && connections[0]);
  const connectionId = connections[0].id;
  await ctx.db.transaction(async (tx) => {
    assert.ok(await insertCdr(tx, connectionId, cdr, ctx.clock.now()));
    assert.ok(await charging.cdrReceived(tx, cdr), 'the CDR matched the session');
  });
}

/**
 * A CDR a CPO could send for one of our sessions (matched by authorization_reference): one charging period of
 * `kwh` over `minutes` up to `end`, under a one-component energy tariff, with the CPO's totals.
 */
export function cdrOfSession(
  row: Pick<SessionRow, 'id' | 'country_code' | 'party_id' | 'user_id' | 'location_id' | 'evse_uid' | 'evse_id' | 'connector_id'>,
  c: { id: string; currency: string; kwh: number; pricePerKwh: number; vat: number; minutes: number; end: Date },
): CDR {
  const begin = new Date(c.end.getTime() - c.minutes * 60_000).toISOString();
  const end = c.end.toISOString();
  const excl = c.kwh * c.pricePerKwh;
  return {
    country_code: row.country_code,
    party_id: row.party_id,
    id: c.id,
    start_date_time: begin,
    end_date_time: end,
    session_id: `CPO-${c.id}`,
    authorization_reference: row.id,
    cdr_token: { country_code: 'DE', party_id: 'EMS', uid: row.user_id, type: 'APP_USER', contract_id: `DE-EMS-${row.user_id}` },
    auth_method: 'COMMAND',
    cdr_location: {
      id: row.location_id,
      address: 'Street 1',
      city: 'City',
      country: 'DEU',
      coordinates: { latitude: '52.520000', longitude: '13.405000' },
      evse_uid: row.evse_uid,
      evse_id: row.evse_id,
      connector_id: row.connector_id ?? '1',
      connector_standard: 'IEC_62196_T2',
      connector_format: 'SOCKET',
      connector_power_type: 'AC_3_PHASE',
    },
    currency: c.currency,
    tariffs: [
      {
        country_code: row.country_code,
        party_id: row.party_id,
        id: c.id,
        currency: c.currency,
        elements: [{ price_components: [{ type: 'ENERGY', price: c.pricePerKwh, vat: c.vat, step_size: 1 }] }],
        last_updated: begin,
      },
    ],
    charging_periods: [{ start_date_time: begin, dimensions: [{ type: 'ENERGY', volume: c.kwh }], tariff_id: c.id }],
    total_cost: { excl_vat: excl, incl_vat: Math.round(excl * (100 + c.vat)) / 100 },
    total_energy: c.kwh,
    total_time: c.minutes / 60,
    last_updated: end,
  } as unknown as CDR;
}
