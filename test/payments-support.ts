// Steps the payment tests share: a user of a fresh client, a payment method
// connected the way a client app does it (setup intent from our API, confirmed
// through the sandbox's browser stand-in), and polling for webhook effects.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestContext } from './helpers.ts';

export const USERS = '/api/v1/users';

export const CARDS = {
  visa: '4242424242424242',
  mastercard: '5555555555554444',
  authenticateOnSetup: '4000002500003155',
  authenticateAlways: '4000002760003184',
  insufficientFunds: '4000000000009995',
  chargesFail: '4000000000000341',
  declined: '4000000000000002',
} as const;

export interface Owner {
  clientId: string;
  token: string;
  userId: string;
}

export async function newOwner(t: TestContext): Promise<Owner> {
  const client = await t.newClient();
  const user = await t.call('POST', `${USERS}/`, { token: client.token, body: { email: 'payer@example.com' } });
  assert.equal(user.status, 201, user.text);
  return { clientId: client.clientId, token: client.token, userId: user.body.id };
}

export async function newUser(t: TestContext, owner: Owner): Promise<string> {
  const user = await t.call('POST', `${USERS}/`, { token: owner.token, body: {} });
  assert.equal(user.status, 201, user.text);
  return user.body.id;
}

export async function setupIntent(t: TestContext, owner: Owner, pmType: 'card' | 'paypal' = 'card', userId = owner.userId) {
  const res = await t.call('GET', `${USERS}/${userId}/setup-intents/?pm_type=${pmType}`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; client_secret: string; status: string };
}

/**
 * Connects a card as a client app would: a setup intent from our API,
 * confirmed with the card through /sandbox/..., authenticated (approve) when
 * the card asks for it. Returns the payment method id.
 */
export async function connectCard(t: TestContext, owner: Owner, cardNumber: string, userId = owner.userId): Promise<string> {
  const intent = await setupIntent(t, owner, 'card', userId);
  let res = await t.call('POST', `/sandbox/setup_intents/${intent.id}/confirm`, { body: { client_secret: intent.client_secret, card_number: cardNumber } });
  assert.equal(res.status, 200, res.text);
  if (res.body.status === 'requires_action') {
    res = await t.call('POST', `/sandbox/setup_intents/${intent.id}/authenticate`, { body: { client_secret: intent.client_secret, outcome: 'approve' } });
    assert.equal(res.status, 200, res.text);
  }
  assert.equal(res.body.status, 'succeeded', res.text);
  return res.body.payment_method as string;
}

export async function connectPayPal(t: TestContext, owner: Owner, userId = owner.userId): Promise<string> {
  const intent = await setupIntent(t, owner, 'paypal', userId);
  const res = await t.call('POST', `/sandbox/setup_intents/${intent.id}/confirm`, {
    body: { client_secret: intent.client_secret, paypal: 'approve', paypal_email: 'buyer@example.com' },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'succeeded', res.text);
  return res.body.payment_method as string;
}

export async function listMethods(t: TestContext, owner: Owner, userId = owner.userId, query = '') {
  const res = await t.call('GET', `${USERS}/${userId}/payment-methods/${query}`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return res.body as { count: number; next: string | null; previous: string | null; results: { id: string; default: boolean; type: string }[] };
}

/** Polls until `check` returns a value (not undefined); fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 5_000): Promise<T> {
  const started = performance.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() - started > timeoutMs) assert.fail(`not within ${timeoutMs} ms: ${what}`);
    await sleep(25);
  }
}

/** A call to the sandbox's Stripe API with its secret key (what Stripe's dashboard or a client's SDK would see). */
export async function sandboxApi(
  t: TestContext,
  method: 'GET' | 'POST',
  path: string,
  form: [string, string][] = [],
): Promise<{ status: number; body: Record<string, unknown> & { id?: string } }> {
  const encoded = new URLSearchParams(form).toString();
  const res = await fetch(`${t.sandbox.url}${path}${method === 'GET' && encoded ? `?${encoded}` : ''}`, {
    method,
    headers: { authorization: `Bearer ${t.sandbox.keys.secretKey}`, ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(method === 'POST' ? { body: encoded } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The processor customer of one of our users. */
export async function customerOf(t: TestContext, userId: string): Promise<string> {
  const { rows } = await t.db.query<{ customer_id: string }>('SELECT customer_id FROM payment_customers WHERE user_id = $1', [userId]);
  assert.ok(rows[0], `user ${userId} has a processor customer`);
  return rows[0].customer_id;
}
