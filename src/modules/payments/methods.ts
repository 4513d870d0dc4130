// The user's payment methods through the API: setup intents, the list, the
// default, removal, and finding the method a hold or a charge is to use.
//
// A removal claims the user's customer with its method as purpose
// (`remove:<id>`). Using the method meanwhile (a hold, a charge, charging's
// check) waits for the claim, as it used to wait for the row lock; and the
// transaction that records a hold refuses the method while its removal is
// claimed, under the user's row lock (lockedMethod), which the removal's
// guards also take before the processor is asked: either the guard sees the
// hold, or the hold sees the removal.
import type { Queryable } from '../../platform/db.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { Claim } from './claims.ts';
import { ownerOf, type PaymentsContext } from './context.ts';
import { customerKey, ensureCustomer, withCustomer } from './customers.ts';
import { paymentMethodView, recordDetached } from './method-events.ts';
import { adopt, syncCustomer } from './mirror.ts';
import type { PaymentMethodType } from './processor.ts';
import { PaymentProcessorError } from './processor.ts';
import { ask } from './processor-calls.ts';
import * as repo from './repository.ts';
import type { PaymentMethodView, SetupIntentView } from './schemas.ts';

/**
 * Another module's veto on removing a payment method (an unpaid debt on it:
 * payment_error; an unfinished session: already_charging). Runs inside the
 * removal's transaction with the user's payment rows locked; throws an
 * AppError to refuse.
 */
export type PaymentMethodRemovalGuard = (tx: Queryable, target: { clientId: string; userId: string; paymentMethodId: string }) => Promise<void>;

/** What the API's rules need beyond the processor: the users module's check, and the other modules' removal vetoes. */
export interface MethodsContext extends PaymentsContext {
  /** The users module's check: the live user of this client, or AppError not_found. */
  requireUser: (db: Queryable, clientId: string, userId: string) => Promise<unknown>;
  /** Read at each removal: app.ts adds guards once the modules that own them exist. */
  removalGuards: readonly PaymentMethodRemovalGuard[];
}

const paymentMethodNotFound = () => notFound('Payment method');
const removalOf = (paymentMethodId: string) => `remove:${paymentMethodId}`;

/** What a method of our mirror is charged as (cards from wallets are cards). */
export function chargeTypeOf(methodType: string | undefined): PaymentMethodType {
  return methodType === 'paypal' ? 'paypal' : 'card';
}

// --- finding the method ------------------------------------------------------------------------------------

/** The method, adopted if the mirror does not know it yet; not_found otherwise. Under the user's customer claim. */
async function claimedMethod(
  ctx: PaymentsContext,
  claim: Claim,
  owner: repo.Owner,
  customerId: string,
  paymentMethodId: string,
): Promise<repo.PaymentMethodRow> {
  const row = (await repo.findPaymentMethod(ctx.db, owner, paymentMethodId)) ?? (await adopt(ctx, claim, owner, customerId, paymentMethodId));
  if (!row) throw paymentMethodNotFound();
  return row;
}

/** The user's processor customer; not_found (the method's) for no such user, or no customer yet. */
async function customerFor(ctx: MethodsContext, clientId: string, userId: string) {
  await ctx.requireUser(ctx.db, clientId, userId);
  const owner = ownerOf(ctx, clientId, userId);
  const customer = await repo.findCustomer(ctx.db, owner);
  if (!customer) throw paymentMethodNotFound();
  return { owner, customerId: customer.customer_id };
}

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
export async function knownMethod(ctx: MethodsContext, clientId: string, userId: string, paymentMethodId: string) {
  const { owner, customerId } = await customerFor(ctx, clientId, userId);
  const row =
    (await mirroredMethod(ctx.db, owner, paymentMethodId)) ??
    (await ask(ctx, () => withCustomer(ctx, owner, 'adopt', (claim) => adopt(ctx, claim, owner, customerId, paymentMethodId))));
  if (!row) throw paymentMethodNotFound();
  return { owner, customerId, row };
}

/** In `tx`, with the user's payment rows locked (as a removal checks its guards): the method, unless it is being removed; not_found otherwise. */
export async function lockedMethod(tx: Queryable, owner: repo.Owner, paymentMethodId: string) {
  const customer = await repo.findCustomer(tx, owner, { forUpdate: true });
  const row = customer && (await mirroredMethod(tx, owner, paymentMethodId));
  if (!customer || !row) throw paymentMethodNotFound();
  return { customer, row };
}

// --- the API -----------------------------------------------------------------------------------------------

export async function createSetupIntent(ctx: MethodsContext, clientId: string, userId: string, pmType: PaymentMethodType): Promise<SetupIntentView> {
  const { processor } = ctx;
  await ctx.requireUser(ctx.db, clientId, userId);
  const customerId = await ensureCustomer(ctx, clientId, userId);
  const intent = await ask(ctx, () => processor.createSetupIntent({ customerId, paymentMethodType: pmType, metadata: { user_id: userId } }));
  return {
    id: intent.id,
    client_secret: intent.clientSecret,
    setup_intent_client_secret: intent.clientSecret,
    status: intent.status,
    pm_type: pmType,
    processor: processor.info.sandbox ? 'stripe_sandbox' : 'stripe',
    publishable_key: processor.info.publishableKey,
  };
}

/** The user's methods, newest first; the mirror is first brought in line with the processor (served as is if it cannot be reached). */
export async function listPaymentMethods(ctx: MethodsContext, clientId: string, userId: string, page: { limit: number; offset: number }) {
  await ctx.requireUser(ctx.db, clientId, userId);
  const owner = ownerOf(ctx, clientId, userId);
  const customer = await repo.findCustomer(ctx.db, owner);
  if (customer) {
    try {
      await withCustomer(ctx, owner, 'sync', (claim) => syncCustomer(ctx, claim, owner, customer.customer_id));
    } catch (error) {
      if (!(error instanceof PaymentProcessorError)) throw error;
      ctx.log?.warn({ err: error }, 'payment methods served from the mirror: the processor could not be reached');
    }
  }
  const { count, rows } = await repo.listPaymentMethods(ctx.db, owner, page);
  return { count, results: rows.map(paymentMethodView) };
}

/**
 * One of the user's methods (e.g. the one a charging session is to use),
 * or not_found. Answered from `tx` when mirrored; one the mirror does not
 * know yet is adopted through the pool, with nothing of ours locked in
 * `tx` (the caller's transaction stays open meanwhile).
 */
export async function getPaymentMethod(
  ctx: MethodsContext,
  tx: Queryable,
  clientId: string,
  userId: string,
  paymentMethodId: string,
): Promise<PaymentMethodView> {
  await ctx.requireUser(tx, clientId, userId);
  const owner = ownerOf(ctx, clientId, userId);
  const mirrored = (await repo.findCustomer(tx, owner)) && (await mirroredMethod(tx, owner, paymentMethodId));
  return paymentMethodView(mirrored || (await knownMethod(ctx, clientId, userId, paymentMethodId)).row);
}

async function activeHoldGuard(ctx: PaymentsContext, tx: Queryable, target: { clientId: string; userId: string; paymentMethodId: string }): Promise<void> {
  if ((await repo.countActiveHolds(tx, ownerOf(ctx, target.clientId, target.userId), target.paymentMethodId)) > 0) {
    throw new AppError('already_charging', 'This payment method holds funds for an unfinished charging session; it can be removed once the session has ended.');
  }
}

/**
 * Detaches at the processor and removes; the newest remaining method
 * becomes the default if this one was (the processor's customer is told
 * before the mirror changes). Not in a transaction of the caller's: it
 * asks the processor.
 */
export async function removePaymentMethod(ctx: MethodsContext, clientId: string, userId: string, paymentMethodId: string): Promise<void> {
  const { processor } = ctx;
  const { owner, customerId } = await customerFor(ctx, clientId, userId);
  const target = { clientId, userId, paymentMethodId };
  await ask(ctx, () =>
    withCustomer(ctx, owner, removalOf(paymentMethodId), async (claim) => {
      const row = await claimedMethod(ctx, claim, owner, customerId, paymentMethodId);
      const next = await claim.apply(async (tx) => {
        // The user's row lock, which placing a hold takes too: a hold recorded before this is seen by the guard; one
        // placed after finds the method being removed (this claim's purpose, committed before).
        await repo.findCustomer(tx, owner, { forUpdate: true });
        await activeHoldGuard(ctx, tx, target);
        for (const guard of ctx.removalGuards) await guard(tx, target);
        return row.is_default ? (await repo.allPaymentMethods(tx, owner)).find((m) => m.id !== paymentMethodId) : undefined;
      });
      await processor.detachPaymentMethod(paymentMethodId);
      if (next) await processor.setDefaultPaymentMethod(customerId, next.id);
      await claim.apply(async (tx) => {
        const removed = await repo.deletePaymentMethod(tx, owner, paymentMethodId);
        if (removed) await recordDetached(ctx, tx, owner, removed);
        if (next) await repo.setDefaultPaymentMethod(tx, owner, next.id);
      });
    }),
  );
}

/** Makes the method the user's default, on the processor's customer and then here. */
export async function setDefaultPaymentMethod(ctx: MethodsContext, clientId: string, userId: string, paymentMethodId: string): Promise<void> {
  const { owner, customerId } = await customerFor(ctx, clientId, userId);
  await ask(ctx, () =>
    withCustomer(ctx, owner, 'default', async (claim) => {
      await claimedMethod(ctx, claim, owner, customerId, paymentMethodId);
      await ctx.processor.setDefaultPaymentMethod(customerId, paymentMethodId);
      await claim.apply((tx) => repo.setDefaultPaymentMethod(tx, owner, paymentMethodId));
    }),
  );
}
