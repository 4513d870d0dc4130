// Pricing a CDR for the bill: the tariff engine's (or, by policy, the CPO's)
// breakdown as rounded invoice lines that add up to the total, plus our
// starting fee. Pure: no database, no clock.
import Big from 'big.js';
import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import type { OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import { priceSessionExact, priceSessionUnrounded } from '../../ocpi-protocol/pricing.ts';
import { currencyExponent } from '../../platform/money.ts';
import type { SessionRow } from '../charging/repository.ts';
import type { BillLine } from './repository.ts';

const ONE_CENT = new Big('0.01');

/** Decimal helpers on exact strings. */
const dec = (value: string | number) => new Big(typeof value === 'number' ? String(value) : value);

export interface Priced {
  lines: BillLine[];
  currency: string;
  engineTotal: string;
  cdrTotal: string | null;
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

/** The unit price of a dimension in the tariff (the first component of that type; informative only). */
function unitPriceOf(tariff: OcpiTariff | undefined, type: string, perMinute: boolean): string | null {
  for (const element of tariff?.elements ?? []) {
    const component = element.price_components.find((c) => c.type === type);
    if (component) {
      const gross = dec(component.price).times(
        dec(component.vat ?? 0)
          .div(100)
          .plus(1),
      );
      return (perMinute ? gross.div(60) : gross).round(4, Big.roundHalfUp).toString();
    }
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

/**
 * Prices a CDR: the engine's breakdown (or the CDR's, by policy) as rounded lines, plus the starting fee.
 * Pure: exported for tests.
 */
export function priceCdr(session: Pick<SessionRow, 'tariff' | 'time_zone' | 'starting_fee'>, cdr: CDR, policy: 'engine' | 'cdr'): Priced {
  const currency = cdr.currency.toUpperCase();
  const tariffIds = new Set((cdr.charging_periods ?? []).map((p) => p.tariff_id).filter(Boolean));
  const tariff = cdr.tariffs?.find((t) => tariffIds.has(t.id)) ?? cdr.tariffs?.[0] ?? session.tariff;
  const input = {
    tariff,
    currency,
    timeZone: session.time_zone,
    start: new Date(cdr.start_date_time),
    end: new Date(cdr.end_date_time),
    periods: cdr.charging_periods ?? [],
  };
  const engine = priceSessionExact(input);
  const cdrTotal = cdr.total_cost ? dec(cdr.total_cost.incl_vat ?? cdr.total_cost.excl_vat).toFixed(decimals(currency)) : null;
  const mismatch = cdrTotal !== null && dec(cdrTotal).minus(engine.total_cost.incl_vat).abs().gt(ONE_CENT);
  const useCdr = policy === 'cdr' && cdr.total_cost !== undefined;
  const part = (exact: { excl_vat: string; incl_vat: string } | undefined, ocpi: { excl_vat: number; incl_vat?: number } | undefined) => {
    if (!useCdr) return exact;
    if (!ocpi) return undefined;
    return { excl_vat: dec(ocpi.excl_vat).toFixed(decimals(currency)), incl_vat: dec(ocpi.incl_vat ?? ocpi.excl_vat).toFixed(decimals(currency)) };
  };
  const lines: BillLine[] = [];
  const energy = part(engine.total_energy_cost, cdr.total_energy_cost);
  const kwh = dec(cdr.total_energy).toFixed(3);
  if (energy)
    lines.push(
      line('energy', 'Energy', kwh, 'kWh', unitPriceOf(tariff, 'ENERGY', false), energy.excl_vat, energy.incl_vat, currency, vatRateOf(tariff, 'ENERGY')),
    );
  const time = part(engine.total_time_cost, cdr.total_time_cost);
  const chargingMinutes = dec(cdr.total_time)
    .minus(dec(cdr.total_parking_time ?? 0))
    .times(60)
    .round(1, Big.roundHalfUp)
    .toString();
  if (time)
    lines.push(
      line(
        'time',
        'Charging time',
        chargingMinutes,
        'min',
        unitPriceOf(tariff, 'TIME', true),
        time.excl_vat,
        time.incl_vat,
        currency,
        vatRateOf(tariff, 'TIME'),
      ),
    );
  const parking = part(engine.total_parking_cost, cdr.total_parking_cost);
  const parkingMinutes = dec(cdr.total_parking_time ?? 0)
    .times(60)
    .round(1, Big.roundHalfUp)
    .toString();
  if (parking) {
    lines.push(
      line(
        'parking',
        'Parking time (blocking fee)',
        parkingMinutes,
        'min',
        unitPriceOf(tariff, 'PARKING_TIME', true),
        parking.excl_vat,
        parking.incl_vat,
        currency,
        vatRateOf(tariff, 'PARKING_TIME'),
      ),
    );
  }
  const flat = part(engine.total_fixed_cost, cdr.total_fixed_cost);
  if (flat) lines.push(line('flat', 'Session fee', '1', 'session', null, flat.excl_vat, flat.incl_vat, currency, vatRateOf(tariff, 'FLAT')));
  const reservation = part(engine.total_reservation_cost, cdr.total_reservation_cost);
  if (reservation) {
    const rate = vatRateOf(tariff, 'RESERVATION') ?? vatRateOf(tariff, 'TIME');
    lines.push(line('reservation', 'Reservation', '1', 'reservation', null, reservation.excl_vat, reservation.incl_vat, currency, rate));
  }
  // A minimum or maximum price: the difference between the total and the parts, as a line of its own. Only when a
  // bound applied (the unrounded total differs from the unrounded parts, or the CDR's total from its parts by more
  // than their rounding): a rounding cent between separately rounded parts and total is not a line, the invoice's
  // total is the sum of its lines.
  const total = useCdr
    ? { excl_vat: dec((cdr.total_cost as { excl_vat: number }).excl_vat), incl_vat: dec(cdr.total_cost?.incl_vat ?? cdr.total_cost?.excl_vat ?? 0) }
    : { excl_vat: dec(engine.total_cost.excl_vat), incl_vat: dec(engine.total_cost.incl_vat) };
  const sumNet = lines.reduce((sum, l) => sum.plus(l.net), new Big(0));
  const sumGross = lines.reduce((sum, l) => sum.plus(l.gross), new Big(0));
  const raw = priceSessionUnrounded(input);
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
    lines.push(
      line(
        'adjustment',
        'Tariff minimum/maximum price adjustment',
        '1',
        'session',
        null,
        total.excl_vat.minus(sumNet).toString(),
        total.incl_vat.minus(sumGross).toString(),
        currency,
        shared ?? vatRateOf(tariff, 'ENERGY') ?? '0',
      ),
    );
  }
  if (session.starting_fee && lines.length > 0) {
    const net = dec(session.starting_fee.price).round(decimals(currency), Big.roundHalfUp);
    const gross = net.times(dec(session.starting_fee.vat).div(100).plus(1)).round(decimals(currency), Big.roundHalfUp);
    lines.push(
      line('starting_fee', 'Starting fee', '1', 'session', null, net.toString(), gross.toString(), currency, dec(session.starting_fee.vat).toString()),
    );
  }
  return { lines, currency, engineTotal: engine.total_cost.incl_vat, cdrTotal, mismatch };
}
