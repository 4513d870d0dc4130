// Payments: the rules. Setup intents, the user's payment methods (our mirror
// of the processor's, with our own default), holds for charging sessions, and
// the processor's webhooks. Every user-facing function takes the caller's
// client id; another client's user or payment method is "not found".
//
// Per user, changes to the mirror are serialized by locking the user's
// payment_customers row, so the default rules (the first method becomes the
// default; deleting the default promotes the newest) hold under concurrency.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { AppError, notFound } from '../../platform/errors.ts';
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

export interface PaymentsServiceDeps {
  db: Database;
  clock: Clock;
  processor: PaymentProcessor;
  /** The users module's check: the live user of this client, or AppError not_found. */
  requireUser: (db: Queryable, clientId: string, userId: string) => Promise<unknown>;
  removalGuards?: PaymentMethodRemovalGuard[];
  log?: { warn(fields: object, message: string): void };
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

const paymentMethodNotFound = () => notFound('Payment method');

export function createPaymentsService(deps: PaymentsServiceDeps) {
  const { db, clock, processor } = deps;
  const account = processor.info.account;
  const guards = deps.removalGuards ?? [];
  const ownerOf = (clientId: string, userId: string): repo.Owner => ({ clientId, userId, account });

  /** Runs a processor call; a transport failure becomes 503 payment_processor_unavailable. */
  async function ask<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof PaymentProcessorError) {
        deps.log?.warn({ err: error }, 'payment processor call failed');
        throw unavailable();
      }
      throw error;
    }
  }

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

  // --- holds ------------------------------------------------------------------------

  async function recordOutcome(holdId: string, outcome: PaymentOutcome): Promise<repo.HoldRow> {
    return repo.updateHold(db, holdId, holdChanges(outcome), clock.now());
  }

  /** Asks the processor for the hold (again): the same idempotency key never makes a second payment intent. */
  async function authorize(hold: repo.HoldRow, request: { paymentMethodType: PaymentMethodType; customerId: string; description?: string }) {
    const outcome = await ask(() =>
      processor.placeHold({
        customerId: request.customerId,
        paymentMethodId: hold.payment_method_id,
        paymentMethodType: request.paymentMethodType,
        amount: hold.amount,
        currency: hold.currency,
        idempotencyKey: hold.idempotency_key,
        metadata: { reference: hold.reference, user_id: hold.user_id, hold_id: hold.id },
        ...(request.description ? { description: request.description } : {}),
      }),
    );
    return recordOutcome(hold.id, outcome);
  }

  /** Re-reads the hold's payment intent from the processor and records where it stands. */
  async function refreshHold(tx: Queryable, hold: repo.HoldRow): Promise<repo.HoldRow> {
    if (!hold.payment_intent_id) return hold;
    const intent = await processor.retrievePaymentIntent(hold.payment_intent_id);
    if (!intent) return hold;
    const changes = holdChanges(intent.outcome);
    if (intent.outcome.status === 'succeeded') changes.amount_captured = intent.amountReceived;
    return repo.updateHold(tx, hold.id, changes, clock.now());
  }

  async function holdForReference(clientId: string, reference: string): Promise<repo.HoldRow> {
    const hold = await repo.findHoldByReference(db, clientId, account, reference);
    if (!hold) throw notFound('Hold');
    return hold;
  }

  async function customerIdFor(hold: repo.HoldRow): Promise<string> {
    const customer = await repo.findCustomer(db, ownerOf(hold.client_id, hold.user_id));
    if (!customer) throw new Error(`hold ${hold.id} has no payment customer`);
    return customer.customer_id;
  }

  // --- webhooks -------------------------------------------------------------------------

  async function refreshPaymentMethod(tx: Queryable, paymentMethodId: string): Promise<void> {
    const pm = await processor.retrievePaymentMethod(paymentMethodId);
    if (pm?.customerId) {
      const owner = await repo.findCustomerOwner(tx, account, pm.customerId, { forUpdate: true });
      if (!owner) return; // not one of our customers
      const scope = ownerOf(owner.client_id, owner.user_id);
      await repo.upsertPaymentMethod(tx, scope, mirrorDetails(pm, owner.customer_id), clock.now());
      await ensureDefault(tx, scope, owner.customer_id, 'oldest');
      return;
    }
    // Detached (or gone) at the processor: drop it from the mirror, promoting another default.
    const local = await repo.findPaymentMethodById(tx, account, paymentMethodId);
    if (!local) return;
    const scope = ownerOf(local.client_id, local.user_id);
    await repo.findCustomer(tx, scope, { forUpdate: true });
    if (await repo.deletePaymentMethod(tx, scope, paymentMethodId)) await ensureDefault(tx, scope, local.customer_id, 'newest');
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
      case 'payment_intent': {
        const hold = await repo.findHoldByIntent(tx, account, event.object.id, { forUpdate: true });
        if (hold) await refreshHold(tx, hold);
        return;
      }
      default:
        return;
    }
  }

  return {
    info: processor.info,

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
     * reference resumes or returns that hold, never a second one.
     */
    async placeHold(request: HoldRequest): Promise<Hold> {
      if (!Number.isSafeInteger(request.amount) || request.amount <= 0)
        throw new AppError('validation_error', 'amount: must be a positive integer of minor units');
      const currency = request.currency.toLowerCase();
      const prepared = await db.transaction(async (tx) => {
        const existing = await repo.findHoldByReference(tx, request.clientId, account, request.reference, { forUpdate: true });
        if (existing) {
          if (
            existing.user_id !== request.userId ||
            existing.payment_method_id !== request.paymentMethodId ||
            existing.amount !== request.amount ||
            existing.currency !== currency
          ) {
            throw new AppError('conflict', `A different hold already exists for ${request.reference}.`);
          }
          return { hold: existing, method: await repo.findPaymentMethod(tx, ownerOf(request.clientId, request.userId), request.paymentMethodId) };
        }
        const { customer, row } = await lockedMethod(tx, request.clientId, request.userId, request.paymentMethodId);
        const hold = await repo.insertHold(tx, {
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
        return { hold, method: row, customerId: customer.customer_id };
      });
      if (prepared.hold.status !== 'pending') return holdOf(prepared.hold);
      const customerId = 'customerId' in prepared && prepared.customerId ? prepared.customerId : await customerIdFor(prepared.hold);
      const paymentMethodType: PaymentMethodType = prepared.method?.type === 'paypal' ? 'paypal' : 'card';
      return holdOf(await authorize(prepared.hold, { customerId, paymentMethodType, ...(request.description ? { description: request.description } : {}) }));
    },

    async getHold(clientId: string, reference: string): Promise<Hold> {
      return holdOf(await holdForReference(clientId, reference));
    },

    /** Re-reads the hold from the processor (a missed webhook, a customer who has just authenticated). */
    async refreshHold(clientId: string, reference: string): Promise<Hold> {
      const hold = await holdForReference(clientId, reference);
      return holdOf(await ask(() => refreshHold(db, hold)));
    },

    /** Captures `amount` (at most what is held; the rest is released). Idempotent: key `<reference>:capture`. */
    async captureHold(clientId: string, reference: string, amount: number): Promise<Hold> {
      if (!Number.isSafeInteger(amount) || amount <= 0) throw new AppError('validation_error', 'amount: must be a positive integer of minor units');
      let hold = await holdForReference(clientId, reference);
      if (hold.status === 'captured') return holdOf(hold);
      if (hold.status !== 'authorized') hold = await ask(() => refreshHold(db, hold));
      if (hold.status !== 'authorized' || !hold.payment_intent_id) {
        throw new AppError('conflict', `The hold for ${reference} cannot be captured: it is ${hold.status}.`);
      }
      if (amount > hold.amount_capturable) {
        throw new AppError('conflict', `Cannot capture ${amount}: only ${hold.amount_capturable} ${hold.currency.toUpperCase()} minor units are held.`);
      }
      const paymentIntentId = hold.payment_intent_id;
      const result = await ask(() => processor.captureHold({ paymentIntentId, amount, idempotencyKey: `${reference}:capture` }));
      if (result.status === 'captured') {
        return holdOf(await repo.updateHold(db, hold.id, { status: 'captured', amount_captured: result.amountCaptured, amount_capturable: 0 }, clock.now()));
      }
      const current = await ask(() => refreshHold(db, hold));
      throw new AppError('conflict', `The hold for ${reference} cannot be captured: it is ${current.status}.`);
    },

    /** Releases the hold (cancels the payment intent). Idempotent: key `<reference>:release`. */
    async releaseHold(clientId: string, reference: string): Promise<Hold> {
      let hold = await holdForReference(clientId, reference);
      if (hold.status === 'pending') {
        // The processor may have made the payment intent before we recorded it: resume first, then release.
        const customerId = await customerIdFor(hold);
        const method = await repo.findPaymentMethod(db, ownerOf(hold.client_id, hold.user_id), hold.payment_method_id);
        hold = await authorize(hold, { customerId, paymentMethodType: method?.type === 'paypal' ? 'paypal' : 'card' });
      }
      if (!hold.payment_intent_id || ['released', 'expired', 'captured'].includes(hold.status)) return holdOf(hold);
      const paymentIntentId = hold.payment_intent_id;
      const result = await ask(() => processor.releaseHold({ paymentIntentId, idempotencyKey: `${reference}:release` }));
      if (result.status === 'released') {
        return holdOf(
          await repo.updateHold(db, hold.id, { status: result.reason === 'automatic' ? 'expired' : 'released', amount_capturable: 0 }, clock.now()),
        );
      }
      return holdOf(await ask(() => refreshHold(db, hold)));
    },

    /** Charges the user's method off-session at once (e.g. a session's cost beyond its hold); the outcome is a value. */
    async chargeOffSession(request: HoldRequest & { idempotencyKey: string }): Promise<PaymentOutcome> {
      if (!Number.isSafeInteger(request.amount) || request.amount <= 0)
        throw new AppError('validation_error', 'amount: must be a positive integer of minor units');
      const { customer, row } = await db.transaction((tx) => lockedMethod(tx, request.clientId, request.userId, request.paymentMethodId));
      return ask(() =>
        processor.chargeOffSession({
          customerId: customer.customer_id,
          paymentMethodId: row.id,
          paymentMethodType: row.type === 'paypal' ? 'paypal' : 'card',
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

/** Forgets handled webhook event ids after 30 days (Stripe stops redelivering after 3); run periodically. */
export function purgeHandledWebhookEvents(db: Queryable, clock: Clock): Promise<number> {
  return repo.purgeWebhookEvents(db, new Date(clock.now().getTime() - 30 * 24 * 3_600_000));
}
