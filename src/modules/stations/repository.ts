// SQL of the station catalogue. Ingestion (generator, file import, OCPI
// receiver) goes through upsertLocations/upsertTariffs; the in-memory catalogue
// reads everything back with the streaming loaders.
import type { Queryable } from '../../platform/db.ts';
import type { OcpiEvse, OcpiLocation, OcpiTariff } from './ocpi-schemas.ts';

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
       SET name = EXCLUDED.name, phone = EXCLUDED.phone, website = EXCLUDED.website, updated_at = EXCLUDED.updated_at`,
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
  }[] = [];
  for (const location of locations) {
    if (!keep.has(`${location.country_code}\u0000${location.party_id}\u0000${location.id}`)) continue;
    for (const evse of location.evses ?? []) {
      evses.push({
        country_code: location.country_code,
        party_id: location.party_id,
        location_id: location.id,
        uid: evse.uid,
        evse_id: evse.evse_id ?? null,
        status: evse.status,
        data: evse,
        last_updated: evse.last_updated,
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
      `INSERT INTO ocpi_evses (country_code, party_id, location_id, uid, evse_id, status, data, last_updated)
       SELECT x.country_code, x.party_id, x.location_id, x.uid, x.evse_id, x.status, x.data, x.last_updated
         FROM jsonb_to_recordset($1::jsonb) AS x(country_code text, party_id text, location_id text, uid text, evse_id text, status text, data jsonb, last_updated timestamptz)`,
      [JSON.stringify(evses)],
    );
  }
  return written.length;
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

export type CatalogueChange = { kind: 'reload' } | ({ kind: 'evse_status' } & EvseStatusChange);

/** Stores an EVSE's new status unless a newer one is stored; true when it changed. */
export async function updateEvseStatus(db: Queryable, change: EvseStatusChange): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE ocpi_evses
        SET status = $5,
            data = jsonb_set(jsonb_set(data, '{status}', to_jsonb($5::text)), '{last_updated}', to_jsonb($6::text)),
            last_updated = $6
      WHERE country_code = $1 AND party_id = $2 AND location_id = $3 AND uid = $4 AND last_updated <= $6`,
    [change.country_code, change.party_id, change.location_id, change.uid, change.status, change.last_updated],
  );
  return rowCount === 1;
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

export interface StoredLocation {
  stationId: string;
  location: OcpiLocation;
}

/**
 * Every location with its EVSEs, in batches (keyset pagination), so a large
 * catalogue is never one result set in memory.
 */
export async function* streamLocations(db: Queryable, batchSize = 5_000): AsyncGenerator<StoredLocation[]> {
  let after: [string, string, string] = ['', '', ''];
  for (;;) {
    const { rows } = await db.query<{ station_id: string; data: OcpiLocation; evses: OcpiEvse[] | null; cc: string; pid: string; id: string }>(
      `SELECT l.station_id, l.data, l.country_code AS cc, l.party_id AS pid, l.id,
              (SELECT jsonb_agg(e.data ORDER BY e.uid) FROM ocpi_evses e
                WHERE e.country_code = l.country_code AND e.party_id = l.party_id AND e.location_id = l.id) AS evses
         FROM ocpi_locations l
        WHERE (l.country_code, l.party_id, l.id) > ($1, $2, $3)
        ORDER BY l.country_code, l.party_id, l.id
        LIMIT $4`,
      [...after, batchSize],
    );
    if (rows.length === 0) return;
    yield rows.map((r) => ({ stationId: r.station_id, location: { ...r.data, evses: r.evses ?? [] } }));
    const last = rows[rows.length - 1] as { cc: string; pid: string; id: string };
    after = [last.cc, last.pid, last.id];
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
