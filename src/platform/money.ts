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

/** "12.40" EUR -> 1240. Rounds half up to the minor unit (an amount with more decimals is a caller's slip, not money). */
export function toMinorUnits(amount: string | Big, currency: string): number {
  const value = (typeof amount === 'string' ? new Big(amount) : amount).times(new Big(10).pow(currencyExponent(currency))).round(0, Big.roundHalfUp);
  const units = Number(value.toFixed(0));
  if (!Number.isSafeInteger(units)) throw new RangeError(`amount out of range: ${String(amount)}`);
  return units;
}

/** 1240 EUR -> "12.40". */
export function fromMinorUnits(units: number, currency: string): string {
  const exponent = currencyExponent(currency);
  return new Big(units).div(new Big(10).pow(exponent)).toFixed(exponent);
}

/** A decimal amount rounded half up to the currency's minor unit, as a string ("12.4049" EUR -> "12.40"). */
export function roundMoney(amount: string | Big, currency: string): string {
  const exponent = currencyExponent(currency);
  return (typeof amount === 'string' ? new Big(amount) : amount).round(exponent, Big.roundHalfUp).toFixed(exponent);
}
