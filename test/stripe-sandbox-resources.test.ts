// Rules of the Stripe sandbox that have their own home since the engine was
// split into one file per resource: what a charge attempt does by card
// behaviour (charges.ts, a pure table, tested as properties) and how the
// resource files read objects (reads.ts: a deleted customer is missing to
// every operation that names it, through the HTTP API).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { CardBehaviour } from '../src/sandbox/stripe/cards.ts';
import { chargeOutcome } from '../src/sandbox/stripe/charges.ts';
import { setupTestApp, type TestContext } from './helpers.ts';

const BEHAVIOURS: CardBehaviour[] = ['succeeds', 'authenticate_unless_set_up', 'authenticate_always', 'insufficient_funds', 'charge_declined', 'declined'];
const ALWAYS_DECLINED: Record<string, string> = { insufficient_funds: 'insufficient_funds', charge_declined: 'generic_decline', declined: 'generic_decline' };

const attempt = fc.record({
  behaviour: fc.constantFrom(...BEHAVIOURS),
  setUpOffSession: fc.boolean(),
  offSession: fc.boolean(),
  authenticated: fc.boolean(),
});

describe('charge outcomes by card behaviour (charges.ts)', () => {
  test('off-session nobody can authenticate: an attempt that needs it is declined with authentication_required, never left waiting', () => {
    fc.assert(
      fc.property(attempt, ({ behaviour, setUpOffSession, authenticated }) => {
        const outcome = chargeOutcome({ behaviour, setUpOffSession }, { offSession: true, authenticated });
        assert.notEqual(outcome.kind, 'needs_authentication');
        if (outcome.kind === 'declined' && !(behaviour in ALWAYS_DECLINED)) {
          assert.equal(outcome.code, 'authentication_required');
          assert.equal(outcome.declineCode, 'authentication_required');
        }
      }),
    );
  });

  test('a declining card is declined whatever the mode, with card_declined and its decline code', () => {
    fc.assert(
      fc.property(attempt, ({ behaviour, setUpOffSession, offSession, authenticated }) => {
        const outcome = chargeOutcome({ behaviour, setUpOffSession }, { offSession, authenticated });
        const declineCode = ALWAYS_DECLINED[behaviour];
        if (declineCode === undefined) return;
        assert.deepEqual({ kind: outcome.kind, code: outcome.kind === 'declined' ? outcome.code : null }, { kind: 'declined', code: 'card_declined' });
        assert.equal(outcome.kind === 'declined' && outcome.declineCode, declineCode);
      }),
    );
  });

  test('once the customer has passed 3-D Secure, every card that is not a declining one succeeds', () => {
    fc.assert(
      fc.property(attempt, ({ behaviour, setUpOffSession, offSession }) => {
        fc.pre(!(behaviour in ALWAYS_DECLINED));
        assert.deepEqual(chargeOutcome({ behaviour, setUpOffSession }, { offSession, authenticated: true }), { kind: 'succeeds' });
      }),
    );
  });

  test('the Stripe test cards, attempt by attempt', () => {
    const cases: [CardBehaviour, { setUpOffSession: boolean; offSession: boolean }, string][] = [
      ['succeeds', { setUpOffSession: false, offSession: true }, 'succeeds'],
      ['succeeds', { setUpOffSession: false, offSession: false }, 'succeeds'],
      // 4000002500003155: on-session it asks for authentication; off-session it is fine once set up for it.
      ['authenticate_unless_set_up', { setUpOffSession: false, offSession: false }, 'needs_authentication'],
      ['authenticate_unless_set_up', { setUpOffSession: true, offSession: false }, 'needs_authentication'],
      ['authenticate_unless_set_up', { setUpOffSession: true, offSession: true }, 'succeeds'],
      ['authenticate_unless_set_up', { setUpOffSession: false, offSession: true }, 'declined'],
      // 4000002760003184: every payment asks, even one set up off-session.
      ['authenticate_always', { setUpOffSession: true, offSession: false }, 'needs_authentication'],
      ['authenticate_always', { setUpOffSession: true, offSession: true }, 'declined'],
    ];
    for (const [behaviour, { setUpOffSession, offSession }, kind] of cases) {
      assert.equal(
        chargeOutcome({ behaviour, setUpOffSession }, { offSession, authenticated: false }).kind,
        kind,
        `${behaviour} ${JSON.stringify({ setUpOffSession, offSession })}`,
      );
    }
  });
});

describe('a deleted customer (reads.ts)', () => {
  let t: TestContext;
  before(async () => {
    t = await setupTestApp();
  });
  after(() => t?.close());

  async function api(method: string, path: string, form: [string, string][] = []) {
    const body = new URLSearchParams(form).toString();
    const withBody = method === 'POST';
    const res = await fetch(`${t.sandbox.url}${path}${!withBody && body ? `?${body}` : ''}`, {
      method,
      headers: { authorization: `Bearer ${t.sandbox.keys.secretKey}`, ...(withBody ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(withBody ? { body } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: Stripe JSON read by key
    return { status: res.status, body: (await res.json()) as any };
  }

  test('retrieving it answers the deleted stub; every operation that names it answers resource_missing, 404 by URL and 400 by parameter', async () => {
    const created = await api('POST', '/v1/customers', [['description', 'to be deleted']]);
    assert.equal(created.status, 200);
    const id = created.body.id as string;
    assert.deepEqual((await api('DELETE', `/v1/customers/${id}`)).body, { id, object: 'customer', deleted: true });

    assert.deepEqual((await api('GET', `/v1/customers/${id}`)).body, { id, object: 'customer', deleted: true });
    for (const [method, path] of [
      ['POST', `/v1/customers/${id}`],
      ['DELETE', `/v1/customers/${id}`],
      ['GET', `/v1/customers/${id}/payment_methods`],
    ] as const) {
      const res = await api(method, path);
      assert.equal(res.status, 404, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'resource_missing');
      assert.equal(res.body.error.param, 'id');
    }
    for (const [path, form] of [
      ['/v1/payment_methods/pm_card_visa/attach', [['customer', id]]],
      ['/v1/setup_intents', [['customer', id]]],
      [
        '/v1/payment_intents',
        [
          ['customer', id],
          ['amount', '500'],
          ['currency', 'eur'],
        ],
      ],
    ] as [string, [string, string][]][]) {
      const res = await api('POST', path, form);
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'resource_missing');
      assert.equal(res.body.error.param, 'customer');
    }
    const listed = await api('GET', '/v1/payment_methods', [['customer', id]]);
    assert.equal(listed.status, 400);
    assert.equal(listed.body.error.param, 'customer');
  });
});
