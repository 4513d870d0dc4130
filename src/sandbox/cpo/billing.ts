// The sandbox CPO's own billing: what the operator charges for a session,
// recorded meter step by meter step while the EV charges (charging.ts) and
// totalled for the Session's total_cost and the CDR, by the OCPI 2.2.1 tariff
// rules (mod_tariffs.asciidoc; mod_cdrs.asciidoc "step_size").
//
// Deliberately NOT the eMSP's tariff engine (src/pricing/tariff-engine.ts): a
// real CPO's billing is an implementation of its own, and the eMSP must
// reproduce its totals from the CDR alone. test/cpo-cdr-pricing.property.test.ts
// checks exactly that, to the cent; with one shared implementation it would
// prove nothing. What the CDR carries for it (charging.ts): a new charging
// period whenever the active elements change, ENERGY volumes read from the
// meter register (whole Wh, so they add up to what was billed), and power and
// current as measured (MIN/MAX_POWER 0.01 kW, MIN/MAX_CURRENT 0.1 A).
//
// The rules, as OCPI states them, and what we chose where it does not:
// - Per dimension the first element that has a component of that dimension and
//   whose restrictions all hold applies (mod_tariffs, Tariff object). They are
//   checked at every meter step with what the charge point measures then:
//   local time of day, date and weekday in the location's time zone; the
//   register (kWh charged before the step); the time since the start; power
//   and current (0 while idle). Reservation elements never apply (the sandbox
//   takes no reservations).
// - ENERGY is billed per Wh of the register, TIME per millisecond charging,
//   PARKING_TIME per millisecond idle (EV connected, not charging), FLAT once:
//   the first FLAT component active at some step.
// - step_size "only once per session for ENERGY and once for PARKING_TIME and
//   TIME combined" (mod_cdrs): the total energy billed is rounded up to the
//   step of the last ENERGY component that billed energy; the time of the last
//   time component used (TIME or PARKING_TIME, "the step_size of the last
//   relevant PriceComponent") is rounded up, that dimension's total only ("when
//   TIME and PARKING_TIME Tariff Elements are both used, step_size is only taken
//   into account for the total parking duration"); the extra is billed at that
//   component's price. step_size 0 (OCPI requires the field; no minimum is
//   given) bills the exact amount.
// - VAT per component; without `vat` none applies (incl = excl).
//   min_price/max_price bound the total excl. VAT and incl. VAT separately (the
//   notes under the Tariff object). A bound without incl_vat: OCPI is silent;
//   its incl. VAT value is the bound times the session's own incl./excl. ratio
//   (the eMSP's engine reads it the same way).
// - OCPI leaves rounding to the parties ("price rounding has to be done
//   according to ... contracts between the parties"); ours (contract.md:
//   money exact, never binary floats) is: every amount exact until each total
//   is rounded half up, once, to the currency's minor unit. The minor unit is
//   the platform's ISO 4217 table (platform/money.ts), the one invoices use:
//   a fact both parties share, not a pricing rule (ICU's Intl would say 0 for
//   HUF, ISO 4217 and card processors say 2).
import Big from 'big.js';
import type { OcpiPriceComponent, OcpiTariff, OcpiTariffRestrictions } from '../../ocpi-protocol/locations-tariffs.ts';
import { currencyExponent } from '../../platform/money.ts';

/** What the charge point measures at the start of a meter step. */
export interface Measure {
  atMs: number;
  /** Milliseconds since the session started. */
  sinceStartMs: number;
  /** The meter register before the step: whole Wh charged in this session. */
  registerWh: number;
  /** kW to 0.01, 0 while idle. */
  powerKw: number;
  /** Summed over the phases, A to 0.1, 0 while idle. */
  currentA: number;
  charging: boolean;
}

/** Per dimension, the index of the element whose component applies (null: none); `time` is TIME while charging, PARKING_TIME while idle. */
export interface Active {
  energy: number | null;
  time: number | null;
  flat: number | null;
  charging: boolean;
}

type TimeDimension = 'TIME' | 'PARKING_TIME';

/** What a session has used so far, per component (JSON: kept in the session's simulation state). */
export interface Ledger {
  /** Wh (ENERGY) or ms (TIME, PARKING_TIME) per element, in order of first use. */
  usage: { dimension: 'ENERGY' | TimeDimension; element: number; amount: number }[];
  lastEnergy: number | null;
  lastTime: { dimension: TimeDimension; element: number } | null;
  flat: number | null;
}

export const newLedger = (): Ledger => ({ usage: [], lastEnergy: null, lastTime: null, flat: null });

// ---------------------------------------------------------------------------
// Local time and restrictions

interface Wall {
  date: string;
  secondOfDay: number;
  weekday: string;
}

const wallFormats = new Map<string, Intl.DateTimeFormat>();

function wall(ms: number, timeZone: string): Wall {
  let format = wallFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'long',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    wallFormats.set(timeZone, format);
  }
  const part: Record<string, string> = {};
  for (const p of format.formatToParts(ms)) part[p.type] = p.value;
  return {
    date: `${part.year}-${part.month}-${part.day}`,
    secondOfDay: Number(part.hour) * 3600 + Number(part.minute) * 60 + Number(part.second),
    weekday: (part.weekday ?? '').toUpperCase(),
  };
}

const secondOfDay = (hhmm: string) => Number(hhmm.slice(0, 2)) * 3600 + Number(hhmm.slice(3)) * 60;

/** start_time inclusive, end_time exclusive; end before start wraps past midnight; end 00:00 is the end of the day. */
function inWindow(r: OcpiTariffRestrictions, second: number): boolean {
  const from = r.start_time === undefined ? 0 : secondOfDay(r.start_time);
  const until = r.end_time === undefined || r.end_time === '00:00' ? 86_400 : secondOfDay(r.end_time);
  return from <= until ? second >= from && second < until : second >= from || second < until;
}

/** min_* inclusive, max_* exclusive (mod_tariffs, TariffRestrictions), compared exactly. */
function inRange(value: number, min: number | undefined, max: number | undefined, scale = 1): boolean {
  if (min === undefined && max === undefined) return true;
  const exact = new Big(String(value));
  if (min !== undefined && exact.lt(new Big(String(min)).times(scale))) return false;
  if (max !== undefined && exact.gte(new Big(String(max)).times(scale))) return false;
  return true;
}

function holds(r: OcpiTariffRestrictions | undefined, m: Measure, timeZone: string): boolean {
  if (!r) return true;
  if (r.reservation !== undefined) return false;
  const days = r.day_of_week ?? [];
  if (r.start_time !== undefined || r.end_time !== undefined || r.start_date !== undefined || r.end_date !== undefined || days.length > 0) {
    const local = wall(m.atMs, timeZone);
    if ((r.start_time !== undefined || r.end_time !== undefined) && !inWindow(r, local.secondOfDay)) return false;
    if (r.start_date !== undefined && local.date < r.start_date) return false;
    if (r.end_date !== undefined && local.date >= r.end_date) return false;
    if (days.length > 0 && !days.includes(local.weekday as (typeof days)[number])) return false;
  }
  return (
    inRange(m.registerWh, r.min_kwh, r.max_kwh, 1000) &&
    inRange(m.sinceStartMs, r.min_duration, r.max_duration, 1000) &&
    inRange(m.powerKw, r.min_power, r.max_power) &&
    inRange(m.currentA, r.min_current, r.max_current)
  );
}

/** The elements that apply at a meter step, per dimension. */
export function activeElements(tariff: OcpiTariff, timeZone: string, m: Measure): Active {
  const matching = tariff.elements.map((el) => holds(el.restrictions, m, timeZone));
  const first = (type: OcpiPriceComponent['type']) => {
    const i = tariff.elements.findIndex((el, n) => matching[n] && el.price_components.some((c) => c.type === type));
    return i < 0 ? null : i;
  };
  return { energy: first('ENERGY'), time: first(m.charging ? 'TIME' : 'PARKING_TIME'), flat: first('FLAT'), charging: m.charging };
}

/** Equal for two steps exactly when the same components apply: the simulation starts a new charging period when it changes. */
export const activeKey = (a: Active) => `${a.charging ? 'C' : 'I'}/${a.energy}/${a.time}/${a.flat}`;

/** Where an element can start or stop applying between whole minutes: ms since the start, and registers (Wh). */
export function thresholds(tariff: OcpiTariff | undefined): { sinceStartMs: number[]; wh: number[] } {
  const ms = new Set<number>();
  const wh = new Set<number>();
  for (const { restrictions: r } of tariff?.elements ?? []) {
    for (const s of [r?.min_duration, r?.max_duration]) if (s !== undefined) ms.add(s * 1000);
    for (const kwh of [r?.min_kwh, r?.max_kwh]) if (kwh !== undefined) wh.add(Number(new Big(String(kwh)).times(1000).round(0, Big.roundUp)));
  }
  const sorted = (set: Set<number>) => [...set].sort((a, b) => a - b);
  return { sinceStartMs: sorted(ms), wh: sorted(wh) };
}

// ---------------------------------------------------------------------------
// Recording

function use(ledger: Ledger, dimension: Ledger['usage'][number]['dimension'], element: number, amount: number): void {
  const entry = ledger.usage.find((u) => u.dimension === dimension && u.element === element);
  if (entry) entry.amount += amount;
  else ledger.usage.push({ dimension, element, amount });
}

/** Books one meter step: `wh` the register's increase, `ms` its length. */
export function record(ledger: Ledger, active: Active, step: { wh: number; ms: number }): void {
  if (ledger.flat === null && active.flat !== null) ledger.flat = active.flat;
  if (active.energy !== null) {
    use(ledger, 'ENERGY', active.energy, step.wh);
    if (step.wh > 0) ledger.lastEnergy = active.energy;
  }
  if (active.time !== null && step.ms > 0) {
    const dimension = active.charging ? 'TIME' : 'PARKING_TIME';
    use(ledger, dimension, active.time, step.ms);
    ledger.lastTime = { dimension, element: active.time };
  }
}

// ---------------------------------------------------------------------------
// Money

/** An exact amount n / d in the currency (n and d exact decimals, d > 0). */
interface Fraction {
  n: Big;
  d: Big;
}

/** Amounts per part over one denominator: currency x 3,600,000 (ms per hour) x 100 (VAT percent). */
const SCALE = new Big(360_000_000);

interface Part {
  excl: Big;
  incl: Big;
  used: boolean;
}

function charge(part: Part, perMsHour: Big, c: OcpiPriceComponent): void {
  part.used = true;
  part.excl = part.excl.plus(perMsHour.times(100));
  part.incl = part.incl.plus(perMsHour.times(c.vat === undefined ? 100 : new Big(String(c.vat)).plus(100)));
}

const componentOf = (tariff: OcpiTariff, element: number, type: OcpiPriceComponent['type']) =>
  tariff.elements[element]?.price_components.find((c) => c.type === type) as OcpiPriceComponent;

/** Extra units to bill so `amount` becomes a multiple of `step` (step 0: none). */
const roundUpExtra = (amount: number, step: number) => (step > 0 && amount % step !== 0 ? step - (amount % step) : 0);

function parts(tariff: OcpiTariff, ledger: Ledger): Record<'fixed' | 'energy' | 'time' | 'parking', Part> {
  const p = { fixed: newPart(), energy: newPart(), time: newPart(), parking: newPart() };
  const partOf = (dimension: Ledger['usage'][number]['dimension']) => (dimension === 'ENERGY' ? p.energy : dimension === 'TIME' ? p.time : p.parking);
  // Wh x price x 3600 and ms x price are both "price x ms per hour" amounts.
  const perMsHour = (dimension: string, amount: number, c: OcpiPriceComponent) =>
    new Big(amount).times(String(c.price)).times(dimension === 'ENERGY' ? 3600 : 1);
  for (const u of ledger.usage) {
    const c = componentOf(tariff, u.element, u.dimension);
    charge(partOf(u.dimension), perMsHour(u.dimension, u.amount, c), c);
  }
  if (ledger.lastEnergy !== null) {
    const c = componentOf(tariff, ledger.lastEnergy, 'ENERGY');
    const wh = ledger.usage.filter((u) => u.dimension === 'ENERGY').reduce((sum, u) => sum + u.amount, 0);
    const extra = roundUpExtra(wh, c.step_size);
    if (extra > 0) charge(p.energy, perMsHour('ENERGY', extra, c), c);
  }
  if (ledger.lastTime !== null) {
    const { dimension, element } = ledger.lastTime;
    const c = componentOf(tariff, element, dimension);
    const ms = ledger.usage.filter((u) => u.dimension === dimension).reduce((sum, u) => sum + u.amount, 0);
    const extra = roundUpExtra(ms, c.step_size * 1000);
    if (extra > 0) charge(partOf(dimension), perMsHour(dimension, extra, c), c);
  }
  if (ledger.flat !== null) {
    const c = componentOf(tariff, ledger.flat, 'FLAT');
    charge(p.fixed, new Big(String(c.price)).times(3_600_000), c);
  }
  return p;
}

function newPart(): Part {
  return { excl: new Big(0), incl: new Big(0), used: false };
}

const lessThan = (a: Fraction, b: Fraction) => a.n.times(b.d).lt(b.n.times(a.d));

/** min_price and max_price on a total excl. and incl. VAT (see the header for a bound without incl_vat). */
function bounded(tariff: OcpiTariff, excl: Fraction, incl: Fraction): { excl: Fraction; incl: Fraction } {
  const one = new Big(1);
  const inclOf = (bound: { excl_vat: number; incl_vat?: number }): Fraction =>
    bound.incl_vat !== undefined
      ? { n: new Big(String(bound.incl_vat)), d: one }
      : excl.n.gt(0)
        ? { n: new Big(String(bound.excl_vat)).times(incl.n), d: excl.n }
        : { n: new Big(String(bound.excl_vat)), d: one };
  let result = { excl, incl };
  if (tariff.min_price) {
    const min = { excl: { n: new Big(String(tariff.min_price.excl_vat)), d: one }, incl: inclOf(tariff.min_price) };
    result = { excl: lessThan(result.excl, min.excl) ? min.excl : result.excl, incl: lessThan(result.incl, min.incl) ? min.incl : result.incl };
  }
  if (tariff.max_price) {
    const max = { excl: { n: new Big(String(tariff.max_price.excl_vat)), d: one }, incl: inclOf(tariff.max_price) };
    result = { excl: lessThan(max.excl, result.excl) ? max.excl : result.excl, incl: lessThan(max.incl, result.incl) ? max.incl : result.incl };
  }
  return result;
}

/** n / d rounded half up to `digits` decimals, exactly, as an OCPI number. */
function rounded({ n, d }: Fraction, digits: number): number {
  const units = n.times(new Big(10).pow(digits));
  let whole = units.div(d).round(0, Big.roundDown);
  let rest = units.minus(whole.times(d));
  // The division itself is rounded at 20 decimals: correct the quotient by its exact remainder.
  while (rest.lt(0)) [whole, rest] = [whole.minus(1), rest.plus(d)];
  while (rest.gte(d)) [whole, rest] = [whole.plus(1), rest.minus(d)];
  if (rest.times(2).gte(d)) whole = whole.plus(1);
  return Number(whole.div(new Big(10).pow(digits)).toFixed(digits));
}

export interface Price {
  excl_vat: number;
  incl_vat: number;
}

export interface Charges {
  total_cost: Price;
  total_fixed_cost?: Price;
  total_energy_cost?: Price;
  total_time_cost?: Price;
  total_parking_cost?: Price;
}

/** What the session costs by its ledger so far: each total rounded half up to the currency's minor unit. */
export function charges(tariff: OcpiTariff | undefined, ledger: Ledger, currency: string): Charges {
  const digits = currencyExponent(currency);
  if (!tariff) return { total_cost: { excl_vat: 0, incl_vat: 0 } };
  const p = parts(tariff, ledger);
  const price = (part: Pick<Part, 'excl' | 'incl'>): Price => ({
    excl_vat: rounded({ n: part.excl, d: SCALE }, digits),
    incl_vat: rounded({ n: part.incl, d: SCALE }, digits),
  });
  const all = Object.values(p);
  const sum = (field: 'excl' | 'incl') => all.reduce((s, part) => s.plus(part[field]), new Big(0));
  const total = bounded(tariff, { n: sum('excl'), d: SCALE }, { n: sum('incl'), d: SCALE });
  return {
    total_cost: { excl_vat: rounded(total.excl, digits), incl_vat: rounded(total.incl, digits) },
    ...(p.fixed.used ? { total_fixed_cost: price(p.fixed) } : {}),
    ...(p.energy.used ? { total_energy_cost: price(p.energy) } : {}),
    ...(p.time.used ? { total_time_cost: price(p.time) } : {}),
    ...(p.parking.used ? { total_parking_cost: price(p.parking) } : {}),
  };
}
