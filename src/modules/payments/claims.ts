// Claims: what must not run twice at once runs under a claim (a
// payment_claims row, committed before the processor is asked and deleted
// after it; others wait for it without a connection, and a claim whose holder
// died lapses). Held today for placing, capturing or releasing one hold
// (holds.ts), making a user's processor customer (customers.ts), and every
// change of a user's payment-method mirror (mirror.ts, methods.ts). Writes
// under a claim check that the claim is still theirs (Claim.apply).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../platform/db.ts';
import type { PaymentsContext } from './context.ts';
import { PaymentProcessorError } from './processor.ts';
import * as repo from './repository.ts';

/**
 * How long a claim holds if its holder dies: the longest anyone waits for a
 * dead one. A holder whose processor call outlasts it loses the claim: a
 * second request with the same idempotency key is then safe, and its own
 * writes under a customer claim are refused (503, retry).
 */
export const CLAIM_LEASE_MS = 15_000;

export interface Claim {
  /** Runs `write` in a short transaction if the claim is still ours (else 503: it lapsed while the processor was slow). */
  apply<T>(write: (tx: Queryable) => Promise<T>): Promise<T>;
}

/**
 * The one way the service serializes work that asks the processor: `work`
 * runs holding the claim `key`, and holds no connection itself while it asks
 * (its reads and writes are single statements or short transactions).
 * Waiting for a claim holds no connection either: each try is one statement.
 */
export async function claimed<T>(
  ctx: Pick<PaymentsContext, 'db' | 'claimLeaseMs'>,
  key: string,
  purpose: string,
  work: (claim: Claim) => Promise<T>,
): Promise<T> {
  const { db } = ctx;
  const token = randomUUID();
  const leaseMs = ctx.claimLeaseMs;
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
}
