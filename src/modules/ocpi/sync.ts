// Pulling from a CPO's Sender interfaces: the initial sync after connecting
// and the periodic reconciliation (only what changed since the last pull).
// Invalid objects are logged and skipped, the valid ones of the same page
// are kept (transport_and_format: "process the correct objects").
import { ocpiPages } from '../../ocpi-protocol/client.ts';
import { parseCdr, parseSession } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { type Ingestion, InvalidOcpiObject, parseOcpiLocation, parseOcpiTariff } from '../stations/ingest.ts';
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
}

export type SyncProgress = (module: string, done: number, total: number | undefined) => void;

export function createSync(deps: {
  db: Database;
  clock: Clock;
  connections: Connections;
  ingestion: Ingestion;
  pageLimit: number;
  timeoutMs: number;
  events?: OcpiEvents;
  log?: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;
}) {
  const { db, clock, ingestion } = deps;

  return {
    /**
     * Pulls Tariffs, Locations, Sessions and CDRs of one connection. `full`
     * pulls everything; otherwise only objects changed since the last sync
     * (with a minute of overlap for clock skew).
     */
    async syncConnection(connection: repo.Connection, options: { full?: boolean; onProgress?: SyncProgress } = {}): Promise<SyncCounts> {
      const started = clock.now();
      const since = !options.full && connection.last_synced_at ? new Date(connection.last_synced_at.getTime() - 60_000) : undefined;
      const auth = deps.connections.peerAuth(connection);
      const parties = new Set(connection.roles.filter((r) => r.role === 'CPO').map((r) => `${r.country_code.toUpperCase()}*${r.party_id.toUpperCase()}`));
      const owned = (o: { country_code?: unknown; party_id?: unknown }) =>
        typeof o.country_code === 'string' && typeof o.party_id === 'string' && parties.has(`${o.country_code.toUpperCase()}*${o.party_id.toUpperCase()}`);
      const counts: SyncCounts = { tariffs: 0, locations: 0, sessions: 0, cdrs: 0, skipped: 0 };
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
      const pages = (module: string) => {
        const url = endpointOf(connection, module, 'SENDER');
        return url
          ? ocpiPages<unknown>(auth, url, { module, limit: deps.pageLimit, timeoutMs: deps.timeoutMs, ...(since ? { date_from: since } : {}) })
          : undefined;
      };
      const parse = <T>(module: string, object: unknown, parser: (value: unknown) => T): T | undefined => {
        try {
          const value = parser(object);
          if (!owned(value as { country_code?: unknown })) {
            skip(module, object, 'belongs to a party not registered on this connection');
            return undefined;
          }
          return value;
        } catch (error) {
          skip(module, object, error instanceof InvalidOcpiObject ? error.message : 'invalid');
          return undefined;
        }
      };
      const upper = <T extends { country_code: string; party_id: string }>(o: T): T => ({
        ...o,
        country_code: o.country_code.toUpperCase(),
        party_id: o.party_id.toUpperCase(),
      });

      let changedCatalogue = false;
      const tariffPages = pages('tariffs');
      if (tariffPages) {
        for await (const page of tariffPages) {
          const tariffs = page.items.flatMap((o) => {
            const tariff = parse('tariffs', o, parseOcpiTariff);
            return tariff ? [upper(tariff)] : [];
          });
          if (tariffs.length > 0) {
            counts.tariffs += (await ingestion.ingest({ tariffs }, { notify: false })).tariffs;
            changedCatalogue = true;
          }
          options.onProgress?.('tariffs', counts.tariffs, page.total);
        }
      }
      const locationPages = pages('locations');
      if (locationPages) {
        for await (const page of locationPages) {
          const locations = page.items.flatMap((o) => {
            const location = parse('locations', o, parseOcpiLocation);
            return location ? [upper(location)] : [];
          });
          if (locations.length > 0) {
            counts.locations += (await ingestion.ingest({ locations }, { notify: false })).locations;
            changedCatalogue = true;
          }
          options.onProgress?.('locations', counts.locations, page.total);
        }
      }
      if (changedCatalogue && since !== undefined) await ingestion.notify();
      if (changedCatalogue && since === undefined) {
        // A full pull is a bulk load: settled pages for the status updates that follow (see finishBulkLoad).
        const { vacuumError } = await ingestion.finishBulkLoad();
        if (vacuumError)
          deps.log?.('warn', 'vacuuming the station tables after a full pull failed (the pull stands)', { connection: connection.name, error: vacuumError });
      }

      const sessions = pages('sessions');
      if (sessions) {
        for await (const page of sessions) {
          for (const object of page.items) {
            const parsed = parseSession(object);
            if (!parsed.ok) {
              skip('sessions', object, parsed.errors.map((e) => `${e.path} ${e.message}`).join('; '));
              continue;
            }
            if (!owned(parsed.value)) continue;
            const session = upper(parsed.value);
            const written = await db.transaction(async (tx) => {
              if (!(await repo.upsertSession(tx, connection.id, session, clock.now()))) return false;
              await deps.events?.sessionChanged?.(tx, session, connection.id);
              return true;
            });
            if (written) counts.sessions++;
          }
          options.onProgress?.('sessions', counts.sessions, page.total);
        }
      }
      const cdrs = pages('cdrs');
      if (cdrs) {
        for await (const page of cdrs) {
          for (const object of page.items) {
            const parsed = parseCdr(object);
            if (!parsed.ok) {
              skip('cdrs', object, parsed.errors.map((e) => `${e.path} ${e.message}`).join('; '));
              continue;
            }
            if (!owned(parsed.value)) continue;
            const cdr = upper(parsed.value);
            const inserted = await db.transaction(async (tx) => {
              const fresh = await repo.insertCdr(
                tx,
                connection.id,
                { ...cdr, session_id: cdr.session_id, authorization_reference: cdr.authorization_reference, credit: cdr.credit },
                clock.now(),
              );
              if (fresh) await deps.events?.cdrReceived?.(tx, cdr, connection.id);
              return fresh;
            });
            if (inserted) counts.cdrs++;
          }
          options.onProgress?.('cdrs', counts.cdrs, page.total);
        }
      }
      await repo.markSynced(db, connection.id, started);
      deps.log?.('info', 'pulled from a CPO', { connection: connection.name, full: since === undefined, ...counts });
      return counts;
    },
  };
}

export type Sync = ReturnType<typeof createSync>;
