// Pulling from a CPO's Sender interfaces: the initial sync after connecting
// and the periodic reconciliation (only what changed since the last pull).
// Invalid objects are logged and skipped, the valid ones of the same page
// are kept (transport_and_format: "process the correct objects").
// Each module is pulled on its own: one that fails (a CPO refusing it, a
// timeout) is reported and keeps its sync position, the others go on and
// move theirs. Sessions and CDRs are always asked for with date_from
// (mod_sessions makes it required): from the module's sync position, or the
// configured horizon on a full pull.
import { ocpiPages } from '../../ocpi-protocol/client.ts';
import { OCPI_2_1_1, pulledFrom211 } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import { parseCdr, parseSession } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { type Ingestion, InvalidOcpiObject, parseOcpiLocation, parseOcpiTariff } from '../stations/ingest.ts';
import { linkCdrToSession211 } from './cdr-session-v2_1_1.ts';
import type { Connections } from './connections.ts';
import { endpointOf } from './connections.ts';
import type { OcpiEvents } from './receivers.ts';
import * as repo from './repository.ts';

export interface SyncCounts {
  tariffs: number;
  locations: number;
  sessions: number;
  cdrs: number;
  skipped: number;
  /** Modules whose pull failed, and why; the others were pulled all the same. */
  failed: { module: PulledModule; reason: string }[];
}

export type SyncProgress = (module: string, done: number, total: number | undefined) => void;

/** The Sender interfaces we pull, in this order (tariffs before the locations that name them). */
export const PULLED_MODULES = ['tariffs', 'locations', 'sessions', 'cdrs'] as const;
export type PulledModule = (typeof PULLED_MODULES)[number];

/** An incremental pull starts this much before the previous one started: clocks of CPOs differ from ours. */
const OVERLAP_MS = 60_000;
const DAY_MS = 86_400_000;

export interface SyncDeps {
  db: Database;
  clock: Clock;
  connections: Connections;
  ingestion: Ingestion;
  pageLimit: number;
  timeoutMs: number;
  /** How far back a full pull of Sessions and CDRs reaches (days). */
  horizonDays: number;
  events?: OcpiEvents;
  log?: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;
}

/**
 * date_from of a module's pull: its sync position (minus the overlap) unless
 * the pull is full or the module was never pulled; then nothing for the
 * catalogue (all of it) and the horizon for Sessions and CDRs.
 */
export function pullDateFrom(module: PulledModule, position: Date | undefined, options: { full: boolean; now: Date; horizonDays: number }): Date | undefined {
  if (!options.full && position) return new Date(position.getTime() - OVERLAP_MS);
  if (module === 'sessions' || module === 'cdrs') return new Date(options.now.getTime() - options.horizonDays * DAY_MS);
  return undefined;
}

/** One pull of one connection: what every module's pull shares. */
function pullRun(deps: SyncDeps, connection: repo.Connection, onProgress: SyncProgress | undefined) {
  const auth = deps.connections.peerAuth(connection);
  // A GET on a Sender interface goes to the connection's party (transport_and_format: routing headers on functional modules).
  const headers = deps.connections.routingTo(connection);
  const parties = new Set(connection.roles.filter((r) => r.role === 'CPO').map((r) => `${r.country_code.toUpperCase()}*${r.party_id.toUpperCase()}`));
  const counts: SyncCounts = { tariffs: 0, locations: 0, sessions: 0, cdrs: 0, skipped: 0, failed: [] };
  const skip = (module: string, object: unknown, reason: string) => {
    counts.skipped++;
    const id = (object as { id?: unknown } | null)?.id;
    deps.log?.('warn', 'skipped an invalid object from a CPO', {
      connection: connection.name,
      module,
      id: typeof id === 'string' ? id.slice(0, 40) : undefined,
      reason,
    });
  };
  // A 2.1.1 CPO's objects are read through the 2.1.1 adapter: of its one party (2.1.1 objects name none), their tokens ours.
  const cpo = connection.roles.find((r) => r.role === 'CPO');
  const party = { country_code: cpo?.country_code.toUpperCase() ?? '', party_id: cpo?.party_id.toUpperCase() ?? '' };
  const us = deps.connections.ourParty();
  return {
    connection,
    counts,
    onProgress,
    /** The object as 2.2.1 has it (a 2.2.1 peer's as it came); undefined, and skipped, when a 2.1.1 object cannot be converted. */
    read(module: PulledModule, object: unknown): unknown {
      if (connection.version !== OCPI_2_1_1) return object;
      const converted = pulledFrom211(module, object, party, us);
      if (converted.ok) return converted.value;
      skip(module, object, converted.errors.map((e) => `${e.path} ${e.message}`).join('; '));
      return undefined;
    },
    owned: (o: { country_code?: unknown; party_id?: unknown }) =>
      typeof o.country_code === 'string' && typeof o.party_id === 'string' && parties.has(`${o.country_code.toUpperCase()}*${o.party_id.toUpperCase()}`),
    skip,
    pages(module: PulledModule, since: Date | undefined) {
      const url = endpointOf(connection, module, 'SENDER');
      return url
        ? ocpiPages<unknown>(auth, url, { module, headers, limit: deps.pageLimit, timeoutMs: deps.timeoutMs, ...(since ? { date_from: since } : {}) })
        : undefined;
    },
  };
}

type PullRun = ReturnType<typeof pullRun>;

const upper = <T extends { country_code: string; party_id: string }>(o: T): T => ({
  ...o,
  country_code: o.country_code.toUpperCase(),
  party_id: o.party_id.toUpperCase(),
});

/** Tariffs or Locations into the station catalogue; true when something was stored. */
async function pullCatalogue(deps: SyncDeps, run: PullRun, module: 'tariffs' | 'locations', since: Date | undefined): Promise<boolean> {
  const pages = run.pages(module, since);
  if (!pages) return false;
  const parser = module === 'tariffs' ? parseOcpiTariff : parseOcpiLocation;
  let changed = false;
  for await (const page of pages) {
    const objects = page.items.flatMap((item) => {
      const o = run.read(module, item);
      if (o === undefined) return [];
      try {
        const value = parser(o);
        if (run.owned(value)) return [upper(value)];
        run.skip(module, o, 'belongs to a party not registered on this connection');
      } catch (error) {
        run.skip(module, o, error instanceof InvalidOcpiObject ? error.message : 'invalid');
      }
      return [];
    });
    if (objects.length > 0) {
      const stored = await deps.ingestion.ingest(module === 'tariffs' ? { tariffs: objects } : { locations: objects }, { notify: false });
      run.counts[module] += module === 'tariffs' ? stored.tariffs : stored.locations;
      changed = true;
    }
    run.onProgress?.(module, run.counts[module], page.total);
  }
  return changed;
}

async function pullSessions(deps: SyncDeps, run: PullRun, since: Date | undefined): Promise<void> {
  const { db, clock } = deps;
  const pages = run.pages('sessions', since);
  if (!pages) return;
  for await (const page of pages) {
    for (const item of page.items) {
      const object = run.read('sessions', item);
      if (object === undefined) continue;
      const parsed = parseSession(object);
      if (!parsed.ok) {
        run.skip('sessions', object, parsed.errors.map((e) => `${e.path} ${e.message}`).join('; '));
        continue;
      }
      if (!run.owned(parsed.value)) continue;
      const session = upper(parsed.value);
      const written = await db.transaction(async (tx) => {
        if (!(await repo.upsertSession(tx, run.connection.id, session, clock.now()))) return false;
        await deps.events?.sessionChanged?.(tx, session, run.connection.id);
        return true;
      });
      if (written) run.counts.sessions++;
    }
    run.onProgress?.('sessions', run.counts.sessions, page.total);
  }
}

async function pullCdrs(deps: SyncDeps, run: PullRun, since: Date | undefined): Promise<void> {
  const { db, clock } = deps;
  const pages = run.pages('cdrs', since);
  if (!pages) return;
  for await (const page of pages) {
    for (const item of page.items) {
      const read = run.read('cdrs', item);
      if (read === undefined) continue;
      // A 2.1.1 CDR names no session: linked to the CPO's Session it belongs to (cdr-session-v2_1_1.ts).
      const object = run.connection.version === OCPI_2_1_1 ? await linkCdrToSession211(db, run.connection.id, read as Record<string, unknown>) : read;
      const parsed = parseCdr(object);
      if (!parsed.ok) {
        run.skip('cdrs', object, parsed.errors.map((e) => `${e.path} ${e.message}`).join('; '));
        continue;
      }
      if (!run.owned(parsed.value)) continue;
      const cdr = upper(parsed.value);
      const inserted = await db.transaction(async (tx) => {
        const fresh = await repo.insertCdr(
          tx,
          run.connection.id,
          { ...cdr, session_id: cdr.session_id, authorization_reference: cdr.authorization_reference, credit: cdr.credit },
          clock.now(),
        );
        if (fresh) await deps.events?.cdrReceived?.(tx, cdr, run.connection.id);
        return fresh;
      });
      if (inserted) run.counts.cdrs++;
    }
    run.onProgress?.('cdrs', run.counts.cdrs, page.total);
  }
}

export function createSync(deps: SyncDeps) {
  const { db, clock, ingestion } = deps;

  /** A catalogue changed by the pull is announced; one pulled in full is a bulk load (settled pages, see finishBulkLoad). */
  async function finishCatalogue(connection: repo.Connection, bulk: boolean): Promise<void> {
    if (!bulk) {
      await ingestion.notify();
      return;
    }
    const { vacuumError } = await ingestion.finishBulkLoad();
    if (vacuumError)
      deps.log?.('warn', 'vacuuming the station tables after a full pull failed (the pull stands)', { connection: connection.name, error: vacuumError });
  }

  return {
    /**
     * Pulls Tariffs, Locations, Sessions and CDRs of one connection. `full`
     * pulls the whole catalogue and the Sessions and CDRs of the horizon;
     * otherwise each module only what changed since its sync position. A
     * module that fails is in `failed`; the others are pulled all the same.
     */
    async syncConnection(connection: repo.Connection, options: { full?: boolean; onProgress?: SyncProgress } = {}): Promise<SyncCounts> {
      const started = clock.now();
      const full = options.full ?? false;
      const positions = await repo.syncPositions(db, connection.id);
      const run = pullRun(deps, connection, options.onProgress);
      let changedCatalogue = false;
      let bulk = false;
      for (const module of PULLED_MODULES) {
        const moduleStarted = clock.now();
        const since = pullDateFrom(module, positions.get(module), { full, now: moduleStarted, horizonDays: deps.horizonDays });
        try {
          if (module === 'tariffs' || module === 'locations') {
            const changed = await pullCatalogue(deps, run, module, since);
            changedCatalogue ||= changed;
            bulk ||= changed && since === undefined;
          } else if (module === 'sessions') await pullSessions(deps, run, since);
          else await pullCdrs(deps, run, since);
          // A module the CPO does not offer gets no position: if it offers it later, its first pull reaches the horizon.
          if (endpointOf(connection, module, 'SENDER')) await repo.markModuleSynced(db, connection.id, module, moduleStarted);
        } catch (error) {
          const reason = (error as Error).message;
          run.counts.failed.push({ module, reason });
          deps.log?.('warn', 'pulling a module from a CPO failed; the other modules are pulled, this one again next time', {
            connection: connection.name,
            module,
            reason,
          });
        }
        if (module === 'locations' && changedCatalogue) await finishCatalogue(connection, bulk);
      }
      if (run.counts.failed.length === 0) await repo.markSynced(db, connection.id, started);
      const { failed, ...counts } = run.counts;
      deps.log?.('info', 'pulled from a CPO', { connection: connection.name, full, ...counts, failed: failed.map((f) => f.module) });
      return run.counts;
    },
  };
}

export type Sync = ReturnType<typeof createSync>;
