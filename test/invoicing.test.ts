// Invoicing: priceCdr (pure) on hand-built CDRs and tariffs — lines that add up
// to the engine's total plus the starting fee, VAT per line, a tariff minimum
// price as an adjustment line, the CPO's total against ours (a difference
// beyond one cent is a mismatch; policy 'cdr' bills the CDR's components) —
// then invoice numbers without gaps when many sessions are billed at once
// (direct bill() calls racing several job runners and a second issuer), and a
// bill run again for a finished session that changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Big from 'big.js';
import type { SessionRow } from '../src/modules/charging/repository.ts';
import { invoiceVatSummary } from '../src/modules/invoicing/pdf.ts';
import type { BillLine } from '../src/modules/invoicing/repository.ts';
import { createInvoicing, priceCdr } from '../src/modules/invoicing/service.ts';
import { createPaymentsService } from '../src/modules/payments/service.ts';
import { createUsersService } from '../src/modules/users/service.ts';
import type { CDR } from '../src/ocpi-protocol/cdrs.ts';
import type { OcpiEvse, OcpiLocation, OcpiTariff } from '../src/ocpi-protocol/locations-tariffs.ts';
import { createDatabase } from '../src/platform/db.ts';
import { createJobRunner } from '../src/platform/jobs.ts';
import { periodsWithEnergy } from '../src/pricing/price-cdr.ts';
import { priceSessionExact } from '../src/pricing/tariff-engine.ts';
import type { CpoSandbox } from '../src/sandbox/cpo/index.ts';
import { newDriver, startCpoNetwork } from './charging-support.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { eventually, type Owner, USERS } from './payments-support.ts';

// ---------------------------------------------------------------------------
// priceCdr

const START = '2024-06-03T10:00:00Z';
type Component = OcpiTariff['elements'][number]['price_components'][number];

function tariff(components: Component[], extra: Partial<OcpiTariff> = {}): OcpiTariff {
  return {
    country_code: 'DE',
    party_id: 'TST',
    id: 'T1',
    currency: 'EUR',
    elements: [{ price_components: components }],
    last_updated: '2024-01-01T00:00:00Z',
    ...extra,
  };
}

const flat = (price: number, vat = 19): Component => ({ type: 'FLAT', price, vat, step_size: 0 });
const energy = (price: number, vat = 19): Component => ({ type: 'ENERGY', price, vat, step_size: 1 });
const time = (pricePerHour: number, vat = 19): Component => ({ type: 'TIME', price: pricePerHour, vat, step_size: 60 });

/** A CDR of one charging period from START: `kwh` charged over `minutes`; total_cost as given (the CPO's). */
function cdr(t: OcpiTariff, kwh: number, minutes: number, costs: Partial<CDR> = {}): CDR {
  const end = new Date(Date.parse(START) + minutes * 60_000).toISOString();
  return {
    country_code: 'DE',
    party_id: 'TST',
    id: 'CDR-1',
    start_date_time: START,
    end_date_time: end,
    session_id: 'S-1',
    cdr_token: { country_code: 'DE', party_id: 'EMS', uid: 'U1', type: 'APP_USER', contract_id: 'DE-EMS-C1' },
    auth_method: 'COMMAND',
    cdr_location: {
      id: 'LOC-1',
      address: 'Street 1',
      city: 'Berlin',
      country: 'DEU',
      coordinates: { latitude: '52.520000', longitude: '13.405000' },
      evse_uid: 'E1',
      evse_id: 'DE*TST*E1',
      connector_id: '1',
      connector_standard: 'IEC_62196_T2_COMBO',
      connector_format: 'CABLE',
      connector_power_type: 'DC',
    },
    currency: 'EUR',
    tariffs: [t],
    charging_periods: [
      {
        start_date_time: START,
        dimensions: [
          { type: 'ENERGY', volume: kwh },
          { type: 'TIME', volume: minutes / 60 },
        ],
        tariff_id: t.id,
      },
    ],
    total_cost: { excl_vat: 0, incl_vat: 0 },
    total_energy: kwh,
    total_time: minutes / 60,
    last_updated: end,
    ...costs,
  } as CDR;
}

/** The engine's costs of the CDR, independently of priceCdr. */
const engineOf = (c: CDR) =>
  priceSessionExact({
    tariff: c.tariffs?.[0],
    currency: c.currency,
    timeZone: 'Europe/Berlin',
    start: new Date(c.start_date_time),
    end: new Date(c.end_date_time),
    periods: c.charging_periods,
  });

type Session = Pick<SessionRow, 'tariff' | 'time_zone' | 'starting_fee'>;
const session = (t: OcpiTariff, startingFee: SessionRow['starting_fee'] = null): Session => ({
  tariff: t,
  time_zone: 'Europe/Berlin',
  starting_fee: startingFee,
});

const total = (lines: BillLine[], field: 'net' | 'vat' | 'gross', filter: (l: BillLine) => boolean = () => true) =>
  lines
    .filter(filter)
    .reduce((sum, l) => sum.plus(l[field]), new Big(0))
    .toFixed(2);
const byComponent = (lines: BillLine[], component: BillLine['component']) => lines.find((l) => l.component === component);

/** Every line: net + VAT = gross, two decimals. */
function assertLinesConsistent(lines: BillLine[]) {
  for (const l of lines) {
    for (const field of ['net', 'vat', 'gross'] as const) assert.match(l[field], /^-?\d+\.\d{2}$/, `${l.component}.${field} ${l[field]}`);
    assert.equal(new Big(l.net).plus(l.vat).toFixed(2), l.gross, `${l.component}: net + VAT = gross`);
  }
}

describe('priceCdr', () => {
  // FLAT 0.50, 0.50/kWh, 1.20/h (per started minute), all at 19 % VAT: 10 kWh in 30 minutes.
  // Exact: net 0.50 + 5.00 + 0.60 = 6.10; gross 0.595 + 5.95 + 0.714 = 7.259 -> 7.26.
  const t = tariff([flat(0.5), energy(0.5), time(1.2)]);

  it('lines add up: the sum of gross is the engine’s total_cost.incl_vat, plus the starting fee', () => {
    const c = cdr(t, 10, 30, { total_cost: { excl_vat: 6.1, incl_vat: 7.26 } });
    const engine = engineOf(c);
    assert.equal(engine.total_cost.incl_vat, '7.26');
    const priced = priceCdr(session(t, { price: '0.40', vat: '19' }), c, 'engine');
    assert.equal(priced.currency, 'EUR');
    assert.equal(priced.engineTotal, '7.26');
    assert.equal(priced.cdrTotal, '7.26');
    assert.equal(priced.mismatch, false);
    assertLinesConsistent(priced.lines);
    assert.deepEqual(
      priced.lines.map((l) => l.component),
      ['energy', 'time', 'flat', 'starting_fee'],
    );
    assert.equal(
      total(priced.lines, 'gross', (l) => l.component !== 'starting_fee'),
      engine.total_cost.incl_vat,
    );
    assert.equal(
      total(priced.lines, 'net', (l) => l.component !== 'starting_fee'),
      engine.total_cost.excl_vat,
    );
    // The starting fee: 0.40 + 19 % = 0.476 -> 0.48.
    const fee = byComponent(priced.lines, 'starting_fee');
    assert.deepEqual([fee?.net, fee?.gross], ['0.40', '0.48']);
    assert.equal(total(priced.lines, 'gross'), '7.74');
    // The parts are the engine's, line by line.
    assert.deepEqual(
      [byComponent(priced.lines, 'energy')?.gross, byComponent(priced.lines, 'time')?.gross, byComponent(priced.lines, 'flat')?.gross],
      [engine.total_energy_cost?.incl_vat, engine.total_time_cost?.incl_vat, engine.total_fixed_cost?.incl_vat],
    );
    const kwh = byComponent(priced.lines, 'energy');
    assert.equal(kwh?.quantity, '10.000');
    assert.equal(kwh?.unit, 'kWh');
    // As the user-facing price shows it (0.50 + 19% = 0.595, half-up to the cent), not a price the user never saw.
    assert.equal(kwh?.unit_price, '0.60');
    assert.equal(byComponent(priced.lines, 'time')?.quantity, '30');
  });

  it('VAT per line: each line carries its component’s VAT and rate (19 % and 7 % on one invoice)', () => {
    // 10 kWh at 0.50 + 19 % = 5.00 / 5.95; 60 minutes at 2.00/h + 7 % = 2.00 / 2.14; exact, no rounding.
    const mixed = tariff([energy(0.5, 19), time(2, 7)]);
    const c = cdr(mixed, 10, 60, { total_cost: { excl_vat: 7, incl_vat: 8.09 } });
    const priced = priceCdr(session(mixed), c, 'engine');
    assertLinesConsistent(priced.lines);
    const kwh = byComponent(priced.lines, 'energy');
    const minutes = byComponent(priced.lines, 'time');
    assert.deepEqual([kwh?.net, kwh?.vat, kwh?.gross, kwh?.vat_rate], ['5.00', '0.95', '5.95', '19']);
    assert.deepEqual([minutes?.net, minutes?.vat, minutes?.gross, minutes?.vat_rate], ['2.00', '0.14', '2.14', '7']);
    assert.equal(byComponent(priced.lines, 'adjustment'), undefined);
    assert.equal(total(priced.lines, 'vat'), '1.09');
    assert.equal(total(priced.lines, 'gross'), priceSessionExact({ ...inputOf(c) }).total_cost.incl_vat);
  });

  it('VAT per line: the rate of a line is its component’s rate even when its amounts were rounded', () => {
    // 10.5 kWh at 0.45 (net 4.725 -> 4.73, gross 5.62275 -> 5.62), FLAT 0.50 (gross 0.595 -> 0.60), starting fee 0.30 (gross 0.357 -> 0.36): all at 19 %.
    const t19 = tariff([flat(0.5), energy(0.45), time(1.2)]);
    const c = cdr(t19, 10.5, 30, { total_cost: { excl_vat: 5.83, incl_vat: 6.93 } });
    const priced = priceCdr(session(t19, { price: '0.30', vat: '19' }), c, 'engine');
    assertLinesConsistent(priced.lines);
    for (const l of priced.lines) assert.equal(l.vat_rate, '19', `${l.component}: ${l.net} + ${l.vat} = ${l.gross} at ${l.vat_rate} %`);
    assert.deepEqual(
      invoiceVatSummary(invoiceOf(priced.lines)).map((r) => r.rate),
      ['19'],
      'one VAT rate on the invoice',
    );
  });

  it('VAT per line: a parking (blocking fee) line carries its component’s rate too', () => {
    // 10 kWh at 0.45, then 7 minutes of parking at 6.00/h (net 0.70, gross 0.833 -> 0.83), all at 19 %.
    const blocking = tariff([energy(0.45), { type: 'PARKING_TIME', price: 6, vat: 19, step_size: 60 }]);
    const c = cdr(blocking, 10, 37, {
      charging_periods: [
        {
          start_date_time: START,
          dimensions: [
            { type: 'ENERGY', volume: 10 },
            { type: 'TIME', volume: 0.5 },
          ],
          tariff_id: 'T1',
        },
        { start_date_time: '2024-06-03T10:30:00Z', dimensions: [{ type: 'PARKING_TIME', volume: 7 / 60 }], tariff_id: 'T1' },
      ],
      total_parking_time: 7 / 60,
    });
    const priced = priceCdr(session(blocking), c, 'engine');
    assertLinesConsistent(priced.lines);
    const parking = byComponent(priced.lines, 'parking');
    assert.deepEqual([parking?.quantity, parking?.net, parking?.gross], ['7', '0.70', '0.83']);
    assert.equal(parking?.vat_rate, '19');
  });

  it('a typical session has no "minimum/maximum price adjustment" line when the tariff has no minimum or maximum', () => {
    // FLAT 0.50 (gross 0.595), 1 kWh at 0.45 (gross 0.5355), 7 minutes at 1.20/h (gross 0.1666): parts 0.60 + 0.54 + 0.17 = 1.31, total 1.2971 -> 1.30.
    const t19 = tariff([flat(0.5), energy(0.45), time(1.2)]);
    const c = cdr(t19, 1, 7);
    const priced = priceCdr(session(t19), c, 'engine');
    assertLinesConsistent(priced.lines);
    assert.equal(total(priced.lines, 'gross'), engineOf(c).total_cost.incl_vat, 'the lines add up to the total');
    assert.equal(engineOf(c).total_cost.incl_vat, '1.30');
    const adjustment = byComponent(priced.lines, 'adjustment');
    assert.equal(adjustment, undefined, `a rounding difference billed as a tariff adjustment: ${JSON.stringify(adjustment)}`);
    assert.deepEqual(
      invoiceVatSummary(invoiceOf(priced.lines)).map((r) => r.rate),
      ['19'],
    );
  });

  it('rounding of the parts is not a "minimum/maximum price adjustment" with a negative VAT rate that the invoice PDF refuses', () => {
    // 1 Wh at 0.333/kWh (19 %) and 22 s at 0.777/h (7 %): net 0.000333 + 0.004748 = 0.005081 -> 0.01, the parts round to 0.00 each.
    const tiny = tariff([
      { type: 'ENERGY', price: 0.333, vat: 19, step_size: 1 },
      { type: 'TIME', price: 0.777, vat: 7, step_size: 1 },
    ]);
    const c = cdr(tiny, 0.001, 22 / 60);
    const priced = priceCdr(session(tiny), c, 'engine');
    assertLinesConsistent(priced.lines);
    assert.equal(total(priced.lines, 'gross'), engineOf(c).total_cost.incl_vat, 'the lines still add up');
    const adjustment = byComponent(priced.lines, 'adjustment');
    assert.equal(adjustment, undefined, `a rounding difference billed as a tariff adjustment: ${JSON.stringify(adjustment)}`);
    for (const l of priced.lines) assert.ok(Number(l.vat_rate) >= 0, `${l.component}: VAT rate ${l.vat_rate}`);
    invoiceVatSummary(invoiceOf(priced.lines));
  });

  it('a tariff min_price: an adjustment line brings the lines up to the minimum', () => {
    // 2 kWh at 0.50 + 19 % = 1.00 / 1.19; the tariff's minimum is 10.00 / 11.90.
    const minimum = tariff([energy(0.5)], { min_price: { excl_vat: 10, incl_vat: 11.9 } });
    const c = cdr(minimum, 2, 10, { total_cost: { excl_vat: 10, incl_vat: 11.9 } });
    const engine = engineOf(c);
    assert.deepEqual(engine.total_cost, { excl_vat: '10.00', incl_vat: '11.90' });
    const priced = priceCdr(session(minimum), c, 'engine');
    assertLinesConsistent(priced.lines);
    assert.equal(priced.mismatch, false);
    assert.deepEqual(
      priced.lines.map((l) => l.component),
      ['energy', 'adjustment'],
    );
    const kwh = byComponent(priced.lines, 'energy');
    assert.deepEqual([kwh?.net, kwh?.gross], ['1.00', '1.19']);
    const adjustment = byComponent(priced.lines, 'adjustment');
    assert.deepEqual([adjustment?.net, adjustment?.vat, adjustment?.gross, adjustment?.vat_rate], ['9.00', '1.71', '10.71', '19']);
    assert.equal(adjustment?.description, 'Tariff minimum/maximum price adjustment');
    assert.equal(total(priced.lines, 'gross'), '11.90');
    assert.equal(total(priced.lines, 'net'), '10.00');
    // The PDF's checks accept it: one VAT rate, totals that add up.
    assert.deepEqual(
      invoiceVatSummary(invoiceOf(priced.lines)).map((r) => [r.rate, r.net, r.vat, r.gross]),
      [['19', '10.00', '1.90', '11.90']],
    );
  });

  it('the CPO’s total differs from the engine by more than 0.01: mismatch; policy engine bills the engine’s lines, policy cdr the CDR’s components', () => {
    // Engine: 2 kWh at 0.50 + 19 % = 1.00 / 1.19. The CPO says 1.10 / 1.31 (energy), plus a session fee of 0.20 / 0.24.
    const t1 = tariff([energy(0.5)]);
    const c = cdr(t1, 2, 10, {
      total_cost: { excl_vat: 1.3, incl_vat: 1.55 },
      total_energy_cost: { excl_vat: 1.1, incl_vat: 1.31 },
      total_fixed_cost: { excl_vat: 0.2, incl_vat: 0.24 },
    });
    const engine = priceCdr(session(t1), c, 'engine');
    assert.equal(engine.mismatch, true);
    assert.equal(engine.engineTotal, '1.19');
    assert.equal(engine.cdrTotal, '1.55');
    assert.deepEqual(
      engine.lines.map((l) => [l.component, l.net, l.gross]),
      [['energy', '1.00', '1.19']],
    );

    const cpo = priceCdr(session(t1), c, 'cdr');
    assert.equal(cpo.mismatch, true);
    assertLinesConsistent(cpo.lines);
    assert.deepEqual(
      cpo.lines.map((l) => [l.component, l.net, l.gross]),
      [
        ['energy', '1.10', '1.31'],
        ['flat', '0.20', '0.24'],
      ],
    );
    assert.equal(total(cpo.lines, 'gross'), '1.55');

    // Policy cdr, and the CDR's components do not add up to its total: the difference is an adjustment line.
    const partial = cdr(t1, 2, 10, { total_cost: { excl_vat: 2, incl_vat: 2.38 }, total_energy_cost: { excl_vat: 1.1, incl_vat: 1.31 } });
    const adjusted = priceCdr(session(t1, { price: '0.10', vat: '19' }), partial, 'cdr');
    assert.deepEqual(
      adjusted.lines.map((l) => [l.component, l.net, l.gross]),
      [
        ['energy', '1.10', '1.31'],
        ['adjustment', '0.90', '1.07'],
        ['starting_fee', '0.10', '0.12'],
      ],
    );
    assert.equal(
      total(adjusted.lines, 'gross', (l) => l.component !== 'starting_fee'),
      '2.38',
    );
  });

  it('a difference of exactly 0.01 (either way) is no mismatch; 0.02 is', () => {
    const t1 = tariff([energy(0.5)]);
    // Engine: 1.19 incl. VAT.
    for (const [incl, mismatch] of [
      [1.2, false],
      [1.18, false],
      [1.19, false],
      [1.21, true],
      [1.17, true],
    ] as const) {
      const priced = priceCdr(session(t1), cdr(t1, 2, 10, { total_cost: { excl_vat: 1, incl_vat: incl } }), 'engine');
      assert.equal(priced.mismatch, mismatch, `CDR ${incl} against the engine's 1.19`);
      assert.equal(priced.engineTotal, '1.19');
    }
    // Without incl_vat (optional in 2.2.1, never in an OCPI 2.1.1 CDR, whose total excludes VAT), the CDR's excl_vat
    // is compared with the engine's total excluding VAT (1.00), not including it.
    const exclOnly = priceCdr(session(t1), cdr(t1, 2, 10, { total_cost: { excl_vat: 1.0 } as CDR['total_cost'] }), 'engine');
    assert.equal(exclOnly.cdrTotal, '1.00');
    assert.equal(exclOnly.mismatch, false);
    const exclOnlyHigher = priceCdr(session(t1), cdr(t1, 2, 10, { total_cost: { excl_vat: 1.19 } as CDR['total_cost'] }), 'engine');
    assert.equal(exclOnlyHigher.mismatch, true, 'excl. 1.19 against the engine’s excl. 1.00');
  });

  it('the CDR’s own tariff (by the periods’ tariff_id) prices it, not the one recorded at the start', () => {
    const atStart = tariff([energy(0.5)], { id: 'OLD' });
    const current = tariff([energy(0.6)], { id: 'NEW' });
    const c = cdr(current, 2, 10, { tariffs: [atStart, current], total_cost: { excl_vat: 1.2, incl_vat: 1.43 } });
    const priced = priceCdr(session(atStart), c, 'engine');
    assert.equal(priced.engineTotal, '1.43');
    // Without tariffs in the CDR, the session's tariff is used.
    const bare = cdr(atStart, 2, 10, { total_cost: { excl_vat: 1, incl_vat: 1.19 } });
    delete bare.tariffs;
    assert.equal(priceCdr(session(atStart), bare, 'engine').engineTotal, '1.19');
  });
});

describe('a CDR whose charging periods carry no ENERGY while total_energy > 0', () => {
  // 0.50/kWh by day (06:00-22:00 local), 0.30/kWh by night, 19 % VAT; Europe/Berlin is UTC+2 in June.
  const dayNight: OcpiTariff = {
    ...tariff([]),
    id: 'DAYNIGHT',
    elements: [
      { price_components: [energy(0.5)], restrictions: { start_time: '06:00', end_time: '22:00' } },
      { price_components: [energy(0.3)], restrictions: { start_time: '22:00', end_time: '06:00' } },
    ],
  };
  /** 21:30-22:00 and 22:00-23:30 local charging (TIME only), then 23:30-24:00 parking; 20 kWh in total. */
  const timeOnly = (): CDR =>
    cdr(dayNight, 20, 150, {
      start_date_time: '2024-06-03T19:30:00Z',
      end_date_time: '2024-06-03T22:00:00Z',
      total_time: 2.5,
      total_parking_time: 0.5,
      charging_periods: [
        { start_date_time: '2024-06-03T19:30:00Z', dimensions: [{ type: 'TIME', volume: 0.5 }], tariff_id: 'DAYNIGHT' },
        { start_date_time: '2024-06-03T20:00:00Z', dimensions: [{ type: 'TIME', volume: 1.5 }], tariff_id: 'DAYNIGHT' },
        { start_date_time: '2024-06-03T21:30:00Z', dimensions: [{ type: 'PARKING_TIME', volume: 0.5 }], tariff_id: 'DAYNIGHT' },
      ],
    });

  it('the energy comes from total_energy, spread over the charging time: each kWh at the price in force when it was charged', () => {
    const priced = priceCdr(session(dayNight), timeOnly(), 'engine');
    const line = byComponent(priced.lines, 'energy');
    // 30 of 120 charging minutes by day: 5 kWh x 0.50 + 15 kWh x 0.30 = 7.00 net, 8.33 incl. 19 % VAT (not 0 kWh).
    assert.deepEqual([line?.quantity, line?.net, line?.gross], ['20.000', '7.00', '8.33']);
    assert.equal(priced.engineTotal, '8.33');
    const periods = periodsWithEnergy(timeOnly());
    assert.deepEqual(
      periods.map((p) => p.dimensions.find((d) => d.type === 'ENERGY')?.volume),
      [5, 15, undefined],
    );
  });

  it('the shares add up to total_energy exactly; periods that carry ENERGY are taken as they are', () => {
    const thirds = cdr(tariff([energy(0.5)]), 10, 90, {
      charging_periods: [0, 30, 60].map((m) => ({
        start_date_time: new Date(Date.parse(START) + m * 60_000).toISOString(),
        dimensions: [{ type: 'TIME' as const, volume: 0.5 }],
      })),
    });
    const volumes = periodsWithEnergy(thirds).map((p) => p.dimensions.find((d) => d.type === 'ENERGY')?.volume);
    assert.deepEqual(volumes, [3.333333, 3.333333, 3.333334]);
    assert.equal(priceCdr(session(tariff([energy(0.5)])), thirds, 'engine').engineTotal, '5.95');
    const measured = cdr(tariff([energy(0.5)]), 10, 30);
    assert.deepEqual(periodsWithEnergy(measured), measured.charging_periods);
    // No energy at all: nothing to spread.
    const none = { ...timeOnly(), total_energy: 0 };
    assert.deepEqual(periodsWithEnergy(none), none.charging_periods);
  });
});

function inputOf(c: CDR) {
  return {
    tariff: c.tariffs?.[0],
    currency: c.currency,
    timeZone: 'Europe/Berlin',
    start: new Date(c.start_date_time),
    end: new Date(c.end_date_time),
    periods: c.charging_periods,
  };
}

/** A minimal invoice document of these lines (for the PDF's own checks). */
function invoiceOf(lines: BillLine[]): Parameters<typeof invoiceVatSummary>[0] {
  return {
    number: 'CA-000001',
    issueDate: new Date(START),
    currency: 'EUR',
    issuer: { name: 'Issuer', addressLines: ['Street 1'] },
    customer: { kind: 'personal', firstName: 'A', lastName: 'B', addressLines: ['Street 2'] },
    session: {
      id: 'S-1',
      evseId: 'DE*TST*E1',
      stationName: 'Station',
      stationAddress: 'Street 1',
      startTime: new Date(START),
      endTime: new Date(Date.parse(START) + 60_000),
      energyKwh: '1.000',
      operatorName: 'TST',
    },
    lines: lines.map((l) => ({ description: l.description, quantity: l.quantity, unit: l.unit, net: l.net, vatRate: l.vat_rate, vat: l.vat, gross: l.gross })),
    totals: { net: total(lines, 'net'), vat: total(lines, 'vat'), gross: total(lines, 'gross') },
    notes: [],
  };
}

// Billing many sessions at once
//
// In the test harness the payment sandbox shares the app's pool of 10 database
// connections, and the app holds a transaction open while it asks the
// processor to capture (the hold row is locked meanwhile): a dozen captures at
// once would take every connection and leave none for the sandbox to answer
// them. So the concurrent billing runs as a second service process would, on a
// pool of its own: its own payments and invoicing modules (issuers CA, the
// app's, and CB) and job runners, racing the app's own invoicing module.

describe('invoice numbers under concurrent billing', () => {
  let ctx: TestContext;
  let cpo: CpoSandbox;

  before(async () => {
    // No webhooks: payment methods and holds are read from the processor's answers.
    ctx = await setupTestApp({ listen: 0, env: { OCPI_REQUEST_TIMEOUT_MS: '1500' } });
    cpo = await startCpoNetwork(ctx);
    // The app's job runner is NOT started: the bill jobs the CDRs queue wait for the test.
  });
  after(async () => {
    await cpo?.close();
    await ctx?.close();
  });

  const driver = () => newDriver(ctx, { firstName: 'Ada', lastName: 'Lovelace' });

  /** Ordinary EVSEs (they behave like NORMAL) that we and the CPO see AVAILABLE and that can be started remotely. */
  function availableEvses(n: number): string[] {
    const found: string[] = [];
    for (let i = 1; i <= 40 && found.length < n; i++) {
      const location = cpo.network.location(`LOC-${String(i).padStart(7, '0')}`) as OcpiLocation | undefined;
      for (const e of (location?.evses ?? []) as OcpiEvse[]) {
        if (!location || !e.evse_id || found.length >= n) continue;
        if (cpo.network.status(location, e) !== 'AVAILABLE' || !e.capabilities?.includes('REMOTE_START_STOP_CAPABLE')) continue;
        if (ctx.catalogue.evse(e.evse_id)?.status === 'AVAILABLE') found.push(e.evse_id);
      }
    }
    return found;
  }

  const sessionRow = async (id: string) =>
    (await ctx.db.query<{ status: string; hold_reference: string }>('SELECT status, hold_reference FROM charging_sessions WHERE id = $1', [id])).rows[0];

  /** A second service process on the same database: its own pool, payments and invoicing (issuers CA and CB). */
  async function secondProcess() {
    const charging = ctx.modules.charging;
    assert.ok(charging);
    const { rows } = await ctx.db.query<{ name: string }>('SELECT current_database() AS name');
    const url = new URL(process.env.CA_TEST_ADMIN_URL as string);
    url.pathname = `/${rows[0]?.name}`;
    const db = createDatabase(url.toString(), { max: 40 });
    const users = createUsersService({ clock: ctx.clock, locales: ctx.config.locales });
    const payments = createPaymentsService({ db, clock: ctx.clock, processor: ctx.processor, requireUser: users.requireUser });
    const invoicing = (numberPrefix: string) =>
      createInvoicing({
        db,
        clock: ctx.clock,
        config: { ...ctx.config.invoicing, numberPrefix, pricePolicy: 'engine', publicBaseUrl: ctx.config.publicBaseUrl },
        payments,
        session: (id) => charging.sessionForBilling(id),
        cdr: ctx.ocpi.cdr,
        users,
      });
    return { db, ca: invoicing('CA'), cb: invoicing('CB') };
  }

  it('12 sessions billed at once by job runners, direct calls and two issuers: numbers 1..N per prefix, one invoice each; billing again changes nothing', async () => {
    const app = ctx.modules.invoicing;
    assert.ok(app);

    // 12 users start on 12 ordinary EVSEs (a few at a time), charge a little and stop; each CDR completes its session and queues its bill job.
    const evses = availableEvses(14);
    assert.ok(evses.length >= 12, `enough available EVSEs (${evses.length})`);
    const sessions: { d: Owner & { pm: string }; id: string }[] = [];
    for (let i = 0; i < evses.length && sessions.length < 12; i += 4) {
      const batch = evses.slice(i, Math.min(i + 4, i + 12 - sessions.length));
      const drivers: (Owner & { pm: string })[] = [];
      for (const _ of batch) drivers.push(await driver());
      const answers = await Promise.all(
        batch.map((evseId, k) =>
          ctx.call('POST', `${USERS}/${drivers[k]?.userId}/charging/start/`, {
            token: drivers[k]?.token,
            body: { payment_method_id: drivers[k]?.pm, evse_id: evseId },
          }),
        ),
      );
      answers.forEach((res, k) => {
        if (res.status === 201) sessions.push({ d: drivers[k] as Owner & { pm: string }, id: res.body.id });
      });
    }
    assert.equal(sessions.length, 12, 'twelve sessions started');
    const get = (d: Owner, id: string) => ctx.call('GET', `${USERS}/${d.userId}/charging-sessions/${id}/`, { token: d.token });
    for (const { d, id } of sessions) {
      // Charging began (or, on a busy machine where the sandbox filled the car before this poll, is already over).
      const begun = ['active', 'stopping', 'completed'];
      await eventually(async () => (begun.includes((await get(d, id)).body.status) ? true : undefined), `session ${id} active`, 30_000);
      const res = await ctx.call('POST', `${USERS}/${d.userId}/charging/stop/${id}/`, { token: d.token });
      // A car the sandbox filled meanwhile: the operator ended the session itself and refuses the stop (or we saw it
      // completed already); its CDR still comes.
      const endedByItself = (res.status === 424 && /already completed/.test(res.text)) || (res.status === 409 && /already_stopped/.test(res.text));
      assert.ok(res.status === 204 || endedByItself, res.text);
    }
    const ids = sessions.map((s) => s.id);
    for (const id of ids) await eventually(async () => ((await sessionRow(id))?.status === 'completed' ? true : undefined), `session ${id} completed`, 15_000);
    const queued = await ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE queue = 'invoicing.bill' AND state = 'queued'");
    assert.equal(queued.rows[0]?.n, ids.length, 'one bill job per completed session, waiting');
    assert.equal((await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM invoices')).rows[0]?.n, 0);

    const other = await secondProcess();
    try {
      const runners = [1, 2, 3].map((i) =>
        createJobRunner({
          db: other.db,
          clock: ctx.clock,
          handlers: { 'invoicing.bill': (payload: never) => other.ca.bill((payload as { session_id: string }).session_id) },
          concurrency: 4,
          pollMs: 50,
          id: `runner-${i}`,
        }),
      );
      const half = ids.length / 2;
      await Promise.all([
        ...runners.map((r) => r.runDue()),
        // Every session billed directly too, twice, racing the runners; the second half also by issuer CB.
        ...ids.map((id) => other.ca.bill(id)),
        ...ids.map((id) => other.ca.bill(id)),
        ...ids.slice(half).map((id) => other.cb.bill(id)),
        ...ids.slice(half).map((id) => other.cb.bill(id)),
        // The app's own module, one session at a time (its pool is the one the payment sandbox answers from).
        (async () => {
          for (const id of [...ids].reverse()) await app.bill(id);
        })(),
      ]);

      const { rows: invoices } = await ctx.db.query<{ issuer: string; number: number; number_text: string; session_id: string; gross: number }>(
        'SELECT issuer, number, number_text, session_id, gross FROM invoices ORDER BY issuer, number',
      );
      assert.equal(invoices.length, ids.length, 'one invoice per session');
      assert.deepEqual([...new Set(invoices.map((i) => i.session_id))].sort(), [...ids].sort());
      const byIssuer = Map.groupBy(invoices, (i) => i.issuer);
      assert.ok(byIssuer.has('CA'));
      for (const [issuer, list] of byIssuer) {
        assert.deepEqual(
          list.map((i) => i.number),
          Array.from({ length: list.length }, (_, k) => k + 1),
          `${issuer}: 1..${list.length} without gaps or duplicates`,
        );
        for (const i of list) assert.equal(i.number_text, `${issuer}-${String(i.number).padStart(6, '0')}`);
      }
      const counters = await ctx.db.query<{ issuer: string; last_number: number }>('SELECT issuer, last_number FROM invoice_counters ORDER BY issuer');
      assert.deepEqual(
        counters.rows.map((c) => [c.issuer, c.last_number]),
        [...byIssuer.entries()].map(([issuer, list]) => [issuer, list.length]).sort(),
        'no number was taken and lost',
      );
      // Each session's money: captured once, for its total.
      for (const id of ids) {
        const row = await sessionRow(id);
        const hold = (
          await ctx.db.query<{ status: string; amount: number; amount_captured: number }>(
            'SELECT status, amount, amount_captured FROM payment_holds WHERE reference = $1',
            [row?.hold_reference],
          )
        ).rows[0];
        const bill = (
          await ctx.db.query<{ step: string; gross: number; captured: number; charged: number }>(
            'SELECT step, gross, captured, charged FROM charging_bills WHERE session_id = $1',
            [id],
          )
        ).rows[0];
        const invoice = invoices.find((i) => i.session_id === id);
        assert.equal(bill?.step, 'invoiced');
        assert.ok((bill?.gross ?? 0) > 0);
        assert.equal(bill?.gross, invoice?.gross);
        assert.equal(hold?.status, 'captured');
        assert.equal(hold?.amount_captured, Math.min(bill?.gross ?? -1, hold?.amount ?? -1));
        assert.equal((bill?.captured ?? 0) + (bill?.charged ?? 0), bill?.gross);
      }
      const captures = ctx.sandbox.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/capture'));
      assert.equal(captures.length, ids.length, 'one capture request per session, however many bill runs raced');
      const jobs = await ctx.db.query<{ state: string; n: number }>("SELECT state, count(*)::int AS n FROM jobs WHERE queue = 'invoicing.bill' GROUP BY state");
      assert.deepEqual(
        jobs.rows.map((j) => [j.state, j.n]),
        [['done', ids.length]],
      );

      // Billing a finished session again (directly, as a job, by either issuer): nothing changes, nothing is sent to the processor.
      const snapshot = async () => ({
        holds: (
          await ctx.db.query(
            'SELECT reference, status, amount_captured, updated_at FROM payment_holds WHERE reference IN (SELECT hold_reference FROM charging_sessions WHERE id = ANY($1)) ORDER BY reference',
            [ids],
          )
        ).rows,
        bills: (await ctx.db.query('SELECT session_id, step, captured, charged, updated_at FROM charging_bills ORDER BY session_id')).rows,
        invoices: (await ctx.db.query('SELECT id, number_text, session_id FROM invoices ORDER BY id')).rows,
        counters: (await ctx.db.query('SELECT issuer, last_number FROM invoice_counters ORDER BY issuer')).rows,
      });
      const before = await snapshot();
      const posts = ctx.sandbox.requestLog.filter((r) => r.method === 'POST').length;
      ctx.clock.advance(60_000);
      await Promise.all([...ids.map((id) => other.ca.bill(id)), ...ids.map((id) => other.cb.bill(id)), ...ids.map((id) => app.bill(id))]);
      assert.equal(await app.reconcile(ids), 0, 'nothing left to bill');
      await Promise.all(runners.map((r) => r.runDue()));
      assert.deepEqual(await snapshot(), before);
      assert.equal(ctx.sandbox.requestLog.filter((r) => r.method === 'POST').length, posts, 'no capture, charge or release was sent again');
      // The API lists one invoice per user.
      for (const { d } of sessions) {
        const listed = await ctx.call('GET', `${USERS}/${d.userId}/invoices/`, { token: d.token });
        assert.equal(listed.body.count, 1, listed.text);
      }
    } finally {
      await other.db.close();
    }
  });
});
