// Authentication and tenant isolation of every protected route.
//
// One shared suite (protectedRouteSuite) runs against each entry of
// PROTECTED_ROUTES: the bearer-token checks for every route, and for routes that
// take an id also the ownership checks (another client's id, an unknown id and a
// malformed id all answer the same 404, and the other client's data is left
// unchanged). Modules that add routes add them to PROTECTED_ROUTES, with their
// own setup/ownerView/stored hooks when the resource is not a user.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { assertProblem, setupTestApp, type TestContext, type TestResponse } from './helpers.ts';
import { CARDS, connectCard } from './payments-support.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** An API client as the tests see it. */
export interface Client {
  clientId: string;
  token: string;
  jti: string;
}

export interface ProtectedRoute {
  method: HttpMethod;
  /** The request path; routes that act on one resource get its id (collection routes ignore it). */
  path: (id: string) => string;
  /** Whether the path names one resource: adds the ownership, unknown-id and malformed-id cases. */
  takesId: boolean;
  /** A valid request body, sent on every call (by the owner, by an intruder, with bad tokens). */
  body?: unknown;
  /** The status the owner gets with a valid token. */
  okStatus: number;
  /** Creates, as `owner`, a resource the route can act on and returns its id. Default: a user with billing details. */
  setup?: (t: TestContext, owner: Client) => Promise<string>;
  /** What the owner sees of the resource through the API. Default: the user and its billing details (both must answer 200). */
  ownerView?: (t: TestContext, owner: Client, id: string) => Promise<unknown>;
  /** Everything stored for a client that the route could change. Default: its users and billing details rows. */
  stored?: (t: TestContext, clientId: string) => Promise<unknown>;
}

const USERS = '/api/v1/users';

/** Every route that requires a bearer token. Later modules add theirs here. */
export const PROTECTED_ROUTES: ProtectedRoute[] = [
  { method: 'GET', path: () => `${USERS}/`, takesId: false, okStatus: 200 },
  { method: 'POST', path: () => `${USERS}/`, takesId: false, body: { email: 'new@example.com', locale: 'de' }, okStatus: 201 },
  { method: 'GET', path: (id) => `${USERS}/${id}/`, takesId: true, okStatus: 200 },
  {
    method: 'PATCH',
    path: (id) => `${USERS}/${id}/`,
    takesId: true,
    body: { email: 'intruder@example.com', locale: 'de', custom_properties: null },
    okStatus: 200,
  },
  { method: 'DELETE', path: (id) => `${USERS}/${id}/`, takesId: true, okStatus: 204 },
  { method: 'GET', path: (id) => `${USERS}/${id}/billing-details/`, takesId: true, okStatus: 200 },
  {
    method: 'PUT',
    path: (id) => `${USERS}/${id}/billing-details/`,
    takesId: true,
    body: { account_type: 'personal', first_name: 'Eve', last_name: 'Intruder', country: 'DE' },
    okStatus: 200,
  },
  { method: 'GET', path: (id) => `${USERS}/${id}/setup-intents/`, takesId: true, okStatus: 200, stored: paymentRows },
  {
    method: 'GET',
    path: (id) => `${USERS}/${id}/payment-methods/`,
    takesId: true,
    okStatus: 200,
    setup: userWithCard,
    ownerView: userAndPaymentMethodsView,
    stored: paymentRows,
  },
  {
    method: 'DELETE',
    path: (id) => `${USERS}/${id}/payment-methods/${methodOfUser.get(id) ?? 'pm_unknown'}/`,
    takesId: true,
    okStatus: 204,
    setup: userWithCard,
    ownerView: userAndPaymentMethodsView,
    stored: paymentRows,
  },
  {
    method: 'POST',
    path: (id) => `${USERS}/${id}/payment-methods/${methodOfUser.get(id) ?? 'pm_unknown'}/default/`,
    takesId: true,
    okStatus: 204,
    setup: userWithCard,
    ownerView: userAndPaymentMethodsView,
    stored: paymentRows,
  },
];

// ---------------------------------------------------------------------------
// Defaults for user-based routes

async function createUserWithBilling(t: TestContext, owner: Client): Promise<string> {
  const user = await t.call('POST', `${USERS}/`, {
    token: owner.token,
    body: { email: 'owner@example.com', locale: 'en', custom_properties: { external_id: `owner-${randomUUID()}` } },
  });
  assert.equal(user.status, 201, user.text);
  const billing = await t.call('PUT', `${USERS}/${user.body.id}/billing-details/`, {
    token: owner.token,
    body: { account_type: 'personal', first_name: 'Ada', last_name: 'Lovelace', country: 'GB' },
  });
  assert.equal(billing.status, 200, billing.text);
  return user.body.id;
}

async function userAndBillingView(t: TestContext, owner: Client, id: string): Promise<unknown> {
  const user = await t.call('GET', `${USERS}/${id}/`, { token: owner.token });
  assert.equal(user.status, 200, `the owner no longer sees its user: ${user.text}`);
  const billing = await t.call('GET', `${USERS}/${id}/billing-details/`, { token: owner.token });
  assert.equal(billing.status, 200, `the owner no longer sees its billing details: ${billing.text}`);
  return { user: user.body, billing: billing.body };
}

async function usersAndBillingRows(t: TestContext, clientId: string): Promise<unknown> {
  const users = await t.db.query('SELECT * FROM users WHERE client_id = $1 ORDER BY id', [clientId]);
  const billing = await t.db.query('SELECT * FROM billing_details WHERE client_id = $1 ORDER BY user_id', [clientId]);
  return { users: users.rows, billing: billing.rows };
}

// ---------------------------------------------------------------------------
// Payment-method routes: the id is the user's; the path adds that user's card
// (a mangled or unknown user id gets no card, and answers 404 for the user).

const methodOfUser = new Map<string, string>();

async function userWithCard(t: TestContext, owner: Client): Promise<string> {
  const userId = await createUserWithBilling(t, owner);
  const pm = await connectCard(t, { clientId: owner.clientId, token: owner.token, userId }, CARDS.visa);
  methodOfUser.set(userId, pm);
  return userId;
}

async function userAndPaymentMethodsView(t: TestContext, owner: Client, id: string): Promise<unknown> {
  const methods = await t.call('GET', `${USERS}/${id}/payment-methods/`, { token: owner.token });
  assert.equal(methods.status, 200, `the owner no longer sees its payment methods: ${methods.text}`);
  return { user: await userAndBillingView(t, owner, id), methods: methods.body };
}

async function paymentRows(t: TestContext, clientId: string): Promise<unknown> {
  const customers = await t.db.query('SELECT * FROM payment_customers WHERE client_id = $1 ORDER BY user_id', [clientId]);
  const methods = await t.db.query('SELECT * FROM payment_methods WHERE client_id = $1 ORDER BY id', [clientId]);
  return { users: await usersAndBillingRows(t, clientId), customers: customers.rows, methods: methods.rows };
}

// ---------------------------------------------------------------------------
// Helpers

let t: TestContext; // auth cache TTL 0: revocation and disabling take effect at once
let slow: TestContext; // the default auth cache TTL (2 s)

before(async () => {
  [t, slow] = await Promise.all([setupTestApp({ authCacheTtlMs: 0 }), setupTestApp()]);
});
after(async () => {
  await Promise.all([t?.close(), slow?.close()]);
});

function label(route: ProtectedRoute): string {
  return `${route.method} ${route.path(':id')}`;
}

function send(ctx: TestContext, route: ProtectedRoute, id: string, auth: { token?: string; authorization?: string }): Promise<TestResponse> {
  return ctx.call(route.method, route.path(id), {
    ...(auth.token !== undefined ? { token: auth.token } : {}),
    ...(auth.authorization !== undefined ? { headers: { authorization: auth.authorization } } : {}),
    ...(route.body !== undefined ? { body: route.body } : {}),
  });
}

/** 401 unauthorized problem with a Bearer challenge. */
function assertUnauthorized(res: TestResponse): void {
  assertProblem(res, 401, 'unauthorized');
  const challenge = res.headers['www-authenticate'];
  assert.equal(typeof challenge, 'string', 'WWW-Authenticate is present');
  assert.match(String(challenge), /^Bearer(\s|$)/);
}

function privateKeyOf(ctx: TestContext): KeyObject {
  const key = ctx.keys.privateKey;
  assert.ok(key, 'the harness has a private signing key');
  return key;
}

/** The claims the service issues for this client's token, as of the harness clock. */
function claimsOf(ctx: TestContext, client: Client): JWTPayload {
  return {
    iss: ctx.config.jwt.issuer,
    aud: ctx.config.jwt.audience,
    sub: client.clientId,
    jti: client.jti,
    iat: Math.floor(ctx.clock.now().getTime() / 1000),
  };
}

function signEdDSA(payload: JWTPayload, key: KeyObject): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' }).sign(key);
}

function without(payload: JWTPayload, claim: keyof JWTPayload): JWTPayload {
  const copy = { ...payload };
  delete copy[claim];
  return copy;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const otherEd25519Key = generateKeyPairSync('ed25519').privateKey;
const es256Key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

/** Polls every 250 ms until the call answers 401; fails if that takes more than `limitMs`. */
async function refusedWithin(call: () => Promise<TestResponse>, allowedBefore: number[], limitMs = 5_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const res = await call();
    const elapsed = performance.now() - started;
    if (res.status === 401) {
      assertUnauthorized(res);
      assert.ok(elapsed <= limitMs, `refused only after ${Math.round(elapsed)} ms`);
      return elapsed;
    }
    assert.ok(allowedBefore.includes(res.status), `unexpected ${res.status} while waiting for the refusal: ${res.text}`);
    assert.ok(elapsed <= limitMs, `still accepted (${res.status}) after ${Math.round(elapsed)} ms`);
    await sleep(250);
  }
}

// ---------------------------------------------------------------------------
// The shared suite

export function protectedRouteSuite(route: ProtectedRoute): void {
  const setup = route.setup ?? createUserWithBilling;
  const ownerView = route.ownerView ?? userAndBillingView;
  const stored = route.stored ?? usersAndBillingRows;

  describe(label(route), () => {
    /** A fresh owner and resource, and a check that a call is refused with 401 and changes nothing stored. */
    async function arrange(ctx: TestContext = t) {
      const owner = await ctx.newClient();
      const id = await setup(ctx, owner);
      return {
        owner,
        id,
        async refused(auth: { token?: string; authorization?: string }, message?: string) {
          const before = await stored(ctx, owner.clientId);
          const res = await send(ctx, route, id, auth);
          assertUnauthorized(res);
          assert.deepEqual(await stored(ctx, owner.clientId), before, `a refused ${label(route)} changed nothing${message ? ` (${message})` : ''}`);
        },
        /** The call succeeds on a fresh resource of the owner (a DELETE consumes its target). */
        async accepted(auth: { token?: string; authorization?: string }) {
          const res = await send(ctx, route, await setup(ctx, owner), auth);
          assert.equal(res.status, route.okStatus, res.text);
        },
      };
    }

    describe('authentication', () => {
      test(`control: the owner's token, and a token crafted with the same claims and key, get ${route.okStatus}`, async () => {
        const { owner, accepted } = await arrange();
        await accepted({ token: owner.token });
        await accepted({ token: await signEdDSA(claimsOf(t, owner), privateKeyOf(t)) });
      });

      test('no Authorization header is 401', async () => {
        const { refused } = await arrange();
        await refused({});
        await refused({ authorization: '' }, 'empty header');
      });

      test('a malformed Authorization header is 401', async () => {
        const { owner, refused } = await arrange();
        const headers = [
          'Bearer',
          'Bearer ',
          'Basic xyz',
          `Basic ${Buffer.from(`${owner.clientId}:secret`).toString('base64')}`,
          'Bearer garbage',
          'Bearer a.b.c',
          'Bearer ...',
          owner.token,
          `Token ${owner.token}`,
          `Bearer ${owner.token} extra`,
          `Bearer ${owner.token},${owner.token}`,
          `Bearer ${owner.token.split('.').slice(0, 2).join('.')}`,
        ];
        for (const authorization of headers) await refused({ authorization }, authorization.slice(0, 40));
      });

      test('alg none (unsecured JWT) is 401', async () => {
        const { owner, refused } = await arrange();
        const claims = claimsOf(t, owner);
        const unsecured = new UnsecuredJWT(claims).encode();
        await refused({ token: unsecured }, 'alg none, empty signature');
        // A genuine signature under a header that claims alg none.
        const signature = owner.token.split('.')[2];
        await refused({ token: `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.${signature}` }, 'alg none, kept signature');
        await refused({ token: `${b64({ alg: 'NONE' })}.${b64(claims)}.` }, 'alg NONE');
      });

      test('a token signed with another Ed25519 key is 401', async () => {
        const { owner, refused } = await arrange();
        await refused({ token: await signEdDSA(claimsOf(t, owner), otherEd25519Key) });
      });

      test('a valid token with its payload altered is 401', async () => {
        const { owner, refused } = await arrange();
        const other = await t.newClient();
        const [header, , signature] = owner.token.split('.');
        await refused({ token: `${header}.${b64({ ...claimsOf(t, owner), sub: other.clientId, jti: other.jti })}.${signature}` });
      });

      test('HS256 signed with the Ed25519 public key bytes (algorithm confusion) is 401', async () => {
        const { owner, refused } = await arrange();
        const publicKey = createPublicKey(privateKeyOf(t));
        const secrets: [string, Uint8Array][] = [
          ['PEM', Buffer.from(publicKey.export({ type: 'spki', format: 'pem' }))],
          ['DER', publicKey.export({ type: 'spki', format: 'der' })],
          ['raw', Buffer.from(String(publicKey.export({ format: 'jwk' }).x), 'base64url')],
        ];
        for (const [name, secret] of secrets) {
          const token = await new SignJWT(claimsOf(t, owner)).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(secret);
          await refused({ token }, `HS256 with the ${name} public key`);
        }
      });

      test('an algorithm other than EdDSA (ES256, validly signed) is 401', async () => {
        const { owner, refused } = await arrange();
        await refused({ token: await new SignJWT(claimsOf(t, owner)).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(es256Key) });
      });

      test('an expired token is 401 (after the 30 s clock tolerance)', async () => {
        // Its own app and clock: moving the clock must not race the other (concurrent) tests.
        const ctx = await setupTestApp({ authCacheTtlMs: 0 });
        try {
          const { owner, accepted, refused } = await arrange(ctx);
          const issued = await ctx.clients.issueToken(owner.clientId, { expiresInMs: 60_000 });
          await accepted({ token: issued.token });
          ctx.clock.advance(60_000 + 25_000); // expired, but within the tolerance
          await accepted({ token: issued.token });
          ctx.clock.advance(10_000); // 35 s past expiry
          await refused({ token: issued.token });
          await accepted({ token: owner.token }); // the client's token without expiry still works
        } finally {
          await ctx.close();
        }
      });

      test('a wrong issuer is 401', async () => {
        const { owner, refused } = await arrange();
        await refused({ token: await signEdDSA({ ...claimsOf(t, owner), iss: `${t.config.jwt.issuer}-other` }, privateKeyOf(t)) });
        await refused({ token: await signEdDSA(without(claimsOf(t, owner), 'iss'), privateKeyOf(t)) }, 'no iss');
      });

      test('a wrong audience is 401', async () => {
        const { owner, refused } = await arrange();
        await refused({ token: await signEdDSA({ ...claimsOf(t, owner), aud: `${t.config.jwt.audience}-other` }, privateKeyOf(t)) });
        await refused({ token: await signEdDSA({ ...claimsOf(t, owner), aud: ['someone-else'] }, privateKeyOf(t)) }, 'audience list');
        await refused({ token: await signEdDSA(without(claimsOf(t, owner), 'aud'), privateKeyOf(t)) }, 'no aud');
      });

      test('a token missing sub, jti or iat, or with a non-UUID sub, is 401', async () => {
        const { owner, refused } = await arrange();
        for (const claim of ['sub', 'jti', 'iat'] as const) {
          await refused({ token: await signEdDSA(without(claimsOf(t, owner), claim), privateKeyOf(t)) }, `no ${claim}`);
        }
        await refused({ token: await signEdDSA({ ...claimsOf(t, owner), sub: 'not-a-uuid' }, privateKeyOf(t)) }, 'sub not a UUID');
      });

      test('an unknown client is 401', async () => {
        const { owner, refused } = await arrange();
        await refused({ token: await signEdDSA({ ...claimsOf(t, owner), sub: randomUUID() }, privateKeyOf(t)) });
      });

      test("another client's token id under this client's subject is 401", async () => {
        const { owner, refused } = await arrange();
        const other = await t.newClient();
        await refused({ token: await signEdDSA({ ...claimsOf(t, owner), jti: other.jti }, privateKeyOf(t)) });
      });

      test('a validly signed token whose jti was never issued (so could never be revoked) is 401', async () => {
        const { owner, refused } = await arrange();
        await refused({ token: await signEdDSA({ ...claimsOf(t, owner), jti: randomUUID() }, privateKeyOf(t)) });
      });

      test('a revoked token is 401 at once with cache TTL 0; the client’s other tokens still work', async () => {
        const { owner, accepted, refused } = await arrange();
        const second = await t.clients.issueToken(owner.clientId);
        const revoked = owner.token;
        await accepted({ token: revoked });
        await t.clients.revokeToken(owner.jti);
        owner.token = second.token; // the owner sets up further resources with its other token
        await refused({ token: revoked });
        await accepted({ token: second.token });
      });

      test('a disabled client is 401 at once with cache TTL 0, with every token', async () => {
        const { owner, accepted, refused } = await arrange();
        const second = await t.clients.issueToken(owner.clientId);
        await accepted({ token: owner.token });
        await accepted({ token: second.token });
        await t.clients.disableClient(owner.clientId);
        await refused({ token: owner.token });
        await refused({ token: second.token });
      });
    });

    describe('with the default auth cache TTL', () => {
      test('a revoked token is refused within 5 s', async (node) => {
        assert.equal(slow.config.authCacheTtlMs, 2_000);
        const { owner, id, accepted } = await arrange(slow);
        await accepted({ token: owner.token }); // the credential check is now cached
        await slow.clients.revokeToken(owner.jti);
        const elapsed = await refusedWithin(() => send(slow, route, id, { token: owner.token }), [route.okStatus, 404]);
        node.diagnostic(`refused ${Math.round(elapsed)} ms after the change`);
      });

      test('a disabled client is refused within 5 s', async (node) => {
        const { owner, id, accepted } = await arrange(slow);
        await accepted({ token: owner.token });
        await slow.clients.disableClient(owner.clientId);
        const elapsed = await refusedWithin(() => send(slow, route, id, { token: owner.token }), [route.okStatus, 404]);
        node.diagnostic(`refused ${Math.round(elapsed)} ms after the change`);
      });
    });

    if (!route.takesId) return;

    describe('ownership', () => {
      test("another client's id is 404 like an unknown id, and the owner's data is unchanged", async () => {
        const { owner, id } = await arrange();
        const intruder = await t.newClient();
        const viewBefore = await ownerView(t, owner, id);
        const storedBefore = await stored(t, owner.clientId);

        const res = await send(t, route, id, { token: intruder.token });
        assertProblem(res, 404, 'not_found');
        assert.ok(!res.text.includes('owner@example.com') && !res.text.includes('Lovelace'), 'the answer reveals nothing of the resource');
        const unknown = await send(t, route, randomUUID(), { token: intruder.token });
        assertProblem(unknown, 404, 'not_found');
        assert.equal(res.body.detail, unknown.body.detail, 'indistinguishable from an unknown id');

        assert.deepEqual(await ownerView(t, owner, id), viewBefore, "the owner's view is unchanged");
        assert.deepEqual(await stored(t, owner.clientId), storedBefore, "the owner's stored data is unchanged");
        assert.equal((await send(t, route, await setup(t, owner), { token: owner.token })).status, route.okStatus, 'control: the owner may');
      });

      test('an unknown id is 404', async () => {
        const { owner } = await arrange();
        for (const id of [randomUUID(), '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']) {
          assertProblem(await send(t, route, id, { token: owner.token }), 404, 'not_found');
        }
      });

      test('a malformed id is 404 with the same detail as an unknown id', async () => {
        const { owner, id } = await arrange();
        const viewBefore = await ownerView(t, owner, id);
        const unknown = await send(t, route, randomUUID(), { token: owner.token });
        assertProblem(unknown, 404, 'not_found');
        const malformed = [
          'not-a-uuid',
          '12345',
          'null',
          id.replaceAll('-', ''), // PostgreSQL would accept these spellings of the real id
          `{${id}}`,
          `${id}0`,
          id.slice(0, -1),
          '%20',
          "1'%20OR%20'1'%3D'1",
          'x'.repeat(200),
        ];
        for (const bad of malformed) {
          const res = await send(t, route, bad, { token: owner.token });
          assert.equal(res.status, 404, `${bad.slice(0, 40)}: ${res.status} ${res.text.slice(0, 200)}`);
          assertProblem(res, 404, 'not_found');
          assert.equal(res.body.detail, unknown.body.detail, `${bad.slice(0, 40)} is indistinguishable from an unknown id`);
        }
        assert.deepEqual(await ownerView(t, owner, id), viewBefore, 'the real resource is untouched');
      });

      test('an over-long malformed id (201+ characters) is 404 with the same detail as an unknown id', async () => {
        const { owner } = await arrange();
        const unknown = await send(t, route, randomUUID(), { token: owner.token });
        for (const bad of ['x'.repeat(201), 'x'.repeat(1_000)]) {
          const res = await send(t, route, bad, { token: owner.token });
          assertProblem(res, 404, 'not_found');
          assert.equal(res.body.detail, unknown.body.detail);
        }
      });
    });
  });
}

// Every test makes its own clients and resources, so the routes and their cases run concurrently.
describe('protected routes', { concurrency: true }, () => {
  for (const route of PROTECTED_ROUTES) protectedRouteSuite(route);
});
