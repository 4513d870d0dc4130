// One behaviour suite for the PaymentProcessor port, run against the Stripe
// adapter talking to the built-in sandbox over real HTTP, and again against
// Stripe's own test mode when STRIPE_SECRET_KEY (a test key) is configured.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { type PaymentOutcome, type PaymentProcessor, PaymentProcessorError, WebhookSignatureError } from '../src/modules/payments/processor.ts';
import { createStripeProcessor, STRIPE_API_VERSION } from '../src/modules/payments/stripe-processor.ts';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { setupTestApp, type TestContext } from './helpers.ts';

interface Driver {
  processor: PaymentProcessor;
  /** The SDK, for what a client's frontend or Stripe's dashboard does (confirming with a test card, reading a customer). */
  stripe: Stripe;
  webhookSecret: string;
  now(): Date;
  cleanup(): Promise<void>;
}

const DAY_MS = 24 * 3_600_000;

function suite(name: string, makeDriver: () => Promise<Driver>, options: { skip?: string } = {}) {
  describe(name, { concurrency: true, ...(options.skip ? { skip: options.skip } : {}) }, () => {
    let d: Driver;
    const customers: string[] = [];
    before(async () => {
      d = await makeDriver();
    });
    after(async () => {
      if (!d) return;
      await Promise.allSettled(customers.map((id) => d.stripe.customers.del(id)));
      await d.cleanup();
    });

    async function customer(): Promise<string> {
      const { customerId } = await d.processor.createCustomer({ idempotencyKey: `test:${randomUUID()}`, metadata: { suite: 'port' } });
      customers.push(customerId);
      return customerId;
    }

    /** A card attached the way Stripe's test mode allows server-side: a test PaymentMethod id attached to the customer. */
    async function attached(customerId: string, testPaymentMethod: string): Promise<string> {
      return (await d.stripe.paymentMethods.attach(testPaymentMethod, { customer: customerId })).id;
    }

    function hold(customerId: string, paymentMethodId: string, amount = 5_000, key = `test:${randomUUID()}:hold`) {
      return d.processor.placeHold({ customerId, paymentMethodId, paymentMethodType: 'card', amount, currency: 'EUR', idempotencyKey: key });
    }

    function expectStatus<S extends PaymentOutcome['status']>(outcome: PaymentOutcome, status: S): Extract<PaymentOutcome, { status: S }> {
      assert.equal(outcome.status, status, JSON.stringify(outcome));
      return outcome as Extract<PaymentOutcome, { status: S }>;
    }

    test('createCustomer: the same idempotency key gives the same customer, another key another one', async () => {
      const key = `test:${randomUUID()}`;
      const [a, b] = await Promise.all([
        d.processor.createCustomer({ idempotencyKey: key, metadata: { n: '1' } }),
        d.processor.createCustomer({ idempotencyKey: key, metadata: { n: '1' } }),
      ]);
      customers.push(a.customerId);
      assert.match(a.customerId, /^cus_/);
      assert.equal(b.customerId, a.customerId);
      assert.notEqual((await d.processor.createCustomer({ idempotencyKey: `test:${randomUUID()}`, metadata: {} })).customerId, a.customerId);
    });

    test('a card set up through a setup intent is listed with its details; the default is mirrored to the customer', async () => {
      const cus = await customer();
      const intent = await d.processor.createSetupIntent({ customerId: cus, paymentMethodType: 'card', metadata: { user_id: 'u1' } });
      assert.match(intent.id, /^seti_/);
      assert.ok(intent.clientSecret.startsWith(`${intent.id}_secret_`), intent.clientSecret);
      assert.equal(intent.status, 'requires_payment_method');
      assert.equal(intent.customerId, cus);
      await d.stripe.setupIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });
      const done = await d.processor.retrieveSetupIntent(intent.id);
      assert.equal(done?.status, 'succeeded');
      assert.match(done?.paymentMethodId ?? '', /^pm_/);

      const methods = await d.processor.listPaymentMethods(cus);
      assert.deepEqual(
        methods.map((m) => ({ id: m.id, customerId: m.customerId, type: m.type, brand: m.card?.brand, last4: m.card?.last4 })),
        [{ id: done?.paymentMethodId, customerId: cus, type: 'card', brand: 'visa', last4: '4242' }],
      );
      const card = methods[0]?.card;
      assert.ok(card && card.expMonth >= 1 && card.expMonth <= 12 && card.expYear >= d.now().getUTCFullYear(), JSON.stringify(card));
      assert.equal(methods[0]?.paypal, null);

      const pm = done?.paymentMethodId as string;
      await d.processor.setDefaultPaymentMethod(cus, pm);
      assert.equal(((await d.stripe.customers.retrieve(cus)) as Stripe.Customer).invoice_settings.default_payment_method, pm);
      await d.processor.setDefaultPaymentMethod(cus, null);
      assert.equal(((await d.stripe.customers.retrieve(cus)) as Stripe.Customer).invoice_settings.default_payment_method, null);
    });

    test('retrieveSetupIntent and retrievePaymentMethod answer undefined for unknown ids', async () => {
      assert.equal(await d.processor.retrieveSetupIntent(`seti_${randomUUID().replaceAll('-', '')}`), undefined);
      assert.equal(await d.processor.retrievePaymentMethod(`pm_${randomUUID().replaceAll('-', '')}`), undefined);
      assert.equal(await d.processor.retrievePaymentIntent(`pi_${randomUUID().replaceAll('-', '')}`), undefined);
    });

    test('detach: detached once, then not_attached; the method leaves the list and keeps no customer', async () => {
      const cus = await customer();
      const pm = await attached(cus, 'pm_card_visa');
      const other = await attached(cus, 'pm_card_mastercard');
      assert.equal(await d.processor.detachPaymentMethod(pm), 'detached');
      assert.equal(await d.processor.detachPaymentMethod(pm), 'not_attached');
      assert.equal((await d.processor.retrievePaymentMethod(pm))?.customerId, null);
      assert.deepEqual(
        (await d.processor.listPaymentMethods(cus)).map((m) => m.id),
        [other],
      );
    });

    test('a hold on 4242 is authorized for the amount until about 7 days later; a partial capture takes only that', async () => {
      const cus = await customer();
      const pm = await attached(cus, 'pm_card_visa');
      const authorized = expectStatus(await hold(cus, pm, 5_000), 'authorized');
      assert.equal(authorized.amountCapturable, 5_000);
      assert.ok(authorized.captureBefore, 'capture_before is known');
      const lasts = (authorized.captureBefore?.getTime() ?? 0) - d.now().getTime();
      assert.ok(lasts > 4 * DAY_MS && lasts <= 7 * DAY_MS + 60_000, `the hold lasts ${lasts / DAY_MS} days`);

      const key = `test:${randomUUID()}:capture`;
      const captured = await d.processor.captureHold({ paymentIntentId: authorized.paymentIntentId, amount: 1_234, idempotencyKey: key });
      assert.deepEqual(captured, { status: 'captured', paymentIntentId: authorized.paymentIntentId, amountCaptured: 1_234 });
      // A retry of the same capture answers the same, and nothing more is taken.
      assert.deepEqual(await d.processor.captureHold({ paymentIntentId: authorized.paymentIntentId, amount: 1_234, idempotencyKey: key }), captured);
      const intent = await d.processor.retrievePaymentIntent(authorized.paymentIntentId);
      assert.equal(intent?.amountReceived, 1_234);
      assert.equal(intent?.amount, 5_000);
      assert.equal(intent?.outcome.status, 'succeeded');
      assert.deepEqual(await d.processor.releaseHold({ paymentIntentId: authorized.paymentIntentId, idempotencyKey: `test:${randomUUID()}` }), {
        status: 'not_releasable',
        paymentIntentId: authorized.paymentIntentId,
        intentStatus: 'succeeded',
      });
    });

    test('capturing more than is held is refused (thrown, not a value) and the hold stays capturable', async () => {
      const cus = await customer();
      const authorized = expectStatus(await hold(cus, await attached(cus, 'pm_card_visa'), 2_000), 'authorized');
      await assert.rejects(
        d.processor.captureHold({ paymentIntentId: authorized.paymentIntentId, amount: 2_001, idempotencyKey: `test:${randomUUID()}` }),
        (error: unknown) => error instanceof PaymentProcessorError && error.retryable === false,
      );
      assert.equal((await d.processor.retrievePaymentIntent(authorized.paymentIntentId))?.outcome.status, 'authorized');
    });

    test('one idempotency key, one payment intent: placing the same hold again answers the same intent', async () => {
      const cus = await customer();
      const pm = await attached(cus, 'pm_card_visa');
      const key = `session:${randomUUID()}:hold`;
      const [first, second] = await Promise.all([hold(cus, pm, 3_000, key), hold(cus, pm, 3_000, key)]);
      const third = await hold(cus, pm, 3_000, key);
      const id = expectStatus(first, 'authorized').paymentIntentId;
      assert.equal(expectStatus(second, 'authorized').paymentIntentId, id);
      assert.equal(expectStatus(third, 'authorized').paymentIntentId, id);
      const intents = await d.stripe.paymentIntents.list({ customer: cus, limit: 10 });
      assert.deepEqual(
        intents.data.map((i) => i.id),
        [id],
      );
    });

    test('findPaymentIntent: the customer’s intent carrying that metadata, with it; none for another value, customer or an earlier time', async () => {
      const cus = await customer();
      const pm = await attached(cus, 'pm_card_visa');
      const since = new Date(d.now().getTime() - 3_600_000);
      const holdId = randomUUID();
      const mine = expectStatus(
        await d.processor.placeHold({
          customerId: cus,
          paymentMethodId: pm,
          paymentMethodType: 'card',
          amount: 2_000,
          currency: 'EUR',
          idempotencyKey: `test:${randomUUID()}:hold`,
          metadata: { hold_id: holdId, reference: 'test' },
        }),
        'authorized',
      );
      await hold(cus, pm, 1_000);
      const find = (overrides: Partial<Parameters<PaymentProcessor['findPaymentIntent']>[0]>) =>
        d.processor.findPaymentIntent({ customerId: cus, metadataKey: 'hold_id', metadataValue: holdId, createdSince: since, ...overrides });
      const found = await find({});
      assert.equal(found?.id, mine.paymentIntentId);
      assert.deepEqual(found?.metadata, { hold_id: holdId, reference: 'test' });
      assert.deepEqual(found?.outcome, mine, 'as retrievePaymentIntent tells it');
      assert.equal(found?.amount, 2_000);
      assert.deepEqual((await d.processor.retrievePaymentIntent(mine.paymentIntentId))?.metadata, { hold_id: holdId, reference: 'test' });
      assert.equal(await find({ metadataValue: randomUUID() }), undefined);
      assert.equal(await find({ customerId: await customer() }), undefined);
      assert.equal(await find({ createdSince: new Date(d.now().getTime() + 3_600_000) }), undefined, 'made before createdSince');
    });

    test('release: released, released again (idempotent), and then nothing can be captured', async () => {
      const cus = await customer();
      const authorized = expectStatus(await hold(cus, await attached(cus, 'pm_card_visa')), 'authorized');
      const released = await d.processor.releaseHold({ paymentIntentId: authorized.paymentIntentId, idempotencyKey: `test:${randomUUID()}` });
      assert.equal(released.status, 'released');
      assert.equal((await d.processor.releaseHold({ paymentIntentId: authorized.paymentIntentId, idempotencyKey: `test:${randomUUID()}` })).status, 'released');
      assert.deepEqual(await d.processor.captureHold({ paymentIntentId: authorized.paymentIntentId, amount: 100, idempotencyKey: `test:${randomUUID()}` }), {
        status: 'not_capturable',
        paymentIntentId: authorized.paymentIntentId,
        intentStatus: 'canceled',
        reason: null,
      });
      const intent = await d.processor.retrievePaymentIntent(authorized.paymentIntentId);
      assert.deepEqual(intent?.outcome, { status: 'canceled', paymentIntentId: authorized.paymentIntentId, reason: null });
      assert.equal(intent?.amountReceived, 0);
    });

    test('4000002760003184 (always authenticate): an off-session hold needs the customer, with the intent’s client secret', async () => {
      const cus = await customer();
      const outcome = expectStatus(await hold(cus, await attached(cus, 'pm_card_authenticationRequired')), 'requires_action');
      assert.equal(outcome.code, 'authentication_required');
      assert.ok(outcome.clientSecret.startsWith(`${outcome.paymentIntentId}_secret_`), outcome.clientSecret);
      const intent = await d.processor.retrievePaymentIntent(outcome.paymentIntentId);
      assert.deepEqual(intent?.outcome, outcome, 'retrieving the intent tells the same');
      assert.equal(intent?.amountCapturable, 0);
    });

    test('4000002500003155 attached without a setup intent: off-session needs authentication', async () => {
      const cus = await customer();
      const outcome = expectStatus(await hold(cus, await attached(cus, 'pm_card_authenticationRequiredOnSetup')), 'requires_action');
      assert.equal(outcome.code, 'authentication_required');
    });

    test('4000000000009995: declined for insufficient funds, a soft (retryable) decline', async () => {
      const cus = await customer();
      const outcome = expectStatus(await hold(cus, await attached(cus, 'pm_card_visa_chargeDeclinedInsufficientFunds')), 'declined');
      assert.equal(outcome.code, 'card_declined');
      assert.equal(outcome.declineCode, 'insufficient_funds');
      assert.equal(outcome.retryable, true);
      assert.match(outcome.paymentIntentId ?? '', /^pi_/);
      assert.equal((await d.processor.retrievePaymentIntent(outcome.paymentIntentId as string))?.outcome.status, 'declined');
    });

    test('4000000000000341: attaches, and every charge is declined (a hard decline)', async () => {
      const cus = await customer();
      const pm = await attached(cus, 'pm_card_chargeCustomerFail');
      assert.equal((await d.processor.listPaymentMethods(cus)).length, 1);
      const outcome = expectStatus(await hold(cus, pm), 'declined');
      assert.equal(outcome.code, 'card_declined');
      assert.equal(outcome.retryable, false);
      const charged = expectStatus(
        await d.processor.chargeOffSession({
          customerId: cus,
          paymentMethodId: pm,
          paymentMethodType: 'card',
          amount: 700,
          currency: 'eur',
          idempotencyKey: `test:${randomUUID()}`,
        }),
        'declined',
      );
      assert.equal(charged.code, 'card_declined');
    });

    test('chargeOffSession: 4242 succeeds at once for the amount; 3184 needs authentication', async () => {
      const cus = await customer();
      const ok = expectStatus(
        await d.processor.chargeOffSession({
          customerId: cus,
          paymentMethodId: await attached(cus, 'pm_card_visa'),
          paymentMethodType: 'card',
          amount: 1_999,
          currency: 'EUR',
          idempotencyKey: `test:${randomUUID()}`,
        }),
        'succeeded',
      );
      assert.equal(ok.amountReceived, 1_999);
      expectStatus(
        await d.processor.chargeOffSession({
          customerId: cus,
          paymentMethodId: await attached(cus, 'pm_card_authenticationRequired'),
          paymentMethodType: 'card',
          amount: 1_999,
          currency: 'EUR',
          idempotencyKey: `test:${randomUUID()}`,
        }),
        'requires_action',
      );
    });

    test('verifyWebhook: accepts the signed payload; refuses it altered, signed with another secret, too old, or unsigned', () => {
      const payload = JSON.stringify({
        id: 'evt_test_1',
        object: 'event',
        type: 'payment_intent.succeeded',
        created: 1,
        data: { object: { id: 'pi_1', object: 'payment_intent' } },
      });
      const now = d.now();
      const sign = (body: string, secret: string, at: Date) =>
        d.stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: Math.floor(at.getTime() / 1000) });
      const event = d.processor.verifyWebhook(Buffer.from(payload), sign(payload, d.webhookSecret, now), now);
      assert.deepEqual(event, { id: 'evt_test_1', type: 'payment_intent.succeeded', created: new Date(1000), object: { type: 'payment_intent', id: 'pi_1' } });
      const refused = (body: string, header: string | undefined, message: RegExp) =>
        assert.throws(
          () => d.processor.verifyWebhook(Buffer.from(body), header, now),
          (e: unknown) => e instanceof WebhookSignatureError && message.test(e.message),
        );
      refused(payload.replace('pi_1', 'pi_2'), sign(payload, d.webhookSecret, now), /does not match/);
      refused(payload, sign(payload, `whsec_${randomUUID()}`, now), /does not match/);
      refused(payload, sign(payload, d.webhookSecret, new Date(now.getTime() - 301_000)), /too old/);
      assert.doesNotThrow(() => d.processor.verifyWebhook(Buffer.from(payload), sign(payload, d.webhookSecret, new Date(now.getTime() - 299_000)), now));
      refused(payload, undefined, /missing/);
      refused(payload, 't=1,v0=abc', /does not match/);
    });
  });
}

// --- against the built-in sandbox (always) ---------------------------------------------

let t: TestContext;
before(async () => {
  t = await setupTestApp();
});
after(() => t?.close());

suite('PaymentProcessor port: Stripe adapter -> built-in sandbox over HTTP', async () => {
  const stripe = new Stripe(t.sandbox.keys.secretKey, {
    apiVersion: STRIPE_API_VERSION,
    host: '127.0.0.1',
    port: Number(new URL(t.sandbox.url).port),
    protocol: 'http',
    telemetry: false,
  });
  return { processor: t.processor, stripe, webhookSecret: t.sandbox.keys.webhookSecret, now: () => t.clock.now(), cleanup: async () => {} };
});

// --- against Stripe's test mode (when configured) -------------------------------------------

function stripeTestMode(): { config?: ReturnType<typeof loadConfig>['stripe']; skip?: string } {
  let config: ReturnType<typeof loadConfig>['stripe'];
  try {
    config = loadConfig(process.env).stripe;
  } catch (error) {
    if (error instanceof ConfigError && error.variable.startsWith('STRIPE_')) return { skip: `Stripe test mode not configured correctly: ${error.message}` };
    return { skip: 'Stripe test mode not configured (the environment does not load)' };
  }
  if (!config.secretKey)
    return { skip: 'set STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET (test mode) to run this suite against Stripe' };
  if (!config.secretKey.includes('_test_')) return { skip: 'STRIPE_SECRET_KEY is a live key: this suite runs against test mode only' };
  return { config };
}

const real = stripeTestMode();
if (real.skip) process.stdout.write(`# NOTICE: PaymentProcessor port suite against real Stripe skipped: ${real.skip}\n`);
suite(
  'PaymentProcessor port: Stripe adapter -> Stripe test mode',
  async () => {
    const config = real.config as NonNullable<typeof real.config>;
    const options = {
      secretKey: config.secretKey as string,
      publishableKey: config.publishableKey as string,
      webhookSecret: config.webhookSecret as string,
      apiBase: config.apiBase,
    };
    return {
      processor: createStripeProcessor(options),
      stripe: new Stripe(options.secretKey, { apiVersion: STRIPE_API_VERSION, telemetry: false }),
      webhookSecret: options.webhookSecret,
      now: () => new Date(),
      cleanup: async () => {},
    };
  },
  real.skip ? { skip: real.skip } : {},
);

// --- failures that are not payment outcomes -----------------------------------------------------

describe('PaymentProcessor port: transport and credential failures are thrown', () => {
  test('an unreachable processor: PaymentProcessorError, retryable', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port: free } = server.address() as { port: number };
        server.close(() => resolve(free));
      });
    });
    const processor = createStripeProcessor({
      secretKey: 'sk_test_unreachable000',
      publishableKey: 'pk_test_unreachable000',
      webhookSecret: 'whsec_unreachable000',
      apiBase: `http://127.0.0.1:${port}`,
      maxNetworkRetries: 0,
    });
    await assert.rejects(processor.createCustomer({ idempotencyKey: 'k', metadata: {} }), (e: unknown) => e instanceof PaymentProcessorError && e.retryable);
    await assert.rejects(processor.listPaymentMethods('cus_1'), (e: unknown) => e instanceof PaymentProcessorError && e.retryable);
  });

  test('a wrong API key: PaymentProcessorError, not retryable, and the message does not carry the key', async () => {
    const secretKey = `sk_test_${randomUUID().replaceAll('-', '')}`;
    const processor = createStripeProcessor({
      secretKey,
      publishableKey: 'pk_test_x0000000',
      webhookSecret: 'whsec_x0000000',
      apiBase: t.sandbox.url,
      sandbox: true,
    });
    await assert.rejects(processor.createCustomer({ idempotencyKey: `k:${randomUUID()}`, metadata: {} }), (e: unknown) => {
      assert.ok(e instanceof PaymentProcessorError, String(e));
      assert.equal(e.retryable, false);
      assert.ok(!e.message.includes(secretKey) && !e.message.includes(secretKey.slice(8, 20)), e.message);
      assert.ok(!String((e as { cause?: unknown }).cause ?? '').includes(secretKey), 'nor does its cause');
      return true;
    });
  });
});
