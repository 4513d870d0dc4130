// The built-in Stripe sandbox, through its HTTP API as any Stripe client sees
// it: authentication, form encoding, errors, Idempotency-Key replay, the test
// cards (through the API and the browser stand-in), hold expiry on the clock,
// and signed webhook deliveries with retries. Also what the service's adapter
// sends on the wire.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import Stripe from 'stripe';
import { STRIPE_API_VERSION } from '../src/modules/payments/stripe-processor.ts';
import { ensureCertificate } from '../src/platform/http/tls.ts';
import { createStripeSandbox } from '../src/sandbox/stripe/index.ts';
import { idempotencyLockName } from '../src/sandbox/stripe/store.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { CARDS } from './payments-support.ts';

let t: TestContext;
let sdk: Stripe;

before(async () => {
  t = await setupTestApp();
  sdk = new Stripe(t.sandbox.keys.secretKey, {
    apiVersion: STRIPE_API_VERSION,
    host: '127.0.0.1',
    port: Number(new URL(t.sandbox.url).port),
    protocol: 'http',
    telemetry: false,
  });
});
after(() => t?.close());

const DAY_MS = 24 * 3_600_000;

interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: Stripe JSON read by key
  body: any;
}

/** A raw Stripe API call: form-encoded pairs, Bearer secret key unless told otherwise. */
async function api(
  method: string,
  path: string,
  options: { form?: [string, string][]; key?: string | null; authorization?: string; version?: string; idempotencyKey?: string } = {},
): Promise<Answer> {
  const form = new URLSearchParams(options.form ?? []).toString();
  const headers: Record<string, string> = {};
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else if (options.key !== null) headers.authorization = `Bearer ${options.key ?? t.sandbox.keys.secretKey}`;
  if (options.version) headers['stripe-version'] = options.version;
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  const withBody = method === 'POST';
  if (withBody) headers['content-type'] = 'application/x-www-form-urlencoded';
  const url = `${t.sandbox.url}${path}${!withBody && form ? `?${form}` : ''}`;
  const res = await fetch(url, { method, headers, ...(withBody ? { body: form } : {}) });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

async function customer(): Promise<string> {
  const res = await api('POST', '/v1/customers', { form: [['description', 'sandbox test']] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

async function attach(cus: string, testMethod: string): Promise<string> {
  const res = await api('POST', `/v1/payment_methods/${testMethod}/attach`, { form: [['customer', cus]] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

function holdForm(cus: string, pm: string, amount = '5000'): [string, string][] {
  return [
    ['amount', amount],
    ['currency', 'eur'],
    ['customer', cus],
    ['payment_method', pm],
    ['capture_method', 'manual'],
    ['confirm', 'true'],
    ['off_session', 'true'],
  ];
}

function assertStripeError(res: Answer, status: number, expected: { type: string; code?: string; param?: string; message?: RegExp }) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.match(String(res.headers.get('content-type')), /^application\/json/);
  const error = res.body.error;
  assert.ok(error, JSON.stringify(res.body));
  assert.equal(error.type, expected.type);
  if (expected.code !== undefined) assert.equal(error.code, expected.code);
  if (expected.param !== undefined) assert.equal(error.param, expected.param);
  if (expected.message) assert.match(error.message, expected.message);
  assert.match(String(res.headers.get('request-id')), /^req_/);
}

async function eventsOf(type: string, objectId: string): Promise<{ id: string; type: string; data: { object: { id: string } } }[]> {
  const res = await api('GET', '/v1/events', {
    form: [
      ['type', type],
      ['limit', '100'],
    ],
  });
  assert.equal(res.status, 200);
  return res.body.data.filter((e: { data: { object: { id: string } } }) => e.data.object.id === objectId);
}

describe('Stripe API conventions', { concurrency: true }, () => {
  test('a secret key is required: none, a wrong one, or the publishable one is 401 and never echoes the key', async () => {
    assertStripeError(await api('GET', '/v1/events', { key: null }), 401, { type: 'invalid_request_error', message: /did not provide an API key/ });
    const wrong = `sk_test_${randomUUID().replaceAll('-', '')}`;
    const res = await api('GET', '/v1/events', { key: wrong });
    assertStripeError(res, 401, { type: 'invalid_request_error', message: /^Invalid API Key provided: sk_test_\*+/ });
    assert.ok(!JSON.stringify(res.body).includes(wrong.slice(8, 28)), JSON.stringify(res.body));
    assertStripeError(await api('GET', '/v1/events', { key: t.sandbox.keys.publishableKey }), 401, {
      type: 'invalid_request_error',
      message: /publishable API key/,
    });
    // Basic auth with the key as user name, as curl -u sk_...: does.
    const basic = await api('GET', '/v1/events', { authorization: `Basic ${Buffer.from(`${t.sandbox.keys.secretKey}:`).toString('base64')}` });
    assert.equal(basic.status, 200);
  });

  test('every answer carries Request-Id and the Stripe-Version used', async () => {
    const asked = await api('GET', '/v1/events', { version: '2025-03-31.basil' });
    assert.match(String(asked.headers.get('request-id')), /^req_\w+$/);
    assert.equal(asked.headers.get('stripe-version'), '2025-03-31.basil');
    assert.equal((await api('GET', '/v1/events')).headers.get('stripe-version'), STRIPE_API_VERSION);
    assertStripeError(await api('GET', '/v1/events', { version: 'latest-please' }), 400, {
      type: 'invalid_request_error',
      message: /Invalid Stripe API version/,
    });
  });

  test('bracket-encoded parameters: nested hashes and arrays', async () => {
    const res = await api('POST', '/v1/customers', {
      form: [
        ['email', 'nested@example.com'],
        ['metadata[user_id]', 'u-1'],
        ['metadata[tier]', 'gold'],
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.metadata, { tier: 'gold', user_id: 'u-1' });
    assert.equal(res.body.email, 'nested@example.com');
    assert.match(res.body.id, /^cus_[A-Za-z0-9]{24}$/);
    assert.deepEqual(Object.keys(res.body).slice(0, 2), ['id', 'object'], 'id and object come first, as in Stripe');
    const si = await api('POST', '/v1/setup_intents', {
      form: [
        ['customer', res.body.id],
        ['allowed_payment_method_types[]', 'card'],
        ['allowed_payment_method_types[]', 'paypal'],
      ],
    });
    assert.equal(si.status, 200, JSON.stringify(si.body));
    assert.deepEqual(si.body.payment_method_types, ['card', 'paypal']);
    assert.match(si.body.id, /^seti_/);
    const updated = await api('POST', `/v1/customers/${res.body.id}`, { form: [['metadata[tier]', '']] });
    assert.deepEqual(updated.body.metadata, { user_id: 'u-1' }, 'an empty value removes the key');
  });

  test('a NUL character in a parameter value or name is 400 naming the parameter, never a server error', async () => {
    assertStripeError(await api('POST', '/v1/customers', { form: [['description', 'a\u0000b']] }), 400, {
      type: 'invalid_request_error',
      param: 'description',
    });
    assertStripeError(await api('POST', '/v1/customers', { form: [['metadata[k\u0000]', 'v']] }), 400, { type: 'invalid_request_error' });
    const cus = await customer();
    assertStripeError(await api('GET', `/v1/customers/${cus}/payment_methods`, { form: [['limit', '1\u0000']] }), 400, {
      type: 'invalid_request_error',
      param: 'limit',
    });
  });

  test('unknown, missing and malformed parameters are 400 naming the parameter', async () => {
    assertStripeError(await api('POST', '/v1/customers', { form: [['nickname', 'x']] }), 400, {
      type: 'invalid_request_error',
      param: 'nickname',
      message: /^Received unknown parameter: nickname$/,
    });
    const cus = await customer();
    assertStripeError(await api('POST', `/v1/customers/${cus}`, { form: [['invoice_settings[colour]', 'x']] }), 400, {
      type: 'invalid_request_error',
      param: 'invoice_settings[colour]',
    });
    assertStripeError(await api('POST', '/v1/payment_intents', { form: [['currency', 'eur']] }), 400, {
      type: 'invalid_request_error',
      param: 'amount',
      message: /^Missing required param: amount\.$/,
    });
    assertStripeError(
      await api('POST', '/v1/payment_intents', {
        form: [
          ['amount', 'ten'],
          ['currency', 'eur'],
        ],
      }),
      400,
      {
        type: 'invalid_request_error',
        param: 'amount',
        message: /^Invalid integer: ten$/,
      },
    );
    assertStripeError(
      await api('POST', '/v1/payment_intents', {
        form: [
          ['amount', '49'],
          ['currency', 'eur'],
        ],
      }),
      400,
      {
        type: 'invalid_request_error',
        code: 'amount_too_small',
        param: 'amount',
      },
    );
    assertStripeError(
      await api('POST', '/v1/payment_intents', {
        form: [
          ['amount', '500'],
          ['currency', 'eur'],
          ['capture_method', 'later'],
        ],
      }),
      400,
      {
        type: 'invalid_request_error',
        param: 'capture_method',
      },
    );
  });

  test('the parameter naming allowed types follows the API version (allowed_payment_method_types from 2026-09-30)', async () => {
    const cus = await customer();
    assertStripeError(
      await api('POST', '/v1/setup_intents', {
        form: [
          ['customer', cus],
          ['payment_method_types[0]', 'card'],
        ],
      }),
      400,
      {
        type: 'invalid_request_error',
        param: 'payment_method_types',
      },
    );
    const old = await api('POST', '/v1/setup_intents', {
      version: '2025-03-31.basil',
      form: [
        ['customer', cus],
        ['payment_method_types[0]', 'card'],
      ],
    });
    assert.equal(old.status, 200, JSON.stringify(old.body));
    assertStripeError(
      await api('POST', '/v1/setup_intents', {
        version: '2025-03-31.basil',
        form: [
          ['customer', cus],
          ['allowed_payment_method_types[0]', 'card'],
        ],
      }),
      400,
      { type: 'invalid_request_error', param: 'allowed_payment_method_types' },
    );
  });

  test('unknown URLs and objects: 404 for the URL, resource_missing 404 by path and 400 by parameter', async () => {
    assertStripeError(await api('GET', '/v1/charges_and_more'), 404, {
      type: 'invalid_request_error',
      message: /^Unrecognized request URL \(GET: \/v1\/charges_and_more\)/,
    });
    assertStripeError(await api('GET', '/v1/customers/cus_doesnotexist'), 404, {
      type: 'invalid_request_error',
      code: 'resource_missing',
      param: 'id',
      message: /^No such customer: 'cus_doesnotexist'$/,
    });
    assertStripeError(await api('POST', '/v1/setup_intents', { form: [['customer', 'cus_nobody']] }), 400, {
      type: 'invalid_request_error',
      code: 'resource_missing',
      param: 'customer',
    });
    const res = await api('GET', '/v1/payment_intents/pi_nothing');
    assert.equal(res.body.error.doc_url, 'https://stripe.com/docs/error-codes/resource-missing');
  });

  test('lists: newest first, limit, has_more and starting_after', async () => {
    const cus = await customer();
    const ids = [];
    for (const m of ['pm_card_visa', 'pm_card_mastercard', 'pm_card_amex']) ids.push(await attach(cus, m));
    const first = await api('GET', `/v1/customers/${cus}/payment_methods`, { form: [['limit', '2']] });
    assert.equal(first.body.object, 'list');
    assert.equal(first.body.has_more, true);
    assert.deepEqual(
      first.body.data.map((p: { id: string }) => p.id),
      [ids[2], ids[1]],
    );
    const rest = await api('GET', `/v1/customers/${cus}/payment_methods`, {
      form: [
        ['limit', '2'],
        ['starting_after', ids[1] as string],
      ],
    });
    assert.equal(rest.body.has_more, false);
    assert.deepEqual(
      rest.body.data.map((p: { id: string }) => p.id),
      [ids[0]],
    );
    // The SDK's auto-pagination walks the same list.
    const all: string[] = [];
    for await (const pm of sdk.customers.listPaymentMethods(cus, { limit: 1 })) all.push(pm.id);
    assert.deepEqual(all, [ids[2], ids[1], ids[0]]);
  });

  test('invoice_settings.default_payment_method must be attached to the customer; detaching the default clears it', async () => {
    const cus = await customer();
    const other = await customer();
    const pm = await attach(cus, 'pm_card_visa');
    const foreign = await attach(other, 'pm_card_visa');
    assertStripeError(await api('POST', `/v1/customers/${cus}`, { form: [['invoice_settings[default_payment_method]', foreign]] }), 400, {
      type: 'invalid_request_error',
      param: 'invoice_settings[default_payment_method]',
    });
    assert.equal(
      (await api('POST', `/v1/customers/${cus}`, { form: [['invoice_settings[default_payment_method]', pm]] })).body.invoice_settings.default_payment_method,
      pm,
    );
    await api('POST', `/v1/payment_methods/${pm}/detach`);
    assert.equal((await api('GET', `/v1/customers/${cus}`)).body.invoice_settings.default_payment_method, null);
    assertStripeError(await api('POST', `/v1/payment_methods/${pm}/detach`), 400, { type: 'invalid_request_error', message: /not attached/ });
    assertStripeError(await api('POST', `/v1/payment_methods/${pm}/attach`, { form: [['customer', cus]] }), 400, {
      type: 'invalid_request_error',
      message: /may not be used again/,
    });
  });
});

describe('Idempotency-Key', { concurrency: true }, () => {
  test('the same key and parameters replay the first answer (Idempotent-Replayed) and create nothing more', async () => {
    const cus = await customer();
    const pm = await attach(cus, 'pm_card_visa');
    const key = `replay-${randomUUID()}`;
    const first = await api('POST', '/v1/payment_intents', { form: holdForm(cus, pm), idempotencyKey: key });
    const second = await api('POST', '/v1/payment_intents', { form: holdForm(cus, pm), idempotencyKey: key });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.headers.get('idempotency-key'), key);
    assert.deepEqual(second.body, first.body);
    const listed = await api('GET', '/v1/payment_intents', { form: [['customer', cus]] });
    assert.equal(listed.body.data.length, 1);
  });

  test('the same key with other parameters, or on another endpoint, is 400 idempotency_error', async () => {
    const cus = await customer();
    const pm = await attach(cus, 'pm_card_visa');
    const key = `mismatch-${randomUUID()}`;
    assert.equal((await api('POST', '/v1/payment_intents', { form: holdForm(cus, pm, '5000'), idempotencyKey: key })).status, 200);
    const other = await api('POST', '/v1/payment_intents', { form: holdForm(cus, pm, '5001'), idempotencyKey: key });
    assertStripeError(other, 400, { type: 'idempotency_error', message: /can only be used with the same parameters/ });
    assertStripeError(await api('POST', '/v1/customers', { idempotencyKey: key }), 400, { type: 'idempotency_error' });
    // Thrown by the SDK as its idempotency error.
    await assert.rejects(
      sdk.paymentIntents.create({ amount: 5002, currency: 'eur', customer: cus }, { idempotencyKey: key }),
      (e: unknown) => e instanceof Stripe.errors.StripeIdempotencyError,
    );
  });

  test('a decline is a result: replayed as the same 402 with the same payment intent; a refused request is not stored', async () => {
    const cus = await customer();
    const pm = await attach(cus, 'pm_card_chargeCustomerFail');
    const key = `decline-${randomUUID()}`;
    const first = await api('POST', '/v1/payment_intents', { form: holdForm(cus, pm), idempotencyKey: key });
    assertStripeError(first, 402, { type: 'card_error', code: 'card_declined' });
    const again = await api('POST', '/v1/payment_intents', { form: holdForm(cus, pm), idempotencyKey: key });
    assert.equal(again.status, 402);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.error.payment_intent.id, first.body.error.payment_intent.id);
    assert.equal((await api('GET', '/v1/payment_intents', { form: [['customer', cus]] })).body.data.length, 1);

    const refusedKey = `refused-${randomUUID()}`;
    assertStripeError(await api('POST', '/v1/customers', { form: [['nickname', 'x']], idempotencyKey: refusedKey }), 400, { type: 'invalid_request_error' });
    assert.equal((await api('POST', '/v1/customers', { form: [['description', 'fixed']], idempotencyKey: refusedKey })).status, 200);
  });

  test('while a request with the key is in flight: 409 idempotency_key_in_use (the SDK retries it)', async () => {
    const key = `busy-${randomUUID()}`;
    const holder = new pg.Client({ connectionString: t.db.pool.options.connectionString });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [idempotencyLockName(key)]);
      const res = await api('POST', '/v1/customers', { idempotencyKey: key });
      assertStripeError(res, 409, { type: 'idempotency_error', code: 'idempotency_key_in_use' });
      assert.equal(res.headers.get('stripe-should-retry'), 'true');
    } finally {
      await holder.end();
    }
    assert.equal((await api('POST', '/v1/customers', { idempotencyKey: key })).status, 200, 'free again once the other request is done');
  });

  test('keys expire after 24 hours on the clock', async () => {
    const ctx = await setupTestApp();
    try {
      const call = (description: string) =>
        fetch(`${ctx.sandbox.url}/v1/customers`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ctx.sandbox.keys.secretKey}`, 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': 'daily' },
          body: new URLSearchParams({ description }).toString(),
        });
      assert.equal((await call('one')).status, 200);
      assert.equal((await call('two')).status, 400);
      ctx.clock.advance(24 * 3_600_000 + 1_000);
      assert.equal((await call('two')).status, 200);
      const count = async () => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM stripe_sandbox.idempotency_keys')).rows[0]?.n;
      assert.equal(await count(), 1);
      await ctx.sandbox.purgeExpired();
      assert.equal(await count(), 1, 'the fresh result is kept');
      ctx.clock.advance(24 * 3_600_000 + 1_000);
      await ctx.sandbox.purgeExpired();
      assert.equal(await count(), 0, 'results past their 24 hours are dropped');
    } finally {
      await ctx.close();
    }
  });
});

describe('test cards', { concurrency: true }, () => {
  async function intent(types: string[] = ['card']) {
    const cus = await customer();
    const res = await api('POST', '/v1/setup_intents', {
      form: [['customer', cus], ...types.map((ty, i): [string, string] => [`allowed_payment_method_types[${i}]`, ty])],
    });
    assert.equal(res.status, 200);
    return { cus, id: res.body.id as string, secret: res.body.client_secret as string };
  }

  const confirm = (id: string, body: Record<string, unknown>) => t.call('POST', `/sandbox/setup_intents/${id}/confirm`, { body });
  const authenticate = (kind: 'setup_intents' | 'payment_intents', id: string, secret: string, outcome: string) =>
    t.call('POST', `/sandbox/${kind}/${id}/authenticate`, { body: { client_secret: secret, outcome } });

  test('4242424242424242: set up at once, attached, charged off-session', async () => {
    const si = await intent();
    const res = await confirm(si.id, { client_secret: si.secret, card_number: CARDS.visa, exp_month: 4, exp_year: 2031, cardholder_name: 'Ada Lovelace' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'succeeded');
    assert.equal(res.body.customer, undefined, 'the client-side view hides the customer');
    const pm = (await api('GET', `/v1/payment_methods/${res.body.payment_method}`)).body;
    assert.deepEqual(
      { customer: pm.customer, brand: pm.card.brand, last4: pm.card.last4, exp: [pm.card.exp_month, pm.card.exp_year], name: pm.billing_details.name },
      {
        customer: si.cus,
        brand: 'visa',
        last4: '4242',
        exp: [4, 2031],
        name: 'Ada Lovelace',
      },
    );
    assert.ok(!JSON.stringify(pm).includes(CARDS.visa), 'the card number is not kept');
    const hold = await api('POST', '/v1/payment_intents', { form: holdForm(si.cus, pm.id) });
    assert.equal(hold.body.status, 'requires_capture');
    assert.equal(hold.body.amount_capturable, 5000);
  });

  test('4000002500003155: authentication to set up; once set up, off-session holds need none', async () => {
    const si = await intent();
    const res = await confirm(si.id, { client_secret: si.secret, card_number: CARDS.authenticateOnSetup });
    assert.equal(res.body.status, 'requires_action');
    assert.equal(res.body.next_action.type, 'redirect_to_url');
    assert.ok(res.body.next_action.redirect_to_url.url.includes(`/sandbox/?setup_intent=${si.id}`));
    assert.equal((await api('GET', `/v1/customers/${si.cus}/payment_methods`)).body.data.length, 0, 'not attached before authentication');
    const done = await authenticate('setup_intents', si.id, si.secret, 'approve');
    assert.equal(done.body.status, 'succeeded', done.text);
    const hold = await api('POST', '/v1/payment_intents', { form: holdForm(si.cus, done.body.payment_method) });
    assert.equal(hold.status, 200, JSON.stringify(hold.body));
    assert.equal(hold.body.status, 'requires_capture');
    // On-session it still asks for authentication.
    const onSession = await api('POST', '/v1/payment_intents', {
      form: [
        ['amount', '900'],
        ['currency', 'eur'],
        ['customer', si.cus],
        ['payment_method', done.body.payment_method],
        ['confirm', 'true'],
      ],
    });
    assert.equal(onSession.body.status, 'requires_action');
  });

  test('4000002760003184: authenticated to set up, yet every off-session hold fails with authentication_required until the customer authenticates it', async () => {
    const si = await intent();
    assert.equal((await confirm(si.id, { client_secret: si.secret, card_number: CARDS.authenticateAlways })).body.status, 'requires_action');
    const pm = (await authenticate('setup_intents', si.id, si.secret, 'approve')).body.payment_method;
    const failed = await api('POST', '/v1/payment_intents', { form: holdForm(si.cus, pm) });
    assertStripeError(failed, 402, { type: 'card_error', code: 'authentication_required' });
    assert.equal(failed.body.error.decline_code, 'authentication_required');
    const pi = failed.body.error.payment_intent;
    assert.equal(pi.status, 'requires_payment_method');
    assert.equal(pi.last_payment_error.code, 'authentication_required');
    assert.equal(pi.last_payment_error.payment_method.id, pm);
    const authenticated = await authenticate('payment_intents', pi.id, pi.client_secret, 'approve');
    assert.equal(authenticated.status, 200, authenticated.text);
    assert.equal(authenticated.body.status, 'requires_capture');
    assert.equal(authenticated.body.amount_capturable, 5000);
  });

  test('a failed 3-D Secure challenge: the intent asks for another payment method', async () => {
    const si = await intent();
    await confirm(si.id, { client_secret: si.secret, card_number: CARDS.authenticateAlways });
    const failed = await authenticate('setup_intents', si.id, si.secret, 'fail');
    assert.equal(failed.body.status, 'requires_payment_method');
    assert.equal(failed.body.last_setup_error.code, 'setup_intent_authentication_failure');
    assert.equal((await api('GET', `/v1/customers/${si.cus}/payment_methods`)).body.data.length, 0);

    const cus = await customer();
    const pm = await attach(cus, 'pm_card_authenticationRequired');
    const pi = (await api('POST', '/v1/payment_intents', { form: holdForm(cus, pm) })).body.error.payment_intent;
    const refused = await authenticate('payment_intents', pi.id, pi.client_secret, 'fail');
    assert.equal(refused.body.status, 'requires_payment_method');
    assert.equal(refused.body.last_payment_error.code, 'payment_intent_authentication_failure');
  });

  test('4000000000009995 attaches; holds are declined for insufficient funds (402 card_error)', async () => {
    const si = await intent();
    const res = await confirm(si.id, { client_secret: si.secret, card_number: CARDS.insufficientFunds });
    assert.equal(res.body.status, 'succeeded');
    const hold = await api('POST', '/v1/payment_intents', { form: holdForm(si.cus, res.body.payment_method) });
    assertStripeError(hold, 402, { type: 'card_error', code: 'card_declined' });
    assert.equal(hold.body.error.decline_code, 'insufficient_funds');
    assert.equal(hold.body.error.message, 'Your card has insufficient funds.');
    assert.match(hold.body.error.charge, /^ch_/);
    assert.equal(hold.body.error.payment_intent.status, 'requires_payment_method');
    assert.equal(hold.body.error.payment_intent.payment_method, null);
  });

  test('4000000000000341 attaches; every charge is declined', async () => {
    const si = await intent();
    const pm = (await confirm(si.id, { client_secret: si.secret, card_number: CARDS.chargesFail })).body.payment_method;
    const hold = await api('POST', '/v1/payment_intents', { form: holdForm(si.cus, pm) });
    assertStripeError(hold, 402, { type: 'card_error', code: 'card_declined' });
    assert.equal(hold.body.error.decline_code, 'generic_decline');
    const charge = await api('POST', '/v1/payment_intents', {
      form: [
        ['amount', '800'],
        ['currency', 'eur'],
        ['customer', si.cus],
        ['payment_method', pm],
        ['confirm', 'true'],
        ['off_session', 'true'],
      ],
    });
    assertStripeError(charge, 402, { type: 'card_error', code: 'card_declined' });
  });

  test('4000000000000002 is declined at setup: the intent answers requires_payment_method with last_setup_error (402 through the API)', async () => {
    const si = await intent();
    const res = await confirm(si.id, { client_secret: si.secret, card_number: CARDS.declined });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'requires_payment_method');
    assert.equal(res.body.last_setup_error.code, 'card_declined');
    assert.equal((await api('GET', `/v1/customers/${si.cus}/payment_methods`)).body.data.length, 0);
    const viaApi = await api('POST', `/v1/setup_intents/${si.id}/confirm`, { form: [['payment_method', 'pm_card_visa_chargeDeclined']] });
    assertStripeError(viaApi, 402, { type: 'card_error', code: 'card_declined' });
    assert.equal(viaApi.body.error.setup_intent.id, si.id);
  });

  test('an invalid card number is 402 incorrect_number and leaves the intent as it was', async () => {
    const si = await intent();
    const res = await confirm(si.id, { client_secret: si.secret, card_number: '4242424242424241' });
    assert.equal(res.status, 402);
    assert.equal(res.body.error.code, 'incorrect_number');
    assert.equal((await api('GET', `/v1/setup_intents/${si.id}`)).body.status, 'requires_payment_method');
  });

  test('PayPal: approve attaches a paypal method; decline asks for another; a card-only intent refuses PayPal', async () => {
    const si = await intent(['paypal']);
    const res = await confirm(si.id, { client_secret: si.secret, paypal: 'approve', paypal_email: 'buyer@example.com' });
    assert.equal(res.body.status, 'succeeded', res.text);
    const pm = (await api('GET', `/v1/payment_methods/${res.body.payment_method}`)).body;
    assert.equal(pm.type, 'paypal');
    assert.equal(pm.paypal.payer_email, 'buyer@example.com');
    const hold = await api('POST', '/v1/payment_intents', { form: [...holdForm(si.cus, pm.id), ['allowed_payment_method_types[0]', 'paypal']] });
    assert.equal(hold.body.status, 'requires_capture', JSON.stringify(hold.body));
    const declined = await intent(['paypal']);
    assert.equal((await confirm(declined.id, { client_secret: declined.secret, paypal: 'decline' })).body.status, 'requires_payment_method');
    const cardOnly = await intent(['card']);
    assert.equal((await confirm(cardOnly.id, { client_secret: cardOnly.secret, paypal: 'approve' })).status, 400);
  });

  test('the client secret is the credential: a wrong one answers like an unknown intent and reveals nothing', async () => {
    const si = await intent();
    const wrong = await confirm(si.id, { client_secret: `${si.id}_secret_wrong`, card_number: CARDS.visa });
    assert.equal(wrong.status, 404);
    assert.equal(wrong.body.error.code, 'resource_missing');
    const unknown = await confirm('seti_unknown', { client_secret: 'seti_unknown_secret_x', card_number: CARDS.visa });
    assert.equal(unknown.status, 404);
    assert.equal(wrong.body.error.message.replace(si.id, 'X'), unknown.body.error.message.replace('seti_unknown', 'X'));
    assert.ok(!wrong.text.includes(si.secret) && !wrong.text.includes(si.cus));
    assert.equal((await api('GET', `/v1/setup_intents/${si.id}`)).body.status, 'requires_payment_method', 'unchanged');
    const read = await t.call('GET', `/sandbox/setup_intents/${si.id}?client_secret=${encodeURIComponent(si.secret)}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.id, si.id);
    const bad = await confirm(si.id, { client_secret: si.secret, card_number: CARDS.visa, colour: 'red' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.type, 'invalid_request_error');
  });

  test('the hosted page is served with a strict content security policy', async () => {
    const page = await t.call('GET', '/sandbox/');
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'nonce-[^']+'/);
    assert.match(page.text, /setup_intents\/' \+ id\(\) \+ '\/confirm/);
  });
});

describe('hold expiry on the clock', () => {
  test('an uncaptured hold lasts 7 days: captured just before, canceled (automatic) just after, with its event', async () => {
    const cus = await customer();
    const early = await api('POST', '/v1/payment_intents', { form: [...holdForm(cus, await attach(cus, 'pm_card_visa')), ['expand[0]', 'latest_charge']] });
    const late = await api('POST', '/v1/payment_intents', { form: holdForm(cus, await attach(cus, 'pm_card_visa')) });
    const captureBefore = early.body.latest_charge.payment_method_details.card.capture_before;
    assert.equal(captureBefore, Math.floor(t.clock.now().getTime() / 1000) + 7 * 24 * 3600);

    t.clock.advance(7 * DAY_MS - 2_000);
    assert.equal((await api('GET', `/v1/payment_intents/${late.body.id}`)).body.status, 'requires_capture');
    assert.equal((await api('POST', `/v1/payment_intents/${early.body.id}/capture`, { form: [['amount_to_capture', '4000']] })).body.status, 'succeeded');

    t.clock.advance(3_000);
    const lapsed = await api('GET', `/v1/payment_intents/${late.body.id}`);
    assert.equal(lapsed.body.status, 'canceled');
    assert.equal(lapsed.body.cancellation_reason, 'automatic');
    assert.equal(lapsed.body.amount_capturable, 0);
    assert.equal(lapsed.body.canceled_at, captureBefore);
    assert.equal((await eventsOf('payment_intent.canceled', late.body.id)).length, 1);
    assertStripeError(await api('POST', `/v1/payment_intents/${late.body.id}/capture`), 400, {
      type: 'invalid_request_error',
      code: 'payment_intent_unexpected_state',
    });
    assert.equal((await api('GET', `/v1/payment_intents/${early.body.id}`)).body.amount_received, 4000, 'the captured one is untouched');
  });

  test('lapsed holds are canceled by the background sweep too, without anyone reading them', async () => {
    const cus = await customer();
    const hold = await api('POST', '/v1/payment_intents', { form: holdForm(cus, await attach(cus, 'pm_card_visa')) });
    t.clock.advance(8 * DAY_MS);
    const result = await t.sandbox.runDueWork();
    assert.ok(result.expired >= 1, JSON.stringify(result));
    assert.equal((await eventsOf('payment_intent.canceled', hold.body.id)).length, 1);
    assert.equal((await api('GET', `/v1/payment_intents/${hold.body.id}`)).body.cancellation_reason, 'automatic');
    assert.equal((await eventsOf('payment_intent.canceled', hold.body.id)).length, 1, 'one event, not one per read');
  });
});

describe('signed webhooks with retries', () => {
  let ctx: TestContext;
  let server: Server;
  const received: { headers: IncomingMessage['headers']; body: string }[] = [];
  let answers: number[] = [];

  before(async () => {
    ctx = await setupTestApp();
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(answers.shift() ?? 200).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await ctx.sandbox.addWebhookEndpoint({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await ctx?.close();
  });

  const post = (path: string, form: [string, string][] = []) =>
    fetch(`${ctx.sandbox.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.sandbox.keys.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    }).then(async (r) => (await r.json()) as { id: string });

  test('each event is POSTed once with a Stripe-Signature that Stripe’s SDK verifies; the body is the event', async () => {
    received.length = 0;
    answers = [];
    const cus = await post('/v1/customers', [['email', 'hook@example.com']]);
    assert.equal(received.length, 0, 'delivered by the background work, not within the request');
    assert.deepEqual(await ctx.sandbox.runDueWork(), { expired: 0, delivered: 1, retried: 0 });
    assert.equal(received.length, 1);
    const [delivery] = received;
    const header = String(delivery?.headers['stripe-signature']);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(Number(/t=(\d+)/.exec(header)?.[1]), Math.floor(ctx.clock.now().getTime() / 1000), 'signed at the sandbox clock');
    const event = Stripe.webhooks.constructEvent(delivery?.body ?? '', header, ctx.sandbox.keys.webhookSecret, 300, undefined, ctx.clock.now().getTime());
    assert.equal(event.type, 'customer.created');
    assert.equal((event.data.object as { id: string }).id, cus.id);
    assert.throws(() => Stripe.webhooks.constructEvent(`${delivery?.body} `, header, ctx.sandbox.keys.webhookSecret), /No signatures found matching/);
    const stored = await fetch(`${ctx.sandbox.url}/v1/events/${event.id}`, { headers: { authorization: `Bearer ${ctx.sandbox.keys.secretKey}` } }).then((r) =>
      r.json(),
    );
    assert.deepEqual(JSON.parse(delivery?.body ?? ''), stored);
    assert.deepEqual(await ctx.sandbox.runDueWork(), { expired: 0, delivered: 0, retried: 0 }, 'never delivered twice');
  });

  test('a failed delivery is retried after a growing delay on the clock, newly signed, until it succeeds', async () => {
    received.length = 0;
    answers = [500, 503, 200];
    const cus = await post('/v1/customers');
    assert.deepEqual(await ctx.sandbox.runDueWork(), { expired: 0, delivered: 0, retried: 1 });
    assert.deepEqual(await ctx.sandbox.runDueWork(), { expired: 0, delivered: 0, retried: 0 }, 'not due again before the delay');
    ctx.clock.advance(1_000);
    assert.deepEqual(await ctx.sandbox.runDueWork(), { expired: 0, delivered: 0, retried: 1 });
    ctx.clock.advance(4_000);
    assert.deepEqual(await ctx.sandbox.runDueWork(), { expired: 0, delivered: 0, retried: 0 }, 'the second delay is longer (5 s)');
    ctx.clock.advance(1_000);
    assert.deepEqual(await ctx.sandbox.runDueWork(), { expired: 0, delivered: 1, retried: 0 });
    assert.equal(received.length, 3);
    const ids = received.map((r) => JSON.parse(r.body).id);
    assert.equal(new Set(ids).size, 1, 'the same event each time');
    assert.equal(JSON.parse(received[0]?.body ?? '').data.object.id, cus.id);
    const stamps = received.map((r) => /t=(\d+)/.exec(String(r.headers['stripe-signature']))?.[1]);
    assert.equal(new Set(stamps).size, 3, 'each attempt signed at its own time');
    const [record] = await ctx.sandbox.deliveries(ids[0]);
    assert.equal(record?.attempts, 3);
    assert.equal(record?.lastStatus, 200);
    assert.ok(record?.deliveredAt);
    assert.equal(record?.nextAttemptAt, null);
  });

  test('an endpoint that never answers 2xx is given up after three days', async () => {
    received.length = 0;
    answers = Array.from({ length: 200 }, () => 500);
    await post('/v1/customers');
    let attempts = 0;
    for (let hour = 0; hour <= 80; hour++) {
      attempts += (await ctx.sandbox.runDueWork()).retried;
      ctx.clock.advance(3_600_000);
    }
    const [record] = await ctx.sandbox.deliveries(JSON.parse(received[0]?.body ?? '{}').id);
    assert.ok(record?.failedAt, 'marked failed');
    assert.equal(record?.nextAttemptAt, null);
    assert.equal(record?.deliveredAt, null);
    assert.ok(attempts >= 70 && attempts <= 80, `${attempts} attempts over three days`);
    answers = [];
  });
});

describe('wire: what the service’s adapter sends', () => {
  test('a hold, its capture and a release: exact paths, form fields, API version and our idempotency keys', async () => {
    const cus = (await t.processor.createCustomer({ idempotencyKey: `customer:wire:${randomUUID()}`, metadata: { user_id: 'u' } })).customerId;
    const pm = await attach(cus, 'pm_card_visa');
    const from = t.sandbox.requestLog.length;
    const session = randomUUID();
    const hold = await t.processor.placeHold({
      customerId: cus,
      paymentMethodId: pm,
      paymentMethodType: 'card',
      amount: 4_500,
      currency: 'EUR',
      idempotencyKey: `session:${session}:hold`,
      metadata: { session_id: session },
    });
    assert.equal(hold.status, 'authorized');
    const paymentIntentId = hold.status === 'authorized' ? hold.paymentIntentId : '';
    await t.processor.captureHold({ paymentIntentId, amount: 3_210, idempotencyKey: `session:${session}:capture` });
    const other = await t.processor.placeHold({
      customerId: cus,
      paymentMethodId: pm,
      paymentMethodType: 'card',
      amount: 900,
      currency: 'eur',
      idempotencyKey: `session:${session}:other`,
    });
    const otherId = other.status === 'authorized' ? other.paymentIntentId : '';
    await t.processor.releaseHold({ paymentIntentId: otherId, idempotencyKey: `session:${session}:release` });
    await t.processor.setDefaultPaymentMethod(cus, pm);
    await t.processor.setDefaultPaymentMethod(cus, null);
    const sent = t.sandbox.requestLog.slice(from).filter((r) => r.method === 'POST');
    assert.deepEqual(
      sent.map((r) => [r.method, r.path, r.idempotencyKey?.startsWith('stripe-node-retry-') ? 'sdk' : r.idempotencyKey]),
      [
        ['POST', '/v1/payment_intents', `session:${session}:hold`],
        ['POST', `/v1/payment_intents/${paymentIntentId}/capture`, `session:${session}:capture`],
        ['POST', '/v1/payment_intents', `session:${session}:other`],
        ['POST', `/v1/payment_intents/${otherId}/cancel`, `session:${session}:release`],
        ['POST', `/v1/customers/${cus}`, 'sdk'],
        ['POST', `/v1/customers/${cus}`, 'sdk'],
      ],
    );
    for (const request of sent) {
      assert.equal(request.stripeVersion, STRIPE_API_VERSION);
      assert.equal(request.contentType, 'application/x-www-form-urlencoded');
    }
    const [create, capture, , release, setDefault, clearDefault] = sent;
    assert.deepEqual(release?.params, {});
    assert.deepEqual(create?.params, {
      amount: '4500',
      currency: 'eur',
      customer: cus,
      payment_method: pm,
      allowed_payment_method_types: ['card'],
      capture_method: 'manual',
      confirm: 'true',
      off_session: 'true',
      metadata: { session_id: session },
      expand: ['latest_charge'],
    });
    assert.ok(create?.body.includes('allowed_payment_method_types[0]=card'), create?.body);
    assert.deepEqual(capture?.params, { amount_to_capture: '3210' });
    assert.equal(setDefault?.body, `invoice_settings[default_payment_method]=${pm}`);
    assert.equal(clearDefault?.body, 'invoice_settings[default_payment_method]=');
  });

  test('setup intents, listing and detaching', async () => {
    const cus = (await t.processor.createCustomer({ idempotencyKey: `customer:wire:${randomUUID()}`, metadata: {} })).customerId;
    const from = t.sandbox.requestLog.length;
    await t.processor.createSetupIntent({ customerId: cus, paymentMethodType: 'paypal', metadata: { user_id: 'u-9' } });
    await t.processor.listPaymentMethods(cus);
    const pm = await attach(cus, 'pm_card_visa');
    await t.processor.detachPaymentMethod(pm);
    const log = t.sandbox.requestLog.slice(from).map((r) => ({ method: r.method, path: r.path, params: r.params }));
    assert.deepEqual(log, [
      {
        method: 'POST',
        path: '/v1/setup_intents',
        params: { customer: cus, allowed_payment_method_types: ['paypal'], usage: 'off_session', metadata: { user_id: 'u-9' } },
      },
      { method: 'GET', path: `/v1/customers/${cus}/payment_methods`, params: { limit: '100' } },
      { method: 'POST', path: '/v1/payment_methods/pm_card_visa/attach', params: { customer: cus } },
      { method: 'GET', path: `/v1/payment_methods/${pm}`, params: {} },
      { method: 'POST', path: `/v1/payment_methods/${pm}/detach`, params: {} },
    ]);
  });
});

describe('two sandbox processes on one database share the webhook endpoints', () => {
  let ctx: TestContext;
  let dir: string;
  let server: HttpsServer;
  const received: { headers: IncomingMessage['headers']; body: string }[] = [];

  before(async () => {
    ctx = await setupTestApp();
    // An HTTPS endpoint with its own self-signed certificate, as a service instance has.
    dir = await mkdtemp(path.join(os.tmpdir(), 'sandbox-endpoints-'));
    const material = await ensureCertificate({ certFile: path.join(dir, 'cert.pem'), keyFile: path.join(dir, 'key.pem'), generated: true });
    server = createHttpsServer({ cert: material.cert, key: material.key }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
    await ctx?.close();
  });

  test('one registers (pinned certificate, extra header), the other creates and delivers the event there; registering again updates', async () => {
    const cert = await readFile(path.join(dir, 'cert.pem'), 'utf8');
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`;
    // Process A (the test app's sandbox) registers; process B is a second sandbox on the same database.
    await ctx.sandbox.addWebhookEndpoint({ url, pinnedCertificatePem: cert, headers: { 'x-forwarded-proto': 'https', 'x-registered': 'first' } });
    await ctx.sandbox.addWebhookEndpoint({ url, pinnedCertificatePem: cert, headers: { 'x-forwarded-proto': 'https', 'x-registered': 'again' } });
    const other = await createStripeSandbox({ db: ctx.db, clock: ctx.clock, apiVersion: STRIPE_API_VERSION });
    try {
      const otherUrl = await other.listen({ port: 0 });
      const created = await fetch(`${otherUrl}/v1/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${other.keys.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=two-processes%40example.com',
      }).then(async (r) => (await r.json()) as { id: string });
      assert.deepEqual(await other.runDueWork(), { expired: 0, delivered: 1, retried: 0 }, 'B delivers to the endpoint A registered, once');
      assert.equal(received.length, 1);
      const [delivery] = received;
      assert.equal(delivery?.headers['x-registered'], 'again', 'as registered last');
      assert.equal(delivery?.headers['x-forwarded-proto'], 'https');
      const event = Stripe.webhooks.constructEvent(
        delivery?.body ?? '',
        String(delivery?.headers['stripe-signature']),
        ctx.sandbox.keys.webhookSecret,
        300,
        undefined,
        ctx.clock.now().getTime(),
      );
      assert.equal((event.data.object as { id: string }).id, created.id);
      assert.equal((event as unknown as { pending_webhooks: number }).pending_webhooks, 1, 'one endpoint, not one per registration');
      const deliveries = await ctx.sandbox.deliveries(event.id);
      assert.deepEqual(
        deliveries.map((d) => [d.endpoint, d.attempts, d.deliveredAt !== null]),
        [[url, 1, true]],
      );
    } finally {
      await other.close();
    }
  });
});

describe('a backlog of webhook deliveries', () => {
  let ctx: TestContext;
  let server: Server;
  /** Requests the receiver holds without answering, until `release`. */
  const held: { end: () => void }[] = [];
  let holding = true;
  let inFlight = 0;
  let mostInFlight = 0;

  before(async () => {
    ctx = await setupTestApp();
    server = createServer((req, res) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      res.on('close', () => inFlight--);
      req.resume();
      req.on('end', () => {
        const end = () => {
          res.writeHead(200).end('{}');
        };
        if (holding) held.push({ end });
        else end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await ctx.sandbox.addWebhookEndpoint({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await ctx?.close();
  });

  const until = async (condition: () => boolean, what: string) => {
    const deadline = Date.now() + 10_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  test('goes out 32 at a time; a sandbox that closes cuts off what is in flight and loses nothing', async () => {
    const events = 100;
    for (let i = 0; i < events; i++) {
      const res = await fetch(`${ctx.sandbox.url}/v1/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ctx.sandbox.keys.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: `email=backlog-${i}%40example.com`,
      });
      assert.equal(res.status, 200);
    }
    // A second sandbox process on the same database delivers; the receiver answers none of them.
    const other = await createStripeSandbox({ db: ctx.db, clock: ctx.clock, apiVersion: STRIPE_API_VERSION });
    const pass = other.runDueWork();
    await until(() => held.length >= 32, '32 deliveries in flight');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(mostInFlight, 32, 'at most 32 in flight, and that many while the receiver is slow');
    // close() does not wait for the receiver (it never answers): what is in flight is cut off.
    const closing = other.close().then(() => 'closed');
    const timeout = new Promise((resolve) => setTimeout(resolve, 5_000, 'still waiting'));
    assert.equal(await Promise.race([closing, timeout]), 'closed');
    assert.deepEqual(await pass, { expired: 0, delivered: 0, retried: 0 });
    const { rows } = await ctx.db.query<{ pending: number; attempted: number; due_later: number }>(
      `SELECT count(*) FILTER (WHERE next_attempt_at IS NOT NULL) AS pending, count(*) FILTER (WHERE attempts > 0) AS attempted,
              count(*) FILTER (WHERE next_attempt_at > $1) AS due_later
         FROM stripe_sandbox.webhook_deliveries`,
      [ctx.clock.now()],
    );
    assert.deepEqual(rows[0], { pending: events, attempted: 0, due_later: 0 }, 'every delivery still to go, due at once, none counted as attempted');
    // The receiver recovers; the first sandbox delivers every one, once.
    holding = false;
    for (const request of held.splice(0)) request.end();
    assert.deepEqual(await ctx.sandbox.runDueWork(), { expired: 0, delivered: events, retried: 0 });
  });
});

describe('enabled events of a webhook endpoint', () => {
  let ctx: TestContext;
  let server: Server;
  const received: { path: string; type: string }[] = [];

  before(async () => {
    ctx = await setupTestApp();
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        received.push({ path: req.url ?? '', type: JSON.parse(body).type });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await ctx.sandbox.addWebhookEndpoint({ url: `${base}/created-only`, enabledEvents: ['customer.created'] });
    await ctx.sandbox.addWebhookEndpoint({ url: `${base}/all` });
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await ctx?.close();
  });

  test('an endpoint receives the types it enables, one enabling "*" every type; pending_webhooks counts them', async () => {
    const headers = { authorization: `Bearer ${ctx.sandbox.keys.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' };
    const created = (await (await fetch(`${ctx.sandbox.url}/v1/customers`, { method: 'POST', headers, body: 'email=a%40example.com' })).json()) as {
      id: string;
    };
    await fetch(`${ctx.sandbox.url}/v1/customers/${created.id}`, { method: 'POST', headers, body: 'description=updated' });
    await ctx.sandbox.runDueWork();
    const paths = (type: string) =>
      received
        .filter((r) => r.type === type)
        .map((r) => r.path)
        .sort();
    assert.deepEqual(paths('customer.created'), ['/all', '/created-only']);
    assert.deepEqual(paths('customer.updated'), ['/all']);
    const list = (await (await fetch(`${ctx.sandbox.url}/v1/events?type=customer.updated`, { headers })).json()) as { data: { pending_webhooks: number }[] };
    assert.equal(list.data[0]?.pending_webhooks, 1);
  });
});

describe('webhook deliveries under a steady stream of changes', () => {
  let ctx: TestContext;
  let server: Server;
  let received = 0;

  before(async () => {
    ctx = await setupTestApp();
    // A receiver that takes 20 ms per delivery: each pass of the due work takes a while.
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        setTimeout(() => res.writeHead(200).end('{}'), 20);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await ctx.sandbox.addWebhookEndpoint({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await ctx?.close();
  });

  test('a call of the due work waits for the pass under way and the next, not for the stream of changes to end', async () => {
    // What the sandbox does after each committed change (its kick): a customer created, then the due work asked for,
    // every 10 ms for 2 s. Each call's wait is recorded.
    const headers = { authorization: `Bearer ${ctx.sandbox.keys.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' };
    const streamMs = 2_000;
    const begun = Date.now();
    const waits: Promise<number>[] = [];
    let n = 0;
    while (Date.now() - begun < streamMs) {
      const res = await fetch(`${ctx.sandbox.url}/v1/customers`, { method: 'POST', headers, body: `email=stream-${n++}%40example.com` });
      assert.equal(res.status, 200);
      const asked = Date.now();
      waits.push(ctx.sandbox.runDueWork().then(() => Date.now() - asked));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const longest = Math.max(...(await Promise.all(waits)));
    // One shared pass that ran "once more" while calls kept coming ended only with the stream (about 2 s), and
    // every call's promise (each holding a reaction on it) waited for that end.
    assert.ok(longest < streamMs / 2, `a call waited ${longest} ms (${waits.length} calls over ${streamMs} ms)`);
    await ctx.sandbox.runDueWork();
    assert.equal(received, n, 'every event delivered, once');
  });
});
