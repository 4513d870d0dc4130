// The sandbox CPO's pricing (src/sandbox/cpo/pricing.ts) against the worked
// examples of OCPI 2.2.1 mod_tariffs / mod_cdrs: VAT, FLAT, step_size across
// elements and between charging and parking, min/max price, time of day,
// weekdays, power and duration restrictions.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OcpiPriceComponent, OcpiTariff, OcpiTariffRestrictions } from '../src/ocpi/locations-tariffs.ts';
import type { ChargingPeriod } from '../src/ocpi/sessions.ts';
import { localTime, priceSession, restrictionsMatch } from '../src/ocpi/pricing.ts';

const TZ = 'Europe/Amsterdam';
type Element = { c: [OcpiPriceComponent['type'], number, number?, number?][]; r?: OcpiTariffRestrictions };

function tariff(elements: Element[], extra: Partial<OcpiTariff> = {}): OcpiTariff {
  return {
    country_code: 'NL',
    party_id: 'TST',
    id: 'T1',
    currency: 'EUR',
    elements: elements.map((e) => ({
      price_components: e.c.map(([type, price, step = type === 'FLAT' ? 0 : 1, vat]) => ({
        type,
        price,
        step_size: step,
        ...(vat === undefined ? {} : { vat }),
      })),
      ...(e.r ? { restrictions: e.r } : {}),
    })),
    last_updated: '2024-01-01T00:00:00Z',
    ...extra,
  };
}

/** Periods given as [local "HH:MM" on Monday 2024-06-03 (CEST), dimensions]; the session ends at `end`. */
function session(t: OcpiTariff, periods: [string, Record<string, number>][], end: string, day = '2024-06-03') {
  const at = (hhmm: string) => new Date(`${day}T${hhmm}:00+02:00`);
  const list: ChargingPeriod[] = periods.map(([time, dims]) => ({
    start_date_time: at(time).toISOString(),
    dimensions: Object.entries(dims).map(([type, volume]) => ({ type: type as ChargingPeriod['dimensions'][number]['type'], volume })),
  }));
  return priceSession({ tariff: t, currency: t.currency, timeZone: TZ, start: at(periods[0]?.[0] as string), end: at(end), periods: list });
}

describe('OCPI 2.2.1 tariff examples', () => {
  test('energy with VAT; start fee; minimum price; maximum price', () => {
    const energy = tariff([{ c: [['ENERGY', 0.25, 1, 10]] }]);
    assert.deepEqual(session(energy, [['10:00', { ENERGY: 20, TIME: 1 }]], '11:00').total_cost, { excl_vat: 5, incl_vat: 5.5 });
    const fee = tariff([
      {
        c: [
          ['FLAT', 0.5, 0, 20],
          ['ENERGY', 0.25, 1, 10],
        ],
      },
    ]);
    const withFee = session(fee, [['10:00', { ENERGY: 20, TIME: 1 }]], '11:00');
    assert.deepEqual(withFee.total_cost, { excl_vat: 5.5, incl_vat: 6.1 });
    assert.deepEqual(withFee.total_fixed_cost, { excl_vat: 0.5, incl_vat: 0.6 });
    const minimum = tariff([{ c: [['ENERGY', 0.25, 1, 10]] }], { min_price: { excl_vat: 0.5, incl_vat: 0.55 } });
    assert.deepEqual(session(minimum, [['10:00', { ENERGY: 1, TIME: 0.1 }]], '10:06').total_cost, { excl_vat: 0.5, incl_vat: 0.55 });
    assert.deepEqual(session(minimum, [['10:00', { ENERGY: 20, TIME: 1 }]], '11:00').total_cost, { excl_vat: 5, incl_vat: 5.5 });
    const capped = tariff(
      [
        {
          c: [
            ['FLAT', 0.5, 0, 20],
            ['ENERGY', 0.25, 1, 10],
          ],
        },
      ],
      { max_price: { excl_vat: 10, incl_vat: 11 } },
    );
    assert.deepEqual(session(capped, [['10:00', { ENERGY: 50, TIME: 1 }]], '11:00').total_cost, { excl_vat: 10, incl_vat: 11 });
    assert.deepEqual(session(capped, [['10:00', { ENERGY: 30, TIME: 1 }]], '11:00').total_cost, { excl_vat: 8, incl_vat: 8.85 });
  });

  test('energy step_size 100 Wh: 20.45 kWh billed as 20.5 (5.63 excl., 6.24 incl.)', () => {
    const t = tariff([
      {
        c: [
          ['FLAT', 0.5, 0, 20],
          ['ENERGY', 0.25, 100, 10],
        ],
      },
    ]);
    const costs = session(t, [['10:00', { ENERGY: 20.45, TIME: 1 }]], '11:00');
    assert.deepEqual(costs.total_cost, { excl_vat: 5.63, incl_vat: 6.24 });
    assert.deepEqual(costs.total_energy_cost, { excl_vat: 5.13, incl_vat: 5.64 });
    assert.equal(costs.total_energy, 20.45);
  });

  test('the complex tariff: Monday 09:30, 165 min at 16 A, then 42 min parking = 9.00 excl., 10.30 incl.', () => {
    const weekdays: OcpiTariffRestrictions['day_of_week'] = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'];
    const t = tariff([
      { c: [['FLAT', 2.5, 1, 15]] },
      { c: [['TIME', 1, 900, 20]], r: { max_current: 32 } },
      { c: [['TIME', 2, 600, 20]], r: { min_current: 32, day_of_week: weekdays } },
      { c: [['TIME', 1.25, 600, 20]], r: { min_current: 32, day_of_week: ['SATURDAY', 'SUNDAY'] } },
      { c: [['PARKING_TIME', 5, 300, 10]], r: { start_time: '09:00', end_time: '18:00', day_of_week: weekdays } },
      { c: [['PARKING_TIME', 6, 300, 10]], r: { start_time: '10:00', end_time: '17:00', day_of_week: ['SATURDAY'] } },
    ]);
    const costs = session(
      t,
      [
        ['09:30', { TIME: 2.75, MAX_CURRENT: 16 }],
        ['12:15', { PARKING_TIME: 0.7 }],
      ],
      '12:57',
    );
    assert.deepEqual(costs.total_cost, { excl_vat: 9, incl_vat: 10.3 });
    assert.deepEqual(costs.total_time_cost, { excl_vat: 2.75, incl_vat: 3.3 });
    assert.deepEqual(costs.total_parking_cost, { excl_vat: 3.75, incl_vat: 4.13 });
    assert.equal(costs.total_parking_time, 0.7);
    // At 43 A on a weekday the 2.00/h element applies instead, and it is the last time period: 165 min billed as 170.
    const fast = session(t, [['09:30', { TIME: 2.75, MAX_CURRENT: 43 }]], '12:15');
    assert.equal(fast.total_time_cost?.excl_vat, 5.67);
  });

  test('step_size is applied once, at the price of the last element: energy 4.3 + 1.1 kWh around 17:00, step 500 Wh', () => {
    const t = tariff([{ c: [['ENERGY', 0.27, 500]], r: { start_time: '17:00' } }, { c: [['ENERGY', 0.2, 500]] }]);
    const costs = session(
      t,
      [
        ['16:00', { ENERGY: 4.3, TIME: 1 }],
        ['17:00', { ENERGY: 1.1, TIME: 0.5 }],
      ],
      '17:30',
    );
    assert.equal(costs.total_cost.excl_vat, 1.18); // 0.86 + 0.297 + 0.1 x 0.27
    assert.equal(costs.total_time_cost, undefined);
  });

  test('time step_size: 6 min before and 22 min after 17:00 billed as 30 min, 24 of them after 17:00', () => {
    const t = tariff([{ c: [['TIME', 7, 600]], r: { start_time: '17:00' } }, { c: [['TIME', 5, 600]] }]);
    const costs = session(
      t,
      [
        ['16:54', { TIME: 0.1 }],
        ['17:00', { TIME: 22 / 60 }],
      ],
      '17:22',
    );
    assert.equal(costs.total_cost.excl_vat, 3.3);
  });

  test('switching elements: charging then parking (0.55), charging across 17:00 (1.30), parking into a free period (0.73)', () => {
    const t = tariff([
      { c: [['TIME', 2.4, 900]], r: { start_time: '17:00' } },
      { c: [['TIME', 1.2, 1800]] },
      { c: [['PARKING_TIME', 1, 900]], r: { end_time: '20:00' } },
    ]);
    const one = session(
      t,
      [
        ['16:55', { TIME: 5 / 60 }],
        ['17:00', { TIME: 5 / 60 }],
        ['17:05', { PARKING_TIME: 2 / 60 }],
      ],
      '17:07',
    );
    assert.equal(one.total_cost.excl_vat, 0.55);
    const two = session(
      t,
      [
        ['16:35', { TIME: 25 / 60 }],
        ['17:00', { TIME: 10 / 60 }],
      ],
      '17:10',
    );
    assert.equal(two.total_cost.excl_vat, 1.3);
    const three = session(
      t,
      [
        ['19:40', { TIME: 0.2 }],
        ['19:52', { PARKING_TIME: 8 / 60 }],
        ['20:00', { PARKING_TIME: 0.2 }],
      ],
      '20:12',
    );
    assert.equal(three.total_cost.excl_vat, 0.73);
    assert.equal(three.total_time, 0.533333);
  });

  test('max_power and max_duration restrictions', () => {
    const power = tariff([
      { c: [['ENERGY', 0.2]], r: { max_power: 16 } },
      { c: [['ENERGY', 0.35]], r: { min_power: 16, max_power: 32 } },
      { c: [['ENERGY', 0.5]] },
    ]);
    const byPower = session(
      power,
      [
        ['10:00', { ENERGY: 1, TIME: 1 / 6 }],
        ['10:10', { ENERGY: 40, TIME: 50 / 60 }],
        ['11:00', { ENERGY: 0.5, TIME: 7.5 / 60 }],
      ],
      '11:07',
    );
    assert.equal(byPower.total_cost.excl_vat, 20.3);
    const duration = tariff([
      { c: [['ENERGY', 0]], r: { max_duration: 1800 } },
      { c: [['ENERGY', 0.25]], r: { max_duration: 3600 } },
      { c: [['ENERGY', 0.4]] },
    ]);
    const byDuration = session(
      duration,
      [
        ['10:00', { ENERGY: 5, TIME: 0.5 }],
        ['10:30', { ENERGY: 1.2, TIME: 1 / 6 }],
      ],
      '10:40',
    );
    assert.equal(byDuration.total_cost.excl_vat, 0.3);
  });

  test('no tariff, or no matching element: free; a reservation element never applies', () => {
    const free = priceSession({
      tariff: undefined,
      currency: 'EUR',
      timeZone: TZ,
      start: new Date('2024-06-03T08:00:00Z'),
      end: new Date('2024-06-03T09:00:00Z'),
      periods: [{ start_date_time: '2024-06-03T08:00:00Z', dimensions: [{ type: 'ENERGY', volume: 3 }] }],
    });
    assert.deepEqual(free.total_cost, { excl_vat: 0, incl_vat: 0 });
    assert.equal(free.total_energy, 3);
    const nightOnly = tariff([
      { c: [['ENERGY', 0.3]], r: { start_time: '22:00', end_time: '06:00' } },
      { c: [['FLAT', 9]], r: { reservation: 'RESERVATION' } },
    ]);
    assert.equal(session(nightOnly, [['10:00', { ENERGY: 3, TIME: 1 }]], '11:00').total_cost.excl_vat, 0);
    assert.equal(session(nightOnly, [['23:00', { ENERGY: 3, TIME: 1 }]], '23:59').total_cost.excl_vat, 0.9);
  });
});

describe('restrictions in local time', () => {
  const ctx = (iso: string) => ({ at: new Date(iso), timeZone: TZ, kwh: 0, durationS: 0, powerKw: 0, currentA: 0 });

  test('time windows wrap past midnight; end_time 00:00 is the end of the day; dates and weekdays are local', () => {
    const night = { start_time: '22:00', end_time: '06:00' };
    assert.equal(restrictionsMatch(night, ctx('2024-06-03T21:30:00Z')), true); // 23:30 CEST
    assert.equal(restrictionsMatch(night, ctx('2024-06-04T03:59:00Z')), true); // 05:59
    assert.equal(restrictionsMatch(night, ctx('2024-06-04T04:00:00Z')), false); // 06:00
    assert.equal(restrictionsMatch({ start_time: '18:00', end_time: '00:00' }, ctx('2024-06-03T21:59:00Z')), true);
    assert.equal(restrictionsMatch({ day_of_week: ['TUESDAY'] }, ctx('2024-06-03T22:30:00Z')), true); // Tuesday 00:30 local
    assert.equal(restrictionsMatch({ start_date: '2024-06-04' }, ctx('2024-06-03T22:30:00Z')), true);
    assert.equal(restrictionsMatch({ end_date: '2024-06-04' }, ctx('2024-06-03T22:30:00Z')), false);
    assert.deepEqual(localTime(new Date('2024-01-15T12:00:00Z'), TZ), { date: '2024-01-15', seconds: 13 * 3600, weekday: 'MONDAY' });
  });
});
