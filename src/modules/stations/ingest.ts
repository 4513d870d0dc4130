// The one way data enters the station catalogue: the dataset generator, file
// import and (next) the OCPI receiver all validate and store through here, and
// every change is announced so each process's in-memory catalogue follows.
import { Ajv, type ValidateFunction } from 'ajv';
import { EVSE_STATUSES, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import { isDateTime } from '../../ocpi-protocol/types.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import * as repo from './repository.ts';

export class InvalidOcpiObject extends Error {
  readonly errors: { path: string; message: string }[];
  constructor(kind: string, id: string, errors: { path: string; message: string }[]) {
    super(`invalid OCPI ${kind} ${id}: ${errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`);
    this.name = 'InvalidOcpiObject';
    this.errors = errors;
  }
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validateLocation = ajv.compile(OcpiLocation) as ValidateFunction<OcpiLocation>;
const validateTariff = ajv.compile(OcpiTariff) as ValidateFunction<OcpiTariff>;

function check<T>(validate: ValidateFunction<T>, kind: string, value: unknown): T {
  if (validate(value)) return value;
  const id = (value as { id?: unknown })?.id;
  throw new InvalidOcpiObject(
    kind,
    typeof id === 'string' ? id : '?',
    (validate.errors ?? []).map((e) => ({ path: e.instancePath, message: e.message ?? 'is invalid' })),
  );
}

export const parseOcpiLocation = (value: unknown): OcpiLocation => check(validateLocation, 'Location', value);
export const parseOcpiTariff = (value: unknown): OcpiTariff => check(validateTariff, 'Tariff', value);

export interface IngestBatch {
  parties?: repo.PartyRow[];
  tariffs?: unknown[];
  locations?: unknown[];
}

/**
 * Under a stream of EVSE status changes, at most one status write starts per this many milliseconds (unless a full
 * batch of 500 is waiting), with every change that arrived meanwhile. At 1,000 changes/s this is ~50 writes of ~20
 * changes instead of ~300 of ~3: PostgreSQL's CPU for the stream 0.59 -> 0.22 cores, the writer's 0.21 -> 0.12
 * (0.15 / 0.09 with the one-call writes of migration 0014; bench/README.md), and the listeners get one notification
 * per write. A change waits at most this long more before it is durable; a lone change is written at once.
 */
export const STATUS_COMMIT_SPACING_MS = 20;

export function createIngestion(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;
  const statusBatches = groupCommit<repo.EvseStatusChange, boolean>((changes) => repo.updateEvseStatuses(db, changes), {
    spacingMs: STATUS_COMMIT_SPACING_MS,
  });
  return {
    /** Validates every object first (nothing is stored if one is invalid), then stores all in one transaction. */
    async ingest(batch: IngestBatch, options: { notify?: boolean } = {}): Promise<{ locations: number; tariffs: number }> {
      const tariffs = (batch.tariffs ?? []).map(parseOcpiTariff);
      const locations = (batch.locations ?? []).map(parseOcpiLocation);
      const counts = await db.transaction(async (tx) => {
        await repo.upsertParties(tx, batch.parties ?? [], clock.now());
        const t = await repo.upsertTariffs(tx, tariffs);
        const l = await repo.upsertLocations(tx, locations);
        if (options.notify ?? true) await repo.notifyCatalogueChanged(tx, { kind: 'reload' });
        return { locations: l, tariffs: t };
      });
      return counts;
    },
    /**
     * One EVSE's status (OCPI PATCH of an EVSE, or a status push): stored, then
     * announced so every process updates its catalogue in place, without a rebuild.
     * Unknown EVSEs and statuses older than the stored one change nothing (false).
     * Changes arriving together are committed together (group commit: one
     * transaction, one commit-time notification lock), and each caller's
     * promise settles only once its change is durable.
     */
    updateEvseStatus(change: repo.EvseStatusChange): Promise<boolean> {
      if (!(EVSE_STATUSES as readonly string[]).includes(change.status)) {
        return Promise.reject(new InvalidOcpiObject('EVSE', change.uid, [{ path: '/status', message: `must be one of ${EVSE_STATUSES.join(', ')}` }]));
      }
      if (!isDateTime(change.last_updated)) {
        return Promise.reject(new InvalidOcpiObject('EVSE', change.uid, [{ path: '/last_updated', message: 'must be a date-time' }]));
      }
      return statusBatches.add(change);
    },
    /**
     * Read-modify-write of one stored Location (an OCPI PUT or PATCH of a
     * Location, EVSE or Connector): the row is locked, `change` gets the stored
     * object (undefined when unknown) and returns the new one or undefined to
     * leave it; the result is validated whole and stored. Returns the stored
     * object, or undefined when nothing was written.
     */
    async changeLocation(
      key: repo.LocationKey,
      change: (stored: OcpiLocation | undefined) => unknown,
    ): Promise<{ location: OcpiLocation; written: boolean } | undefined> {
      return db.transaction(async (tx) => {
        const stored = await repo.findLocation(tx, key, { forUpdate: true });
        const next = change(stored);
        if (next === undefined) return undefined;
        const location = parseOcpiLocation(next);
        const written = (await repo.upsertLocations(tx, [location])) === 1;
        if (written) await repo.notifyCatalogueChanged(tx, { kind: 'reload' });
        return { location, written };
      });
    },
    findLocation: (key: repo.LocationKey) => repo.findLocation(db, key),
    async putTariff(tariff: unknown): Promise<boolean> {
      const parsed = parseOcpiTariff(tariff);
      return db.transaction(async (tx) => {
        const written = (await repo.upsertTariffs(tx, [parsed])) === 1;
        if (written) await repo.notifyCatalogueChanged(tx, { kind: 'reload' });
        return written;
      });
    },
    async deleteTariff(key: repo.LocationKey): Promise<boolean> {
      return db.transaction(async (tx) => {
        const deleted = await repo.deleteTariff(tx, key);
        if (deleted) await repo.notifyCatalogueChanged(tx, { kind: 'reload' });
        return deleted;
      });
    },
    findTariff: (key: repo.LocationKey) => repo.findTariff(db, key),
    /** Announces a change made by a series of ingest({ notify: false }) calls. */
    notify: () => repo.notifyCatalogueChanged(db, { kind: 'reload' }),
    /**
     * Ends a bulk load (a generated catalogue, a file import): the catalogue tables are vacuumed and analysed, then
     * the change is announced. Vacuuming once here sets the rows' hint bits and the visibility map that the first
     * status update of every page would otherwise set (with data checksums, a full page image in the WAL each), and
     * gives the planner statistics; the listeners' rebuild then reads settled pages.
     */
    async finishBulkLoad(): Promise<{ vacuumError?: string }> {
      // Vacuuming only makes later work cheaper: when it fails (a statement_timeout of the server, say), the load
      // stands and is announced all the same, and the caller reports why.
      const vacuumError = await repo.vacuumCatalogue(db).then(
        () => undefined,
        (error: Error) => error.message,
      );
      await repo.notifyCatalogueChanged(db, { kind: 'reload' });
      return vacuumError === undefined ? {} : { vacuumError };
    },
  };
}

export type Ingestion = ReturnType<typeof createIngestion>;

/**
 * Group commit: items added while a batch is being written wait and are
 * written together as the next batch (at most `max` per batch). `write`
 * answers one result per item, in order; if it throws, every item of that
 * batch fails with the error.
 *
 * `spacingMs` bounds how often a batch starts: under a steady stream of items,
 * one write per `spacingMs` with everything that arrived meanwhile (a full
 * batch of `max` items does not wait), instead of
 * one write as soon as the previous one ends (a write that takes 3 ms then
 * carries 3 items at 1,000 items/s, and the per-write costs dominate). An item
 * arriving after a quiet spell is written at once.
 */
export function groupCommit<T, R>(write: (items: T[]) => Promise<R[]>, options: { max?: number; spacingMs?: number } = {}) {
  const { max = 500, spacingMs = 0 } = options;
  let queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  let running = false;
  let lastStarted = Number.NEGATIVE_INFINITY;
  const drain = async () => {
    running = true;
    while (queue.length > 0) {
      const wait = lastStarted + spacingMs - performance.now();
      if (wait > 0 && queue.length < max) await new Promise((resolve) => setTimeout(resolve, wait));
      lastStarted = performance.now();
      const batch = queue.slice(0, max);
      queue = queue.slice(batch.length);
      try {
        const results = await write(batch.map((b) => b.item));
        batch.forEach((b, i) => {
          b.resolve(results[i] as R);
        });
      } catch (error) {
        for (const b of batch) b.reject(error);
      }
    }
    running = false;
  };
  return {
    add(item: T): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (!running) void drain();
      });
    },
  };
}
