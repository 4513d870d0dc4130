// What every invoicing rule works with: the database, the clock, the settings,
// the payments module and the charging and OCPI sides it reads sessions and
// CDRs from. The factory (service.ts) builds it once; the rules in bill.ts,
// debts.ts, documents.ts and session-costs.ts take it as their first argument.
import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import type { Clock } from '../../platform/clock.ts';
import type { CrashPoint } from '../../platform/crash-points.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import type { SessionRow } from '../charging/repository.ts';
import type { PaymentsService } from '../payments/service.ts';
import type { BillingDetailsView } from '../users/schemas.ts';

export interface InvoicingConfig {
  pricePolicy: 'engine' | 'cdr';
  issuer: { name: string; addressLines: string[]; vatNumber: string | undefined; email: string | undefined };
  numberPrefix: string;
  linkTtlMs: number;
  publicBaseUrl: string;
}

export interface InvoicingLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface InvoicingDeps {
  db: Database;
  clock: Clock;
  config: InvoicingConfig;
  payments: Pick<PaymentsService, 'getHolds' | 'captureHold' | 'releaseHold' | 'chargeOffSession' | 'paymentIntent' | 'getPaymentMethod'>;
  /** The charging module's session (any client), and the CDR the OCPI module stored. */
  session(id: string): Promise<SessionRow | undefined>;
  cdr(key: { country_code: string; party_id: string; id: string }): Promise<CDR | undefined>;
  users: {
    requireUser(db: Queryable, clientId: string, userId: string): Promise<unknown>;
    getBillingDetails(db: Queryable, clientId: string, userId: string): Promise<BillingDetailsView>;
  };
  log?: InvoicingLog;
  /** Crash tests only: kills the process at a named step (a no-op unless TEST_CRASH_POINTS names it). */
  crashPoint?: CrashPoint;
}

/** The deps with their defaults filled in, plus the invoice links' signing key (read once per module). */
export interface InvoicingContext extends Omit<InvoicingDeps, 'crashPoint'> {
  crash: CrashPoint;
  linkSecret(): Promise<Buffer>;
}
