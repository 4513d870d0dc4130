// Payments through our API, end to end against the built-in Stripe sandbox
// over real HTTP: setup intents, connecting methods with each test card
// through the sandbox's browser stand-in, listing, default, deletion and its
// refusals; holds (authorize, partial capture, release, authentication,
// decline, expiry) through the payments module; and the webhook endpoint
// (signatures, duplicates, re-reading the processor).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { buildApp } from '../src/app.ts';
import { type PaymentProcessor, PaymentProcessorError } from '../src/modules/payments/processor.ts';
import { createPaymentsService, purgeHandledWebhookEvents } from '../src/modules/payments/service.ts';
import { createStripeProcessor } from '../src/modules/payments/stripe-processor.ts';
import { createUsersService } from '../src/modules/users/service.ts';
import { ConfigError, loadConfig, requirePaymentProcessor } from '../src/platform/config.ts';
import { AppError } from '../src/platform/errors.ts';
import { loggedUrl, loggerOptions } from '../src/platform/http/server.ts';
import { sandboxBrowserRoutes } from '../src/sandbox/stripe/browser.ts';
import { signatureHeader } from '../src/sandbox/stripe/webhooks.ts';
import { assertProblem, BASE_URL, setupTestApp, type TestContext } from './helpers.ts';
import {
  CARDS,
  connectCard,
  connectPayPal,
  customerOf,
  eventually,
  listMethods,
  newOwner,
  newUser,
  type Owner,
  sandboxApi,
  setupIntent,
  USERS,
} from './payments-support.ts';

/** With webhooks delivered by the sandbox to the app (the normal setup). */
let live: TestContext;
/** Without webhooks: what the API does when they are late or lost. */
let quiet: TestContext;

before(async () => {
  [live, quiet] = await Promise.all([setupTestApp({ payments: { webhooks: true } }), setupTestApp()]);
});
after(async () => {
  await Promise.all([live?.close(), quiet?.close()]);
});

const DAY_MS = 24 * 3_600_000;

function methodsPath(owner: Owner, userId = owner.userId) {
  return `${USERS}/${userId}/payment-methods/`;
}

async function mirrored(t: TestContext, userId: string) {
  const { rows } = await t.db.query<{ id: string; is_default: boolean }>(
    'SELECT id, is_default FROM payment_methods WHERE user_id = $1 ORDER BY created_at, seq',
    [userId],
  );
  return rows;
}

async function processorDefault(t: TestContext, userId: string): Promise<string | null> {
  const customer = await sandboxApi(t, 'GET', `/v1/customers/${await customerOf(t, userId)}`);
  return (customer.body.invoice_settings as { default_payment_method: string | null }).default_payment_method;
}

async function attachedTo(t: TestContext, pm: string): Promise<string | null> {
  return (await sandboxApi(t, 'GET', `/v1/payment_methods/${pm}`)).body.customer as string | null;
}

describe('GET /users/<id>/setup-intents/', { concurrency: true }, () => {
  test('answers a new setup intent of the processor with its client secret under both names', async () => {
    const owner = await newOwner(quiet);
    const res = await quiet.call('GET', `${USERS}/${owner.userId}/setup-intents/`, { token: owner.token });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['client_secret', 'id', 'pm_type', 'processor', 'publishable_key', 'setup_intent_client_secret', 'status']);
    assert.match(res.body.id, /^seti_/);
    assert.ok(res.body.client_secret.startsWith(`${res.body.id}_secret_`));
    assert.equal(res.body.setup_intent_client_secret, res.body.client_secret);
    assert.equal(res.body.status, 'requires_payment_method');
    assert.equal(res.body.pm_type, 'card');
    assert.equal(res.body.processor, 'stripe_sandbox');
    assert.equal(res.body.publishable_key, quiet.sandbox.keys.publishableKey);
    assert.ok(!res.text.includes(quiet.sandbox.keys.secretKey));
    const atProcessor = await sandboxApi(quiet, 'GET', `/v1/setup_intents/${res.body.id}`);
    assert.deepEqual(atProcessor.body.payment_method_types, ['card']);
    assert.equal(atProcessor.body.usage, 'off_session');
    assert.equal(atProcessor.body.customer, await customerOf(quiet, owner.userId));
  });

  test('pm_type=paypal makes a PayPal setup intent; anything else is 400', async () => {
    const owner = await newOwner(quiet);
    const paypal = await setupIntent(quiet, owner, 'paypal');
    assert.deepEqual((await sandboxApi(quiet, 'GET', `/v1/setup_intents/${paypal.id}`)).body.payment_method_types, ['paypal']);
    for (const bad of ['apple_pay', 'CARD', '', 'card,paypal']) {
      const res = await quiet.call('GET', `${USERS}/${owner.userId}/setup-intents/?pm_type=${encodeURIComponent(bad)}`, { token: owner.token });
      assertProblem(res, 400, 'validation_error');
      assert.equal(res.body.errors[0].field, 'pm_type', bad);
    }
  });

  test('one processor customer per user, made once (also under concurrent first calls), carrying our ids', async () => {
    const owner = await newOwner(quiet);
    const intents = await Promise.all(Array.from({ length: 5 }, () => setupIntent(quiet, owner)));
    assert.equal(new Set(intents.map((i) => i.id)).size, 5, 'a new setup intent each time');
    const customers = await Promise.all(intents.map(async (i) => (await sandboxApi(quiet, 'GET', `/v1/setup_intents/${i.id}`)).body.customer));
    assert.equal(new Set(customers).size, 1);
    const { rows } = await quiet.db.query('SELECT customer_id FROM payment_customers WHERE user_id = $1', [owner.userId]);
    assert.deepEqual(rows, [{ customer_id: customers[0] }]);
    const customer = await sandboxApi(quiet, 'GET', `/v1/customers/${customers[0]}`);
    assert.deepEqual(customer.body.metadata, { client_id: owner.clientId, user_id: owner.userId });
    const other = await setupIntent(quiet, owner, 'card', await newUser(quiet, owner));
    assert.notEqual((await sandboxApi(quiet, 'GET', `/v1/setup_intents/${other.id}`)).body.customer, customers[0]);
  });

  test('another client’s user, an unknown user and a deleted user are 404, and no customer is made for them', async () => {
    const owner = await newOwner(quiet);
    const intruder = await newOwner(quiet);
    assertProblem(await quiet.call('GET', `${USERS}/${owner.userId}/setup-intents/`, { token: intruder.token }), 404, 'not_found');
    assertProblem(await quiet.call('GET', `${USERS}/${randomUUID()}/setup-intents/`, { token: owner.token }), 404, 'not_found');
    const { rows } = await quiet.db.query('SELECT 1 FROM payment_customers WHERE user_id = $1', [owner.userId]);
    assert.equal(rows.length, 0);
    assert.equal((await quiet.call('DELETE', `${USERS}/${owner.userId}/`, { token: owner.token })).status, 204);
    assertProblem(await quiet.call('GET', `${USERS}/${owner.userId}/setup-intents/`, { token: owner.token }), 404, 'not_found');
  });

  test('an unreachable processor is 503 payment_processor_unavailable with Retry-After, revealing nothing of it', async () => {
    const processor = createStripeProcessor({
      secretKey: quiet.sandbox.keys.secretKey,
      publishableKey: quiet.sandbox.keys.publishableKey,
      webhookSecret: quiet.sandbox.keys.webhookSecret,
      apiBase: 'http://127.0.0.1:1',
      sandbox: true,
      maxNetworkRetries: 0,
    });
    const app = await buildApp({
      config: quiet.config,
      db: quiet.db,
      clock: quiet.clock,
      authenticate: quiet.clients.authenticate,
      catalogue: quiet.catalogue,
      payments: { processor },
      logger: false,
    });
    try {
      const owner = await newOwner(quiet);
      const res = await app.inject({ method: 'GET', url: `${USERS}/${owner.userId}/setup-intents/`, headers: { authorization: `Bearer ${owner.token}` } });
      const body = JSON.parse(res.body);
      assertProblem({ status: res.statusCode, headers: res.headers, body, text: res.body }, 503, 'payment_processor_unavailable');
      assert.equal(res.headers['retry-after'], '5');
      assert.ok(!res.body.includes('127.0.0.1') && !res.body.includes('sk_test'), res.body);
    } finally {
      await app.close();
    }
  });
});

/** A logger like the service's (loggerOptions), writing its JSON lines into `lines`. */
function capturingLogger(lines: string[], level = 'info') {
  return pino(loggerOptions(level), {
    write: (line: string) => {
      lines.push(line);
    },
  });
}

describe('a processor that refuses us', () => {
  test('a revoked or wrong key is 500 unexpected_error (no Retry-After), logged as an error without the key', async () => {
    const secretKey = `sk_test_${randomUUID().replaceAll('-', '')}`;
    const processor = createStripeProcessor({
      secretKey,
      publishableKey: quiet.sandbox.keys.publishableKey,
      webhookSecret: quiet.sandbox.keys.webhookSecret,
      apiBase: quiet.sandbox.url,
      sandbox: true,
    });
    const lines: string[] = [];
    const app = await buildApp({
      config: quiet.config,
      db: quiet.db,
      clock: quiet.clock,
      authenticate: quiet.clients.authenticate,
      catalogue: quiet.catalogue,
      payments: { processor },
      loggerInstance: capturingLogger(lines),
    });
    try {
      const owner = await newOwner(quiet);
      const res = await app.inject({ method: 'GET', url: `${USERS}/${owner.userId}/setup-intents/`, headers: { authorization: `Bearer ${owner.token}` } });
      const body = JSON.parse(res.body);
      assertProblem({ status: res.statusCode, headers: res.headers, body, text: res.body }, 500, 'unexpected_error');
      assert.equal(res.headers['retry-after'], undefined);
      assert.ok(!res.body.includes('sk_test') && !res.body.includes('Stripe'), res.body);
      const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string; processor_error?: string });
      const refusal = logged.find((l) => l.level === 50 && /refused a request/.test(l.msg));
      assert.ok(refusal, lines.join(''));
      assert.match(String(refusal.processor_error), /refused the API key/);
      for (const line of lines) {
        assert.ok(!line.includes(secretKey) && !line.includes(secretKey.slice(8, 24)), line);
      }
    } finally {
      await app.close();
    }
  });
});

describe('request logs', () => {
  test('client secrets in query strings never reach the log: /sandbox/ queries are dropped, client_secret values replaced', async () => {
    const lines: string[] = [];
    const app = await buildApp({
      config: quiet.config,
      db: quiet.db,
      clock: quiet.clock,
      authenticate: quiet.clients.authenticate,
      catalogue: quiet.catalogue,
      payments: { processor: quiet.processor, processorRoutes: sandboxBrowserRoutes(quiet.sandbox) },
      // The sandbox pages' request lines are at debug.
      loggerInstance: capturingLogger(lines, 'debug'),
    });
    try {
      const owner = await newOwner(quiet);
      const intent = await setupIntent(quiet, owner);
      const secret = intent.client_secret;
      const urls = [
        `/sandbox/?setup_intent=${intent.id}&client_secret=${encodeURIComponent(secret)}`,
        `/sandbox/setup_intents/${intent.id}?client_secret=${encodeURIComponent(secret)}`,
        `${USERS}/?page=1&payment_intent_client_secret=${encodeURIComponent(secret)}&client_secret=${encodeURIComponent(secret)}`,
      ];
      for (const url of urls) await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${owner.token}` } });
      const logged = lines.join('');
      assert.ok(!logged.includes(secret) && !logged.includes(secret.split('_secret_')[1] as string), logged);
      const seen = lines.map((l) => JSON.parse(l) as { msg: string; url?: string }).filter((l) => l.msg === 'request');
      assert.deepEqual(
        seen.map((l) => l.url),
        [
          '/sandbox/?[redacted]',
          `/sandbox/setup_intents/${intent.id}?[redacted]`,
          `${USERS}/?page=1&payment_intent_client_secret=[redacted]&client_secret=[redacted]`,
        ],
      );
    } finally {
      await app.close();
    }
  });

  test('loggedUrl leaves other URLs as they are', () => {
    assert.equal(loggedUrl('/api/v1/users/?page=2&page_size=10'), '/api/v1/users/?page=2&page_size=10');
    assert.equal(loggedUrl('/sandbox/'), '/sandbox/');
    assert.equal(loggedUrl('/sandboxes?x=1'), '/sandboxes?x=1');
    assert.equal(loggedUrl('/sandbox?client_secret=abc'), '/sandbox?[redacted]');
    assert.equal(loggedUrl('/x?CLIENT_SECRET=abc&y=1'), '/x?CLIENT_SECRET=[redacted]&y=1');
  });
});

describe('connecting and listing payment methods', { concurrency: true }, () => {
  test('the first method becomes the default; the list is newest first, with card and PayPal details', async () => {
    const owner = await newOwner(live);
    const visa = await connectCard(live, owner, CARDS.visa);
    live.clock.advance(1_000);
    const mastercard = await connectCard(live, owner, CARDS.mastercard);
    live.clock.advance(1_000);
    const paypal = await connectPayPal(live, owner);
    const list = await listMethods(live, owner);
    assert.equal(list.count, 3);
    assert.deepEqual(
      list.results.map((m) => [m.id, m.type, m.default]),
      [
        [paypal, 'paypal', false],
        [mastercard, 'card', false],
        [visa, 'card', true],
      ],
    );
    const [pp, mc] = list.results as unknown as Record<string, unknown>[];
    assert.deepEqual(pp, {
      id: paypal,
      type: 'paypal',
      default: false,
      created_at: (pp as { created_at: string }).created_at,
      paypal: { email: 'buyer@example.com' },
    });
    assert.deepEqual((mc as { card: unknown }).card, {
      brand: 'mastercard',
      last4: '4444',
      expiration_date: `12/${String((live.clock.now().getUTCFullYear() + 3) % 100)}`,
      cardholder_name: null,
    });
    assert.ok(Date.parse(String((mc as { created_at: string }).created_at)));
    assert.equal(await processorDefault(live, owner.userId), visa, 'the default is mirrored to the processor’s customer');
  });

  test('the expiration date is MM/YY and the cardholder name is the one given', async () => {
    const owner = await newOwner(quiet);
    const intent = await setupIntent(quiet, owner);
    const res = await quiet.call('POST', `/sandbox/setup_intents/${intent.id}/confirm`, {
      body: { client_secret: intent.client_secret, card_number: '4000056655665556', exp_month: 3, exp_year: 2031, cardholder_name: 'Grace Hopper' },
    });
    assert.equal(res.body.status, 'succeeded');
    const [method] = (await listMethods(quiet, owner)).results as unknown as { card: unknown }[];
    assert.deepEqual(method?.card, { brand: 'visa', last4: '5556', expiration_date: '03/31', cardholder_name: 'Grace Hopper' });
  });

  test('cards from Apple Pay and Google Pay are listed with those types (and their card details)', async () => {
    const owner = await newOwner(quiet);
    for (const wallet of ['apple_pay', 'google_pay']) {
      const intent = await setupIntent(quiet, owner);
      const res = await quiet.call('POST', `/sandbox/setup_intents/${intent.id}/confirm`, {
        body: { client_secret: intent.client_secret, card_number: CARDS.mastercard, wallet },
      });
      assert.equal(res.body.status, 'succeeded', res.text);
      quiet.clock.advance(1_000);
    }
    const list = await listMethods(quiet, owner);
    assert.deepEqual(
      list.results.map((m) => [m.type, (m as unknown as { card: { last4: string } }).card.last4]),
      [
        ['google_pay', '4444'],
        ['apple_pay', '4444'],
      ],
    );
  });

  test('without webhooks, a confirmed method is listed at once (the list re-reads the processor)', async () => {
    const owner = await newOwner(quiet);
    const pm = await connectCard(quiet, owner, CARDS.visa);
    assert.deepEqual((await mirrored(quiet, owner.userId)).length, 0, 'nothing mirrored yet: no webhook in this setup');
    const list = await listMethods(quiet, owner);
    assert.deepEqual(
      list.results.map((m) => [m.id, m.default]),
      [[pm, true]],
    );
  });

  test('with webhooks, the mirror follows the processor without anyone listing', async () => {
    const owner = await newOwner(live);
    const pm = await connectCard(live, owner, CARDS.visa);
    const rows = await eventually(async () => {
      const found = await mirrored(live, owner.userId);
      return found.length === 1 ? found : undefined;
    }, 'the webhook mirrors the method');
    assert.deepEqual(rows, [{ id: pm, is_default: true }]);
  });

  test('every test card that sets up is connected; a declined card is not', async () => {
    const owner = await newOwner(quiet);
    const connected = [];
    for (const card of [CARDS.visa, CARDS.authenticateOnSetup, CARDS.authenticateAlways, CARDS.insufficientFunds, CARDS.chargesFail]) {
      connected.push(await connectCard(quiet, owner, card));
    }
    const intent = await setupIntent(quiet, owner);
    const declined = await quiet.call('POST', `/sandbox/setup_intents/${intent.id}/confirm`, {
      body: { client_secret: intent.client_secret, card_number: CARDS.declined },
    });
    assert.equal(declined.body.status, 'requires_payment_method');
    const list = await listMethods(quiet, owner);
    assert.deepEqual(list.results.map((m) => m.id).sort(), [...connected].sort());
    assert.deepEqual(
      list.results.filter((m) => m.default).map((m) => m.id),
      [connected[0]],
    );
  });

  test('pages: page and page_size with absolute links; past the last page is 404; bad values are 400', async () => {
    const owner = await newOwner(quiet);
    for (const card of [CARDS.visa, CARDS.mastercard, CARDS.visa]) {
      await connectCard(quiet, owner, card);
      quiet.clock.advance(1_000);
    }
    const all = await listMethods(quiet, owner);
    const first = await listMethods(quiet, owner, owner.userId, '?page_size=2');
    assert.equal(first.count, 3);
    assert.deepEqual(
      first.results.map((m) => m.id),
      all.results.slice(0, 2).map((m) => m.id),
    );
    assert.equal(first.next, `${BASE_URL}${methodsPath(owner)}?page_size=2&page=2`);
    assert.equal(first.previous, null);
    const second = await listMethods(quiet, owner, owner.userId, '?page_size=2&page=2');
    assert.deepEqual(
      second.results.map((m) => m.id),
      all.results.slice(2).map((m) => m.id),
    );
    assert.equal(second.next, null);
    assert.equal(second.previous, `${BASE_URL}${methodsPath(owner)}?page_size=2&page=1`);
    assertProblem(await quiet.call('GET', `${methodsPath(owner)}?page_size=2&page=3`, { token: owner.token }), 404, 'not_found');
    for (const bad of ['page=0', 'page_size=0', 'page_size=101', 'page=x']) {
      assertProblem(await quiet.call('GET', `${methodsPath(owner)}?${bad}`, { token: owner.token }), 400, 'validation_error');
    }
    const none = await listMethods(quiet, await newOwner(quiet));
    assert.deepEqual(none, { count: 0, next: null, previous: null, results: [] });
  });

  test('only the user’s own methods: another user’s are not listed; another client’s user is 404', async () => {
    const owner = await newOwner(quiet);
    await connectCard(quiet, owner, CARDS.visa);
    const sibling = await newUser(quiet, owner);
    assert.equal((await listMethods(quiet, owner, sibling)).count, 0);
    const intruder = await newOwner(quiet);
    const res = await quiet.call('GET', methodsPath(owner), { token: intruder.token });
    assertProblem(res, 404, 'not_found');
    assert.ok(!res.text.includes('4242'));
  });
});

describe('POST /users/<id>/payment-methods/<pm_id>/default/', { concurrency: true }, () => {
  test('makes the method the only default, here and on the processor’s customer', async () => {
    const owner = await newOwner(quiet);
    const first = await connectCard(quiet, owner, CARDS.visa);
    const second = await connectCard(quiet, owner, CARDS.mastercard);
    await listMethods(quiet, owner);
    const res = await quiet.call('POST', `${methodsPath(owner)}${second}/default/`, { token: owner.token });
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    const list = await listMethods(quiet, owner);
    assert.deepEqual(
      list.results.filter((m) => m.default).map((m) => m.id),
      [second],
    );
    assert.equal(await processorDefault(quiet, owner.userId), second);
    assert.equal((await quiet.call('POST', `${methodsPath(owner)}${first}/default/`, { token: owner.token })).status, 204);
    assert.equal(await processorDefault(quiet, owner.userId), first);
    assert.deepEqual(
      (await listMethods(quiet, owner)).results.filter((m) => m.default).map((m) => m.id),
      [first],
    );
  });

  test('a method confirmed a moment ago (not mirrored yet) can be made default straight away', async () => {
    const owner = await newOwner(quiet);
    await connectCard(quiet, owner, CARDS.visa);
    const fresh = await connectCard(quiet, owner, CARDS.mastercard);
    assert.equal((await quiet.call('POST', `${methodsPath(owner)}${fresh}/default/`, { token: owner.token })).status, 204);
    assert.deepEqual(
      (await listMethods(quiet, owner)).results.filter((m) => m.default).map((m) => m.id),
      [fresh],
    );
  });

  test('an unknown method, another user’s, another client’s and a malformed id are all the same 404', async () => {
    const owner = await newOwner(quiet);
    const mine = await connectCard(quiet, owner, CARDS.visa);
    const sibling = await newUser(quiet, owner);
    const siblings = await connectCard(quiet, owner, CARDS.visa, sibling);
    await listMethods(quiet, owner, sibling);
    const intruder = await newOwner(quiet);
    const foreign = await connectCard(quiet, intruder, CARDS.visa);
    const answers = await Promise.all(
      [`pm_${randomUUID().replaceAll('-', '')}`, siblings, foreign, 'x'.repeat(300), "pm_1'%20OR%20'1'='1", 'null'].map((pm) =>
        quiet.call('POST', `${methodsPath(owner)}${pm}/default/`, { token: owner.token }),
      ),
    );
    for (const res of answers) {
      assertProblem(res, 404, 'not_found');
      assert.equal(res.body.detail, 'Payment method not found.');
    }
    assert.equal(await processorDefault(quiet, sibling), siblings, 'the sibling’s default is untouched');
    assert.equal(await attachedTo(quiet, foreign), await customerOf(quiet, intruder.userId), 'the other client’s method is untouched');
    assertProblem(await quiet.call('POST', `${methodsPath(owner)}${mine}/default/`, { token: intruder.token }), 404, 'not_found');
  });

  test('a body is refused if it carries anything; an Idempotency-Key replays the answer', async () => {
    const owner = await newOwner(quiet);
    const pm = await connectCard(quiet, owner, CARDS.visa);
    assertProblem(
      await quiet.call('POST', `${methodsPath(owner)}${pm}/default/`, { token: owner.token, body: { payment_method_id: pm } }),
      400,
      'validation_error',
    );
    assert.equal((await quiet.call('POST', `${methodsPath(owner)}${pm}/default/`, { token: owner.token, body: {} })).status, 204);
    const key = { 'idempotency-key': `default-${randomUUID()}` };
    assert.equal((await quiet.call('POST', `${methodsPath(owner)}${pm}/default/`, { token: owner.token, headers: key })).status, 204);
    const again = await quiet.call('POST', `${methodsPath(owner)}${pm}/default/`, { token: owner.token, headers: key });
    assert.equal(again.status, 204);
    assert.equal(again.headers['idempotent-replayed'], 'true');
  });
});

describe('DELETE /users/<id>/payment-methods/<pm_id>/', { concurrency: true }, () => {
  test('removes a method and detaches it at the processor; the default stays', async () => {
    const owner = await newOwner(quiet);
    const first = await connectCard(quiet, owner, CARDS.visa);
    const second = await connectCard(quiet, owner, CARDS.mastercard);
    await listMethods(quiet, owner);
    const res = await quiet.call('DELETE', `${methodsPath(owner)}${second}/`, { token: owner.token });
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    assert.equal(await attachedTo(quiet, second), null, 'detached at the processor');
    assert.deepEqual(
      (await listMethods(quiet, owner)).results.map((m) => [m.id, m.default]),
      [[first, true]],
    );
    assertProblem(await quiet.call('DELETE', `${methodsPath(owner)}${second}/`, { token: owner.token }), 404, 'not_found');
  });

  test('deleting the default makes the newest remaining method the default (here and at the processor)', async () => {
    const owner = await newOwner(quiet);
    const oldest = await connectCard(quiet, owner, CARDS.visa);
    quiet.clock.advance(1_000);
    const middle = await connectCard(quiet, owner, CARDS.mastercard);
    quiet.clock.advance(1_000);
    const newest = await connectCard(quiet, owner, CARDS.visa);
    quiet.clock.advance(1_000);
    await listMethods(quiet, owner);
    assert.equal((await quiet.call('POST', `${methodsPath(owner)}${middle}/default/`, { token: owner.token })).status, 204);
    assert.equal((await quiet.call('DELETE', `${methodsPath(owner)}${middle}/`, { token: owner.token })).status, 204);
    assert.deepEqual(
      (await listMethods(quiet, owner)).results.map((m) => [m.id, m.default]),
      [
        [newest, true],
        [oldest, false],
      ],
    );
    assert.equal(await processorDefault(quiet, owner.userId), newest);
    assert.equal((await quiet.call('DELETE', `${methodsPath(owner)}${newest}/`, { token: owner.token })).status, 204);
    assert.deepEqual(
      (await listMethods(quiet, owner)).results.map((m) => [m.id, m.default]),
      [[oldest, true]],
    );
    assert.equal((await quiet.call('DELETE', `${methodsPath(owner)}${oldest}/`, { token: owner.token })).status, 204);
    assert.equal((await listMethods(quiet, owner)).count, 0);
    assert.equal(await processorDefault(quiet, owner.userId), null);
  });

  test('another client’s method (through one’s own user), another user’s and an unknown one are 404 and stay attached', async () => {
    const owner = await newOwner(quiet);
    await connectCard(quiet, owner, CARDS.visa);
    const intruder = await newOwner(quiet);
    const foreign = await connectCard(quiet, intruder, CARDS.visa);
    const sibling = await newUser(quiet, owner);
    const siblings = await connectCard(quiet, owner, CARDS.visa, sibling);
    for (const pm of [foreign, siblings, `pm_${randomUUID().replaceAll('-', '')}`]) {
      const res = await quiet.call('DELETE', `${methodsPath(owner)}${pm}/`, { token: owner.token });
      assertProblem(res, 404, 'not_found');
      assert.equal(res.body.detail, 'Payment method not found.');
    }
    assert.equal(await attachedTo(quiet, foreign), await customerOf(quiet, intruder.userId));
    assert.equal(await attachedTo(quiet, siblings), await customerOf(quiet, sibling));
    assert.equal((await listMethods(quiet, intruder)).count, 1);
  });

  test('refused (409 already_charging) while a hold uses the method; allowed once the hold is released', async () => {
    const owner = await newOwner(quiet);
    const pm = await connectCard(quiet, owner, CARDS.visa);
    const reference = `session:${randomUUID()}`;
    const hold = await quiet.payments.placeHold({
      clientId: owner.clientId,
      userId: owner.userId,
      paymentMethodId: pm,
      amount: 5_000,
      currency: 'EUR',
      reference,
    });
    assert.equal(hold.status, 'authorized');
    const refused = await quiet.call('DELETE', `${methodsPath(owner)}${pm}/`, { token: owner.token });
    assertProblem(refused, 409, 'already_charging');
    assert.equal(await attachedTo(quiet, pm), await customerOf(quiet, owner.userId), 'still attached at the processor');
    assert.equal((await listMethods(quiet, owner)).count, 1);
    await quiet.payments.releaseHold(owner.clientId, reference);
    assert.equal((await quiet.call('DELETE', `${methodsPath(owner)}${pm}/`, { token: owner.token })).status, 204);
  });

  test('a hold waiting for the customer’s authentication also blocks it; a declined hold does not', async () => {
    const owner = await newOwner(quiet);
    const strict = await connectCard(quiet, owner, CARDS.authenticateAlways);
    const poor = await connectCard(quiet, owner, CARDS.insufficientFunds);
    const base = { clientId: owner.clientId, userId: owner.userId, amount: 2_500, currency: 'EUR' };
    assert.equal((await quiet.payments.placeHold({ ...base, paymentMethodId: strict, reference: `session:${randomUUID()}` })).status, 'requires_action');
    assert.equal((await quiet.payments.placeHold({ ...base, paymentMethodId: poor, reference: `session:${randomUUID()}` })).status, 'declined');
    assertProblem(await quiet.call('DELETE', `${methodsPath(owner)}${strict}/`, { token: owner.token }), 409, 'already_charging');
    assert.equal((await quiet.call('DELETE', `${methodsPath(owner)}${poor}/`, { token: owner.token })).status, 204);
  });

  test('another module’s guard can refuse it (unpaid debt: 402 payment_error), inside the same transaction', async () => {
    const ctx = await setupTestApp({
      payments: {
        removalGuards: [
          async (tx, target) => {
            const { rows } = await tx.query('SELECT 1 FROM payment_methods WHERE id = $1 AND client_id = $2', [target.paymentMethodId, target.clientId]);
            assert.equal(rows.length, 1, 'the guard sees the method in the transaction');
            throw new AppError('payment_error', 'An unpaid debt is on this payment method.');
          },
        ],
      },
    });
    try {
      const owner = await newOwner(ctx);
      const pm = await connectCard(ctx, owner, CARDS.visa);
      assertProblem(await ctx.call('DELETE', `${methodsPath(owner)}${pm}/`, { token: owner.token }), 402, 'payment_error');
      assert.equal(await attachedTo(ctx, pm), await customerOf(ctx, owner.userId));
    } finally {
      await ctx.close();
    }
  });

  test('an Idempotency-Key replays the 204 rather than a 404', async () => {
    const owner = await newOwner(quiet);
    const pm = await connectCard(quiet, owner, CARDS.visa);
    const headers = { 'idempotency-key': `delete-${randomUUID()}` };
    assert.equal((await quiet.call('DELETE', `${methodsPath(owner)}${pm}/`, { token: owner.token, headers })).status, 204);
    const again = await quiet.call('DELETE', `${methodsPath(owner)}${pm}/`, { token: owner.token, headers });
    assert.equal(again.status, 204);
    assert.equal(again.headers['idempotent-replayed'], 'true');
  });

  test('concurrent deletions of every method leave no method and no default behind', async () => {
    const owner = await newOwner(quiet);
    const methods = [];
    for (let i = 0; i < 4; i++) methods.push(await connectCard(quiet, owner, CARDS.visa));
    await listMethods(quiet, owner);
    const answers = await Promise.all(methods.map((pm) => quiet.call('DELETE', `${methodsPath(owner)}${pm}/`, { token: owner.token })));
    assert.deepEqual(
      answers.map((a) => a.status),
      [204, 204, 204, 204],
    );
    assert.equal((await listMethods(quiet, owner)).count, 0);
    assert.equal(await processorDefault(quiet, owner.userId), null);
  });
});

describe('holds (for charging sessions)', { concurrency: true }, () => {
  const base = (owner: Owner, pm: string) => ({
    clientId: owner.clientId,
    userId: owner.userId,
    paymentMethodId: pm,
    amount: 5_000,
    currency: 'EUR',
    reference: `session:${randomUUID()}`,
  });

  async function holdRow(t: TestContext, reference: string) {
    const { rows } = await t.db.query('SELECT status, amount_capturable, amount_captured, payment_intent_id FROM payment_holds WHERE reference = $1', [
      reference,
    ]);
    return rows[0];
  }

  test('authorize, then a partial capture: only that is taken; both are idempotent', async () => {
    const owner = await newOwner(live);
    const request = base(owner, await connectCard(live, owner, CARDS.visa));
    const hold = await live.payments.placeHold(request);
    assert.equal(hold.status, 'authorized');
    assert.equal(hold.amountCapturable, 5_000);
    assert.equal(hold.currency, 'eur');
    assert.equal(hold.captureBefore?.getTime(), Math.floor(live.clock.now().getTime() / 1000) * 1000 + 7 * DAY_MS);
    const again = await live.payments.placeHold(request);
    assert.equal(again.paymentIntentId, hold.paymentIntentId);
    const intents = await sandboxApi(live, 'GET', '/v1/payment_intents', [['customer', await customerOf(live, owner.userId)]]);
    assert.equal((intents.body.data as unknown[]).length, 1, 'one payment intent for one reference');
    await assert.rejects(live.payments.placeHold({ ...request, amount: 6_000 }), (e: unknown) => e instanceof AppError && e.code === 'conflict');

    const captured = await live.payments.captureHold(owner.clientId, request.reference, 3_210);
    assert.equal(captured.status, 'captured');
    assert.equal(captured.amountCaptured, 3_210);
    assert.deepEqual(await live.payments.captureHold(owner.clientId, request.reference, 3_210), captured);
    const intent = await sandboxApi(live, 'GET', `/v1/payment_intents/${hold.paymentIntentId}`);
    assert.equal(intent.body.amount_received, 3_210);
    assert.equal(intent.body.status, 'succeeded');
    assert.deepEqual(await holdRow(live, request.reference), {
      status: 'captured',
      amount_capturable: 0,
      amount_captured: 3_210,
      payment_intent_id: hold.paymentIntentId,
    });
  });

  test('capturing more than is held is refused and nothing is taken', async () => {
    const owner = await newOwner(quiet);
    const request = base(owner, await connectCard(quiet, owner, CARDS.visa));
    await quiet.payments.placeHold(request);
    await assert.rejects(quiet.payments.captureHold(owner.clientId, request.reference, 5_001), (e: unknown) => e instanceof AppError && e.code === 'conflict');
    assert.equal((await holdRow(quiet, request.reference))?.status, 'authorized');
  });

  test('release: released at the processor, idempotently; nothing can be captured afterwards', async () => {
    const owner = await newOwner(quiet);
    const request = base(owner, await connectCard(quiet, owner, CARDS.visa));
    const hold = await quiet.payments.placeHold(request);
    assert.equal((await quiet.payments.releaseHold(owner.clientId, request.reference)).status, 'released');
    assert.equal((await quiet.payments.releaseHold(owner.clientId, request.reference)).status, 'released');
    const intent = await sandboxApi(quiet, 'GET', `/v1/payment_intents/${hold.paymentIntentId}`);
    assert.equal(intent.body.status, 'canceled');
    await assert.rejects(quiet.payments.captureHold(owner.clientId, request.reference, 100), (e: unknown) => e instanceof AppError && e.code === 'conflict');
  });

  test('authentication required: the hold waits with a client secret; once the customer authenticates, the webhook authorizes it', async () => {
    const owner = await newOwner(live);
    const request = base(owner, await connectCard(live, owner, CARDS.authenticateAlways));
    const hold = await live.payments.placeHold(request);
    assert.equal(hold.status, 'requires_action');
    assert.equal(hold.failureCode, 'authentication_required');
    assert.ok(hold.clientSecret?.startsWith(`${hold.paymentIntentId}_secret_`), String(hold.clientSecret));
    const res = await live.call('POST', `/sandbox/payment_intents/${hold.paymentIntentId}/authenticate`, {
      body: { client_secret: hold.clientSecret, outcome: 'approve' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'requires_capture');
    await eventually(
      async () => ((await holdRow(live, request.reference))?.status === 'authorized' ? true : undefined),
      'the webhook records the authorization',
    );
    assert.equal((await live.payments.getHold(owner.clientId, request.reference)).amountCapturable, 5_000);
    assert.equal((await live.payments.captureHold(owner.clientId, request.reference, 5_000)).status, 'captured');
  });

  test('a decline is a value with its reason; a failed authentication leaves the hold declined', async () => {
    const owner = await newOwner(live);
    const poor = await live.payments.placeHold(base(owner, await connectCard(live, owner, CARDS.insufficientFunds)));
    assert.deepEqual([poor.status, poor.failureCode, poor.amountCapturable], ['declined', 'insufficient_funds', 0]);
    assert.equal(poor.failureMessage, 'Your card has insufficient funds.');
    const failing = await live.payments.placeHold(base(owner, await connectCard(live, owner, CARDS.chargesFail)));
    assert.deepEqual([failing.status, failing.failureCode], ['declined', 'generic_decline']);

    const request = base(owner, await connectCard(live, owner, CARDS.authenticateAlways));
    const hold = await live.payments.placeHold(request);
    await live.call('POST', `/sandbox/payment_intents/${hold.paymentIntentId}/authenticate`, { body: { client_secret: hold.clientSecret, outcome: 'fail' } });
    await eventually(async () => ((await holdRow(live, request.reference))?.status === 'declined' ? true : undefined), 'the webhook records the failure');
  });

  test('expiry: an uncaptured hold lapses after 7 days on the clock; the webhook marks it expired and it cannot be captured', async () => {
    const ctx = await setupTestApp({ payments: { webhooks: true } });
    try {
      const owner = await newOwner(ctx);
      const request = base(owner, await connectCard(ctx, owner, CARDS.visa));
      await ctx.payments.placeHold(request);
      ctx.clock.advance(7 * DAY_MS - 60_000);
      await ctx.sandbox.runDueWork();
      assert.equal((await holdRow(ctx, request.reference))?.status, 'authorized');
      ctx.clock.advance(120_000);
      await ctx.sandbox.runDueWork();
      await eventually(async () => ((await holdRow(ctx, request.reference))?.status === 'expired' ? true : undefined), 'the hold is recorded as expired');
      await assert.rejects(
        ctx.payments.captureHold(owner.clientId, request.reference, 100),
        (e: unknown) => e instanceof AppError && /expired/.test(e.message),
      );
      assert.equal((await ctx.call('DELETE', `${methodsPath(owner)}${request.paymentMethodId}/`, { token: owner.token })).status, 204, 'no longer in use');
    } finally {
      await ctx.close();
    }
  });

  test('a crash after the processor made the hold but before we recorded it: the retry finds the same payment intent', async () => {
    const owner = await newOwner(quiet);
    const request = base(owner, await connectCard(quiet, owner, CARDS.visa));
    // A processor whose answer is lost on the way back: the intent exists, we never hear of it.
    const lossy: PaymentProcessor = {
      ...quiet.processor,
      placeHold: async (charge) => {
        await quiet.processor.placeHold(charge);
        throw new PaymentProcessorError('connection reset', { retryable: true });
      },
    };
    const crashing = createPaymentsService({
      db: quiet.db,
      clock: quiet.clock,
      processor: lossy,
      requireUser: createUsersService({ clock: quiet.clock, locales: ['en'] }).requireUser,
    });
    await assert.rejects(crashing.placeHold(request), (e: unknown) => e instanceof AppError && e.code === 'payment_processor_unavailable');
    assert.equal((await holdRow(quiet, request.reference))?.status, 'pending', 'recorded before the processor was asked');
    assertProblem(await quiet.call('DELETE', `${methodsPath(owner)}${request.paymentMethodId}/`, { token: owner.token }), 409, 'already_charging');
    const resumed = await quiet.payments.placeHold(request);
    assert.equal(resumed.status, 'authorized');
    const intents = await sandboxApi(quiet, 'GET', '/v1/payment_intents', [['customer', await customerOf(quiet, owner.userId)]]);
    assert.deepEqual(
      (intents.body.data as { id: string }[]).map((i) => i.id),
      [resumed.paymentIntentId],
    );
  });

  test('holds and charges only on the user’s own methods', async () => {
    const owner = await newOwner(quiet);
    const intruder = await newOwner(quiet);
    const foreign = await connectCard(quiet, intruder, CARDS.visa);
    await assert.rejects(quiet.payments.placeHold(base(owner, foreign)), (e: unknown) => e instanceof AppError && e.code === 'not_found');
    await assert.rejects(
      quiet.payments.placeHold({ ...base(intruder, foreign), clientId: owner.clientId }),
      (e: unknown) => e instanceof AppError && e.code === 'not_found',
    );
    const { rows } = await quiet.db.query('SELECT 1 FROM payment_holds WHERE payment_method_id = $1', [foreign]);
    assert.equal(rows.length, 0);
    const charged = await quiet.payments.chargeOffSession({ ...base(intruder, foreign), amount: 1_250, idempotencyKey: `session:${randomUUID()}:extra` });
    assert.deepEqual([charged.status, charged.status === 'succeeded' ? charged.amountReceived : 0], ['succeeded', 1_250]);
  });
});

describe('POST /webhooks/stripe', { concurrency: true }, () => {
  const post = (t: TestContext, body: string, signature: string | undefined) =>
    t.call('POST', '/webhooks/stripe', { body, headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) } });

  async function latestEvent(t: TestContext, type: string, objectId: string) {
    const events = await sandboxApi(t, 'GET', '/v1/events', [
      ['type', type],
      ['limit', '100'],
    ]);
    const event = (events.body.data as { id: string; data: { object: { id: string } } }[]).find((e) => e.data.object.id === objectId);
    assert.ok(event, `a ${type} event for ${objectId}`);
    return JSON.stringify(event);
  }

  const now = (t: TestContext) => Math.floor(t.clock.now().getTime() / 1000);

  test('a method attached outside our API (the client’s SDK) is mirrored from the event; detached, it goes', async () => {
    const owner = await newOwner(live);
    await setupIntent(live, owner);
    const customer = await customerOf(live, owner.userId);
    const attached = await sandboxApi(live, 'POST', '/v1/payment_methods/pm_card_visa/attach', [['customer', customer]]);
    const pm = attached.body.id as string;
    await eventually(async () => ((await mirrored(live, owner.userId)).length === 1 ? true : undefined), 'mirrored from payment_method.attached');
    assert.deepEqual(await mirrored(live, owner.userId), [{ id: pm, is_default: true }]);
    await sandboxApi(live, 'POST', `/v1/payment_methods/${pm}/detach`);
    await eventually(async () => ((await mirrored(live, owner.userId)).length === 0 ? true : undefined), 'removed on payment_method.detached');
  });

  test('the same event delivered twice is applied once; the second answer says duplicate and re-reads nothing', async () => {
    const owner = await newOwner(quiet);
    await setupIntent(quiet, owner);
    const attached = await sandboxApi(quiet, 'POST', '/v1/payment_methods/pm_card_visa/attach', [['customer', await customerOf(quiet, owner.userId)]]);
    const body = await latestEvent(quiet, 'payment_method.attached', attached.body.id as string);
    const first = await post(quiet, body, signatureHeader(body, quiet.sandbox.keys.webhookSecret, now(quiet)));
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body, { received: true, duplicate: false });
    assert.deepEqual(await mirrored(quiet, owner.userId), [{ id: attached.body.id, is_default: true }]);
    assert.ok(
      quiet.sandbox.requestLog.some((r) => r.method === 'GET' && r.path === `/v1/payment_methods/${attached.body.id}`),
      'the first delivery re-read the method',
    );
    const from = quiet.sandbox.requestLog.length;
    const second = await post(quiet, body, signatureHeader(body, quiet.sandbox.keys.webhookSecret, now(quiet)));
    assert.deepEqual(second.body, { received: true, duplicate: true });
    const rereads = quiet.sandbox.requestLog.slice(from).filter((r) => r.path.includes(attached.body.id as string));
    assert.deepEqual(rereads, [], 'no call to the processor for a duplicate');
    const { rows } = await quiet.db.query('SELECT count(*)::int AS n FROM payment_webhook_events WHERE event_id = $1', [JSON.parse(body).id]);
    assert.equal(rows[0]?.n, 1);
  });

  test('the payload’s copy is not trusted: the object is re-read from the processor', async () => {
    const owner = await newOwner(quiet);
    await setupIntent(quiet, owner);
    const customer = await customerOf(quiet, owner.userId);
    const pm = (await sandboxApi(quiet, 'POST', '/v1/payment_methods/pm_card_visa/attach', [['customer', customer]])).body.id as string;
    const event = JSON.parse(await latestEvent(quiet, 'payment_method.attached', pm));
    await sandboxApi(quiet, 'POST', `/v1/payment_methods/${pm}/detach`);
    // A late (re)delivery of the attach: the processor now says detached, so nothing is mirrored.
    const body = JSON.stringify(event);
    assert.equal((await post(quiet, body, signatureHeader(body, quiet.sandbox.keys.webhookSecret, now(quiet)))).status, 200);
    assert.deepEqual(await mirrored(quiet, owner.userId), []);
  });

  test('tampered, wrongly signed, stale, unsigned or malformed deliveries are 400 and leave no trace', async () => {
    const owner = await newOwner(quiet);
    await setupIntent(quiet, owner);
    const pm = (await sandboxApi(quiet, 'POST', '/v1/payment_methods/pm_card_visa/attach', [['customer', await customerOf(quiet, owner.userId)]])).body
      .id as string;
    const body = await latestEvent(quiet, 'payment_method.attached', pm);
    const secret = quiet.sandbox.keys.webhookSecret;
    const signature = signatureHeader(body, secret, now(quiet));
    const cases: [string, string, string | undefined][] = [
      ['tampered body', body.replace(pm, 'pm_forged'), signature],
      ['one more space', `${body} `, signature],
      ['another secret', body, signatureHeader(body, `whsec_${randomUUID()}`, now(quiet))],
      ['stale: signed 6 minutes ago', body, signatureHeader(body, secret, now(quiet) - 360)],
      ['old signature under a new timestamp', body, signature.replace(/^t=\d+/, `t=${now(quiet) + 30}`)],
      ['no signature', body, undefined],
      ['garbage signature', body, 'v1=deadbeef'],
    ];
    for (const [name, payload, header] of cases) {
      const res = await post(quiet, payload, header);
      assertProblem(res, 400, 'validation_error');
      assert.equal(res.body.errors[0].field, 'Stripe-Signature', name);
      assert.ok(!res.text.includes(secret), name);
    }
    const { rows } = await quiet.db.query('SELECT count(*)::int AS n FROM payment_webhook_events WHERE event_id = $1', [JSON.parse(body).id]);
    assert.equal(rows[0]?.n, 0);
    assert.deepEqual(await mirrored(quiet, owner.userId), []);
    // The genuine one still works afterwards (nothing was recorded for the refused ones).
    assert.deepEqual((await post(quiet, body, signature)).body, { received: true, duplicate: false });
  });

  test('events about objects that are not ours are acknowledged and ignored', async () => {
    const customer = (await sandboxApi(quiet, 'POST', '/v1/customers')).body.id as string;
    const pm = (await sandboxApi(quiet, 'POST', '/v1/payment_methods/pm_card_visa/attach', [['customer', customer]])).body.id as string;
    const body = await latestEvent(quiet, 'payment_method.attached', pm);
    assert.deepEqual((await post(quiet, body, signatureHeader(body, quiet.sandbox.keys.webhookSecret, now(quiet)))).body, { received: true, duplicate: false });
    const { rows } = await quiet.db.query('SELECT count(*)::int AS n FROM payment_methods WHERE id = $1', [pm]);
    assert.equal(rows[0]?.n, 0);
  });

  test('no bearer token is needed, and a token does not replace the signature', async () => {
    const owner = await newOwner(quiet);
    const res = await quiet.call('POST', '/webhooks/stripe', {
      token: owner.token,
      body: '{"id":"evt_1","object":"event"}',
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(res, 400, 'validation_error');
  });
});

describe('housekeeping', () => {
  test('handled webhook event ids are forgotten after 30 days, not before', async () => {
    // Its own database: the count is exact whatever the other tests recorded.
    const ctx = await setupTestApp();
    try {
      const customer = (await sandboxApi(ctx, 'POST', '/v1/customers')).body.id as string;
      const pm = (await sandboxApi(ctx, 'POST', '/v1/payment_methods/pm_card_visa/attach', [['customer', customer]])).body.id as string;
      const events = await sandboxApi(ctx, 'GET', '/v1/events', [['limit', '100']]);
      const delivered = (events.body.data as { id: string; data: { object: { id: string } } }[]).filter((e) => [customer, pm].includes(e.data.object.id));
      assert.ok(delivered.length >= 2);
      for (const event of delivered) {
        const body = JSON.stringify(event);
        const res = await ctx.call('POST', '/webhooks/stripe', {
          body,
          headers: {
            'content-type': 'application/json',
            'stripe-signature': signatureHeader(body, ctx.sandbox.keys.webhookSecret, Math.floor(ctx.clock.now().getTime() / 1000)),
          },
        });
        assert.deepEqual(res.body, { received: true, duplicate: false });
      }
      const at = (days: number) => ({ now: () => new Date(ctx.clock.now().getTime() + days * DAY_MS) });
      assert.equal(await purgeHandledWebhookEvents(ctx.db, at(29)), 0);
      assert.equal(await purgeHandledWebhookEvents(ctx.db, at(31)), delivered.length);
      const { rows } = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_webhook_events');
      assert.equal(rows[0]?.n, 0);
    } finally {
      await ctx.close();
    }
  });
});

describe('with Stripe instead of the sandbox', () => {
  test('no /sandbox/ routes, and setup intents say processor stripe', async () => {
    const processor = createStripeProcessor({
      secretKey: quiet.sandbox.keys.secretKey,
      publishableKey: 'pk_test_live_like_0000',
      webhookSecret: quiet.sandbox.keys.webhookSecret,
      apiBase: quiet.sandbox.url,
    });
    assert.equal(processor.info.account, 'stripe_test');
    const app = await buildApp({
      config: quiet.config,
      db: quiet.db,
      clock: quiet.clock,
      authenticate: quiet.clients.authenticate,
      catalogue: quiet.catalogue,
      payments: { processor },
      logger: false,
    });
    try {
      const owner = await newOwner(quiet);
      const res = await app.inject({ method: 'GET', url: `${USERS}/${owner.userId}/setup-intents/`, headers: { authorization: `Bearer ${owner.token}` } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(JSON.parse(res.body).processor, 'stripe');
      assert.equal(JSON.parse(res.body).publishable_key, 'pk_test_live_like_0000');
      for (const url of ['/sandbox/', `/sandbox/setup_intents/${JSON.parse(res.body).id}/confirm`]) {
        const sandbox = await app.inject({
          method: url.endsWith('/') ? 'GET' : 'POST',
          url,
          payload: url.endsWith('/') ? undefined : { client_secret: 'x', card_number: CARDS.visa },
        });
        assert.equal(sandbox.statusCode, 404, url);
      }
      const { rows } = await quiet.db.query('SELECT account FROM payment_customers WHERE user_id = $1', [owner.userId]);
      assert.deepEqual(rows, [{ account: 'stripe_test' }], 'kept apart from the sandbox account’s customers');
    } finally {
      await app.close();
    }
  });
});

describe('Stripe configuration', () => {
  const sk = 'sk_test_51AbCdEfGhIjKlMnOp';
  const pk = 'pk_test_51AbCdEfGhIjKlMnOp';
  const whsec = 'whsec_AbCdEfGhIjKlMnOp';

  test('no keys: the sandbox on any free loopback port (development and test)', () => {
    const config = loadConfig({}, '/srv/app');
    assert.deepEqual(config.stripe, {
      sandbox: true,
      sandboxOptIn: undefined,
      secretKey: undefined,
      publishableKey: undefined,
      webhookSecret: undefined,
      apiBase: 'https://api.stripe.com',
      sandboxPort: 0,
    });
    assert.doesNotThrow(() => requirePaymentProcessor(config));
    assert.doesNotThrow(() => requirePaymentProcessor(loadConfig({ NODE_ENV: 'test' }, '/srv/app')));
    assert.equal(loadConfig({ STRIPE_SANDBOX_PORT: '12111' }, '/srv/app').stripe.sandboxPort, 12111);
  });

  test('production without a key: the service refuses, naming the variables, unless PAYMENTS_SANDBOX=true opts in to the sandbox', () => {
    const production = loadConfig({ NODE_ENV: 'production' }, '/srv/app');
    assert.equal(production.stripe.sandbox, true, 'the CLI, which takes no payments, still loads this configuration');
    assert.throws(
      () => requirePaymentProcessor(production),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.equal(error.variable, 'STRIPE_SECRET_KEY');
        for (const name of ['STRIPE_SECRET_KEY', 'STRIPE_PUBLISHABLE_KEY', 'STRIPE_WEBHOOK_SECRET', 'PAYMENTS_SANDBOX=true']) {
          assert.ok(error.message.includes(name), error.message);
        }
        return true;
      },
    );
    for (const env of [{ NODE_ENV: 'production', PAYMENTS_SANDBOX: 'false' }, { PAYMENTS_SANDBOX: 'false' }]) {
      assert.throws(() => requirePaymentProcessor(loadConfig(env, '/srv/app')), /STRIPE_SECRET_KEY: is required with PAYMENTS_SANDBOX=false/);
    }
    for (const optIn of ['true', 'yes', '1']) {
      assert.doesNotThrow(() => requirePaymentProcessor(loadConfig({ NODE_ENV: 'production', PAYMENTS_SANDBOX: optIn }, '/srv/app')));
    }
    const keys = { STRIPE_SECRET_KEY: sk, STRIPE_PUBLISHABLE_KEY: pk, STRIPE_WEBHOOK_SECRET: whsec };
    const withKeys = loadConfig({ NODE_ENV: 'production', ...keys }, '/srv/app');
    assert.equal(withKeys.stripe.sandbox, false);
    assert.doesNotThrow(() => requirePaymentProcessor(withKeys));
  });

  test('a full set of keys is taken as given; the API base may be plain http on a loopback host only', () => {
    const keys = { STRIPE_SECRET_KEY: sk, STRIPE_PUBLISHABLE_KEY: pk, STRIPE_WEBHOOK_SECRET: whsec };
    const config = loadConfig({ ...keys, STRIPE_API_BASE: 'http://localhost:12111/' }, '/srv/app').stripe;
    assert.deepEqual(config, {
      sandbox: false,
      sandboxOptIn: undefined,
      secretKey: sk,
      publishableKey: pk,
      webhookSecret: whsec,
      apiBase: 'http://localhost:12111',
      sandboxPort: 0,
    });
    for (const base of ['http://127.0.0.1:12111', 'http://127.8.9.10', 'http://[::1]:12111', 'https://stripe.internal.example.com', 'https://10.0.0.5:8443']) {
      assert.equal(loadConfig({ ...keys, STRIPE_API_BASE: base }, '/srv/app').stripe.apiBase, base);
    }
  });

  const invalid: [string, Record<string, string>, string][] = [
    ['a secret key alone', { STRIPE_SECRET_KEY: sk }, 'STRIPE_PUBLISHABLE_KEY'],
    ['no webhook secret', { STRIPE_SECRET_KEY: sk, STRIPE_PUBLISHABLE_KEY: pk }, 'STRIPE_WEBHOOK_SECRET'],
    [
      'keys of two modes',
      { STRIPE_SECRET_KEY: sk, STRIPE_PUBLISHABLE_KEY: 'pk_live_51AbCdEfGhIjKlMnOp', STRIPE_WEBHOOK_SECRET: whsec },
      'STRIPE_PUBLISHABLE_KEY',
    ],
    ['not a secret key', { STRIPE_SECRET_KEY: 'hunter2-correct-horse', STRIPE_PUBLISHABLE_KEY: pk, STRIPE_WEBHOOK_SECRET: whsec }, 'STRIPE_SECRET_KEY'],
    ['a publishable key as the secret', { STRIPE_SECRET_KEY: pk, STRIPE_PUBLISHABLE_KEY: pk, STRIPE_WEBHOOK_SECRET: whsec }, 'STRIPE_SECRET_KEY'],
    ['a malformed webhook secret', { STRIPE_SECRET_KEY: sk, STRIPE_PUBLISHABLE_KEY: pk, STRIPE_WEBHOOK_SECRET: 'secret' }, 'STRIPE_WEBHOOK_SECRET'],
    ['keys without the secret key', { STRIPE_PUBLISHABLE_KEY: pk, STRIPE_WEBHOOK_SECRET: whsec }, 'STRIPE_SECRET_KEY'],
    ['a sandbox port out of range', { STRIPE_SANDBOX_PORT: '70000' }, 'STRIPE_SANDBOX_PORT'],
    [
      'an API base that is not a URL',
      { STRIPE_SECRET_KEY: sk, STRIPE_PUBLISHABLE_KEY: pk, STRIPE_WEBHOOK_SECRET: whsec, STRIPE_API_BASE: 'api.stripe.com' },
      'STRIPE_API_BASE',
    ],
    ...['http://api.stripe.com', 'http://stripe-mock.internal:12111', 'http://10.0.0.5', 'http://localhost.example.com', 'http://127.0.0.1.nip.io'].map(
      (base): [string, Record<string, string>, string] => [
        `plain http to a host that is not loopback (${base})`,
        { STRIPE_SECRET_KEY: sk, STRIPE_PUBLISHABLE_KEY: pk, STRIPE_WEBHOOK_SECRET: whsec, STRIPE_API_BASE: base },
        'STRIPE_API_BASE',
      ],
    ),
    [
      'the sandbox opted in beside a key',
      { STRIPE_SECRET_KEY: sk, STRIPE_PUBLISHABLE_KEY: pk, STRIPE_WEBHOOK_SECRET: whsec, PAYMENTS_SANDBOX: 'true' },
      'PAYMENTS_SANDBOX',
    ],
    ['PAYMENTS_SANDBOX=maybe', { PAYMENTS_SANDBOX: 'maybe' }, 'PAYMENTS_SANDBOX'],
  ];
  for (const [name, env, variable] of invalid) {
    test(`${name}: a ConfigError naming ${variable}, never echoing a key`, () => {
      assert.throws(
        () => loadConfig(env, '/srv/app'),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.equal(error.variable, variable);
          for (const value of Object.values(env)) if (value.length > 8) assert.ok(!error.message.includes(value), error.message);
          return true;
        },
      );
    });
  }
});
