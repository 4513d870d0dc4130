// Pulling from a CPO's Sender interfaces: the initial sync after connecting
// and the periodic reconciliation (only what changed since the last pull).
// Every object goes through the tolerant reader (ocpi-protocol/reader/):
// what can be used is normalized and kept, what cannot is left out alone,
// the rest of its page kept (transport_and_format: "process the correct
// objects"), and both are recorded per connection (quality.ts).
// Each module is pulled on its own: one that fails (a CPO refusing it, a
// timeout) is reported and keeps its sync position, the others go on and
// move theirs. Sessions and CDRs are always asked for with date_from
// (mod_sessions makes it required): from the module's sync position, or the
// configured horizon on a full pull.
import { ocpiPages } from '../../ocpi-protocol/client.ts';
import type { OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import { readLocation } from '../../ocpi-protocol/reader/location.ts';
import type { Finding, Reading } from '../../ocpi-protocol/reader/rules.ts';
import { readCdr, readSession } from '../../ocpi-protocol/reader/session-cdr.ts';
import { readTariff } from '../../ocpi-protocol/reader/tariff.ts';
import { OCPI_2_1_1, pulledFrom211 } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import { OCPI_2_2, pulledFrom22 } from '../../ocpi-protocol/v2_2/adapter.ts';
import { type ClientInfo, parseClientInfo } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import { type Database, isDatabaseUnavailable } from '../../platform/db.ts';
import type { Ingestion } from '../stations/ingest.ts';
import { linkCdrsToSessions211 } from './cdr-session-v2_1_1.ts';
import type { Connections } from './connections.ts';
import { endpointOf } from './connections.ts';
import { isHub } from './connections-context.ts';
import { storeClientInfo } from './hub-clients.ts';
import { type ObjectFindings, objectIdOf, recordFindings } from './quality.ts';
import type { OcpiEvents } from './receivers.ts';
import * as repo from './repository.ts';

export interface SyncCounts {
  /** ClientInfo of the parties behind a hub (a hub's connection only). */
  hubclientinfo?: number;
  tariffs: number;
  locations: number;
  sessions: number;
  cdrs: number;
  skipped: number;
  /** Modules whose pull failed, and why; the others were pulled all the same. */
  failed: { module: PulledModule; reason: string }[];
}

export type SyncProgress = (module: string, done: number, total: number | undefined) => void;

/**
 * The Sender interfaces we pull, in this order: a hub's ClientInfo first (the parties whose objects it carries), and
 * tariffs before the locations that name them.
 */
export const PULLED_MODULES = ['hubclientinfo', 'tariffs', 'locations', 'sessions', 'cdrs'] as const;
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
  // A GET on a Sender interface goes to the connection's party (transport_and_format: routing headers on functional
  // modules): a platform's first CPO party (a platform answers with the objects of all its parties, each naming its
  // own), a hub itself ("GET All via Hubs": the hub combines its parties' objects).
  const headers = deps.connections.routingTo(connection);
  // The CPO parties whose objects are taken: the connection's, read before the first module and again after a hub's
  // ClientInfo (pulled first) is stored, which may add or drop some.
  let parties = new Set<string>();
  const counts: SyncCounts = { tariffs: 0, locations: 0, sessions: 0, cdrs: 0, skipped: 0, failed: [] };
  // A 2.1.1 CPO's objects go through the 2.1.1 adapter first: of its one party (2.1.1 objects name none), their tokens ours.
  const cpo = connection.roles.find((r) => r.role === 'CPO');
  const party = { country_code: cpo?.country_code.toUpperCase() ?? '', party_id: cpo?.party_id.toUpperCase() ?? '' };
  const us = deps.connections.ourParty();
  return {
    connection,
    counts,
    onProgress,
    /** Reads the CPO parties the connection speaks for now. */
    async loadParties(): Promise<void> {
      const held = await repo.partiesOfConnection(deps.db, connection.id);
      parties = new Set(held.filter((p) => p.role === 'CPO').map((p) => `${p.country_code}*${p.party_id}`));
    },
    /**
     * A page's objects as 2.2.1 has them, for the reader: a 2.2.1 peer's as they came; a 2.1.1 peer's converted,
     * those that cannot be converted refused ('invalid'); a 2.2 peer's Sessions and CDRs with our party on their token.
     */
    async fromPeer(module: Exclude<PulledModule, 'hubclientinfo'>, items: unknown[]): Promise<{ items: unknown[]; refused: ObjectFindings[] }> {
      // 2.2: Sessions' and CDRs' tokens carry no party (ours, filled in); the rest is 2.2.1's shape (v2_2/adapter.ts).
      if (connection.version === OCPI_2_2) return { items: items.map((item) => pulledFrom22(module, item, us)), refused: [] };
      if (connection.version !== OCPI_2_1_1) return { items, refused: [] };
      const converted: unknown[] = [];
      const refused: ObjectFindings[] = [];
      for (const item of items) {
        const result = pulledFrom211(module, item, party, us);
        if (!result.ok) {
          const first = result.errors[0];
          refused.push({
            objectId: objectIdOf(item),
            findings: [{ rule: 'invalid', path: first?.path ?? '', detail: `OCPI 2.1.1: ${first?.message ?? ''}`.slice(0, 120) }],
          });
        } else converted.push(result.value);
      }
      return { items: converted, refused };
    },
    owned: (o: { country_code?: unknown; party_id?: unknown }) =>
      typeof o.country_code === 'string' && typeof o.party_id === 'string' && parties.has(`${o.country_code.toUpperCase()}*${o.party_id.toUpperCase()}`),
    /**
     * The findings of a page are recorded (cpo quality); objects left out are counted and summed up in one log line
     * per page (never the objects themselves: a CPO sending thousands of bad objects makes no more than a line a page).
     */
    async report(module: Exclude<PulledModule, 'hubclientinfo'>, findings: ObjectFindings[], leftOut: ObjectFindings[]): Promise<void> {
      await recordFindings(deps, connection.id, module, findings);
      if (leftOut.length === 0) return;
      counts.skipped += leftOut.length;
      const first = leftOut[0] as ObjectFindings;
      deps.log?.('warn', 'left out objects from a CPO that cannot be used (charging-access cpo quality shows why)', {
        connection: connection.name,
        module,
        count: leftOut.length,
        first: first.objectId.slice(0, 60),
        rule: first.findings.at(-1)?.rule,
      });
    },
    pages(module: PulledModule, since: Date | undefined) {
      const url = endpointOf(connection, module, 'SENDER');
      // hubclientinfo is a configuration module: not routed, no routing headers.
      const routing = module === 'hubclientinfo' ? {} : { headers };
      return url
        ? ocpiPages<unknown>(auth, url, { module, ...routing, limit: deps.pageLimit, timeoutMs: deps.timeoutMs, ...(since ? { date_from: since } : {}) })
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

/**
 * The objects of a page read by the tolerant reader: those taken (of the
 * connection's parties, each once: a repeated one, the latest), and the
 * findings of every object, the refused ones apart.
 */
export function readPage<T extends { country_code: string; party_id: string; id: string; last_updated: string }>(
  items: readonly unknown[],
  read: (raw: unknown) => Reading<T>,
  owned: (o: T) => boolean,
): { taken: T[]; findings: ObjectFindings[]; leftOut: ObjectFindings[] } {
  const byKey = new Map<string, T>();
  const findings: ObjectFindings[] = [];
  const leftOut: ObjectFindings[] = [];
  for (const raw of items) {
    const reading = read(raw);
    const objectId = objectIdOf(reading.ok ? reading.value : raw);
    const found: Finding[] = [...reading.findings];
    if (reading.ok && !owned(reading.value)) found.push({ rule: 'foreign-party', path: '/party_id', detail: 'not a party of this connection' });
    if (found.length > 0) findings.push({ objectId, findings: found });
    if (!reading.ok || !owned(reading.value)) {
      leftOut.push({ objectId, findings: found });
      continue;
    }
    const value = upper(reading.value);
    const key = `${value.country_code}*${value.party_id}*${value.id}`;
    const seen = byKey.get(key);
    if (seen) findings.push({ objectId, findings: [{ rule: 'duplicate-in-page', path: '/id' }] });
    if (!seen || Date.parse(value.last_updated) >= Date.parse(seen.last_updated)) byKey.set(key, value);
  }
  return { taken: [...byKey.values()], findings, leftOut };
}

/**
 * Stores a page of the catalogue in one transaction; when the database refuses it for one object (not because it is
 * unavailable), each object is stored alone, so the one refused is left out and the rest of the page is kept.
 */
async function storeCatalogue(deps: SyncDeps, module: 'tariffs' | 'locations', objects: (OcpiTariff | OcpiLocation)[], leftOut: ObjectFindings[]) {
  const batch = (some: typeof objects) => (module === 'tariffs' ? { tariffs: some } : { locations: some });
  const stored = (r: { tariffs: number; locations: number }) => (module === 'tariffs' ? r.tariffs : r.locations);
  try {
    return stored(await deps.ingestion.ingest(batch(objects), { notify: false }));
  } catch (error) {
    if (isDatabaseUnavailable(error) || objects.length === 1) throw error;
  }
  let count = 0;
  for (const object of objects) {
    try {
      count += stored(await deps.ingestion.ingest(batch([object]), { notify: false }));
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      leftOut.push({ objectId: objectIdOf(object), findings: [{ rule: 'store-refused', path: '', detail: (error as Error).message.slice(0, 120) }] });
    }
  }
  return count;
}

/** Tariffs or Locations into the station catalogue; true when something was stored. */
async function pullCatalogue(deps: SyncDeps, run: PullRun, module: 'tariffs' | 'locations', since: Date | undefined): Promise<boolean> {
  const pages = run.pages(module, since);
  if (!pages) return false;
  // Pages are parsed for this pull alone: read in place, without a copy of every object.
  const read = (raw: unknown): Reading<OcpiTariff | OcpiLocation> =>
    module === 'tariffs' ? readTariff(raw, { inPlace: true }) : readLocation(raw, { inPlace: true });
  let changed = false;
  for await (const page of pages) {
    const { items, refused } = await run.fromPeer(module, page.items);
    const { taken, findings, leftOut } = readPage(items, read, run.owned);
    const refusedByStore: ObjectFindings[] = [...refused];
    if (taken.length > 0) {
      run.counts[module] += await storeCatalogue(deps, module, taken, refusedByStore);
      changed = true;
    }
    await run.report(module, [...findings, ...refusedByStore], [...leftOut, ...refusedByStore]);
    run.onProgress?.(module, run.counts[module], page.total);
  }
  return changed;
}

/**
 * A hub's ClientInfo list (mod_hub_client_info, its Sender interface), always in full: each party is stored with its
 * status (hub-clients.ts), and "any older information that is not specified in the response is considered as no longer
 * valid": parties the hub no longer lists are dropped. An invalid ClientInfo is left out (and recorded) alone.
 */
async function pullHubClients(deps: SyncDeps, run: PullRun): Promise<void> {
  const pages = run.pages('hubclientinfo', undefined);
  if (!pages || !isHub(run.connection)) return;
  const listed: ClientInfo[] = [];
  for await (const page of pages) {
    for (const item of page.items) {
      const parsed = parseClientInfo(item);
      if (parsed.ok) listed.push(parsed.value);
      else {
        run.counts.skipped++;
        const error = parsed.errors[0];
        deps.log?.('warn', 'left out a ClientInfo from a hub that is not valid OCPI', {
          connection: run.connection.name,
          object: objectIdOf(item).slice(0, 60),
          reason: `${error?.path || '/'} ${error?.message ?? ''}`,
        });
      }
    }
  }
  await deps.db.transaction(async (tx) => {
    for (const info of listed) await storeClientInfo(deps, tx, run.connection, info);
    await repo.dropHubClientsExcept(tx, run.connection.id, listed);
  });
  run.counts.hubclientinfo = listed.length;
  await run.loadParties();
}

async function pullSessions(deps: SyncDeps, run: PullRun, since: Date | undefined): Promise<void> {
  const { db, clock } = deps;
  const pages = run.pages('sessions', since);
  if (!pages) return;
  for await (const page of pages) {
    const { items, refused } = await run.fromPeer('sessions', page.items);
    const { taken, findings, leftOut } = readPage(items, readSession, run.owned);
    for (const session of taken) {
      const written = await db.transaction(async (tx) => {
        if (!(await repo.upsertSession(tx, run.connection.id, session, clock.now()))) return false;
        await deps.events?.sessionChanged?.(tx, session, run.connection.id);
        return true;
      });
      if (written) run.counts.sessions++;
    }
    await run.report('sessions', [...findings, ...refused], [...leftOut, ...refused]);
    run.onProgress?.('sessions', run.counts.sessions, page.total);
  }
}

async function pullCdrs(deps: SyncDeps, run: PullRun, since: Date | undefined): Promise<void> {
  const { db, clock } = deps;
  const pages = run.pages('cdrs', since);
  if (!pages) return;
  for await (const page of pages) {
    const { items, refused } = await run.fromPeer('cdrs', page.items);
    const read = readPage(items, readCdr, run.owned);
    const { findings, leftOut } = read;
    // A 2.1.1 CDR names no session: the CDRs taken (not those the reader refused) are linked to theirs, in one query a page.
    const taken = run.connection.version === OCPI_2_1_1 ? await linkCdrsToSessions211(db, run.connection.id, read.taken) : read.taken;
    for (const cdr of taken) {
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
    await run.report('cdrs', [...findings, ...refused], [...leftOut, ...refused]);
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
      await run.loadParties();
      let changedCatalogue = false;
      let bulk = false;
      for (const module of PULLED_MODULES) {
        const moduleStarted = clock.now();
        const since = pullDateFrom(module, positions.get(module), { full, now: moduleStarted, horizonDays: deps.horizonDays });
        try {
          if (module === 'hubclientinfo') await pullHubClients(deps, run);
          else if (module === 'tariffs' || module === 'locations') {
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
