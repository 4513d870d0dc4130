// Payments: the rules. Setup intents, the user's payment methods (our mirror
// of the processor's, with our own default), holds for charging sessions, and
// the processor's webhooks. Every user-facing function takes the caller's
// client id; another client's user or payment method is "not found".
//
// No transaction, and no connection, is held while the processor is asked: a
// call may take seconds, and the built-in sandbox answers from this same pool
// (a burst of calls each holding a connection would starve it). What a call
// needs is read, or claimed, first; the processor is asked with the same
// idempotency keys as ever; its answer is written afterwards, conditionally:
//
// - Hold states only move forward (pending, requires_action, processing,
//   authorized, then a final state: declined, captured, released, expired,
//   failed; repository.updateHold). A processor read is written whenever it
//   arrives: one older than what a webhook or a refresh recorded meanwhile is
//   refused by the SQL, so refreshes and webhooks need no coordination. The
//   answer to placing a hold is written only while the hold is still pending.
// - What must not run twice at once runs under a claim (a payment_claims
//   row, committed before the call and deleted after it; others wait for it
//   without a connection, and a claim whose holder died lapses): placing,
//   capturing or releasing one hold, so concurrent callers send the processor
//   one request and the others find its outcome; making a user's processor
//   customer; and every change of a user's payment-method mirror, which reads
//   the processor and then writes, so the default rules (the first method
//   becomes the default; removing the default promotes the newest) hold, and a
//   read taken before a removal is never written back after it. Writes under a
//   customer claim check that the claim is still theirs.
// - A removal claims the user's customer with its method as purpose. Using
//   the method meanwhile (a hold, a charge, charging's check) waits for the
//   claim, as it used to wait for the row lock; and the transaction that
//   records a hold refuses the method while its removal is claimed, under the
//   user's row lock, which the removal's guards also take before the
//   processor is asked: either the guard sees the hold, or the hold sees the
//   removal.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { AppError, notFound, validationError } from '../../platform/errors.ts';
import {
  type PaymentMethodType,
  type PaymentOutcome,
  type PaymentProcessor,
  PaymentProcessorError,
  type ProcessorEvent,
  type ProcessorPaymentMethod,
} from './processor.ts';
import * as repo from './repository.ts';
import type { PaymentMethodView, SetupIntentView } from './schemas.ts';

/**
 * Another module's veto on removing a payment method (an unpaid debt on it:
 * payment_error; an unfinished session: already_charging). Runs inside the
 * removal's transaction with the user's payment rows locked; throws an
 * AppError to refuse.
 */
export type PaymentMethodRemovalGuard = (tx: Queryable, target: { clientId: string; userId: string; paymentMethodId: string }) => Promise<void>;

/**
 * Told that a payment intent changed (a verified webhook), once its hold was
 * brought in line; re-read it with paymentIntent() before acting. Called with
 * the pool, outside any transaction (it may ask the processor); an error has
 * the webhook delivered again.
 */
export type PaymentIntentListener = (db: Queryable, paymentIntentId: string) => Promise<void>;

export interface PaymentsServiceDeps {
  db: Database;
  clock: Clock;
  processor: PaymentProcessor;
  /** The users module's check: the live user of this client, or AppError not_found. */
  requireUser: (db: Queryable, clientId: string, userId: string) => Promise<unknown>;
  removalGuards?: PaymentMethodRemovalGuard[];
  log?: PaymentsLog;
  /** How long a claim holds when its holder dies (default 15 s). */
  claimLeaseMs?: number;
}

export interface PaymentsLog {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

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

const PROCESSOR_ID = /^[a-z]{2,4}_[A-Za-z0-9_]{1,250}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HOUR_MS = 3_600_000;

function requirePositiveAmount(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw validationError('amount', 'must be a positive integer of minor units');
}

/** What a method of our mirror is charged as (cards from wallets are cards). */
function chargeTypeOf(methodType: string | undefined): PaymentMethodType {
  return methodType === 'paypal' ? 'paypal' : 'card';
}

function holdOf(row: repo.HoldRow): Hold {
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
function holdChanges(outcome: PaymentOutcome): repo.HoldChanges & { status: repo.HoldStatus } {
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

function expirationDate(month: number | null, year: number | null): string {
  if (month === null || year === null) return '';
  return `${String(month).padStart(2, '0')}/${String(year % 100).padStart(2, '0')}`;
}

export function paymentMethodView(row: repo.PaymentMethodRow): PaymentMethodView {
  const view: PaymentMethodView = {
    id: row.id,
    type: row.type === 'paypal' || row.type === 'apple_pay' || row.type === 'google_pay' ? row.type : 'card',
    default: row.is_default,
    created_at: row.created_at.toISOString(),
  };
  if (row.type !== 'paypal') {
    view.card = {
      brand: row.card_brand ?? 'unknown',
      last4: row.card_last4 ?? '',
      expiration_date: expirationDate(row.card_exp_month, row.card_exp_year),
      cardholder_name: row.cardholder_name,
    };
  } else {
    view.paypal = { email: row.paypal_email };
  }
  return view;
}

function mirrorDetails(pm: ProcessorPaymentMethod, customerId: string): repo.PaymentMethodDetails {
  return {
    id: pm.id,
    customerId,
    type: pm.type === 'other' ? 'card' : pm.type,
    cardBrand: pm.card?.brand ?? null,
    cardLast4: pm.card?.last4 ?? null,
    cardExpMonth: pm.card?.expMonth ?? null,
    cardExpYear: pm.card?.expYear ?? null,
    cardholderName: pm.card?.cardholderName ?? null,
    paypalEmail: pm.paypal?.email ?? null,
    createdAt: pm.created,
  };
}

/** The processor could not be reached: the client may retry. The cause is logged, never shown. */
function unavailable(): AppError {
  return new AppError('payment_processor_unavailable', 'The payment processor could not be reached; retry in a few seconds.', {
    headers: { 'Retry-After': '5' },
  });
}

/**
 * Runs processor calls: a transport failure (retryable) becomes 503
 * payment_processor_unavailable with Retry-After; a refusal that retrying
 * cannot cure (a bad or revoked key, an invalid request) is a 500, logged as
 * an error with the adapter's own wording only (it never carries a key).
 */
function askerOf(log: PaymentsLog | undefined) {
  return async function ask<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof PaymentProcessorError)) throw error;
      if (error.retryable) {
        log?.warn({ err: error }, 'payment processor call failed');
        throw unavailable();
      }
      log?.error(
        { processor_error: error.message, ...(error.processorCode ? { processor_code: error.processorCode } : {}) },
        'the payment processor refused a request; retrying will not help (check the Stripe keys and the request)',
      );
      throw new AppError('unexpected_error', 'The payment processor refused the request.');
    }
  };
}

const paymentMethodNotFound = () => notFound('Payment method');

/**
 * How long a claim holds if its holder dies: the longest anyone waits for a
 * dead one. A holder whose processor call outlasts it loses the claim: a
 * second request with the same idempotency key is then safe, and its own
 * writes under a customer claim are refused (503, retry).
 */
const CLAIM_LEASE_MS = 15_000;

interface Claim {
  /** Runs `write` in a short transaction if the claim is still ours (else 503: it lapsed while the processor was slow). */
  apply<T>(write: (tx: Queryable) => Promise<T>): Promise<T>;
}

/**
 * The one way the service serializes work that asks the processor: `work`
 * runs holding the claim `key`, and holds no connection itself while it asks
 * (its reads and writes are single statements or short transactions).
 * Waiting for a claim holds no connection either: each try is one statement.
 */
function claimsOf(db: Database, leaseMs: number) {
  return async function claimed<T>(key: string, purpose: string, work: (claim: Claim) => Promise<T>): Promise<T> {
    const token = randomUUID();
    for (let pause = 2; !(await repo.takeClaim(db, { key, token, purpose, leaseMs })); pause = Math.min(2 * pause, 100)) await sleep(pause);
    const claim: Claim = {
      apply: (write) =>
        db.transaction(async (tx) => {
          if (!(await repo.stillClaimed(tx, key, token))) {
            throw new PaymentProcessorError(`the claim ${key} lapsed while the processor was asked`, { retryable: true });
          }
          return write(tx);
        }),
    };
    try {
      return await work(claim);
    } finally {
      // Should this fail too (the database gone), the claim lapses by itself.
      await repo.dropClaim(db, key, token).catch(() => {});
    }
  };
}

export interface HoldSweepOptions {
  /** Pending holds younger than this may still be on their way (a request in flight): left alone. Default 2 minutes. */
  graceMs?: number;
  /** Younger than this, the processor still knows the idempotency key (Stripe: at least 24 h): placed again with it. Default 23 h. */
  retryWindowMs?: number;
  /** At most this many holds per sweep (oldest first). Default 100. */
  limit?: number;
}

export interface HoldSweepResult {
  /** Pending holds looked at (a webhook may have resolved one meanwhile: then it counts nowhere else). */
  examined: number;
  /** Placed again with their idempotency key: the processor's answer is now recorded. */
  resumed: number;
  /** Older ones whose payment intent was found by our metadata and recorded. */
  found: number;
  /** Older ones the processor never made: now `failed`. */
  failed: number;
  /** Still pending (the processor could not be reached): tried again at the next sweep. */
  unresolved: number;
}

interface HoldsDeps {
  db: Database;
  clock: Clock;
  processor: PaymentProcessor;
  log?: PaymentsLog | undefined;
  claimLeaseMs?: number | undefined;
}

/** Holds on payment methods: placing, capturing and releasing under the hold's claim, merging what the processor says, the sweep of pending ones. */
function createHolds(deps: HoldsDeps) {
  const { db, clock, processor } = deps;
  const account = processor.info.account;
  const ask = askerOf(deps.log);
  const claimed = claimsOf(db, deps.claimLeaseMs ?? CLAIM_LEASE_MS);
  const ownerOfHold = (hold: repo.HoldRow): repo.Owner => ({ clientId: hold.client_id, userId: hold.user_id, account });

  async function reread(id: string): Promise<repo.HoldRow> {
    const hold = await repo.findHold(db, id);
    if (!hold) throw new Error(`hold ${id} vanished`);
    return hold;
  }

  /**
   * Runs `work` on the hold as it stands once claimed: one placement, capture
   * or release of a hold at a time, across instances, so concurrent callers
   * send the processor one request and the others find its outcome recorded.
   * Processor failures answer as in ask().
   */
  function exclusively<T>(id: string, purpose: string, work: (hold: repo.HoldRow) => Promise<T>): Promise<T> {
    return ask(() => claimed(`hold:${id}`, purpose, async () => work(await reread(id))));
  }

  /**
   * Writes what the processor said about the hold, whenever that arrives: the
   * SQL takes only a state that is not behind the recorded one, and nothing
   * about another payment intent. Answers the hold as it now stands.
   */
  async function merge(hold: repo.HoldRow, changes: repo.HoldChanges & { status: repo.HoldStatus }): Promise<repo.HoldRow> {
    const intent = changes.payment_intent_id ?? hold.payment_intent_id ?? undefined;
    return (await repo.updateHold(db, hold.id, changes, clock.now(), repo.statesUpTo(changes.status), intent)) ?? reread(hold.id);
  }

  /** Re-reads the hold's payment intent and merges where it stands (a final hold is not asked about). */
  async function refresh(hold: repo.HoldRow): Promise<repo.HoldRow> {
    if (!hold.payment_intent_id || repo.FINAL_HOLD_STATUSES.includes(hold.status)) return hold;
    const intent = await processor.retrievePaymentIntent(hold.payment_intent_id);
    return intent ? merge(hold, holdChanges(intent.outcome)) : hold;
  }

  async function customerIdOf(hold: repo.HoldRow): Promise<string> {
    const customer = await repo.findCustomer(db, ownerOfHold(hold));
    if (!customer) throw new Error(`hold ${hold.id} has no payment customer`);
    return customer.customer_id;
  }

  /**
   * Asks the processor for the hold (again) while it is pending: the same
   * idempotency key never makes a second payment intent. The answer is
   * written only while the hold is still pending: anything recorded meanwhile
   * (a webhook, which re-read the intent after it was made) is newer and stays.
   */
  function place(holdId: string, known?: { customerId: string; methodType: PaymentMethodType }, description?: string): Promise<repo.HoldRow> {
    return exclusively(holdId, 'place', async (hold) => {
      if (hold.status !== 'pending') return hold;
      const customerId = known?.customerId ?? (await customerIdOf(hold));
      const methodType = known?.methodType ?? chargeTypeOf((await repo.findPaymentMethod(db, ownerOfHold(hold), hold.payment_method_id))?.type);
      const outcome = await processor.placeHold({
        customerId,
        paymentMethodId: hold.payment_method_id,
        paymentMethodType: methodType,
        amount: hold.amount,
        currency: hold.currency,
        idempotencyKey: hold.idempotency_key,
        metadata: { reference: hold.reference, user_id: hold.user_id, hold_id: hold.id },
        ...(description ? { description } : {}),
      });
      return (await repo.updateHold(db, hold.id, holdChanges(outcome), clock.now(), ['pending'])) ?? reread(hold.id);
    });
  }

  /**
   * A payment_intent event: the hold with that intent, or, when the answer to
   * placing it was never recorded (a crash between the processor's call and
   * our write), the hold our metadata names (merge takes it only if it has no
   * other intent); its state and intent id are recorded.
   */
  async function applyIntentEvent(paymentIntentId: string): Promise<void> {
    const hold = await repo.findHoldByIntent(db, account, paymentIntentId);
    if (hold) {
      await refresh(hold);
      return;
    }
    const intent = await processor.retrievePaymentIntent(paymentIntentId);
    const holdId = intent?.metadata.hold_id;
    if (!intent || !holdId || !UUID.test(holdId)) return;
    const unrecorded = await repo.findHold(db, holdId);
    if (unrecorded?.account === account) await merge(unrecorded, holdChanges(intent.outcome));
  }

  /**
   * Resolves holds left pending by a crash (the processor's answer never
   * recorded): a younger one is placed again with its idempotency key (the
   * processor answers the intent it made, or makes it now); for an older one
   * the key may be forgotten, so its intent is looked up by our metadata
   * instead of risking a second one, and when there is none the hold is
   * `failed`. Either is written only while the hold is still pending.
   */
  async function sweep(options: HoldSweepOptions = {}): Promise<HoldSweepResult> {
    const graceMs = options.graceMs ?? 2 * 60_000;
    const retryWindowMs = options.retryWindowMs ?? 23 * HOUR_MS;
    const now = clock.now();
    const result: HoldSweepResult = { examined: 0, resumed: 0, found: 0, failed: 0, unresolved: 0 };
    for (const pending of await repo.pendingHolds(db, account, new Date(now.getTime() - graceMs), options.limit ?? 100)) {
      result.examined++;
      try {
        if (now.getTime() - pending.created_at.getTime() < retryWindowMs) {
          const placed = await place(pending.id);
          if (placed.status === 'pending') result.unresolved++;
          else result.resumed++;
          continue;
        }
        const customerId = await customerIdOf(pending);
        const intent = await ask(() =>
          processor.findPaymentIntent({
            customerId,
            metadataKey: 'hold_id',
            metadataValue: pending.id,
            // Our clock and the processor's may differ a little.
            createdSince: new Date(pending.created_at.getTime() - HOUR_MS),
          }),
        );
        const changes: repo.HoldChanges = intent
          ? holdChanges(intent.outcome)
          : { status: 'failed', failure_code: 'not_placed', failure_message: 'The hold was never placed at the payment processor.' };
        if (await repo.updateHold(db, pending.id, changes, clock.now(), ['pending'])) {
          if (intent) result.found++;
          else result.failed++;
        }
      } catch (error) {
        result.unresolved++;
        deps.log?.warn({ err: error, hold_id: pending.id }, 'a pending hold could not be resolved; the next sweep tries again');
      }
    }
    return result;
  }

  return { ask, claimed, exclusively, merge, refresh, place, applyIntentEvent, sweep };
}

export function createPaymentsService(deps: PaymentsServiceDeps) {
  const { db, clock, processor } = deps;
  const account = processor.info.account;
  const guards = deps.removalGuards ?? [];
  const ownerOf = (clientId: string, userId: string): repo.Owner => ({ clientId, userId, account });
  const holds = createHolds(deps);
  const { ask } = holds;
  const intentListeners: PaymentIntentListener[] = [];

  const removalOf = (paymentMethodId: string) => `remove:${paymentMethodId}`;
  const customerKey = (owner: repo.Owner) => `customer:${owner.account}:${owner.userId}`;

  /** Runs `work` with the user's processor customer claimed: making it, and every change of the user's mirror, one at a time. */
  function withCustomer<T>(owner: repo.Owner, purpose: string, work: (claim: Claim) => Promise<T>): Promise<T> {
    return holds.claimed(customerKey(owner), purpose, work);
  }

  async function ensureCustomer(clientId: string, userId: string): Promise<string> {
    const owner = ownerOf(clientId, userId);
    const existing = await repo.findCustomer(db, owner);
    if (existing) return existing.customer_id;
    // Claimed, so that concurrent first calls send one request: the deterministic key would give them one customer too, but
    // the processor refuses a request whose key is still in flight.
    return ask(() =>
      withCustomer(owner, 'create', async (claim) => {
        const made = await repo.findCustomer(db, owner);
        if (made) return made.customer_id;
        const { customerId } = await processor.createCustomer({
          idempotencyKey: `customer:${account}:${userId}`,
          metadata: { user_id: userId, client_id: clientId },
          description: `User ${userId}`,
        });
        await claim.apply((tx) => repo.insertCustomer(tx, owner, customerId, clock.now()));
        const stored = await repo.findCustomer(db, owner);
        if (!stored) throw new Error('the payment customer row vanished');
        return stored.customer_id;
      }),
    );
  }

  // --- the mirror: every function taking a Claim runs under the user's customer claim ---------------------

  /**
   * In `tx`: gives the user a default when they have methods but none is: the
   * first one connected (`oldest`), or after the default was removed the
   * newest remaining (`newest`). Answers the method it made the default, for
   * tellDefault once committed (in the same transaction as the change that
   * called for it, so the mirror is never seen without its default).
   */
  async function ensureDefault(tx: Queryable, owner: repo.Owner, pick: 'oldest' | 'newest'): Promise<string | undefined> {
    const methods = await repo.allPaymentMethods(tx, owner);
    if (methods.length === 0 || methods.some((m) => m.is_default)) return undefined;
    const chosen = (pick === 'newest' ? methods[0] : methods.at(-1)) as repo.PaymentMethodRow;
    await repo.setDefaultPaymentMethod(tx, owner, chosen.id);
    return chosen.id;
  }

  /**
   * Tells the processor's customer the default ensureDefault just wrote (still
   * under the claim, so whoever waits for it finds both done). If it cannot be
   * reached, the default is taken back here: the next change of the mirror, or
   * the webhook delivered again, tries again.
   */
  async function tellDefault(claim: Claim, owner: repo.Owner, customerId: string, chosen: string | undefined): Promise<void> {
    if (chosen === undefined) return;
    try {
      await processor.setDefaultPaymentMethod(customerId, chosen);
    } catch (error) {
      await claim.apply((tx) => repo.unsetDefaultPaymentMethod(tx, owner, chosen));
      throw error;
    }
  }

  /** Brings the mirror in line with the processor's list for this customer. */
  async function syncCustomer(claim: Claim, owner: repo.Owner, customerId: string): Promise<void> {
    const remote = (await processor.listPaymentMethods(customerId)).filter((pm) => pm.customerId === customerId);
    const chosen = await claim.apply(async (tx) => {
      const local = await repo.allPaymentMethods(tx, owner);
      const now = clock.now();
      // Oldest first, so the mirror's insertion order follows creation (the processor lists newest first).
      for (const pm of [...remote].reverse().sort((a, b) => a.created.getTime() - b.created.getTime())) {
        await repo.upsertPaymentMethod(tx, owner, mirrorDetails(pm, customerId), now);
      }
      const remoteIds = new Set(remote.map((pm) => pm.id));
      let removedDefault = false;
      for (const row of local) {
        if (remoteIds.has(row.id)) continue;
        await repo.deletePaymentMethod(tx, owner, row.id);
        removedDefault ||= row.is_default;
      }
      return ensureDefault(tx, owner, removedDefault ? 'newest' : 'oldest');
    });
    await tellDefault(claim, owner, customerId, chosen);
  }

  /**
   * A method the mirror does not know yet (the webhook may still be on its
   * way): adopted if the processor has it attached to this user's customer.
   */
  async function adopt(claim: Claim, owner: repo.Owner, customerId: string, paymentMethodId: string): Promise<repo.PaymentMethodRow | undefined> {
    if (!PROCESSOR_ID.test(paymentMethodId)) return undefined;
    const pm = await processor.retrievePaymentMethod(paymentMethodId);
    if (!pm || pm.customerId !== customerId) return undefined;
    const chosen = await claim.apply(async (tx) => {
      await repo.upsertPaymentMethod(tx, owner, mirrorDetails(pm, customerId), clock.now());
      return ensureDefault(tx, owner, 'oldest');
    });
    await tellDefault(claim, owner, customerId, chosen);
    return repo.findPaymentMethod(db, owner, paymentMethodId);
  }

  /** The method, adopted if the mirror does not know it yet; not_found otherwise. */
  async function claimedMethod(claim: Claim, owner: repo.Owner, customerId: string, paymentMethodId: string): Promise<repo.PaymentMethodRow> {
    const row = (await repo.findPaymentMethod(db, owner, paymentMethodId)) ?? (await adopt(claim, owner, customerId, paymentMethodId));
    if (!row) throw paymentMethodNotFound();
    return row;
  }

  /** The user's processor customer; not_found (the method's) for no such user, or no customer yet. */
  async function customerFor(clientId: string, userId: string) {
    await deps.requireUser(db, clientId, userId);
    const owner = ownerOf(clientId, userId);
    const customer = await repo.findCustomer(db, owner);
    if (!customer) throw paymentMethodNotFound();
    return { owner, customerId: customer.customer_id };
  }

  // --- using a method -------------------------------------------------------------------------------------

  /** The user's method as mirrored, unless it is being removed (then undefined, like one the mirror does not know). */
  async function mirroredMethod(q: Queryable, owner: repo.Owner, paymentMethodId: string): Promise<repo.PaymentMethodRow | undefined> {
    const row = await repo.findPaymentMethod(q, owner, paymentMethodId);
    return row && !(await repo.claimedFor(q, customerKey(owner), removalOf(paymentMethodId))) ? row : undefined;
  }

  /**
   * The user's method, outside any transaction: adopted from the processor
   * when the mirror does not know it; one being removed is waited for (the
   * claim), then found only if its removal failed. not_found otherwise.
   */
  async function knownMethod(clientId: string, userId: string, paymentMethodId: string) {
    const { owner, customerId } = await customerFor(clientId, userId);
    const row =
      (await mirroredMethod(db, owner, paymentMethodId)) ??
      (await ask(() => withCustomer(owner, 'adopt', (claim) => adopt(claim, owner, customerId, paymentMethodId))));
    if (!row) throw paymentMethodNotFound();
    return { owner, customerId, row };
  }

  /** In `tx`, with the user's payment rows locked (as a removal checks its guards): the method, unless it is being removed; not_found otherwise. */
  async function lockedMethod(tx: Queryable, owner: repo.Owner, paymentMethodId: string) {
    const customer = await repo.findCustomer(tx, owner, { forUpdate: true });
    const row = customer && (await mirroredMethod(tx, owner, paymentMethodId));
    if (!customer || !row) throw paymentMethodNotFound();
    return { customer, row };
  }

  async function activeHoldGuard(tx: Queryable, target: { clientId: string; userId: string; paymentMethodId: string }): Promise<void> {
    if ((await repo.countActiveHolds(tx, ownerOf(target.clientId, target.userId), target.paymentMethodId)) > 0) {
      throw new AppError(
        'already_charging',
        'This payment method holds funds for an unfinished charging session; it can be removed once the session has ended.',
      );
    }
  }

  /** The client's hold for a reference, or not_found (another client's is not found either). */
  async function holdForReference(clientId: string, reference: string): Promise<repo.HoldRow> {
    const hold = await repo.findHoldByReference(db, account, reference);
    if (!hold || hold.client_id !== clientId) throw notFound('Hold');
    return hold;
  }

  const notCapturable = (reference: string, hold: repo.HoldRow) =>
    new AppError('conflict', `The hold for ${reference} cannot be captured: it is ${hold.status}.`);

  // --- webhooks -------------------------------------------------------------------------

  /**
   * Brings one method of the mirror in line with the processor. It is read
   * under the owner's claim, so a removal running meanwhile has either
   * finished (and the method reads as detached) or waits for this; a stale
   * "attached" is never written back over it.
   */
  async function refreshPaymentMethod(paymentMethodId: string): Promise<void> {
    const local = await repo.findPaymentMethodById(db, account, paymentMethodId);
    let customer: repo.CustomerRow | undefined;
    if (local) {
      customer = await repo.findCustomer(db, ownerOf(local.client_id, local.user_id));
    } else {
      // Not mirrored yet: the processor names the customer.
      const first = await processor.retrievePaymentMethod(paymentMethodId);
      if (!first?.customerId) return;
      customer = await repo.findCustomerOwner(db, account, first.customerId);
    }
    if (!customer) return; // not one of our customers
    const owner = ownerOf(customer.client_id, customer.user_id);
    const customerId = customer.customer_id;
    await withCustomer(owner, 'refresh', async (claim) => {
      const pm = await processor.retrievePaymentMethod(paymentMethodId);
      const chosen = await claim.apply(async (tx) => {
        if (pm?.customerId === customerId) {
          await repo.upsertPaymentMethod(tx, owner, mirrorDetails(pm, customerId), clock.now());
          return ensureDefault(tx, owner, 'oldest');
        }
        // Detached (or gone) at the processor: dropped from the mirror, promoting another default.
        return (await repo.deletePaymentMethod(tx, owner, paymentMethodId)) ? ensureDefault(tx, owner, 'newest') : undefined;
      });
      await tellDefault(claim, owner, customerId, chosen);
    });
  }

  async function applyEvent(event: ProcessorEvent): Promise<void> {
    if (!event.object) return;
    switch (event.object.type) {
      case 'setup_intent': {
        if (event.type !== 'setup_intent.succeeded') return;
        const intent = await processor.retrieveSetupIntent(event.object.id);
        if (intent?.status === 'succeeded' && intent.paymentMethodId) await refreshPaymentMethod(intent.paymentMethodId);
        return;
      }
      case 'payment_method':
        await refreshPaymentMethod(event.object.id);
        return;
      case 'payment_intent':
        await holds.applyIntentEvent(event.object.id);
        for (const listener of intentListeners) await listener(db, event.object.id);
        return;
      default:
        return;
    }
  }

  return {
    info: processor.info,

    /** Another module following payment intents it made (e.g. a debt's charge): called once the webhook's hold changes are written. */
    onPaymentIntentChanged(listener: PaymentIntentListener): void {
      intentListeners.push(listener);
    },

    /** Where a payment intent stands at the processor (undefined when it does not know the id). */
    async paymentIntent(id: string): Promise<{ outcome: PaymentOutcome; clientSecret: string; amount: number; currency: string } | undefined> {
      const intent = await ask(() => processor.retrievePaymentIntent(id));
      return intent && { outcome: intent.outcome, clientSecret: intent.clientSecret, amount: intent.amount, currency: intent.currency };
    },

    // --- setup intents and payment methods (the API) ----------------------------------

    async createSetupIntent(clientId: string, userId: string, pmType: PaymentMethodType): Promise<SetupIntentView> {
      await deps.requireUser(db, clientId, userId);
      const customerId = await ensureCustomer(clientId, userId);
      const intent = await ask(() => processor.createSetupIntent({ customerId, paymentMethodType: pmType, metadata: { user_id: userId } }));
      return {
        id: intent.id,
        client_secret: intent.clientSecret,
        setup_intent_client_secret: intent.clientSecret,
        status: intent.status,
        pm_type: pmType,
        processor: processor.info.sandbox ? 'stripe_sandbox' : 'stripe',
        publishable_key: processor.info.publishableKey,
      };
    },

    /** The user's methods, newest first; the mirror is first brought in line with the processor (served as is if it cannot be reached). */
    async listPaymentMethods(clientId: string, userId: string, page: { limit: number; offset: number }) {
      await deps.requireUser(db, clientId, userId);
      const owner = ownerOf(clientId, userId);
      const customer = await repo.findCustomer(db, owner);
      if (customer) {
        try {
          await withCustomer(owner, 'sync', (claim) => syncCustomer(claim, owner, customer.customer_id));
        } catch (error) {
          if (!(error instanceof PaymentProcessorError)) throw error;
          deps.log?.warn({ err: error }, 'payment methods served from the mirror: the processor could not be reached');
        }
      }
      const { count, rows } = await repo.listPaymentMethods(db, owner, page);
      return { count, results: rows.map(paymentMethodView) };
    },

    /**
     * One of the user's methods (e.g. the one a charging session is to use),
     * or not_found. Answered from `tx` when mirrored; one the mirror does not
     * know yet is adopted through the pool, with nothing of ours locked in
     * `tx` (the caller's transaction stays open meanwhile).
     */
    async getPaymentMethod(tx: Queryable, clientId: string, userId: string, paymentMethodId: string): Promise<PaymentMethodView> {
      await deps.requireUser(tx, clientId, userId);
      const owner = ownerOf(clientId, userId);
      const mirrored = (await repo.findCustomer(tx, owner)) && (await mirroredMethod(tx, owner, paymentMethodId));
      return paymentMethodView(mirrored || (await knownMethod(clientId, userId, paymentMethodId)).row);
    },

    /**
     * Detaches at the processor and removes; the newest remaining method
     * becomes the default if this one was (the processor's customer is told
     * before the mirror changes). Not in a transaction of the caller's: it
     * asks the processor.
     */
    async removePaymentMethod(clientId: string, userId: string, paymentMethodId: string): Promise<void> {
      const { owner, customerId } = await customerFor(clientId, userId);
      const target = { clientId, userId, paymentMethodId };
      await ask(() =>
        withCustomer(owner, removalOf(paymentMethodId), async (claim) => {
          const row = await claimedMethod(claim, owner, customerId, paymentMethodId);
          const next = await claim.apply(async (tx) => {
            // The user's row lock, which placing a hold takes too: a hold recorded before this is seen by the guard; one
            // placed after finds the method being removed (this claim's purpose, committed before).
            await repo.findCustomer(tx, owner, { forUpdate: true });
            await activeHoldGuard(tx, target);
            for (const guard of guards) await guard(tx, target);
            return row.is_default ? (await repo.allPaymentMethods(tx, owner)).find((m) => m.id !== paymentMethodId) : undefined;
          });
          await processor.detachPaymentMethod(paymentMethodId);
          if (next) await processor.setDefaultPaymentMethod(customerId, next.id);
          await claim.apply(async (tx) => {
            await repo.deletePaymentMethod(tx, owner, paymentMethodId);
            if (next) await repo.setDefaultPaymentMethod(tx, owner, next.id);
          });
        }),
      );
    },

    /** Makes the method the user's default, on the processor's customer and then here. */
    async setDefaultPaymentMethod(clientId: string, userId: string, paymentMethodId: string): Promise<void> {
      const { owner, customerId } = await customerFor(clientId, userId);
      await ask(() =>
        withCustomer(owner, 'default', async (claim) => {
          await claimedMethod(claim, owner, customerId, paymentMethodId);
          await processor.setDefaultPaymentMethod(customerId, paymentMethodId);
          await claim.apply((tx) => repo.setDefaultPaymentMethod(tx, owner, paymentMethodId));
        }),
      );
    },

    // --- holds (used by charging) -----------------------------------------------------

    /**
     * Holds `amount` on the user's method (manual capture, off-session). The
     * hold is recorded (pending) before the processor is asked, with the
     * idempotency key `<reference>:hold`; calling again with the same
     * reference, also concurrently, resumes or returns that hold, never a
     * second one.
     */
    async placeHold(request: HoldRequest): Promise<Hold> {
      requirePositiveAmount(request.amount);
      const currency = request.currency.toLowerCase();
      const same = (hold: repo.HoldRow): repo.HoldRow => {
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
      };
      const prepare = async (): Promise<{ hold: repo.HoldRow; known?: { customerId: string; methodType: PaymentMethodType } }> => {
        const existing = await repo.findHoldByReference(db, account, request.reference);
        if (existing) return { hold: same(existing) };
        // Outside the transaction below: the method may have to be read from the processor first.
        const { owner } = await knownMethod(request.clientId, request.userId, request.paymentMethodId);
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
            created_at: clock.now(),
          });
          if (inserted) return { hold: inserted, known: { customerId: customer.customer_id, methodType: chargeTypeOf(row.type) } };
          // A concurrent first call for the same reference inserted it meanwhile: that hold is the one.
          const winner = await repo.findHoldByReference(tx, account, request.reference);
          if (!winner) throw new Error(`the hold for ${request.reference} vanished`);
          return { hold: same(winner) };
        });
      };
      const prepared = await prepare();
      if (prepared.hold.status !== 'pending') return holdOf(prepared.hold);
      return holdOf(await holds.place(prepared.hold.id, prepared.known, request.description));
    },

    async getHold(clientId: string, reference: string): Promise<Hold> {
      return holdOf(await holdForReference(clientId, reference));
    },

    /** The client's holds of these references, by reference (another client's are absent). */
    async getHolds(q: Queryable, clientId: string, references: readonly string[]): Promise<Map<string, Hold>> {
      const rows = await repo.findHoldsByReferences(q, account, references);
      return new Map(rows.filter((row) => row.client_id === clientId).map((row) => [row.reference, holdOf(row)]));
    },

    /** Re-reads the hold from the processor (a missed webhook, a customer who has just authenticated). */
    async refreshHold(clientId: string, reference: string): Promise<Hold> {
      const found = await holdForReference(clientId, reference);
      return holdOf(await ask(() => holds.refresh(found)));
    },

    /** Captures `amount` (at most what is held; the rest is released). Idempotent: key `<reference>:capture:<amount>`. */
    async captureHold(clientId: string, reference: string, amount: number): Promise<Hold> {
      requirePositiveAmount(amount);
      const found = await holdForReference(clientId, reference);
      // A refusal is answered after the claim is let go; what the refresh learnt is kept.
      const { hold, refusal } = await holds.exclusively(found.id, 'capture', async (claimed): Promise<{ hold: repo.HoldRow; refusal?: AppError }> => {
        const current = claimed.status === 'authorized' || claimed.status === 'captured' ? claimed : await holds.refresh(claimed);
        if (current.status === 'captured') return { hold: current };
        if (current.status !== 'authorized' || !current.payment_intent_id) return { hold: current, refusal: notCapturable(reference, current) };
        if (amount > current.amount_capturable) {
          const held = `${current.amount_capturable} ${current.currency.toUpperCase()}`;
          return { hold: current, refusal: new AppError('conflict', `Cannot capture ${amount}: only ${held} minor units are held.`) };
        }
        const paymentIntentId = current.payment_intent_id;
        const result = await processor.captureHold({ paymentIntentId, amount, idempotencyKey: `${reference}:capture:${amount}` });
        if (result.status === 'captured') {
          return { hold: await holds.merge(current, { status: 'captured', amount_captured: result.amountCaptured, amount_capturable: 0 }) };
        }
        const after = await holds.refresh(current);
        return { hold: after, refusal: notCapturable(reference, after) };
      });
      if (refusal) throw refusal;
      return holdOf(hold);
    },

    /** Releases the hold (cancels the payment intent). Idempotent: key `<reference>:release`. */
    async releaseHold(clientId: string, reference: string): Promise<Hold> {
      let found = await holdForReference(clientId, reference);
      // The processor may have made the payment intent before we recorded it: resume first (same key), then release.
      if (found.status === 'pending') found = await holds.place(found.id);
      return holdOf(
        await holds.exclusively(found.id, 'release', async (hold) => {
          if (!hold.payment_intent_id || ['released', 'expired', 'captured', 'failed'].includes(hold.status)) return hold;
          // A declined hold's intent is canceled too (so that it cannot be completed later); the hold stays declined.
          const paymentIntentId = hold.payment_intent_id;
          const result = await processor.releaseHold({ paymentIntentId, idempotencyKey: `${reference}:release` });
          if (result.status === 'released') {
            return holds.merge(hold, { status: result.reason === 'automatic' ? 'expired' : 'released', amount_capturable: 0 });
          }
          return holds.refresh(hold);
        }),
      );
    },

    /** Charges the user's method off-session at once (e.g. a session's cost beyond its hold); the outcome is a value. */
    async chargeOffSession(request: HoldRequest & { idempotencyKey: string }): Promise<PaymentOutcome> {
      requirePositiveAmount(request.amount);
      const { customerId, row } = await knownMethod(request.clientId, request.userId, request.paymentMethodId);
      return ask(() =>
        processor.chargeOffSession({
          customerId,
          paymentMethodId: row.id,
          paymentMethodType: chargeTypeOf(row.type),
          amount: request.amount,
          currency: request.currency,
          idempotencyKey: request.idempotencyKey,
          metadata: { reference: request.reference, user_id: request.userId },
          ...(request.description ? { description: request.description } : {}),
        }),
      );
    },

    // --- webhooks ---------------------------------------------------------------------

    /**
     * Applies a processor webhook: verified on the raw body (throws
     * WebhookSignatureError), dropped if its id was handled before, otherwise
     * the object it names is re-read from the processor and our state brought
     * in line. The event is recorded as handled only then: one whose handling
     * failed is delivered again and applied again (every step re-reads the
     * processor and writes conditionally, so applying twice is harmless).
     */
    async handleWebhook(rawBody: Buffer, signature: string | undefined): Promise<{ duplicate: boolean; type: string }> {
      const event = processor.verifyWebhook(rawBody, signature, clock.now());
      if (await repo.webhookEventHandled(db, account, event.id)) return { duplicate: true, type: event.type };
      await ask(() => applyEvent(event));
      const recorded = await repo.recordWebhookEvent(db, account, event.id, event.type, clock.now());
      return { duplicate: !recorded, type: event.type };
    },
  };
}

export type PaymentsService = ReturnType<typeof createPaymentsService>;

/**
 * Resolves holds a crash left pending (run periodically, e.g. hourly): placed
 * again with their idempotency key while the processor still knows it (23 h),
 * later looked up by their metadata, and `failed` when the processor never
 * made them.
 */
export function sweepPendingHolds(deps: HoldsDeps, options?: HoldSweepOptions): Promise<HoldSweepResult> {
  return createHolds(deps).sweep(options);
}

/**
 * Forgets handled webhook event ids after 30 days (Stripe stops redelivering
 * after 3), and the claims of holders that died, a day after they lapsed
 * (nobody took them over); run periodically. Answers the events forgotten.
 */
export async function purgeHandledWebhookEvents(db: Queryable, clock: Clock): Promise<number> {
  await repo.purgeLapsedClaims(db, 24 * 3_600_000);
  return repo.purgeWebhookEvents(db, new Date(clock.now().getTime() - 30 * 24 * 3_600_000));
}
