// The mirror: our copy of the user's payment methods at the processor, with
// our own default. Every change of it reads the processor and then writes,
// under the user's customer claim (customers.ts: every function here taking a
// Claim runs under it), so the default rules hold (the first method becomes
// the default; removing the default promotes the newest) and a read taken
// before a removal is never written back after it. A method new to the mirror
// is payment_method.attached, one that leaves it payment_method.detached: the
// events commit with the change (method-events.ts).
import type { Queryable } from '../../platform/db.ts';
import type { Claim } from './claims.ts';
import { ownerOf, type PaymentsContext, type RefreshUnderWay } from './context.ts';
import { withCustomer } from './customers.ts';
import { recordAttached, recordDetached } from './method-events.ts';
import type { ProcessorPaymentMethod } from './processor.ts';
import * as repo from './repository.ts';

const PROCESSOR_ID = /^[a-z]{2,4}_[A-Za-z0-9_]{1,250}$/;

export function mirrorDetails(pm: ProcessorPaymentMethod, customerId: string): repo.PaymentMethodDetails {
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

/**
 * In `tx`: gives the user a default when they have methods but none is: the
 * first one connected (`oldest`), or after the default was removed the
 * newest remaining (`newest`). Answers the method it made the default, for
 * tellDefault once committed (in the same transaction as the change that
 * called for it, so the mirror is never seen without its default).
 */
export async function ensureDefault(tx: Queryable, owner: repo.Owner, pick: 'oldest' | 'newest'): Promise<string | undefined> {
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
export async function tellDefault(ctx: PaymentsContext, claim: Claim, owner: repo.Owner, customerId: string, chosen: string | undefined): Promise<void> {
  if (chosen === undefined) return;
  try {
    await ctx.processor.setDefaultPaymentMethod(customerId, chosen);
  } catch (error) {
    await claim.apply((tx) => repo.unsetDefaultPaymentMethod(tx, owner, chosen));
    throw error;
  }
}

/** Brings the mirror in line with the processor's list for this customer. */
export async function syncCustomer(ctx: PaymentsContext, claim: Claim, owner: repo.Owner, customerId: string): Promise<void> {
  const remote = (await ctx.processor.listPaymentMethods(customerId)).filter((pm) => pm.customerId === customerId);
  const chosen = await claim.apply(async (tx) => {
    const local = await repo.allPaymentMethods(tx, owner);
    const now = ctx.clock.now();
    const attached: string[] = [];
    // Oldest first, so the mirror's insertion order follows creation (the processor lists newest first).
    for (const pm of [...remote].reverse().sort((a, b) => a.created.getTime() - b.created.getTime())) {
      if (await repo.upsertPaymentMethod(tx, owner, mirrorDetails(pm, customerId), now)) attached.push(pm.id);
    }
    const remoteIds = new Set(remote.map((pm) => pm.id));
    let removedDefault = false;
    for (const row of local) {
      if (remoteIds.has(row.id)) continue;
      const removed = await repo.deletePaymentMethod(tx, owner, row.id);
      if (removed) await recordDetached(ctx, tx, owner, removed);
      removedDefault ||= row.is_default;
    }
    const madeDefault = await ensureDefault(tx, owner, removedDefault ? 'newest' : 'oldest');
    await recordAttached(ctx, tx, owner, attached);
    return madeDefault;
  });
  await tellDefault(ctx, claim, owner, customerId, chosen);
}

/**
 * A method the mirror does not know yet (the webhook may still be on its
 * way): adopted if the processor has it attached to this user's customer.
 */
export async function adopt(
  ctx: PaymentsContext,
  claim: Claim,
  owner: repo.Owner,
  customerId: string,
  paymentMethodId: string,
): Promise<repo.PaymentMethodRow | undefined> {
  if (!PROCESSOR_ID.test(paymentMethodId)) return undefined;
  const pm = await ctx.processor.retrievePaymentMethod(paymentMethodId);
  if (!pm || pm.customerId !== customerId) return undefined;
  const chosen = await claim.apply(async (tx) => {
    const attached = await repo.upsertPaymentMethod(tx, owner, mirrorDetails(pm, customerId), ctx.clock.now());
    const madeDefault = await ensureDefault(tx, owner, 'oldest');
    if (attached) await recordAttached(ctx, tx, owner, [pm.id]);
    return madeDefault;
  });
  await tellDefault(ctx, claim, owner, customerId, chosen);
  return repo.findPaymentMethod(ctx.db, owner, paymentMethodId);
}

/**
 * Brings one method of the mirror in line with the processor (a webhook
 * named it). It is read under the owner's claim, so a removal running
 * meanwhile has either finished (and the method reads as detached) or waits
 * for this; a stale "attached" is never written back over it.
 */
export function refreshPaymentMethod(ctx: PaymentsContext, paymentMethodId: string): Promise<void> {
  // One refresh of a method at a time in this process. A request that comes while one is under way settles with it
  // when that one has not read the processor yet (its read comes after the request); otherwise the refresh runs once
  // more. Webhooks about one new card (setup_intent.succeeded, payment_method.attached) come together: each
  // refreshed it, the second polling for the customer's claim the first held (3 failed claims per driver in the
  // charging benchmark).
  // A run that ended without that read (the method not ours, or its customer not found yet) settles nobody who
  // joined it: they get a run of their own.
  const under = ctx.refreshing.get(paymentMethodId);
  if (under) {
    under.asked = true;
    if (under.read) under.again = true;
    return under.done;
  }
  const refresh: RefreshUnderWay = { again: false, read: false, asked: false, done: Promise.resolve() };
  refresh.done = (async () => {
    try {
      let more: boolean;
      do {
        refresh.again = false;
        refresh.read = false;
        refresh.asked = false;
        await refreshOnce(ctx, paymentMethodId, () => {
          refresh.read = true;
        });
        more = refresh.again || (!refresh.read && refresh.asked);
      } while (more);
    } finally {
      ctx.refreshing.delete(paymentMethodId);
    }
  })();
  ctx.refreshing.set(paymentMethodId, refresh);
  return refresh.done;
}

/** `reading` is told just before the processor is asked for the method's state that is written to the mirror. */
async function refreshOnce(ctx: PaymentsContext, paymentMethodId: string, reading: () => void): Promise<void> {
  const { db, account, processor } = ctx;
  const local = await repo.findPaymentMethodById(db, account, paymentMethodId);
  let customer: repo.CustomerRow | undefined;
  if (local) {
    customer = await repo.findCustomer(db, ownerOf(ctx, local.client_id, local.user_id));
  } else {
    // Not mirrored yet: the processor names the customer.
    const first = await processor.retrievePaymentMethod(paymentMethodId);
    if (!first?.customerId) return;
    customer = await repo.findCustomerOwner(db, account, first.customerId);
  }
  if (!customer) return; // not one of our customers
  const owner = ownerOf(ctx, customer.client_id, customer.user_id);
  const customerId = customer.customer_id;
  await withCustomer(ctx, owner, 'refresh', async (claim) => {
    reading();
    const pm = await processor.retrievePaymentMethod(paymentMethodId);
    const chosen = await claim.apply(async (tx) => {
      if (pm?.customerId === customerId) {
        const attached = await repo.upsertPaymentMethod(tx, owner, mirrorDetails(pm, customerId), ctx.clock.now());
        const madeDefault = await ensureDefault(tx, owner, 'oldest');
        if (attached) await recordAttached(ctx, tx, owner, [pm.id]);
        return madeDefault;
      }
      // Detached (or gone) at the processor: dropped from the mirror, promoting another default.
      const removed = await repo.deletePaymentMethod(tx, owner, paymentMethodId);
      if (!removed) return undefined;
      await recordDetached(ctx, tx, owner, removed);
      return ensureDefault(tx, owner, 'newest');
    });
    await tellDefault(ctx, claim, owner, customerId, chosen);
  });
}
