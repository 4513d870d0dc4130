// Unit tests of price-group derivation: a pure module, so no database or app.
// Every expected amount is computed by hand in the comment next to it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Big from 'big.js';
import fc from 'fast-check';
import type { OcpiConnector, OcpiEvse, OcpiPriceComponent, OcpiTariff, OcpiTariffRestrictions } from '../src/ocpi-protocol/locations-tariffs.ts';
import {
  connectorPowerKw,
  DEFAULT_PRE_AUTHORIZATION,
  derivePriceGroups,
  maxPriceOf,
  type PreAuthorizationRule,
  type PriceGroup,
  type PriceGroupOptions,
  type PriceItem,
} from '../src/pricing/price-groups.ts';

const STAMP = '2026-01-01T00:00:00Z';
// A Wednesday; 14:00 in Berlin (CEST).
const NOW = new Date('2026-07-01T12:00:00Z');
const BERLIN: PriceGroupOptions = { now: NOW, timeZone: 'Europe/Berlin' };

const DC_STANDARDS = new Set(['CHADEMO', 'IEC_62196_T2_COMBO', 'IEC_62196_T1_COMBO']);

function conn(standard: string, watts: number | undefined, tariffIds: string[] = [], extra: Partial<OcpiConnector> = {}): OcpiConnector {
  const dc = DC_STANDARDS.has(standard);
  return {
    id: '1',
    standard,
    format: dc ? 'CABLE' : 'SOCKET',
    power_type: dc ? 'DC' : 'AC_3_PHASE',
    max_voltage: dc ? 920 : 230,
    max_amperage: dc ? 400 : 32,
    ...(watts === undefined ? {} : { max_electric_power: watts }),
    tariff_ids: tariffIds,
    last_updated: STAMP,
    ...extra,
  };
}

function evse(uid: string, connectors: OcpiConnector[], status = 'AVAILABLE', evseId: string | null = `DE*ABC*E${uid}`): OcpiEvse {
  return { uid, ...(evseId === null ? {} : { evse_id: evseId }), status, connectors, last_updated: STAMP };
}

function pc(type: OcpiPriceComponent['type'], price: number, vat?: number): OcpiPriceComponent {
  return { type, price, ...(vat === undefined ? {} : { vat }), step_size: 1 };
}

function el(components: OcpiPriceComponent[], restrictions?: OcpiTariffRestrictions): OcpiTariff['elements'][number] {
  return { price_components: components, ...(restrictions ? { restrictions } : {}) };
}

function tariff(id: string, elements: OcpiTariff['elements'], extra: Partial<OcpiTariff> = {}): OcpiTariff {
  return { country_code: 'DE', party_id: 'ABC', id, currency: 'EUR', elements, last_updated: STAMP, ...extra };
}

function lookup(...tariffs: OcpiTariff[]): (id: string) => OcpiTariff | undefined {
  const byId = new Map(tariffs.map((t) => [t.id, t]));
  return (id) => byId.get(id);
}

/** An item with the all-day defaults, overridden by `fields`. */
function item(fields: Partial<PriceItem> & Pick<PriceItem, 'gross_price' | 'user_facing_price' | 'tax'>): PriceItem {
  return { time_from: '00:00', time_to: '24:00', date_from: '', date_to: '', grace_period_minutes: null, blocking_cap: null, ...fields };
}

/** The one group of a single-connector station. */
function only(evses: OcpiEvse[], find: (id: string) => OcpiTariff | undefined, options: PriceGroupOptions = BERLIN): PriceGroup {
  const groups = derivePriceGroups(evses, find, options);
  assert.equal(groups.length, 1);
  return groups[0] as PriceGroup;
}

const FLAT_039 = tariff('T039', [el([pc('ENERGY', 0.39, 19)])]);

describe('connectorPowerKw', () => {
  test('max_electric_power in W wins, also when lower than V × A', () => {
    assert.equal(connectorPowerKw(conn('IEC_62196_T2', 22000)), 22);
    assert.equal(connectorPowerKw(conn('IEC_62196_T2', 11000)), 11);
    // 920 V × 400 A = 368 kW, limited to 150 kW.
    assert.equal(connectorPowerKw(conn('IEC_62196_T2_COMBO', 150000)), 150);
    assert.equal(connectorPowerKw(conn('IEC_62196_T2', 3700)), 3.7);
  });

  test('computed from line-to-neutral voltage × amperage × phases when max_electric_power is absent (or 0)', () => {
    const ac = (power_type: string, v: number, a: number) => conn('IEC_62196_T2', undefined, [], { power_type, max_voltage: v, max_amperage: a });
    assert.equal(connectorPowerKw(ac('AC_3_PHASE', 230, 16)), 11.04); // 230 × 16 × 3 = 11040 W
    assert.equal(connectorPowerKw(ac('AC_3_PHASE', 230, 32)), 22.08);
    assert.equal(connectorPowerKw(ac('AC_1_PHASE', 230, 32)), 7.36);
    assert.equal(connectorPowerKw(ac('AC_2_PHASE', 230, 16)), 7.36); // 2 × 230 × 16
    assert.equal(connectorPowerKw(ac('AC_2_PHASE_SPLIT', 120, 40)), 9.6); // 2 × 120 × 40
    assert.equal(connectorPowerKw(ac('DC', 500, 100)), 50);
    assert.equal(connectorPowerKw(conn('CHADEMO', 0, [], { max_voltage: 500, max_amperage: 125 })), 62.5);
  });
});

describe('grouping', () => {
  test('same standard, power and tariff share a group; other power or tariff splits; multi-standard EVSEs are in two groups; REMOVED is out', () => {
    const other = tariff('OTHER', [el([pc('ENERGY', 0.49, 19)])]);
    const evses = [
      evse('1', [conn('IEC_62196_T2', 22000, ['T039'])]),
      evse('2', [conn('IEC_62196_T2', 22000, ['T039'])]),
      evse('3', [conn('IEC_62196_T2', 11000, ['T039'])]),
      evse('4', [conn('IEC_62196_T2', 22000, ['T039']), { ...conn('CHADEMO', 50000, ['T039']), id: '2' }]),
      evse('5', [conn('IEC_62196_T2', 22000, ['T039'])], 'REMOVED'),
      evse('6', [conn('IEC_62196_T2', 22000, ['OTHER'])], 'OUTOFORDER', null),
      // Two connectors of one group: the EVSE is listed once.
      evse('7', [conn('IEC_62196_T2', 22000, ['T039']), { ...conn('IEC_62196_T2', 22000, ['T039']), id: '2' }]),
    ];
    const groups = derivePriceGroups(evses, lookup(FLAT_039, other), BERLIN);
    assert.deepEqual(
      groups.map((g) => [g.type, g.power, g.evse_ids, g.prices.kwh_price?.ALL?.[0]?.gross_price]),
      [
        ['CHADEMO', 50, ['DE*ABC*E4'], '0.39'],
        // Same type and power: by tariff id, OTHER before T039. evse_id missing: the uid stands in.
        ['IEC_62196_T2', 22, ['6'], '0.49'],
        ['IEC_62196_T2', 22, ['DE*ABC*E1', 'DE*ABC*E2', 'DE*ABC*E4', 'DE*ABC*E7'], '0.39'],
        ['IEC_62196_T2', 11, ['DE*ABC*E3'], '0.39'],
      ],
    );
    assert.ok(groups.every((g) => !g.evse_ids.includes('DE*ABC*E5')));
  });

  test('order: power desc, then type, then tariff id, the no-tariff group last', () => {
    const a = tariff('A', [el([pc('ENERGY', 0.3)])]);
    const b = tariff('B', [el([pc('ENERGY', 0.3)])]);
    const evses = [
      evse('1', [conn('IEC_62196_T2', 22000, ['B'])]),
      evse('2', [conn('IEC_62196_T2', 22000, [])]),
      evse('3', [conn('IEC_62196_T2', 22000, ['A'])]),
      evse('4', [conn('DOMESTIC_F', 22000, ['A'])]),
      evse('5', [conn('IEC_62196_T2_COMBO', 150000, ['A'])]),
    ];
    const groups = derivePriceGroups(evses, lookup(a, b), BERLIN);
    assert.deepEqual(
      groups.map((g) => [g.type, g.power, g.evse_ids[0], g.is_fallback]),
      [
        ['IEC_62196_T2_COMBO', 150, 'DE*ABC*E5', false],
        ['DOMESTIC_F', 22, 'DE*ABC*E4', false],
        ['IEC_62196_T2', 22, 'DE*ABC*E3', false],
        ['IEC_62196_T2', 22, 'DE*ABC*E1', false],
        ['IEC_62196_T2', 22, 'DE*ABC*E2', true],
      ],
    );
    // Same input in another order: same output.
    assert.deepEqual(derivePriceGroups([...evses].reverse(), lookup(a, b), BERLIN), groups);
  });

  test('a station with only REMOVED EVSEs has no groups', () => {
    assert.deepEqual(derivePriceGroups([evse('1', [conn('IEC_62196_T2', 22000, ['T039'])], 'REMOVED')], lookup(FLAT_039), BERLIN), []);
  });
});

describe('price components', () => {
  test('each OCPI dimension maps to its price, with VAT and per-minute time prices', () => {
    const t = tariff('ALL4', [el([pc('ENERGY', 0.39, 19), pc('TIME', 12, 19), pc('FLAT', 1, 19), pc('PARKING_TIME', 6, 19)])]);
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['ALL4'])])], lookup(t));
    assert.equal(g.currency, 'EUR');
    assert.equal(g.is_fallback, false);
    assert.equal(g.local_datetime, '2026-07-01T14:00:00+02:00');
    assert.deepEqual(g.prices, {
      // 0.39 × 1.19 = 0.4641 -> 0.46
      kwh_price: { ALL: [item({ gross_price: '0.39', user_facing_price: '0.46', tax: 19 })] },
      // 12.00/h × 1.19 / 60 = 0.238 per minute
      time_price: { ALL: [item({ gross_price: '12.00', user_facing_price: '0.2380', tax: 19 })] },
      // 1 × 1.19
      session_fee: { ALL: [item({ gross_price: '1.00', user_facing_price: '1.19', tax: 19 })] },
      // 6.00/h × 1.19 / 60 = 0.119 per minute; no min_duration: grace 0; no max_price: no cap
      blocking_fee: { ALL: [item({ gross_price: '6.00', user_facing_price: '0.1190', tax: 19, grace_period_minutes: 0 })] },
      starting_fee: null,
    });
  });

  test('absent dimensions are null', () => {
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['T039'])])], lookup(FLAT_039));
    assert.equal(g.prices.time_price, null);
    assert.equal(g.prices.session_fee, null);
    assert.equal(g.prices.blocking_fee, null);
    assert.equal(g.prices.starting_fee, null);
  });

  test('starting fee from options, rounded half-up', () => {
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['T039'])])], lookup(FLAT_039), { ...BERLIN, startingFee: { price: '0.5', vat: '19' } });
    // 0.5 × 1.19 = 0.595 -> 0.60 (half-up)
    assert.deepEqual(g.prices.starting_fee, { ALL: [item({ gross_price: '0.50', user_facing_price: '0.60', tax: 19 })] });
  });

  test('night-cheaper element before the default: both under ALL, in tariff order', () => {
    const t = tariff('NIGHT', [el([pc('ENERGY', 0.3, 19)], { start_time: '22:00', end_time: '06:00' }), el([pc('ENERGY', 0.45, 19)])]);
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['NIGHT'])])], lookup(t));
    assert.deepEqual(g.prices.kwh_price, {
      ALL: [
        // 0.30 × 1.19 = 0.357 -> 0.36
        item({ time_from: '22:00', time_to: '06:00', gross_price: '0.30', user_facing_price: '0.36', tax: 19 }),
        // 0.45 × 1.19 = 0.5355 -> 0.54
        item({ gross_price: '0.45', user_facing_price: '0.54', tax: 19 }),
      ],
    });
    assert.equal(maxPriceOf(g), '0.54');
  });

  test('weekend-only element goes under SATURDAY and SUNDAY; the default under ALL; dates carried', () => {
    const t = tariff('WKND', [
      el([pc('ENERGY', 0.25, 19)], { day_of_week: ['SUNDAY', 'SATURDAY'] }),
      el([pc('ENERGY', 0.35, 19)], { start_date: '2026-07-01', end_date: '2026-09-01', start_time: '08:00' }),
      el([pc('ENERGY', 0.4, 19)]),
    ]);
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['WKND'])])], lookup(t));
    // 0.25 × 1.19 = 0.2975 -> 0.30
    const weekend = item({ gross_price: '0.25', user_facing_price: '0.30', tax: 19 });
    assert.deepEqual(g.prices.kwh_price, {
      SATURDAY: [weekend],
      SUNDAY: [weekend],
      ALL: [
        // 0.35 × 1.19 = 0.4165 -> 0.42
        item({ time_from: '08:00', date_from: '2026-07-01', date_to: '2026-09-01', gross_price: '0.35', user_facing_price: '0.42', tax: 19 }),
        // 0.40 × 1.19 = 0.476 -> 0.48
        item({ gross_price: '0.40', user_facing_price: '0.48', tax: 19 }),
      ],
    });
    assert.deepEqual(Object.keys(g.prices.kwh_price ?? {}), ['SATURDAY', 'SUNDAY', 'ALL']);
    assert.equal(maxPriceOf(g), '0.48');
  });

  test('an element with a component for another dimension only does not add items', () => {
    const t = tariff('MIX', [el([pc('TIME', 2, 19)], { day_of_week: ['MONDAY'] }), el([pc('ENERGY', 0.3, 19)])]);
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['MIX'])])], lookup(t));
    assert.deepEqual(Object.keys(g.prices.kwh_price ?? {}), ['ALL']);
    // 2.00/h × 1.19 / 60 = 0.039666… -> 0.0397
    assert.deepEqual(g.prices.time_price, { MONDAY: [item({ gross_price: '2.00', user_facing_price: '0.0397', tax: 19 })] });
  });
});

describe('decimals, VAT and rounding', () => {
  const priceOf = (component: OcpiPriceComponent, key: 'kwh_price' | 'time_price' = 'kwh_price') => {
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['X'])])], lookup(tariff('X', [el([component])])));
    const items = g.prices[key]?.ALL;
    assert.ok(items?.[0]);
    return items[0];
  };

  test('gross price keeps at least 2 decimals and never loses digits', () => {
    assert.equal(priceOf(pc('ENERGY', 0.3, 19)).gross_price, '0.30');
    assert.equal(priceOf(pc('ENERGY', 0.295, 19)).gross_price, '0.295');
    assert.equal(priceOf(pc('ENERGY', 0.12345, 19)).gross_price, '0.12345');
    assert.equal(priceOf(pc('ENERGY', 1, 19)).gross_price, '1.00');
    assert.equal(priceOf(pc('ENERGY', 0, 19)).gross_price, '0.00');
  });

  test('half-up on exact decimals, where binary floats would round down', () => {
    // 0.5 × 1.21 = 0.605 exactly -> 0.61. (As floats: 0.5 * 1.21 = 0.60499999… -> "0.60".)
    assert.equal((0.5 * 1.21).toFixed(2), '0.60');
    assert.equal(priceOf(pc('ENERGY', 0.5, 21)).user_facing_price, '0.61');
    // 0.35 × 1.10 = 0.385 -> 0.39
    assert.equal(priceOf(pc('ENERGY', 0.35, 10)).user_facing_price, '0.39');
    // 0.39 × 1.19 = 0.4641 -> 0.46 (down)
    assert.equal(priceOf(pc('ENERGY', 0.39, 19)).user_facing_price, '0.46');
    // 0.46 × 1.255 = 0.5773 -> 0.58 (Finland's 25.5 %)
    const fi = priceOf(pc('ENERGY', 0.46, 25.5));
    assert.equal(fi.user_facing_price, '0.58');
    assert.equal(fi.tax, 25.5);
  });

  test('no VAT in OCPI: tax 0 and the user-facing price is the gross price rounded', () => {
    const free = priceOf(pc('ENERGY', 0.295));
    assert.equal(free.tax, 0);
    assert.equal(free.user_facing_price, '0.30'); // 0.295 half-up
    assert.equal(priceOf(pc('ENERGY', 0.295, 0)).user_facing_price, '0.30');
  });

  test('time prices: per hour excl. VAT in gross, per minute incl. VAT to 4 decimals', () => {
    const t = priceOf(pc('TIME', 12, 19), 'time_price');
    assert.deepEqual([t.gross_price, t.user_facing_price, t.tax], ['12.00', '0.2380', 19]);
    // 0.003/h / 60 = 0.00005 -> 0.0001 (half-up at the 4th decimal)
    assert.equal(priceOf(pc('TIME', 0.003), 'time_price').user_facing_price, '0.0001');
    // 1.00/h × 1.2 / 60 = 0.02
    assert.equal(priceOf(pc('TIME', 1, 20), 'time_price').user_facing_price, '0.0200');
  });
});

describe('blocking fee', () => {
  test('grace period from min_duration, cap from max_price excl. VAT; other dimensions carry neither', () => {
    const t = tariff(
      'BLOCK',
      [
        el([pc('ENERGY', 0.5, 19)]),
        el([pc('PARKING_TIME', 9, 19)], { min_duration: 14400 }),
        el([pc('PARKING_TIME', 6, 19)], { start_time: '08:00', end_time: '20:00', min_duration: 90, day_of_week: ['MONDAY'] }),
      ],
      { max_price: { excl_vat: 20, incl_vat: 23.8 } },
    );
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['BLOCK'])])], lookup(t));
    assert.deepEqual(g.prices.blocking_fee, {
      // 6.00/h × 1.19 / 60 = 0.119; 90 s = 1.5 min
      MONDAY: [
        item({
          time_from: '08:00',
          time_to: '20:00',
          gross_price: '6.00',
          user_facing_price: '0.1190',
          tax: 19,
          grace_period_minutes: 1.5,
          blocking_cap: '20.00',
        }),
      ],
      // 9.00/h × 1.19 / 60 = 0.1785; 14400 s = 240 min
      ALL: [item({ gross_price: '9.00', user_facing_price: '0.1785', tax: 19, grace_period_minutes: 240, blocking_cap: '20.00' })],
    });
    // 0.5 × 1.19 = 0.595 -> 0.60
    assert.deepEqual(g.prices.kwh_price, { ALL: [item({ gross_price: '0.50', user_facing_price: '0.60', tax: 19 })] });
  });
});

describe('reservation elements', () => {
  test('are skipped', () => {
    const t = tariff('RES', [
      el([pc('TIME', 3, 19)], { reservation: 'RESERVATION' }),
      el([pc('FLAT', 2, 19)], { reservation: 'RESERVATION_EXPIRES' }),
      el([pc('ENERGY', 0.3, 19)]),
    ]);
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['RES'])])], lookup(t));
    assert.equal(g.prices.time_price, null);
    assert.equal(g.prices.session_fee, null);
    assert.deepEqual(g.prices.kwh_price, { ALL: [item({ gross_price: '0.30', user_facing_price: '0.36', tax: 19 })] });
  });
});

describe('applicable tariff', () => {
  const cheap = (id: string, extra: Partial<OcpiTariff> = {}) => tariff(id, [el([pc('ENERGY', 0.1)])], extra);
  const gross = (g: PriceGroup) => g.prices.kwh_price?.ALL?.[0]?.gross_price;

  test('expired and not-yet-valid tariffs are ignored; the bounds are inclusive', () => {
    const old = tariff('OLD', [el([pc('ENERGY', 0.2)])], { end_date_time: '2026-06-30T23:59:59Z' });
    const future = tariff('FUT', [el([pc('ENERGY', 0.3)])], { start_date_time: '2026-07-01T12:00:01Z' });
    const current = tariff('CUR', [el([pc('ENERGY', 0.4)])], { start_date_time: '2026-07-01T12:00:00Z', end_date_time: '2026-07-01T12:00:00Z' });
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['OLD', 'FUT', 'CUR'])])], lookup(old, future, current));
    assert.equal(gross(g), '0.40');
    assert.equal(g.is_fallback, false);
  });

  test('an offset-less OCPI date-time is UTC', () => {
    // Ended 11:00 UTC, an hour before now, whatever the host's zone.
    const ended = tariff('END', [el([pc('ENERGY', 0.2)])], { end_date_time: '2026-07-01T11:00:00' });
    const g = only([evse('1', [conn('IEC_62196_T2', 22000, ['END'])])], lookup(ended), {
      ...BERLIN,
      fallback: { currency: 'EUR', kwhPrice: '0.59', vat: '19' },
    });
    assert.equal(g.is_fallback, true);
  });

  test('unresolved ids are skipped; REGULAR, AD_HOC_PAYMENT or untyped beat PROFILE_*; a PROFILE_* tariff serves when it is the only one', () => {
    const profile = cheap('P', { type: 'PROFILE_CHEAP', currency: 'CHF' });
    const regular = tariff('R', [el([pc('ENERGY', 0.5)])], { type: 'REGULAR' });
    const untyped = tariff('U', [el([pc('ENERGY', 0.6)])]);
    const adhoc = tariff('H', [el([pc('ENERGY', 0.7)])], { type: 'AD_HOC_PAYMENT' });
    const find = lookup(profile, regular, untyped, adhoc);
    const at = (ids: string[]) => only([evse('1', [conn('IEC_62196_T2', 22000, ids)])], find);
    assert.equal(gross(at(['MISSING', 'P', 'R', 'U'])), '0.50');
    assert.equal(gross(at(['P', 'U', 'R'])), '0.60');
    assert.equal(gross(at(['P', 'H'])), '0.70');
    const onlyProfile = at(['MISSING', 'P']);
    assert.equal(gross(onlyProfile), '0.10');
    assert.equal(onlyProfile.currency, 'CHF');
  });
});

describe('fallback', () => {
  const FALLBACK = { currency: 'EUR', kwhPrice: '0.59', sessionFee: '0.5', vat: '19' };

  test('no tariff: the configured fallback price, is_fallback true', () => {
    const expired = tariff('EXP', [el([pc('ENERGY', 0.2)])], { end_date_time: '2026-01-01T00:00:00Z' });
    const evses = [
      evse('1', [conn('IEC_62196_T2', 22000)]),
      evse('2', [conn('IEC_62196_T2', 22000, ['EXP', 'NOPE'])]),
      evse('3', [conn('IEC_62196_T2', 22000, ['T039'])]),
    ];
    const groups = derivePriceGroups(evses, lookup(expired, FLAT_039), { ...BERLIN, fallback: FALLBACK, startingFee: { price: '0.25', vat: '19' } });
    assert.equal(groups.length, 2);
    const [tariffGroup, fallbackGroup] = groups as [PriceGroup, PriceGroup];
    assert.deepEqual(tariffGroup.evse_ids, ['DE*ABC*E3']);
    assert.equal(tariffGroup.is_fallback, false);
    assert.deepEqual(fallbackGroup.evse_ids, ['DE*ABC*E1', 'DE*ABC*E2']);
    assert.equal(fallbackGroup.is_fallback, true);
    assert.equal(fallbackGroup.currency, 'EUR');
    assert.deepEqual(fallbackGroup.prices, {
      // 0.59 × 1.19 = 0.7021 -> 0.70
      kwh_price: { ALL: [item({ gross_price: '0.59', user_facing_price: '0.70', tax: 19 })] },
      // 0.5 × 1.19 = 0.595 -> 0.60
      session_fee: { ALL: [item({ gross_price: '0.50', user_facing_price: '0.60', tax: 19 })] },
      time_price: null,
      blocking_fee: null,
      // 0.25 × 1.19 = 0.2975 -> 0.30
      starting_fee: { ALL: [item({ gross_price: '0.25', user_facing_price: '0.30', tax: 19 })] },
    });
    assert.equal(maxPriceOf(fallbackGroup), '0.70');
    // 22 kW × 1 h = 22 kWh × 0.7021 = 15.4462; + 0.595 + 0.2975 = 16.3387 -> 17
    assert.equal(fallbackGroup.pre_authorization_amount, '17.00');
  });

  test('fallback without session fee', () => {
    const g = only([evse('1', [conn('IEC_62196_T2', 22000)])], lookup(), { ...BERLIN, fallback: { currency: 'SEK', kwhPrice: '3.2', vat: '25' } });
    assert.equal(g.currency, 'SEK');
    assert.equal(g.prices.session_fee, null);
    // 3.2 × 1.25 = 4.00
    assert.deepEqual(g.prices.kwh_price, { ALL: [item({ gross_price: '3.20', user_facing_price: '4.00', tax: 25 })] });
  });

  test('no fallback configured: all components null, currency from options or XXX, hold at the minimum', () => {
    const evses = [evse('1', [conn('IEC_62196_T2', 22000)])];
    const g = only(evses, lookup(), { ...BERLIN, startingFee: { price: '0.25', vat: '19' } });
    assert.deepEqual(g.prices, { time_price: null, kwh_price: null, blocking_fee: null, session_fee: null, starting_fee: null });
    assert.equal(g.is_fallback, true);
    assert.equal(g.currency, 'XXX');
    assert.equal(g.pre_authorization_amount, '10.00');
    assert.equal(maxPriceOf(g), null);
    assert.equal(only(evses, lookup(), { ...BERLIN, currency: 'HUF' }).currency, 'HUF');
  });
});

describe('pre-authorization', () => {
  test('defaults', () => {
    assert.deepEqual(DEFAULT_PRE_AUTHORIZATION, { assumedDurationMinutes: 60, assumedEnergyKwhCap: 80, minimum: '10.00', maximum: '150.00', roundUpTo: '1' });
  });

  // Night 0.29, day 0.49 per kWh; 1.20/h charging time; 0.50 per session; a blocking fee (never held).
  const AC = tariff('AC', [
    el([pc('ENERGY', 0.29, 19)], { start_time: '22:00', end_time: '06:00' }),
    el([pc('ENERGY', 0.49, 19), pc('TIME', 1.2, 19), pc('FLAT', 0.5, 19)]),
    el([pc('PARKING_TIME', 60, 19)], { min_duration: 3600 }),
  ]);
  const ac = (options: Partial<PriceGroupOptions>) =>
    only([evse('1', [conn('IEC_62196_T2', 11000, ['AC'])])], lookup(AC), { ...BERLIN, startingFee: { price: '0.25', vat: '19' }, ...options });

  test('AC 11 kW', () => {
    // 1 h: 11 kWh × 0.5831 = 6.4141; time 1.428; session 0.595; start 0.2975 => 8.7346 -> minimum 10
    assert.equal(ac({}).pre_authorization_amount, '10.00');
    // 3 h: min(33, 80) kWh × 0.5831 = 19.2423; time 3 × 1.428 = 4.284; 0.595 + 0.2975 => 24.4188 -> 25
    assert.equal(ac({ preAuthorization: { assumedDurationMinutes: 180 } }).pre_authorization_amount, '25.00');
    assert.equal(ac({ preAuthorization: { assumedDurationMinutes: 180, roundUpTo: '5' } }).pre_authorization_amount, '25.00');
    assert.equal(ac({ preAuthorization: { assumedDurationMinutes: 180, roundUpTo: '0.5' } }).pre_authorization_amount, '24.50');
    assert.equal(ac({ preAuthorization: { assumedDurationMinutes: 180, roundUpTo: '0.01' } }).pre_authorization_amount, '24.42');
    // 10 h: energy capped at 80 kWh × 0.5831 = 46.648; time 10 × 1.428 = 14.28; 0.595 + 0.2975 => 61.8205 -> 62
    assert.equal(ac({ preAuthorization: { assumedDurationMinutes: 600 } }).pre_authorization_amount, '62.00');
  });

  const DC = tariff('DC', [el([pc('ENERGY', 0.59, 19), pc('TIME', 12, 19)]), el([pc('PARKING_TIME', 30, 19)])]);
  const dc = (rule: Partial<PreAuthorizationRule>, t = DC) =>
    only([evse('1', [conn('IEC_62196_T2_COMBO', 150000, [t.id])])], lookup(t), { ...BERLIN, preAuthorization: rule });

  test('DC 150 kW', () => {
    // 1 h: min(150, 80) = 80 kWh × 0.7021 = 56.168; time 14.28 => 70.448 -> 71
    assert.equal(dc({}).pre_authorization_amount, '71.00');
    // 3 h: 56.168 + 3 × 14.28 = 99.008 -> 100
    assert.equal(dc({ assumedDurationMinutes: 180 }).pre_authorization_amount, '100.00');
    // Clamped to the maximum: 99.008 > 95
    assert.equal(dc({ assumedDurationMinutes: 180, maximum: '95.00' }).pre_authorization_amount, '95.00');
    // A maximum that is no multiple of roundUpTo: the largest multiple below it (99), never above the maximum.
    assert.equal(dc({ assumedDurationMinutes: 180, maximum: '99.50' }).pre_authorization_amount, '99.00');
    // Raised cap: 120 kWh × 0.7021 = 84.252 + 14.28 = 98.532 -> 99
    assert.equal(dc({ assumedEnergyKwhCap: 120 }).pre_authorization_amount, '99.00');
  });

  test('clamped to the default maximum of 150', () => {
    // 80 kWh × 1.6 × 1.25 = 160 > 150
    const expensive = tariff('EXP', [el([pc('ENERGY', 1.6, 25)])]);
    assert.equal(dc({}, expensive).pre_authorization_amount, '150.00');
  });

  test('an exact multiple stays put: no rounding before the round-up', () => {
    // 15.00/h for 40 min = 10 exactly (40/60 is not a finite decimal; rounding it first would give 10.000…05 -> 11)
    const t = tariff('TIME15', [el([pc('TIME', 15)])]);
    assert.equal(dc({ assumedDurationMinutes: 40, minimum: '0' }, t).pre_authorization_amount, '10.00');
    // 15.00/h for 50 min = 12.5 -> 13
    assert.equal(dc({ assumedDurationMinutes: 50, minimum: '0' }, t).pre_authorization_amount, '13.00');
  });

  test('a bad rule throws RangeError', () => {
    const bad = (rule: Partial<PreAuthorizationRule>) => assert.throws(() => dc(rule), RangeError);
    bad({ roundUpTo: '0' });
    bad({ roundUpTo: '0.001' });
    bad({ minimum: '20', maximum: '10' });
    bad({ minimum: '-1' });
    bad({ minimum: '10.50', maximum: '10.90' }); // no multiple of 1 inside
    bad({ assumedDurationMinutes: -1 });
    bad({ assumedEnergyKwhCap: Number.NaN });
    bad({ maximum: 'lots' });
  });
});

describe('local_datetime', () => {
  const at = (iso: string, timeZone: string) =>
    only([evse('1', [conn('IEC_62196_T2', 22000, ['T039'])])], lookup(FLAT_039), { now: new Date(iso), timeZone }).local_datetime;

  test('Europe/Berlin summer and winter, and across the spring change', () => {
    assert.equal(at('2026-07-01T12:00:00Z', 'Europe/Berlin'), '2026-07-01T14:00:00+02:00');
    assert.equal(at('2026-01-15T12:00:00Z', 'Europe/Berlin'), '2026-01-15T13:00:00+01:00');
    assert.equal(at('2026-03-29T00:59:59Z', 'Europe/Berlin'), '2026-03-29T01:59:59+01:00');
    assert.equal(at('2026-03-29T01:00:00Z', 'Europe/Berlin'), '2026-03-29T03:00:00+02:00');
    assert.equal(at('2026-12-31T23:30:00.999Z', 'Europe/Berlin'), '2027-01-01T00:30:00+01:00');
  });

  test('Europe/London summer and winter (+00:00, not Z)', () => {
    assert.equal(at('2026-07-01T12:00:00Z', 'Europe/London'), '2026-07-01T13:00:00+01:00');
    assert.equal(at('2026-01-15T12:00:00Z', 'Europe/London'), '2026-01-15T12:00:00+00:00');
  });

  test('negative and half-hour offsets', () => {
    assert.equal(at('2026-07-01T12:00:00Z', 'America/St_Johns'), '2026-07-01T09:30:00-02:30');
  });

  test('an unknown time zone throws RangeError', () => {
    assert.throws(() => at('2026-07-01T12:00:00Z', 'Mars/Olympus_Mons'), RangeError);
  });
});

describe('properties', () => {
  const DIMENSIONS = ['ENERGY', 'FLAT', 'PARKING_TIME', 'TIME'] as const;
  const STANDARDS = ['IEC_62196_T2', 'IEC_62196_T2_COMBO', 'CHADEMO', 'DOMESTIC_F'];
  const cents = (n: number) => new Big(n).div(100).toFixed(2);

  const arbTariffId = fc.constantFrom('A', 'B', 'C', 'MISSING');
  const arbComponent = fc.record({
    type: fc.constantFrom(...DIMENSIONS),
    price: fc.integer({ min: 0, max: 200_000 }).map((n) => n / 10_000),
    vat: fc.option(fc.constantFrom(0, 7, 19, 21, 25.5, 27), { nil: undefined }),
  });
  const arbElement = fc.record({
    components: fc.array(arbComponent, { minLength: 1, maxLength: 4 }),
    days: fc.option(fc.subarray(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY']), { nil: undefined }),
    reservation: fc.boolean(),
  });
  const arbTariff = (id: string) =>
    fc
      .record({ elements: fc.array(arbElement, { minLength: 1, maxLength: 5 }), expired: fc.boolean(), currency: fc.constantFrom('EUR', 'HUF', 'CHF') })
      .map(({ elements, expired, currency }) =>
        tariff(
          id,
          elements.map((e) =>
            el(
              e.components.map((c) => pc(c.type, c.price, c.vat)),
              { ...(e.days ? { day_of_week: e.days } : {}), ...(e.reservation ? { reservation: 'RESERVATION' } : {}) },
            ),
          ),
          { currency, ...(expired ? { end_date_time: '2026-01-01T00:00:00Z' } : {}) },
        ),
      );
  const arbConnector = fc.record({
    standard: fc.constantFrom(...STANDARDS),
    watts: fc.option(fc.integer({ min: 0, max: 400_000 }), { nil: undefined }),
    powerType: fc.constantFrom('AC_1_PHASE', 'AC_2_PHASE', 'AC_2_PHASE_SPLIT', 'AC_3_PHASE', 'DC'),
    tariffIds: fc.array(arbTariffId, { maxLength: 3 }),
  });
  const arbEvse = fc.record({
    connectors: fc.array(arbConnector, { minLength: 1, maxLength: 3 }),
    status: fc.constantFrom('AVAILABLE', 'CHARGING', 'REMOVED', 'OUTOFORDER'),
    hasEvseId: fc.boolean(),
  });
  // minimum, a step, and a maximum with at least one multiple of the step inside [minimum, maximum].
  const arbRule = fc
    .record({
      minCents: fc.integer({ min: 0, max: 50_000 }),
      stepCents: fc.constantFrom(1, 5, 10, 50, 100, 500, 1000, 2500),
      extraSteps: fc.integer({ min: 0, max: 100 }),
      slack: fc.nat(),
      duration: fc.integer({ min: 0, max: 24 * 60 }),
      cap: fc.integer({ min: 0, max: 200 }),
    })
    .map(({ minCents, stepCents, extraSteps, slack, duration, cap }): PreAuthorizationRule => {
      const firstMultiple = Math.ceil(minCents / stepCents) * stepCents;
      const maxCents = firstMultiple + extraSteps * stepCents + (slack % stepCents);
      return { assumedDurationMinutes: duration, assumedEnergyKwhCap: cap, minimum: cents(minCents), maximum: cents(maxCents), roundUpTo: cents(stepCents) };
    });

  test('the hold is within [minimum, maximum] and a multiple of roundUpTo; every non-REMOVED EVSE is in a group', () => {
    fc.assert(
      fc.property(
        fc.array(arbEvse, { minLength: 1, maxLength: 6 }),
        arbTariff('A'),
        arbTariff('B'),
        arbTariff('C'),
        arbRule,
        fc.boolean(),
        fc.boolean(),
        (specs, a, b, c, rule, withFallback, withStartingFee) => {
          const evses = specs.map((spec, i) =>
            evse(
              `U${i}`,
              spec.connectors.map((k, j) => ({
                ...conn(k.standard, k.watts, k.tariffIds, { power_type: k.powerType, max_voltage: 230 + j, max_amperage: 16 }),
                id: String(j),
              })),
              spec.status,
              spec.hasEvseId ? `DE*ABC*E${i}` : null,
            ),
          );
          const groups = derivePriceGroups(evses, lookup(a, b, c), {
            ...BERLIN,
            preAuthorization: rule,
            ...(withFallback ? { fallback: { currency: 'EUR', kwhPrice: '0.59', sessionFee: '1', vat: '19' } } : {}),
            ...(withStartingFee ? { startingFee: { price: '0.35', vat: '19' } } : {}),
          });
          for (const g of groups) {
            assert.match(g.pre_authorization_amount, /^\d+\.\d{2}$/);
            const amount = new Big(g.pre_authorization_amount);
            assert.ok(amount.gte(rule.minimum) && amount.lte(rule.maximum), `${amount} outside [${rule.minimum}, ${rule.maximum}]`);
            assert.ok(amount.mod(rule.roundUpTo).eq(0), `${amount} is no multiple of ${rule.roundUpTo}`);
            assert.ok(g.evse_ids.length > 0);
          }
          const listed = new Set(groups.flatMap((g) => g.evse_ids));
          evses.forEach((e) => {
            const id = e.evse_id ?? e.uid;
            assert.equal(listed.has(id), e.status !== 'REMOVED', `${id} (${e.status})`);
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  test('maxPriceOf is the largest user-facing kWh price of the group', () => {
    fc.assert(
      fc.property(arbTariff('A'), (a) => {
        const [g] = derivePriceGroups([evse('1', [conn('IEC_62196_T2', 22000, ['A'])])], lookup(a), BERLIN);
        assert.ok(g);
        const all = Object.values(g.prices.kwh_price ?? {}).flat();
        const max = maxPriceOf(g);
        if (all.length === 0) assert.equal(max, null);
        else {
          assert.ok(max !== null);
          assert.ok(all.every((i) => new Big(i.user_facing_price).lte(max)));
          assert.ok(all.some((i) => i.user_facing_price === max));
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('memo', () => {
  test('a caller-owned memo gives the same groups and computes each tariff and power once', () => {
    const night = tariff('NIGHT', [
      el([pc('ENERGY', 0.29, 19)], { start_time: '22:00', end_time: '06:00' }),
      el([pc('ENERGY', 0.39, 19), pc('FLAT', 0.5, 19)]),
    ]);
    const evses = [
      evse('1', [conn('IEC_62196_T2', 22_000, ['NIGHT'])]),
      evse('2', [conn('IEC_62196_T2_COMBO', 150_000, ['T039'])]),
      evse('3', [conn('CHADEMO', 50_000)]),
    ];
    const find = lookup(night, FLAT_039);
    const memo: NonNullable<PriceGroupOptions['memo']> = new Map();
    const fallback = { currency: 'EUR', kwhPrice: '0.59', vat: '19' };
    const plain = derivePriceGroups(evses, find, { ...BERLIN, fallback });
    const first = derivePriceGroups(evses, find, { ...BERLIN, fallback, memo });
    const second = derivePriceGroups(evses, find, { ...BERLIN, fallback, memo });
    assert.deepEqual(first, plain);
    assert.deepEqual(second, plain);
    assert.equal(memo.size, 3);
    assert.equal(second[0]?.prices, first[0]?.prices, 'the memoized prices object is reused');
    // Another rule is another entry, not a stale answer.
    const strict = derivePriceGroups(evses, find, { ...BERLIN, fallback, memo, preAuthorization: { minimum: '20.00' } });
    assert.equal(memo.size, 6);
    assert.deepEqual(strict, derivePriceGroups(evses, find, { ...BERLIN, fallback, preAuthorization: { minimum: '20.00' } }));
  });
});
