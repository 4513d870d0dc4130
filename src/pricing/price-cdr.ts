// Pricing a CDR for the bill: the tariff engine's (or, by policy, the CPO's)
// breakdown as rounded invoice lines that add up to the total, plus our
// starting fee. Pure: no database, no clock.
import Big from 'big.js';
import type { CDR } from '../ocpi-protocol/cdrs.ts';
import type { OcpiTariff } from '../ocpi-protocol/locations-tariffs.ts';
import type { ChargingPeriod } from '../ocpi-protocol/sessions.ts';
import { currencyExponent, withVat } from '../platform/money.ts';
import { userFacingPrice } from './price-groups.ts';
import type { SessionPricing } from './session-prices.ts';
import { type ExactPrice, type ExactSessionCosts, priceSessionExact, priceSessionUnrounded, type SessionToPrice } from './tariff-engine.ts';

const ONE_CENT = new Big('0.01');

/** Decimal helpers on exact strings. */
const dec = (value: string | number) => new Big(typeof value === 'number' ? String(value) : value);

/** One line of a bill: amounts as decimal strings with the currency's decimals. */
export interface BillLine {
  component: 'energy' | 'time' | 'parking' | 'flat' | 'reservation' | 'adjustment' | 'starting_fee';
  description: string;
  quantity: string;
  unit: string;
  unit_price: string | null;
  net: string;
  vat_rate: string;
  vat: string;
  gross: string;
}

export interface Priced {
  lines: BillLine[];
  currency: string;
  engineTotal: string;
  cdrTotal: string | null;
  /**
   * The CDR's total incl. VAT differs from the engine's by more than one cent, the engine having priced a tariff of
   * the CPO's (the CDR's, else the one the session started under). Never when the engine priced our fallback
   * tariff: the CPO published none, so its total (whatever it bills us) is not the output of a tariff we could
   * check, and a difference says nothing about either implementation.
   */
  mismatch: boolean;
}

/**
 * A line from an amount excl. and incl. VAT (both already rounded to the currency's minor unit: VAT is their
 * difference). `vatRate` is the tariff's rate for the component; without one (components of several rates) it
 * is derived from the amounts.
 */
function line(
  component: BillLine['component'],
  description: string,
  quantity: string,
  unit: string,
  unitPrice: string | null,
  net: string,
  gross: string,
  currency: string,
  vatRate?: string,
): BillLine {
  const netBig = dec(net);
  const vat = dec(gross).minus(netBig);
  const rate = vatRate ?? (netBig.eq(0) ? '0' : vat.div(netBig).times(100).round(1, Big.roundHalfUp).toString());
  return {
    component,
    description,
    quantity,
    unit,
    unit_price: unitPrice,
    net: dec(net).toFixed(decimals(currency)),
    vat_rate: rate,
    vat: vat.toFixed(decimals(currency)),
    gross: dec(gross).toFixed(decimals(currency)),
  };
}

const decimals = currencyExponent;

/**
 * The unit price of a dimension in the tariff (the first component of that type; informative only), incl. VAT and
 * rounded as the user-facing price the user was shown for it (0.595 -> "0.60" per kWh), so the two never differ.
 */
function unitPriceOf(tariff: OcpiTariff | undefined, type: string, perMinute: boolean): string | null {
  for (const element of tariff?.elements ?? []) {
    const component = element.price_components.find((c) => c.type === type);
    if (component) return userFacingPrice(dec(component.price), dec(component.vat ?? 0), perMinute);
  }
  return null;
}

/** The VAT rate of a dimension's components when they all have the same one (absent VAT: 0). */
function vatRateOf(tariff: OcpiTariff | undefined, type: string): string | undefined {
  const rates = new Set<string>();
  for (const element of tariff?.elements ?? []) {
    for (const component of element.price_components) if (component.type === type) rates.add(dec(component.vat ?? 0).toString());
  }
  return rates.size === 1 ? [...rates][0] : undefined;
}

type CdrPart = { excl_vat: number; incl_vat?: number } | undefined;

/** How a CDR is priced: by our engine's breakdown, or (policy 'cdr', when the CDR has a total) by the CDR's own. */
interface Source {
  tariff: OcpiTariff | undefined;
  input: SessionToPrice;
  engine: ExactSessionCosts;
  useCdr: boolean;
  currency: string;
}

/** A component's amount from the chosen source, with the currency's decimals (undefined: not billed). */
function partOf(source: Source, exact: ExactPrice | undefined, ocpi: CdrPart): ExactPrice | undefined {
  if (!source.useCdr) return exact;
  if (!ocpi) return undefined;
  const places = decimals(source.currency);
  return { excl_vat: dec(ocpi.excl_vat).toFixed(places), incl_vat: dec(ocpi.incl_vat ?? ocpi.excl_vat).toFixed(places) };
}

/** Minutes of an hours figure, to one decimal. */
const minutesOf = (hours: Big) => hours.times(60).round(1, Big.roundHalfUp).toString();

/** The lines of the session's own components (energy, charging time, parking, session fee, reservation). */
function componentLines(source: Source, cdr: CDR): BillLine[] {
  const { tariff, engine, currency } = source;
  const lines: BillLine[] = [];
  const energy = partOf(source, engine.total_energy_cost, cdr.total_energy_cost);
  const kwh = dec(cdr.total_energy).toFixed(3);
  if (energy)
    lines.push(
      line('energy', 'Energy', kwh, 'kWh', unitPriceOf(tariff, 'ENERGY', false), energy.excl_vat, energy.incl_vat, currency, vatRateOf(tariff, 'ENERGY')),
    );
  const time = partOf(source, engine.total_time_cost, cdr.total_time_cost);
  const chargingMinutes = minutesOf(dec(cdr.total_time).minus(dec(cdr.total_parking_time ?? 0)));
  if (time) {
    const unitPrice = unitPriceOf(tariff, 'TIME', true);
    lines.push(line('time', 'Charging time', chargingMinutes, 'min', unitPrice, time.excl_vat, time.incl_vat, currency, vatRateOf(tariff, 'TIME')));
  }
  const parking = partOf(source, engine.total_parking_cost, cdr.total_parking_cost);
  const parkingMinutes = minutesOf(dec(cdr.total_parking_time ?? 0));
  if (parking) {
    const unitPrice = unitPriceOf(tariff, 'PARKING_TIME', true);
    const rate = vatRateOf(tariff, 'PARKING_TIME');
    lines.push(line('parking', 'Parking time (blocking fee)', parkingMinutes, 'min', unitPrice, parking.excl_vat, parking.incl_vat, currency, rate));
  }
  const flat = partOf(source, engine.total_fixed_cost, cdr.total_fixed_cost);
  if (flat) lines.push(line('flat', 'Session fee', '1', 'session', null, flat.excl_vat, flat.incl_vat, currency, vatRateOf(tariff, 'FLAT')));
  const reservation = partOf(source, engine.total_reservation_cost, cdr.total_reservation_cost);
  if (reservation) {
    const rate = vatRateOf(tariff, 'RESERVATION') ?? vatRateOf(tariff, 'TIME');
    lines.push(line('reservation', 'Reservation', '1', 'reservation', null, reservation.excl_vat, reservation.incl_vat, currency, rate));
  }
  return lines;
}

/**
 * Makes the lines add up to the source's total. A minimum or maximum price: the difference between the total and
 * the parts, as a line of its own. Only when a bound applied (the unrounded total differs from the unrounded parts,
 * or the CDR's total from its parts by more than their rounding): a rounding cent between separately rounded parts
 * and total is not a line, the invoice's total is the sum of its lines.
 */
function reconcileTotal(source: Source, cdr: CDR, lines: BillLine[]): void {
  const { engine, useCdr, currency, tariff } = source;
  const total = useCdr
    ? { excl_vat: dec((cdr.total_cost as { excl_vat: number }).excl_vat), incl_vat: dec(cdr.total_cost?.incl_vat ?? cdr.total_cost?.excl_vat ?? 0) }
    : { excl_vat: dec(engine.total_cost.excl_vat), incl_vat: dec(engine.total_cost.incl_vat) };
  const sumNet = lines.reduce((sum, l) => sum.plus(l.net), new Big(0));
  const sumGross = lines.reduce((sum, l) => sum.plus(l.gross), new Big(0));
  const raw = priceSessionUnrounded(source.input);
  const rawParts = [raw.total_fixed_cost, raw.total_energy_cost, raw.total_time_cost, raw.total_parking_cost, raw.total_reservation_cost].filter(
    (p) => p !== undefined,
  );
  const rawNet = rawParts.reduce((sum, p) => sum.plus(p.excl_vat), new Big(0));
  const boundApplied = useCdr ? total.excl_vat.minus(sumNet).abs().gt(ONE_CENT.times(lines.length)) : !raw.total_cost.excl_vat.eq(rawNet);
  if (!boundApplied && lines.length > 0 && (!total.excl_vat.eq(sumNet) || !total.incl_vat.eq(sumGross))) {
    // Rounding: the total (rounded once) and the separately rounded parts differ by a cent or so. The largest line
    // absorbs it, so the invoice's total is the engine's (or the CDR's) total.
    const largest = lines.reduce((a, b) => (dec(b.gross).gt(a.gross) ? b : a));
    const places = decimals(currency);
    const net = dec(largest.net).plus(total.excl_vat.minus(sumNet));
    const gross = dec(largest.gross).plus(total.incl_vat.minus(sumGross));
    largest.net = net.toFixed(places);
    largest.gross = gross.toFixed(places);
    largest.vat = gross.minus(net).toFixed(places);
  }
  if (boundApplied && (!total.excl_vat.eq(sumNet) || !total.incl_vat.eq(sumGross))) {
    const rates = new Set(lines.map((l) => l.vat_rate));
    const shared = rates.size === 1 ? [...rates][0] : undefined;
    const net = total.excl_vat.minus(sumNet).toString();
    const gross = total.incl_vat.minus(sumGross).toString();
    const rate = shared ?? vatRateOf(tariff, 'ENERGY') ?? '0';
    lines.push(line('adjustment', 'Tariff minimum/maximum price adjustment', '1', 'session', null, net, gross, currency, rate));
  }
}

/** Our starting fee as a line: net and gross each rounded half up to the currency's minor unit. */
function startingFeeLine(fee: { price: string; vat: string }, currency: string): BillLine {
  const net = dec(fee.price).round(decimals(currency), Big.roundHalfUp);
  const gross = withVat(net, fee.vat).round(decimals(currency), Big.roundHalfUp);
  return line('starting_fee', 'Starting fee', '1', 'session', null, net.toString(), gross.toString(), currency, dec(fee.vat).toString());
}

const hasDimension = (period: ChargingPeriod, type: string) => period.dimensions.some((d) => d.type === type);

/** Seconds a period charged, as the engine reads it: TIME's volume beside PARKING_TIME, none in parking or reservation alone, else its duration. */
function chargingSeconds(period: ChargingPeriod, endMs: number): Big {
  const time = period.dimensions.find((d) => d.type === 'TIME');
  if (time && hasDimension(period, 'PARKING_TIME')) return dec(time.volume).times(3600);
  if (hasDimension(period, 'PARKING_TIME') || (hasDimension(period, 'RESERVATION_TIME') && !time)) return new Big(0);
  return dec(Math.max(0, endMs - Date.parse(period.start_date_time))).div(1000);
}

/**
 * The CDR's charging periods as the engine prices them. Some CPOs report the energy only as the CDR's
 * total_energy, with no ENERGY dimension in any period: priced as they are, the session would cost 0 kWh of
 * energy. Then the total is spread over the periods in proportion to the time each one charged (a constant power
 * over the charging time; parking and reservation periods charge nothing), so a tariff whose energy price depends
 * on the time (day and night prices, min_kwh steps, power restrictions) prices each kWh at the price in force when,
 * on that assumption, it was charged. No charging time at all: the whole total goes to the first period. The shares
 * are exact to 1/1000 Wh and the last charging period takes the rest, so the periods add up to total_energy. Periods
 * that carry ENERGY are taken as they are (the CPO measured them), whatever total_energy says.
 */
export function periodsWithEnergy(
  cdr: Pick<CDR, 'charging_periods' | 'total_energy' | 'total_time' | 'total_parking_time' | 'end_date_time' | 'start_date_time'>,
): ChargingPeriod[] {
  const periods = cdr.charging_periods ?? [];
  const total = dec(cdr.total_energy);
  if (!total.gt(0) || periods.some((p) => hasDimension(p, 'ENERGY'))) return [...periods];
  if (periods.length === 0) {
    // Not valid 2.2.1 (a CDR has at least one period), but whatever reads it: one period of the CDR's own totals.
    const parking = dec(cdr.total_parking_time ?? 0);
    const dimensions: ChargingPeriod['dimensions'] = [
      { type: 'ENERGY', volume: cdr.total_energy },
      { type: 'TIME', volume: Math.max(0, Number(dec(cdr.total_time).minus(parking).toString())) },
    ];
    if (parking.gt(0)) dimensions.push({ type: 'PARKING_TIME', volume: Number(parking.toString()) });
    return [{ start_date_time: cdr.start_date_time, dimensions }];
  }
  const endMs = Date.parse(cdr.end_date_time);
  const seconds = periods.map((p, i) => chargingSeconds(p, i + 1 < periods.length ? Date.parse((periods[i + 1] as ChargingPeriod).start_date_time) : endMs));
  const allSeconds = seconds.reduce((sum, x) => sum.plus(x), new Big(0));
  const shares = allSeconds.gt(0) ? seconds.map((x) => x.div(allSeconds)) : seconds.map((_, i) => new Big(i === 0 ? 1 : 0));
  const last = shares.reduce((at, share, i) => (share.gt(0) ? i : at), 0);
  let given = new Big(0);
  return periods.map((period, i) => {
    const share = shares[i] as Big;
    if (!share.gt(0)) return period;
    const kwh = i === last ? total.minus(given) : total.times(share).round(6, Big.roundHalfUp);
    given = given.plus(kwh);
    return { ...period, dimensions: [...period.dimensions, { type: 'ENERGY', volume: Number(kwh.toString()) }] };
  });
}

/** What the engine prices a CDR with: the CDR's tariff (else the session's), periods (energy from total_energy when they carry none, see periodsWithEnergy) and times, in the location's time zone. */
export function cdrPricingInput(session: Pick<SessionPricing, 'tariff' | 'time_zone'>, cdr: CDR): SessionToPrice {
  const tariffIds = new Set((cdr.charging_periods ?? []).map((p) => p.tariff_id).filter(Boolean));
  return {
    tariff: cdr.tariffs?.find((t) => tariffIds.has(t.id)) ?? cdr.tariffs?.[0] ?? session.tariff,
    currency: cdr.currency.toUpperCase(),
    timeZone: session.time_zone,
    start: new Date(cdr.start_date_time),
    end: new Date(cdr.end_date_time),
    periods: periodsWithEnergy(cdr),
  };
}

/** The session as priceCdr needs it; `tariff_is_fallback`: its tariff is our fallback price, not the CPO's. */
export type SessionForCdr = Pick<SessionPricing, 'tariff' | 'time_zone' | 'starting_fee'> & { tariff_is_fallback?: boolean };

/**
 * Prices a CDR: the engine's breakdown (or the CDR's, by policy) as rounded lines, plus the starting fee.
 * Pure: exported for tests.
 */
export function priceCdr(session: SessionForCdr, cdr: CDR, policy: 'engine' | 'cdr'): Priced {
  const currency = cdr.currency.toUpperCase();
  const input = cdrPricingInput(session, cdr);
  const { tariff } = input;
  const engine = priceSessionExact(input);
  const cdrTotal = cdr.total_cost ? dec(cdr.total_cost.incl_vat ?? cdr.total_cost.excl_vat).toFixed(decimals(currency)) : null;
  const ours = session.tariff_is_fallback === true && tariff === session.tariff;
  // A CDR total without incl_vat (optional in 2.2.1, absent from every OCPI 2.1.1 CDR) is a total excluding VAT:
  // held against the engine's total excluding VAT, not including it.
  const engineComparable = cdr.total_cost?.incl_vat === undefined ? engine.total_cost.excl_vat : engine.total_cost.incl_vat;
  const mismatch = cdrTotal !== null && !ours && dec(cdrTotal).minus(engineComparable).abs().gt(ONE_CENT);
  const source: Source = { tariff, input, engine, useCdr: policy === 'cdr' && cdr.total_cost !== undefined, currency };
  const lines = componentLines(source, cdr);
  reconcileTotal(source, cdr, lines);
  if (session.starting_fee && lines.length > 0) lines.push(startingFeeLine(session.starting_fee, currency));
  return { lines, currency, engineTotal: engine.total_cost.incl_vat, cdrTotal, mismatch };
}
