// SQL of the station catalogue. Ingestion (generator, file import, OCPI
// receiver) goes through upsertLocations/upsertTariffs; the in-memory catalogue
// reads everything back with the streaming loaders.
import { createHash } from 'node:crypto';
import type { OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Database, Queryable } from '../../platform/db.ts';

/** Channel on which every change of the catalogue is announced to all processes. */
export const CATALOGUE_CHANNEL = 'catalogue_changed';

export interface PartyRow {
  country_code: string;
  party_id: string;
  name: string;
  phone: string | null;
  website: string | null;
}

export interface PartnerRow {
  name: string;
  logo_url: string;
}

export async function upsertParties(db: Queryable, parties: PartyRow[], at: Date): Promise<void> {
  if (parties.length === 0) return;
  await db.query(
    `INSERT INTO cpo_parties (country_code, party_id, name, phone, website, updated_at)
     SELECT x.country_code, x.party_id, x.name, x.phone, x.website, $2
       FROM jsonb_to_recordset($1::jsonb) AS x(country_code text, party_id text, name text, phone text, website text)
     ON CONFLICT (country_code, party_id) DO UPDATE
       SET name = EXCLUDED.name, phone = coalesce(EXCLUDED.phone, cpo_parties.phone), website = coalesce(EXCLUDED.website, cpo_parties.website),
           updated_at = EXCLUDED.updated_at`,
    [JSON.stringify(parties), at],
  );
}

/**
 * Stores whole Locations (OCPI PUT semantics: the EVSE list replaces the stored
 * one). A stored object newer than the incoming one is kept.
 * Returns how many locations were written.
 */
export async function upsertLocations(db: Queryable, locations: OcpiLocation[]): Promise<number> {
  if (locations.length === 0) return 0;
  const rows = locations.map(({ evses: _evses, ...location }) => ({
    country_code: location.country_code,
    party_id: location.party_id,
    id: location.id,
    data: location,
    latitude: Number(location.coordinates.latitude),
    longitude: Number(location.coordinates.longitude),
    last_updated: location.last_updated,
  }));
  const { rows: written } = await db.query<{ country_code: string; party_id: string; id: string }>(
    `INSERT INTO ocpi_locations (country_code, party_id, id, data, latitude, longitude, last_updated)
     SELECT x.country_code, x.party_id, x.id, x.data, x.latitude, x.longitude, x.last_updated
       FROM jsonb_to_recordset($1::jsonb) AS x(country_code text, party_id text, id text, data jsonb, latitude float8, longitude float8, last_updated timestamptz)
     ON CONFLICT (country_code, party_id, id) DO UPDATE
       SET data = EXCLUDED.data, latitude = EXCLUDED.latitude, longitude = EXCLUDED.longitude, last_updated = EXCLUDED.last_updated
       WHERE ocpi_locations.last_updated <= EXCLUDED.last_updated
     RETURNING country_code, party_id, id`,
    [JSON.stringify(rows)],
  );
  if (written.length === 0) return 0;
  const keep = new Set(written.map((r) => `${r.country_code}\u0000${r.party_id}\u0000${r.id}`));
  const evses: {
    country_code: string;
    party_id: string;
    location_id: string;
    uid: string;
    evse_id: string | null;
    status: string;
    data: OcpiEvse;
    last_updated: string;
    position: number;
    connectors_key: string;
  }[] = [];
  for (const location of locations) {
    if (!keep.has(`${location.country_code}\u0000${location.party_id}\u0000${location.id}`)) continue;
    for (const [position, evse] of (location.evses ?? []).entries()) {
      evses.push({
        country_code: location.country_code,
        party_id: location.party_id,
        location_id: location.id,
        uid: evse.uid,
        evse_id: evse.evse_id ?? null,
        status: evse.status,
        data: evse,
        last_updated: evse.last_updated,
        position,
        connectors_key: connectorsKey(evse),
      });
    }
  }
  await db.query(
    `DELETE FROM ocpi_evses e USING jsonb_to_recordset($1::jsonb) AS x(country_code text, party_id text, id text)
      WHERE e.country_code = x.country_code AND e.party_id = x.party_id AND e.location_id = x.id`,
    [JSON.stringify(written)],
  );
  if (evses.length > 0) {
    await db.query(
      `INSERT INTO ocpi_evses (country_code, party_id, location_id, uid, evse_id, status, data, last_updated, position, connectors_key)
       SELECT x.country_code, x.party_id, x.location_id, x.uid, x.evse_id, x.status, x.data, x.last_updated, x.position, x.connectors_key
         FROM jsonb_to_recordset($1::jsonb)
           AS x(country_code text, party_id text, location_id text, uid text, evse_id text, status text, data jsonb,
                last_updated timestamptz, position integer, connectors_key text)`,
      [JSON.stringify(evses)],
    );
  }
  return written.length;
}

export interface LocationKey {
  country_code: string;
  party_id: string;
  id: string;
}

/**
 * A stored Location with its EVSEs in the CPO's order, as OCPI sends it. Its
 * last_updated is the newest of its own and its EVSEs' (an EVSE status change
 * moves the parent's last_updated, as mod_locations asks of a receiver).
 */
export async function findLocation(db: Queryable, key: LocationKey, options: { forUpdate?: boolean } = {}): Promise<OcpiLocation | undefined> {
  const { rows } = await db.query<{ data: OcpiLocation; last_updated: Date }>(
    `SELECT data, last_updated FROM ocpi_locations WHERE country_code = $1 AND party_id = $2 AND id = $3${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [key.country_code, key.party_id, key.id],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { rows: evses } = await db.query<{ data: OcpiEvse; last_updated: Date }>(
    'SELECT data, last_updated FROM ocpi_evses WHERE country_code = $1 AND party_id = $2 AND location_id = $3 ORDER BY position, uid',
    [key.country_code, key.party_id, key.id],
  );
  let newest = row.last_updated;
  for (const evse of evses) if (evse.last_updated > newest) newest = evse.last_updated;
  // The row's last_updated moves with its EVSEs' statuses; the stored object keeps the CPO's own text when it is still the newest.
  const location: OcpiLocation = {
    ...row.data,
    last_updated: newest.getTime() === Date.parse(row.data.last_updated) ? row.data.last_updated : newest.toISOString(),
  };
  if (evses.length > 0 || row.data.evses !== undefined) location.evses = evses.map((e) => e.data);
  return location;
}

/**
 * The connector fields stations are priced from (see CatalogueEvseRow.connectors);
 * stored with each EVSE so loading the catalogue reads them as one short text.
 */
export function connectorsKey(evse: OcpiEvse): string {
  return JSON.stringify(
    evse.connectors.map((c) => [c.standard, c.power_type, c.max_voltage, c.max_amperage, c.max_electric_power ?? null, c.tariff_ids ?? null]),
  );
}

export async function upsertTariffs(db: Queryable, tariffs: OcpiTariff[]): Promise<number> {
  if (tariffs.length === 0) return 0;
  const { rowCount } = await db.query(
    `INSERT INTO ocpi_tariffs (country_code, party_id, id, data, last_updated)
     SELECT x.country_code, x.party_id, x.id, x.data, x.last_updated
       FROM jsonb_to_recordset($1::jsonb) AS x(country_code text, party_id text, id text, data jsonb, last_updated timestamptz)
     ON CONFLICT (country_code, party_id, id) DO UPDATE SET data = EXCLUDED.data, last_updated = EXCLUDED.last_updated
       WHERE ocpi_tariffs.last_updated <= EXCLUDED.last_updated`,
    [JSON.stringify(tariffs.map((t) => ({ country_code: t.country_code, party_id: t.party_id, id: t.id, data: t, last_updated: t.last_updated })))],
  );
  return rowCount ?? 0;
}

export interface EvseStatusChange {
  country_code: string;
  party_id: string;
  location_id: string;
  uid: string;
  status: string;
  last_updated: string;
}

export type CatalogueChange =
  | { kind: 'reload' }
  | ({ kind: 'evse_status' } & EvseStatusChange)
  /** Several stored status changes in one notification (as many as fit in a payload). */
  | { kind: 'evse_statuses'; changes: EvseStatusChange[] };

/**
 * Status changes are packed into one notification until their JSON reaches this many bytes; one more change (at
 * most ~600 bytes: OCPI ids are 36 characters, even escaped) and the wrapper still stay below PostgreSQL's limit
 * on a NOTIFY payload (8000 bytes in a default build).
 */
const NOTIFY_PACK_BYTES = 7_000;

/**
 * Several EVSE status changes, stored and announced together; answers, per change in order, whether it was stored
 * (false: unknown EVSE, or older than the stored status). When one EVSE appears twice, only its newest change can
 * win. One call of `apply_evse_statuses` (migration 0014), one round trip: it locks the parent locations, updates
 * the EVSEs and their locations' last_updated, and announces the stored changes packed into as few notifications as
 * fit (`evse_statuses`), so a CPO's burst of status pushes costs every listening process one message per few dozen
 * changes. Atomic on its own; inside a transaction, the announcements are sent at its commit (the lock-then-update
 * order protects against concurrent location rewrites under READ COMMITTED, the isolation level used everywhere).
 */
export async function updateEvseStatuses(db: Queryable, changes: EvseStatusChange[]): Promise<boolean[]> {
  if (changes.length === 0) return [];
  // One row per EVSE: the newest change (the first of equals); the others are answered false.
  const newest = new Map<string, number>();
  changes.forEach((c, i) => {
    const key = `${c.country_code}\u0000${c.party_id}\u0000${c.location_id}\u0000${c.uid}`;
    const seen = newest.get(key);
    if (seen === undefined || Date.parse(c.last_updated) > Date.parse((changes[seen] as EvseStatusChange).last_updated)) newest.set(key, i);
  });
  // The stamp twice: as a timestamp to compare, and as the CPO wrote it for the stored object.
  const rows = JSON.stringify(
    [...newest.values()].map((i) => {
      const { country_code, party_id, location_id, uid, status, last_updated } = changes[i] as EvseStatusChange;
      return { i, country_code, party_id, location_id, uid, status, last_updated, stamp: last_updated };
    }),
  );
  const { rows: written } = await db.query<{ i: number }>('SELECT i FROM apply_evse_statuses($1::jsonb, $2, $3) AS i', [
    rows,
    CATALOGUE_CHANNEL,
    NOTIFY_PACK_BYTES,
  ]);
  const stored = new Set(written.map((r) => r.i));
  return changes.map((_, i) => stored.has(i));
}

/** The API id of the station projected from a location: as the generated station_id column, md5(country_code*party_id*id) as a UUID. */
export function stationIdOf(countryCode: string, partyId: string, locationId: string): string {
  const hex = createHash('md5').update(`${countryCode}*${partyId}*${locationId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** VACUUM (ANALYZE) of the catalogue tables (on the pool: VACUUM cannot run inside a transaction). */
export async function vacuumCatalogue(db: Database): Promise<void> {
  await db.query('VACUUM (ANALYZE) cpo_parties, ocpi_tariffs, ocpi_locations, ocpi_evses');
}

export async function notifyCatalogueChanged(db: Queryable, change: CatalogueChange): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [CATALOGUE_CHANNEL, JSON.stringify(change)]);
}

export async function countLocations(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*) AS n FROM ocpi_locations');
  return rows[0]?.n ?? 0;
}

export async function listParties(db: Queryable): Promise<PartyRow[]> {
  const { rows } = await db.query<PartyRow>('SELECT country_code, party_id, name, phone, website FROM cpo_parties');
  return rows;
}

export async function listTariffs(db: Queryable): Promise<OcpiTariff[]> {
  const { rows } = await db.query<{ data: OcpiTariff }>('SELECT data FROM ocpi_tariffs');
  return rows.map((r) => r.data);
}

/** What the in-memory catalogue keeps of a stored Location: the fields stations are projected from. */
export interface CatalogueLocationRow {
  station_id: string;
  country_code: string;
  party_id: string;
  id: string;
  /** Coordinates as the CPO wrote them (OCPI decimal strings). */
  latitude_text: string;
  longitude_text: string;
  latitude: number;
  longitude: number;
  name: string | null;
  address: string;
  city: string | null;
  postal_code: string | null;
  /** ISO 3166-1 alpha-3. */
  country: string;
  time_zone: string;
  /** last_updated in epoch milliseconds. */
  updated_ms: number;
  operator_name: string | null;
  /** OCPI opening_times and facilities as JSON text (null when absent). */
  opening_times: string | null;
  facilities: string | null;
}

export interface CatalogueEvseRow {
  uid: string;
  evse_id: string | null;
  status: string;
  updated_ms: number;
  /**
   * The connector fields stations are priced from, as JSON text of an array of
   * [standard, power_type, max_voltage, max_amperage, max_electric_power, tariff_ids]
   * (identical connectors of one party give identical text, so it can be interned).
   */
  connectors: string;
}

export interface CatalogueBatch {
  locations: CatalogueLocationRow[];
  /** EVSEs of each location, in the CPO's order (same order as `locations`). */
  evses: CatalogueEvseRow[][];
}

/** Every location, reduced to what stations are projected from, in catalogue order. */
const CATALOGUE_LOCATIONS_SQL = `SELECT l.station_id, l.country_code, l.party_id, l.id,
            l.data->'coordinates'->>'latitude' AS latitude_text, l.data->'coordinates'->>'longitude' AS longitude_text,
            l.latitude, l.longitude, l.data->>'name' AS name, l.data->>'address' AS address, l.data->>'city' AS city,
            l.data->>'postal_code' AS postal_code, l.data->>'country' AS country, l.data->>'time_zone' AS time_zone,
            (extract(epoch FROM l.last_updated) * 1000)::float8 AS updated_ms, l.data->'operator'->>'name' AS operator_name,
            (l.data->'opening_times')::text AS opening_times, (l.data->'facilities')::text AS facilities
       FROM ocpi_locations l
      ORDER BY l.country_code, l.party_id, l.id`;

/** Every EVSE, in catalogue order of its location, then in the CPO's order. */
const CATALOGUE_EVSES_SQL = `SELECT e.country_code, e.party_id, e.location_id, e.uid, e.evse_id, e.status,
            (extract(epoch FROM e.last_updated) * 1000)::float8 AS updated_ms, e.connectors_key AS connectors
       FROM ocpi_evses e
      ORDER BY e.country_code, e.party_id, e.location_id, e.position, e.uid`;

type EvseRowOfLocation = CatalogueEvseRow & { country_code: string; party_id: string; location_id: string };

/**
 * Every location with its EVSEs, reduced to what stations are projected from,
 * in catalogue order (country_code, party_id, id), in batches, so a large
 * catalogue is never one result set in memory. One read-only transaction
 * (one snapshot of both tables) with a cursor over each table, both in the
 * database's order, paired in one walk; the next batch is already being read
 * while the caller works on the current one.
 *
 * (Each batch used to read its EVSEs with a key-range query; PostgreSQL
 * answered each with a scan of the whole EVSE table, most of a reload at 3M EVSEs.)
 */
export async function* streamCatalogue(db: Database, batchSize = 20_000): AsyncGenerator<CatalogueBatch> {
  const { client, release } = await db.checkOut();
  /** A fetch started ahead of its use: its failure surfaces where it is awaited, never as an unhandled rejection. */
  const ahead = <T>(promise: Promise<T>): Promise<T> => {
    promise.catch(() => {});
    return promise;
  };
  // The fetches in flight (only these: a batch read is not kept once given out).
  let nextLocations: Promise<unknown> | undefined;
  let nextEvses: Promise<unknown> | undefined;
  let open = false;
  let failed = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    open = true;
    await client.query(`DECLARE catalogue_locations NO SCROLL CURSOR FOR ${CATALOGUE_LOCATIONS_SQL}`);
    await client.query(`DECLARE catalogue_evses NO SCROLL CURSOR FOR ${CATALOGUE_EVSES_SQL}`);
    const fetchLocations = () => ahead(client.query<CatalogueLocationRow>(`FETCH ${batchSize} FROM catalogue_locations`));
    const fetchEvses = () => ahead(client.query<EvseRowOfLocation>(`FETCH ${4 * batchSize} FROM catalogue_evses`));
    let locationsAhead = fetchLocations();
    let evsesAhead = fetchEvses();
    nextLocations = locationsAhead;
    nextEvses = evsesAhead;
    let evseRows: EvseRowOfLocation[] = [];
    let k = 0;
    let evsesDone = false;
    for (;;) {
      const { rows: locations } = await locationsAhead;
      if (locations.length === 0) break;
      locationsAhead = fetchLocations();
      nextLocations = locationsAhead;
      // Both cursors use the database's order, and every EVSE has its location (foreign key):
      // the EVSEs of a location are the next ones while their key is the location's.
      const evses: CatalogueEvseRow[][] = [];
      for (const location of locations) {
        const own: CatalogueEvseRow[] = [];
        for (;;) {
          if (k === evseRows.length) {
            if (evsesDone) break;
            evseRows = (await evsesAhead).rows;
            k = 0;
            if (evseRows.length === 0) {
              evsesDone = true;
              break;
            }
            evsesAhead = fetchEvses();
            nextEvses = evsesAhead;
          }
          const row = evseRows[k] as EvseRowOfLocation;
          if (row.country_code !== location.country_code || row.party_id !== location.party_id || row.location_id !== location.id) break;
          own.push(row);
          k++;
        }
        evses.push(own);
      }
      yield { locations, evses };
    }
    if (k < evseRows.length || (!evsesDone && (await evsesAhead).rows.length > 0)) throw new Error('station catalogue: EVSEs without their location');
    open = false;
    await client.query('COMMIT');
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await Promise.allSettled([nextLocations, nextEvses]);
    if (open && !failed) await client.query('ROLLBACK').catch(() => {});
    // A connection whose statement failed may be in any state: it is closed, not reused.
    release(failed);
  }
}

export async function listPartners(db: Queryable): Promise<PartnerRow[]> {
  const { rows } = await db.query<PartnerRow>('SELECT name, logo_url FROM partners ORDER BY name');
  return rows;
}

export async function upsertPartner(db: Queryable, partner: PartnerRow, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO partners (name, logo_url, created_at) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET logo_url = EXCLUDED.logo_url`,
    [partner.name, partner.logo_url, at],
  );
}

export async function deletePartner(db: Queryable, name: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM partners WHERE name = $1', [name]);
  return rowCount === 1;
}

export async function findTariff(db: Queryable, key: LocationKey): Promise<OcpiTariff | undefined> {
  const { rows } = await db.query<{ data: OcpiTariff }>('SELECT data FROM ocpi_tariffs WHERE country_code = $1 AND party_id = $2 AND id = $3', [
    key.country_code,
    key.party_id,
    key.id,
  ]);
  return rows[0]?.data;
}

export async function deleteTariff(db: Queryable, key: LocationKey): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM ocpi_tariffs WHERE country_code = $1 AND party_id = $2 AND id = $3', [
    key.country_code,
    key.party_id,
    key.id,
  ]);
  return rowCount === 1;
}
