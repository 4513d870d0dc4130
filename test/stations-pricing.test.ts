// The operator's pricing settings: configuration and their scaling per country.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_PRICING } from '../src/modules/stations/catalogue.ts';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { pricingFor } from '../src/pricing/country-pricing.ts';
import { ocpiLocation } from './stations-fixtures.ts';

describe('pricing configuration', () => {
  test('defaults: 0.59 EUR fallback, no starting fee, holds 10..150 EUR for one hour capped at 80 kWh', () => {
    const { pricing } = loadConfig({});
    assert.deepEqual(pricing, {
      fallbackKwhPriceEur: '0.59',
      startingFeeEur: undefined,
      preAuthorization: { minimum: '10.00', maximum: '150.00', assumedDurationMinutes: 60, assumedEnergyKwhCap: 80, roundUpTo: '1' },
    });
  });

  test('settings are read and validated, naming the variable', () => {
    const { pricing } = loadConfig({ FALLBACK_KWH_PRICE_EUR: 'none', STARTING_FEE_EUR: '0.35', PRE_AUTH_MIN_EUR: '5', PRE_AUTH_MAX_EUR: '90.50' });
    assert.equal(pricing.fallbackKwhPriceEur, undefined);
    assert.equal(pricing.startingFeeEur, '0.35');
    assert.equal(pricing.preAuthorization.maximum, '90.50');
    for (const [name, value] of [
      ['FALLBACK_KWH_PRICE_EUR', 'cheap'],
      ['STARTING_FEE_EUR', '-1'],
      ['PRE_AUTH_MAX_EUR', '1.234'],
      ['PRE_AUTH_DURATION_MINUTES', '0'],
      ['PRE_AUTH_ENERGY_CAP_KWH', 'lots'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (e: unknown) => e instanceof ConfigError && e.variable === name,
      );
    }
    assert.throws(
      () => loadConfig({ PRE_AUTH_MIN_EUR: '200' }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'PRE_AUTH_MIN_EUR',
    );
  });
});

describe('pricingFor: settings in the currency of the location’s country', () => {
  const config = { ...DEFAULT_PRICING, startingFeeEur: '0.50' };

  test('a euro country uses the amounts as they are, with its VAT', () => {
    const options = pricingFor(ocpiLocation({ id: 'P1', lat: 52.5, lon: 13.4 }).country, config);
    assert.equal(options.currency, 'EUR');
    assert.deepEqual(options.fallback, { currency: 'EUR', kwhPrice: '0.59', vat: '19' });
    assert.deepEqual(options.startingFee, { price: '0.50', vat: '19' });
    assert.equal(options.preAuthorization?.minimum, '10.00');
    assert.equal(options.preAuthorization?.maximum, '150.00');
  });

  test('other currencies are scaled and the hold rounded to a sensible step', () => {
    const hungary = pricingFor('HUN', config);
    assert.equal(hungary.currency, 'HUF');
    assert.deepEqual(hungary.fallback, { currency: 'HUF', kwhPrice: '236.00', vat: '27' });
    assert.equal(hungary.preAuthorization?.roundUpTo, '100');
    assert.equal(hungary.preAuthorization?.minimum, '4000.00');
    assert.equal(hungary.preAuthorization?.maximum, '60000.00');
    const sweden = pricingFor('SWE', config);
    assert.equal(sweden.currency, 'SEK');
    assert.equal(sweden.preAuthorization?.roundUpTo, '10');
    assert.equal(sweden.preAuthorization?.maximum, '1650.00');
  });

  test('narrow bounds never cross when rounded to the step: 1..1 EUR holds 10 SEK and 400 HUF', () => {
    const narrow = { ...config, preAuthorization: { ...config.preAuthorization, minimum: '1.00', maximum: '1.00' } };
    for (const [country, amount] of [
      ['SWE', '10.00'],
      ['HUN', '400.00'],
      ['CZE', '20.00'],
      ['DEU', '1.00'],
    ] as const) {
      const options = pricingFor(country, narrow);
      assert.equal(options.preAuthorization?.minimum, amount, country);
      assert.equal(options.preAuthorization?.maximum, amount, country);
    }
    // Below one step (0.5 EUR is 5.50 SEK): one step is held.
    const tiny = pricingFor('SWE', { ...config, preAuthorization: { ...config.preAuthorization, minimum: '0.50', maximum: '0.50' } });
    assert.equal(tiny.preAuthorization?.maximum, '10.00');
  });
});
