// Property-based tests of users: the paginated list and tenant isolation.
// Every run makes fresh API clients, so runs share no state.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { assertProblem, BASE_URL, setupTestApp, type TestContext, type TestResponse } from './helpers.ts';

let t: TestContext;

before(async () => {
  t = await setupTestApp();
});
after(() => t.close());

const LIST = '/api/v1/users/';
const NUM_RUNS = 25;

interface UserBody {
  id: string;
  email: string | null;
  locale: string;
  custom_properties: { external_id: string | null };
  created_at: string;
}

describe('pagination walk', () => {
  test('following next returns every live user exactly once, newest first, with a consistent count', async () => {
    const scenario = fc.integer({ min: 0, max: 45 }).chain((n) =>
      fc.record({
        n: fc.constant(n),
        // Small page sizes make long walks; any size up to 100 is allowed.
        pageSize: fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 100 })),
        deleted: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
        // Clock steps before each creation; 0 gives users the same created_at.
        gaps: fc.array(fc.constantFrom(0, 0, 1, 1_000), { minLength: n, maxLength: n }),
      }),
    );

    await fc.assert(
      fc.asyncProperty(scenario, async ({ n, pageSize, deleted, gaps }) => {
        const { token } = await t.newClient();
        const created: UserBody[] = [];
        for (let i = 0; i < n; i++) {
          t.clock.advance(gaps[i] ?? 0);
          const res = await t.call('POST', LIST, { token, body: { custom_properties: { external_id: `ext-${i}` } } });
          assert.equal(res.status, 201, res.text);
          created.push(res.body);
        }
        const live = new Set<string>();
        for (const [i, user] of created.entries()) {
          if (deleted[i]) assert.equal((await t.call('DELETE', `${LIST}${user.id}/`, { token })).status, 204);
          else live.add(user.id);
        }

        const expectedPages = Math.max(1, Math.ceil(live.size / pageSize));
        const seen: UserBody[] = [];
        let url: string | null = `${LIST}?page_size=${pageSize}`;
        let pages = 0;
        while (url !== null) {
          pages++;
          assert.ok(pages <= expectedPages, `more than ${expectedPages} pages`);
          const res: TestResponse = await t.call('GET', url, { token });
          assert.equal(res.status, 200, res.text);
          const body = res.body as { count: number; next: string | null; previous: string | null; results: UserBody[] };
          assert.equal(body.count, live.size, `count on page ${pages}`);
          assert.equal(body.results.length, pages < expectedPages ? pageSize : live.size - (expectedPages - 1) * pageSize, `size of page ${pages}`);
          assert.equal(body.previous === null, pages === 1, `previous on page ${pages}`);
          if (body.previous !== null) assert.ok(body.previous.startsWith(`${BASE_URL}${LIST}?`), body.previous);
          seen.push(...body.results);
          if (body.next !== null) {
            assert.ok(body.next.startsWith(`${BASE_URL}${LIST}?`), body.next);
            assert.equal(new URL(body.next).searchParams.get('page_size'), String(pageSize), 'next keeps page_size');
            url = body.next.slice(BASE_URL.length);
          } else {
            url = null;
          }
        }
        assert.equal(pages, expectedPages);

        const seenIds = seen.map((u) => u.id);
        assert.equal(new Set(seenIds).size, seenIds.length, 'no user twice');
        assert.deepEqual([...seenIds].sort(), [...live].sort(), 'exactly the live users');
        for (let i = 1; i < seen.length; i++) {
          const newer = Date.parse((seen[i - 1] as UserBody).created_at);
          const older = Date.parse((seen[i] as UserBody).created_at);
          assert.ok(newer >= older, 'newest first');
        }
        // Past the last page is 404, except page 1 (an empty first page).
        const past = await t.call('GET', `${LIST}?page_size=${pageSize}&page=${expectedPages + 1}`, { token });
        assertProblem(past, 404, 'not_found');
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

// ---------------------------------------------------------------------------
// Isolation between clients: a model of who owns what, checked after every step.

type Op =
  | { kind: 'create'; actor: number; ext: number }
  | { kind: 'get' | 'delete' | 'getBilling'; actor: number; target: number }
  | { kind: 'patch'; actor: number; target: number; locale: 'en' | 'de' }
  | { kind: 'putBilling'; actor: number; target: number; firstName: string }
  | { kind: 'list'; actor: number }
  | { kind: 'search'; actor: number; ext: number }
  | { kind: 'searchId'; actor: number; target: number };

interface ModelUser {
  id: string;
  owner: number;
  deleted: boolean;
  email: string | null;
  locale: string;
  externalId: string;
  firstName: string | null;
}

const opArb = (clients: number): fc.Arbitrary<Op> => {
  const actor = fc.nat({ max: clients - 1 });
  const target = fc.nat({ max: 1_000 });
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('create' as const), actor, ext: fc.nat({ max: 3 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('get' as const, 'delete' as const, 'getBilling' as const), actor, target }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('patch' as const), actor, target, locale: fc.constantFrom('en' as const, 'de' as const) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('putBilling' as const), actor, target, firstName: fc.constantFrom('Ada', 'Eve', 'Mallory') }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('list' as const), actor }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('search' as const), actor, ext: fc.nat({ max: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('searchId' as const), actor, target }) },
  );
};

const scenarioArb = fc
  .integer({ min: 2, max: 3 })
  .chain((clients) => fc.record({ clients: fc.constant(clients), ops: fc.array(opArb(clients), { minLength: 1, maxLength: 30 }) }));

describe('isolation between clients', () => {
  test('a client never sees, changes or deletes another client’s user, and lists only its own', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ clients, ops }) => {
        const created: { clientId: string; token: string }[] = [];
        for (let i = 0; i < clients; i++) created.push(await t.newClient());
        const token = (actor: number) => (created[actor] as { token: string }).token;
        const users: ModelUser[] = [];
        let step = 0;

        // The detail every "no such user" answer carries.
        const unknown = await t.call('GET', `${LIST}${randomUUID()}/`, { token: token(0) });
        assertProblem(unknown, 404, 'not_found');
        const notFound = (res: TestResponse, what: string) => {
          assertProblem(res, 404, 'not_found');
          assert.equal(res.body.detail, unknown.body.detail, `${what}: same answer as an unknown id`);
        };
        /** The target user (any client's, live or deleted), or an unknown id while there are none. */
        const pick = (target: number): ModelUser | undefined => users[target % Math.max(users.length, 1)];
        const usable = (user: ModelUser | undefined, actor: number): user is ModelUser => user !== undefined && user.owner === actor && !user.deleted;
        const expectUser = (body: UserBody, user: ModelUser) =>
          assert.deepEqual(
            { id: body.id, email: body.email, locale: body.locale, external_id: body.custom_properties.external_id },
            { id: user.id, email: user.email, locale: user.locale, external_id: user.externalId },
          );
        const expectList = async (actor: number) => {
          const res = await t.call('GET', `${LIST}?page_size=100`, { token: token(actor) });
          assert.equal(res.status, 200, res.text);
          const own = users.filter((u) => u.owner === actor && !u.deleted);
          assert.equal(res.body.count, own.length, `client ${actor} count`);
          assert.deepEqual(res.body.results.map((u: UserBody) => u.id).sort(), own.map((u) => u.id).sort(), `client ${actor} lists exactly its live users`);
        };

        for (const op of ops) {
          step++;
          const what = `step ${step} ${JSON.stringify(op)}`;
          const actorToken = token(op.actor);
          switch (op.kind) {
            case 'create': {
              const externalId = `ext-${op.ext}`;
              const email = `c${op.actor}-s${step}@example.com`;
              const res = await t.call('POST', LIST, { token: actorToken, body: { email, custom_properties: { external_id: externalId } } });
              // External ids are unique among a client's live users only: other clients may reuse them.
              if (users.some((u) => u.owner === op.actor && !u.deleted && u.externalId === externalId)) {
                assertProblem(res, 409, 'conflict');
              } else {
                assert.equal(res.status, 201, `${what}: ${res.text}`);
                users.push({ id: res.body.id, owner: op.actor, deleted: false, email, locale: 'en', externalId, firstName: null });
              }
              break;
            }
            case 'get': {
              const user = pick(op.target);
              const res = await t.call('GET', `${LIST}${user?.id ?? randomUUID()}/`, { token: actorToken });
              if (usable(user, op.actor)) {
                assert.equal(res.status, 200, `${what}: ${res.text}`);
                expectUser(res.body, user);
              } else notFound(res, what);
              break;
            }
            case 'patch': {
              const user = pick(op.target);
              const email = `patched-by-${op.actor}-s${step}@example.com`;
              const res = await t.call('PATCH', `${LIST}${user?.id ?? randomUUID()}/`, { token: actorToken, body: { email, locale: op.locale } });
              if (usable(user, op.actor)) {
                assert.equal(res.status, 200, `${what}: ${res.text}`);
                user.email = email;
                user.locale = op.locale;
                expectUser(res.body, user);
              } else notFound(res, what);
              break;
            }
            case 'delete': {
              const user = pick(op.target);
              const res = await t.call('DELETE', `${LIST}${user?.id ?? randomUUID()}/`, { token: actorToken });
              if (usable(user, op.actor)) {
                assert.equal(res.status, 204, `${what}: ${res.text}`);
                user.deleted = true;
              } else notFound(res, what);
              break;
            }
            case 'getBilling': {
              const user = pick(op.target);
              const res = await t.call('GET', `${LIST}${user?.id ?? randomUUID()}/billing-details/`, { token: actorToken });
              if (usable(user, op.actor)) {
                assert.equal(res.status, 200, `${what}: ${res.text}`);
                assert.equal(res.body.first_name, user.firstName);
              } else notFound(res, what);
              break;
            }
            case 'putBilling': {
              const user = pick(op.target);
              const res = await t.call('PUT', `${LIST}${user?.id ?? randomUUID()}/billing-details/`, {
                token: actorToken,
                body: { first_name: op.firstName, last_name: `Client${op.actor}`, country: 'DE' },
              });
              if (usable(user, op.actor)) {
                assert.equal(res.status, 200, `${what}: ${res.text}`);
                assert.equal(res.body.first_name, op.firstName);
                user.firstName = op.firstName;
              } else notFound(res, what);
              break;
            }
            case 'list':
              await expectList(op.actor);
              break;
            case 'search': {
              const res = await t.call('GET', `${LIST}?search=ext-${op.ext}`, { token: actorToken });
              assert.equal(res.status, 200, res.text);
              const own = users.filter((u) => u.owner === op.actor && !u.deleted && u.externalId === `ext-${op.ext}`);
              assert.deepEqual(
                res.body.results.map((u: UserBody) => u.id),
                own.map((u) => u.id),
                `${what}: only the client's own live user`,
              );
              break;
            }
            case 'searchId': {
              const user = pick(op.target);
              const res = await t.call('GET', `${LIST}?search=${user?.id ?? randomUUID()}`, { token: actorToken });
              assert.equal(res.status, 200, res.text);
              assert.deepEqual(
                res.body.results.map((u: UserBody) => u.id),
                usable(user, op.actor) ? [user.id] : [],
                `${what}: only the client's own live user`,
              );
              break;
            }
          }
        }

        // Finally every client sees exactly its own live users, unchanged by the others.
        for (let actor = 0; actor < clients; actor++) {
          await expectList(actor);
          for (const user of users) {
            const { id } = user;
            const res = await t.call('GET', `${LIST}${id}/`, { token: token(actor) });
            if (usable(user, actor)) {
              assert.equal(res.status, 200, res.text);
              expectUser(res.body, user);
              const billing = await t.call('GET', `${LIST}${user.id}/billing-details/`, { token: token(actor) });
              assert.equal(billing.status, 200, billing.text);
              assert.equal(billing.body.first_name, user.firstName);
            } else notFound(res, `final GET of ${id} by client ${actor}`);
          }
        }
        // And the rows still belong to their owners (no write moved or touched another client's row).
        for (const user of users) {
          const { rows } = await t.db.query<{ client_id: string; deleted: boolean }>(
            'SELECT client_id, deleted_at IS NOT NULL AS deleted FROM users WHERE id = $1',
            [user.id],
          );
          assert.equal(rows[0]?.client_id, created[user.owner]?.clientId, `owner of ${user.id}`);
          assert.equal(rows[0]?.deleted, user.deleted, `deletion state of ${user.id}`);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
