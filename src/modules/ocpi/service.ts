// The OCPI module assembled: connections (credentials), receivers, tokens,
// commands, pulls, the outbox of pushes and the periodic reconciliation.
import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import type { Clock } from '../../platform/clock.ts';
import type { OcpiConfig } from '../../platform/config.ts';
import type { Database } from '../../platform/db.ts';
import type { JobContext, JobHandler } from '../../platform/jobs.ts';
import type { Metrics } from '../../platform/metrics.ts';
import { createRateLimiter } from '../../platform/rate-limit/limiter.ts';
import type { Ingestion } from '../stations/ingest.ts';
import { createCommands } from './commands.ts';
import { createConnections } from './connections.ts';
import { firstPull, OCPI_QUEUES } from './first-pull.ts';
import { createHubClients } from './hub-clients.ts';
import { deliverDuePushes } from './push-delivery.ts';
import { createReceivers, type OcpiEvents } from './receivers.ts';
import * as repo from './repository.ts';
import { ocpiRoutes } from './routes.ts';
import { createSync } from './sync.ts';
import { type AuthorizationCheck, createTokens } from './tokens.ts';

export type OcpiLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface OcpiDeps {
  db: Database;
  clock: Clock;
  config: Pick<
    OcpiConfig,
    'countryCode' | 'partyId' | 'businessName' | 'pageLimit' | 'requestTimeoutMs' | 'reconcileIntervalMs' | 'rateLimitPerMinute' | 'pullHorizonDays'
  >;
  /** Base URL of our OCPI interface as peers reach it: <public base URL>/ocpi. */
  baseUrl: string;
  ingestion: Ingestion;
  /** What becomes of CPO messages (charging's handlers); they run inside the transaction storing the message. */
  events?: OcpiEvents;
  /** Other modules' say in real-time token authorization (invoicing's: an unpaid debt is NO_CREDIT); first verdict wins, none: ALLOWED. */
  authorizationChecks?: readonly AuthorizationCheck[];
  log?: OcpiLog;
  /** Where outbound calls are counted, by peer, module and outcome (METRICS_PORT); without it none are. */
  metrics?: Pick<Metrics, 'ocpiCall'>;
  /** How long a credentials token's connection is cached (default 2 s; changes clear it at once, see startBackgroundWork). */
  tokenCacheTtlMs?: number;
}

/** Operator names for stations: the CPO parties' business details as the peer registered them. */
async function storeOperatorNames(ingestion: Ingestion, roles: repo.PeerRole[]): Promise<void> {
  // One row per party: a peer may list a party twice (or in two letter cases), and one statement cannot write a row twice.
  const parties = new Map<string, { country_code: string; party_id: string; name: string; phone: null; website: string | null }>();
  for (const r of roles) {
    const key = `${r.country_code.toUpperCase()}*${r.party_id.toUpperCase()}`;
    if (r.role !== 'CPO' || parties.has(key)) continue;
    parties.set(key, {
      country_code: r.country_code.toUpperCase(),
      party_id: r.party_id.toUpperCase(),
      name: r.business_details.name,
      phone: null,
      website: r.business_details.website ?? null,
    });
  }
  await ingestion.ingest({ parties: [...parties.values()] }, { notify: false });
}

export function createOcpi(deps: OcpiDeps) {
  const { db, clock, config } = deps;
  const log = deps.log ?? (() => {});
  const party = { countryCode: config.countryCode, partyId: config.partyId, businessName: config.businessName };
  const connections = createConnections({
    db,
    clock,
    identity: { ...party, baseUrl: deps.baseUrl },
    timeoutMs: config.requestTimeoutMs,
    ...(deps.metrics ? { observeCall: deps.metrics.ocpiCall } : {}),
    ...(deps.tokenCacheTtlMs === undefined ? {} : { cacheTtlMs: deps.tokenCacheTtlMs }),
    onRoles: (roles) => storeOperatorNames(deps.ingestion, roles),
  });
  const events: OcpiEvents = { ...deps.events };
  const receivers = createReceivers({ db, clock, ingestion: deps.ingestion, events, ocpiBaseUrl: deps.baseUrl });
  const hubClients = createHubClients({ db, log: (level, message, fields) => log(level, message, fields) });
  const tokens = createTokens({ db, clock, party, checks: deps.authorizationChecks ?? [] });
  const commands = createCommands({ db, clock, connections, ocpiBaseUrl: deps.baseUrl, timeoutMs: config.requestTimeoutMs });
  const sync = createSync({
    db,
    clock,
    connections,
    ingestion: deps.ingestion,
    pageLimit: config.pageLimit,
    timeoutMs: config.requestTimeoutMs,
    horizonDays: config.pullHorizonDays,
    events,
    log: (level, message, fields) => log(level, message, fields),
  });

  const timers: NodeJS.Timeout[] = [];
  let following: { stop(): Promise<void> } | undefined;
  let pushing: Promise<unknown> | undefined;
  // Aborted by stop(): pushes in flight are cut off and what was claimed is released (sent by the next start or another process).
  const stopping = new AbortController();
  let reconciling: Promise<void> | undefined;

  const reconcileAll = async (): Promise<void> => {
    for (const connection of await repo.listConnectedConnections(db)) {
      try {
        await sync.syncConnection(connection);
      } catch (error) {
        log('warn', 'reconciliation with a CPO failed; retried at the next interval', { connection: connection.name, reason: (error as Error).message });
      }
    }
  };

  const deliver = () => {
    if (stopping.signal.aborted) return Promise.resolve();
    pushing ??= deliverDuePushes({
      db,
      clock,
      auth: connections.peerAuth,
      routing: (connection, to) => connections.routingTo(connection, to),
      timeoutMs: config.requestTimeoutMs,
      log: (level, m, f) => log(level, m, f),
      signal: stopping.signal,
    })
      .catch((error: Error) => log('warn', 'delivering OCPI pushes failed', { err: error.message }))
      .finally(() => {
        pushing = undefined;
      });
    return pushing;
  };

  return {
    connections,
    receivers,
    /** Durable background work of the module, by queue (src/modules.ts hands them to the job runner). */
    jobHandlers: {
      [OCPI_QUEUES.firstPull]: (payload: never, job: JobContext) => firstPull({ db, sync, log }, payload as { connection_id?: unknown }, job),
    } satisfies Record<string, JobHandler>,
    /** A CDR as stored (received or pulled). */
    async cdr(key: { country_code: string; party_id: string; id: string }): Promise<CDR | undefined> {
      return (await repo.findCdr(db, key))?.data as CDR | undefined;
    },
    /** CDRs received since `since` (not credit CDRs), newest first. */
    async recentCdrs(since: Date, limit: number): Promise<CDR[]> {
      return (await repo.recentCdrs(db, since, limit)).map((row) => row.data as CDR);
    },
    tokens,
    commands,
    sync,
    /** The user hook of the users module: a user's token is pushed to CPOs. */
    userChanged: tokens.userChanged,
    routes: () =>
      ocpiRoutes({
        db,
        clock,
        connections,
        receivers,
        tokens,
        hubClients,
        pageLimit: config.pageLimit,
        baseUrl: deps.baseUrl,
        rateLimit: { limiter: createRateLimiter({ db, clock, log }), perMinute: config.rateLimitPerMinute },
      }),

    /**
     * Pulls everything changed at every connected CPO since the last pull. One pass at a time (a call during a
     * pass joins it: a slow pull never piles up passes); never rejects (it runs from a timer), failures are logged.
     */
    reconcile(): Promise<void> {
      reconciling ??= reconcileAll()
        .catch((error: Error) => log('warn', 'reconciliation failed; retried at the next interval', { reason: error.message }))
        .finally(() => {
          reconciling = undefined;
        });
      return reconciling;
    },
    deliverPushes: deliver,
    /** Pushes waiting in the outbox, by module (metrics). */
    pushBacklog: () => repo.pendingPushes(db, clock.now()),

    /**
     * What a serving process does besides answering: it follows connection changes made by any process (its token
     * cache is cleared at once), delivers the outbox every 2 s and reconciles at the configured interval.
     */
    startBackgroundWork(): void {
      following ??= connections.followChanges((error) =>
        log('warn', 'OCPI connection changes: the listener lost its connection; reconnecting (the token cache is cleared then)', {
          reason: error.message,
        }),
      );
      const outbox = setInterval(() => void deliver(), 2_000);
      outbox.unref();
      timers.push(outbox);
      if (config.reconcileIntervalMs > 0) {
        const reconcile = setInterval(() => void this.reconcile(), config.reconcileIntervalMs);
        reconcile.unref();
        timers.push(reconcile);
      }
    },
    async stop(): Promise<void> {
      for (const timer of timers.splice(0)) clearInterval(timer);
      await following?.stop();
      following = undefined;
      stopping.abort();
      await pushing;
    },
  };
}

export type Ocpi = ReturnType<typeof createOcpi>;
