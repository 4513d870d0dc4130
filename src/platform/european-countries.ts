// Facts per European country the catalogue needs: ISO codes (OCPI Locations
// carry alpha-3, parties alpha-2), currency, and standard VAT rate (percent)
// for charging, as of 2026. Used by the dataset generator and for fallback prices.

export interface CountryFacts {
  alpha2: string;
  alpha3: string;
  name: string;
  currency: string;
  /** Standard VAT rate in percent, as a decimal string (exact). */
  vat: string;
  timeZone: string;
}

export const EUROPEAN_COUNTRIES: readonly CountryFacts[] = [
  { alpha2: 'AT', alpha3: 'AUT', name: 'Austria', currency: 'EUR', vat: '20', timeZone: 'Europe/Vienna' },
  { alpha2: 'BE', alpha3: 'BEL', name: 'Belgium', currency: 'EUR', vat: '21', timeZone: 'Europe/Brussels' },
  { alpha2: 'BG', alpha3: 'BGR', name: 'Bulgaria', currency: 'EUR', vat: '20', timeZone: 'Europe/Sofia' },
  { alpha2: 'CH', alpha3: 'CHE', name: 'Switzerland', currency: 'CHF', vat: '8.1', timeZone: 'Europe/Zurich' },
  { alpha2: 'CY', alpha3: 'CYP', name: 'Cyprus', currency: 'EUR', vat: '19', timeZone: 'Asia/Nicosia' },
  { alpha2: 'CZ', alpha3: 'CZE', name: 'Czechia', currency: 'CZK', vat: '21', timeZone: 'Europe/Prague' },
  { alpha2: 'DE', alpha3: 'DEU', name: 'Germany', currency: 'EUR', vat: '19', timeZone: 'Europe/Berlin' },
  { alpha2: 'DK', alpha3: 'DNK', name: 'Denmark', currency: 'DKK', vat: '25', timeZone: 'Europe/Copenhagen' },
  { alpha2: 'EE', alpha3: 'EST', name: 'Estonia', currency: 'EUR', vat: '24', timeZone: 'Europe/Tallinn' },
  { alpha2: 'ES', alpha3: 'ESP', name: 'Spain', currency: 'EUR', vat: '21', timeZone: 'Europe/Madrid' },
  { alpha2: 'FI', alpha3: 'FIN', name: 'Finland', currency: 'EUR', vat: '25.5', timeZone: 'Europe/Helsinki' },
  { alpha2: 'FR', alpha3: 'FRA', name: 'France', currency: 'EUR', vat: '20', timeZone: 'Europe/Paris' },
  { alpha2: 'GB', alpha3: 'GBR', name: 'United Kingdom', currency: 'GBP', vat: '20', timeZone: 'Europe/London' },
  { alpha2: 'GR', alpha3: 'GRC', name: 'Greece', currency: 'EUR', vat: '24', timeZone: 'Europe/Athens' },
  { alpha2: 'HR', alpha3: 'HRV', name: 'Croatia', currency: 'EUR', vat: '25', timeZone: 'Europe/Zagreb' },
  { alpha2: 'HU', alpha3: 'HUN', name: 'Hungary', currency: 'HUF', vat: '27', timeZone: 'Europe/Budapest' },
  { alpha2: 'IE', alpha3: 'IRL', name: 'Ireland', currency: 'EUR', vat: '23', timeZone: 'Europe/Dublin' },
  { alpha2: 'IS', alpha3: 'ISL', name: 'Iceland', currency: 'ISK', vat: '24', timeZone: 'Atlantic/Reykjavik' },
  { alpha2: 'IT', alpha3: 'ITA', name: 'Italy', currency: 'EUR', vat: '22', timeZone: 'Europe/Rome' },
  { alpha2: 'LI', alpha3: 'LIE', name: 'Liechtenstein', currency: 'CHF', vat: '8.1', timeZone: 'Europe/Vaduz' },
  { alpha2: 'LT', alpha3: 'LTU', name: 'Lithuania', currency: 'EUR', vat: '21', timeZone: 'Europe/Vilnius' },
  { alpha2: 'LU', alpha3: 'LUX', name: 'Luxembourg', currency: 'EUR', vat: '17', timeZone: 'Europe/Luxembourg' },
  { alpha2: 'LV', alpha3: 'LVA', name: 'Latvia', currency: 'EUR', vat: '21', timeZone: 'Europe/Riga' },
  { alpha2: 'MT', alpha3: 'MLT', name: 'Malta', currency: 'EUR', vat: '18', timeZone: 'Europe/Malta' },
  { alpha2: 'NL', alpha3: 'NLD', name: 'Netherlands', currency: 'EUR', vat: '21', timeZone: 'Europe/Amsterdam' },
  { alpha2: 'NO', alpha3: 'NOR', name: 'Norway', currency: 'NOK', vat: '25', timeZone: 'Europe/Oslo' },
  { alpha2: 'PL', alpha3: 'POL', name: 'Poland', currency: 'PLN', vat: '23', timeZone: 'Europe/Warsaw' },
  { alpha2: 'PT', alpha3: 'PRT', name: 'Portugal', currency: 'EUR', vat: '23', timeZone: 'Europe/Lisbon' },
  { alpha2: 'RO', alpha3: 'ROU', name: 'Romania', currency: 'RON', vat: '21', timeZone: 'Europe/Bucharest' },
  { alpha2: 'SE', alpha3: 'SWE', name: 'Sweden', currency: 'SEK', vat: '25', timeZone: 'Europe/Stockholm' },
  { alpha2: 'SI', alpha3: 'SVN', name: 'Slovenia', currency: 'EUR', vat: '22', timeZone: 'Europe/Ljubljana' },
  { alpha2: 'SK', alpha3: 'SVK', name: 'Slovakia', currency: 'EUR', vat: '23', timeZone: 'Europe/Bratislava' },
];

const byAlpha2 = new Map(EUROPEAN_COUNTRIES.map((c) => [c.alpha2, c]));
const byAlpha3 = new Map(EUROPEAN_COUNTRIES.map((c) => [c.alpha3, c]));

export function countryByAlpha2(code: string): CountryFacts | undefined {
  return byAlpha2.get(code.toUpperCase());
}

export function countryByAlpha3(code: string): CountryFacts | undefined {
  return byAlpha3.get(code.toUpperCase());
}

/**
 * Approximate currency units per euro. Used only to scale configured
 * euro amounts (fallback price, hold limits) into local currencies; never for
 * billing, which always uses the operator's own tariff currency.
 */
export const UNITS_PER_EUR: Readonly<Record<string, string>> = {
  EUR: '1',
  CHF: '0.95',
  GBP: '0.85',
  SEK: '11',
  NOK: '11.5',
  DKK: '7.5',
  PLN: '4.3',
  CZK: '25',
  HUF: '400',
  RON: '5',
  ISK: '150',
};
