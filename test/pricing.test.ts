// src/pricing/ and src/platform/money.ts rules that got their own home in
// issue 16: the two conversions to minor units (toMinorUnits refuses an
// inexact amount, roundToMinorUnits rounds it half up), the one local-time
// formatter behind both the tariff engine's restrictions and the stations'
// local_datetime, and the running estimate that rounds (not refuses) a
// starting fee with VAT. Pure: no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Big from 'big.js';
import fc from 'fast-check';
import type { CDR } from '../src/ocpi-protocol/cdrs.ts';
import type { OcpiTariff } from '../src/ocpi-protocol/locations-tariffs.ts';
import type { Session as OcpiSession } from '../src/ocpi-protocol/sessions.ts';
import { currencyExponent, fromMinorUnits, roundToMinorUnits, toMinorUnits, withVat } from '../src/platform/money.ts';
import { localIsoDateTime, localTime, WEEKDAYS } from '../src/pricing/local-time.ts';
import { priceCdr } from '../src/pricing/price-cdr.ts';
import { estimateCost, fallbackTariff } from '../src/pricing/session-prices.ts';

describe('money: exact or rounded minor units', () => {
  test('toMinorUnits refuses what roundToMinorUnits rounds half up', () => {
    for (const [amount, currency, rounded] of [
      ['12.405', 'EUR', 1241],
      ['12.404', 'EUR', 1240],
      ['-12.405', 'EUR', -1241],
      ['1.5', 'ISK', 2],
      ['0.0001', 'EUR', 0],
    ] as const) {
      assert.throws(() => toMinorUnits(amount, currency), RangeError, `${amount} ${currency}`);
      assert.equal(roundToMinorUnits(amount, currency), rounded, `${amount} ${currency}`);
    }
    assert.equal(roundToMinorUnits(new Big('3.4165'), 'EUR'), 342);
  });

  test('never -0, and out of range refused by both', () => {
    assert.ok(Object.is(roundToMinorUnits('-0.001', 'EUR'), 0));
    assert.ok(Object.is(toMinorUnits('-0.00', 'EUR'), 0));
    assert.equal(fromMinorUnits(-0, 'EUR'), '0.00');
    assert.throws(() => toMinorUnits('1e30', 'EUR'), RangeError);
    assert.throws(() => toMinorUnits('100000000000000000000', 'EUR'), RangeError);
    assert.throws(() => roundToMinorUnits('100000000000000000000', 'EUR'), RangeError);
    assert.throws(() => fromMinorUnits(1.5, 'EUR'), RangeError);
  });

  test('on amounts that are money both agree and fromMinorUnits inverts them', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), fc.constantFrom('EUR', 'ISK', 'HUF', 'GBP', 'KWD'), (units, currency) => {
        const text = fromMinorUnits(units, currency);
        assert.equal(toMinorUnits(text, currency), units);
        assert.equal(roundToMinorUnits(text, currency), units);
        assert.equal(text.split('.')[1]?.length ?? 0, currencyExponent(currency));
      }),
    );
  });
});

test('withVat: exact, numbers read through their decimal string', () => {
  assert.equal(withVat('0.35', '19').toString(), '0.4165');
  assert.equal(withVat(0.1, 20).toString(), '0.12');
  assert.equal(withVat(new Big('10'), '0').toString(), '10');
  assert.equal(withVat('0.30', 25.5).toString(), '0.3765');
});

describe('local time: one formatter for restrictions and local_datetime', () => {
  const zones = ['UTC', 'Europe/Berlin', 'Europe/London', 'Asia/Nicosia', 'Atlantic/Reykjavik', 'America/St_Johns', 'Asia/Kathmandu'];

  test('known instants', () => {
    const at = new Date('2024-03-31T01:30:00.900Z'); // Berlin switches to summer time at 01:00 UTC
    assert.equal(localIsoDateTime(at, 'Europe/Berlin'), '2024-03-31T03:30:00+02:00');
    assert.deepEqual(localTime(at, 'Europe/Berlin'), { date: '2024-03-31', seconds: 3 * 3600 + 30 * 60, weekday: 'SUNDAY' });
    assert.equal(localIsoDateTime(new Date('2024-01-01T00:00:00Z'), 'UTC'), '2024-01-01T00:00:00+00:00');
    assert.equal(localIsoDateTime(new Date('2024-01-01T00:00:00Z'), 'Asia/Kathmandu'), '2024-01-01T05:45:00+05:45');
    assert.equal(localIsoDateTime(new Date('2024-01-01T00:00:00Z'), 'America/St_Johns'), '2023-12-31T20:30:00-03:30');
    assert.deepEqual(localTime(new Date('2024-01-01T00:00:00Z'), 'America/St_Johns'), { date: '2023-12-31', seconds: 20.5 * 3600, weekday: 'SUNDAY' });
    assert.throws(() => localTime(new Date(), 'Not/AZone'), RangeError);
    assert.throws(() => localIsoDateTime(new Date(Number.NaN), 'UTC'), RangeError);
  });

  test('localTime and localIsoDateTime read the same wall clock, and the weekday is that date’s', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2060, 0, 1) }), fc.constantFrom(...zones), (ms, zone) => {
        const at = new Date(ms);
        const iso = localIsoDateTime(at, zone);
        const local = localTime(at, zone);
        assert.equal(iso.slice(0, 10), local.date);
        const [h, m, s] = iso.slice(11, 19).split(':').map(Number) as [number, number, number];
        assert.equal(h * 3600 + m * 60 + s, local.seconds);
        const utcDay = new Date(`${local.date}T00:00:00Z`).getUTCDay(); // 0 = Sunday
        assert.equal(local.weekday, WEEKDAYS[(utcDay + 6) % 7]);
        // The offset puts the wall clock back on the instant (to the whole second).
        assert.equal(Date.parse(iso), Math.floor(ms / 1000) * 1000);
      }),
      { numRuns: 500 },
    );
  });
});

describe('estimateCost: the running estimate rounds the starting fee with VAT', () => {
  const tariff = {
    country_code: 'DE',
    party_id: 'CPO',
    id: 'T1',
    currency: 'EUR',
    elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] }],
    last_updated: '2024-01-01T00:00:00Z',
  } as OcpiTariff;
  const ocpi = {
    start_date_time: '2024-06-03T10:00:00Z',
    end_date_time: '2024-06-03T11:00:00Z',
    charging_periods: [{ start_date_time: '2024-06-03T10:00:00Z', dimensions: [{ type: 'ENERGY', volume: 10 }] }],
  } as unknown as OcpiSession;

  test('3.00 EUR of energy plus a 0.35 EUR fee at 19% VAT (0.4165) is 342 cents, not a refusal', () => {
    const session = { tariff, time_zone: 'Europe/Berlin', currency: 'EUR', starting_fee: { price: '0.35', vat: '19' } };
    assert.equal(estimateCost(session, ocpi, new Date('2024-06-03T12:00:00Z')), 342);
    assert.equal(estimateCost({ ...session, starting_fee: null }, ocpi, new Date('2024-06-03T12:00:00Z')), 300);
  });
});

describe('priceCdr: a price mismatch needs a tariff of the CPO’s', () => {
  // An operator that publishes no tariff (the sandbox network has two): its CDR names none and bills what it bills
  // (the sandbox: 0.00), we bill our fallback price. Those were the load runs' 16-23 "mismatches" (issue 17).
  const fallback = fallbackTariff({ country_code: 'DE', party_id: 'SWL' }, { currency: 'EUR', kwhPrice: '0.59', vat: '19' }, new Date('2026-01-01T00:00:00Z'));
  const cdr = {
    country_code: 'DE',
    party_id: 'SWL',
    id: 'CDR-1',
    start_date_time: '2026-03-02T10:00:00Z',
    end_date_time: '2026-03-02T11:00:00Z',
    currency: 'EUR',
    charging_periods: [
      {
        start_date_time: '2026-03-02T10:00:00Z',
        dimensions: [
          { type: 'ENERGY', volume: 10 },
          { type: 'TIME', volume: 1 },
        ],
      },
    ],
    total_cost: { excl_vat: 0, incl_vat: 0 },
    total_energy: 10,
    total_time: 1,
  } as unknown as CDR;

  test('our fallback tariff against the CPO’s 0.00: billed 7.02, recorded, not a mismatch', () => {
    const priced = priceCdr({ tariff: fallback, tariff_is_fallback: true, time_zone: 'Europe/Berlin', starting_fee: null }, cdr, 'engine');
    assert.deepEqual([priced.engineTotal, priced.cdrTotal, priced.mismatch], ['7.02', '0.00', false]);
  });

  test('the same tariff as the CPO’s (not a fallback), the same difference: a mismatch', () => {
    const priced = priceCdr({ tariff: { ...fallback, id: 'T1' }, tariff_is_fallback: false, time_zone: 'Europe/Berlin', starting_fee: null }, cdr, 'engine');
    assert.deepEqual([priced.engineTotal, priced.cdrTotal, priced.mismatch], ['7.02', '0.00', true]);
  });
});
