// The one composition root of the service's modules: each is made here, in dependency order, and given the hooks
// it needs when it is made (no handlers or guards added afterwards). app.ts serves their routes; main.ts and the
// tests run their jobs and repairs.
//
// The path of a charging session's money, as the imports below show it:
//   OCPI receivers/sync (a CPO's Session, CDR)  -> charging cpo-events (the session completes, its bill is queued
//   on INVOICING_QUEUES.bill)  -> the job runner  -> invoicing bill.ts (priced, settled through payments, invoiced).
import type { FastifyBaseLogger } from 'fastify';
import { paymentMethodGuard as chargingPaymentMethodGuard, userDeletionGuard } from './modules/charging/guards.ts';
import { findSession } from './modules/charging/repository.ts';
import { CHARGING_QUEUES, type Charging, createCharging } from './modules/charging/service.ts';
import { authorizationCheck, paymentMethodGuard as invoicingPaymentMethodGuard } from './modules/invoicing/debts.ts';
import { INVOICING_QUEUES } from './modules/invoicing/queues.ts';
import { createInvoicing, type Invoicing } from './modules/invoicing/service.ts';
import type { OcpiEvents } from './modules/ocpi/receivers.ts';
import { createOcpi, type Ocpi, type OcpiLog } from './modules/ocpi/service.ts';
import type { PaymentProcessor } from './modules/payments/processor.ts';
import { createPaymentsService, type PaymentMethodRemovalGuard, type PaymentsService } from './modules/payments/service.ts';
import type { Catalogue } from './modules/stations/catalogue.ts';
import { createIngestion, type Ingestion } from './modules/stations/ingest.ts';
import { createUsersService, type UsersService } from './modules/users/service.ts';
import type { Clock } from './platform/clock.ts';
import type { Config } from './platform/config.ts';
import { crashPoints } from './platform/crash-points.ts';
import type { Database } from './platform/db.ts';
import type { JobHandler } from './platform/jobs.ts';
import type { Metrics } from './platform/metrics.ts';

/** What the OCPI module is made with here (main.ts: where its warnings go). */
export interface OcpiSettings {
  log?: OcpiLog;
  /** How long a credentials token's connection is cached (tests; default 2 s). */
  tokenCacheTtlMs?: number;
}

export interface ModulesDeps {
  config: Config;
  db: Database;
  clock: Clock;
  catalogue: Catalogue;
  /** The catalogue's OCPI objects (locations, tariffs): made here when absent. */
  ingestion?: Ingestion;
  /** The payment processor; without it no payments (and no charging or invoicing). */
  payments?: { processor: PaymentProcessor; removalGuards?: readonly PaymentMethodRemovalGuard[] };
  /**
   * The OCPI interface to CPOs: made here (with charging's hooks) from settings; without it no OCPI (and no charging
   * or invoicing). An OCPI module made by the caller is used as it is: CPO messages it receives reach no other module.
   */
  ocpi?: Ocpi | OcpiSettings;
  metrics?: Metrics;
  log: FastifyBaseLogger;
}

/** The service's modules, and what they give the process around them: background job handlers and periodic repairs. */
export interface Modules {
  users: UsersService;
  payments: PaymentsService | undefined;
  ocpi: Ocpi | undefined;
  charging: Charging | undefined;
  invoicing: Invoicing | undefined;
  jobHandlers: Record<string, JobHandler>;
  /** Repairs what messages and crashes left behind (stalled starts, holds, unbilled sessions); run periodically. */
  reconcile(): Promise<Record<string, number>>;
}

const isOcpi = (ocpi: Ocpi | OcpiSettings): ocpi is Ocpi => 'commands' in ocpi;

/** The value a late-bound reference holds once filled (a call before that is a bug in this file's order). */
function filled<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`${name} is called before src/modules.ts made it`);
  return value;
}

export function createModules(deps: ModulesDeps): Modules {
  const { config, db, clock, log } = deps;
  // Charging and invoicing need both the processor and the CPOs.
  const withCharging = deps.payments !== undefined && deps.ocpi !== undefined;
  const ingestion = deps.ingestion ?? createIngestion({ db, clock });

  // The one late-bound reference of the service, made here and only here. Two modules made early call into modules
  // made after them: OCPI (made before charging, which sends START/STOP_SESSION and pulls through it) hands the
  // CPO's messages to charging, and payments (made before invoicing, which captures and charges through them) tell
  // invoicing when a payment intent changed. Both go through `later`, filled as soon as charging and invoicing
  // exist, before this function returns: no request, message or job reaches them earlier.
  const later: { charging?: Charging; invoicing?: Invoicing } = {};
  const toCharging: OcpiEvents = {
    sessionChanged: (tx, session) => filled(later.charging, 'charging').sessionChanged(tx, session),
    cdrReceived: async (tx, cdr) => {
      await filled(later.charging, 'charging').cdrReceived(tx, cdr);
    },
    commandResult: (tx, commandId, result) => filled(later.charging, 'charging').commandResult(tx, commandId, result),
  };

  const ocpi =
    deps.ocpi === undefined || isOcpi(deps.ocpi)
      ? deps.ocpi
      : createOcpi({
          db,
          clock,
          config: config.ocpi,
          baseUrl: `${config.publicBaseUrl}/ocpi`,
          ingestion,
          ...(withCharging ? { events: toCharging, authorizationChecks: [(userId: string) => authorizationCheck({ db }, userId)] } : {}),
          ...(deps.ocpi.log ? { log: deps.ocpi.log } : {}),
          ...(deps.ocpi.tokenCacheTtlMs === undefined ? {} : { tokenCacheTtlMs: deps.ocpi.tokenCacheTtlMs }),
          metrics: deps.metrics,
        });

  const users = createUsersService({
    clock,
    locales: config.locales,
    deletionGuards: withCharging ? [userDeletionGuard] : [],
    changeHooks: ocpi ? [ocpi.userChanged] : [],
  });
  const payments = deps.payments
    ? createPaymentsService({
        db,
        clock,
        processor: deps.payments.processor,
        requireUser: users.requireUser,
        removalGuards: [...(deps.payments.removalGuards ?? []), ...(withCharging ? [chargingPaymentMethodGuard, invoicingPaymentMethodGuard] : [])],
        intentListeners: withCharging ? [(tx, paymentIntentId) => filled(later.invoicing, 'invoicing').paymentIntentChanged(tx, paymentIntentId)] : [],
        log,
      })
    : undefined;

  const modules: Modules = { users, payments, ocpi, charging: undefined, invoicing: undefined, jobHandlers: {}, reconcile: async () => ({}) };
  // The OCPI module's own jobs (the first pull after a CPO registered) run with or without charging.
  Object.assign(modules.jobHandlers, ocpi?.jobHandlers);
  if (!payments || !ocpi || !withCharging) return modules;

  const crashPoint = crashPoints(config.testCrashPoints);
  const invoicing = createInvoicing({
    db,
    clock,
    config: { ...config.invoicing, pricePolicy: config.charging.pricePolicy, publicBaseUrl: config.publicBaseUrl },
    payments,
    // A completed session as charging stored it (any client: billing runs in jobs), and its CDR as OCPI stored it.
    session: (id) => findSession(db, id),
    cdr: ocpi.cdr,
    users,
    log,
    crashPoint,
  });
  const charging = createCharging({
    db,
    clock,
    config: {
      startTimeoutMs: config.charging.startTimeoutMs,
      stalledStartMs: config.charging.stalledStartMs,
      stalledStopMs: config.charging.stalledStopMs,
      progressIntervalMs: config.events.progressIntervalMs,
    },
    users,
    payments,
    catalogue: deps.catalogue,
    ingestion,
    commands: ocpi.commands,
    tokenForUser: ocpi.tokens.forUser,
    pullFromCpos: () => ocpi.reconcile(),
    recentCdrs: ocpi.recentCdrs,
    pricing: config.pricing,
    hasUnpaidDebt: invoicing.hasUnpaidDebt,
    sessionCosts: invoicing.sessionCosts,
    log,
    crashPoint,
  });
  later.charging = charging;
  later.invoicing = invoicing;

  const sessionOf = (payload: unknown) => (payload as { session_id: string }).session_id;
  return {
    ...modules,
    charging,
    invoicing,
    jobHandlers: {
      ...modules.jobHandlers,
      [CHARGING_QUEUES.releaseHold]: (payload: never) => charging.releaseHold(sessionOf(payload)),
      [CHARGING_QUEUES.startDeadline]: (payload: never) => charging.startDeadline(sessionOf(payload)),
      [CHARGING_QUEUES.stopAtCpo]: (payload: never) => charging.stopAtCpo(sessionOf(payload)),
      [INVOICING_QUEUES.bill]: (payload: never) => invoicing.bill(sessionOf(payload)),
    },
    async reconcile() {
      const now = clock.now();
      const repaired = await charging.reconcile();
      const unbilled = await invoicing.reconcile(await charging.completedBetween(new Date(now.getTime() - 7 * 86_400_000), new Date(now.getTime() - 60_000)));
      return { ...repaired, unbilled };
    },
  };
}
