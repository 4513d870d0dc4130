// The sandbox CPO's pricing: what a charging session costs under an OCPI 2.2.1
// Tariff (mod_tariffs.asciidoc, mod_cdrs.asciidoc "step_size"), computed from
// the session's charging periods. Pure, exact decimal arithmetic (big.js);
// numbers from OCPI objects are read through their decimal string.
//
// Rules, as the sandbox applies them:
// - Per dimension (ENERGY, TIME, PARKING_TIME, FLAT) the first tariff element
//   that has a component of that dimension and whose restrictions all match
//   applies; restrictions are evaluated at the start of each charging period:
//   start_time/end_time (local, [start, end), end < start wraps, end "00:00" is
//   end of day), start_date/end_date (local, [start, end)), day_of_week (local),
//   min/max_kwh (energy charged before the period), min/max_duration (seconds
//   since the session started), min/max_power (the period's average charging
//   power: ENERGY / charging time; 0 while parking), min/max_current (the
//   period's CURRENT, else MAX_CURRENT, else MIN_CURRENT dimension; 0 when
//   absent or parking). Elements with a
//   `reservation` restriction never apply (the sandbox takes no reservations).
// - A period is charging time unless it carries PARKING_TIME and no TIME
//   (then it is parking); with both, their volumes split it. Durations come
//   from the period timestamps, not from rounded volumes.
// - FLAT is billed once: from the first period in which a FLAT component applies.
// - step_size: once per session for ENERGY (total billed Wh rounded up, the
//   extra billed at the last ENERGY component used) and once for TIME and
//   PARKING_TIME together (the dimension of the last period with an applicable
//   time component: its total billed seconds rounded up, the extra billed at
//   that component's price). step_size 0 means no rounding.
// - VAT per component (absent: no VAT, incl = excl). min_price/max_price clamp
//   the total excl. VAT and incl. VAT separately (a bound without incl_vat
//   scales with the session's VAT ratio).
// - Every amount is exact until the end; each total is then rounded half-up to
//   the currency's minor unit (2 decimals; 0 for ISK).
import Big from 'big.js';
import type { OcpiPriceComponent, OcpiTariff, OcpiTariffRestrictions } from '../../ocpi/locations-tariffs.ts';
import type { ChargingPeriod } from '../../ocpi/sessions.ts';

export type TariffDimension = OcpiPriceComponent['type'];

export interface Price {
  excl_vat: number;
  incl_vat: number;
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
}

export interface SessionCosts {
  total_cost: Price;
  total_fixed_cost?: Price;
  total_energy: number;
  total_energy_cost?: Price;
  /** Hours from start to end. */
  total_time: number;
  total_time_cost?: Price;
  total_parking_time: number;
  total_parking_cost?: Price;
}

const ZERO = new Big(0);
const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
const SHORT_WEEKDAYS: Record<string, (typeof WEEKDAYS)[number]> = {
  Mon: 'MONDAY',
  Tue: 'TUESDAY',
  Wed: 'WEDNESDAY',
  Thu: 'THURSDAY',
  Fri: 'FRIDAY',
  Sat: 'SATURDAY',
  Sun: 'SUNDAY',
};
const CURRENCY_DECIMALS: Record<string, number> = { ISK: 0, JPY: 0 };

const dec = (n: number | string): Big => new Big(typeof n === 'number' ? String(n) : n);

// ---------------------------------------------------------------------------
// Local time

interface LocalTime {
  date: string;
  /** Seconds since local midnight. */
  seconds: number;
  weekday: (typeof WEEKDAYS)[number];
}

const formatters = new Map<string, Intl.DateTimeFormat>();

export function localTime(at: Date, timeZone: string): LocalTime {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    });
    formatters.set(timeZone, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(at)) parts[part.type] = part.value;
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    seconds: Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second),
    weekday: SHORT_WEEKDAYS[parts.weekday as string] ?? 'MONDAY',
  };
}

const clockSeconds = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 3600 + Number(hhmm.slice(3, 5)) * 60;

// ---------------------------------------------------------------------------
// Restrictions and applicable components

export function restrictionsMatch(r: OcpiTariffRestrictions | undefined, ctx: PricingContext): boolean {
  if (!r) return true;
  if (r.reservation !== undefined) return false;
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
  if (r.min_power !== undefined && ctx.powerKw < r.min_power) return false;
  if (r.max_power !== undefined && ctx.powerKw >= r.max_power) return false;
  if (r.min_current !== undefined && ctx.currentA < r.min_current) return false;
  if (r.max_current !== undefined && ctx.currentA >= r.max_current) return false;
  return true;
}

export interface ApplicableComponent {
  component: OcpiPriceComponent;
  element: number;
}

/** The component of `dimension` that applies in this context: the first element with one whose restrictions match. */
export function applicableComponent(tariff: OcpiTariff, dimension: TariffDimension, ctx: PricingContext): ApplicableComponent | undefined {
  for (let element = 0; element < tariff.elements.length; element++) {
    const el = tariff.elements[element] as OcpiTariff['elements'][number];
    const component = el.price_components.find((c) => c.type === dimension);
    if (component && restrictionsMatch(el.restrictions, ctx)) return { component, element };
  }
  return undefined;
}

/**
 * Which elements apply to energy and time right now: the simulation starts a
 * new charging period whenever this changes, so each period has one price.
 */
export function pricingSignature(tariff: OcpiTariff, ctx: PricingContext, charging: boolean): string {
  const energy = applicableComponent(tariff, 'ENERGY', ctx)?.element ?? -1;
  const time = applicableComponent(tariff, charging ? 'TIME' : 'PARKING_TIME', ctx)?.element ?? -1;
  const flat = applicableComponent(tariff, 'FLAT', ctx)?.element ?? -1;
  return `${energy}/${time}/${flat}`;
}

/** Session durations (s) and energies (kWh) at which some element starts or stops applying. */
export function tariffThresholds(tariff: OcpiTariff): { durationsS: number[]; kwh: number[] } {
  const durations = new Set<number>();
  const kwh = new Set<number>();
  for (const el of tariff.elements) {
    const r = el.restrictions;
    if (!r) continue;
    if (r.min_duration !== undefined) durations.add(r.min_duration);
    if (r.max_duration !== undefined) durations.add(r.max_duration);
    if (r.min_kwh !== undefined) kwh.add(r.min_kwh);
    if (r.max_kwh !== undefined) kwh.add(r.max_kwh);
  }
  return { durationsS: [...durations].sort((a, b) => a - b), kwh: [...kwh].sort((a, b) => a - b) };
}

/** Whether a tariff is valid at an instant (start_date_time inclusive, end_date_time exclusive). */
export function tariffValidAt(tariff: OcpiTariff, at: Date): boolean {
  if (tariff.start_date_time && Date.parse(tariff.start_date_time) > at.getTime()) return false;
  if (tariff.end_date_time && Date.parse(tariff.end_date_time) <= at.getTime()) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Session cost

interface Part {
  excl: Big;
  incl: Big;
  used: boolean;
}

const newPart = (): Part => ({ excl: ZERO, incl: ZERO, used: false });

function bill(part: Part, amountExcl: Big, component: OcpiPriceComponent): void {
  part.used = true;
  part.excl = part.excl.plus(amountExcl);
  part.incl = part.incl.plus(component.vat === undefined ? amountExcl : amountExcl.times(dec(component.vat).plus(100)).div(100));
}

function volume(period: ChargingPeriod, type: string): Big | undefined {
  const dim = period.dimensions.find((d) => d.type === type);
  return dim === undefined ? undefined : dec(dim.volume);
}

const round = (value: Big, decimals: number): number => Number(value.round(decimals, Big.roundHalfUp).toFixed(decimals));
const price = (excl: Big, incl: Big, decimals: number): Price => ({ excl_vat: round(excl, decimals), incl_vat: round(incl, decimals) });

export function currencyDecimals(currency: string): number {
  return CURRENCY_DECIMALS[currency] ?? 2;
}

/** Ceil(value / step) * step - value, for value >= 0 and step > 0 (exact). */
function stepRemainder(value: Big, step: number): Big {
  if (step <= 0 || value.lte(0)) return ZERO;
  const s = dec(step);
  const whole = value.div(s).round(0, Big.roundDown);
  const floor = whole.times(s);
  return floor.eq(value) ? ZERO : floor.plus(s).minus(value);
}

export interface SessionToPrice {
  tariff: OcpiTariff | undefined;
  currency: string;
  timeZone: string;
  start: Date;
  end: Date;
  periods: readonly ChargingPeriod[];
}

export function priceSession(input: SessionToPrice): SessionCosts {
  const { tariff, timeZone } = input;
  const decimals = currencyDecimals(input.currency);
  const fixed = newPart();
  const energyPart = newPart();
  const timePart = newPart();
  const parkingPart = newPart();
  let totalEnergy = ZERO;
  let totalParkingS = ZERO;
  let billedEnergy = ZERO;
  const billedSeconds = { TIME: ZERO, PARKING_TIME: ZERO };
  let lastEnergy: OcpiPriceComponent | undefined;
  let lastTime: { dimension: 'TIME' | 'PARKING_TIME'; component: OcpiPriceComponent } | undefined;
  let flatBilled = false;
  const endMs = input.end.getTime();

  input.periods.forEach((period, i) => {
    const startMs = Date.parse(period.start_date_time);
    const next = input.periods[i + 1];
    const periodEndMs = next ? Date.parse(next.start_date_time) : endMs;
    const durationS = dec(Math.max(0, periodEndMs - startMs)).div(1000);
    const energy = volume(period, 'ENERGY') ?? ZERO;
    const timeVolume = volume(period, 'TIME');
    const parkingVolume = volume(period, 'PARKING_TIME');
    let chargingS: Big;
    let parkingS: Big;
    if (timeVolume !== undefined && parkingVolume !== undefined) {
      chargingS = timeVolume.times(3600);
      parkingS = parkingVolume.times(3600);
    } else if (parkingVolume !== undefined) {
      chargingS = ZERO;
      parkingS = durationS;
    } else {
      chargingS = durationS;
      parkingS = ZERO;
    }
    const powerKw = chargingS.gt(0) ? Number(energy.times(3600).div(chargingS).toFixed(6)) : 0;
    const current = volume(period, 'CURRENT') ?? volume(period, 'MAX_CURRENT') ?? volume(period, 'MIN_CURRENT');
    const ctx: PricingContext = {
      at: new Date(startMs),
      timeZone,
      kwh: Number(totalEnergy.toString()),
      durationS: (startMs - input.start.getTime()) / 1000,
      powerKw,
      currentA: chargingS.gt(0) && current ? Number(current.toString()) : 0,
    };
    totalEnergy = totalEnergy.plus(energy);
    totalParkingS = totalParkingS.plus(parkingS);
    if (!tariff) return;

    const energyComponent = applicableComponent(tariff, 'ENERGY', ctx)?.component;
    if (energyComponent) {
      bill(energyPart, energy.times(dec(energyComponent.price)), energyComponent);
      if (energy.gt(0)) {
        billedEnergy = billedEnergy.plus(energy);
        lastEnergy = energyComponent;
      }
    }
    if (chargingS.gt(0)) {
      const c = applicableComponent(tariff, 'TIME', ctx)?.component;
      if (c) {
        bill(timePart, chargingS.times(dec(c.price)).div(3600), c);
        billedSeconds.TIME = billedSeconds.TIME.plus(chargingS);
        lastTime = { dimension: 'TIME', component: c };
      }
    }
    if (parkingS.gt(0)) {
      const c = applicableComponent(tariff, 'PARKING_TIME', ctx)?.component;
      if (c) {
        bill(parkingPart, parkingS.times(dec(c.price)).div(3600), c);
        billedSeconds.PARKING_TIME = billedSeconds.PARKING_TIME.plus(parkingS);
        lastTime = { dimension: 'PARKING_TIME', component: c };
      }
    }
    if (!flatBilled) {
      const c = applicableComponent(tariff, 'FLAT', ctx)?.component;
      if (c) {
        bill(fixed, dec(c.price), c);
        flatBilled = true;
      }
    }
  });

  if (lastEnergy) {
    const extraWh = stepRemainder(billedEnergy.times(1000), lastEnergy.step_size);
    if (extraWh.gt(0)) bill(energyPart, extraWh.div(1000).times(dec(lastEnergy.price)), lastEnergy);
  }
  if (lastTime) {
    const extraS = stepRemainder(billedSeconds[lastTime.dimension], lastTime.component.step_size);
    if (extraS.gt(0)) bill(lastTime.dimension === 'TIME' ? timePart : parkingPart, extraS.times(dec(lastTime.component.price)).div(3600), lastTime.component);
  }

  const parts = [fixed, energyPart, timePart, parkingPart];
  let excl = parts.reduce((sum, p) => sum.plus(p.excl), ZERO);
  let incl = parts.reduce((sum, p) => sum.plus(p.incl), ZERO);
  const ratio = excl.gt(0) ? incl.div(excl) : new Big(1);
  if (tariff?.min_price) {
    const minExcl = dec(tariff.min_price.excl_vat);
    const minIncl = tariff.min_price.incl_vat === undefined ? minExcl.times(ratio) : dec(tariff.min_price.incl_vat);
    if (excl.lt(minExcl)) excl = minExcl;
    if (incl.lt(minIncl)) incl = minIncl;
  }
  if (tariff?.max_price) {
    const maxExcl = dec(tariff.max_price.excl_vat);
    const maxIncl = tariff.max_price.incl_vat === undefined ? maxExcl.times(ratio) : dec(tariff.max_price.incl_vat);
    if (excl.gt(maxExcl)) excl = maxExcl;
    if (incl.gt(maxIncl)) incl = maxIncl;
  }

  const costs: SessionCosts = {
    total_cost: price(excl, incl, decimals),
    total_energy: Number(totalEnergy.toFixed(3)),
    total_time: Number(
      dec(Math.max(0, endMs - input.start.getTime()))
        .div(3_600_000)
        .toFixed(6),
    ),
    total_parking_time: Number(totalParkingS.div(3600).toFixed(6)),
  };
  if (fixed.used) costs.total_fixed_cost = price(fixed.excl, fixed.incl, decimals);
  if (energyPart.used) costs.total_energy_cost = price(energyPart.excl, energyPart.incl, decimals);
  if (timePart.used) costs.total_time_cost = price(timePart.excl, timePart.incl, decimals);
  if (parkingPart.used) costs.total_parking_cost = price(parkingPart.excl, parkingPart.incl, decimals);
  return costs;
}
