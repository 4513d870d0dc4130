// The one reader of Tariffs (pulled, pushed, or inside a CDR): the rules of
// every object, then the Tariff's own: a VAT sent as a fraction is the
// percentage when it can only be that, an end_time of "24:00" is OCPI's end
// of day ("00:00"). What decides a price and cannot be read (an unknown
// dimension or weekday, an ambiguous VAT) refuses the tariff: pricing a
// session with a guess is worse than pricing it with the fallback.
import Big from 'big.js';
import { OcpiTariff } from '../locations-tariffs.ts';
import { validator } from '../validate.ts';
import { type Finding, pointer, type Reading, refused, shown } from './rules.ts';
import { applySchemaRules, copyJson } from './schema-rules.ts';
import { strictly } from './strict.ts';

const strictTariff = validator(OcpiTariff, 'Tariff');
const TARIFF_DISPLAY = ['tariff_alt_text', 'tariff_alt_url', 'energy_mix'];
const DIMENSIONS = ['ENERGY', 'FLAT', 'PARKING_TIME', 'TIME'];
const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];

/** The plausible range of a VAT fraction: 1 % to 30 % (no VAT rate is outside it but 0). */
const FRACTION_MIN = 0.01;
const FRACTION_MAX = 0.3;

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

type Refusal = { rule: Finding['rule']; path: string; message: string; detail?: string };

/**
 * A VAT below 1: 2.2.1 says percent, so 0.21 would be 0.21 % (no such rate
 * exists). When it lies in FRACTION_MIN..FRACTION_MAX it can only be a fraction
 * and is multiplied by 100 (exactly); below or above, it could be either and
 * refuses the tariff.
 */
function readVat(component: Record<string, unknown>, path: string, findings: Finding[]): Refusal | undefined {
  const vat = component.vat;
  if (typeof vat !== 'number' || vat <= 0 || vat >= 1) return undefined;
  if (vat < FRACTION_MIN || vat > FRACTION_MAX) {
    return {
      rule: 'vat-ambiguous',
      path: pointer(path, 'vat'),
      message: `${pointer(path, 'vat')} ${vat} is neither a percentage nor a plausible fraction`,
      detail: shown(vat),
    };
  }
  const percent = Number(new Big(vat).times(100).toString());
  findings.push({ rule: 'vat-fraction', path: pointer(path, 'vat'), detail: `${vat} -> ${percent}` });
  component.vat = percent;
  return undefined;
}

function readRestrictions(restrictions: Record<string, unknown>, path: string, findings: Finding[]): Refusal | undefined {
  if (restrictions.end_time === '24:00' || restrictions.end_time === '24:00:00') {
    findings.push({ rule: 'end-time-24h', path: pointer(path, 'end_time'), detail: `${shown(restrictions.end_time)} -> "00:00"` });
    restrictions.end_time = '00:00';
  }
  const days = list(restrictions.day_of_week);
  const unknownDay = days.findIndex((d) => !WEEKDAYS.includes(d as string));
  if (unknownDay >= 0) {
    const at = pointer(pointer(path, 'day_of_week'), unknownDay);
    return { rule: 'unknown-enum-refused', path: at, message: `${at} is not a day of the week`, detail: shown(days[unknownDay]) };
  }
  return undefined;
}

/** The Tariff rules beyond the schema's, in place: the first refusal, if any. */
function tariffRules(tariff: Record<string, unknown>, path: string, findings: Finding[]): Refusal | undefined {
  for (const [e, element] of list(tariff.elements).entries()) {
    if (!isRecord(element)) continue;
    const elementPath = pointer(pointer(path, 'elements'), e);
    for (const [c, component] of list(element.price_components).entries()) {
      if (!isRecord(component)) continue;
      const at = pointer(pointer(elementPath, 'price_components'), c);
      if (!DIMENSIONS.includes(component.type as string)) {
        return {
          rule: 'unknown-enum-refused',
          path: pointer(at, 'type'),
          message: `${pointer(at, 'type')} is not a tariff dimension`,
          detail: shown(component.type),
        };
      }
      const refusal = readVat(component, at, findings);
      if (refusal) return refusal;
    }
    if (isRecord(element.restrictions)) {
      const refusal = readRestrictions(element.restrictions, pointer(elementPath, 'restrictions'), findings);
      if (refusal) return refusal;
    }
  }
  return undefined;
}

/**
 * Applies the Tariff rules to a tariff inside another object (a CDR's
 * tariffs), in place; a refusal message, or undefined when it can be used.
 */
export function applyTariffRules(tariff: unknown, path: string, findings: Finding[]): string | undefined {
  if (!isRecord(tariff)) return `${path} must be an object`;
  applySchemaRules(OcpiTariff, tariff, path, findings);
  const refusal = tariffRules(tariff, path, findings);
  if (!refusal) return undefined;
  findings.push({ rule: refusal.rule, path: refusal.path, ...(refusal.detail === undefined ? {} : { detail: refusal.detail }) });
  return refusal.message;
}

/** A Tariff as a CPO sent it, read (the value given is not changed, unless `inPlace`: see readLocation). */
export function readTariff(raw: unknown, options: { inPlace?: boolean } = {}): Reading<OcpiTariff> {
  const findings: Finding[] = [];
  if (!isRecord(raw)) return refused(findings, 'invalid', '', 'a Tariff must be a JSON object');
  const tariff = options.inPlace ? raw : copyJson(raw);
  applySchemaRules(OcpiTariff, tariff, '', findings);
  if (typeof tariff.id !== 'string' || tariff.id.trim() === '') return refused(findings, 'no-id', '/id', 'a Tariff needs an id');
  const refusal = tariffRules(tariff, '', findings);
  if (refusal) return refused(findings, refusal.rule, refusal.path, refusal.message, refusal.detail);
  const checked = strictly(strictTariff, tariff, '', findings, TARIFF_DISPLAY);
  if (!checked.ok) return refused(findings, 'invalid', '', checked.message, checked.message);
  return { ok: true, value: checked.value, findings };
}
