// Charging sessions: the start saga, stop, the CPO's session updates, and the
// repairs of what messages missed. Transitions of a session's status are made
// here only (contract.md): pending -> active -> stopping -> completed, failed
// from pending; two more for what the CPO reports against our expectations:
// a CDR completes a session we had given up on (the car did charge), and a
// stop the charge point refuses after all puts a stopping session back to
// active.
//
// The start saga (ARCHITECTURE.md), each step written before the next begins:
//   holding    checks passed, the session row exists (the unique index allows
//              one unfinished session per user and EVSE: concurrent starts
//              insert one row), the hold is being placed
//   held       the hold is authorized
//   commanding START_SESSION (with the command id recorded first) is on its way
//   accepted   the CPO accepted: the start answers 201; the CPO's command result
//              and Session then move the session on, or the start deadline
//              fails it.
// Whatever fails after the row exists marks it failed and queues the release
// of the hold (a durable job: retried until the processor confirms). A crash
// mid-saga leaves a pending session at an early step; the reconciliation
// fails it and releases its hold after a grace period. If the CPO did start a
// session we gave up on, its Session is answered with a STOP_SESSION and its
// CDR is billed all the same: nothing delivered goes unbilled, nothing held
// stays held.
import { randomUUID } from 'node:crypto';
import Big from 'big.js';
import type { CDR } from '../../ocpi/cdrs.ts';
import type { OcpiTariff } from '../../ocpi/locations-tariffs.ts';
import { localTime, priceSessionExact, tariffValidAt } from '../../ocpi/pricing.ts';
import type { Session as OcpiSession } from '../../ocpi/sessions.ts';
import type { Clock } from '../../platform/clock.ts';
import { type CrashPoint, noCrashPoints } from '../../platform/crash-points.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { AppError, notFound, validationError } from '../../platform/errors.ts';
import { enqueue } from '../../platform/jobs.ts';
import { fromMinorUnits, toMinorUnits } from '../../platform/money.ts';
import type { Commands } from '../ocpi/commands.ts';
import type { OcpiToken } from '../ocpi/tokens.ts';
import type { Hold, PaymentsService } from '../payments/service.ts';
import type { Catalogue, PricingConfig } from '../stations/catalogue.ts';
import { pricingFor } from '../stations/catalogue.ts';
import type { Ingestion } from '../stations/ingest.ts';
import type { PriceGroup, PriceItem, PriceSchedule } from '../stations/price-groups.ts';
import type { BillingDetailsView } from '../users/schemas.ts';
import { missingBillingFields } from '../users/service.ts';
import * as repo from './repository.ts';

export const CHARGING_QUEUES = {
  releaseHold: 'charging.release-hold',
  startDeadline: 'charging.start-deadline',
  /** STOP_SESSION for a session we gave up on that runs anyway, or one still running after the user's stop. */
  stopAtCpo: 'charging.stop-at-cpo',
  reconcile: 'charging.reconcile',
  /** The invoicing module's: bill a completed session. */
  bill: 'invoicing.bill',
} as const;

export interface ChargingConfig {
  /** From the CPO's acceptance of START_SESSION to its first Session report; later, the session fails and its hold is released. */
  startTimeoutMs: number;
  /** A start saga that has not moved for this long was cut short (a crash): failed, hold released. */
  stalledStartMs: number;
  /** A stop the CPO has not finished (no message) for this long: CPOs are asked for what we missed, STOP_SESSION sent again. */
  stalledStopMs: number;
}

export const DEFAULT_CHARGING_CONFIG: ChargingConfig = { startTimeoutMs: 120_000, stalledStartMs: 120_000, stalledStopMs: 600_000 };

export interface ChargingLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface SessionCost {
  kwh_cost: string | null;
  time_cost: string | null;
  session_fee_cost: string | null;
  blocking_fee_cost: string | null;
  starting_fee_cost: string | null;
  invoice_download: string | null;
  invoice_vat: string;
  invoice_summary: string;
  invoice_credits: string;
  invoice_discount: string;
  currency: string;
}

export interface ChargingDeps {
  db: Database;
  clock: Clock;
  config?: Partial<ChargingConfig>;
  users: {
    requireUser(db: Queryable, clientId: string, userId: string, options?: { forUpdate?: boolean }): Promise<unknown>;
    getBillingDetails(db: Queryable, clientId: string, userId: string): Promise<BillingDetailsView>;
  };
  payments: Pick<PaymentsService, 'placeHold' | 'refreshHold' | 'releaseHold' | 'getHolds' | 'getPaymentMethod'>;
  catalogue: Pick<Catalogue, 'evse' | 'station'>;
  ingestion: Pick<Ingestion, 'findLocation' | 'findTariff'>;
  commands: Pick<Commands, 'startSession' | 'stopSession'>;
  tokenForUser(userId: string): Promise<OcpiToken | undefined>;
  /** The OCPI module: pull what every CPO changed since the last pull (Session updates and CDRs we missed). */
  pullFromCpos?(): Promise<void>;
  /** The OCPI module: CDRs received since `since` (newest first). */
  recentCdrs?(since: Date, limit: number): Promise<CDR[]>;
  pricing: PricingConfig;
  /** The invoicing module: whether the user owes money (no start then), and what billed sessions cost. */
  hasUnpaidDebt(q: Queryable, clientId: string, userId: string): Promise<boolean>;
  sessionCosts(q: Queryable, clientId: string, sessionIds: readonly string[]): Promise<Map<string, SessionCost>>;
  log?: ChargingLog;
  /** Crash tests only: kills the process at a named step (a no-op unless TEST_CRASH_POINTS names it). */
  crashPoint?: CrashPoint;
}

export interface SessionView {
  id: string;
  status: repo.SessionStatus;
  is_active: boolean;
  start_time: string | null;
  end_time: string | null;
  duration: number | null;
  consumed_energy: string;
  evse_id: string;
  station_id: string;
  station_info: repo.StationInfo;
  is_partner: boolean;
  logo_url: string | null;
  user_facing_session_prices: repo.UserFacingPrices;
  session_cost: SessionCost;
  estimated_cost: string | null;
  pre_authorization: { amount: string; currency: string; status: string };
  payment_method_id: string;
  failure_reason: string | null;
  rates: number | null;
  created_at: string;
  updated_at: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An authenticated hold of an earlier attempt is taken over by a new start within this time. */
const ADOPT_WITHIN_MS = 30 * 60_000;

/** Why a session failed, as clients read it (failure_reason). */
export const FAILURES = {
  authenticationRequired: 'authentication_required',
  holdDeclined: 'pre_authorization_declined',
  processorUnavailable: 'payment_processor_unavailable',
  rejected: 'rejected_by_operator',
  unreachable: 'operator_unreachable',
  startFailed: 'start_failed_at_charge_point',
  noSession: 'no_session_reported',
  interrupted: 'start_interrupted',
  invalid: 'session_invalid',
} as const;

function emptyCost(currency: string): SessionCost {
  return {
    kwh_cost: null,
    time_cost: null,
    session_fee_cost: null,
    blocking_fee_cost: null,
    starting_fee_cost: null,
    invoice_download: null,
    invoice_vat: fromMinorUnits(0, currency),
    invoice_summary: fromMinorUnits(0, currency),
    invoice_credits: fromMinorUnits(0, currency),
    invoice_discount: fromMinorUnits(0, currency),
    currency,
  };
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
export function userFacingPrices(group: PriceGroup, at: Date, timeZone: string): repo.UserFacingPrices {
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
export function estimateCost(session: Pick<repo.SessionRow, 'tariff' | 'time_zone' | 'starting_fee' | 'currency'>, ocpi: OcpiSession, now: Date): number {
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
  if (session.starting_fee) gross = gross.plus(new Big(session.starting_fee.price).times(new Big(session.starting_fee.vat).div(100).plus(1)));
  return toMinorUnits(gross, session.currency);
}

export function createCharging(deps: ChargingDeps) {
  const { db, clock } = deps;
  const config: ChargingConfig = { ...DEFAULT_CHARGING_CONFIG, ...deps.config };
  const log = deps.log;
  const crash = deps.crashPoint ?? noCrashPoints;
  /** When the reconciliation last asked the CPOs for what we missed (ms). */
  let lastPull: number | undefined;

  async function views(q: Queryable, clientId: string, rows: repo.SessionRow[]): Promise<SessionView[]> {
    const [holds, costs] = await Promise.all([
      deps.payments.getHolds(q, clientId, [...new Set(rows.map((r) => r.hold_reference))]),
      deps.sessionCosts(
        q,
        clientId,
        rows.filter((r) => r.status === 'completed').map((r) => r.id),
      ),
    ]);
    const now = clock.now();
    return rows.map((row) => viewOf(row, holds.get(row.hold_reference), costs.get(row.id), now));
  }

  function viewOf(row: repo.SessionRow, hold: Hold | undefined, cost: SessionCost | undefined, now: Date): SessionView {
    // A running session's duration: to now, or to the CPO's latest report when its clock is ahead of ours.
    const running = row.status === 'active' || row.status === 'stopping';
    const end = row.end_time ?? (running ? new Date(Math.max(now.getTime(), row.reported_at?.getTime() ?? 0)) : null);
    return {
      id: row.id,
      status: row.status,
      is_active: repo.UNFINISHED.includes(row.status),
      start_time: row.start_time?.toISOString() ?? null,
      end_time: row.end_time?.toISOString() ?? null,
      duration: row.start_time && end ? Math.max(0, Math.floor((end.getTime() - row.start_time.getTime()) / 1000)) : null,
      consumed_energy: new Big(row.consumed_energy).toFixed(3),
      evse_id: row.evse_id,
      station_id: row.station_id,
      station_info: row.station_info,
      is_partner: row.is_partner,
      logo_url: row.logo_url,
      user_facing_session_prices: row.user_facing_session_prices,
      session_cost: cost ?? emptyCost(row.currency),
      estimated_cost: row.estimated_cost === null ? null : fromMinorUnits(row.estimated_cost, row.currency),
      pre_authorization: {
        amount: fromMinorUnits(row.pre_authorization_amount, row.currency),
        currency: row.currency.toUpperCase(),
        status: hold?.status ?? 'pending',
      },
      payment_method_id: row.payment_method_id,
      failure_reason: row.failure_reason,
      rates: row.rates,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  const view = async (q: Queryable, row: repo.SessionRow) => (await views(q, row.client_id, [row]))[0] as SessionView;

  /** Marks a pending session failed and queues the release of its hold (unless the customer is to authenticate it). */
  async function fail(q: Queryable, id: string, reason: string, options: { release?: boolean } = {}): Promise<repo.SessionRow | undefined> {
    const failed = await repo.updateSession(q, id, { status: 'failed', start_step: 'ended', failure_reason: reason }, clock.now(), ['pending']);
    if (failed && options.release !== false) await queueRelease(q, failed.id);
    return failed;
  }

  const queueRelease = (q: Queryable, sessionId: string) =>
    enqueue(q, { queue: CHARGING_QUEUES.releaseHold, payload: { session_id: sessionId }, key: sessionId, maxAttempts: 50 }, clock.now());

  /** Everything the start needs about the EVSE, read before the session row is written. */
  async function resolveEvse(evseId: string) {
    const evse = deps.catalogue.evse(evseId);
    if (!evse) throw validationError('evse_id', 'no such EVSE');
    if (evse.status !== 'AVAILABLE') {
      throw new AppError('station_availability_issue', `EVSE ${evse.evse_id} is not available (${evse.status.toLowerCase()}).`);
    }
    const station = deps.catalogue.station({ evseId });
    const group = station?.price_groups.find((g) => g.evse_ids.includes(evse.evse_id));
    const location = await deps.ingestion.findLocation({ country_code: evse.country_code, party_id: evse.party_id, id: evse.location_id });
    const ocpiEvse = location?.evses?.find((e) => e.uid === evse.evse_uid);
    if (!station || !group || !location || !ocpiEvse) {
      throw new AppError('station_availability_issue', 'The station’s data could not be obtained; try again shortly.', { status: 424 });
    }
    const now = clock.now();
    const connector = ocpiEvse.connectors[0];
    let tariff: OcpiTariff | undefined;
    for (const tariffId of connector?.tariff_ids ?? []) {
      const found = await deps.ingestion.findTariff({ country_code: evse.country_code, party_id: evse.party_id, id: tariffId });
      if (found && tariffValidAt(found, now)) {
        tariff = found;
        break;
      }
    }
    const pricing = pricingFor(location.country, deps.pricing);
    if (!tariff && !pricing.fallback) {
      throw new AppError('station_availability_issue', 'The operator sent no price for this EVSE; it cannot be started.', { status: 424 });
    }
    const timeZone = location.time_zone ?? 'UTC';
    const currency = group.currency.toUpperCase();
    return {
      evse,
      station,
      group,
      location,
      connector,
      tariff: tariff ?? fallbackTariff(evse, pricing.fallback as NonNullable<typeof pricing.fallback>, now),
      isFallback: !tariff,
      timeZone,
      currency,
      startingFee: pricing.startingFee ?? null,
      amount: toMinorUnits(group.pre_authorization_amount, currency),
    };
  }

  /** An earlier attempt of this user whose hold waited for the customer's authentication: taken over if it is for enough. */
  async function adoptableHold(q: Queryable, clientId: string, userId: string, paymentMethodId: string, amount: number, currency: string) {
    const { rows } = await q.query<{ id: string; hold_reference: string }>(
      `SELECT s.id, s.hold_reference FROM charging_sessions s
        WHERE s.client_id = $1 AND s.user_id = $2 AND s.payment_method_id = $3 AND s.status = 'failed' AND s.failure_reason = $4
          AND s.currency = $5 AND s.pre_authorization_amount >= $6 AND s.created_at >= $7
          AND NOT EXISTS (SELECT 1 FROM charging_sessions t WHERE t.adopted_hold_of = s.id)
        ORDER BY s.created_at DESC LIMIT 1 FOR UPDATE OF s`,
      [clientId, userId, paymentMethodId, FAILURES.authenticationRequired, currency, amount, new Date(clock.now().getTime() - ADOPT_WITHIN_MS)],
    );
    return rows[0];
  }

  async function requireMethod(clientId: string, userId: string, paymentMethodId: string): Promise<void> {
    try {
      await deps.payments.getPaymentMethod(db, clientId, userId, paymentMethodId);
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') {
        // The user was checked by the route's caller chain only here: an unknown user stays "not found".
        await deps.users.requireUser(db, clientId, userId);
        throw new AppError('payment_method_error', 'payment_method_id: not a payment method of this user.', {
          errors: [{ field: 'payment_method_id', message: 'not a payment method of this user' }],
        });
      }
      throw error;
    }
  }

  /** Step 1: checks, then the session row (or already_charging). */
  async function begin(clientId: string, userId: string, body: { payment_method_id: string; evse_id: string }) {
    // Cheap refusals first, without locks; they are checked again under the user's lock.
    const target = await resolveEvse(body.evse_id);
    const begun = await db.transaction(async (tx) => {
      // The user's row lock serializes this user's starts (and their deletion).
      await deps.users.requireUser(tx, clientId, userId, { forUpdate: true });
      const missing = missingBillingFields(await deps.users.getBillingDetails(tx, clientId, userId));
      if (missing.length > 0) {
        throw new AppError('billing_data_required', `Billing details are incomplete: ${missing.join(', ')}.`, {
          errors: missing.map((field) => ({ field, message: 'required for charging' })),
        });
      }
      if (await deps.hasUnpaidDebt(tx, clientId, userId)) {
        throw new AppError('payment_error', 'The user has an unpaid charging debt; it must be paid before charging again (GET .../charging/debts/).');
      }
      const id = randomUUID();
      const adopted = await adoptableHold(tx, clientId, userId, body.payment_method_id, target.amount, target.currency);
      const now = clock.now();
      const station = target.station;
      const row = await repo.insertSession(tx, {
        id,
        client_id: clientId,
        user_id: userId,
        payment_method_id: body.payment_method_id,
        evse_id: target.evse.evse_id,
        station_id: target.evse.station_id,
        country_code: target.evse.country_code,
        party_id: target.evse.party_id,
        operator_name: station.operator.name || null,
        location_id: target.evse.location_id,
        evse_uid: target.evse.evse_uid,
        connector_id: target.connector?.id ?? null,
        hold_reference: adopted?.hold_reference ?? `session:${id}`,
        pre_authorization_amount: target.amount,
        currency: target.currency,
        tariff: target.tariff,
        tariff_is_fallback: target.isFallback,
        time_zone: target.timeZone,
        starting_fee: target.startingFee,
        station_info: {
          station_name: station.name,
          station_address: station.address,
          country: target.location.country ?? null,
          station_speed: station.speed,
          connector_standard: target.group.type,
          connector_power: target.group.power,
          support_phone: station.operator.contact.phone,
          latitude: station.coordinates.latitude,
          longitude: station.coordinates.longitude,
        },
        is_partner: station.is_partner,
        logo_url: station.logo_url ?? null,
        user_facing_session_prices: userFacingPrices(target.group, now, target.timeZone),
        created_at: now,
      });
      if (!row) {
        throw new AppError('already_charging', 'The user already has an unfinished session (or a start in flight) on this EVSE.');
      }
      if (adopted) return { row: (await repo.updateSession(tx, row.id, { adopted_hold_of: adopted.id }, now)) as repo.SessionRow, adopted: true };
      return { row, adopted: false };
    });
    // The payment method may have to be read from the processor (one whose webhook has not arrived yet), so it is
    // checked outside the transaction above, which concurrent starts of this user wait on. Not the user's: the row,
    // which nothing has acted on yet, is removed.
    try {
      await requireMethod(clientId, userId, body.payment_method_id);
    } catch (error) {
      await db.query("DELETE FROM charging_sessions WHERE id = $1 AND start_step = 'holding'", [begun.row.id]);
      throw error;
    }
    return begun;
  }

  /** Step 2: the hold. Answers the refusal (402) after the session is failed. */
  async function hold(row: repo.SessionRow, adopted: boolean): Promise<void> {
    let placed: Hold;
    try {
      placed = adopted
        ? await deps.payments.refreshHold(row.client_id, row.hold_reference)
        : await deps.payments.placeHold({
            clientId: row.client_id,
            userId: row.user_id,
            paymentMethodId: row.payment_method_id,
            amount: row.pre_authorization_amount,
            currency: row.currency,
            reference: row.hold_reference,
            description: `Charging at ${row.evse_id}`,
          });
    } catch (error) {
      await fail(db, row.id, FAILURES.processorUnavailable);
      throw error;
    }
    if (placed.status === 'authorized') {
      crash('start:hold-placed');
      await repo.updateSession(db, row.id, { start_step: 'held' }, clock.now(), ['pending']);
      crash('start:held');
      return;
    }
    if (placed.status === 'requires_action' && placed.clientSecret) {
      // The customer authenticates this hold; the next start of this user (same method) takes it over.
      await fail(db, row.id, FAILURES.authenticationRequired, { release: false });
      throw new AppError(
        'pre_authorization_failed',
        'The bank asks the customer to authenticate the pre-authorization; confirm it with payment_intent_client_secret, then start again.',
        {
          paymentIntentClientSecret: placed.clientSecret,
        },
      );
    }
    await fail(db, row.id, FAILURES.holdDeclined);
    const reason = placed.failureMessage ?? placed.failureCode ?? placed.status;
    throw new AppError(
      'pre_authorization_failed',
      `The pre-authorization of ${fromMinorUnits(row.pre_authorization_amount, row.currency)} ${row.currency} failed: ${reason}.`,
    );
  }

  /** Step 3: START_SESSION. */
  async function command(row: repo.SessionRow): Promise<repo.SessionRow> {
    const token = await deps.tokenForUser(row.user_id);
    if (!token) throw new Error(`no token for user ${row.user_id}`);
    const commandId = randomUUID();
    const commanding = await repo.updateSession(db, row.id, { start_step: 'commanding', start_command_id: commandId }, clock.now(), ['pending']);
    if (!commanding) return (await repo.findSession(db, row.id)) as repo.SessionRow;
    const outcome = await deps.commands.startSession({
      country_code: row.country_code,
      party_id: row.party_id,
      location_id: row.location_id,
      evse_uid: row.evse_uid,
      ...(row.connector_id ? { connector_id: row.connector_id } : {}),
      token,
      authorization_reference: row.id,
      command_id: commandId,
    });
    if (outcome.outcome === 'accepted') {
      crash('start:command-accepted');
      const now = clock.now();
      const deadline = new Date(now.getTime() + Math.max(config.startTimeoutMs, outcome.timeoutSeconds * 1000));
      const accepted = await db.transaction(async (tx) => {
        // Only the step: the CPO's Session may already have made it active.
        const updated = await repo.updateSession(tx, row.id, { start_step: 'accepted', accepted_at: now, start_deadline: deadline }, now, [
          'pending',
          'active',
        ]);
        await enqueue(tx, { queue: CHARGING_QUEUES.startDeadline, payload: { session_id: row.id }, key: row.id, runAt: deadline }, now);
        return updated;
      });
      return accepted ?? ((await repo.findSession(db, row.id)) as repo.SessionRow);
    }
    const reason = outcome.outcome === 'rejected' ? FAILURES.rejected : FAILURES.unreachable;
    await fail(db, row.id, reason);
    log?.warn(
      { session_id: row.id, outcome: outcome.outcome, detail: outcome.outcome === 'rejected' ? outcome.result : outcome.reason },
      'START_SESSION not accepted',
    );
    const detail =
      outcome.outcome === 'rejected'
        ? `The operator refused to start charging (${outcome.result}${outcome.message ? `: ${outcome.message}` : ''}); the pre-authorization is released.`
        : 'The operator could not be reached; the pre-authorization is released. Try again shortly.';
    throw new AppError('charging_provider_error', detail);
  }

  /**
   * The session a CPO message is about: ours by authorization_reference (our id), else by the CPO's session id,
   * else (a CPO that echoes neither, about a session it never reported) the token's user on that EVSE.
   */
  async function sessionOf(
    tx: Queryable,
    message: { country_code: string; party_id: string; authorization_reference?: string; session_id?: string; id?: string },
    seen?: { tokenUid: string; tokenType: string; locationId: string; evseUid: string | undefined; start: string },
  ) {
    const country_code = message.country_code.toUpperCase();
    const party_id = message.party_id.toUpperCase();
    const ref = message.authorization_reference;
    if (ref && UUID.test(ref)) {
      const row = await repo.findSession(tx, ref.toLowerCase(), { forUpdate: true });
      if (row && row.country_code === country_code && row.party_id === party_id) return row;
    }
    const sessionId = message.session_id ?? message.id;
    const known = sessionId ? await repo.findByOcpiSession(tx, { country_code, party_id, id: sessionId }, { forUpdate: true }) : undefined;
    if (known || !seen || seen.tokenType !== 'APP_USER' || !UUID.test(seen.tokenUid) || !seen.evseUid) return known;
    // Started by us moments before the CPO's clock says the session started (clocks differ: 5 minutes' grace).
    const startedBy = new Date(new Date(seen.start).getTime() + 5 * 60_000);
    if (Number.isNaN(startedBy.getTime())) return undefined;
    return repo.findByTokenAndEvse(
      tx,
      { user_id: seen.tokenUid.toLowerCase(), country_code, party_id, location_id: seen.locationId, evse_uid: seen.evseUid, startedBy },
      { forUpdate: true },
    );
  }

  return {
    config,

    /** A session for the invoicing module (any client: billing runs in jobs). */
    sessionForBilling: (id: string) => repo.findSession(db, id),

    /** Completed sessions updated in [from, to): the invoicing module checks each has its bill. */
    async completedBetween(from: Date, to: Date): Promise<string[]> {
      const { rows } = await db.query<{ id: string }>(
        "SELECT id FROM charging_sessions WHERE status = 'completed' AND updated_at >= $1 AND updated_at < $2 ORDER BY updated_at LIMIT 1000",
        [from, to],
      );
      return rows.map((r) => r.id);
    },

    async start(clientId: string, userId: string, body: { payment_method_id: string; evse_id: string }): Promise<SessionView> {
      const { row, adopted } = await begin(clientId, userId, body);
      crash('start:begun');
      await hold(row, adopted);
      const started = await command(row);
      crash('start:accepted');
      return view(db, started);
    },

    async stop(clientId: string, userId: string, sessionId: string): Promise<void> {
      await deps.users.requireUser(db, clientId, userId);
      const row = UUID.test(sessionId) ? await repo.findClientSession(db, clientId, userId, sessionId.toLowerCase()) : undefined;
      if (!row) throw notFound('Charging session');
      if (row.status === 'completed' || row.status === 'failed') throw new AppError('already_stopped', `The session is already ${row.status}.`);
      if (row.status === 'stopping') return;
      if (!row.ocpi_session_id) {
        throw new AppError('conflict', 'The operator has not reported the session yet, so it cannot be stopped yet; retry in a few seconds.', {
          headers: { 'Retry-After': '2' },
        });
      }
      const commandId = randomUUID();
      await repo.updateSession(db, row.id, { stop_command_id: commandId, stop_requested_at: clock.now() }, clock.now(), ['pending', 'active']);
      const outcome = await deps.commands.stopSession({
        country_code: row.country_code,
        party_id: row.party_id,
        session_id: row.ocpi_session_id,
        command_id: commandId,
      });
      if (outcome.outcome === 'accepted') {
        crash('stop:command-accepted');
        await repo.updateSession(db, row.id, { status: 'stopping' }, clock.now(), ['pending', 'active']);
        return;
      }
      log?.warn({ session_id: row.id, outcome: outcome.outcome }, 'STOP_SESSION not accepted');
      throw new AppError(
        'charging_provider_error',
        outcome.outcome === 'rejected'
          ? `The operator refused to stop charging (${outcome.result}${outcome.message ? `: ${outcome.message}` : ''}).`
          : 'The operator could not be reached; try again shortly.',
      );
    },

    async list(clientId: string, userId: string, status: repo.SessionStatus | undefined, page: { limit: number; offset: number }) {
      await deps.users.requireUser(db, clientId, userId);
      const { count, rows } = await repo.listSessions(db, clientId, userId, status, page);
      return { count, results: await views(db, clientId, rows) };
    },

    async get(clientId: string, userId: string, sessionId: string): Promise<SessionView> {
      await deps.users.requireUser(db, clientId, userId);
      const row = UUID.test(sessionId) ? await repo.findClientSession(db, clientId, userId, sessionId.toLowerCase()) : undefined;
      if (!row) throw notFound('Charging session');
      return view(db, row);
    },

    async rate(tx: Queryable, clientId: string, userId: string, sessionId: string, rates: number | null): Promise<SessionView> {
      await deps.users.requireUser(tx, clientId, userId);
      const row = UUID.test(sessionId) ? await repo.findClientSession(tx, clientId, userId, sessionId.toLowerCase()) : undefined;
      if (!row) throw notFound('Charging session');
      return view(tx, (await repo.updateSession(tx, row.id, { rates }, clock.now())) as repo.SessionRow);
    },

    /** Removal guard of payment methods: not while an unfinished session uses it. */
    async paymentMethodGuard(tx: Queryable, target: { clientId: string; userId: string; paymentMethodId: string }): Promise<void> {
      if ((await repo.countUnfinished(tx, target.clientId, target.userId, target.paymentMethodId)) > 0) {
        throw new AppError('already_charging', 'This payment method pays for an unfinished charging session; remove it once the session has ended.');
      }
    },

    /** Deletion guard of users: not while charging. */
    async userDeletionGuard(tx: Queryable, clientId: string, userId: string): Promise<void> {
      if ((await repo.countUnfinished(tx, clientId, userId)) > 0) {
        throw new AppError('already_charging', 'The user has an unfinished charging session; delete the user once it has ended.');
      }
    },

    // --- CPO messages (inside the transaction storing them) -------------------------------

    async sessionChanged(tx: Queryable, ocpi: OcpiSession): Promise<void> {
      const row = await sessionOf(tx, ocpi, {
        tokenUid: ocpi.cdr_token.uid,
        tokenType: ocpi.cdr_token.type,
        locationId: ocpi.location_id,
        evseUid: ocpi.evse_uid,
        start: ocpi.start_date_time,
      });
      if (!row) return;
      const now = clock.now();
      if (row.status === 'failed' || row.status === 'completed') {
        // A session we gave up on is running after all: stop it (its CDR is still billed).
        if (row.status === 'failed' && (ocpi.status === 'ACTIVE' || ocpi.status === 'PENDING' || ocpi.status === 'RESERVATION')) {
          if (!row.ocpi_session_id) await repo.updateSession(tx, row.id, { ocpi_session_id: ocpi.id }, now);
          await enqueue(tx, { queue: CHARGING_QUEUES.stopAtCpo, payload: { session_id: row.id }, key: row.id }, now);
          log?.warn({ session_id: row.id, ocpi_session_id: ocpi.id }, 'the CPO runs a session we had given up on: stopping it');
        }
        return;
      }
      const changes: repo.SessionChanges = {
        ocpi_session_id: row.ocpi_session_id ?? ocpi.id,
        start_time: new Date(ocpi.start_date_time),
        reported_at: new Date(ocpi.last_updated),
        consumed_energy: new Big(String(ocpi.kwh)).toFixed(3),
      };
      try {
        changes.estimated_cost = estimateCost(row, ocpi, now);
      } catch (error) {
        log?.warn({ session_id: row.id, err: error }, 'estimating the session cost failed');
      }
      if (ocpi.end_date_time) changes.end_time = new Date(ocpi.end_date_time);
      if (ocpi.status === 'ACTIVE' && row.status === 'pending') changes.status = 'active';
      if (ocpi.status === 'COMPLETED') changes.status = 'stopping';
      if (ocpi.status === 'INVALID') {
        await repo.updateSession(tx, row.id, { ...changes, status: 'failed', start_step: 'ended', failure_reason: FAILURES.invalid }, now);
        await queueRelease(tx, row.id);
        return;
      }
      if (changes.status === 'active' || changes.status === 'stopping') changes.start_step = row.start_step === 'accepted' ? 'accepted' : row.start_step;
      await repo.updateSession(tx, row.id, changes, now);
    },

    async commandResult(tx: Queryable, commandId: string, result: { result: string }): Promise<void> {
      const row = await repo.findByStartCommand(tx, commandId, { forUpdate: true });
      if (!row || result.result === 'ACCEPTED') return;
      const now = clock.now();
      if (row.start_command_id === commandId) {
        // The charge point could not start; a session the CPO already reported stays to be settled by its messages.
        if (row.status === 'pending' && !row.ocpi_session_id) {
          await fail(tx, row.id, `${FAILURES.startFailed}: ${result.result.toLowerCase()}`);
          log?.info({ session_id: row.id, result: result.result }, 'the charge point did not start the session');
        }
        return;
      }
      if (row.stop_command_id === commandId && row.status === 'stopping') {
        await repo.updateSession(tx, row.id, { status: 'active', stop_requested_at: null }, now, ['stopping']);
        log?.warn({ session_id: row.id, result: result.result }, 'the charge point did not stop the session; it is active again');
      }
    },

    async cdrReceived(tx: Queryable, cdr: CDR, options: { quiet?: boolean } = {}): Promise<boolean> {
      const row = await sessionOf(tx, cdr, {
        tokenUid: cdr.cdr_token.uid,
        tokenType: cdr.cdr_token.type,
        locationId: cdr.cdr_location.id,
        evseUid: cdr.cdr_location.evse_uid,
        start: cdr.start_date_time,
      });
      if (!row) {
        if (!options.quiet) log?.warn({ cdr_id: cdr.id, party: `${cdr.country_code}*${cdr.party_id}` }, 'a CDR for no session of ours; kept, not billed');
        return false;
      }
      if (row.cdr_id !== null) {
        if (row.cdr_id !== cdr.id) log?.warn({ session_id: row.id, cdr_id: cdr.id, first_cdr_id: row.cdr_id }, 'a second CDR for a session; not billed again');
        return row.cdr_id === cdr.id;
      }
      const now = clock.now();
      await repo.updateSession(
        tx,
        row.id,
        {
          status: 'completed',
          start_step: 'ended',
          ocpi_session_id: row.ocpi_session_id ?? cdr.session_id ?? null,
          start_time: row.start_time ?? new Date(cdr.start_date_time),
          end_time: new Date(cdr.end_date_time),
          consumed_energy: new Big(String(cdr.total_energy)).toFixed(3),
          cdr_country_code: cdr.country_code.toUpperCase(),
          cdr_party_id: cdr.party_id.toUpperCase(),
          cdr_id: cdr.id,
        },
        now,
      );
      await enqueue(tx, { queue: CHARGING_QUEUES.bill, payload: { session_id: row.id }, key: row.id, maxAttempts: 50 }, now);
      crash('cdr:applied');
      return true;
    },

    // --- jobs ------------------------------------------------------------------------------

    /** Releases a session's hold (idempotent); a hold another attempt took over, or a completed session's, is left alone. */
    async releaseHold(sessionId: string): Promise<void> {
      const row = await repo.findSession(db, sessionId);
      if (row?.status !== 'failed') return;
      const { rows } = await db.query('SELECT 1 FROM charging_sessions WHERE adopted_hold_of = $1', [row.id]);
      if (rows.length > 0) return;
      if (row.adopted_hold_of === null && row.hold_reference !== `session:${row.id}`) return;
      try {
        await deps.payments.releaseHold(row.client_id, row.hold_reference);
      } catch (error) {
        if (error instanceof AppError && error.code === 'not_found') return; // never placed
        throw error;
      }
    },

    /** The start deadline: no Session reported by then, the session fails and its hold is released. */
    async startDeadline(sessionId: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await repo.findSession(tx, sessionId, { forUpdate: true });
        if (row?.status !== 'pending' || row.ocpi_session_id) return;
        if (row.start_deadline && row.start_deadline > clock.now()) return;
        await fail(tx, row.id, FAILURES.noSession);
        log?.warn({ session_id: row.id }, 'no session reported by the CPO within the start timeout');
      });
    },

    /**
     * STOP_SESSION for a session we gave up on that the CPO runs anyway, or for one still running after the user
     * asked to stop (the first STOP_SESSION lost, or a crash before it was recorded); retried until answered.
     */
    async stopAtCpo(sessionId: string): Promise<void> {
      const row = await repo.findSession(db, sessionId);
      if (!row?.ocpi_session_id) return;
      const orphan = row.status === 'failed';
      const unstopped = row.status === 'active' && row.stop_requested_at !== null;
      if (!orphan && !unstopped) return;
      // The attempt is recorded first: the next one comes stalledStopMs later, whatever the CPO answers.
      if (unstopped) await repo.updateSession(db, row.id, { stop_requested_at: clock.now() }, clock.now(), ['active']);
      const outcome = await deps.commands.stopSession({ country_code: row.country_code, party_id: row.party_id, session_id: row.ocpi_session_id });
      if (outcome.outcome === 'unreachable') throw new Error(`STOP_SESSION at the CPO: ${outcome.reason}`);
      if (outcome.outcome === 'rejected') {
        log?.warn({ session_id: row.id, result: outcome.result, orphan }, 'the CPO refused to stop a session');
        return;
      }
      if (unstopped) await repo.updateSession(db, row.id, { status: 'stopping' }, clock.now(), ['active']);
    },

    /**
     * Repairs what messages and crashes left behind: starts cut short (failed, hold released), accepted starts
     * past their deadline, and failed sessions whose hold still holds funds.
     */
    async reconcile(): Promise<{ stalled: number; overdue: number; released: number; stopped_again: number; cdrs_matched: number }> {
      const now = clock.now();
      const result = { stalled: 0, overdue: 0, released: 0, stopped_again: 0, cdrs_matched: 0 };
      for (const row of await repo.stalledStarts(db, new Date(now.getTime() - config.stalledStartMs), 100)) {
        if (await fail(db, row.id, FAILURES.interrupted)) result.stalled++;
      }
      for (const row of await repo.overdueStarts(db, now, 100)) {
        await this.startDeadline(row.id);
        result.overdue++;
      }
      // Holds of failed sessions (last two days) still holding funds: queued for release again.
      const failed = await repo.failedSince(db, new Date(now.getTime() - 2 * 86_400_000), 500);
      const byClient = new Map<string, repo.SessionRow[]>();
      for (const row of failed) byClient.set(row.client_id, [...(byClient.get(row.client_id) ?? []), row]);
      for (const [clientId, rows] of byClient) {
        const holds = await deps.payments.getHolds(
          db,
          clientId,
          rows.map((r) => r.hold_reference),
        );
        for (const row of rows) {
          const held = holds.get(row.hold_reference);
          const stale = row.failure_reason !== FAILURES.authenticationRequired || now.getTime() - row.updated_at.getTime() > ADOPT_WITHIN_MS;
          if (held && stale && ['authorized', 'requires_action', 'pending', 'processing'].includes(held.status)) {
            if ((await queueRelease(db, row.id)).created) result.released++;
          }
        }
      }
      // Stops nothing has been heard of for stalledStopMs: first what the CPOs have (missed Session updates and
      // CDRs arrive through the usual path; at most one pull per stalledStopMs), then STOP_SESSION again for
      // sessions still running after the user's stop.
      const staleBefore = new Date(now.getTime() - config.stalledStopMs);
      const stale = await repo.staleStops(db, staleBefore, 100);
      if (stale.length > 0 && deps.pullFromCpos && (lastPull === undefined || now.getTime() - lastPull >= config.stalledStopMs)) {
        lastPull = now.getTime();
        await deps.pullFromCpos();
      }
      for (const row of stale) {
        const current = await repo.findSession(db, row.id);
        if (current?.status !== 'active' || current.stop_requested_at === null || current.stop_requested_at > staleBefore) continue;
        const queued = await enqueue(db, { queue: CHARGING_QUEUES.stopAtCpo, payload: { session_id: row.id }, key: row.id }, now);
        if (queued.created) {
          result.stopped_again++;
          log?.warn({ session_id: row.id }, 'a session still runs long after its stop: STOP_SESSION sent again');
        }
      }
      // CDRs no session is linked to (last two days), matched again: a Session naming our id may have come since.
      if (deps.recentCdrs) {
        const cdrs = await deps.recentCdrs(new Date(now.getTime() - 2 * 86_400_000), 500);
        const keyOf = (cdr: CDR) => ({ country_code: cdr.country_code.toUpperCase(), party_id: cdr.party_id.toUpperCase(), id: cdr.id });
        const linked = await repo.linkedCdrs(db, cdrs.map(keyOf));
        for (const cdr of cdrs) {
          const key = keyOf(cdr);
          if (linked.has(`${key.country_code}*${key.party_id}*${key.id}`)) continue;
          if (await db.transaction((tx) => this.cdrReceived(tx, cdr, { quiet: true }))) result.cdrs_matched++;
        }
      }
      return result;
    },
  };
}

export type Charging = ReturnType<typeof createCharging>;
