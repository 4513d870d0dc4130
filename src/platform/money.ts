// Money: decimal strings on the wire ("12.40"), integer minor units inside
// (1240), never binary floats. ISO 4217 minor-unit exponents.
import Big from 'big.js';

/** Currencies whose minor unit is not the hundredth (ISO 4217 exponent). */
const EXPONENTS: Record<string, number> = { ISK: 0, JPY: 0, KRW: 0, CLP: 0, HUF: 2, BHD: 3, KWD: 3, JOD: 3, OMR: 3, TND: 3 };

export function currencyExponent(currency: string): number {
  return EXPONENTS[currency.toUpperCase()] ?? 2;
}

/**
 * The smallest amount card processors accept in one charge, in minor units (Stripe's published minimums: 0.50
 * of the major unit unless listed). A remainder below it can never be charged on its own.
 */
const MINIMUM_CHARGES: Record<string, number> = { GBP: 30, HKD: 400, JPY: 50, MXN: 1000, CZK: 1500, DKK: 250, NOK: 300, SEK: 300, HUF: 17500, PLN: 200 };

export function minimumCharge(currency: string): number {
  return MINIMUM_CHARGES[currency.toUpperCase()] ?? 50;
}

// Two conversions to minor units, named so a reader sees which one a caller chose:
// - toMinorUnits refuses an amount that is not a whole number of minor units: for amounts that are already
//   money (an API total, a hold amount, the sum of rounded invoice lines), where an extra decimal is a bug to
//   surface, not a cent to lose.
// - roundToMinorUnits rounds half up: for a computed amount that is not money yet (an estimate that adds a fee
//   with VAT to a rounded total).

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** "12.40" EUR -> 1240. Throws RangeError on an amount finer than the currency's minor unit ("12.405" EUR). */
export function toMinorUnits(amount: string, currency: string): number {
  if (!DECIMAL.test(amount)) throw new RangeError(`not a decimal amount: ${JSON.stringify(amount)}`);
  const minor = new Big(amount).times(new Big(10).pow(currencyExponent(currency)));
  if (!minor.eq(minor.round(0, Big.roundDown))) throw new RangeError(`${amount} ${currency} is not a whole number of minor units`);
  return safeUnits(minor, amount);
}

/** "12.405" EUR -> 1241: rounded half up to the currency's minor unit. */
export function roundToMinorUnits(amount: string | Big, currency: string): number {
  const minor = (typeof amount === 'string' ? new Big(amount) : amount).times(new Big(10).pow(currencyExponent(currency))).round(0, Big.roundHalfUp);
  return safeUnits(minor, String(amount));
}

function safeUnits(minor: Big, amount: string): number {
  const units = Number(minor.toFixed(0));
  if (!Number.isSafeInteger(units)) throw new RangeError(`amount out of range: ${amount}`);
  return units === 0 ? 0 : units; // never -0
}

/** 1240 EUR -> "12.40". Throws RangeError on a number that is not a whole number of minor units. */
export function fromMinorUnits(units: number, currency: string): string {
  if (!Number.isSafeInteger(units)) throw new RangeError(`not a whole number of minor units: ${units}`);
  const exponent = currencyExponent(currency);
  return new Big(units || 0).div(new Big(10).pow(exponent)).toFixed(exponent);
}

/** A decimal amount rounded half up to the currency's minor unit, as a string ("12.4049" EUR -> "12.40"). */
export function roundMoney(amount: string | Big, currency: string): string {
  const exponent = currencyExponent(currency);
  return (typeof amount === 'string' ? new Big(amount) : amount).round(exponent, Big.roundHalfUp).toFixed(exponent);
}

/** An amount excl. VAT plus `vatPercent` percent VAT, exact (amount x (1 + vat / 100)); numbers read through their decimal string. */
export function withVat(amount: string | number | Big, vatPercent: string | number): Big {
  const exact = (value: string | number) => new Big(typeof value === 'number' ? String(value) : value);
  return (amount instanceof Big ? amount : exact(amount)).times(exact(vatPercent).div(100).plus(1));
}
