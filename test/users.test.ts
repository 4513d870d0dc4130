import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertProblem, setupTestApp, type TestContext } from './helpers.ts';

let t: TestContext;
let token: string;

before(async () => {
  t = await setupTestApp();
  ({ token } = await t.newClient());
});
after(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('create user', () => {
  test('201 with id, locale, email and external id under custom_properties', async () => {
    const res = await t.call('POST', '/api/v1/users/', {
      token,
      body: { email: 'ada@example.com', locale: 'de', custom_properties: { external_id: 'ext-1' } },
    });
    assert.equal(res.status, 201);
    assert.match(res.body.id, UUID);
    assert.equal(res.body.email, 'ada@example.com');
    assert.equal(res.body.locale, 'de');
    assert.deepEqual(res.body.custom_properties, { external_id: 'ext-1' });
    assert.equal(res.body.external_id, undefined, 'the reference create-response key is not used');
    assert.ok(Date.parse(res.body.created_at));
  });

  test('defaults: locale en, no email, external id null', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: {} });
    assert.equal(res.status, 201);
    assert.equal(res.body.locale, 'en');
    assert.equal(res.body.email, null);
    assert.deepEqual(res.body.custom_properties, { external_id: null });
  });

  test('validation names each bad field', async () => {
    const res = await t.call('POST', '/api/v1/users/', {
      token,
      body: { email: 'not-an-email', locale: 'fr', custom_properties: { external_id: 'x'.repeat(251) } },
    });
    assertProblem(res, 400, 'validation_error');
    const fields = res.body.errors.map((e: { field: string }) => e.field).sort();
    assert.deepEqual(fields, ['custom_properties.external_id', 'email', 'locale']);
  });

  test('unknown body field is 400', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'en', nickname: 'x' } });
    assertProblem(res, 400, 'validation_error');
    assert.deepEqual(res.body.errors, [{ field: 'nickname', message: 'is not an accepted field' }]);
  });

  test('wrong types are not coerced in bodies', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: { locale: 'en', email: 42 } });
    assertProblem(res, 400, 'validation_error');
    assert.equal(res.body.errors[0].field, 'email');
  });

  test('malformed JSON is 400', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: '{"locale":', headers: { 'content-type': 'application/json' } });
    assertProblem(res, 400, 'validation_error');
  });

  test('non-JSON body is 415', async () => {
    const res = await t.call('POST', '/api/v1/users/', { token, body: 'locale=en', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assertProblem(res, 415, 'unsupported_media_type');
  });

  test('external_id is unique among the client’s live users (409), free again after deletion, and per client', async () => {
    const first = await t.call('POST', '/api/v1/users/', { token, body: { custom_properties: { external_id: 'dup' } } });
    assert.equal(first.status, 201);
    const second = await t.call('POST', '/api/v1/users/', { token, body: { custom_properties: { external_id: 'dup' } } });
    assertProblem(second, 409, 'conflict');
    assert.equal(second.body.errors[0].field, 'custom_properties.external_id');
    const other = await t.newClient();
    const elsewhere = await t.call('POST', '/api/v1/users/', { token: other.token, body: { custom_properties: { external_id: 'dup' } } });
    assert.equal(elsewhere.status, 201);
    assert.equal((await t.call('DELETE', `/api/v1/users/${first.body.id}/`, { token })).status, 204);
    const again = await t.call('POST', '/api/v1/users/', { token, body: { custom_properties: { external_id: 'dup' } } });
    assert.equal(again.status, 201);
  });
});

describe('read, update, delete', () => {
  test('GET returns the user; PATCH changes only what is sent; custom_properties null clears the external id', async () => {
    const created = (await t.call('POST', '/api/v1/users/', { token, body: { email: 'a@example.com', custom_properties: { external_id: 'p-1' } } })).body;
    const got = await t.call('GET', `/api/v1/users/${created.id}/`, { token });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, created);

    t.clock.advance(1000);
    const patched = await t.call('PATCH', `/api/v1/users/${created.id}/`, { token, body: { locale: 'de' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.locale, 'de');
    assert.equal(patched.body.email, 'a@example.com');
    assert.deepEqual(patched.body.custom_properties, { external_id: 'p-1' });
    assert.ok(Date.parse(patched.body.updated_at) > Date.parse(created.updated_at));

    const cleared = await t.call('PATCH', `/api/v1/users/${created.id}/`, { token, body: { custom_properties: null, email: null } });
    assert.equal(cleared.status, 200);
    assert.deepEqual(cleared.body.custom_properties, { external_id: null });
    assert.equal(cleared.body.email, null);
  });

  test('PATCH validation: locale null or unknown is 400', async () => {
    const created = (await t.call('POST', '/api/v1/users/', { token, body: {} })).body;
    assertProblem(await t.call('PATCH', `/api/v1/users/${created.id}/`, { token, body: { locale: null } }), 400, 'validation_error');
    assertProblem(await t.call('PATCH', `/api/v1/users/${created.id}/`, { token, body: { locale: 'xx' } }), 400, 'validation_error');
  });

  test('PATCH to an external id another user has is 409', async () => {
    await t.call('POST', '/api/v1/users/', { token, body: { custom_properties: { external_id: 'taken' } } });
    const u = (await t.call('POST', '/api/v1/users/', { token, body: {} })).body;
    const res = await t.call('PATCH', `/api/v1/users/${u.id}/`, { token, body: { custom_properties: { external_id: 'taken' } } });
    assertProblem(res, 409, 'conflict');
  });

  test('DELETE is soft: 204, then 404 everywhere, the row is kept', async () => {
    const u = (await t.call('POST', '/api/v1/users/', { token, body: { custom_properties: { external_id: 'gone' } } })).body;
    const del = await t.call('DELETE', `/api/v1/users/${u.id}/`, { token });
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assertProblem(await t.call('GET', `/api/v1/users/${u.id}/`, { token }), 404, 'not_found');
    assertProblem(await t.call('PATCH', `/api/v1/users/${u.id}/`, { token, body: { locale: 'de' } }), 404, 'not_found');
    assertProblem(await t.call('DELETE', `/api/v1/users/${u.id}/`, { token }), 404, 'not_found');
    assertProblem(await t.call('GET', `/api/v1/users/${u.id}/billing-details/`, { token }), 404, 'not_found');
    const list = await t.call('GET', `/api/v1/users/?search=gone`, { token });
    assert.equal(list.body.count, 0);
    const { rows } = await t.db.query('SELECT deleted_at FROM users WHERE id = $1', [u.id]);
    assert.ok(rows[0]?.deleted_at instanceof Date, 'row retained with deleted_at');
  });

  test('a malformed id is 404 like a missing one', async () => {
    const a = await t.call('GET', '/api/v1/users/not-a-uuid/', { token });
    const b = await t.call('GET', '/api/v1/users/00000000-0000-4000-8000-000000000000/', { token });
    assertProblem(a, 404, 'not_found');
    assertProblem(b, 404, 'not_found');
    assert.equal(a.body.detail, b.body.detail);
  });

  test('trailing slash is part of the path', async () => {
    const res = await t.call('GET', '/api/v1/users', { token });
    assertProblem(res, 404, 'not_found');
  });
});
