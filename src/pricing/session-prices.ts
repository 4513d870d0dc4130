// What a charging session shows and estimates of its price: the user-facing prices at the start, the operator's
// fallback price as an OCPI tariff, and the running cost estimate from the CPO's charging periods. Pure.
import Big from 'big.js';
import type { OcpiTariff } from '../ocpi-protocol/locations-tariffs.ts';
import type { Session as OcpiSession } from '../ocpi-protocol/sessions.ts';
import { roundToMinorUnits, withVat } from '../platform/money.ts';
import { localTime } from './local-time.ts';
import type { PriceGroup, PriceItem, PriceSchedule } from './price-groups.ts';
import { priceSessionExact } from './tariff-engine.ts';

/** The prices a session shows its user, fixed when it starts (the reference's user_facing_session_prices). */
export interface UserFacingPrices {
  kwh_price: string | null;
  time_price: string | null;
  session_fee: string | null;
  blocking_fee: string | null;
  starting_fee: string | null;
  grace_period_minutes: number | null;
  blocking_cap: string | null;
  currency: string;
}

/** What a session carries for pricing: the tariff it started under, where it is, and our starting fee. */
export interface SessionPricing {
  tariff: OcpiTariff | undefined;
  time_zone: string;
  starting_fee: { price: string; vat: string } | null;
  currency: string;
}

/** The price item of a schedule in force at a local instant (weekday list first, then ALL). */
function itemAt(schedule: PriceSchedule | null, weekday: string, minutes: number): PriceItem | undefined {
  if (!schedule) return undefined;
  const hhmm = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));
  const items = [...(schedule[weekday as keyof PriceSchedule] ?? []), ...(schedule.ALL ?? [])];
  return items.find((item) => {
    const from = hhmm(item.time_from);
    const to = hhmm(item.time_to);
    return from <= to ? minutes >= from && minutes < to : minutes >= from || minutes < to;
  });
}

/** The prices a user is charged, flattened for the session (the reference's user_facing_session_prices) from the EVSE's price group. */
export function userFacingPrices(group: PriceGroup, at: Date, timeZone: string): UserFacingPrices {
  const local = localTime(at, timeZone);
  const minutes = Math.floor(local.seconds / 60);
  const price = (schedule: PriceSchedule | null) => itemAt(schedule, local.weekday, minutes)?.user_facing_price ?? null;
  const blocking = itemAt(group.prices.blocking_fee, local.weekday, minutes);
  return {
    kwh_price: price(group.prices.kwh_price),
    time_price: price(group.prices.time_price),
    session_fee: price(group.prices.session_fee),
    blocking_fee: blocking?.user_facing_price ?? null,
    starting_fee: price(group.prices.starting_fee),
    grace_period_minutes: blocking?.grace_period_minutes ?? null,
    blocking_cap: blocking?.blocking_cap ?? null,
    currency: group.currency,
  };
}

/** The operator's fallback price as an OCPI tariff, so that one engine prices every session. */
export function fallbackTariff(
  party: { country_code: string; party_id: string },
  fallback: { currency: string; kwhPrice: string; vat: string },
  at: Date,
): OcpiTariff {
  return {
    country_code: party.country_code,
    party_id: party.party_id,
    id: 'FALLBACK',
    currency: fallback.currency,
    elements: [{ price_components: [{ type: 'ENERGY', price: Number(fallback.kwhPrice), vat: Number(fallback.vat), step_size: 1 }] }],
    last_updated: at.toISOString(),
  } as OcpiTariff;
}

/** What the session has cost so far, incl. VAT and the operator's starting fee, in minor units. */
export function estimateCost(session: SessionPricing, ocpi: OcpiSession, now: Date): number {
  const start = new Date(ocpi.start_date_time);
  const end = ocpi.end_date_time ? new Date(ocpi.end_date_time) : new Date(Math.max(now.getTime(), start.getTime()));
  const costs = priceSessionExact({
    tariff: session.tariff,
    currency: session.currency,
    timeZone: session.time_zone,
    start,
    end,
    periods: ocpi.charging_periods ?? [],
  });
  let gross = new Big(costs.total_cost.incl_vat);
  if (session.starting_fee) gross = gross.plus(withVat(session.starting_fee.price, session.starting_fee.vat));
  // Rounded, not refused: the starting fee with VAT can be finer than a cent; the estimate is shown, never charged.
  return roundToMinorUnits(gross, session.currency);
}
