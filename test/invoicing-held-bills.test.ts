// CDRs the bill must not take as they are, end to end: sessions started
// through the API at the sandbox network's NOSTART EVSE (accepted, never
// reported), then the CPO's CDR POSTed to our OCPI receiver over HTTP with the
// network's token. A CDR in another currency than the session's tariff and
// hold is held for the operator (nothing captured, no invoice), listed by
// `charging-access bills held` and released by `bills release` (the CLI in a
// process of its own): billed at the session's own tariff in the hold's
// currency, or waived. A CDR whose periods carry no ENERGY is billed with its
// total_energy.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { SessionRow } from '../src/modules/charging/repository.ts';
import { INVOICING_QUEUES } from '../src/modules/invoicing/queues.ts';
import type { CDR } from '../src/ocpi-protocol/cdrs.ts';
import { createJobRunner } from '../src/platform/jobs.ts';
import { priceSessionExact } from '../src/pricing/tariff-engine.ts';
import type { CpoSandbox } from '../src/sandbox/cpo/index.ts';
import { type Driver, newDriver, scenarioEvse, startCpoNetwork } from './charging-support.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { eventually, USERS } from './payments-support.ts';

const root = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

let ctx: TestContext;
let cpo: CpoSandbox;

before(async () => {
  ctx = await setupTestApp({ listen: 0, payments: { webhooks: true } });
  cpo = await startCpoNetwork(ctx);
  ctx.jobs.start();
});
after(async () => {
  await cpo?.close();
  await ctx?.close();
});

/**
 * The operator's CLI in its own process, on the test database. It runs on the system clock (the jobs it queues are
 * due from its now): the app's manual clock is brought up to the wall clock after it, so the app's job runner sees them due.
 */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(root, 'bin/charging-access.js'), ...args], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: ctx.databaseUrl, PUBLIC_BASE_URL: ctx.address as string, LOG_LEVEL: 'silent' },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  } finally {
    if (ctx.clock.now().getTime() < Date.now()) ctx.clock.set(new Date());
  }
}

/** A session started at the NOSTART EVSE: pending, its hold authorized, and the CPO never reports it. */
async function pendingSession(d: Driver): Promise<SessionRow> {
  const res = await ctx.call('POST', `${USERS}/${d.userId}/charging/start/`, {
    token: d.token,
    body: { payment_method_id: d.pm, evse_id: scenarioEvse(cpo, 'NOSTART') },
  });
  assert.equal(res.status, 201, res.text);
  const row = (await ctx.db.query<SessionRow>('SELECT * FROM charging_sessions WHERE id = $1', [res.body.id])).rows[0];
  assert.ok(row);
  return row;
}

const START = Date.now() - 3 * 3_600_000;
const iso = (minutes: number) => new Date(START + minutes * 60_000).toISOString();

/** The CPO's CDR of a session (ours by authorization_reference): one hour of charging, then 30 minutes parked. */
async function cdrOf(session: SessionRow, overrides: Partial<CDR>): Promise<CDR> {
  const location = await ctx.ingestion.findLocation({ country_code: session.country_code, party_id: session.party_id, id: session.location_id });
  const evse = location?.evses?.find((e) => e.uid === session.evse_uid);
  const connector = evse?.connectors[0];
  assert.ok(location && evse && connector);
  return {
    country_code: session.country_code,
    party_id: session.party_id,
    id: `CDR-${session.id.slice(0, 8)}`,
    start_date_time: iso(0),
    end_date_time: iso(90),
    session_id: `S-${session.id.slice(0, 8)}`,
    authorization_reference: session.id,
    cdr_token: { country_code: ctx.config.ocpi.countryCode, party_id: ctx.config.ocpi.partyId, uid: session.user_id, type: 'APP_USER', contract_id: 'C1' },
    auth_method: 'COMMAND',
    cdr_location: {
      id: location.id,
      address: location.address,
      city: location.city,
      country: location.country,
      coordinates: location.coordinates,
      evse_uid: evse.uid,
      evse_id: evse.evse_id ?? evse.uid,
      connector_id: connector.id,
      connector_standard: connector.standard,
      connector_format: connector.format,
      connector_power_type: connector.power_type,
    },
    currency: session.currency,
    charging_periods: [
      {
        start_date_time: iso(0),
        dimensions: [
          { type: 'ENERGY', volume: 11 },
          { type: 'TIME', volume: 1 },
        ],
      },
      { start_date_time: iso(60), dimensions: [{ type: 'PARKING_TIME', volume: 0.5 }] },
    ],
    total_cost: { excl_vat: 5, incl_vat: 5.95 },
    total_energy: 11,
    total_time: 1.5,
    total_parking_time: 0.5,
    last_updated: iso(91),
    ...overrides,
  } as CDR;
}

async function networkToken(): Promise<string> {
  const peer = (await cpo.listPeers()).find((p) => p.status === 'REGISTERED');
  assert.ok(peer?.theirToken);
  return peer.theirToken;
}

/** POSTs the CDR to our receiver as the CPO does: 201 Created. */
async function postCdr(cdr: CDR): Promise<void> {
  const res = await ctx.call('POST', '/ocpi/2.2.1/cdrs', {
    headers: { authorization: `Token ${Buffer.from(await networkToken()).toString('base64')}` },
    body: cdr,
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.status_code, 1000);
}

const billOf = async (sessionId: string) =>
  (
    await ctx.db.query<{
      step: string;
      currency: string;
      gross: number;
      held_reason: string | null;
      released_as: string | null;
      lines: { component: string; quantity: string; gross: string }[];
    }>('SELECT step, currency, gross, held_reason, released_as, lines FROM charging_bills WHERE session_id = $1', [sessionId])
  ).rows[0];

const holdStatus = async (sessionId: string) =>
  (
    await ctx.db.query<{ status: string; amount_captured: number }>(
      'SELECT h.status, h.amount_captured FROM payment_holds h JOIN charging_sessions s ON s.hold_reference = h.reference WHERE s.id = $1',
      [sessionId],
    )
  ).rows[0];

const invoicesOf = async (sessionId: string) =>
  (await ctx.db.query<{ currency: string; gross: number }>('SELECT currency, gross FROM invoices WHERE session_id = $1', [sessionId])).rows;

const untilBillStep = (sessionId: string, step: string) =>
  eventually(
    async () => {
      const bill = await billOf(sessionId);
      return bill?.step === step ? bill : undefined;
    },
    `bill of ${sessionId} ${step}`,
    15_000,
  );

describe('a CDR in another currency than the session’s tariff and hold', { timeout: 120_000 }, () => {
  it('is held for the operator (nothing captured, no invoice), listed by `bills held`, and billed at the session’s tariff on release', async () => {
    const driver = await newDriver(ctx);
    const session = await pendingSession(driver);
    assert.equal(session.currency, 'EUR');
    const cdr = await cdrOf(session, { currency: 'CHF', total_cost: { excl_vat: 7, incl_vat: 7.57 } });
    await postCdr(cdr);
    const held = await untilBillStep(session.id, 'held');
    assert.match(held.held_reason ?? '', /is in CHF \(total 7\.57 CHF\), the session's tariff and payment hold in EUR: not converted/);
    const view = await ctx.call('GET', `${USERS}/${driver.userId}/charging-sessions/${session.id}/`, { token: driver.token });
    assert.equal(view.body.status, 'completed');
    // No cost known while the operator decides (as for any session whose bill is not made yet).
    assert.deepEqual([view.body.session_cost?.kwh_cost ?? null, view.body.session_cost?.invoice_download ?? null], [null, null]);
    assert.equal((await holdStatus(session.id))?.status, 'authorized', 'nothing captured');
    assert.deepEqual(await invoicesOf(session.id), []);
    // The reconciliation leaves a held bill alone: no bill job queued again for it.
    await ctx.modules.reconcile();
    const queued = await ctx.db.query("SELECT 1 FROM jobs WHERE queue = 'invoicing.bill' AND key = $1 AND state IN ('queued', 'running')", [session.id]);
    assert.equal(queued.rows.length, 0);

    const listed = await cli('bills', 'held', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const entry = JSON.parse(listed.stdout).find((b: { session_id: string }) => b.session_id === session.id);
    assert.deepEqual(
      { cdr_currency: entry.cdr_currency, cdr_total: entry.cdr_total, hold_currency: entry.hold_currency, user_id: entry.user_id },
      { cdr_currency: 'CHF', cdr_total: '7.57', hold_currency: 'EUR', user_id: session.user_id },
    );
    assert.match((await cli('bills', 'held')).stdout, new RegExp(`^${session.id} {2}held since .* CDR .* 7\\.57 CHF {2}hold \\d+\\.\\d{2} EUR$`, 'm'));

    const released = await cli('bills', 'release', session.id, '--json');
    assert.equal(released.code, 0, released.stderr);
    const answer = JSON.parse(released.stdout);
    // The session's own tariff, in EUR, over the CDR's periods (its CHF total set aside).
    const engine = priceSessionExact({
      tariff: session.tariff,
      currency: 'EUR',
      timeZone: session.time_zone,
      start: new Date(cdr.start_date_time),
      end: new Date(cdr.end_date_time),
      periods: cdr.charging_periods,
    });
    assert.deepEqual([answer.released_as, answer.step, answer.currency], ['tariff', 'priced', 'EUR']);
    const invoiced = await untilBillStep(session.id, 'invoiced');
    assert.equal(invoiced.currency, 'EUR');
    assert.equal(invoiced.released_as, 'tariff');
    assert.equal(answer.total, (invoiced.gross / 100).toFixed(2));
    const withoutFee = invoiced.lines.filter((l) => l.component !== 'starting_fee');
    const cents = (gross: string) => Math.round(Number(gross) * 100);
    assert.equal(
      withoutFee.reduce((sum, l) => sum + cents(l.gross), 0),
      cents(engine.total_cost.incl_vat),
      'the lines are the session tariff’s price of the CDR',
    );
    assert.notEqual(engine.total_cost.incl_vat, '7.57');
    assert.equal(withoutFee.find((l) => l.component === 'energy')?.quantity, '11.000');
    const invoices = await invoicesOf(session.id);
    assert.deepEqual(
      invoices.map((i) => [i.currency, i.gross]),
      [['EUR', invoiced.gross]],
    );
    const hold = await holdStatus(session.id);
    assert.equal(hold?.status, 'captured');
    // A second release finds nothing held.
    const again = await cli('bills', 'release', session.id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is not held \(it is invoiced\)/);
  });

  it('released with --waive: nothing charged, the hold released, no invoice', async () => {
    const driver = await newDriver(ctx);
    const session = await pendingSession(driver);
    await postCdr(await cdrOf(session, { currency: 'GBP', total_cost: { excl_vat: 4, incl_vat: 4.8 } }));
    await untilBillStep(session.id, 'held');
    const released = await cli('bills', 'release', session.id, '--waive');
    assert.equal(released.code, 0, released.stderr);
    assert.match(released.stdout, /released, waived: nothing is charged/);
    await eventually(
      async () => ((await holdStatus(session.id))?.status === 'released' ? true : undefined),
      `the hold released (${JSON.stringify(await holdStatus(session.id))}, bill ${JSON.stringify(await billOf(session.id))})`,
      10_000,
    );
    const bill = await billOf(session.id);
    assert.deepEqual([bill?.step, bill?.released_as, bill?.gross], ['waived', 'waived', 0]);
    assert.deepEqual(await invoicesOf(session.id), []);
    assert.equal((await holdStatus(session.id))?.amount_captured, 0);
    const listed = JSON.parse((await cli('bills', 'held', '--json')).stdout);
    assert.equal(
      listed.some((b: { session_id: string }) => b.session_id === session.id),
      false,
    );
  });

  it('a session whose own tariff is in yet another currency than its hold can only be waived: the release at the tariff is refused, the bill stays held', async () => {
    const driver = await newDriver(ctx);
    const session = await pendingSession(driver);
    // The EVSE's tariff (CHF) disagrees with its station's price group, whose currency the hold took (EUR).
    await ctx.db.query(`UPDATE charging_sessions SET tariff = jsonb_set(tariff, '{currency}', '"CHF"') WHERE id = $1`, [session.id]);
    await postCdr(await cdrOf(session, { currency: 'CHF', total_cost: { excl_vat: 7, incl_vat: 7.57 } }));
    await untilBillStep(session.id, 'held');
    const refused = await cli('bills', 'release', session.id);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /the session's tariff is in CHF, not in its hold's EUR: it can only be waived/);
    assert.equal(refused.stdout, '');
    assert.deepEqual([(await billOf(session.id))?.step, (await holdStatus(session.id))?.status], ['held', 'authorized'], 'nothing changed');
    const queued = await ctx.db.query("SELECT 1 FROM jobs WHERE queue = 'invoicing.bill' AND key LIKE $1 || '%' AND state IN ('queued', 'running')", [
      session.id,
    ]);
    assert.equal(queued.rows.length, 0, 'no bill job queued');

    const waived = await cli('bills', 'release', session.id, '--waive', '--json');
    assert.equal(waived.code, 0, waived.stderr);
    assert.deepEqual(JSON.parse(waived.stdout), { session_id: session.id, released_as: 'waived', step: 'waived', currency: 'EUR', total: '0.00' });
    await eventually(async () => ((await holdStatus(session.id))?.status === 'released' ? true : undefined), 'the hold released', 10_000);
    assert.deepEqual(await invoicesOf(session.id), []);
  });

  it('a release at the tariff that prices to nothing (no energy): not billed, the hold released, no invoice', async () => {
    const driver = await newDriver(ctx);
    const session = await pendingSession(driver);
    await postCdr(
      await cdrOf(session, {
        currency: 'GBP',
        total_cost: { excl_vat: 1, incl_vat: 1.2 },
        charging_periods: [{ start_date_time: iso(0), dimensions: [{ type: 'TIME', volume: 0.25 }] }],
        total_energy: 0,
        total_time: 0.25,
        total_parking_time: 0,
        end_date_time: iso(15),
      }),
    );
    await untilBillStep(session.id, 'held');
    const released = await cli('bills', 'release', session.id, '--json');
    assert.equal(released.code, 0, released.stderr);
    assert.deepEqual(JSON.parse(released.stdout), { session_id: session.id, released_as: 'tariff', step: 'not_billed', currency: 'EUR', total: '0.00' });
    assert.match((await cli('bills', 'release', session.id)).stderr, /is not held \(it is not billed\)/);
    await eventually(async () => ((await holdStatus(session.id))?.status === 'released' ? true : undefined), 'the hold released', 10_000);
    const bill = await billOf(session.id);
    assert.deepEqual([bill?.step, bill?.released_as, bill?.gross, bill?.currency, bill?.lines], ['not_billed', 'tariff', 0, 'EUR', []]);
    assert.deepEqual(await invoicesOf(session.id), []);
  });

  it('refuses what is not a session id (usage, 64) and a session without a held bill (1)', async () => {
    assert.equal((await cli('bills', 'release', 'CDR-1')).code, 64);
    const unknown = await cli('bills', 'release', '00000000-0000-4000-8000-000000000000');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no bill for session 00000000-0000-4000-8000-000000000000/);
  });
});

describe('a release while the bill job that held the bill is still running', { timeout: 120_000 }, () => {
  for (const as of ['waived', 'tariff'] as const) {
    it(`released ${as === 'waived' ? 'with --waive' : 'at the session’s tariff'}: the bill is finished all the same (${as === 'waived' ? 'the hold released' : 'captured and invoiced'}), not left until the hold lapses`, async () => {
      // This test runs the bill job itself: the file's runner stands by.
      await ctx.jobs.stop();
      try {
        const driver = await newDriver(ctx);
        const session = await pendingSession(driver);
        // The app's own bill job, held after it ran (it read the bill: held, nothing to do) and before its run is recorded.
        const billJob = ctx.modules.jobHandlers[INVOICING_QUEUES.bill];
        assert.ok(billJob);
        let handled: () => void = () => {};
        let finish: () => void = () => {};
        const ran = new Promise<void>((resolve) => {
          handled = resolve;
        });
        const finishing = new Promise<void>((resolve) => {
          finish = resolve;
        });
        const slow = createJobRunner({
          db: ctx.db,
          clock: ctx.clock,
          handlers: {
            [INVOICING_QUEUES.bill]: async (payload, job) => {
              await billJob(payload, job);
              handled();
              await finishing;
            },
          },
        });
        await postCdr(await cdrOf(session, { currency: 'GBP', total_cost: { excl_vat: 4, incl_vat: 4.8 } }));
        const running = slow.runDue();
        await ran;
        assert.equal((await billOf(session.id))?.step, 'held');
        const released = await cli('bills', 'release', session.id, ...(as === 'waived' ? ['--waive'] : []));
        assert.equal(released.code, 0, released.stderr);
        finish();
        await running;
        // Whichever process runs jobs next finishes the released bill.
        await ctx.jobs.runDue();
        if (as === 'waived') {
          assert.deepEqual([(await billOf(session.id))?.step, (await holdStatus(session.id))?.status], ['waived', 'released']);
        } else {
          assert.equal((await billOf(session.id))?.step, 'invoiced');
          assert.equal((await holdStatus(session.id))?.status, 'captured');
          assert.equal((await invoicesOf(session.id)).length, 1);
        }
      } finally {
        ctx.jobs.start();
      }
    });
  }
});

describe('a CDR whose charging periods carry no ENERGY', { timeout: 60_000 }, () => {
  it('is billed with its total_energy (not 0 kWh) and invoiced', async () => {
    const driver = await newDriver(ctx);
    const session = await pendingSession(driver);
    await postCdr(
      await cdrOf(session, {
        charging_periods: [
          { start_date_time: iso(0), dimensions: [{ type: 'TIME', volume: 1 }] },
          { start_date_time: iso(60), dimensions: [{ type: 'PARKING_TIME', volume: 0.5 }] },
        ],
        total_energy: 12,
      }),
    );
    const invoiced = await untilBillStep(session.id, 'invoiced');
    const energy = invoiced.lines.find((l) => l.component === 'energy');
    assert.equal(energy?.quantity, '12.000');
    const view = await ctx.call('GET', `${USERS}/${driver.userId}/charging-sessions/${session.id}/`, { token: driver.token });
    assert.ok(Number(view.body.session_cost.kwh_cost) > 0, `kwh_cost ${view.body.session_cost.kwh_cost}`);
  });
});
