// A station's `price_groups`, derived from its OCPI 2.2.1 EVSEs and tariffs.
// Pure: no I/O, no clock (the caller passes `now`), no global state. Money is
// exact decimal arithmetic (big.js); OCPI prices arrive as JSON numbers and are
// read through `new Big(String(n))`, never used in float arithmetic.
//
// Conventions (the API contract leaves these open; they are fixed here):
//
// Grouping
// - Key: connector standard (`type`, the OCPI name; UNKNOWN for one 2.2.1 does not list) + power (kW) + applicable
//   tariff (country_code/party_id/id of the resolved tariff; "no tariff" is its
//   own key). An EVSE is listed once per group even when several of its
//   connectors fall in it, and appears in several groups when its connectors
//   differ. `evse_ids` holds `evse_id`, or `uid` when `evse_id` is missing, in
//   input order. EVSEs with status REMOVED are skipped.
// - Order: power descending, then `type` ascending (code-point order), then
//   tariff groups by tariff id (then country_code, party_id) before the
//   no-tariff group.
//
// Power (connectorPowerKw)
// - `max_electric_power` (W) / 1000 when present and > 0 (0 is taken as "not
//   stated"). Otherwise max_voltage × max_amperage × phases / 1000, with
//   max_voltage read as line-to-neutral (OCPI says so for AC_3_PHASE; we apply
//   it to every AC type): AC_1_PHASE ×1, AC_2_PHASE ×2, AC_2_PHASE_SPLIT ×2,
//   AC_3_PHASE ×3, DC ×1. Not rounded: OCPI gives integer V, A and W, so the kW
//   value has at most 3 decimals (230 V × 16 A × 3 = 11.04 kW, not 11).
//
// Applicable tariff
// - The connector's tariff_ids are resolved in order through `findTariff`;
//   unresolved ids, and tariffs with end_date_time < now or start_date_time >
//   now, are dropped (the bounds themselves are inclusive). Of the rest, the
//   first without `type` or with type REGULAR or AD_HOC_PAYMENT wins; if there is
//   none, the first PROFILE_* one. A date-time without offset is read as UTC
//   (OCPI date-times are UTC), not as the host's local time.
//
// Prices: one schedule per dimension, `null` when there is no item
// - time_price = TIME, kwh_price = ENERGY, blocking_fee = PARKING_TIME,
//   session_fee = FLAT, starting_fee = options.startingFee (our own fee).
// - A schedule maps MONDAY..SUNDAY / ALL to a list of items. Every tariff element
//   with a component of the dimension contributes one item per distinct day in
//   its day_of_week, or one item under ALL when day_of_week is absent or empty
//   (names other than MONDAY..SUNDAY, which the schema rejects, are ignored).
//   Items keep tariff order within each list, so the first item that matches
//   is the one OCPI applies. Keys appear in the order MONDAY..SUNDAY, ALL.
// - Precedence between a weekday list and the ALL list is not representable in
//   this shape; it matches OCPI only when the tariff lists day-specific elements
//   before its all-days elements (the usual layout, which OCPI advises: defaults
//   last). Readers should try the weekday's list first, then ALL.
// - If an element holds several components of one dimension, the first counts
//   (OCPI allows one active component per dimension).
// - Elements with a `reservation` restriction are skipped (reservation costs,
//   not charging prices).
// - Restrictions on kWh, current, power and duration are not expressed in the
//   items (only the blocking-fee grace period below); tariff min_price is not
//   expressed either. Such elements still appear, in tariff order.
// - time_from/time_to: start_time/end_time verbatim; a missing start_time is
//   "00:00", a missing end_time is "24:00" (end of day). As in OCPI, a window is
//   [time_from, time_to) in local time, time_to < time_from wraps past midnight,
//   and an OCPI end_time of "00:00" (also means end of day) is kept as "00:00".
//   Restrictions hold together at each instant (OCPI's logical AND): a
//   "22:00"-"06:00" window under FRIDAY covers Friday 00:00-06:00 and 22:00-24:00.
// - date_from/date_to: start_date/end_date verbatim ("YYYY-MM-DD", local dates);
//   "" when unbounded. date_from is inclusive, date_to exclusive (OCPI).
// - gross_price: the price excl. VAT as OCPI states it (per kWh, per session, per
//   hour for TIME and PARKING_TIME), exact, with at least 2 decimals
//   (0.3 -> "0.30", 0.295 -> "0.295").
// - user_facing_price: incl. VAT, rounded half-up: per kWh / per session to 2
//   decimals, TIME and PARKING_TIME per minute to 4 decimals (12/h at 19% ->
//   "0.2380").
// - tax: the component's VAT percent as a number; 0 when OCPI omits vat ("no VAT
//   applicable"), in which case user_facing_price is the rounded gross price.
// - grace_period_minutes: blocking-fee items only: the element's min_duration in
//   minutes (seconds / 60, may be fractional; counted from the start of the
//   session, as OCPI's min_duration is a session duration); 0 when the element
//   has no min_duration. null for every other dimension.
// - blocking_cap: blocking-fee items only: the tariff's max_price.excl_vat (at
//   least 2 decimals) or null. Note OCPI's max_price caps the whole session, not
//   only the blocking fee. null for every other dimension.
// - starting_fee: one item under ALL, "00:00"-"24:00", dates "", from
//   options.startingFee `{ price (excl. VAT), vat (percent) }`, both decimal
//   strings, stated in the group's currency (callers pass per-location options).
//
// Currency, fallback
// - currency: the applicable tariff's currency. Without one, the group uses
//   options.fallback (a plain FallbackPrice; callers resolve it per location,
//   e.g. from countryByAlpha3(location.country)) and is_fallback is true: its
//   kwh_price (and session_fee when `sessionFee` is set) is one ALL item
//   "00:00"-"24:00", with tax = Number(fallback.vat); time_price and
//   blocking_fee are null; starting_fee applies as usual.
// - With neither tariff nor fallback, every component is null (including
//   starting_fee: we know no price to show), is_fallback is true, and currency is
//   options.currency, else "XXX" (ISO 4217 "no currency").
//
// Pre-authorization (pre_authorization_amount)
// - estimate = most expensive session fee + starting fee
//     + most expensive kWh price × min(power kW × duration h, energy cap kWh)
//     + most expensive TIME hourly price × duration h,
//   every price incl. VAT and unrounded (gross × (100 + tax) / 100). Blocking fees
//   are not part of the hold.
// - The estimate is clamped to [minimum, maximum'] and then rounded UP to a
//   multiple of roundUpTo, where maximum' is the largest multiple of roundUpTo
//   not above maximum (so the result is always within [minimum, maximum] and a
//   multiple of roundUpTo). Formatted with 2 decimals. All of it is exact
//   rational arithmetic: nothing is rounded before the final round-up.
// - minimum, maximum and roundUpTo are amounts in the group's currency units;
//   they are not scaled per currency. The defaults (10.00-150.00) suit EUR, CHF,
//   GBP; for HUF (1 EUR ≈ 400 HUF) or ISK (≈ 150 ISK) every hold would be clamped
//   to 150 HUF/ISK, far below a session's cost, and for SEK/NOK/DKK/CZK/PLN the
//   range is low too; callers must pass a rule per currency (e.g. HUF
//   minimum "4000", maximum "60000", roundUpTo "100").
// - The rule is validated: durations and cap finite and >= 0; 0 <= minimum <=
//   maximum; roundUpTo > 0 with at most 2 decimals; some multiple of roundUpTo
//   within [minimum, maximum]. A bad rule throws RangeError.
//
// local_datetime
// - options.now in options.timeZone (IANA) as "YYYY-MM-DDTHH:MM:SS±HH:MM",
//   whole seconds, offset always numeric ("+00:00", never "Z"); the offset comes
//   from Intl.DateTimeFormat. An unknown time zone throws RangeError.
import Big from 'big.js';
import { CONNECTOR_STANDARDS, type OcpiConnector, type OcpiEvse, type OcpiPriceComponent, type OcpiTariff } from '../ocpi-protocol/locations-tariffs.ts';
import { localIsoDateTime, WEEKDAYS } from './local-time.ts';

export type ScheduleKey = (typeof WEEKDAYS)[number] | 'ALL';
const SCHEDULE_KEYS: readonly ScheduleKey[] = [...WEEKDAYS, 'ALL'];

export interface PriceItem {
  time_from: string;
  time_to: string;
  date_from: string;
  date_to: string;
  gross_price: string;
  user_facing_price: string;
  tax: number;
  grace_period_minutes: number | null;
  blocking_cap: string | null;
}

/** Items per weekday (or ALL), in tariff order. Only keys with items are present. */
export type PriceSchedule = Partial<Record<ScheduleKey, PriceItem[]>>;

export interface Prices {
  time_price: PriceSchedule | null;
  kwh_price: PriceSchedule | null;
  blocking_fee: PriceSchedule | null;
  session_fee: PriceSchedule | null;
  starting_fee: PriceSchedule | null;
}

export interface PriceGroup {
  type: string;
  power: number;
  evse_ids: string[];
  prices: Prices;
  local_datetime: string;
  currency: string;
  pre_authorization_amount: string;
  is_fallback: boolean;
}

/** The operator's price for connectors without an applicable tariff. Decimal strings; prices excl. VAT, vat in percent. */
export interface FallbackPrice {
  currency: string;
  kwhPrice: string;
  sessionFee?: string;
  vat: string;
}

export interface PreAuthorizationRule {
  assumedDurationMinutes: number;
  assumedEnergyKwhCap: number;
  /** Decimal string, in the group's currency units. */
  minimum: string;
  /** Decimal string, in the group's currency units. */
  maximum: string;
  /** Decimal string > 0 with at most 2 decimals. */
  roundUpTo: string;
}

export interface PriceGroupOptions {
  now: Date;
  /** IANA time zone of the location (OCPI Location.time_zone). */
  timeZone: string;
  fallback?: FallbackPrice;
  startingFee?: { price: string; vat: string };
  preAuthorization?: Partial<PreAuthorizationRule>;
  /** Currency of groups with neither tariff nor fallback (default "XXX"). */
  currency?: string;
  /**
   * A cache the caller owns (e.g. one per catalogue snapshot): a group's prices
   * and hold depend only on its tariff (id and last_updated), its power and the
   * options other than now, so they are computed once per combination.
   */
  memo?: Map<string, { prices: Prices; currency: string; amount: string }>;
}

export const DEFAULT_PRE_AUTHORIZATION: PreAuthorizationRule = Object.freeze({
  assumedDurationMinutes: 60,
  assumedEnergyKwhCap: 80,
  minimum: '10.00',
  maximum: '150.00',
  roundUpTo: '1',
});

const HUNDRED = new Big(100);
const NO_CURRENCY = 'XXX';

const PHASES: Record<string, number> = { AC_1_PHASE: 1, AC_2_PHASE: 2, AC_2_PHASE_SPLIT: 2, AC_3_PHASE: 3, DC: 1 };

export function connectorPowerKw(connector: Pick<OcpiConnector, PowerField>): number {
  if (connector.max_electric_power !== undefined && connector.max_electric_power > 0) {
    return new Big(String(connector.max_electric_power)).div(1000).toNumber();
  }
  const phases = PHASES[connector.power_type] ?? 1;
  return new Big(String(connector.max_voltage)).times(String(connector.max_amperage)).times(phases).div(1000).toNumber();
}

/** The EVSE fields price groups are derived from. */
export type GroupedEvse = Pick<OcpiEvse, 'uid' | 'evse_id' | 'status'> & { connectors: Pick<OcpiConnector, PowerField | 'standard' | 'tariff_ids'>[] };
type PowerField = 'power_type' | 'max_voltage' | 'max_amperage' | 'max_electric_power';

export function derivePriceGroups(
  evses: readonly GroupedEvse[],
  findTariff: (tariffId: string) => OcpiTariff | undefined,
  options: PriceGroupOptions,
): PriceGroup[] {
  const rule = preAuthorizationRule(options.preAuthorization);
  const localDateTime = localIsoDateTime(options.now, options.timeZone);
  const nowMs = options.now.getTime();

  interface Bucket {
    type: string;
    power: number;
    tariff: OcpiTariff | undefined;
    evseIds: string[];
  }
  const buckets = new Map<string, Bucket>();
  for (const evse of evses) {
    if (evse.status === 'REMOVED') continue;
    const evseId = evse.evse_id ?? evse.uid;
    for (const connector of evse.connectors) {
      const power = connectorPowerKw(connector);
      const tariff = applicableTariff(connector, findTariff, nowMs);
      // ConnectorType is an open enum: a standard 2.2.1 does not list is shown as UNKNOWN (one group for all such).
      const type = (CONNECTOR_STANDARDS as readonly string[]).includes(connector.standard) ? connector.standard : 'UNKNOWN';
      const key = JSON.stringify([type, power, tariff ? tariffKey(tariff) : null]);
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = { type, power, tariff, evseIds: [] };
        buckets.set(key, bucket);
      }
      if (!bucket.evseIds.includes(evseId)) bucket.evseIds.push(evseId);
    }
  }

  const ordered = [...buckets.values()].sort((a, b) => b.power - a.power || compareStrings(a.type, b.type) || compareTariffs(a.tariff, b.tariff));
  const memo = options.memo;
  const optionsKey = memo ? JSON.stringify([options.fallback ?? null, options.startingFee ?? null, rule, options.currency ?? null]) : '';
  return ordered.map((bucket) => {
    const key = memo ? `${bucket.tariff ? `${tariffKey(bucket.tariff)}@${bucket.tariff.last_updated}` : '-'}|${bucket.power}|${optionsKey}` : '';
    let priced = memo?.get(key);
    if (!priced) {
      const { prices, currency } = bucket.tariff ? tariffPrices(bucket.tariff, options) : fallbackPrices(options);
      priced = { prices, currency, amount: preAuthorizationAmount(prices, bucket.power, rule) };
      if (memo) {
        if (memo.size >= 100_000) memo.clear();
        memo.set(key, priced);
      }
    }
    return {
      type: bucket.type,
      power: bucket.power,
      evse_ids: bucket.evseIds,
      prices: priced.prices,
      local_datetime: localDateTime,
      currency: priced.currency,
      pre_authorization_amount: priced.amount,
      is_fallback: bucket.tariff === undefined,
    };
  });
}

/** The highest user-facing (incl. VAT) kWh price of the group, or null when it has none. */
export function maxPriceOf(group: PriceGroup): string | null {
  let best: string | null = null;
  for (const item of itemsOf(group.prices.kwh_price)) {
    if (best === null || new Big(item.user_facing_price).gt(best)) best = item.user_facing_price;
  }
  return best;
}

// ---- Tariff choice ----

function applicableTariff(
  connector: Pick<OcpiConnector, 'tariff_ids'>,
  findTariff: (tariffId: string) => OcpiTariff | undefined,
  nowMs: number,
): OcpiTariff | undefined {
  const active: OcpiTariff[] = [];
  for (const id of connector.tariff_ids ?? []) {
    const tariff = findTariff(id);
    if (tariff && isActive(tariff, nowMs)) active.push(tariff);
  }
  return active.find((t) => t.type === undefined || t.type === 'REGULAR' || t.type === 'AD_HOC_PAYMENT') ?? active[0];
}

/**
 * The instants at which a tariff becomes active or inactive (start_date_time,
 * and just after end_date_time): groups derived at one instant stay valid until
 * the next of these.
 */
export function tariffChanges(tariff: OcpiTariff): number[] {
  const changes: number[] = [];
  if (tariff.start_date_time !== undefined) changes.push(utcMillis(tariff.start_date_time));
  if (tariff.end_date_time !== undefined) changes.push(utcMillis(tariff.end_date_time) + 1);
  return changes;
}

function isActive(tariff: OcpiTariff, nowMs: number): boolean {
  if (tariff.end_date_time !== undefined && utcMillis(tariff.end_date_time) < nowMs) return false;
  if (tariff.start_date_time !== undefined && utcMillis(tariff.start_date_time) > nowMs) return false;
  return true;
}

/** OCPI date-times are UTC; one without an offset must not be read as host-local time. */
function utcMillis(dateTime: string): number {
  return Date.parse(/(Z|[+-]\d{2}:\d{2})$/i.test(dateTime) ? dateTime : `${dateTime}Z`);
}

function tariffKey(tariff: OcpiTariff): string {
  return `${tariff.country_code}*${tariff.party_id}*${tariff.id}`;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareTariffs(a: OcpiTariff | undefined, b: OcpiTariff | undefined): number {
  if (!a || !b) return (a ? 0 : 1) - (b ? 0 : 1);
  return compareStrings(a.id, b.id) || compareStrings(tariffKey(a), tariffKey(b));
}

// ---- Prices ----

type Dimension = OcpiPriceComponent['type'];

function tariffPrices(tariff: OcpiTariff, options: PriceGroupOptions): { prices: Prices; currency: string } {
  return {
    currency: tariff.currency,
    prices: {
      time_price: dimensionSchedule(tariff, 'TIME'),
      kwh_price: dimensionSchedule(tariff, 'ENERGY'),
      blocking_fee: dimensionSchedule(tariff, 'PARKING_TIME'),
      session_fee: dimensionSchedule(tariff, 'FLAT'),
      starting_fee: startingFeeSchedule(options),
    },
  };
}

function fallbackPrices(options: PriceGroupOptions): { prices: Prices; currency: string } {
  const fallback = options.fallback;
  if (!fallback) {
    return {
      currency: options.currency ?? NO_CURRENCY,
      prices: { time_price: null, kwh_price: null, blocking_fee: null, session_fee: null, starting_fee: null },
    };
  }
  const vat = new Big(fallback.vat);
  const allDay = (price: string): PriceSchedule => ({ ALL: [priceItem(new Big(price), vat, 'FLAT', ALL_DAY, null, null)] });
  return {
    currency: fallback.currency,
    prices: {
      time_price: null,
      kwh_price: allDay(fallback.kwhPrice),
      blocking_fee: null,
      session_fee: fallback.sessionFee === undefined ? null : allDay(fallback.sessionFee),
      starting_fee: startingFeeSchedule(options),
    },
  };
}

function startingFeeSchedule(options: PriceGroupOptions): PriceSchedule | null {
  const fee = options.startingFee;
  if (!fee) return null;
  return { ALL: [priceItem(new Big(fee.price), new Big(fee.vat), 'FLAT', ALL_DAY, null, null)] };
}

interface Window {
  time_from: string;
  time_to: string;
  date_from: string;
  date_to: string;
}

const ALL_DAY: Window = { time_from: '00:00', time_to: '24:00', date_from: '', date_to: '' };

function dimensionSchedule(tariff: OcpiTariff, dimension: Dimension): PriceSchedule | null {
  const lists = new Map<ScheduleKey, PriceItem[]>();
  for (const element of tariff.elements) {
    const r = element.restrictions ?? {};
    if (r.reservation !== undefined) continue;
    const component = element.price_components.find((c) => c.type === dimension);
    if (!component) continue;
    const window: Window = {
      time_from: r.start_time ?? '00:00',
      time_to: r.end_time ?? '24:00',
      date_from: r.start_date ?? '',
      date_to: r.end_date ?? '',
    };
    const blocking = dimension === 'PARKING_TIME';
    const grace = blocking ? (r.min_duration ?? 0) / 60 : null;
    const cap = blocking && tariff.max_price ? atLeast2Decimals(new Big(String(tariff.max_price.excl_vat))) : null;
    const item = priceItem(
      new Big(String(component.price)),
      component.vat === undefined ? undefined : new Big(String(component.vat)),
      dimension,
      window,
      grace,
      cap,
    );
    const listed = r.day_of_week ?? [];
    const days: ScheduleKey[] = listed.length === 0 ? ['ALL'] : WEEKDAYS.filter((day) => listed.includes(day));
    for (const day of days) {
      const list = lists.get(day) ?? [];
      list.push({ ...item });
      lists.set(day, list);
    }
  }
  if (lists.size === 0) return null;
  const schedule: PriceSchedule = {};
  for (const key of SCHEDULE_KEYS) {
    const list = lists.get(key);
    if (list) schedule[key] = list;
  }
  return schedule;
}

function priceItem(gross: Big, vat: Big | undefined, dimension: Dimension, window: Window, grace: number | null, cap: string | null): PriceItem {
  const rate = vat ?? new Big(0);
  const inclTimes100 = gross.times(HUNDRED.plus(rate));
  const perMinute = dimension === 'TIME' || dimension === 'PARKING_TIME';
  // Per hour incl. VAT / 60 = gross × (100 + vat) / 6000. A quotient that does
  // not terminate (factor 3) repeats 3s or 6s, so big.js's 20-digit division
  // cannot move it across a half-way point of the 4-decimal rounding.
  const userFacing = perMinute ? inclTimes100.div(6000).round(4, Big.roundHalfUp).toFixed(4) : inclTimes100.div(100).round(2, Big.roundHalfUp).toFixed(2);
  return {
    ...window,
    gross_price: atLeast2Decimals(gross),
    user_facing_price: userFacing,
    tax: rate.toNumber(),
    grace_period_minutes: grace,
    blocking_cap: cap,
  };
}

/** Normal notation, exact, with at least 2 decimals: 0.3 -> "0.30", 0.295 -> "0.295", 12 -> "12.00". */
function atLeast2Decimals(value: Big): string {
  const plain = value.toFixed();
  const dot = plain.indexOf('.');
  return dot !== -1 && plain.length - dot - 1 >= 2 ? plain : value.toFixed(2);
}

function itemsOf(schedule: PriceSchedule | null): PriceItem[] {
  if (!schedule) return [];
  return SCHEDULE_KEYS.flatMap((key) => schedule[key] ?? []);
}

// ---- Pre-authorization ----

function preAuthorizationRule(partial: Partial<PreAuthorizationRule> | undefined): PreAuthorizationRule {
  const given = partial ?? {};
  const rule: PreAuthorizationRule = {
    assumedDurationMinutes: given.assumedDurationMinutes ?? DEFAULT_PRE_AUTHORIZATION.assumedDurationMinutes,
    assumedEnergyKwhCap: given.assumedEnergyKwhCap ?? DEFAULT_PRE_AUTHORIZATION.assumedEnergyKwhCap,
    minimum: given.minimum ?? DEFAULT_PRE_AUTHORIZATION.minimum,
    maximum: given.maximum ?? DEFAULT_PRE_AUTHORIZATION.maximum,
    roundUpTo: given.roundUpTo ?? DEFAULT_PRE_AUTHORIZATION.roundUpTo,
  };
  const fail = (message: string): never => {
    throw new RangeError(`pre-authorization rule: ${message}`);
  };
  if (!Number.isFinite(rule.assumedDurationMinutes) || rule.assumedDurationMinutes < 0) fail('assumedDurationMinutes must be a finite number >= 0');
  if (!Number.isFinite(rule.assumedEnergyKwhCap) || rule.assumedEnergyKwhCap < 0) fail('assumedEnergyKwhCap must be a finite number >= 0');
  const { minimum, maximum, step } = ruleAmounts(rule);
  if (minimum.lt(0) || maximum.lt(minimum)) fail('need 0 <= minimum <= maximum');
  if (step.lte(0) || step.times(100).mod(1).gt(0)) fail('roundUpTo must be > 0 with at most 2 decimals');
  if (ceilDiv(minimum, step).times(step).gt(maximum)) fail('no multiple of roundUpTo lies within [minimum, maximum]');
  return rule;
}

function ruleAmounts(rule: PreAuthorizationRule): { minimum: Big; maximum: Big; step: Big } {
  try {
    return { minimum: new Big(rule.minimum), maximum: new Big(rule.maximum), step: new Big(rule.roundUpTo) };
  } catch {
    throw new RangeError('pre-authorization rule: minimum, maximum and roundUpTo must be decimal strings');
  }
}

/** Exact ⌊n / d⌋ for n >= 0, d > 0, using only exact multiplication to settle big.js's rounded division. */
function floorDiv(n: Big, d: Big): Big {
  let q = n.div(d).round(0, Big.roundDown);
  while (q.gt(0) && q.times(d).gt(n)) q = q.minus(1);
  while (q.plus(1).times(d).lte(n)) q = q.plus(1);
  return q;
}

/** Exact ⌈n / d⌉ for n >= 0, d > 0. */
function ceilDiv(n: Big, d: Big): Big {
  const q = floorDiv(n, d);
  return q.times(d).eq(n) ? q : q.plus(1);
}

function maxInclTimes100(schedule: PriceSchedule | null): Big {
  let best = new Big(0);
  for (const item of itemsOf(schedule)) {
    const value = new Big(item.gross_price).times(HUNDRED.plus(String(item.tax)));
    if (value.gt(best)) best = value;
  }
  return best;
}

function preAuthorizationAmount(prices: Prices, powerKw: number, rule: PreAuthorizationRule): string {
  const { minimum, maximum, step } = ruleAmounts(rule);
  const minutes = new Big(String(rule.assumedDurationMinutes));
  // Everything × 6000 (100 for VAT percent, 60 for minutes → hours) stays exact.
  const energyKwhTimes60 = new Big(String(powerKw)).times(minutes);
  const capTimes60 = new Big(String(rule.assumedEnergyKwhCap)).times(60);
  const estimateTimes6000 = maxInclTimes100(prices.session_fee)
    .plus(maxInclTimes100(prices.starting_fee))
    .times(60)
    .plus(maxInclTimes100(prices.kwh_price).times(energyKwhTimes60.lt(capTimes60) ? energyKwhTimes60 : capTimes60))
    .plus(maxInclTimes100(prices.time_price).times(minutes));
  const ceiling = floorDiv(maximum, step).times(step);
  let amount: Big;
  if (estimateTimes6000.lt(minimum.times(6000))) amount = ceilDiv(minimum, step).times(step);
  else if (estimateTimes6000.gt(ceiling.times(6000))) amount = ceiling;
  else amount = ceilDiv(estimateTimes6000, step.times(6000)).times(step);
  return amount.toFixed(2);
}
