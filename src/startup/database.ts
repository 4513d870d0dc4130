// The service's database: DATABASE_URL, or else the embedded PostgreSQL under
// DATA_DIR; its pool; and the migrations, applied before anything uses it.
import { createDatabase, type Database } from '../platform/db.ts';
import { startEmbeddedPostgres } from '../platform/embedded-postgres.ts';
import type { Metrics } from '../platform/metrics.ts';
import { migrate } from '../platform/migrations.ts';
import { SANDBOX_POOL_SIZE } from '../sandbox-network.ts';
import type { StartupContext } from './context.ts';
import { EMBEDDED_POSTGRES } from './shutdown.ts';

/** The database's URL: DATABASE_URL, or else the embedded PostgreSQL's, started (and supervised) for this process. */
export async function startDatabaseServer({ config, log, stops }: StartupContext): Promise<string> {
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: config.dataDir, role: 'service', log: (msg) => log.info(msg) });
  if (embedded) {
    stops.add(EMBEDDED_POSTGRES, () => embedded.stop());
    // Supervised: if it exits, it is started again on the same port and the pool reconnects to it.
    embedded.supervise({
      exited: () => log.warn('the embedded PostgreSQL exited; restarting it (requests needing the database answer 503 meanwhile)'),
      restarted: (attempt) => log.info({ attempt }, 'the embedded PostgreSQL is running again'),
      restartFailed: (error, retryInMs) => log.warn({ reason: error.message, retry_in_ms: retryInMs }, 'restarting the embedded PostgreSQL failed'),
    });
  }
  if (config.databaseUrl || !embedded) return config.databaseUrl as string;
  return embedded.localUrl ?? embedded.url;
}

/** A warning once a pool has prepared as many statement texts as it may (src/platform/db.ts): more texts than expected, built with values in them? */
const autoPrepareFull = (log: StartupContext['log'], pool: string) => (names: number) =>
  log.warn({ pool, names }, 'automatic statement preparation reached its bound: statements first seen from now on are planned on every run');

/** The pool (its errors counted in the metrics, if any), migrated. */
export async function openDatabase({ config, log, stops }: StartupContext, url: string, metrics: Metrics | undefined): Promise<Database> {
  const db = createDatabase(url, {
    max: config.databasePoolSize,
    onError: metrics?.databaseError,
    autoPrepare: config.databaseAutoPrepare,
    onAutoPrepareFull: autoPrepareFull(log, 'the service'),
  });
  stops.add('database pool', () => db.close());

  const migrations = await migrate(db);
  if (migrations.applied.length > 0) log.info({ applied: migrations.applied }, 'database migrations applied');
  return db;
}

/**
 * The built-in sandboxes (the Stripe stand-in and the CPO network) stand for systems outside the service:
 * they get a pool of their own, so their work never waits for the service's connections nor holds them
 * (sharing one pool of 20, the API waited for a connection behind them: 88 requests waiting on average at 100
 * concurrent charging sessions). The service's own pool when no sandbox runs.
 */
export function openSandboxDatabase({ config, log, stops }: StartupContext, url: string, db: Database): Database {
  if (!config.stripe.sandbox && !config.ocpi.cpoSandbox.enabled) return db;
  const sandboxDb = createDatabase(url, {
    max: SANDBOX_POOL_SIZE,
    applicationName: 'charging-access-sandboxes',
    autoPrepare: config.databaseAutoPrepare,
    onAutoPrepareFull: autoPrepareFull(log, 'the sandboxes'),
  });
  stops.add('sandbox database pool', () => sandboxDb.close());
  return sandboxDb;
}
