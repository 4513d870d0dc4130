// What every charging rule is given: the module's dependencies and settings as one explicit object, built once by
// createCharging (service.ts). Rules take it as their first argument instead of closing over it.

import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import type { Clock } from '../../platform/clock.ts';
import type { CrashPoint } from '../../platform/crash-points.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import type { PricingConfig } from '../../pricing/country-pricing.ts';
import type { SessionCostView } from '../invoicing/schemas.ts';
import type { Commands } from '../ocpi/commands.ts';
import type { OcpiToken } from '../ocpi/tokens.ts';
import type { PaymentsService } from '../payments/service.ts';
import type { Catalogue } from '../stations/catalogue.ts';
import type { Ingestion } from '../stations/ingest.ts';
import type { BillingDetailsView } from '../users/schemas.ts';

export interface ChargingConfig {
  /** From the CPO's acceptance of START_SESSION to its first Session report; later, the session fails and its hold is released. */
  startTimeoutMs: number;
  /** A start saga that has not moved for this long was cut short (a crash): failed, hold released. */
  stalledStartMs: number;
  /** A stop the CPO has not finished (no message) for this long: CPOs are asked for what we missed, STOP_SESSION sent again. */
  stalledStopMs: number;
  /** At most one charging_session.progress event per session this often (EVENTS_PROGRESS_INTERVAL_MS). */
  progressIntervalMs: number;
}

export const DEFAULT_CHARGING_CONFIG: ChargingConfig = { startTimeoutMs: 120_000, stalledStartMs: 120_000, stalledStopMs: 600_000, progressIntervalMs: 30_000 };

export interface ChargingLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** A session's costs and invoice figures, as invoicing computes them (its schema is the one definition). */
export type SessionCost = SessionCostView;

export interface ChargingDeps {
  db: Database;
  clock: Clock;
  config?: Partial<ChargingConfig>;
  users: {
    requireUser(db: Queryable, clientId: string, userId: string, options?: { forUpdate?: boolean }): Promise<unknown>;
    getBillingDetails(db: Queryable, clientId: string, userId: string): Promise<BillingDetailsView>;
  };
  payments: Pick<PaymentsService, 'placeHold' | 'refreshHold' | 'releaseHold' | 'getHolds' | 'getPaymentMethod'>;
  catalogue: Pick<Catalogue, 'evse' | 'station'>;
  ingestion: Pick<Ingestion, 'findLocation' | 'findTariff'>;
  commands: Pick<Commands, 'startSession' | 'stopSession' | 'unreachable'>;
  tokenForUser(userId: string): Promise<OcpiToken | undefined>;
  /** The OCPI module: pull what every CPO changed since the last pull (Session updates and CDRs we missed). */
  pullFromCpos?(): Promise<void>;
  /** The OCPI module: CDRs received since `since` (newest first). */
  recentCdrs?(since: Date, limit: number): Promise<CDR[]>;
  pricing: PricingConfig;
  /** The invoicing module: whether the user owes money (no start then), and what billed sessions cost. */
  hasUnpaidDebt(q: Queryable, clientId: string, userId: string): Promise<boolean>;
  sessionCosts(q: Queryable, clientId: string, sessionIds: readonly string[]): Promise<Map<string, SessionCost>>;
  log?: ChargingLog;
  /** Crash tests only: kills the process at a named step (a no-op unless TEST_CRASH_POINTS names it). */
  crashPoint?: CrashPoint;
}

export interface ChargingContext extends Omit<ChargingDeps, 'config' | 'crashPoint'> {
  config: ChargingConfig;
  crash: CrashPoint;
  /** When the reconciliation last asked the CPOs for what we missed (ms): at most one pull per stalledStopMs. */
  pulls: { last: number | undefined };
}

/** Session ids are UUIDs: anything else is "not found" without a query (and never reaches a uuid column). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An authenticated hold of an earlier attempt is taken over by a new start within this time. */
export const ADOPT_WITHIN_MS = 30 * 60_000;
