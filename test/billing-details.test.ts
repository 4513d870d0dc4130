import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BillingDetailsView } from '../src/modules/users/schemas.ts';
import { missingBillingFields } from '../src/modules/users/service.ts';
import { normalizeVatNumber, VAT_PREFIXES, vatNumberProblem } from '../src/modules/users/vat.ts';
import { assertProblem, setupTestApp, type TestContext } from './helpers.ts';

let t: TestContext;
let token: string;

before(async () => {
  t = await setupTestApp();
  ({ token } = await t.newClient());
});
after(() => t.close());

const DEFAULTS: BillingDetailsView = {
  account_type: 'personal',
  first_name: null,
  last_name: null,
  company_name: null,
  vat_number: null,
  vat_id: null,
  tax_id: null,
  line1: null,
  postal_code: null,
  city: null,
  country: null,
  updated_at: null,
};

const VALID_VAT = [
  'DE123456789',
  'ATU12345678',
  'FR12345678901',
  'NL123456789B01',
  'BE0123456789',
  'ESX1234567X',
  'IT12345678901',
  'PL1234567890',
  'SE123456789001',
  'EL123456789',
  'IE1234567WA',
  'XI123456789',
  'GB123456789',
  'CHE123456789MWST',
];

const INVALID_VAT = ['DE12345678', 'XX123', 'ATU1234567', 'NL123456789X01', 'GR123456789'];

async function newUser(): Promise<string> {
  const res = await t.call('POST', '/api/v1/users/', { token, body: {} });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

const billingUrl = (userId: string) => `/api/v1/users/${userId}/billing-details/`;

async function put(userId: string, body: unknown) {
  return t.call('PUT', billingUrl(userId), { token, body });
}

describe('GET billing details', () => {
  test('a user who never set them gets the defaults: personal, every field null, updated_at null', async () => {
    const userId = await newUser();
    const res = await t.call('GET', billingUrl(userId), { token });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, DEFAULTS);
  });

  test('another client’s user is 404, for GET and PUT, and nothing is stored', async () => {
    const userId = await newUser();
    const other = await t.newClient();
    assertProblem(await t.call('GET', billingUrl(userId), { token: other.token }), 404, 'not_found');
    const putRes = await t.call('PUT', billingUrl(userId), { token: other.token, body: { first_name: 'Mallory', country: 'DE' } });
    assertProblem(putRes, 404, 'not_found');
    const mine = await t.call('GET', billingUrl(userId), { token });
    assert.deepEqual(mine.body, DEFAULTS);
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM billing_details WHERE user_id = $1', [userId]);
    assert.equal(rows[0]?.n, 0);
  });

  test('an unknown user id is 404', async () => {
    assertProblem(await t.call('GET', billingUrl('00000000-0000-4000-8000-000000000000'), { token }), 404, 'not_found');
    assertProblem(await put('00000000-0000-4000-8000-000000000000', { first_name: 'A' }), 404, 'not_found');
  });
});

describe('PUT billing details', () => {
  test('stores every field and answers 200 with the stored details; GET returns the same', async () => {
    const userId = await newUser();
    const body = {
      account_type: 'business',
      first_name: 'Ada',
      last_name: 'Lovelace',
      company_name: 'Analytical Engines GmbH',
      vat_number: 'DE123456789',
      tax_id: '12/345/67890',
      line1: 'Hauptstraße 1',
      postal_code: '10115',
      city: 'Berlin',
      country: 'DE',
    };
    const res = await put(userId, body);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { ...body, vat_id: 'DE123456789', updated_at: t.clock.now().toISOString() });
    const got = await t.call('GET', billingUrl(userId), { token });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, res.body);
  });

  test('replaces everything: fields not sent become null, account_type back to personal', async () => {
    const userId = await newUser();
    const first = await put(userId, {
      account_type: 'business',
      company_name: 'ACME',
      vat_number: 'ATU12345678',
      first_name: 'Old',
      last_name: 'Name',
      line1: 'Somewhere 1',
      postal_code: '1010',
      city: 'Wien',
      country: 'AT',
    });
    assert.equal(first.status, 200, first.text);
    t.clock.advance(5_000);
    const second = await put(userId, { first_name: 'New' });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.body, { ...DEFAULTS, first_name: 'New', updated_at: t.clock.now().toISOString() });
    assert.ok(Date.parse(second.body.updated_at) > Date.parse(first.body.updated_at));
    const got = await t.call('GET', billingUrl(userId), { token });
    assert.deepEqual(got.body, second.body);
  });

  test('an empty body stores the defaults with an updated_at', async () => {
    const userId = await newUser();
    await put(userId, { first_name: 'X', country: 'FR' });
    const res = await put(userId, {});
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { ...DEFAULTS, updated_at: t.clock.now().toISOString() });
  });

  test('explicit nulls are accepted and stored as null', async () => {
    const userId = await newUser();
    const res = await put(userId, { first_name: null, vat_number: null, vat_id: null, country: null, city: 'Paris' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { ...DEFAULTS, city: 'Paris', updated_at: t.clock.now().toISOString() });
  });

  test('text fields are trimmed; blank strings are stored as null', async () => {
    const userId = await newUser();
    const res = await put(userId, { first_name: '  Ada  ', last_name: '   ', city: '' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.first_name, 'Ada');
    assert.equal(res.body.last_name, null);
    assert.equal(res.body.city, null);
  });

  test('vat_number is normalized (upper-case, no spaces, dots or dashes) and echoed as vat_id', async () => {
    const userId = await newUser();
    const res = await put(userId, { account_type: 'business', vat_number: ' de 123.456-789 ', country: 'DE' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.vat_number, 'DE123456789');
    assert.equal(res.body.vat_id, 'DE123456789');
    const { rows } = await t.db.query('SELECT vat_number FROM billing_details WHERE user_id = $1', [userId]);
    assert.equal(rows[0]?.vat_number, 'DE123456789');
  });

  test('vat_id alone is accepted as an alias of vat_number', async () => {
    const userId = await newUser();
    const res = await put(userId, { account_type: 'business', vat_id: 'nl123456789b01' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.vat_number, 'NL123456789B01');
    assert.equal(res.body.vat_id, 'NL123456789B01');
  });

  test('vat_number and vat_id both sent: equal after normalization is fine, different is 400 naming vat_id', async () => {
    const userId = await newUser();
    const same = await put(userId, { vat_number: 'DE123456789', vat_id: 'de 123 456 789' });
    assert.equal(same.status, 200, same.text);
    assert.equal(same.body.vat_number, 'DE123456789');

    const different = await put(userId, { vat_number: 'DE123456789', vat_id: 'DE987654321' });
    assertProblem(different, 400, 'validation_error');
    assert.deepEqual(
      different.body.errors.map((e: { field: string }) => e.field),
      ['vat_id'],
    );
    const got = await t.call('GET', billingUrl(userId), { token });
    assert.equal(got.body.vat_number, 'DE123456789', 'a refused PUT changes nothing');
  });

  test('an invalid vat_id (sent alone) is reported under vat_id', async () => {
    const userId = await newUser();
    const res = await put(userId, { vat_id: 'DE1' });
    assertProblem(res, 400, 'validation_error');
    assert.equal(res.body.errors[0].field, 'vat_id');
  });

  for (const vat of VALID_VAT) {
    test(`valid VAT number ${vat} is accepted`, async () => {
      const userId = await newUser();
      const res = await put(userId, { account_type: 'business', vat_number: vat });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.vat_number, vat);
      assert.equal(res.body.vat_id, vat);
    });
  }

  for (const vat of INVALID_VAT) {
    test(`invalid VAT number ${vat} is 400 on vat_number and nothing is stored`, async () => {
      const userId = await newUser();
      const res = await put(userId, { account_type: 'business', vat_number: vat, company_name: 'X' });
      assertProblem(res, 400, 'validation_error');
      assert.equal(res.body.errors.length, 1);
      assert.equal(res.body.errors[0].field, 'vat_number');
      assert.match(res.body.detail, /^vat_number: /);
      const got = await t.call('GET', billingUrl(userId), { token });
      assert.deepEqual(got.body, DEFAULTS);
    });
  }

  test('country: lower-case is accepted and stored upper-case', async () => {
    const userId = await newUser();
    const res = await put(userId, { country: 'de' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.country, 'DE');
    const { rows } = await t.db.query('SELECT country FROM billing_details WHERE user_id = $1', [userId]);
    assert.equal(rows[0]?.country, 'DE');
  });

  for (const country of ['XX', 'DEU', 'D', 'GR1']) {
    test(`country ${JSON.stringify(country)} is 400 naming country`, async () => {
      const userId = await newUser();
      const res = await put(userId, { country });
      assertProblem(res, 400, 'validation_error');
      assert.deepEqual(
        res.body.errors.map((e: { field: string }) => e.field),
        ['country'],
      );
    });
  }

  test('several invalid fields are all named', async () => {
    const userId = await newUser();
    const res = await put(userId, { vat_number: 'XX123', country: 'XX' });
    assertProblem(res, 400, 'validation_error');
    assert.deepEqual(res.body.errors.map((e: { field: string }) => e.field).sort(), ['country', 'vat_number']);
  });

  test('account_type other than personal or business is 400', async () => {
    const userId = await newUser();
    for (const accountType of ['enterprise', 'Business', '', null, 1]) {
      const res = await put(userId, { account_type: accountType });
      assertProblem(res, 400, 'validation_error');
      assert.equal(res.body.errors[0].field, 'account_type', JSON.stringify(accountType));
    }
  });

  test('an unknown field is 400 naming it', async () => {
    const userId = await newUser();
    const res = await put(userId, { first_name: 'Ada', nickname: 'A' });
    assertProblem(res, 400, 'validation_error');
    assert.deepEqual(res.body.errors, [{ field: 'nickname', message: 'is not an accepted field' }]);
  });

  test('first_name of 151 characters is 400; 150 is accepted', async () => {
    const userId = await newUser();
    const long = await put(userId, { first_name: 'a'.repeat(151) });
    assertProblem(long, 400, 'validation_error');
    assert.deepEqual(long.body.errors, [{ field: 'first_name', message: 'must be at most 150 characters' }]);
    const ok = await put(userId, { first_name: 'a'.repeat(150) });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.first_name, 'a'.repeat(150));
  });

  test('wrong types are not coerced', async () => {
    const userId = await newUser();
    const res = await put(userId, { postal_code: 10115 });
    assertProblem(res, 400, 'validation_error');
    assert.equal(res.body.errors[0].field, 'postal_code');
  });
});

describe('vat.ts', () => {
  test('normalizeVatNumber upper-cases and removes spaces, dots and dashes', () => {
    assert.equal(normalizeVatNumber('de 123.456-789'), 'DE123456789');
    assert.equal(normalizeVatNumber('  atu-1234.5678 '), 'ATU12345678');
    assert.equal(normalizeVatNumber('nl123456789b01'), 'NL123456789B01');
    assert.equal(normalizeVatNumber('CHE-123.456.789 MWST'), 'CHE123456789MWST');
    assert.equal(normalizeVatNumber('DE\t123456789'), 'DE123456789');
    assert.equal(normalizeVatNumber(''), '');
    assert.equal(normalizeVatNumber('DE/123'), 'DE/123', 'other characters are kept (and then rejected by the format check)');
  });

  test('vatNumberProblem: undefined for every valid example', () => {
    for (const vat of VALID_VAT) assert.equal(vatNumberProblem(vat), undefined, vat);
    for (const vat of ['IE1234567W', 'IE1A23456W', 'CHE123456789', 'CHE123456789TVA', 'NO123456789MVA', 'XIGD123', 'GB123456789012', 'FRAB123456789']) {
      assert.equal(vatNumberProblem(vat), undefined, vat);
    }
  });

  test('vatNumberProblem: a reason for every invalid example', () => {
    for (const vat of INVALID_VAT) assert.equal(typeof vatNumberProblem(vat), 'string', vat);
    assert.match(vatNumberProblem('XX123') ?? '', /supported country prefix/);
    assert.match(vatNumberProblem('GR123456789') ?? '', /supported country prefix/, 'Greece uses EL');
    assert.equal(vatNumberProblem('DE12345678'), 'is not a well-formed DE VAT number');
    assert.equal(vatNumberProblem('ATU1234567'), 'is not a well-formed AT VAT number');
    assert.equal(vatNumberProblem('NL123456789X01'), 'is not a well-formed NL VAT number');
    assert.equal(typeof vatNumberProblem('DE1234567890'), 'string', 'too long');
    assert.equal(typeof vatNumberProblem('SE123456789002'), 'string', 'Swedish numbers end in 01');
    assert.equal(typeof vatNumberProblem('BE2123456789'), 'string', 'Belgian numbers start with 0 or 1');
    assert.equal(typeof vatNumberProblem('FRI1123456789'), 'string', 'French key excludes I and O');
    assert.equal(typeof vatNumberProblem('de123456789'), 'string', 'expects a normalized (upper-case) number');
    assert.equal(typeof vatNumberProblem(''), 'string');
  });

  test('the prefix list names every supported prefix and no ISO code for Greece', () => {
    assert.ok(VAT_PREFIXES.includes('EL'));
    assert.ok(VAT_PREFIXES.includes('XI'));
    assert.ok(!VAT_PREFIXES.includes('GR'));
    assert.equal(new Set(VAT_PREFIXES).size, VAT_PREFIXES.length);
  });
});

describe('missingBillingFields', () => {
  const details = (fields: Partial<BillingDetailsView>): BillingDetailsView => ({ ...DEFAULTS, ...fields });

  test('personal needs first_name, last_name and country', () => {
    assert.deepEqual(missingBillingFields(details({})), ['first_name', 'last_name', 'country']);
    assert.deepEqual(missingBillingFields(details({ first_name: 'Ada' })), ['last_name', 'country']);
    assert.deepEqual(missingBillingFields(details({ first_name: 'Ada', last_name: 'Lovelace', country: 'GB' })), []);
    assert.deepEqual(
      missingBillingFields(details({ company_name: 'ACME', vat_number: 'DE123456789', country: 'DE' })),
      ['first_name', 'last_name'],
      'business fields do not satisfy a personal account',
    );
  });

  test('business needs company_name, vat_number and country', () => {
    assert.deepEqual(missingBillingFields(details({ account_type: 'business' })), ['company_name', 'vat_number', 'country']);
    assert.deepEqual(missingBillingFields(details({ account_type: 'business', first_name: 'Ada', last_name: 'Lovelace', country: 'DE' })), [
      'company_name',
      'vat_number',
    ]);
    assert.deepEqual(missingBillingFields(details({ account_type: 'business', company_name: 'ACME', vat_number: 'DE123456789', country: 'DE' })), []);
  });

  test('empty strings count as missing', () => {
    assert.deepEqual(missingBillingFields(details({ first_name: '', last_name: 'L', country: 'DE' })), ['first_name']);
  });

  test('the defaults GET answers are incomplete for charging', async () => {
    const userId = await newUser();
    const got = await t.call('GET', billingUrl(userId), { token });
    assert.deepEqual(missingBillingFields(got.body), ['first_name', 'last_name', 'country']);
    const stored = await put(userId, { account_type: 'business', company_name: 'ACME', vat_number: 'de123456789', country: 'de' });
    assert.deepEqual(missingBillingFields(stored.body), []);
  });
});
