// Steps the charging tests share: the sandbox CPO network connected over OCPI
// with its catalogue pulled (fast timings), and a driver (a user with complete
// billing details and a card).
import assert from 'node:assert/strict';
import { systemClock } from '../src/platform/clock.ts';
import { type CpoSandbox, type CpoSandboxOptions, createCpoSandbox, type Scenario, scenarioEvseId } from '../src/sandbox/cpo/index.ts';
import type { TestContext, TestResponse } from './helpers.ts';
import { CARDS, connectCard, eventually, newOwner, type Owner, USERS } from './payments-support.ts';

export type Driver = Owner & { pm: string };

/** Sandbox CPO timings for tests: no random status changes, short delays, energy 600 times faster than the power gives (time runs as the clock does). */
export const FAST_CPO_TIMINGS = {
  timeCompression: 600,
  statusChangesPerSecond: 0,
  tickMs: 50,
  commandDelayMs: 20,
  activationDelayMs: 100,
  sessionUpdateIntervalMs: 150,
  retryBaseMs: 100,
} satisfies Partial<CpoSandboxOptions>;

/**
 * A small sandbox network (40 locations) on the system clock with short delays, connected to the app, its
 * catalogue pulled and loaded, and its background work started. `options` override the timings.
 */
export async function startCpoNetwork(ctx: TestContext, options: Partial<CpoSandboxOptions> = {}): Promise<CpoSandbox> {
  const cpo = await createCpoSandbox({
    db: ctx.db,
    clock: systemClock,
    locations: 40,
    seed: 11,
    ...FAST_CPO_TIMINGS,
    ...options,
  });
  await cpo.listen({ port: 0 });
  const connection = await ctx.ocpi.connections.connect({ versionsUrl: cpo.versionsUrl, token: await cpo.issueTokenA(), name: 'network' });
  await ctx.ocpi.sync.syncConnection(connection, { full: true });
  await ctx.catalogue.reload();
  cpo.startBackgroundWork();
  return cpo;
}

/** The id of a scenario EVSE of the network's first scenario party. */
export function scenarioEvse(cpo: CpoSandbox, scenario: Scenario): string {
  const party = cpo.scenarioParties[0];
  assert.ok(party);
  return scenarioEvseId(party, scenario);
}

/** A user (new, or another user of `owner`'s client) with complete personal billing details and a card. */
export async function newDriver(ctx: TestContext, options: { card?: string; owner?: Owner; firstName?: string; lastName?: string } = {}): Promise<Driver> {
  const base = options.owner ?? (await newOwner(ctx));
  const userId = options.owner ? (await ctx.call('POST', `${USERS}/`, { token: options.owner.token, body: {} })).body.id : base.userId;
  const billing = await ctx.call('PUT', `${USERS}/${userId}/billing-details/`, {
    token: base.token,
    body: {
      account_type: 'personal',
      first_name: options.firstName ?? 'Jürgen',
      last_name: options.lastName ?? 'Müller',
      line1: 'Hauptstraße 5',
      postal_code: '10115',
      city: 'Berlin',
      country: 'DE',
    },
  });
  assert.equal(billing.status, 200, billing.text);
  const pm = await connectCard(ctx, { ...base, userId }, options.card ?? CARDS.visa, userId);
  return { ...base, userId, pm };
}

/** The bill of a charged session: net and gross in cents, the engine's and the CDR's totals as stored. */
export interface ChargedBill {
  net: number;
  gross: number;
  engine_total: string;
  cdr_total: string;
  price_mismatch: boolean;
}

/**
 * A new driver's session at `evseId`, from start to stop to invoice, held to what every charging test over OCPI
 * asserts: active, energy reported, completed with one invoice of the session's total, that total captured once, and
 * a bill at our tariff engine's price that the CPO's CDR agrees with. The driver, the session id, the completed
 * session as the API gives it, and the bill, for a test's own assertions.
 */
export async function chargeToInvoice(
  ctx: TestContext,
  evseId: string,
): Promise<{ driver: Driver; id: string; completed: TestResponse['body']; bill: ChargedBill }> {
  const d = await newDriver(ctx);
  const started = await ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, { token: d.token, body: { payment_method_id: d.pm, evse_id: evseId } });
  assert.equal(started.status, 201, started.text);
  const id = started.body.id as string;
  const get = async () => (await ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/${id}/`, { token: d.token })).body;
  await eventually(async () => ((await get()).status === 'active' ? true : undefined), `active at ${evseId}`, 10_000);
  await eventually(async () => (Number((await get()).consumed_energy) > 0 ? true : undefined), `energy at ${evseId}`, 10_000);
  const stop = await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${id}/`, { token: d.token });
  assert.equal(stop.status, 204, stop.text);
  const completed = await eventually(
    async () => {
      const s = await get();
      return s.status === 'completed' && s.session_cost.invoice_download ? s : undefined;
    },
    `completed with an invoice at ${evseId}`,
    20_000,
  );
  const invoices = await ctx.call('GET', `${USERS}/${d.userId}/invoices/`, { token: d.token });
  assert.equal(invoices.body.count, 1, 'invoiced once');
  assert.equal(invoices.body.results[0].total, completed.session_cost.invoice_summary);
  const holds = await ctx.db.query<{ status: string; amount_captured: number }>('SELECT status, amount_captured FROM payment_holds WHERE reference = $1', [
    `session:${id}`,
  ]);
  assert.deepEqual(
    holds.rows.map((h) => [h.status, h.amount_captured]),
    [['captured', Math.round(Number(completed.session_cost.invoice_summary) * 100)]],
    'charged once, the invoice total',
  );
  const bill = (await ctx.db.query<ChargedBill>('SELECT net, gross, engine_total, cdr_total, price_mismatch FROM charging_bills WHERE session_id = $1', [id]))
    .rows[0];
  assert.ok(bill, 'a bill');
  assert.equal(bill.price_mismatch, false, 'the CDR’s total agrees with our engine');
  assert.equal(Math.round(Number(bill.engine_total) * 100), bill.gross, 'the invoice is the engine’s total');
  return { driver: d, id, completed, bill };
}
