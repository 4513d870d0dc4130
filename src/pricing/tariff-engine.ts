// The project's OCPI 2.2.1 tariff engine: what a charging session costs under
// a Tariff (mod_tariffs.asciidoc, mod_cdrs.asciidoc "step_size"), computed
// from the session's charging periods. The eMSP uses it to price CDRs and to
// estimate live sessions (money as exact decimal strings: priceSessionExact;
// priceSession gives OCPI JSON numbers). The sandbox CPO deliberately bills
// with its own implementation (src/sandbox/cpo/billing.ts), as a real CPO
// does; test/cpo-cdr-pricing.property.test.ts checks that this engine
// reproduces its CDRs to the cent. Pure, exact decimal arithmetic (big.js);
// numbers from OCPI objects are read through their decimal string.
//
// Rules:
// - Per dimension (ENERGY, TIME, PARKING_TIME, FLAT) the first tariff element
//   that has a component of that dimension and whose restrictions all match
//   applies; restrictions are evaluated at the start of each charging period:
//   start_time/end_time (local, [start, end), end < start wraps, end "00:00" is
//   end of day), start_date/end_date (local, [start, end)), day_of_week (local),
//   min/max_kwh (energy charged before the period), min/max_duration (seconds
//   since the session started), min/max_power and min/max_current on the
//   charging power and current all through the period (OCPI: the element "is/
//   becomes active" while the EV charges with at least min_power, "MUST no
//   longer be active when the charging power drops below"): min_power against
//   the period's MIN_POWER, max_power against its MAX_POWER (the lowest and
//   highest power the CPO measured in it); a period without them: its average
//   power, ENERGY / charging time. Current likewise: MIN_CURRENT / MAX_CURRENT,
//   else CURRENT, else the other of the two; 0 when absent. Power and current
//   are 0 while parking. (The average alone misjudged short periods: their
//   ENERGY, read from a meter in whole Wh, can be 0 at 3.7 kW.)
// - Reservations: a period that carries RESERVATION_TIME and none of TIME,
//   PARKING_TIME and ENERGY is reservation time. It is priced only by elements
//   with a `reservation` restriction (their other restrictions apply too):
//   their TIME component prices the reserved time, their FLAT component is
//   billed once; for a reservation that expired, RESERVATION_EXPIRES elements
//   come first, then RESERVATION elements (mod_tariffs, ReservationRestrictionType
//   note). A reservation expired when the session has only reservation periods
//   (or as the caller says). Reserved time is rounded to its own step_size once
//   (examples "Tariff example with reservation price and fee" / "... expire
//   fee"). Reservation elements never apply to other periods, and
//   min/max_duration count from the first period that is not a reservation.
// - A period is charging time unless it carries PARKING_TIME and no TIME
//   (then it is parking); with both, their volumes split it. Durations come
//   from the period timestamps, not from rounded volumes.
// - FLAT is billed once: from the first period in which a FLAT component applies.
// - step_size (mod_cdrs: "only ... once per session for ENERGY and once for
//   PARKING_TIME and TIME combined", "the step_size of the last relevant
//   PriceComponent", "uses the total amount of a certain unit used during a
//   session"): ENERGY's total billed Wh rounded up, the extra billed at the last
//   ENERGY component used; for time, the dimension of the last period with an
//   applicable time component ("when TIME and PARKING_TIME Tariff Elements are
//   both used, step_size is only taken into account for the total parking
//   duration"): its total billed seconds rounded up, the extra billed at that
//   component's price. step_size 0 (OCPI requires the field and gives no
//   minimum) means no rounding.
// - VAT per component (absent: no VAT, incl = excl; 0 is 0 %). min_price and
//   max_price clamp the total excl. VAT and incl. VAT separately (the notes
//   under the Tariff object: "they both apply"). A bound without incl_vat:
//   OCPI is silent; it scales with the session's own incl./excl. ratio.
// - Rounding: OCPI leaves it to "applicable laws, contracts between the parties
//   ... and the currency" (mod_tariffs NOTE); contract.md only requires money
//   computed exactly as decimals, never binary floats. So every amount is exact
//   until the end, and each total (total_cost and each total_*_cost on its own)
//   is rounded half up, once, to the currency's minor unit (platform/money.ts,
//   ISO 4217: 2 decimals, 0 for ISK and JPY); the bill's lines reconcile the
//   parts with the total (price-cdr.ts). Amounts are kept multiplied by 3600
//   (currency x seconds per hour) so that time prices need no division before
//   that final, exact rounding.

import Big from 'big.js';
import type { OcpiPriceComponent, OcpiTariff, OcpiTariffRestrictions } from '../ocpi-protocol/locations-tariffs.ts';
import type { ChargingPeriod } from '../ocpi-protocol/sessions.ts';
import { currencyExponent } from '../platform/money.ts';
import { localTime } from './local-time.ts';

export type TariffDimension = OcpiPriceComponent['type'];
export type ReservationKind = 'RESERVATION' | 'RESERVATION_EXPIRES';

export interface Price {
  excl_vat: number;
  incl_vat: number;
}

/** A Price as exact decimal strings with the currency's minor-unit decimals ("12.40"; "1240" for ISK). */
export interface ExactPrice {
  excl_vat: string;
  incl_vat: string;
}

/** An amount before rounding: exact, except that values that do not end within 20 decimals are cut there. */
export interface UnroundedPrice {
  excl_vat: Big;
  incl_vat: Big;
}

/** What is known at an instant of a session; tariff restrictions are evaluated against it. */
export interface PricingContext {
  at: Date;
  /** The location's IANA time zone. */
  timeZone: string;
  /** Energy charged before this instant, kWh. */
  kwh: number;
  /** Seconds since the session started. */
  durationS: number;
  /** Charging power, kW (0 when not charging). */
  powerKw: number;
  /** Charging current summed over the phases, A (0 when not charging). */
  currentA: number;
  /**
   * The lowest and highest power (kW) and current (A) reached in the period, when the CPO reported them:
   * min_power/min_current compare the lowest, max_power/max_current the highest; absent, powerKw and currentA.
   */
  range?: { minPowerKw?: number; maxPowerKw?: number; minCurrentA?: number; maxCurrentA?: number };
  /**
   * Set while pricing reservation time: then only elements with a `reservation`
   * restriction apply (RESERVATION_EXPIRES: those of either kind). Absent, they never apply.
   */
  reservation?: ReservationKind;
}

interface Costs<P, V> {
  total_cost: P;
  total_fixed_cost?: P;
  total_energy: V;
  total_energy_cost?: P;
  /** Hours from start to end. */
  total_time: V;
  total_time_cost?: P;
  total_parking_time: V;
  total_parking_cost?: P;
  total_reservation_cost?: P;
}

/** The costs as OCPI numbers (CDR and Session fields), rounded to the currency's minor unit. */
export type SessionCosts = Costs<Price, number>;
/** The same breakdown as exact decimal strings: money with the currency's decimals, energy with 3, hours with 6. */
export type ExactSessionCosts = Costs<ExactPrice, string>;
/** The same breakdown before any rounding (total_energy, total_time and total_parking_time in kWh and hours). */
export type UnroundedSessionCosts = Costs<UnroundedPrice, Big>;

const ZERO = new Big(0);
const HOUR_S = 3600;
const dec = (n: number | string): Big => new Big(typeof n === 'number' ? String(n) : n);

const clockSeconds = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 3600 + Number(hhmm.slice(3, 5)) * 60;

// ---------------------------------------------------------------------------
// Restrictions and applicable components

/** Whether an element with this `reservation` restriction may apply in a context that prices `pricing` (undefined: not a reservation). */
function reservationApplies(restriction: string | undefined, pricing: ReservationKind | undefined): boolean {
  if (pricing === undefined) return restriction === undefined;
  if (pricing === 'RESERVATION') return restriction === 'RESERVATION';
  return restriction === 'RESERVATION' || restriction === 'RESERVATION_EXPIRES';
}

export function restrictionsMatch(r: OcpiTariffRestrictions | undefined, ctx: PricingContext): boolean {
  if (!reservationApplies(r?.reservation, ctx.reservation)) return false;
  if (!r) return true;
  const needsLocal = r.start_time !== undefined || r.end_time !== undefined || r.start_date !== undefined || r.end_date !== undefined || r.day_of_week?.length;
  if (needsLocal) {
    const local = localTime(ctx.at, ctx.timeZone);
    if (r.start_time !== undefined || r.end_time !== undefined) {
      const start = r.start_time === undefined ? 0 : clockSeconds(r.start_time);
      let end = r.end_time === undefined ? 86_400 : clockSeconds(r.end_time);
      if (end === 0) end = 86_400;
      const inside = start <= end ? local.seconds >= start && local.seconds < end : local.seconds >= start || local.seconds < end;
      if (!inside) return false;
    }
    if (r.start_date !== undefined && local.date < r.start_date) return false;
    if (r.end_date !== undefined && local.date >= r.end_date) return false;
    if (r.day_of_week?.length && !r.day_of_week.includes(local.weekday)) return false;
  }
  if (r.min_kwh !== undefined && ctx.kwh < r.min_kwh) return false;
  if (r.max_kwh !== undefined && ctx.kwh >= r.max_kwh) return false;
  if (r.min_duration !== undefined && ctx.durationS < r.min_duration) return false;
  if (r.max_duration !== undefined && ctx.durationS >= r.max_duration) return false;
  const range = ctx.range;
  if (r.min_power !== undefined && (range?.minPowerKw ?? ctx.powerKw) < r.min_power) return false;
  if (r.max_power !== undefined && (range?.maxPowerKw ?? ctx.powerKw) >= r.max_power) return false;
  if (r.min_current !== undefined && (range?.minCurrentA ?? ctx.currentA) < r.min_current) return false;
  if (r.max_current !== undefined && (range?.maxCurrentA ?? ctx.currentA) >= r.max_current) return false;
  return true;
}

export interface ApplicableComponent {
  component: OcpiPriceComponent;
  element: number;
}

function firstApplicable(tariff: OcpiTariff, dimension: TariffDimension, ctx: PricingContext, only?: ReservationKind): ApplicableComponent | undefined {
  for (let element = 0; element < tariff.elements.length; element++) {
    const el = tariff.elements[element] as OcpiTariff['elements'][number];
    if (only !== undefined && el.restrictions?.reservation !== only) continue;
    const component = el.price_components.find((c) => c.type === dimension);
    if (component && restrictionsMatch(el.restrictions, ctx)) return { component, element };
  }
  return undefined;
}

/**
 * The component of `dimension` that applies in this context: the first element with one whose restrictions match
 * (for an expired reservation, RESERVATION_EXPIRES elements before RESERVATION ones).
 */
export function applicableComponent(tariff: OcpiTariff, dimension: TariffDimension, ctx: PricingContext): ApplicableComponent | undefined {
  if (ctx.reservation === 'RESERVATION_EXPIRES') {
    return firstApplicable(tariff, dimension, ctx, 'RESERVATION_EXPIRES') ?? firstApplicable(tariff, dimension, ctx, 'RESERVATION');
  }
  return firstApplicable(tariff, dimension, ctx);
}

/** Whether a tariff is valid at an instant (start_date_time inclusive, end_date_time exclusive). */
export function tariffValidAt(tariff: OcpiTariff, at: Date): boolean {
  if (tariff.start_date_time && Date.parse(tariff.start_date_time) > at.getTime()) return false;
  if (tariff.end_date_time && Date.parse(tariff.end_date_time) <= at.getTime()) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Money

/** Exact half-up rounding of `scaled / 3600` to `decimals` (no division before the rounding). */
function roundScaled(scaled: Big, decimals: number): Big {
  const units = scaled.times(new Big(10).pow(decimals));
  const rest = units.mod(HOUR_S);
  let whole = units.minus(rest).div(HOUR_S);
  if (rest.abs().times(2).gte(HOUR_S)) whole = rest.gt(0) ? whole.plus(1) : whole.minus(1);
  const result = whole.div(new Big(10).pow(decimals));
  return result.eq(0) ? ZERO : result;
}

// ---------------------------------------------------------------------------
// Session cost

/** Amounts multiplied by 3600 (currency x seconds per hour), so time prices stay exact. */
interface Part {
  excl: Big;
  incl: Big;
  used: boolean;
}

const newPart = (): Part => ({ excl: ZERO, incl: ZERO, used: false });

function bill(part: Part, scaledExcl: Big, component: OcpiPriceComponent): void {
  part.used = true;
  part.excl = part.excl.plus(scaledExcl);
  part.incl = part.incl.plus(component.vat === undefined ? scaledExcl : scaledExcl.times(dec(component.vat).plus(100)).div(100));
}

function volume(period: ChargingPeriod, type: string): Big | undefined {
  const dim = period.dimensions.find((d) => d.type === type);
  return dim === undefined ? undefined : dec(dim.volume);
}

const has = (period: ChargingPeriod, type: string): boolean => period.dimensions.some((d) => d.type === type);

/** Reservation time: RESERVATION_TIME without any of TIME, PARKING_TIME and ENERGY. */
const isReservation = (period: ChargingPeriod): boolean =>
  has(period, 'RESERVATION_TIME') && !has(period, 'TIME') && !has(period, 'PARKING_TIME') && !has(period, 'ENERGY');

/** Ceil(value / step) * step - value, for value >= 0 and step > 0 (exact). */
function stepRemainder(value: Big, step: number): Big {
  if (step <= 0 || value.lte(0)) return ZERO;
  const rest = value.mod(step);
  return rest.eq(0) ? ZERO : dec(step).minus(rest);
}

export interface SessionToPrice {
  tariff: OcpiTariff | undefined;
  currency: string;
  timeZone: string;
  start: Date;
  end: Date;
  periods: readonly ChargingPeriod[];
  /** Whether the session's reservation expired without charging; default: it has reservation periods only. */
  reservationExpired?: boolean;
}

interface Scaled {
  decimals: number;
  total: { excl: Big; incl: Big };
  parts: { fixed: Part; energy: Part; time: Part; parking: Part; reservation: Part };
  totalEnergy: Big;
  /** Milliseconds. */
  totalTimeMs: number;
  totalParkingS: Big;
}

type Parts = Scaled['parts'];
type TimeDimension = 'TIME' | 'PARKING_TIME';

/** What pricing the periods one by one accumulates (amounts scaled by 3600, see Part). */
interface Tally {
  parts: Parts;
  totalEnergy: Big;
  totalParkingS: Big;
  /** Energy and seconds billed by some component: what step_size rounds up once per session. */
  billedEnergy: Big;
  billedSeconds: Record<TimeDimension, Big>;
  reservedS: Big;
  lastEnergy?: OcpiPriceComponent;
  lastTime?: { dimension: TimeDimension; component: OcpiPriceComponent };
  lastReservation?: OcpiPriceComponent;
  flatBilled: boolean;
  reservationFlatBilled: boolean;
}

/** Bills the applicable FLAT component into `part` unless one was billed already; whether one is billed now. */
function billFlatOnce(part: Part, tariff: OcpiTariff, ctx: PricingContext, billed: boolean): boolean {
  if (billed) return true;
  const flat = applicableComponent(tariff, 'FLAT', ctx)?.component;
  if (!flat) return false;
  bill(part, dec(flat.price).times(HOUR_S), flat);
  return true;
}

/** A reservation period: its TIME component prices the reserved time, its FLAT component is billed once. */
function billReservationPeriod(tally: Tally, tariff: OcpiTariff, ctx: PricingContext, durationS: Big): void {
  const c = applicableComponent(tariff, 'TIME', ctx)?.component;
  if (c && durationS.gt(0)) {
    bill(tally.parts.reservation, durationS.times(dec(c.price)), c);
    tally.reservedS = tally.reservedS.plus(durationS);
    tally.lastReservation = c;
  }
  tally.reservationFlatBilled = billFlatOnce(tally.parts.reservation, tariff, ctx, tally.reservationFlatBilled);
}

/** Charging or parking seconds at the applicable component of their dimension. */
function billTime(tally: Tally, tariff: OcpiTariff, ctx: PricingContext, dimension: TimeDimension, seconds: Big): void {
  if (!seconds.gt(0)) return;
  const c = applicableComponent(tariff, dimension, ctx)?.component;
  if (!c) return;
  bill(dimension === 'TIME' ? tally.parts.time : tally.parts.parking, seconds.times(dec(c.price)), c);
  tally.billedSeconds[dimension] = tally.billedSeconds[dimension].plus(seconds);
  tally.lastTime = { dimension, component: c };
}

/** The power and current restrictions are evaluated against in a period (see the header); 0 while parking. */
function periodPowerAndCurrent(period: ChargingPeriod, energy: Big, chargingS: Big): Pick<PricingContext, 'powerKw' | 'currentA' | 'range'> {
  if (!chargingS.gt(0)) return { powerKw: 0, currentA: 0 };
  const num = (type: string) => {
    const v = volume(period, type);
    return v === undefined ? undefined : Number(v.toString());
  };
  // Full double precision: max_power applies while the power is below the bound, however little.
  const average = Number(energy.times(HOUR_S).div(chargingS).toString());
  const [minPower, maxPower, minCurrent, maxCurrent, current] = ['MIN_POWER', 'MAX_POWER', 'MIN_CURRENT', 'MAX_CURRENT', 'CURRENT'].map(num);
  const range = {
    ...(minPower === undefined ? {} : { minPowerKw: minPower }),
    ...(maxPower === undefined ? {} : { maxPowerKw: maxPower }),
    ...(minCurrent === undefined ? {} : { minCurrentA: minCurrent }),
    ...(maxCurrent === undefined ? {} : { maxCurrentA: maxCurrent }),
  };
  return { powerKw: average, currentA: current ?? maxCurrent ?? minCurrent ?? 0, range };
}

/** A session period: energy, charging time, parking time and the session's FLAT fee. */
function billSessionPeriod(
  tally: Tally,
  tariff: OcpiTariff | undefined,
  period: ChargingPeriod,
  at: Date,
  sinceStartS: number,
  durationS: Big,
  timeZone: string,
): void {
  const energy = volume(period, 'ENERGY') ?? ZERO;
  const timeVolume = volume(period, 'TIME');
  const parkingVolume = volume(period, 'PARKING_TIME');
  let chargingS: Big;
  let parkingS: Big;
  if (timeVolume !== undefined && parkingVolume !== undefined) {
    chargingS = timeVolume.times(HOUR_S);
    parkingS = parkingVolume.times(HOUR_S);
  } else if (parkingVolume !== undefined) {
    chargingS = ZERO;
    parkingS = durationS;
  } else {
    chargingS = durationS;
    parkingS = ZERO;
  }
  const ctx: PricingContext = {
    at,
    timeZone,
    kwh: Number(tally.totalEnergy.toString()),
    durationS: sinceStartS,
    ...periodPowerAndCurrent(period, energy, chargingS),
  };
  tally.totalEnergy = tally.totalEnergy.plus(energy);
  tally.totalParkingS = tally.totalParkingS.plus(parkingS);
  if (!tariff) return;

  const energyComponent = applicableComponent(tariff, 'ENERGY', ctx)?.component;
  if (energyComponent) {
    bill(tally.parts.energy, energy.times(dec(energyComponent.price)).times(HOUR_S), energyComponent);
    if (energy.gt(0)) {
      tally.billedEnergy = tally.billedEnergy.plus(energy);
      tally.lastEnergy = energyComponent;
    }
  }
  billTime(tally, tariff, ctx, 'TIME', chargingS);
  billTime(tally, tariff, ctx, 'PARKING_TIME', parkingS);
  tally.flatBilled = billFlatOnce(tally.parts.fixed, tariff, ctx, tally.flatBilled);
}

/** step_size: the billed energy, time and reserved time each rounded up once, the extra at the last component used. */
function billStepSizes(tally: Tally): void {
  const { parts, lastEnergy, lastTime, lastReservation } = tally;
  if (lastEnergy) {
    const extraWh = stepRemainder(tally.billedEnergy.times(1000), lastEnergy.step_size);
    // Wh x price / 1000 x 3600.
    if (extraWh.gt(0)) bill(parts.energy, extraWh.times(dec(lastEnergy.price)).times('3.6'), lastEnergy);
  }
  if (lastTime) {
    const extraS = stepRemainder(tally.billedSeconds[lastTime.dimension], lastTime.component.step_size);
    if (extraS.gt(0)) bill(lastTime.dimension === 'TIME' ? parts.time : parts.parking, extraS.times(dec(lastTime.component.price)), lastTime.component);
  }
  if (lastReservation) {
    const extraS = stepRemainder(tally.reservedS, lastReservation.step_size);
    if (extraS.gt(0)) bill(parts.reservation, extraS.times(dec(lastReservation.price)), lastReservation);
  }
}

/** The parts' total, clamped by the tariff's min_price and max_price (excl. and incl. VAT separately). */
function clampedTotal(tariff: OcpiTariff | undefined, parts: Parts): { excl: Big; incl: Big } {
  let excl = Object.values(parts).reduce((sum, p) => sum.plus(p.excl), ZERO);
  let incl = Object.values(parts).reduce((sum, p) => sum.plus(p.incl), ZERO);
  const rawExcl = excl;
  const rawIncl = incl;
  /** A bound incl. VAT: given, or the bound excl. VAT x the session's VAT ratio. */
  const inclBound = (boundExcl: Big, given: number | undefined): Big =>
    given !== undefined ? dec(given).times(HOUR_S) : rawExcl.gt(0) ? boundExcl.times(rawIncl).div(rawExcl) : boundExcl;
  if (tariff?.min_price) {
    const minExcl = dec(tariff.min_price.excl_vat).times(HOUR_S);
    const minIncl = inclBound(minExcl, tariff.min_price.incl_vat);
    if (excl.lt(minExcl)) excl = minExcl;
    if (incl.lt(minIncl)) incl = minIncl;
  }
  if (tariff?.max_price) {
    const maxExcl = dec(tariff.max_price.excl_vat).times(HOUR_S);
    const maxIncl = inclBound(maxExcl, tariff.max_price.incl_vat);
    if (excl.gt(maxExcl)) excl = maxExcl;
    if (incl.gt(maxIncl)) incl = maxIncl;
  }
  return { excl, incl };
}

function computeCosts(input: SessionToPrice): Scaled {
  const { tariff, timeZone } = input;
  const tally: Tally = {
    parts: { fixed: newPart(), energy: newPart(), time: newPart(), parking: newPart(), reservation: newPart() },
    totalEnergy: ZERO,
    totalParkingS: ZERO,
    billedEnergy: ZERO,
    billedSeconds: { TIME: ZERO, PARKING_TIME: ZERO },
    reservedS: ZERO,
    flatBilled: false,
    reservationFlatBilled: false,
  };
  const endMs = input.end.getTime();
  const reservation = input.periods.map(isReservation);
  const expired = input.reservationExpired ?? (input.periods.length > 0 && reservation.every(Boolean));
  // Durations (min/max_duration) count from the session's start, or from its first period after a reservation.
  const firstSession = input.periods.findIndex((_, i) => !reservation[i]);
  const sessionStartMs = firstSession > 0 ? Date.parse((input.periods[firstSession] as ChargingPeriod).start_date_time) : input.start.getTime();

  input.periods.forEach((period, i) => {
    const startMs = Date.parse(period.start_date_time);
    const next = input.periods[i + 1];
    const periodEndMs = next ? Date.parse(next.start_date_time) : endMs;
    const durationS = dec(Math.max(0, periodEndMs - startMs)).div(1000);
    if (!reservation[i]) {
      billSessionPeriod(tally, tariff, period, new Date(startMs), (startMs - sessionStartMs) / 1000, durationS, timeZone);
    } else if (tariff) {
      const ctx: PricingContext = {
        at: new Date(startMs),
        timeZone,
        kwh: 0,
        durationS: (startMs - input.start.getTime()) / 1000,
        powerKw: 0,
        currentA: 0,
        reservation: expired ? 'RESERVATION_EXPIRES' : 'RESERVATION',
      };
      billReservationPeriod(tally, tariff, ctx, durationS);
    }
  });
  billStepSizes(tally);

  return {
    decimals: currencyExponent(input.currency),
    total: clampedTotal(tariff, tally.parts),
    parts: tally.parts,
    totalEnergy: tally.totalEnergy,
    totalTimeMs: Math.max(0, endMs - input.start.getTime()),
    totalParkingS: tally.totalParkingS,
  };
}

function breakdown<M, V>(
  scaled: Scaled,
  money: (scaledAmount: Big, decimals: number) => M,
  quantity: (value: Big, decimals: number) => V,
): Costs<{ excl_vat: M; incl_vat: M }, V> {
  const { decimals, parts } = scaled;
  const price = (excl: Big, incl: Big) => ({ excl_vat: money(excl, decimals), incl_vat: money(incl, decimals) });
  const costs: Costs<{ excl_vat: M; incl_vat: M }, V> = {
    total_cost: price(scaled.total.excl, scaled.total.incl),
    total_energy: quantity(scaled.totalEnergy, 3),
    total_time: quantity(dec(scaled.totalTimeMs).div(3_600_000), 6),
    total_parking_time: quantity(scaled.totalParkingS.div(HOUR_S), 6),
  };
  if (parts.fixed.used) costs.total_fixed_cost = price(parts.fixed.excl, parts.fixed.incl);
  if (parts.energy.used) costs.total_energy_cost = price(parts.energy.excl, parts.energy.incl);
  if (parts.time.used) costs.total_time_cost = price(parts.time.excl, parts.time.incl);
  if (parts.parking.used) costs.total_parking_cost = price(parts.parking.excl, parts.parking.incl);
  if (parts.reservation.used) costs.total_reservation_cost = price(parts.reservation.excl, parts.reservation.incl);
  return costs;
}

/** The session's costs as OCPI JSON numbers. */
export function priceSession(input: SessionToPrice): SessionCosts {
  return breakdown<number, number>(
    computeCosts(input),
    (amount, decimals) => Number(roundScaled(amount, decimals).toFixed(decimals)),
    (value, decimals) => Number(value.toFixed(decimals)),
  );
}

/** The same costs as exact decimal strings (the eMSP's API): money with the currency's decimals, never through a binary float. */
export function priceSessionExact(input: SessionToPrice): ExactSessionCosts {
  return breakdown<string, string>(
    computeCosts(input),
    (amount, decimals) => roundScaled(amount, decimals).toFixed(decimals),
    (value, decimals) => value.toFixed(decimals),
  );
}

/** The same costs before rounding, as big.js values (quotients that do not end within 20 decimals are cut there). */
export function priceSessionUnrounded(input: SessionToPrice): UnroundedSessionCosts {
  return breakdown<Big, Big>(
    computeCosts(input),
    (amount) => amount.div(HOUR_S),
    (value) => value,
  );
}
