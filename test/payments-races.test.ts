// Holds and the payment-method mirror under concurrency and crashes, driven
// through the payments service with a processor whose calls the test pauses
// or breaks, so the interleavings are chosen rather than hoped for: no
// transaction stays open while the processor is asked, a stale
// processor read never undoes a newer state, a final hold never changes, a
// webhook finds a hold whose intent id was never recorded, two first calls
// for one reference make one hold, and the sweep resolves what a crash left
// pending (against the sandbox, on the manual clock).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type PaymentProcessor, PaymentProcessorError } from '../src/modules/payments/processor.ts';
import * as repo from '../src/modules/payments/repository.ts';
import { createPaymentsService, type PaymentsService, sweepPendingHolds } from '../src/modules/payments/service.ts';
import { createUsersService } from '../src/modules/users/service.ts';
import type { Database } from '../src/platform/db.ts';
import { AppError } from '../src/platform/errors.ts';
import { signatureHeader } from '../src/sandbox/stripe/webhooks.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { CARDS, connectCard, customerOf, listMethods, newOwner, type Owner, sandboxApi, USERS } from './payments-support.ts';

const HOUR_MS = 3_600_000;

/** Without webhooks: every webhook in these tests is delivered by the test, when it chooses. */
let t: TestContext;
before(async () => {
  t = await setupTestApp();
});
after(() => t?.close());

/** A payments service over the test's database with this processor (and, optionally, this user check). */
function serviceWith(ctx: TestContext, processor: PaymentProcessor, requireUser?: Parameters<typeof createPaymentsService>[0]['requireUser']) {
  return createPaymentsService({
    db: ctx.db,
    clock: ctx.clock,
    processor,
    requireUser: requireUser ?? createUsersService({ clock: ctx.clock, locales: ['en'] }).requireUser,
  });
}

/** A promise opened from outside. */
function latch() {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * Watches the database while `work` runs, for up to `ms`: whether it settled,
 * and the most transactions seen waiting for a row lock, or open but idle for
 * over 100 ms (what a processor call made inside a transaction looks like
 * from here; between two statements of a short one, they are idle for far less).
 */
async function watch(db: Database, work: Promise<unknown>, ms: number) {
  let settled = false;
  work.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  let lockWaits = 0;
  let idleInTransaction = 0;
  const started = performance.now();
  while (!settled && performance.now() - started < ms) {
    const { rows } = await db.query<{ locks: number; idle: number }>(
      `SELECT count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS locks, count(*) FILTER (WHERE state LIKE 'idle in transaction%' AND clock_timestamp() - state_change > interval '100 ms')::int AS idle
         FROM pg_stat_activity WHERE datname = current_database()`,
    );
    lockWaits = Math.max(lockWaits, rows[0]?.locks ?? 0);
    idleInTransaction = Math.max(idleInTransaction, rows[0]?.idle ?? 0);
    await sleep(5);
  }
  return { settled, lockWaits, idleInTransaction };
}

/** The processor's latest event of `type` about `objectId`, signed as the processor would deliver it. */
async function signedEvent(ctx: TestContext, type: string, objectId: string): Promise<{ body: Buffer; signature: string }> {
  const events = await sandboxApi(ctx, 'GET', '/v1/events', [
    ['type', type],
    ['limit', '100'],
  ]);
  const event = (events.body.data as { data: { object: { id: string } } }[]).find((e) => e.data.object.id === objectId);
  assert.ok(event, `a ${type} event about ${objectId}`);
  const body = JSON.stringify(event);
  return { body: Buffer.from(body), signature: signatureHeader(body, ctx.sandbox.keys.webhookSecret, Math.floor(ctx.clock.now().getTime() / 1000)) };
}

async function deliver(ctx: TestContext, service: PaymentsService, type: string, objectId: string) {
  const { body, signature } = await signedEvent(ctx, type, objectId);
  return service.handleWebhook(body, signature);
}

function holdRequest(owner: Owner, paymentMethodId: string) {
  return { clientId: owner.clientId, userId: owner.userId, paymentMethodId, amount: 5_000, currency: 'EUR', reference: `session:${randomUUID()}` };
}

async function holdRow(ctx: TestContext, reference: string) {
  const { rows } = await ctx.db.query<repo.HoldRow>('SELECT * FROM payment_holds WHERE reference = $1', [reference]);
  return rows[0];
}

async function intentsOf(ctx: TestContext, userId: string): Promise<{ id: string; metadata: Record<string, string> }[]> {
  const list = await sandboxApi(ctx, 'GET', '/v1/payment_intents', [
    ['customer', await customerOf(ctx, userId)],
    ['limit', '100'],
  ]);
  return list.body.data as { id: string; metadata: Record<string, string> }[];
}

/** The processor makes the hold, but its answer never reaches us (a crash, a connection reset). */
function losingPlacements(ctx: TestContext): PaymentProcessor {
  return {
    ...ctx.processor,
    placeHold: async (charge) => {
      await ctx.processor.placeHold(charge);
      throw new PaymentProcessorError('connection reset', { retryable: true });
    },
  };
}

/** We crash before the processor is asked at all. */
function neverAsked(ctx: TestContext): PaymentProcessor {
  return {
    ...ctx.processor,
    placeHold: async () => {
      throw new PaymentProcessorError('connection refused', { retryable: true });
    },
  };
}

const unavailable = (e: unknown) => e instanceof AppError && e.code === 'payment_processor_unavailable';

describe('hold state under concurrency', () => {
  test('the answer to placing a hold does not overwrite what a webhook recorded meanwhile', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.authenticateAlways));
    let service: PaymentsService | undefined;
    let intentId = '';
    // The processor answers "requires_action"; before that answer is recorded, the customer
    // authenticates and the webhook about it is handled.
    service = serviceWith(t, {
      ...t.processor,
      placeHold: async (charge) => {
        const outcome = await t.processor.placeHold(charge);
        assert.equal(outcome.status, 'requires_action');
        if (outcome.status !== 'requires_action') return outcome;
        intentId = outcome.paymentIntentId;
        await t.sandbox.browser.authenticatePaymentIntent(outcome.paymentIntentId, outcome.clientSecret, 'approve');
        assert.deepEqual(await deliver(t, service as PaymentsService, 'payment_intent.amount_capturable_updated', outcome.paymentIntentId), {
          duplicate: false,
          type: 'payment_intent.amount_capturable_updated',
        });
        return outcome;
      },
    });
    const hold = await service.placeHold(request);
    assert.equal(hold.status, 'authorized', 'the newer state stays');
    assert.equal(hold.paymentIntentId, intentId);
    assert.equal(hold.amountCapturable, 5_000);
    const row = await holdRow(t, request.reference);
    assert.deepEqual([row?.status, row?.payment_intent_id], ['authorized', intentId]);
  });

  test('a webhook finds a hold whose payment intent id was never recorded (by our metadata) and records it', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.visa));
    await assert.rejects(serviceWith(t, losingPlacements(t)).placeHold(request), unavailable);
    const pending = await holdRow(t, request.reference);
    assert.deepEqual([pending?.status, pending?.payment_intent_id], ['pending', null]);
    const [intent] = await intentsOf(t, owner.userId);
    assert.ok(intent);
    assert.equal(intent.metadata.hold_id, pending?.id);

    await deliver(t, t.payments, 'payment_intent.amount_capturable_updated', intent.id);
    const row = await holdRow(t, request.reference);
    assert.deepEqual([row?.status, row?.payment_intent_id, row?.amount_capturable], ['authorized', intent.id, 5_000]);
    // From now on it is found by its intent, and capturable as usual.
    assert.equal((await t.payments.captureHold(owner.clientId, request.reference, 4_000)).amountCaptured, 4_000);
  });

  test('an intent whose metadata names no hold of ours (or not one without an intent) changes nothing', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.visa));
    const hold = await t.payments.placeHold(request);
    // Another intent of the same customer claiming the same hold: the hold keeps its own intent.
    const other = await sandboxApi(t, 'POST', '/v1/payment_intents', [
      ['amount', '5000'],
      ['currency', 'eur'],
      ['customer', await customerOf(t, owner.userId)],
      ['payment_method', request.paymentMethodId],
      ['capture_method', 'manual'],
      ['confirm', 'true'],
      ['off_session', 'true'],
      ['metadata[hold_id]', (await holdRow(t, request.reference))?.id as string],
    ]);
    assert.equal(other.status, 200, JSON.stringify(other.body));
    await sandboxApi(t, 'POST', `/v1/payment_intents/${other.body.id}/cancel`);
    await deliver(t, t.payments, 'payment_intent.canceled', other.body.id as string);
    const row = await holdRow(t, request.reference);
    assert.deepEqual([row?.status, row?.payment_intent_id], ['authorized', hold.paymentIntentId]);
  });

  test('refreshes of one hold wait for nothing, and a slow, older read never overwrites a newer one', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.authenticateAlways));
    const hold = await t.payments.placeHold(request);
    assert.equal(hold.status, 'requires_action');
    const firstRead = latch();
    const proceed = latch();
    let reads = 0;
    const service = serviceWith(t, {
      ...t.processor,
      retrievePaymentIntent: async (id) => {
        const intent = await t.processor.retrievePaymentIntent(id);
        if (++reads === 1) {
          firstRead.open();
          await proceed.promise;
        }
        return intent;
      },
    });
    // The first refresh reads "requires_action" and is slow to write it...
    const slow = service.refreshHold(owner.clientId, request.reference);
    await firstRead.promise;
    // ...meanwhile the customer authenticates and a second refresh reads and records "authorized".
    await t.sandbox.browser.authenticatePaymentIntent(hold.paymentIntentId as string, hold.clientSecret as string, 'approve');
    const fresh = service.refreshHold(owner.clientId, request.reference);
    const seen = await watch(t.db, fresh, 10_000);
    assert.deepEqual(seen, { settled: true, lockWaits: 0, idleInTransaction: 0 }, 'no transaction waits for the processor, and nothing for a lock');
    assert.equal((await fresh).status, 'authorized');
    // The slow one's older read comes last: it is not written over the newer state.
    proceed.open();
    assert.equal((await slow).status, 'authorized');
    assert.equal((await holdRow(t, request.reference))?.status, 'authorized');
  });

  test('a final hold never changes: the SQL refuses to move it out of captured, released, expired, declined or failed', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.visa));
    await t.payments.placeHold(request);
    await t.payments.releaseHold(owner.clientId, request.reference);
    const released = await holdRow(t, request.reference);
    assert.equal(released?.status, 'released');
    for (const from of [undefined, ['released'] as const]) {
      const changed = await repo.updateHold(t.db, released?.id as string, { status: 'authorized', amount_capturable: 5_000 }, t.clock.now(), from);
      assert.equal(changed, undefined);
    }
    const after = await holdRow(t, request.reference);
    assert.deepEqual([after?.status, after?.amount_capturable, after?.updated_at], ['released', 0, released?.updated_at]);
    for (const status of repo.FINAL_HOLD_STATUSES) {
      await t.db.query('UPDATE payment_holds SET status = $2 WHERE id = $1', [released?.id, status]);
      assert.equal(await repo.updateHold(t.db, released?.id as string, { status: 'processing' }, t.clock.now(), ['pending', status]), undefined, status);
    }
    // Non-final states still move.
    await t.db.query("UPDATE payment_holds SET status = 'requires_action' WHERE id = $1", [released?.id]);
    assert.equal((await repo.updateHold(t.db, released?.id as string, { status: 'authorized' }, t.clock.now()))?.status, 'authorized');
  });

  test('capturing asks with an idempotency key that includes the amount', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.visa));
    const hold = await t.payments.placeHold(request);
    const from = t.sandbox.requestLog.length;
    await t.payments.captureHold(owner.clientId, request.reference, 3_210);
    const captures = t.sandbox.requestLog.slice(from).filter((r) => r.path === `/v1/payment_intents/${hold.paymentIntentId}/capture`);
    assert.deepEqual(
      captures.map((r) => r.idempotencyKey),
      [`${request.reference}:capture:3210`],
    );
  });

  test('a capture whose answer was lost, retried with another amount: what was captured is recorded (no idempotency clash)', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.visa));
    await t.payments.placeHold(request);
    const lossy = serviceWith(t, {
      ...t.processor,
      captureHold: async (input) => {
        await t.processor.captureHold(input);
        throw new PaymentProcessorError('connection reset', { retryable: true });
      },
    });
    await assert.rejects(lossy.captureHold(owner.clientId, request.reference, 3_000), unavailable);
    assert.equal((await holdRow(t, request.reference))?.status, 'authorized', 'we never heard of the capture');
    const captured = await t.payments.captureHold(owner.clientId, request.reference, 2_000);
    assert.deepEqual([captured.status, captured.amountCaptured], ['captured', 3_000]);
  });
});

describe('the payment-method mirror under concurrency', () => {
  test('a webhook re-reading a method while it is being deleted does not bring it back', async () => {
    const owner = await newOwner(t);
    const kept = await connectCard(t, owner, CARDS.visa);
    const removed = await connectCard(t, owner, CARDS.mastercard);
    await listMethods(t, owner);
    const event = await signedEvent(t, 'payment_method.attached', removed);
    const read = latch();
    const proceed = latch();
    let paused = false;
    const service = serviceWith(t, {
      ...t.processor,
      // The webhook's read of the method says "attached"; then it is slow to act on it.
      retrievePaymentMethod: async (id) => {
        const pm = await t.processor.retrievePaymentMethod(id);
        if (id === removed && !paused) {
          paused = true;
          read.open();
          await proceed.promise;
        }
        return pm;
      },
    });
    const webhook = service.handleWebhook(event.body, event.signature);
    await read.promise;
    const deletion = t.call('DELETE', `${USERS}/${owner.userId}/payment-methods/${removed}/`, { token: owner.token });
    const seen = await watch(t.db, deletion, 300);
    proceed.open();
    const [, deleted] = await Promise.all([webhook, deletion]);
    assert.equal(deleted.status, 204, deleted.text);
    assert.deepEqual(
      seen,
      { settled: false, lockWaits: 0, idleInTransaction: 0 },
      'the deletion waits for the webhook’s claim on the customer, and no connection waits with it',
    );
    const { rows } = await t.db.query('SELECT id, is_default FROM payment_methods WHERE user_id = $1', [owner.userId]);
    assert.deepEqual(rows, [{ id: kept, is_default: true }], 'the deleted method is not mirrored again');
  });
});

describe('claims in place of row locks', () => {
  test('a hold on a method being removed waits for the removal (holding no connection), then finds no method', async () => {
    const owner = await newOwner(t);
    const pm = await connectCard(t, owner, CARDS.visa);
    await listMethods(t, owner);
    const detaching = latch();
    const proceed = latch();
    const service = serviceWith(t, {
      ...t.processor,
      detachPaymentMethod: async (id) => {
        detaching.open();
        await proceed.promise;
        return t.processor.detachPaymentMethod(id);
      },
    });
    const removal = service.removePaymentMethod(owner.clientId, owner.userId, pm);
    await detaching.promise;
    const request = holdRequest(owner, pm);
    const hold = t.payments.placeHold(request);
    const seen = await watch(t.db, hold, 300);
    assert.deepEqual(seen, { settled: false, lockWaits: 0, idleInTransaction: 0 }, 'it waits, and no transaction waits for the processor');
    proceed.open();
    await removal;
    await assert.rejects(hold, (e: unknown) => e instanceof AppError && e.code === 'not_found');
    assert.equal(await holdRow(t, request.reference), undefined, 'no hold recorded');
    assert.equal((await listMethods(t, owner)).count, 0);
    assert.equal((await sandboxApi(t, 'GET', `/v1/payment_methods/${pm}`)).body.customer, null);
  });

  test('a hold on a method whose removal is refused waits for it, then is placed', async () => {
    const ctx = await setupTestApp({
      payments: {
        removalGuards: [
          async () => {
            await sleep(300);
            throw new AppError('payment_error', 'An unpaid debt is on this payment method.');
          },
        ],
      },
    });
    try {
      const owner = await newOwner(ctx);
      const pm = await connectCard(ctx, owner, CARDS.visa);
      await listMethods(ctx, owner);
      const removal = ctx.call('DELETE', `${USERS}/${owner.userId}/payment-methods/${pm}/`, { token: owner.token });
      await sleep(100);
      const hold = await ctx.payments.placeHold(holdRequest(owner, pm));
      assert.equal((await removal).status, 402);
      assert.equal(hold.status, 'authorized');
    } finally {
      await ctx.close();
    }
  });

  test('a removal asks the processor outside the Idempotency-Key’s transaction, yet a key reused for another request still changes nothing', async () => {
    const owner = await newOwner(t);
    const first = await connectCard(t, owner, CARDS.visa);
    const second = await connectCard(t, owner, CARDS.mastercard);
    await listMethods(t, owner);
    const headers = { 'idempotency-key': `delete-${randomUUID()}` };
    assert.equal((await t.call('DELETE', `${USERS}/${owner.userId}/payment-methods/${first}/`, { token: owner.token, headers })).status, 204);
    const reused = await t.call('DELETE', `${USERS}/${owner.userId}/payment-methods/${second}/`, { token: owner.token, headers });
    assert.equal(reused.status, 422, reused.text);
    assert.equal(reused.body.error.type, 'idempotency_conflict');
    assert.equal((await sandboxApi(t, 'GET', `/v1/payment_methods/${second}`)).body.customer, await customerOf(t, owner.userId), 'still attached');
    assert.deepEqual(
      (await listMethods(t, owner)).results.map((m) => [m.id, m.default]),
      [[second, true]],
    );
  });

  test('a claim whose holder died lapses: a capture waits for it, then captures once', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.visa));
    const hold = await t.payments.placeHold(request);
    // What a process killed while capturing leaves behind.
    await t.db.query(
      "INSERT INTO payment_claims (key, token, purpose, expires_at) VALUES ($1, $2, 'capture', clock_timestamp() + interval '400 milliseconds')",
      [`hold:${hold.id}`, randomUUID()],
    );
    const started = performance.now();
    const captured = await t.payments.captureHold(owner.clientId, request.reference, 1_000);
    assert.ok(performance.now() - started >= 300, 'waited for the claim to lapse');
    assert.deepEqual([captured.status, captured.amountCaptured], ['captured', 1_000]);
    const { rows } = await t.db.query('SELECT key FROM payment_claims WHERE key = $1', [`hold:${hold.id}`]);
    assert.deepEqual(rows, [], 'the claim is gone');
  });
});

describe('concurrent first holds for one reference', () => {
  test('both calls answer the same hold: one row, one payment intent, no error', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.visa));
    // Both calls get past "is there a hold for this reference?" before either records one.
    const users = createUsersService({ clock: t.clock, locales: ['en'] });
    let arrived = 0;
    const together = latch();
    const service = serviceWith(t, t.processor, async (db, clientId, userId) => {
      if (++arrived === 2) together.open();
      await Promise.race([together.promise, sleep(5_000)]);
      return users.requireUser(db, clientId, userId);
    });
    const [a, b] = await Promise.all([service.placeHold(request), service.placeHold(request)]);
    assert.equal(arrived, 2, 'both calls were in flight together');
    assert.equal(a.id, b.id);
    assert.deepEqual([a.status, b.status], ['authorized', 'authorized']);
    assert.equal(a.paymentIntentId, b.paymentIntentId);
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM payment_holds WHERE reference = $1', [request.reference]);
    assert.equal(rows[0]?.n, 1);
    assert.equal((await intentsOf(t, owner.userId)).length, 1);
  });

  test('another client asking a hold for a reference that is taken gets a conflict, not an error', async () => {
    const owner = await newOwner(t);
    const request = holdRequest(owner, await connectCard(t, owner, CARDS.visa));
    await t.payments.placeHold(request);
    const intruder = await newOwner(t);
    const theirs = { ...holdRequest(intruder, await connectCard(t, intruder, CARDS.visa)), reference: request.reference };
    await assert.rejects(t.payments.placeHold(theirs), (e: unknown) => e instanceof AppError && e.code === 'conflict');
    await assert.rejects(t.payments.getHold(intruder.clientId, request.reference), (e: unknown) => e instanceof AppError && e.code === 'not_found');
  });
});

describe('the sweep of holds a crash left pending', () => {
  test('younger than 23 h: placed again with the same key; older: looked up by metadata, else failed; never a second intent', async () => {
    const ctx = await setupTestApp();
    try {
      const prepare = async (processor: PaymentProcessor) => {
        const owner = await newOwner(ctx);
        const request = holdRequest(owner, await connectCard(ctx, owner, CARDS.visa));
        await assert.rejects(serviceWith(ctx, processor).placeHold(request), unavailable);
        return { owner, request, hold: (await holdRow(ctx, request.reference)) as repo.HoldRow };
      };
      // A day ago: one made by the processor (answer lost), one never asked for.
      const oldLost = await prepare(losingPlacements(ctx));
      const oldNever = await prepare(neverAsked(ctx));
      const [oldIntent] = await intentsOf(ctx, oldLost.owner.userId);
      assert.ok(oldIntent);
      ctx.clock.advance(24 * HOUR_MS + 60_000);
      // Ten minutes ago: the same two cases.
      const youngLost = await prepare(losingPlacements(ctx));
      const youngNever = await prepare(neverAsked(ctx));
      const [youngIntent] = await intentsOf(ctx, youngLost.owner.userId);
      ctx.clock.advance(10 * 60_000);
      // Just now: perhaps still in flight, so left alone.
      const fresh = await prepare(neverAsked(ctx));

      const from = ctx.sandbox.requestLog.length;
      const swept = await sweepPendingHolds({ db: ctx.db, clock: ctx.clock, processor: ctx.processor });
      assert.deepEqual(swept, { examined: 4, resumed: 2, found: 1, failed: 1, unresolved: 0 });

      const created = ctx.sandbox.requestLog.slice(from).filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents');
      assert.deepEqual(
        created.map((r) => [r.idempotencyKey, r.replayed]).sort(),
        [
          [youngLost.hold.idempotency_key, true],
          [youngNever.hold.idempotency_key, false],
        ].sort(),
        'only the younger ones are placed again, with their own keys',
      );

      const state = async (c: { request: { reference: string } }) => {
        const row = await holdRow(ctx, c.request.reference);
        return [row?.status, row?.payment_intent_id];
      };
      assert.deepEqual(await state(youngLost), ['authorized', youngIntent?.id]);
      const resumed = await holdRow(ctx, youngNever.request.reference);
      assert.equal(resumed?.status, 'authorized');
      assert.deepEqual(
        (await intentsOf(ctx, youngNever.owner.userId)).map((i) => i.id),
        [resumed?.payment_intent_id],
      );
      assert.deepEqual(await state(oldLost), ['authorized', oldIntent.id]);
      const failed = await holdRow(ctx, oldNever.request.reference);
      assert.deepEqual([failed?.status, failed?.payment_intent_id, failed?.failure_code], ['failed', null, 'not_placed']);
      assert.deepEqual(await intentsOf(ctx, oldNever.owner.userId), [], 'no intent made for it');
      assert.deepEqual(await state(fresh), ['pending', null]);
      for (const c of [youngLost, youngNever, oldLost]) assert.equal((await intentsOf(ctx, c.owner.userId)).length, 1);

      // A failed hold no longer blocks its method, and asking again for its reference answers it as it is.
      const removal = await ctx.call('DELETE', `${USERS}/${oldNever.owner.userId}/payment-methods/${oldNever.request.paymentMethodId}/`, {
        token: oldNever.owner.token,
      });
      assert.equal(removal.status, 204, removal.text);
      assert.equal((await ctx.payments.placeHold(oldNever.request)).status, 'failed');

      // The next sweep has only the fresh one left, once it is old enough.
      ctx.clock.advance(5 * 60_000);
      assert.deepEqual(await sweepPendingHolds({ db: ctx.db, clock: ctx.clock, processor: ctx.processor }), {
        examined: 1,
        resumed: 1,
        found: 0,
        failed: 0,
        unresolved: 0,
      });
    } finally {
      await ctx.close();
    }
  });

  test('a processor that cannot be reached leaves the hold pending for the next sweep', async () => {
    const ctx = await setupTestApp();
    try {
      const owner = await newOwner(ctx);
      const request = holdRequest(owner, await connectCard(ctx, owner, CARDS.visa));
      await assert.rejects(serviceWith(ctx, neverAsked(ctx)).placeHold(request), unavailable);
      ctx.clock.advance(10 * 60_000);
      const warnings: string[] = [];
      const log = { warn: (_fields: object, message: string) => warnings.push(message), error: () => {} };
      assert.deepEqual(await sweepPendingHolds({ db: ctx.db, clock: ctx.clock, processor: neverAsked(ctx), log }), {
        examined: 1,
        resumed: 0,
        found: 0,
        failed: 0,
        unresolved: 1,
      });
      assert.equal((await holdRow(ctx, request.reference))?.status, 'pending');
      assert.ok(warnings.length > 0);
    } finally {
      await ctx.close();
    }
  });
});
