// VAT identification numbers: format check by country prefix (EU member
// states as VIES knows them, Northern Ireland's XI, plus the neighbours whose
// businesses commonly charge in the EU). A format check, not a registry lookup.

const VAT_FORMATS: Record<string, RegExp> = {
  AT: /^ATU\d{8}$/,
  BE: /^BE[01]\d{9}$/,
  BG: /^BG\d{9,10}$/,
  CY: /^CY\d{8}[A-Z]$/,
  CZ: /^CZ\d{8,10}$/,
  DE: /^DE\d{9}$/,
  DK: /^DK\d{8}$/,
  EE: /^EE\d{9}$/,
  EL: /^EL\d{9}$/, // Greece uses EL, not its ISO code GR
  ES: /^ES[A-Z0-9]\d{7}[A-Z0-9]$/,
  FI: /^FI\d{8}$/,
  FR: /^FR[A-HJ-NP-Z0-9]{2}\d{9}$/,
  HR: /^HR\d{11}$/,
  HU: /^HU\d{8}$/,
  IE: /^IE(\d{7}[A-W][A-I]?|\d[A-Z+*]\d{5}[A-W])$/,
  IT: /^IT\d{11}$/,
  LT: /^LT(\d{9}|\d{12})$/,
  LU: /^LU\d{8}$/,
  LV: /^LV\d{11}$/,
  MT: /^MT\d{8}$/,
  NL: /^NL\d{9}B\d{2}$/,
  PL: /^PL\d{10}$/,
  PT: /^PT\d{9}$/,
  RO: /^RO\d{2,10}$/,
  SE: /^SE\d{10}01$/,
  SI: /^SI\d{8}$/,
  SK: /^SK\d{10}$/,
  XI: /^XI(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/,
  // Outside the EU
  GB: /^GB(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/,
  CH: /^CHE\d{9}(MWST|TVA|IVA)?$/,
  NO: /^NO\d{9}(MVA)?$/,
};

export const VAT_PREFIXES = Object.keys(VAT_FORMATS);

/** Upper-cases and removes the separators people type (spaces, dots, dashes). */
export function normalizeVatNumber(input: string): string {
  return input.toUpperCase().replace(/[\s.-]/g, '');
}

/** Why the (normalized) number is not well-formed, or undefined when it is. */
export function vatNumberProblem(normalized: string): string | undefined {
  const prefix = normalized.slice(0, 2);
  const format = VAT_FORMATS[prefix];
  if (!format) return `must start with a supported country prefix (${VAT_PREFIXES.join(', ')})`;
  if (!format.test(normalized)) return `is not a well-formed ${prefix} VAT number`;
  return undefined;
}
