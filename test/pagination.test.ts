// Pagination, ordering and search of GET /api/v1/users/.
// Each test uses its own API client, so counts are exact.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertProblem, BASE_URL, setupTestApp, type TestContext, type TestResponse } from './helpers.ts';

let t: TestContext;

before(async () => {
  t = await setupTestApp();
});
after(() => t.close());

const LIST = '/api/v1/users/';

interface User {
  id: string;
  created_at: string;
  custom_properties: { external_id: string | null };
}

/** Creates `n` users, the clock moving 1 s between them (so the last one is the newest); returns them oldest first. */
async function createUsers(token: string, n: number, externalId: (i: number) => string | null = () => null): Promise<User[]> {
  const users: User[] = [];
  for (let i = 0; i < n; i++) {
    t.clock.advance(1_000);
    const res = await t.call('POST', LIST, { token, body: { custom_properties: { external_id: externalId(i) } } });
    assert.equal(res.status, 201, res.text);
    users.push(res.body);
  }
  return users;
}

async function list(token: string, query = ''): Promise<TestResponse> {
  return t.call('GET', `${LIST}${query ? `?${query}` : ''}`, { token });
}

async function listOk(token: string, query = ''): Promise<{ count: number; next: string | null; previous: string | null; results: User[] }> {
  const res = await list(token, query);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** A link must be absolute on the public base URL and point at the list; returns its query parameters. */
function linkParams(link: string | null): URLSearchParams {
  assert.ok(link, 'a link is present');
  assert.ok(link.startsWith(`${BASE_URL}/`), `${link} starts with ${BASE_URL}`);
  const url = new URL(link);
  assert.equal(`${url.origin}${url.pathname}`, `${BASE_URL}${LIST}`);
  return url.searchParams;
}

/** Follows an absolute link through the API. */
function follow(token: string, link: string): Promise<TestResponse> {
  return t.call('GET', link.slice(BASE_URL.length), { token });
}

const ids = (users: { id: string }[]) => users.map((u) => u.id);
const newestFirst = (users: User[]) => ids([...users].reverse());

describe('page and page_size', () => {
  test('defaults: page 1, 20 per page; next/previous link the neighbouring pages', async () => {
    const { token } = await t.newClient();
    const users = await createUsers(token, 25);

    const first = await listOk(token);
    assert.equal(first.count, 25);
    assert.deepEqual(ids(first.results), newestFirst(users).slice(0, 20));
    assert.equal(first.previous, null);
    assert.equal(first.next, `${BASE_URL}${LIST}?page=2`);

    const second = await follow(token, first.next as string);
    assert.equal(second.status, 200);
    assert.equal(second.body.count, 25);
    assert.deepEqual(ids(second.body.results), newestFirst(users).slice(20));
    assert.equal(second.body.next, null);
    assert.equal(second.body.previous, `${BASE_URL}${LIST}?page=1`);

    const back = await follow(token, second.body.previous);
    assert.equal(back.status, 200);
    assert.deepEqual(back.body.results, first.results);

    const explicit = await listOk(token, 'page=1&page_size=20');
    assert.equal(explicit.count, 25);
    assert.deepEqual(explicit.results, first.results, 'explicit defaults answer the same page');
    const next = linkParams(explicit.next);
    assert.equal(next.get('page'), '2');
    assert.equal(next.get('page_size'), '20');
  });

  test('page_size up to 100; pages hold exactly page_size results except the last', async () => {
    const { token } = await t.newClient();
    const users = await createUsers(token, 7);
    const all = newestFirst(users);
    for (const pageSize of [1, 3, 7, 100]) {
      const seen: string[] = [];
      const pages = Math.ceil(7 / pageSize);
      for (let page = 1; page <= pages; page++) {
        const body = await listOk(token, `page=${page}&page_size=${pageSize}`);
        assert.equal(body.count, 7);
        assert.equal(body.results.length, page < pages ? pageSize : 7 - (pages - 1) * pageSize, `page ${page} of size ${pageSize}`);
        assert.equal(body.next === null, page === pages, `next of page ${page}/${pages}`);
        assert.equal(body.previous === null, page === 1, `previous of page ${page}/${pages}`);
        seen.push(...ids(body.results));
      }
      assert.deepEqual(seen, all, `page_size ${pageSize} walks every user once, newest first`);
    }
  });

  for (const field of ['page', 'page_size']) {
    const bad = field === 'page' ? ['0', '-1', 'abc', '1.5', '', '1000001'] : ['0', '-1', '101', 'abc', '1.5', ''];
    for (const value of bad) {
      test(`${field}=${JSON.stringify(value)} is 400 validation_error naming ${field}`, async () => {
        const { token } = await t.newClient();
        await createUsers(token, 1);
        const res = await list(token, `${field}=${encodeURIComponent(value)}`);
        assertProblem(res, 400, 'validation_error');
        assert.deepEqual(
          res.body.errors.map((e: { field: string }) => e.field),
          [field],
        );
      });
    }
  }

  test('both parameters bad: both are named', async () => {
    const { token } = await t.newClient();
    const res = await list(token, 'page=0&page_size=101');
    assertProblem(res, 400, 'validation_error');
    assert.deepEqual(res.body.errors.map((e: { field: string }) => e.field).sort(), ['page', 'page_size']);
  });

  test('a page past the last is 404 not_found', async () => {
    const { token } = await t.newClient();
    await createUsers(token, 3);
    assert.equal((await listOk(token, 'page=2&page_size=2')).results.length, 1);
    assertProblem(await list(token, 'page=3&page_size=2'), 404, 'not_found');
    assertProblem(await list(token, 'page=2'), 404, 'not_found');
    assertProblem(await list(token, 'page=1000000'), 404, 'not_found');
  });

  test('page 1 of an empty list is 200 with count 0; page 2 is 404', async () => {
    const { token } = await t.newClient();
    assert.deepEqual(await listOk(token), { count: 0, next: null, previous: null, results: [] });
    assert.deepEqual(await listOk(token, 'page=1&page_size=5'), { count: 0, next: null, previous: null, results: [] });
    assertProblem(await list(token, 'page=2'), 404, 'not_found');
  });

  test('links keep the other query parameters (search, page_size)', async () => {
    const { token } = await t.newClient();
    // Two matches for one search: the user with that id, and a newer user whose external id is that id.
    const [target] = await createUsers(token, 1);
    assert.ok(target);
    const [holder] = await createUsers(token, 1, () => target.id);
    assert.ok(holder);
    await createUsers(token, 2);

    const first = await listOk(token, `search=${target.id}&page_size=1`);
    assert.equal(first.count, 2);
    assert.deepEqual(ids(first.results), [holder.id]);
    assert.equal(first.previous, null);
    const next = linkParams(first.next);
    assert.equal(next.get('search'), target.id);
    assert.equal(next.get('page_size'), '1');
    assert.equal(next.get('page'), '2');
    assert.deepEqual([...next.keys()].sort(), ['page', 'page_size', 'search']);

    const second = await follow(token, first.next as string);
    assert.equal(second.status, 200);
    assert.equal(second.body.count, 2);
    assert.deepEqual(ids(second.body.results), [target.id]);
    assert.equal(second.body.next, null);
    const previous = linkParams(second.body.previous);
    assert.equal(previous.get('search'), target.id);
    assert.equal(previous.get('page_size'), '1');
    assert.equal(previous.get('page'), '1');
    assert.deepEqual([...previous.keys()].sort(), ['page', 'page_size', 'search']);
    const back = await follow(token, second.body.previous);
    assert.equal(back.status, 200);
    assert.deepEqual(back.body, first);
  });
});

describe('ordering', () => {
  test('newest first, across pages', async () => {
    const { token } = await t.newClient();
    const users = await createUsers(token, 9);
    const seen: User[] = [];
    for (let page = 1; page <= 3; page++) seen.push(...(await listOk(token, `page=${page}&page_size=4`)).results);
    assert.deepEqual(ids(seen), newestFirst(users));
    for (let i = 1; i < seen.length; i++) {
      assert.ok(Date.parse((seen[i - 1] as User).created_at) > Date.parse((seen[i] as User).created_at), 'strictly newer first');
    }
  });

  test('an updated user keeps its place (ordered by creation, not update)', async () => {
    const { token } = await t.newClient();
    const users = await createUsers(token, 3);
    t.clock.advance(1_000);
    const oldest = users[0] as User;
    assert.equal((await t.call('PATCH', `${LIST}${oldest.id}/`, { token, body: { locale: 'de' } })).status, 200);
    assert.deepEqual(ids((await listOk(token)).results), newestFirst(users));
  });
});

describe('search', () => {
  test('exact match on the id', async () => {
    const { token } = await t.newClient();
    const users = await createUsers(token, 3, (i) => `ext-${i}`);
    const target = users[1] as User;
    const found = await listOk(token, `search=${target.id}`);
    assert.equal(found.count, 1);
    assert.deepEqual(ids(found.results), [target.id]);
    assert.equal(found.next, null);
    assert.equal(found.previous, null);
    // The same id in upper case is the same UUID.
    assert.deepEqual(ids((await listOk(token, `search=${target.id.toUpperCase()}`)).results), [target.id]);
  });

  test('exact match on the external id', async () => {
    const { token } = await t.newClient();
    const users = await createUsers(token, 3, (i) => ['alpha', 'alphabet', 'beta'][i] ?? null);
    const found = await listOk(token, 'search=alpha');
    assert.equal(found.count, 1);
    assert.deepEqual(ids(found.results), [(users[0] as User).id]);
  });

  test('no prefix, substring or case-insensitive matches', async () => {
    const { token } = await t.newClient();
    const users = await createUsers(token, 2, (i) => ['customer-12345', 'Mixed-Case'][i] ?? null);
    const id = (users[0] as User).id;
    for (const search of [
      'customer',
      'customer-1234',
      '12345',
      'ustomer-12345',
      'customer-123456',
      'mixed-case',
      'MIXED-CASE',
      id.slice(0, 8),
      id.slice(0, -1),
      id.slice(1),
      '%',
      '_',
      '*',
    ]) {
      const res = await listOk(token, `search=${encodeURIComponent(search)}`);
      assert.equal(res.count, 0, `search=${search} matched ${JSON.stringify(ids(res.results))}`);
      assert.deepEqual(res.results, []);
    }
  });

  test('a non-UUID search only matches external ids (even spellings PostgreSQL would read as the id)', async () => {
    const { token } = await t.newClient();
    const [user] = await createUsers(token, 1, () => 'plain');
    assert.ok(user);
    for (const spelling of [user.id.replaceAll('-', ''), `{${user.id}}`, ` ${user.id}x`]) {
      assert.equal((await listOk(token, `search=${encodeURIComponent(spelling)}`)).count, 0, spelling);
    }
    // …but it does match a user whose external id is that string.
    const hyphenless = user.id.replaceAll('-', '');
    const [holder] = await createUsers(token, 1, () => hyphenless);
    assert.ok(holder);
    const found = await listOk(token, `search=${hyphenless}`);
    assert.deepEqual(ids(found.results), [holder.id]);
  });

  test('a UUID search matches the user with that id and a user with that external id', async () => {
    const { token } = await t.newClient();
    const [target] = await createUsers(token, 1);
    assert.ok(target);
    const [holder] = await createUsers(token, 1, () => target.id);
    assert.ok(holder);
    await createUsers(token, 2);
    const found = await listOk(token, `search=${target.id}`);
    assert.equal(found.count, 2);
    assert.deepEqual(ids(found.results), [holder.id, target.id], 'newest first');
  });

  test("search never reaches another client's users", async () => {
    const a = await t.newClient();
    const b = await t.newClient();
    const [theirs] = await createUsers(b.token, 1, () => 'shared-ext');
    assert.ok(theirs);
    assert.equal((await listOk(a.token, `search=${theirs.id}`)).count, 0);
    assert.equal((await listOk(a.token, 'search=shared-ext')).count, 0);
    const [mine] = await createUsers(a.token, 1, () => 'shared-ext');
    assert.ok(mine);
    assert.deepEqual(ids((await listOk(a.token, 'search=shared-ext')).results), [mine.id]);
  });
});

describe('deleted users', () => {
  test('never appear: not in count, results, pages or search', async () => {
    const { token } = await t.newClient();
    const users = await createUsers(token, 6, (i) => `del-${i}`);
    const deleted = [users[0], users[2], users[5]] as User[];
    for (const user of deleted) assert.equal((await t.call('DELETE', `${LIST}${user.id}/`, { token })).status, 204);
    const live = users.filter((u) => !deleted.includes(u));

    const all = await listOk(token);
    assert.equal(all.count, 3);
    assert.deepEqual(ids(all.results), newestFirst(live));

    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const body = await listOk(token, `page=${page}&page_size=1`);
      assert.equal(body.count, 3);
      seen.push(...ids(body.results));
    }
    assert.deepEqual(seen, newestFirst(live));
    assertProblem(await list(token, 'page=4&page_size=1'), 404, 'not_found');
    assertProblem(await list(token, 'page=2&page_size=3'), 404, 'not_found');

    for (const user of deleted) {
      assert.equal((await listOk(token, `search=${user.id}`)).count, 0);
      assert.equal((await listOk(token, `search=${user.custom_properties.external_id}`)).count, 0);
    }
  });

  test('a client whose users are all deleted has an empty first page', async () => {
    const { token } = await t.newClient();
    const users = await createUsers(token, 2);
    for (const user of users) assert.equal((await t.call('DELETE', `${LIST}${user.id}/`, { token })).status, 204);
    assert.deepEqual(await listOk(token), { count: 0, next: null, previous: null, results: [] });
    assertProblem(await list(token, 'page=2&page_size=1'), 404, 'not_found');
  });

  test('an external id freed by deletion finds only the new user', async () => {
    const { token } = await t.newClient();
    const [old] = await createUsers(token, 1, () => 'reused');
    assert.ok(old);
    assert.equal((await t.call('DELETE', `${LIST}${old.id}/`, { token })).status, 204);
    const [fresh] = await createUsers(token, 1, () => 'reused');
    assert.ok(fresh);
    assert.deepEqual(ids((await listOk(token, 'search=reused')).results), [fresh.id]);
  });
});
