// The payments service never waits for the processor while it holds a
// database connection. The app's pool has 10 connections, and the built-in
// Stripe sandbox answers from that same pool (as in `npm start`): a service
// that kept a transaction open across a processor call would starve the
// sandbox as soon as 10 such calls were in flight, and stall until the pool's
// 10 s connection timeout. Here bursts of captures, refreshes and webhook
// deliveries finish promptly, and concurrent captures of one hold still send
// one capture to the processor.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { paymentsContext } from '../src/modules/payments/context.ts';
import { refreshPaymentMethod } from '../src/modules/payments/mirror.ts';
import type { Hold, PaymentsService } from '../src/modules/payments/service.ts';
import { createPaymentsService } from '../src/modules/payments/service.ts';
import { createStripeProcessor } from '../src/modules/payments/stripe-processor.ts';
import { createUsersService } from '../src/modules/users/service.ts';
import { signatureHeader } from '../src/sandbox/stripe/webhooks.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { CARDS, connectCard, customerOf, eventually, newOwner, type Owner, sandboxApi, setupIntent, USERS } from './payments-support.ts';

/** Well within the pool's 10 s connection timeout (what a starved pool would wait for). */
const PROMPT_MS = 6_000;

/** With the sandbox delivering its webhooks to the app, as in `npm start`: more load on the same pool. */
let t: TestContext;
before(async () => {
  t = await setupTestApp({ payments: { webhooks: true } });
});
after(() => t?.close());

/** Another instance of the service on the same database and processor (a second process of the API). */
function secondInstance(ctx: TestContext): PaymentsService {
  return createPaymentsService({
    db: ctx.db,
    clock: ctx.clock,
    processor: ctx.processor,
    requireUser: createUsersService({ clock: ctx.clock, locales: ['en'] }).requireUser,
  });
}

async function placeHolds(owner: Owner, paymentMethodId: string, count: number): Promise<Hold[]> {
  const holds: Hold[] = [];
  for (let i = 0; i < count; i++) {
    const hold = await t.payments.placeHold({
      clientId: owner.clientId,
      userId: owner.userId,
      paymentMethodId,
      amount: 5_000,
      currency: 'EUR',
      reference: `session:${randomUUID()}`,
    });
    assert.equal(hold.status, 'authorized');
    holds.push(hold);
  }
  return holds;
}

/** The processor's `type` events about these payment intents, signed as the processor delivers them. */
async function signedEvents(type: string, intentIds: readonly string[]): Promise<{ body: Buffer; signature: string }[]> {
  const listed = await sandboxApi(t, 'GET', '/v1/events', [
    ['type', type],
    ['limit', '100'],
  ]);
  const wanted = new Set(intentIds);
  const events = (listed.body.data as { data: { object: { id: string } } }[]).filter((e) => wanted.has(e.data.object.id));
  assert.equal(events.length, intentIds.length, `a ${type} event for each intent`);
  const at = Math.floor(t.clock.now().getTime() / 1000);
  return events.map((event) => {
    const body = JSON.stringify(event);
    return { body: Buffer.from(body), signature: signatureHeader(body, t.sandbox.keys.webhookSecret, at) };
  });
}

/** Runs the operations at once; answers how long they took, failing with every error if any failed. */
async function together(operations: Promise<unknown>[]): Promise<number> {
  const started = performance.now();
  const settled = await Promise.allSettled(operations);
  const elapsed = performance.now() - started;
  const failures = settled.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
  assert.deepEqual(failures, [], `${failures.length} of ${operations.length} operations failed after ${Math.round(elapsed)} ms`);
  return elapsed;
}

/** Capture requests the processor received for this payment intent: all of them, and those it carried out (not a replay, not refused). */
function capturesOf(paymentIntentId: string) {
  const all = t.sandbox.requestLog.filter((r) => r.method === 'POST' && r.path === `/v1/payment_intents/${paymentIntentId}/capture`);
  return { sent: all.length, executed: all.filter((r) => r.status === 200 && !r.replayed).length };
}

describe("refreshes of one payment method's mirror in one process", () => {
  test('asked 6 times at once: the processor is read at most twice (one refresh, and one more for the asks that came after its read), and every ask settles', async () => {
    const owner = await newOwner(t);
    const pm = await connectCard(t, owner, CARDS.visa);
    const ctx = paymentsContext({ db: t.db, clock: t.clock, processor: t.processor });
    await refreshPaymentMethod(ctx, pm); // mirrored, so that each refresh reads the processor once (under the claim)
    // The app's own webhook deliveries (they refresh the method too) are over before the count starts.
    await eventually(async () => {
      const { rows } = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM stripe_sandbox.webhook_deliveries WHERE delivered_at IS NULL AND failed_at IS NULL',
      );
      return rows[0]?.n === 0 ? true : undefined;
    }, 'webhook deliveries done');
    const reads = () => t.sandbox.requestLog.filter((r) => r.method === 'GET' && r.path === `/v1/payment_methods/${pm}`).length;
    const before = reads();
    await together(Array.from({ length: 6 }, () => refreshPaymentMethod(ctx, pm)));
    const read = reads() - before;
    assert.ok(read >= 1 && read <= 2, `the processor read ${read} times for 6 refreshes`);
    assert.equal(ctx.refreshing.size, 0, 'nothing left under way');
    // A refresh asked after those settled reads the processor again.
    await refreshPaymentMethod(ctx, pm);
    assert.ok(reads() - before >= read + 1);
    const methods = await t.call('GET', `${USERS}/${owner.userId}/payment-methods/`, { token: owner.token });
    assert.deepEqual(
      methods.body.results.map((m: { id: string }) => m.id),
      [pm],
    );
  });

  test('a refresh that ends before its read (a method the processor does not know) settles nobody who joined it: they get one run more', async () => {
    const ctx = paymentsContext({ db: t.db, clock: t.clock, processor: t.processor });
    const unknown = `pm_unknown${randomUUID().replaceAll('-', '')}`;
    const reads = () => t.sandbox.requestLog.filter((r) => r.method === 'GET' && r.path === `/v1/payment_methods/${unknown}`).length;
    await together(Array.from({ length: 6 }, () => refreshPaymentMethod(ctx, unknown)));
    assert.equal(reads(), 2, 'the first run, and one for the 5 asks that joined it (not 6, not 1)');
    assert.equal(ctx.refreshing.size, 0);
  });

  test('the processor unreachable (connection refused): the refresh and every ask that joined it fail, and the next ask runs anew', async () => {
    const owner = await newOwner(t);
    const pm = await connectCard(t, owner, CARDS.visa);
    await refreshPaymentMethod(paymentsContext({ db: t.db, clock: t.clock, processor: t.processor }), pm);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = createStripeProcessor({
      secretKey: t.sandbox.keys.secretKey,
      publishableKey: t.sandbox.keys.publishableKey,
      webhookSecret: t.sandbox.keys.webhookSecret,
      apiBase: `http://127.0.0.1:${port}`,
      sandbox: true,
      maxNetworkRetries: 0,
    });
    const ctx = paymentsContext({ db: t.db, clock: t.clock, processor: unreachable });
    const asks = await Promise.allSettled(Array.from({ length: 3 }, () => refreshPaymentMethod(ctx, pm)));
    assert.deepEqual(
      asks.map((a) => a.status),
      ['rejected', 'rejected', 'rejected'],
    );
    assert.equal(ctx.refreshing.size, 0, 'nothing left under way');
    await assert.rejects(refreshPaymentMethod(ctx, pm), 'the next ask runs (and fails) on its own');
    // The customer's claim was given back each time: a refresh through the reachable processor goes through.
    await refreshPaymentMethod(paymentsContext({ db: t.db, clock: t.clock, processor: t.processor }), pm);
  });
});

describe('a burst of processor-backed operations on a pool of 10 connections', () => {
  test('40 captures, 40 refreshes and 40 webhook deliveries at once all succeed, promptly', async (ctx) => {
    assert.equal(t.db.pool.options.max, 10, 'the app’s pool, which the sandbox answers from too');
    const owner = await newOwner(t);
    const pm = await connectCard(t, owner, CARDS.visa);
    const holds = await placeHolds(owner, pm, 40);
    const intents = holds.map((h) => h.paymentIntentId as string);
    const events = await signedEvents('payment_intent.amount_capturable_updated', intents);
    const other = secondInstance(t);

    const elapsed = await together([
      ...holds.map((h) => t.payments.captureHold(owner.clientId, h.reference, 3_000)),
      ...holds.map((h, i) => (i % 2 ? other : t.payments).refreshHold(owner.clientId, h.reference)),
      ...events.map((e, i) => (i % 2 ? t.payments : other).handleWebhook(e.body, e.signature)),
    ]);
    ctx.diagnostic(`120 operations on a pool of 10: ${Math.round(elapsed)} ms`);
    assert.ok(elapsed < PROMPT_MS, `took ${Math.round(elapsed)} ms`);

    // The late refreshes and webhooks (they read "authorized") did not undo a capture.
    const { rows } = await t.db.query<{ status: string; amount_captured: number }>(
      'SELECT status, amount_captured FROM payment_holds WHERE reference = ANY($1)',
      [holds.map((h) => h.reference)],
    );
    assert.equal(rows.length, 40);
    for (const row of rows) assert.deepEqual([row.status, row.amount_captured], ['captured', 3_000]);
    for (const id of intents) assert.deepEqual(capturesOf(id), { sent: 1, executed: 1 }, id);
  });

  test('concurrent captures of one hold, from two instances, amid refreshes and webhooks: one capture at the processor, every caller gets it', async (ctx) => {
    const owner = await newOwner(t);
    const [hold] = await placeHolds(owner, await connectCard(t, owner, CARDS.visa), 1);
    assert.ok(hold?.paymentIntentId);
    const [event] = await signedEvents('payment_intent.amount_capturable_updated', [hold.paymentIntentId]);
    assert.ok(event);
    const instances = [t.payments, secondInstance(t)];
    const captures = Array.from({ length: 20 }, (_, i) => (instances[i % 2] as PaymentsService).captureHold(owner.clientId, hold.reference, 3_000));
    const elapsed = await together([
      ...captures,
      ...instances.flatMap((s) => Array.from({ length: 5 }, () => s.refreshHold(owner.clientId, hold.reference))),
      ...instances.map((s) => s.handleWebhook(event.body, event.signature)),
    ]);
    ctx.diagnostic(`20 captures of one hold with 12 refreshes and webhooks: ${Math.round(elapsed)} ms`);
    assert.ok(elapsed < PROMPT_MS, `took ${Math.round(elapsed)} ms`);
    for (const captured of await Promise.all(captures)) {
      assert.deepEqual([captured.status, captured.amountCaptured, captured.amountCapturable], ['captured', 3_000, 0]);
    }
    assert.deepEqual(capturesOf(hold.paymentIntentId), { sent: 1, executed: 1 }, 'one capture request, however many callers');
    const intent = await sandboxApi(t, 'GET', `/v1/payment_intents/${hold.paymentIntentId}`);
    assert.deepEqual([intent.body.status, intent.body.amount_received], ['succeeded', 3_000]);
  });

  test('20 concurrent first setup intents and listings of one user: one processor customer, promptly', async (ctx) => {
    const owner = await newOwner(t);
    const listings = Array.from({ length: 20 }, () => t.call('GET', `/api/v1/users/${owner.userId}/payment-methods/`, { token: owner.token }));
    const started = performance.now();
    const [intents, lists] = await Promise.all([Promise.all(Array.from({ length: 20 }, () => setupIntent(t, owner))), Promise.all(listings)]);
    const elapsed = performance.now() - started;
    ctx.diagnostic(`20 setup intents and 20 listings of a new user: ${Math.round(elapsed)} ms`);
    assert.ok(elapsed < PROMPT_MS, `took ${Math.round(elapsed)} ms`);
    for (const list of lists) assert.equal(list.status, 200, list.text);
    const customers = await Promise.all(intents.map(async (i) => (await sandboxApi(t, 'GET', `/v1/setup_intents/${i.id}`)).body.customer));
    assert.deepEqual([...new Set(customers)], [await customerOf(t, owner.userId)]);
  });
});
