// The start saga (ARCHITECTURE.md), each step written before the next begins:
//   holding    checks passed, the session row exists (the unique index allows one unfinished session per user
//              and EVSE: concurrent starts insert one row), the hold is being placed
//   held       the hold is authorized
//   commanding START_SESSION (with the command id recorded first) is on its way
//   accepted   the CPO accepted: the start answers 201; the CPO's command result and Session then move the
//              session on (cpo-events.ts), or the start deadline fails it (jobs.ts).
// Whatever fails after the row exists marks it failed and queues the release of the hold (a durable job:
// retried until the processor confirms). A crash mid-saga leaves a pending session at an early step; the
// reconciliation fails it and releases its hold after a grace period (reconcile.ts). If the CPO did start a
// session we gave up on, its Session is answered with a STOP_SESSION and its CDR is billed all the same:
// nothing delivered goes unbilled, nothing held stays held.
import { randomUUID } from 'node:crypto';
import type { OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Queryable } from '../../platform/db.ts';
import { AppError, validationError } from '../../platform/errors.ts';
import { fromMinorUnits, toMinorUnits } from '../../platform/money.ts';
import { pricingFor } from '../../pricing/country-pricing.ts';
import { fallbackTariff, userFacingPrices } from '../../pricing/session-prices.ts';
import { tariffValidAt } from '../../pricing/tariff-engine.ts';
import type { Hold } from '../payments/service.ts';
import { missingBillingFields } from '../users/service.ts';
import { ADOPT_WITHIN_MS, type ChargingContext } from './context.ts';
import { CHARGING_QUEUES, fail, queueForSession } from './jobs.ts';
import * as repo from './repository.ts';
import { recordStatusEvent } from './session-events.ts';
import { FAILURES } from './state.ts';

export interface StartRequest {
  payment_method_id: string;
  evse_id: string;
}

type StartTarget = Awaited<ReturnType<typeof resolveEvse>>;

/** Runs the saga; answers the session once the CPO accepted START_SESSION, or throws the refusal. */
export async function start(ctx: ChargingContext, clientId: string, userId: string, body: StartRequest): Promise<repo.SessionRow> {
  const { row, adopted } = await begin(ctx, clientId, userId, body);
  ctx.crash('start:begun');
  await hold(ctx, row, adopted);
  const started = await command(ctx, row);
  ctx.crash('start:accepted');
  return started;
}

/** Everything the start needs about the EVSE, read before the session row is written. */
async function resolveEvse(ctx: ChargingContext, evseId: string) {
  const evse = ctx.catalogue.evse(evseId);
  if (!evse) throw validationError('evse_id', 'no such EVSE');
  if (evse.status !== 'AVAILABLE') {
    throw new AppError('station_availability_issue', `EVSE ${evse.evse_id} is not available (${evse.status.toLowerCase()}).`);
  }
  const station = ctx.catalogue.station({ evseId });
  const group = station?.price_groups.find((g) => g.evse_ids.includes(evse.evse_id));
  const location = await ctx.ingestion.findLocation({ country_code: evse.country_code, party_id: evse.party_id, id: evse.location_id });
  const ocpiEvse = location?.evses?.find((e) => e.uid === evse.evse_uid);
  if (!station || !group || !location || !ocpiEvse) {
    throw new AppError('station_availability_issue', 'The station’s data could not be obtained; try again shortly.', { status: 424 });
  }
  const now = ctx.clock.now();
  const connector = ocpiEvse.connectors[0];
  let tariff: OcpiTariff | undefined;
  for (const tariffId of connector?.tariff_ids ?? []) {
    const found = await ctx.ingestion.findTariff({ country_code: evse.country_code, party_id: evse.party_id, id: tariffId });
    if (found && tariffValidAt(found, now)) {
      tariff = found;
      break;
    }
  }
  const pricing = pricingFor(location.country, ctx.pricing);
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

/** The session row of a start: what it is about, priced and shown as the EVSE is now. */
function newSession(
  target: StartTarget,
  ids: { id: string; clientId: string; userId: string; paymentMethodId: string; holdReference: string },
  now: Date,
): repo.NewSession {
  const { station, evse } = target;
  return {
    id: ids.id,
    client_id: ids.clientId,
    user_id: ids.userId,
    payment_method_id: ids.paymentMethodId,
    evse_id: evse.evse_id,
    station_id: evse.station_id,
    country_code: evse.country_code,
    party_id: evse.party_id,
    operator_name: station.operator.name || null,
    location_id: evse.location_id,
    evse_uid: evse.evse_uid,
    connector_id: target.connector?.id ?? null,
    hold_reference: ids.holdReference,
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
  };
}

async function requireMethod(ctx: ChargingContext, clientId: string, userId: string, paymentMethodId: string): Promise<void> {
  try {
    await ctx.payments.getPaymentMethod(ctx.db, clientId, userId, paymentMethodId);
  } catch (error) {
    // The user is known (begin checked it): "not found" is the method's.
    if (error instanceof AppError && error.code === 'not_found') {
      throw new AppError('payment_method_error', 'payment_method_id: not a payment method of this user.', {
        errors: [{ field: 'payment_method_id', message: 'not a payment method of this user' }],
      });
    }
    throw error;
  }
}

const alreadyCharging = () => new AppError('already_charging', 'The user already has an unfinished session (or a start in flight) on this EVSE.');

/** The user's billing refusals of a start: incomplete billing details, an unpaid debt. */
async function refuseBilling(ctx: ChargingContext, q: Queryable, clientId: string, userId: string): Promise<void> {
  const missing = missingBillingFields(await ctx.users.getBillingDetails(q, clientId, userId));
  if (missing.length > 0) {
    throw new AppError('billing_data_required', `Billing details are incomplete: ${missing.join(', ')}.`, {
      errors: missing.map((field) => ({ field, message: 'required for charging' })),
    });
  }
  if (await ctx.hasUnpaidDebt(q, clientId, userId)) {
    throw new AppError('payment_error', 'The user has an unpaid charging debt; it must be paid before charging again (GET .../charging/debts/).');
  }
}

/** The user's refusals of a start: unknown user (404), then the billing refusals. */
async function refuseUser(ctx: ChargingContext, q: Queryable, clientId: string, userId: string, options: { forUpdate?: boolean } = {}): Promise<void> {
  await ctx.users.requireUser(q, clientId, userId, options);
  await refuseBilling(ctx, q, clientId, userId);
}

/** Step 1: checks, then the session row (or already_charging) and its charging_session.pending event. */
async function begin(ctx: ChargingContext, clientId: string, userId: string, body: StartRequest) {
  const { db, clock } = ctx;
  // Cheap refusals first, without locks; they are checked again under the user's lock. Their order is what a client
  // reads: the user in the path (404), then a second start where the user is charging already (409 already_charging,
  // not the EVSE's own "not available", which that very session causes), then the EVSE, then the user's billing.
  await ctx.users.requireUser(db, clientId, userId);
  if (await repo.hasUnfinishedOnEvse(db, clientId, userId, ctx.catalogue.evse(body.evse_id)?.evse_id ?? body.evse_id)) throw alreadyCharging();
  const target = await resolveEvse(ctx, body.evse_id);
  await refuseBilling(ctx, db, clientId, userId);
  // An operator no command can reach (a hub reporting the party offline) is refused before anything is held.
  const unreachable = await ctx.commands.unreachable(target.evse);
  if (unreachable) {
    ctx.log?.warn({ evse_id: target.evse.evse_id, reason: unreachable }, 'start refused: the operator cannot be reached');
    throw new AppError('charging_provider_error', 'The operator could not be reached; nothing was held. Try again shortly.');
  }
  // The payment method may have to be read from the processor (one whose webhook has not arrived yet), so it is
  // checked before the transaction below, which concurrent starts of this user wait on. Before the session row
  // exists: a session, once created (and its pending event sent), is never taken back.
  await requireMethod(ctx, clientId, userId, body.payment_method_id);
  return db.transaction(async (tx) => {
    // The user's row lock serializes this user's starts (and their deletion).
    await refuseUser(ctx, tx, clientId, userId, { forUpdate: true });
    const id = randomUUID();
    // An earlier attempt of this user whose hold waited for the customer's authentication: taken over if it is for enough.
    const adopted = await repo.findAdoptableHold(tx, clientId, {
      userId,
      paymentMethodId: body.payment_method_id,
      failureReason: FAILURES.authenticationRequired,
      currency: target.currency,
      amount: target.amount,
      since: new Date(clock.now().getTime() - ADOPT_WITHIN_MS),
    });
    const now = clock.now();
    const ids = { id, clientId, userId, paymentMethodId: body.payment_method_id, holdReference: adopted?.hold_reference ?? `session:${id}` };
    const inserted = await repo.insertSession(tx, newSession(target, ids, now));
    if (!inserted) throw alreadyCharging();
    const row = adopted ? ((await repo.updateSession(tx, inserted.id, { adopted_hold_of: adopted.id }, now)) as repo.SessionRow) : inserted;
    await recordStatusEvent(ctx, tx, row);
    return { row, adopted: adopted !== undefined };
  });
}

/** Step 2: the hold. Answers the refusal (402) after the session is failed. */
async function hold(ctx: ChargingContext, row: repo.SessionRow, adopted: boolean): Promise<void> {
  const { db } = ctx;
  let placed: Hold;
  try {
    placed = adopted
      ? await ctx.payments.refreshHold(row.client_id, row.hold_reference)
      : await ctx.payments.placeHold({
          clientId: row.client_id,
          userId: row.user_id,
          paymentMethodId: row.payment_method_id,
          amount: row.pre_authorization_amount,
          currency: row.currency,
          reference: row.hold_reference,
          description: `Charging at ${row.evse_id}`,
        });
  } catch (error) {
    await fail(ctx, db, row.id, FAILURES.processorUnavailable);
    throw error;
  }
  if (placed.status === 'authorized') {
    ctx.crash('start:hold-placed');
    await repo.updateSession(db, row.id, { start_step: 'held' }, ctx.clock.now(), ['pending']);
    ctx.crash('start:held');
    return;
  }
  if (placed.status === 'requires_action' && placed.clientSecret) {
    // The customer authenticates this hold; the next start of this user (same method) takes it over.
    await fail(ctx, db, row.id, FAILURES.authenticationRequired, { release: false });
    throw new AppError(
      'pre_authorization_failed',
      'The bank asks the customer to authenticate the pre-authorization; confirm it with payment_intent_client_secret, then start again.',
      {
        paymentIntentClientSecret: placed.clientSecret,
      },
    );
  }
  await fail(ctx, db, row.id, FAILURES.holdDeclined);
  const reason = placed.failureMessage ?? placed.failureCode ?? placed.status;
  throw new AppError(
    'pre_authorization_failed',
    `The pre-authorization of ${fromMinorUnits(row.pre_authorization_amount, row.currency)} ${row.currency} failed: ${reason}.`,
  );
}

/** Step 3: START_SESSION. */
async function command(ctx: ChargingContext, row: repo.SessionRow): Promise<repo.SessionRow> {
  const { db, clock } = ctx;
  const token = await ctx.tokenForUser(row.user_id);
  if (!token) throw new Error(`no token for user ${row.user_id}`);
  const commandId = randomUUID();
  const commanding = await repo.updateSession(db, row.id, { start_step: 'commanding', start_command_id: commandId }, clock.now(), ['pending']);
  if (!commanding) return (await repo.findSession(db, row.id)) as repo.SessionRow;
  const outcome = await ctx.commands.startSession({
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
    ctx.crash('start:command-accepted');
    const now = clock.now();
    const deadline = new Date(now.getTime() + Math.max(ctx.config.startTimeoutMs, outcome.timeoutSeconds * 1000));
    const accepted = await db.transaction(async (tx) => {
      // Only the step: the CPO's Session may already have made it active.
      const updated = await repo.updateSession(tx, row.id, { start_step: 'accepted', accepted_at: now, start_deadline: deadline }, now, ['pending', 'active']);
      await queueForSession(ctx, tx, CHARGING_QUEUES.startDeadline, row.id, { runAt: deadline });
      return updated;
    });
    return accepted ?? ((await repo.findSession(db, row.id)) as repo.SessionRow);
  }
  const reason = outcome.outcome === 'rejected' ? FAILURES.rejected : FAILURES.unreachable;
  await fail(ctx, db, row.id, reason);
  ctx.log?.warn(
    { session_id: row.id, outcome: outcome.outcome, detail: outcome.outcome === 'rejected' ? outcome.result : outcome.reason },
    'START_SESSION not accepted',
  );
  const detail =
    outcome.outcome === 'rejected'
      ? `The operator refused to start charging (${outcome.result}${outcome.message ? `: ${outcome.message}` : ''}); the pre-authorization is released.`
      : 'The operator could not be reached; the pre-authorization is released. Try again shortly.';
  throw new AppError('charging_provider_error', detail);
}
