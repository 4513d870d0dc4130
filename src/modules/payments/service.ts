// Payments: the rules. Setup intents, the user's payment methods (our mirror
// of the processor's, with our own default), holds for charging sessions, and
// the processor's webhooks. Every user-facing function takes the caller's
// client id; another client's user or payment method is "not found".
//
// Per user, changes to the mirror are serialized by locking the user's
// payment_customers row, so the default rules (the first method becomes the
// default; deleting the default promotes the newest) hold under concurrency;
// a webhook takes that lock before it re-reads a method from the processor.
//
// Holds: whatever reads a hold and then writes it (a refresh, a capture, a
// release, a webhook, the sweep) locks the hold's row first, in the same
// transaction as the write; the answer to placing a hold is recorded only
// while the hold is still pending; and the SQL never moves a hold out of a
// final state (declined, captured, released, expired, failed).
import { randomUUID } from 'node:crypto';
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

/** Told that a payment intent changed (a verified webhook); re-read it with paymentIntent() before acting. */
export type PaymentIntentListener = (tx: Queryable, paymentIntentId: string) => Promise<void>;

export interface PaymentsServiceDeps {
  db: Database;
  clock: Clock;
  processor: PaymentProcessor;
  /** The users module's check: the live user of this client, or AppError not_found. */
  requireUser: (db: Queryable, clientId: string, userId: string) => Promise<unknown>;
  removalGuards?: PaymentMethodRemovalGuard[];
  log?: PaymentsLog;
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
function holdChanges(outcome: PaymentOutcome): repo.HoldChanges {
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
}

/** Holds on payment methods: placing, recording, refreshing under the hold's row lock, webhooks and the sweep of pending ones. */
function createHolds(deps: HoldsDeps) {
  const { db, clock, processor } = deps;
  const account = processor.info.account;
  const ask = askerOf(deps.log);
  const ownerOfHold = (hold: repo.HoldRow): repo.Owner => ({ clientId: hold.client_id, userId: hold.user_id, account });

  async function lockedHold(tx: Queryable, id: string): Promise<repo.HoldRow> {
    const hold = await repo.lockHold(tx, id);
    if (!hold) throw new Error(`hold ${id} vanished`);
    return hold;
  }

  /** Runs `work` in one transaction with the hold's row locked; processor failures answer as in ask(). */
  function withLockedHold<T>(id: string, work: (tx: Queryable, hold: repo.HoldRow) => Promise<T>): Promise<T> {
    return ask(() => db.transaction(async (tx) => work(tx, await lockedHold(tx, id))));
  }

  /** Writes `changes` to a hold locked by `tx`; a final hold stays as it is. */
  async function change(tx: Queryable, hold: repo.HoldRow, changes: repo.HoldChanges): Promise<repo.HoldRow> {
    return (await repo.updateHold(tx, hold.id, changes, clock.now())) ?? hold;
  }

  /** Re-reads the payment intent of a hold locked by `tx` and records where it stands (a final hold is not asked about). */
  async function refreshLocked(tx: Queryable, hold: repo.HoldRow, paymentIntentId = hold.payment_intent_id): Promise<repo.HoldRow> {
    if (!paymentIntentId || repo.FINAL_HOLD_STATUSES.includes(hold.status)) return hold;
    const intent = await processor.retrievePaymentIntent(paymentIntentId);
    if (!intent) return hold;
    return change(tx, hold, holdChanges(intent.outcome));
  }

  /**
   * Records the processor's answer to placing the hold, only while the hold is
   * still pending: anything recorded meanwhile (a webhook, which re-read the
   * intent after it was made) is newer and stays.
   */
  function recordPlacement(holdId: string, outcome: PaymentOutcome): Promise<repo.HoldRow> {
    return db.transaction(async (tx) => (await repo.updateHold(tx, holdId, holdChanges(outcome), clock.now(), ['pending'])) ?? lockedHold(tx, holdId));
  }

  async function customerIdOf(q: Queryable, hold: repo.HoldRow): Promise<string> {
    const customer = await repo.findCustomer(q, ownerOfHold(hold));
    if (!customer) throw new Error(`hold ${hold.id} has no payment customer`);
    return customer.customer_id;
  }

  /** Asks the processor for the hold (again): the same idempotency key never makes a second payment intent. */
  async function place(hold: repo.HoldRow, known?: { customerId: string; methodType: PaymentMethodType }, description?: string): Promise<repo.HoldRow> {
    const customerId = known?.customerId ?? (await customerIdOf(db, hold));
    const methodType = known?.methodType ?? chargeTypeOf((await repo.findPaymentMethod(db, ownerOfHold(hold), hold.payment_method_id))?.type);
    const outcome = await ask(() =>
      processor.placeHold({
        customerId,
        paymentMethodId: hold.payment_method_id,
        paymentMethodType: methodType,
        amount: hold.amount,
        currency: hold.currency,
        idempotencyKey: hold.idempotency_key,
        metadata: { reference: hold.reference, user_id: hold.user_id, hold_id: hold.id },
        ...(description ? { description } : {}),
      }),
    );
    return recordPlacement(hold.id, outcome);
  }

  /**
   * A payment_intent event: the hold with that intent, or, when the answer to
   * placing it was never recorded (a crash between the processor's call and
   * our write), the hold our metadata names; its state and intent id are
   * recorded.
   */
  async function applyIntentEvent(tx: Queryable, paymentIntentId: string): Promise<void> {
    const hold = await repo.findHoldByIntent(tx, account, paymentIntentId, { forUpdate: true });
    if (hold) {
      await refreshLocked(tx, hold);
      return;
    }
    const intent = await processor.retrievePaymentIntent(paymentIntentId);
    const holdId = intent?.metadata.hold_id;
    if (!intent || !holdId || !UUID.test(holdId)) return;
    const unrecorded = await repo.lockUnrecordedHold(tx, account, holdId);
    // Read again now that the hold is locked: an event handled meanwhile must not be undone by this older read.
    if (unrecorded) await refreshLocked(tx, unrecorded, intent.id);
  }

  /**
   * Resolves holds left pending by a crash (the processor's answer never
   * recorded): a younger one is placed again with its idempotency key (the
   * processor answers the intent it made, or makes it now); for an older one
   * the key may be forgotten, so its intent is looked up by our metadata
   * instead of risking a second one, and when there is none the hold is
   * `failed`.
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
          const placed = await place(pending);
          if (placed.status === 'pending') result.unresolved++;
          else result.resumed++;
          continue;
        }
        const resolved = await withLockedHold(pending.id, async (tx, hold) => {
          if (hold.status !== 'pending') return 'moved' as const;
          const intent = await processor.findPaymentIntent({
            customerId: await customerIdOf(tx, hold),
            metadataKey: 'hold_id',
            metadataValue: hold.id,
            // Our clock and the processor's may differ a little.
            createdSince: new Date(hold.created_at.getTime() - HOUR_MS),
          });
          if (intent) {
            await repo.updateHold(tx, hold.id, holdChanges(intent.outcome), clock.now(), ['pending']);
            return 'found' as const;
          }
          await repo.updateHold(
            tx,
            hold.id,
            { status: 'failed', failure_code: 'not_placed', failure_message: 'The hold was never placed at the payment processor.' },
            clock.now(),
            ['pending'],
          );
          return 'failed' as const;
        });
        if (resolved === 'found') result.found++;
        else if (resolved === 'failed') result.failed++;
      } catch (error) {
        result.unresolved++;
        deps.log?.warn({ err: error, hold_id: pending.id }, 'a pending hold could not be resolved; the next sweep tries again');
      }
    }
    return result;
  }

  return { ask, withLockedHold, change, refreshLocked, place, applyIntentEvent, sweep };
}

export function createPaymentsService(deps: PaymentsServiceDeps) {
  const { db, clock, processor } = deps;
  const account = processor.info.account;
  const guards = deps.removalGuards ?? [];
  const ownerOf = (clientId: string, userId: string): repo.Owner => ({ clientId, userId, account });
  const holds = createHolds(deps);
  const { ask } = holds;
  const intentListeners: PaymentIntentListener[] = [];

  async function ensureCustomer(clientId: string, userId: string): Promise<string> {
    const owner = ownerOf(clientId, userId);
    const existing = await repo.findCustomer(db, owner);
    if (existing) return existing.customer_id;
    // A deterministic key: concurrent first calls get the same processor customer.
    const { customerId } = await ask(() =>
      processor.createCustomer({
        idempotencyKey: `customer:${account}:${userId}`,
        metadata: { user_id: userId, client_id: clientId },
        description: `User ${userId}`,
      }),
    );
    await repo.insertCustomer(db, owner, customerId, clock.now());
    const stored = await repo.findCustomer(db, owner);
    if (!stored) throw new Error('the payment customer row vanished');
    return stored.customer_id;
  }

  /**
   * Gives the user a default when they have methods but none is: the first
   * one connected (`oldest`), or after the default was removed the newest
   * remaining (`newest`). The processor's customer follows.
   */
  async function ensureDefault(tx: Queryable, owner: repo.Owner, customerId: string, pick: 'oldest' | 'newest'): Promise<void> {
    const methods = await repo.allPaymentMethods(tx, owner);
    if (methods.length === 0 || methods.some((m) => m.is_default)) return;
    const chosen = (pick === 'newest' ? methods[0] : methods.at(-1)) as repo.PaymentMethodRow;
    await repo.setDefaultPaymentMethod(tx, owner, chosen.id);
    await processor.setDefaultPaymentMethod(customerId, chosen.id);
  }

  /** Brings the mirror in line with the processor's list for this customer (under the customer lock). */
  async function syncCustomer(tx: Queryable, owner: repo.Owner, customerId: string): Promise<void> {
    const remote = (await processor.listPaymentMethods(customerId)).filter((pm) => pm.customerId === customerId);
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
    await ensureDefault(tx, owner, customerId, removedDefault ? 'newest' : 'oldest');
  }

  /**
   * A method the mirror does not know yet (the webhook may still be on its
   * way): adopted if the processor has it attached to this user's customer.
   */
  async function adopt(tx: Queryable, owner: repo.Owner, customerId: string, paymentMethodId: string): Promise<repo.PaymentMethodRow | undefined> {
    if (!PROCESSOR_ID.test(paymentMethodId)) return undefined;
    const pm = await processor.retrievePaymentMethod(paymentMethodId);
    if (!pm || pm.customerId !== customerId) return undefined;
    await repo.upsertPaymentMethod(tx, owner, mirrorDetails(pm, customerId), clock.now());
    await ensureDefault(tx, owner, customerId, 'oldest');
    return repo.findPaymentMethod(tx, owner, paymentMethodId);
  }

  /** The user's method (locks the user's payment rows), or not_found. */
  async function lockedMethod(tx: Queryable, clientId: string, userId: string, paymentMethodId: string) {
    await deps.requireUser(tx, clientId, userId);
    const owner = ownerOf(clientId, userId);
    const customer = await repo.findCustomer(tx, owner, { forUpdate: true });
    if (!customer) throw paymentMethodNotFound();
    const row = (await repo.findPaymentMethod(tx, owner, paymentMethodId)) ?? (await ask(() => adopt(tx, owner, customer.customer_id, paymentMethodId)));
    if (!row) throw paymentMethodNotFound();
    return { owner, customer, row };
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
   * Brings one method of the mirror in line with the processor. The owner's
   * customer row is locked before the processor is read, so a removal running
   * meanwhile has either finished (and the method reads as detached) or waits
   * for this transaction; a stale "attached" is never written back over it.
   */
  async function refreshPaymentMethod(tx: Queryable, paymentMethodId: string): Promise<void> {
    const local = await repo.findPaymentMethodById(tx, account, paymentMethodId);
    let customer: repo.CustomerRow | undefined;
    if (local) {
      customer = await repo.findCustomer(tx, ownerOf(local.client_id, local.user_id), { forUpdate: true });
    } else {
      // Not mirrored yet: the processor names the customer to lock.
      const first = await processor.retrievePaymentMethod(paymentMethodId);
      if (!first?.customerId) return;
      customer = await repo.findCustomerOwner(tx, account, first.customerId, { forUpdate: true });
    }
    if (!customer) return; // not one of our customers
    const scope = ownerOf(customer.client_id, customer.user_id);
    const pm = await processor.retrievePaymentMethod(paymentMethodId);
    if (pm?.customerId === customer.customer_id) {
      await repo.upsertPaymentMethod(tx, scope, mirrorDetails(pm, customer.customer_id), clock.now());
      await ensureDefault(tx, scope, customer.customer_id, 'oldest');
      return;
    }
    // Detached (or gone) at the processor: drop it from the mirror, promoting another default.
    if (await repo.deletePaymentMethod(tx, scope, paymentMethodId)) await ensureDefault(tx, scope, customer.customer_id, 'newest');
  }

  async function applyEvent(tx: Queryable, event: ProcessorEvent): Promise<void> {
    if (!event.object) return;
    switch (event.object.type) {
      case 'setup_intent': {
        if (event.type !== 'setup_intent.succeeded') return;
        const intent = await processor.retrieveSetupIntent(event.object.id);
        if (intent?.status === 'succeeded' && intent.paymentMethodId) await refreshPaymentMethod(tx, intent.paymentMethodId);
        return;
      }
      case 'payment_method':
        await refreshPaymentMethod(tx, event.object.id);
        return;
      case 'payment_intent':
        await holds.applyIntentEvent(tx, event.object.id);
        for (const listener of intentListeners) await listener(tx, event.object.id);
        return;
      default:
        return;
    }
  }

  return {
    info: processor.info,

    /** Another module following payment intents it made (e.g. a debt's charge): called in the webhook's transaction. */
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
          await db.transaction(async (tx) => {
            await repo.findCustomer(tx, owner, { forUpdate: true });
            await syncCustomer(tx, owner, customer.customer_id);
          });
        } catch (error) {
          if (!(error instanceof PaymentProcessorError)) throw error;
          deps.log?.warn({ err: error }, 'payment methods served from the mirror: the processor could not be reached');
        }
      }
      const { count, rows } = await repo.listPaymentMethods(db, owner, page);
      return { count, results: rows.map(paymentMethodView) };
    },

    /** One of the user's methods (e.g. the one a charging session is to use), or not_found. */
    async getPaymentMethod(tx: Queryable, clientId: string, userId: string, paymentMethodId: string): Promise<PaymentMethodView> {
      return paymentMethodView((await lockedMethod(tx, clientId, userId, paymentMethodId)).row);
    },

    /** Detaches at the processor and removes; the newest remaining method becomes the default if this one was. */
    async removePaymentMethod(tx: Queryable, clientId: string, userId: string, paymentMethodId: string): Promise<void> {
      const { owner, customer, row } = await lockedMethod(tx, clientId, userId, paymentMethodId);
      const target = { clientId, userId, paymentMethodId };
      await activeHoldGuard(tx, target);
      for (const guard of guards) await guard(tx, target);
      await ask(() => processor.detachPaymentMethod(paymentMethodId));
      await repo.deletePaymentMethod(tx, owner, paymentMethodId);
      if (row.is_default) await ask(() => ensureDefault(tx, owner, customer.customer_id, 'newest'));
    },

    /** Makes the method the user's default, here and on the processor's customer. */
    async setDefaultPaymentMethod(tx: Queryable, clientId: string, userId: string, paymentMethodId: string): Promise<void> {
      const { owner, customer } = await lockedMethod(tx, clientId, userId, paymentMethodId);
      await repo.setDefaultPaymentMethod(tx, owner, paymentMethodId);
      await ask(() => processor.setDefaultPaymentMethod(customer.customer_id, paymentMethodId));
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
      const prepared = await db.transaction(async (tx) => {
        const existing = await repo.findHoldByReference(tx, account, request.reference, { forUpdate: true });
        if (existing) return { hold: same(existing) };
        const { customer, row } = await lockedMethod(tx, request.clientId, request.userId, request.paymentMethodId);
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
        // A concurrent first call for the same reference inserted it while we waited: that hold is the one.
        const winner = await repo.findHoldByReference(tx, account, request.reference, { forUpdate: true });
        if (!winner) throw new Error(`the hold for ${request.reference} vanished`);
        return { hold: same(winner) };
      });
      if (prepared.hold.status !== 'pending') return holdOf(prepared.hold);
      return holdOf(await holds.place(prepared.hold, prepared.known, request.description));
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
      return holdOf(await holds.withLockedHold(found.id, (tx, hold) => holds.refreshLocked(tx, hold)));
    },

    /** Captures `amount` (at most what is held; the rest is released). Idempotent: key `<reference>:capture:<amount>`. */
    async captureHold(clientId: string, reference: string, amount: number): Promise<Hold> {
      requirePositiveAmount(amount);
      const found = await holdForReference(clientId, reference);
      // A refusal is answered after the commit, so that what the refresh learnt is kept.
      const { hold, refusal } = await holds.withLockedHold(found.id, async (tx, locked): Promise<{ hold: repo.HoldRow; refusal?: AppError }> => {
        const current = locked.status === 'authorized' || locked.status === 'captured' ? locked : await holds.refreshLocked(tx, locked);
        if (current.status === 'captured') return { hold: current };
        if (current.status !== 'authorized' || !current.payment_intent_id) return { hold: current, refusal: notCapturable(reference, current) };
        if (amount > current.amount_capturable) {
          const held = `${current.amount_capturable} ${current.currency.toUpperCase()}`;
          return { hold: current, refusal: new AppError('conflict', `Cannot capture ${amount}: only ${held} minor units are held.`) };
        }
        const paymentIntentId = current.payment_intent_id;
        const result = await processor.captureHold({ paymentIntentId, amount, idempotencyKey: `${reference}:capture:${amount}` });
        if (result.status === 'captured') {
          return { hold: await holds.change(tx, current, { status: 'captured', amount_captured: result.amountCaptured, amount_capturable: 0 }) };
        }
        const after = await holds.refreshLocked(tx, current);
        return { hold: after, refusal: notCapturable(reference, after) };
      });
      if (refusal) throw refusal;
      return holdOf(hold);
    },

    /** Releases the hold (cancels the payment intent). Idempotent: key `<reference>:release`. */
    async releaseHold(clientId: string, reference: string): Promise<Hold> {
      let found = await holdForReference(clientId, reference);
      // The processor may have made the payment intent before we recorded it: resume first (same key), then release.
      if (found.status === 'pending') found = await holds.place(found);
      return holdOf(
        await holds.withLockedHold(found.id, async (tx, hold) => {
          if (!hold.payment_intent_id || ['released', 'expired', 'captured', 'failed'].includes(hold.status)) return hold;
          // A declined hold's intent is canceled too (so that it cannot be completed later); the hold stays declined.
          const paymentIntentId = hold.payment_intent_id;
          const result = await processor.releaseHold({ paymentIntentId, idempotencyKey: `${reference}:release` });
          if (result.status === 'released') {
            return holds.change(tx, hold, { status: result.reason === 'automatic' ? 'expired' : 'released', amount_capturable: 0 });
          }
          return holds.refreshLocked(tx, hold);
        }),
      );
    },

    /** Charges the user's method off-session at once (e.g. a session's cost beyond its hold); the outcome is a value. */
    async chargeOffSession(request: HoldRequest & { idempotencyKey: string }): Promise<PaymentOutcome> {
      requirePositiveAmount(request.amount);
      const { customer, row } = await db.transaction((tx) => lockedMethod(tx, request.clientId, request.userId, request.paymentMethodId));
      return ask(() =>
        processor.chargeOffSession({
          customerId: customer.customer_id,
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
     * in line, in one transaction with the record of the event.
     */
    async handleWebhook(rawBody: Buffer, signature: string | undefined): Promise<{ duplicate: boolean; type: string }> {
      const event = processor.verifyWebhook(rawBody, signature, clock.now());
      return ask(() =>
        db.transaction(async (tx) => {
          if (!(await repo.recordWebhookEvent(tx, account, event.id, event.type, clock.now()))) return { duplicate: true, type: event.type };
          await applyEvent(tx, event);
          return { duplicate: false, type: event.type };
        }),
      );
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

/** Forgets handled webhook event ids after 30 days (Stripe stops redelivering after 3); run periodically. */
export function purgeHandledWebhookEvents(db: Queryable, clock: Clock): Promise<number> {
  return repo.purgeWebhookEvents(db, new Date(clock.now().getTime() - 30 * 24 * 3_600_000));
}
