// What every CLI command (but `sandbox cpo`) runs in: a session on the
// service's database, migrated first, and the services made on it.
import { createClientsService } from '../modules/clients/service.ts';
import { createOcpi } from '../modules/ocpi/service.ts';
import { createIngestion } from '../modules/stations/ingest.ts';
import { loadSigningKeys } from '../platform/auth/keys.ts';
import { systemClock } from '../platform/clock.ts';
import { type Config, loadConfig } from '../platform/config.ts';
import { createDatabase, type Database } from '../platform/db.ts';
import { startEmbeddedPostgres } from '../platform/embedded-postgres.ts';
import { type MigrationResult, migrate } from '../platform/migrations.ts';

export interface Session {
  config: Config;
  db: Database;
  /** What opening the session applied (every command migrates first). */
  migrations: MigrationResult;
  close(): Promise<void>;
}

/** The session's pool: by default a command's 2 connections, named charging-access-cli in pg_stat_activity. */
export interface SessionPool {
  poolSize?: number;
  applicationName?: string;
}

export async function openSession(config: Config = loadConfig(), pool: SessionPool = {}): Promise<Session> {
  const embedded = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres({ dataDir: config.dataDir, role: 'cli', log: (msg) => process.stderr.write(`${msg}\n`), routine: () => {} });
  const db = createDatabase(config.databaseUrl ?? (embedded as { url: string }).url, {
    max: pool.poolSize ?? 2,
    applicationName: pool.applicationName ?? 'charging-access-cli',
    autoPrepare: config.databaseAutoPrepare,
  });
  let migrations: MigrationResult;
  try {
    migrations = await migrate(db);
  } catch (error) {
    await db.close();
    await embedded?.stop();
    throw error;
  }
  return {
    config,
    db,
    migrations,
    async close() {
      await db.close();
      await embedded?.stop();
    },
  };
}

export async function clientsService(session: Session) {
  const keys = await loadSigningKeys(session.config.jwt, { create: true });
  return createClientsService({ db: session.db, clock: systemClock, jwt: session.config.jwt, keys, cacheTtlMs: 0 });
}

export function ocpiOf(session: Pick<Session, 'config' | 'db'>) {
  const { config, db } = session;
  return createOcpi({
    db,
    clock: systemClock,
    config: config.ocpi,
    baseUrl: `${config.publicBaseUrl}/ocpi`,
    ingestion: createIngestion({ db, clock: systemClock }),
    log: (level, message, fields) => {
      if (level !== 'info') process.stderr.write(`${level}: ${message} ${JSON.stringify(fields ?? {})}\n`);
    },
  });
}
