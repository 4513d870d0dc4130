// The payments rules that have a file of their own, each tested where it
// lives: what a processor outcome means for a hold (holds.ts), how a failed
// processor call is answered (processor-calls.ts), claims (claims.ts), and
// which method becomes the default (mirror.ts). The service's behaviour
// through HTTP is in payments.test.ts and payments-races.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { claimed } from '../src/modules/payments/claims.ts';
import { holdChanges } from '../src/modules/payments/holds.ts';
import { ensureDefault } from '../src/modules/payments/mirror.ts';
import { PaymentProcessorError } from '../src/modules/payments/processor.ts';
import { ask } from '../src/modules/payments/processor-calls.ts';
import * as repo from '../src/modules/payments/repository.ts';
import { AppError } from '../src/platform/errors.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { newOwner } from './payments-support.ts';

let t: TestContext;
before(async () => {
  t = await setupTestApp();
});
after(() => t?.close());

describe('holds.ts: what a processor outcome means for the hold', () => {
  const captureBefore = new Date('2026-01-08T00:00:00Z');

  test('authorized: capturable, with its deadline, and an earlier failure cleared', () => {
    assert.deepEqual(holdChanges({ status: 'authorized', paymentIntentId: 'pi_1', amountCapturable: 5000, captureBefore }), {
      payment_intent_id: 'pi_1',
      status: 'authorized',
      amount_capturable: 5000,
      capture_before: captureBefore,
      failure_code: null,
      failure_message: null,
    });
  });

  test('requires_action: nothing capturable, the client secret kept for the customer', () => {
    assert.deepEqual(holdChanges({ status: 'requires_action', paymentIntentId: 'pi_1', clientSecret: 'pi_1_secret', code: 'authentication_required' }), {
      payment_intent_id: 'pi_1',
      status: 'requires_action',
      client_secret: 'pi_1_secret',
      failure_code: 'authentication_required',
      amount_capturable: 0,
    });
  });

  test('declined: the decline code before the generic one; an unknown intent id is not written', () => {
    const declined = { status: 'declined', code: 'card_declined', message: 'Your card has insufficient funds.', retryable: false } as const;
    assert.deepEqual(holdChanges({ ...declined, paymentIntentId: null, declineCode: 'insufficient_funds' }), {
      status: 'declined',
      amount_capturable: 0,
      failure_code: 'insufficient_funds',
      failure_message: 'Your card has insufficient funds.',
    });
    assert.equal(holdChanges({ ...declined, paymentIntentId: 'pi_1', declineCode: null }).failure_code, 'card_declined');
    assert.equal(holdChanges({ ...declined, paymentIntentId: 'pi_1', declineCode: null }).payment_intent_id, 'pi_1');
  });

  test('succeeded is captured (what was received); processing stays processing', () => {
    assert.deepEqual(holdChanges({ status: 'succeeded', paymentIntentId: 'pi_1', amountReceived: 1234 }), {
      payment_intent_id: 'pi_1',
      status: 'captured',
      amount_capturable: 0,
      amount_captured: 1234,
    });
    assert.deepEqual(holdChanges({ status: 'processing', paymentIntentId: 'pi_1' }), { payment_intent_id: 'pi_1', status: 'processing' });
  });

  test('canceled by the processor (automatic: 7 days passed) is expired; canceled by us, or for any other reason, is released', () => {
    assert.equal(holdChanges({ status: 'canceled', paymentIntentId: 'pi_1', reason: 'automatic' }).status, 'expired');
    for (const reason of ['requested_by_customer', 'abandoned', null]) {
      assert.deepEqual(holdChanges({ status: 'canceled', paymentIntentId: 'pi_1', reason }), {
        payment_intent_id: 'pi_1',
        status: 'released',
        amount_capturable: 0,
      });
    }
  });
});

describe('processor-calls.ts: how a failed processor call is answered', () => {
  function recorder() {
    const lines: { level: 'warn' | 'error'; fields: object; message: string }[] = [];
    return {
      lines,
      log: {
        warn: (fields: object, message: string) => lines.push({ level: 'warn', fields, message }),
        error: (fields: object, message: string) => lines.push({ level: 'error', fields, message }),
      },
    };
  }

  test('an answer is passed through, and nothing is logged', async () => {
    const { lines, log } = recorder();
    assert.equal(await ask({ log }, async () => 42), 42);
    assert.deepEqual(lines, []);
  });

  test('a transport failure is 503 payment_processor_unavailable with Retry-After, its cause logged as a warning only', async () => {
    const { lines, log } = recorder();
    const cause = new PaymentProcessorError('connect ECONNREFUSED 127.0.0.1:1', { retryable: true });
    const error = await ask({ log }, () => Promise.reject(cause)).catch((e: unknown) => e);
    assert.ok(error instanceof AppError);
    assert.equal(error.code, 'payment_processor_unavailable');
    assert.deepEqual(error.headers, { 'Retry-After': '5' });
    assert.doesNotMatch(error.message, /ECONNREFUSED/);
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn'],
    );
  });

  test('a refusal retrying cannot cure is 500 unexpected_error, logged as an error with the adapter’s wording and code only', async () => {
    const { lines, log } = recorder();
    const refusal = new PaymentProcessorError('Invalid API Key provided', {
      retryable: false,
      processorCode: 'api_key_invalid',
      cause: new Error('sk_test_secret'),
    });
    const error = await ask({ log }, () => Promise.reject(refusal)).catch((e: unknown) => e);
    assert.ok(error instanceof AppError);
    assert.equal(error.code, 'unexpected_error');
    assert.equal(error.headers, undefined);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.level, 'error');
    assert.deepEqual(lines[0]?.fields, { processor_error: 'Invalid API Key provided', processor_code: 'api_key_invalid' });
  });

  test('any other error is not the processor’s: it goes through as it is', async () => {
    const { lines, log } = recorder();
    const bug = new TypeError('a bug of ours');
    await assert.rejects(
      ask({ log }, () => Promise.reject(bug)),
      (e: unknown) => e === bug,
    );
    assert.deepEqual(lines, []);
  });
});

describe('claims.ts: what must not run twice at once', () => {
  const leased = (claimLeaseMs: number) => ({ db: t.db, claimLeaseMs });

  test('work under one key runs one at a time; under another key, alongside', async () => {
    const key = `test:${randomUUID()}`;
    const running = new Set<string>();
    const overlaps: string[] = [];
    const work = (name: string, claimKey: string) =>
      claimed(leased(15_000), claimKey, name, async () => {
        if (running.size > 0) overlaps.push(`${name} with ${[...running].join(',')}`);
        running.add(name);
        await sleep(40);
        running.delete(name);
      });
    await Promise.all([work('a', key), work('b', key), work('c', key)]);
    assert.deepEqual(overlaps, []);
    await Promise.all([work('d', key), work('e', `test:${randomUUID()}`)]);
    assert.equal(overlaps.length, 1, 'the other key ran alongside');
  });

  test('the claim is let go when its work fails: the next holder does not wait for the lease', async () => {
    const key = `test:${randomUUID()}`;
    await assert.rejects(
      claimed(leased(60_000), key, 'fails', async () => {
        throw new Error('failed');
      }),
      /failed/,
    );
    const started = performance.now();
    assert.equal(await claimed(leased(60_000), key, 'next', async () => 'ran'), 'ran');
    assert.ok(performance.now() - started < 5_000);
  });

  test('a holder that outlives its lease loses the claim: it is taken over, and the old holder can no longer write under it', async () => {
    const key = `test:${randomUUID()}`;
    let late: unknown;
    const slow = claimed(leased(100), key, 'slow', async (claim) => {
      await sleep(600);
      late = await claim.apply(async () => 'written').catch((e: unknown) => e);
    });
    await sleep(20);
    const started = performance.now();
    const wrote = await claimed(leased(15_000), key, 'fast', (claim) => claim.apply(async (tx) => repo.claimedFor(tx, key, 'fast')));
    assert.equal(wrote, true);
    assert.ok(performance.now() - started < 600, 'taken over once the lease lapsed, before the slow holder finished');
    await slow;
    assert.ok(late instanceof PaymentProcessorError, String(late));
    assert.equal(late.retryable, true);
  });

  test('while held, the claim says what for (a method being removed is not used meanwhile)', async () => {
    const key = `test:${randomUUID()}`;
    const during = await claimed(leased(15_000), key, 'remove:pm_1', async () => [
      await repo.claimedFor(t.db, key, 'remove:pm_1'),
      await repo.claimedFor(t.db, key, 'sync'),
    ]);
    assert.deepEqual(during, [true, false]);
    assert.equal(await repo.claimedFor(t.db, key, 'remove:pm_1'), false);
  });
});

describe('mirror.ts: which method becomes the default', () => {
  const DAY_MS = 86_400_000;

  async function userWithMethods(created: Date[]) {
    const { clientId, userId } = await newOwner(t);
    const owner: repo.Owner = { clientId, userId, account: `acct_${randomUUID().slice(0, 8)}` };
    const customerId = `cus_${randomUUID().replaceAll('-', '')}`;
    await repo.insertCustomer(t.db, owner, customerId, t.clock.now());
    const ids: string[] = [];
    for (const createdAt of created) {
      const id = `pm_${randomUUID().replaceAll('-', '')}`;
      await repo.upsertPaymentMethod(
        t.db,
        owner,
        {
          id,
          customerId,
          type: 'card',
          cardBrand: 'visa',
          cardLast4: '4242',
          cardExpMonth: 12,
          cardExpYear: 2034,
          cardholderName: null,
          paypalEmail: null,
          createdAt,
        },
        t.clock.now(),
      );
      ids.push(id);
    }
    const defaults = async () => (await repo.allPaymentMethods(t.db, owner)).filter((m) => m.is_default).map((m) => m.id);
    return { owner, ids, defaults };
  }

  // Created out of order, so that neither insertion order nor id order gives the answer.
  const base = new Date('2026-03-01T00:00:00Z').getTime();
  const created = [new Date(base + 2 * DAY_MS), new Date(base), new Date(base + 5 * DAY_MS), new Date(base + 1 * DAY_MS)];

  test('none is the default: the first one connected becomes it (oldest), or after the default went, the newest remaining', async () => {
    const first = await userWithMethods(created);
    assert.equal(await t.db.transaction((tx) => ensureDefault(tx, first.owner, 'oldest')), first.ids[1]);
    assert.deepEqual(await first.defaults(), [first.ids[1]]);

    const second = await userWithMethods(created);
    assert.equal(await t.db.transaction((tx) => ensureDefault(tx, second.owner, 'newest')), second.ids[2]);
    assert.deepEqual(await second.defaults(), [second.ids[2]]);
  });

  test('a user who has a default keeps it; one without methods gets none', async () => {
    const user = await userWithMethods(created);
    await repo.setDefaultPaymentMethod(t.db, user.owner, user.ids[3] as string);
    assert.equal(await t.db.transaction((tx) => ensureDefault(tx, user.owner, 'oldest')), undefined);
    assert.equal(await t.db.transaction((tx) => ensureDefault(tx, user.owner, 'newest')), undefined);
    assert.deepEqual(await user.defaults(), [user.ids[3]]);

    const none = await userWithMethods([]);
    assert.equal(await t.db.transaction((tx) => ensureDefault(tx, none.owner, 'oldest')), undefined);
    assert.deepEqual(await none.defaults(), []);
  });
});
