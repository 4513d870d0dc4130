// The user's processor customer, and the claim named after it. Making the
// customer runs under that claim, so concurrent first calls send the
// processor one request; so does every change of the user's payment-method
// mirror (mirror.ts), and a removal claims it with the method as purpose
// (methods.ts).
import { type Claim, claimed } from './claims.ts';
import { ownerOf, type PaymentsContext } from './context.ts';
import { ask } from './processor-calls.ts';
import * as repo from './repository.ts';

export const customerKey = (owner: repo.Owner) => `customer:${owner.account}:${owner.userId}`;

/** Runs `work` with the user's processor customer claimed: making it, and every change of the user's mirror, one at a time. */
export function withCustomer<T>(ctx: PaymentsContext, owner: repo.Owner, purpose: string, work: (claim: Claim) => Promise<T>): Promise<T> {
  return claimed(ctx, customerKey(owner), purpose, work);
}

/** The user's processor customer id, made (once) if the user has none yet. */
export async function ensureCustomer(ctx: PaymentsContext, clientId: string, userId: string): Promise<string> {
  const { db, account } = ctx;
  const owner = ownerOf(ctx, clientId, userId);
  const existing = await repo.findCustomer(db, owner);
  if (existing) return existing.customer_id;
  // Claimed, so that concurrent first calls send one request: the deterministic key would give them one customer too, but
  // the processor refuses a request whose key is still in flight.
  return ask(ctx, () =>
    withCustomer(ctx, owner, 'create', async (claim) => {
      const made = await repo.findCustomer(db, owner);
      if (made) return made.customer_id;
      const { customerId } = await ctx.processor.createCustomer({
        idempotencyKey: `customer:${account}:${userId}`,
        metadata: { user_id: userId, client_id: clientId },
        description: `User ${userId}`,
      });
      await claim.apply((tx) => repo.insertCustomer(tx, owner, customerId, ctx.clock.now()));
      const stored = await repo.findCustomer(db, owner);
      if (!stored) throw new Error('the payment customer row vanished');
      return stored.customer_id;
    }),
  );
}
