// A station's price groups in plain words, as a driver reads them before starting. Pure (no DOM), so it is
// tested in Node (test/playground-price-words.test.ts) as well as shown by the page.
//
// The API's price group (src/modules/stations/schemas.ts, PriceGroupSchema): per dimension a schedule keyed by
// weekday (MONDAY..SUNDAY, or ALL) holding items in the tariff's order of precedence; the first item whose window
// holds applies, and a weekday's own list comes before the ALL list. user_facing_price is incl. VAT: per kWh, per
// minute (time and parking), or per session (session fee, our starting fee).

import type { paths, Station } from '@charging-access/client';

type StationPriceGroup = Station['price_groups'][number];
type StationPriceItem = NonNullable<StationPriceGroup['prices']['kwh_price']>[string][number];

/** The fields of an API price item the words use (a Station's items carry more, e.g. gross_price). */
export type PriceItem = Pick<
  StationPriceItem,
  'time_from' | 'time_to' | 'date_from' | 'date_to' | 'user_facing_price' | 'tax' | 'grace_period_minutes' | 'blocking_cap'
>;

export type PriceSchedule = Record<string, PriceItem[]> | null;

export type PriceGroup = Pick<StationPriceGroup, 'type' | 'power' | 'evse_ids' | 'currency' | 'pre_authorization_amount' | 'is_fallback'> & {
  prices: Record<keyof StationPriceGroup['prices'], PriceSchedule>;
};

/** The connector standards the API lists (its filters also accept VENDOR_R/VENDOR_S, aliases of TESLA_R/TESLA_S). */
type ConnectorType = Exclude<
  NonNullable<NonNullable<paths['/api/v1/stations/tile/']['get']['parameters']['query']>['connector_types']>[number],
  'VENDOR_R' | 'VENDOR_S'
>;

/** Connector standards (OCPI names, as the API lists and filters them) in the words on a charge point's label. */
export const CONNECTOR_NAMES = {
  IEC_62196_T2: 'Type 2',
  IEC_62196_T2_COMBO: 'CCS (Combo 2)',
  CHADEMO: 'CHAdeMO',
  IEC_62196_T1: 'Type 1',
  IEC_62196_T1_COMBO: 'CCS (Combo 1)',
  IEC_62196_T3A: 'Type 3A',
  IEC_62196_T3C: 'Type 3C',
  DOMESTIC_F: 'Schuko (household, type F)',
  DOMESTIC_E: 'Household socket, type E',
  DOMESTIC_G: 'Household socket, type G (UK)',
  DOMESTIC_A: 'Household socket, type A',
  DOMESTIC_B: 'Household socket, type B',
  DOMESTIC_C: 'Europlug (type C)',
  DOMESTIC_D: 'Household socket, type D',
  DOMESTIC_H: 'Household socket, type H',
  DOMESTIC_I: 'Household socket, type I',
  DOMESTIC_J: 'Household socket, type J',
  DOMESTIC_K: 'Household socket, type K',
  DOMESTIC_L: 'Household socket, type L',
  IEC_60309_2_single_16: 'Industrial blue, 1 phase 16 A',
  IEC_60309_2_three_16: 'Industrial red, 3 phases 16 A',
  IEC_60309_2_three_32: 'Industrial red, 3 phases 32 A',
  IEC_60309_2_three_64: 'Industrial red, 3 phases 64 A',
  TESLA_R: 'Proprietary (R)',
  TESLA_S: 'Proprietary (S)',
} satisfies Record<ConnectorType, string>;

const NAME_OF_CONNECTOR: Readonly<Record<string, string>> = CONNECTOR_NAMES;
const connectorName = (type: string): string => NAME_OF_CONNECTOR[type] ?? type;

const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];
const SHORT: Record<string, string> = { MONDAY: 'Mon', TUESDAY: 'Tue', WEDNESDAY: 'Wed', THURSDAY: 'Thu', FRIDAY: 'Fri', SATURDAY: 'Sat', SUNDAY: 'Sun' };

/** "0.2380" -> "0.238", "0.5" -> "0.50": at least the cents, no trailing zeros beyond them. */
export function amount(value: string): string {
  const [whole, fraction = ''] = value.split('.');
  const trimmed = fraction.replace(/0+$/, '');
  return `${whole}.${trimmed.length >= 2 ? trimmed : trimmed.padEnd(2, '0')}`;
}

/** Mon, Tue, Wed, Fri -> "Mon–Wed, Fri". */
function dayList(days: string[]): string {
  const indexes = days.map((d) => DAYS.indexOf(d)).sort((a, b) => a - b);
  const runs: string[] = [];
  for (let k = 0; k < indexes.length; ) {
    let end = k;
    while (end + 1 < indexes.length && (indexes[end + 1] as number) === (indexes[end] as number) + 1) end++;
    const first = SHORT[DAYS[indexes[k] as number] as string];
    const last = SHORT[DAYS[indexes[end] as number] as string];
    runs.push(end - k >= 2 ? `${first}–${last}` : end === k ? `${first}` : `${first}, ${last}`);
    k = end + 1;
  }
  return runs.join(', ');
}

const wholeDay = (item: PriceItem) => item.time_from === '00:00' && (item.time_to === '24:00' || item.time_to === '00:00');

function itemWords(item: PriceItem, unit: string, currency: string): string {
  let words = `${amount(item.user_facing_price)} ${currency} ${unit}`;
  if (!wholeDay(item)) words += ` ${item.time_from}–${item.time_to}`;
  if (item.date_from && item.date_to) words += ` (${item.date_from} to ${item.date_to})`;
  else if (item.date_from) words += ` (from ${item.date_from})`;
  else if (item.date_to) words += ` (until ${item.date_to})`;
  if (item.grace_period_minutes) words += ` after the first ${Number(item.grace_period_minutes.toFixed(1))} minutes`;
  return words;
}

/** One schedule in words: "0.59 EUR per kWh", or per day group "Mon–Fri: 0.49 EUR per kWh 22:00–06:00, otherwise 0.59 EUR per kWh". */
export function scheduleWords(schedule: PriceSchedule, unit: string, currency: string): string | undefined {
  if (!schedule) return undefined;
  const keys = Object.keys(schedule).filter((key) => (schedule[key]?.length ?? 0) > 0);
  if (keys.length === 0) return undefined;
  const listWords = (items: PriceItem[]) => items.map((item) => itemWords(item, unit, currency)).join(', otherwise ');
  // Weekdays with the same list are said once.
  const byList = new Map<string, string[]>();
  for (const key of keys.filter((k) => k !== 'ALL')) {
    const text = listWords(schedule[key] as PriceItem[]);
    byList.set(text, [...(byList.get(text) ?? []), key]);
  }
  const parts = [...byList].map(([text, days]) => `${dayList(days)}: ${text}`);
  if (keys.includes('ALL')) {
    const text = listWords(schedule.ALL as PriceItem[]);
    parts.push(parts.length === 0 ? text : `other days: ${text}`);
  }
  return parts.join('; ');
}

function taxWords(group: PriceGroup): string | undefined {
  const taxes = new Set<number>();
  for (const schedule of Object.values(group.prices)) for (const items of Object.values(schedule ?? {})) for (const item of items) taxes.add(item.tax);
  if (taxes.size === 0) return undefined;
  if (taxes.size === 1 && taxes.has(0)) return 'No VAT applies.';
  return `Prices include VAT (${[...taxes].sort((a, b) => b - a).join(' %, ')} %).`;
}

/** A price group as a heading and the lines a driver reads. */
export function priceGroupWords(group: PriceGroup): { title: string; lines: string[] } {
  const { prices, currency } = group;
  const evses = group.evse_ids.length === 1 ? '1 charge point' : `${group.evse_ids.length} charge points`;
  const title = `${connectorName(group.type)}, ${Number(group.power.toFixed(2))} kW (${evses})`;
  const lines: string[] = [];
  const add = (label: string, words: string | undefined) => {
    if (words) lines.push(`${label}: ${words}`);
  };
  add('Energy', scheduleWords(prices.kwh_price, 'per kWh', currency));
  add('Charging time', scheduleWords(prices.time_price, 'per minute', currency));
  const cap = Object.values(prices.blocking_fee ?? {})
    .flat()
    .find((item) => item.blocking_cap !== null)?.blocking_cap;
  const parking = scheduleWords(prices.blocking_fee, 'per minute', currency);
  add('Parking', parking && cap ? `${parking} (the operator caps a session at ${amount(cap)} ${currency} excl. VAT)` : parking);
  add('Operator’s session fee', scheduleWords(prices.session_fee, 'per session', currency));
  add('Our starting fee', scheduleWords(prices.starting_fee, 'per session', currency));
  if (lines.length === 0) lines.push('No price is known for these charge points.');
  else if (group.is_fallback) lines.push('The operator publishes no tariff for these charge points: our standard price applies.');
  const tax = taxWords(group);
  if (tax) lines.push(tax);
  lines.push(
    `When you start, ${amount(group.pre_authorization_amount)} ${currency} is held on your card; you pay for what you charge and the rest of the hold is released.`,
  );
  return { title, lines };
}
