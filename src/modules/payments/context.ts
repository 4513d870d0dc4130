// What every payments rule is given: the database, the clock, the processor
// and the processor account whose rows it reads and writes. The service
// (service.ts) builds it once; the hold sweep builds its own from the same
// dependencies.
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { CLAIM_LEASE_MS } from './claims.ts';
import type { PaymentProcessor } from './processor.ts';
import type * as repo from './repository.ts';

export interface PaymentsLog {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface PaymentsContext {
  db: Database;
  clock: Clock;
  processor: PaymentProcessor;
  /** The processor's account (processor.info.account): our rows of another account are not ours to touch. */
  account: string;
  log?: PaymentsLog | undefined;
  /** How long a claim holds when its holder dies. */
  claimLeaseMs: number;
  /** Refreshes of a payment method's mirror under way in this process, by method id (see refreshPaymentMethod). */
  refreshing: Map<string, RefreshUnderWay>;
}

/** A refresh of one payment method's mirror under way (mirror.ts refreshPaymentMethod). */
export interface RefreshUnderWay {
  /** Its current run has read the processor. */
  read: boolean;
  /** Someone asked for a refresh since its current run began. */
  asked: boolean;
  /** Someone asked after that read: the run does not cover them, so it runs once more. */
  again: boolean;
  /** Settles when the last run is over. */
  done: Promise<void>;
}

export interface PaymentsContextDeps {
  db: Database;
  clock: Clock;
  processor: PaymentProcessor;
  log?: PaymentsLog | undefined;
  /** How long a claim holds when its holder dies (default 15 s). */
  claimLeaseMs?: number | undefined;
}

export function paymentsContext(deps: PaymentsContextDeps): PaymentsContext {
  return {
    db: deps.db,
    clock: deps.clock,
    processor: deps.processor,
    account: deps.processor.info.account,
    log: deps.log,
    claimLeaseMs: deps.claimLeaseMs ?? CLAIM_LEASE_MS,
    refreshing: new Map(),
  };
}

/** Whose payment data: one user of one client, at the context's processor account. */
export function ownerOf(ctx: Pick<PaymentsContext, 'account'>, clientId: string, userId: string): repo.Owner {
  return { clientId, userId, account: ctx.account };
}
