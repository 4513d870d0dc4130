// Holds on payment methods for charging sessions: placing, capturing and
// releasing, each under the hold's claim (`hold:<id>`, claims.ts), so
// concurrent callers send the processor one request and the others find its
// outcome recorded.
//
// Hold states only move forward (pending, requires_action, processing,
// authorized, then a final state: declined, captured, released, expired,
// failed; repository.updateHold). A processor read is written whenever it
// arrives (merge): one older than what a webhook or a refresh recorded
// meanwhile is refused by the SQL, so refreshes and webhooks need no
// coordination. The answer to placing a hold is written only while the hold
// is still pending (place).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../platform/db.ts';
import { AppError, notFound, validationError } from '../../platform/errors.ts';
import { claimed } from './claims.ts';
import { ownerOf, type PaymentsContext } from './context.ts';
import { chargeTypeOf, knownMethod, lockedMethod, type MethodsContext } from './methods.ts';
import type { PaymentMethodType, PaymentOutcome } from './processor.ts';
import { ask } from './processor-calls.ts';
import * as repo from './repository.ts';

/** A hold as the rest of the service sees it. */
export interface Hold {
  id: string;
  reference: string;
  userId: string;
  paymentMethodId: string;
  paymentIntentId: string | null;
  status: repo.HoldStatus;
  /** Minor units. */
  amount: number;
  currency: string;
  amountCapturable: number;
  amountCaptured: number;
  /** For requires_action: what the customer authenticates with (payment_intent_client_secret). */
  clientSecret: string | null;
  failureCode: string | null;
  failureMessage: string | null;
  captureBefore: Date | null;
}

export interface HoldRequest {
  clientId: string;
  userId: string;
  paymentMethodId: string;
  /** Minor units (cents), > 0. */
  amount: number;
  currency: string;
  /** What the hold is for, e.g. `session:<id>`; one hold per reference. Idempotency keys derive from it. */
  reference: string;
  description?: string;
}

/** What placing a hold may already know (read while the hold was recorded), sparing the processor's place a read. */
interface KnownMethod {
  customerId: string;
  methodType: PaymentMethodType;
}

export function requirePositiveAmount(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw validationError('amount', 'must be a positive integer of minor units');
}

export function holdOf(row: repo.HoldRow): Hold {
  return {
    id: row.id,
    reference: row.reference,
    userId: row.user_id,
    paymentMethodId: row.payment_method_id,
    paymentIntentId: row.payment_intent_id,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    amountCapturable: row.amount_capturable,
    amountCaptured: row.amount_captured,
    clientSecret: row.client_secret,
    failureCode: row.failure_code,
    failureMessage: row.failure_message,
    captureBefore: row.capture_before,
  };
}

/** What a processor outcome means for our hold row. */
export function holdChanges(outcome: PaymentOutcome): repo.HoldChanges & { status: repo.HoldStatus } {
  switch (outcome.status) {
    case 'authorized':
      return {
        payment_intent_id: outcome.paymentIntentId,
        status: 'authorized',
        amount_capturable: outcome.amountCapturable,
        capture_before: outcome.captureBefore,
        failure_code: null,
        failure_message: null,
      };
    case 'requires_action':
      return {
        payment_intent_id: outcome.paymentIntentId,
        status: 'requires_action',
        client_secret: outcome.clientSecret,
        failure_code: outcome.code,
        amount_capturable: 0,
      };
    case 'declined':
      return {
        ...(outcome.paymentIntentId ? { payment_intent_id: outcome.paymentIntentId } : {}),
        status: 'declined',
        amount_capturable: 0,
        failure_code: outcome.declineCode ?? outcome.code,
        failure_message: outcome.message,
      };
    case 'processing':
      return { payment_intent_id: outcome.paymentIntentId, status: 'processing' };
    case 'succeeded':
      return { payment_intent_id: outcome.paymentIntentId, status: 'captured', amount_capturable: 0, amount_captured: outcome.amountReceived };
    case 'canceled':
      return { payment_intent_id: outcome.paymentIntentId, status: outcome.reason === 'automatic' ? 'expired' : 'released', amount_capturable: 0 };
  }
}

// --- the hold's claim and what the processor says ---------------------------------------------------------

export async function reread(ctx: PaymentsContext, id: string): Promise<repo.HoldRow> {
  const hold = await repo.findHold(ctx.db, id);
  if (!hold) throw new Error(`hold ${id} vanished`);
  return hold;
}

/**
 * Runs `work` on the hold as it stands once claimed: one placement, capture
 * or release of a hold at a time, across instances, so concurrent callers
 * send the processor one request and the others find its outcome recorded.
 * Processor failures answer as in ask().
 */
function exclusively<T>(ctx: PaymentsContext, id: string, purpose: string, work: (hold: repo.HoldRow) => Promise<T>): Promise<T> {
  return ask(ctx, () => claimed(ctx, `hold:${id}`, purpose, async () => work(await reread(ctx, id))));
}

/**
 * Writes what the processor said about the hold, whenever that arrives: the
 * SQL takes only a state that is not behind the recorded one, and nothing
 * about another payment intent. Answers the hold as it now stands.
 */
export async function merge(ctx: PaymentsContext, hold: repo.HoldRow, changes: repo.HoldChanges & { status: repo.HoldStatus }): Promise<repo.HoldRow> {
  const intent = changes.payment_intent_id ?? hold.payment_intent_id ?? undefined;
  return (await repo.updateHold(ctx.db, hold.id, changes, ctx.clock.now(), repo.statesUpTo(changes.status), intent)) ?? reread(ctx, hold.id);
}

/** Re-reads the hold's payment intent and merges where it stands (a final hold is not asked about). */
export async function refresh(ctx: PaymentsContext, hold: repo.HoldRow): Promise<repo.HoldRow> {
  if (!hold.payment_intent_id || repo.FINAL_HOLD_STATUSES.includes(hold.status)) return hold;
  const intent = await ctx.processor.retrievePaymentIntent(hold.payment_intent_id);
  return intent ? merge(ctx, hold, holdChanges(intent.outcome)) : hold;
}

export async function customerIdOf(ctx: PaymentsContext, hold: repo.HoldRow): Promise<string> {
  const customer = await repo.findCustomer(ctx.db, ownerOf(ctx, hold.client_id, hold.user_id));
  if (!customer) throw new Error(`hold ${hold.id} has no payment customer`);
  return customer.customer_id;
}

/**
 * Asks the processor for the hold (again) while it is pending: the same
 * idempotency key never makes a second payment intent. The answer is
 * written only while the hold is still pending: anything recorded meanwhile
 * (a webhook, which re-read the intent after it was made) is newer and stays.
 */
export function place(ctx: PaymentsContext, holdId: string, known?: KnownMethod, description?: string): Promise<repo.HoldRow> {
  return exclusively(ctx, holdId, 'place', async (hold) => {
    if (hold.status !== 'pending') return hold;
    const owner = ownerOf(ctx, hold.client_id, hold.user_id);
    const customerId = known?.customerId ?? (await customerIdOf(ctx, hold));
    const methodType = known?.methodType ?? chargeTypeOf((await repo.findPaymentMethod(ctx.db, owner, hold.payment_method_id))?.type);
    const outcome = await ctx.processor.placeHold({
      customerId,
      paymentMethodId: hold.payment_method_id,
      paymentMethodType: methodType,
      amount: hold.amount,
      currency: hold.currency,
      idempotencyKey: hold.idempotency_key,
      metadata: { reference: hold.reference, user_id: hold.user_id, hold_id: hold.id },
      ...(description ? { description } : {}),
    });
    return (await repo.updateHold(ctx.db, hold.id, holdChanges(outcome), ctx.clock.now(), ['pending'])) ?? reread(ctx, hold.id);
  });
}

// --- the holds charging uses ------------------------------------------------------------------------------

/** The hold already made for the request's reference, unless it differs from the request (then 409 conflict). */
function sameHold(request: HoldRequest, currency: string, hold: repo.HoldRow): repo.HoldRow {
  if (
    hold.client_id !== request.clientId ||
    hold.user_id !== request.userId ||
    hold.payment_method_id !== request.paymentMethodId ||
    hold.amount !== request.amount ||
    hold.currency !== currency
  ) {
    throw new AppError('conflict', `A different hold already exists for ${request.reference}.`);
  }
  return hold;
}

/**
 * The hold for the request's reference: the one already recorded, or a new
 * pending one (with what placing it needs to know), recorded in a
 * transaction that holds the user's row lock and refuses a method being
 * removed (methods.ts).
 */
async function recordHold(ctx: MethodsContext, request: HoldRequest, currency: string): Promise<{ hold: repo.HoldRow; known?: KnownMethod }> {
  const { db, account } = ctx;
  const existing = await repo.findHoldByReference(db, account, request.reference);
  if (existing) return { hold: sameHold(request, currency, existing) };
  // Outside the transaction below: the method may have to be read from the processor first.
  const { owner } = await knownMethod(ctx, request.clientId, request.userId, request.paymentMethodId);
  return db.transaction(async (tx) => {
    const { customer, row } = await lockedMethod(tx, owner, request.paymentMethodId);
    const inserted = await repo.insertHold(tx, {
      id: randomUUID(),
      account,
      client_id: request.clientId,
      user_id: request.userId,
      payment_method_id: request.paymentMethodId,
      reference: request.reference,
      idempotency_key: `${request.reference}:hold`,
      amount: request.amount,
      currency,
      created_at: ctx.clock.now(),
    });
    if (inserted) return { hold: inserted, known: { customerId: customer.customer_id, methodType: chargeTypeOf(row.type) } };
    // A concurrent first call for the same reference inserted it meanwhile: that hold is the one.
    const winner = await repo.findHoldByReference(tx, account, request.reference);
    if (!winner) throw new Error(`the hold for ${request.reference} vanished`);
    return { hold: sameHold(request, currency, winner) };
  });
}

/**
 * Holds `amount` on the user's method (manual capture, off-session). The
 * hold is recorded (pending) before the processor is asked, with the
 * idempotency key `<reference>:hold`; calling again with the same
 * reference, also concurrently, resumes or returns that hold, never a
 * second one.
 */
export async function placeHold(ctx: MethodsContext, request: HoldRequest): Promise<Hold> {
  requirePositiveAmount(request.amount);
  const recorded = await recordHold(ctx, request, request.currency.toLowerCase());
  if (recorded.hold.status !== 'pending') return holdOf(recorded.hold);
  return holdOf(await place(ctx, recorded.hold.id, recorded.known, request.description));
}

/** The client's hold for a reference, or not_found (another client's is not found either). */
async function holdForReference(ctx: PaymentsContext, clientId: string, reference: string): Promise<repo.HoldRow> {
  const hold = await repo.findHoldByReference(ctx.db, ctx.account, reference);
  if (!hold || hold.client_id !== clientId) throw notFound('Hold');
  return hold;
}

export async function getHold(ctx: PaymentsContext, clientId: string, reference: string): Promise<Hold> {
  return holdOf(await holdForReference(ctx, clientId, reference));
}

/** The client's holds of these references, by reference (another client's are absent). */
export async function getHolds(ctx: PaymentsContext, q: Queryable, clientId: string, references: readonly string[]): Promise<Map<string, Hold>> {
  const rows = await repo.findHoldsByReferences(q, ctx.account, references);
  return new Map(rows.filter((row) => row.client_id === clientId).map((row) => [row.reference, holdOf(row)]));
}

/** Re-reads the hold from the processor (a missed webhook, a customer who has just authenticated). */
export async function refreshHold(ctx: PaymentsContext, clientId: string, reference: string): Promise<Hold> {
  const found = await holdForReference(ctx, clientId, reference);
  return holdOf(await ask(ctx, () => refresh(ctx, found)));
}

const notCapturable = (reference: string, hold: repo.HoldRow) =>
  new AppError('conflict', `The hold for ${reference} cannot be captured: it is ${hold.status}.`);

/** Captures `amount` (at most what is held; the rest is released). Idempotent: key `<reference>:capture:<amount>`. */
export async function captureHold(ctx: PaymentsContext, clientId: string, reference: string, amount: number): Promise<Hold> {
  requirePositiveAmount(amount);
  const found = await holdForReference(ctx, clientId, reference);
  // A refusal is answered after the claim is let go; what the refresh learnt is kept.
  const { hold, refusal } = await exclusively(ctx, found.id, 'capture', async (claimedHold): Promise<{ hold: repo.HoldRow; refusal?: AppError }> => {
    const current = claimedHold.status === 'authorized' || claimedHold.status === 'captured' ? claimedHold : await refresh(ctx, claimedHold);
    if (current.status === 'captured') return { hold: current };
    if (current.status !== 'authorized' || !current.payment_intent_id) return { hold: current, refusal: notCapturable(reference, current) };
    if (amount > current.amount_capturable) {
      const held = `${current.amount_capturable} ${current.currency.toUpperCase()}`;
      return { hold: current, refusal: new AppError('conflict', `Cannot capture ${amount}: only ${held} minor units are held.`) };
    }
    const paymentIntentId = current.payment_intent_id;
    const result = await ctx.processor.captureHold({ paymentIntentId, amount, idempotencyKey: `${reference}:capture:${amount}` });
    if (result.status === 'captured') {
      return { hold: await merge(ctx, current, { status: 'captured', amount_captured: result.amountCaptured, amount_capturable: 0 }) };
    }
    const after = await refresh(ctx, current);
    return { hold: after, refusal: notCapturable(reference, after) };
  });
  if (refusal) throw refusal;
  return holdOf(hold);
}

/** Releases the hold (cancels the payment intent). Idempotent: key `<reference>:release`. */
export async function releaseHold(ctx: PaymentsContext, clientId: string, reference: string): Promise<Hold> {
  let found = await holdForReference(ctx, clientId, reference);
  // The processor may have made the payment intent before we recorded it: resume first (same key), then release.
  if (found.status === 'pending') found = await place(ctx, found.id);
  return holdOf(
    await exclusively(ctx, found.id, 'release', async (hold) => {
      if (!hold.payment_intent_id || ['released', 'expired', 'captured', 'failed'].includes(hold.status)) return hold;
      // A declined hold's intent is canceled too (so that it cannot be completed later); the hold stays declined.
      const paymentIntentId = hold.payment_intent_id;
      const result = await ctx.processor.releaseHold({ paymentIntentId, idempotencyKey: `${reference}:release` });
      if (result.status === 'released') {
        return merge(ctx, hold, { status: result.reason === 'automatic' ? 'expired' : 'released', amount_capturable: 0 });
      }
      return refresh(ctx, hold);
    }),
  );
}
