// The playground's price groups in plain words (src/playground/web/price-words.ts, a pure function the page
// runs): what a driver reads for the price group shapes the API answers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { amount, type PriceGroup, type PriceItem, priceGroupWords, scheduleWords } from '../src/playground/web/price-words.ts';

function item(price: string, more: Partial<PriceItem> = {}): PriceItem {
  return {
    time_from: '00:00',
    time_to: '24:00',
    date_from: '',
    date_to: '',
    user_facing_price: price,
    tax: 19,
    grace_period_minutes: null,
    blocking_cap: null,
    ...more,
  };
}

function group(prices: Partial<PriceGroup['prices']>, more: Partial<PriceGroup> = {}): PriceGroup {
  return {
    type: 'IEC_62196_T2_COMBO',
    power: 150,
    evse_ids: ['DE*ABC*E1', 'DE*ABC*E2'],
    prices: { time_price: null, kwh_price: null, blocking_fee: null, session_fee: null, starting_fee: null, ...prices },
    currency: 'EUR',
    pre_authorization_amount: '50.00',
    is_fallback: false,
    ...more,
  };
}

describe('price groups in plain words', () => {
  it('says a flat tariff in one line per component, with VAT and the hold', () => {
    const words = priceGroupWords(
      group({
        kwh_price: { ALL: [item('0.59')] },
        time_price: { ALL: [item('0.0238')] },
        session_fee: { ALL: [item('1.00')] },
        starting_fee: { ALL: [item('0.30')] },
      }),
    );
    assert.equal(words.title, 'CCS (Combo 2), 150 kW (2 charge points)');
    assert.deepEqual(words.lines, [
      'Energy: 0.59 EUR per kWh',
      'Charging time: 0.0238 EUR per minute',
      'Operator’s session fee: 1.00 EUR per session',
      'Our starting fee: 0.30 EUR per session',
      'Prices include VAT (19 %).',
      'When you start, 50.00 EUR is held on your card; you pay for what you charge and the rest of the hold is released.',
    ]);
  });

  it('groups weekdays with the same prices, names time windows and dates, and falls back to the other days', () => {
    const weekday = [item('0.39', { time_from: '22:00', time_to: '06:00' }), item('0.59')];
    const schedule = {
      MONDAY: weekday,
      TUESDAY: weekday,
      WEDNESDAY: weekday,
      THURSDAY: weekday,
      FRIDAY: weekday,
      SUNDAY: [item('0.45', { date_from: '2026-12-24', date_to: '2026-12-27' })],
      ALL: [item('0.49')],
    };
    assert.equal(
      scheduleWords(schedule, 'per kWh', 'EUR'),
      'Mon–Fri: 0.39 EUR per kWh 22:00–06:00, otherwise 0.59 EUR per kWh; Sun: 0.45 EUR per kWh (2026-12-24 to 2026-12-27); other days: 0.49 EUR per kWh',
    );
    assert.equal(
      scheduleWords({ MONDAY: [item('0.50')], TUESDAY: [item('0.50')], THURSDAY: [item('0.50')] }, 'per kWh', 'EUR'),
      'Mon, Tue, Thu: 0.50 EUR per kWh',
    );
    assert.equal(scheduleWords(null, 'per kWh', 'EUR'), undefined);
    assert.equal(scheduleWords({ ALL: [] }, 'per kWh', 'EUR'), undefined);
  });

  it('says parking after its free minutes and the operator’s cap; a fallback price and no price at all say so', () => {
    const parking = priceGroupWords(group({ blocking_fee: { ALL: [item('0.1000', { grace_period_minutes: 60, blocking_cap: '25.00' })] } }));
    assert.equal(parking.lines[0], 'Parking: 0.10 EUR per minute after the first 60 minutes (the operator caps a session at 25.00 EUR excl. VAT)');

    const fallback = priceGroupWords(group({ kwh_price: { ALL: [item('0.45', { tax: 0 })] } }, { is_fallback: true, evse_ids: ['X'], power: 11.04 }));
    assert.equal(fallback.title, 'CCS (Combo 2), 11.04 kW (1 charge point)');
    assert.deepEqual(fallback.lines.slice(0, 3), [
      'Energy: 0.45 EUR per kWh',
      'The operator publishes no tariff for these charge points: our standard price applies.',
      'No VAT applies.',
    ]);

    const none = priceGroupWords(group({}, { is_fallback: true, type: 'SOMETHING_NEW', currency: 'XXX' }));
    assert.equal(none.title, 'SOMETHING_NEW, 150 kW (2 charge points)');
    assert.equal(none.lines[0], 'No price is known for these charge points.');
  });

  it('writes amounts with their cents and no trailing zeros beyond them', () => {
    assert.deepEqual(['0.5', '0.50', '0.2380', '12', '1.000', '0.295'].map(amount), ['0.50', '0.50', '0.238', '12.00', '1.00', '0.295']);
  });

  it('property: every price of every component’s schedule is in the words', () => {
    const price = fc.tuple(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 9999 })).map(([a, b]) => `${a}.${String(b).padStart(4, '0')}`);
    const time = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom('00', '30')).map(([hh, mm]) => `${String(hh).padStart(2, '0')}:${mm}`);
    const anItem = fc.record({ price, from: time, to: time }).map((r) => item(r.price, { time_from: r.from, time_to: r.to }));
    const day = fc.constantFrom('MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY', 'ALL');
    const schedule = fc.dictionary(day, fc.array(anItem, { minLength: 1, maxLength: 3 }), { minKeys: 1, maxKeys: 8 });
    fc.assert(
      fc.property(schedule, schedule, (kwh, time) => {
        const words = priceGroupWords(group({ kwh_price: kwh, time_price: time })).lines.join('\n');
        for (const items of [...Object.values(kwh), ...Object.values(time)]) {
          for (const i of items) assert.ok(words.includes(`${amount(i.user_facing_price)} EUR`), `${i.user_facing_price} in ${words}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});
