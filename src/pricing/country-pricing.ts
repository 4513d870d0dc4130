// The operator's pricing settings (in euros) in the currency and VAT of a
// location's country: the price-group options every station of that country
// is priced with. Pure.
import Big from 'big.js';
import { countryByAlpha3, UNITS_PER_EUR } from '../platform/european-countries.ts';
import type { PreAuthorizationRule, PriceGroupOptions } from './price-groups.ts';

/**
 * The operator's pricing settings, in euros; scaled into a location's currency
 * with UNITS_PER_EUR (the hold rule's minimum/maximum and round-up step too).
 */
export interface PricingConfig {
  /** Price per kWh excl. VAT applied where a CPO sent no tariff; undefined: no fallback. */
  fallbackKwhPriceEur?: string | undefined;
  /** Our own one-off fee per session excl. VAT; undefined: none. */
  startingFeeEur?: string | undefined;
  preAuthorization: PreAuthorizationRule;
}

/** Price-group options of a country (ISO 3166-1 alpha-3): currency, VAT and amounts. */
export function pricingFor(country: string, config: PricingConfig): Omit<PriceGroupOptions, 'now' | 'timeZone'> {
  const facts = countryByAlpha3(country);
  const currency = facts?.currency ?? 'EUR';
  const rate = new Big(UNITS_PER_EUR[currency] ?? '1');
  const vat = facts?.vat ?? '0';
  const scale = (eur: string, dp: number) => new Big(eur).times(rate).round(dp, Big.roundHalfUp).toFixed(dp);
  const step = rate.gte(50) ? '100' : rate.gte(5) ? '10' : config.preAuthorization.roundUpTo;
  const rule = config.preAuthorization;
  // Bounds in whole steps: the maximum rounded down (at least one step), the minimum rounded up but never above
  // the maximum (narrow euro bounds such as 1..1 EUR would otherwise cross in SEK: 20..10).
  const maximumSteps = new Big(scale(rule.maximum, 2)).div(step).round(0, Big.roundDown);
  const maximum = (maximumSteps.lt(1) ? new Big(1) : maximumSteps).times(step);
  const minimumUp = new Big(scale(rule.minimum, 2)).div(step).round(0, Big.roundUp).times(step);
  const minimum = minimumUp.gt(maximum) ? maximum : minimumUp;
  return {
    currency,
    ...(config.fallbackKwhPriceEur ? { fallback: { currency, kwhPrice: scale(config.fallbackKwhPriceEur, 2), vat } } : {}),
    ...(config.startingFeeEur ? { startingFee: { price: scale(config.startingFeeEur, 2), vat } } : {}),
    preAuthorization: {
      ...rule,
      minimum: minimum.toFixed(2),
      maximum: maximum.toFixed(2),
      roundUpTo: step,
    },
  };
}
