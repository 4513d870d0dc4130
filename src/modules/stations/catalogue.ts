// The in-memory station catalogue of one process: built from the database at
// start, rebuilt off the request path when the catalogue changes and swapped
// in atomically. Queries never wait for a rebuild; they read the snapshot that
// was current when they started. EVSE status changes are applied in place.
//
// Answers are written as JSON text straight from the snapshot (snapshot.ts):
// the parts that do not change between requests are kept as JSON fragments,
// so answering a query is a search plus string concatenation. `station()`
// parses the same text for callers inside the service, so there is one way a
// station is shown.

import { distance as greatCircleKm, around as kdAround } from 'geokdbush';
import { EVSE_STATUSES } from '../../ocpi/locations-tariffs.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { DEFAULT_PRE_AUTHORIZATION, derivePriceGroups, localIsoDateTime, type PriceGroup, tariffChanges } from './price-groups.ts';
import type { Speed, StationBase } from './projection.ts';
import * as repo from './repository.ts';
import {
  buildSnapshot,
  emptySnapshot,
  findEvse,
  type Layout,
  type LayoutGroup,
  NO_PRICE,
  type PricingConfig,
  pricingFor,
  REMOVED,
  type Snapshot,
  SPEED_CODES,
  STATUS_CODES,
  stationOfEvse,
  stationStatusCode,
  tariffKey,
} from './snapshot.ts';
import { tileItems } from './tiles.ts';

export { type PricingConfig, pricingFor } from './snapshot.ts';

export type Station = StationBase & { price_groups: PriceGroup[] };

export interface StationFilter {
  /** Bit mask of connector types; 0 for any. */
  connectorMask: number;
  onlyAvailable: boolean;
  onlyPartners: boolean;
  /** Lower-cased operator names; empty for any. */
  operators: string[];
  /** Speeds to keep; empty for any. */
  speeds?: Speed[];
  /** Stations whose price is above this (in their own currency) are left out; stations without a price stay. */
  maxPrice?: number;
}

export interface AroundQuery extends StationFilter {
  latitude: number;
  longitude: number;
  /** Radius in meters. */
  distance: number;
}

/** A map tile's features as JSON text (elements of a GeoJSON `features` array, comma-separated; "" when none). */
export interface TileJson {
  count: number;
  json: string;
}

/** Where an EVSE lives at its CPO, for commands (OCPI START_SESSION names location and EVSE uid). */
export interface EvseRef {
  country_code: string;
  party_id: string;
  location_id: string;
  evse_uid: string;
  evse_id: string;
  status: string;
  station_id: string;
}

export const DEFAULT_PRICING: PricingConfig = { fallbackKwhPriceEur: '0.59', preAuthorization: DEFAULT_PRE_AUTHORIZATION };

const EARTH_RADIUS_KM = 6371; // as geokdbush

export interface CatalogueOptions {
  db: Database;
  clock: Clock;
  pricing?: PricingConfig;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** How long a computed tile is reused; bounds how stale a tile may be (default 2 s). */
  tileCacheTtlMs?: number;
}

const RAD = Math.PI / 180;
const haverSin = (theta: number) => {
  const sine = Math.sin(theta / 2);
  return sine * sine;
};

/**
 * geokdbush's haversine term between (lon, lat) and (x, y), given both
 * cosines of latitude: the same floating-point steps as its `around`, so
 * `<= haverSin(r / R)` agrees with it exactly on who is within r km.
 */
function haverSinBetween(lon: number, lat: number, cosLat: number, x: number, y: number, cosY: number): number {
  return cosLat * cosY * haverSin((lon - x) * RAD) + haverSin((lat - y) * RAD);
}
const KD_STACK = new Uint32Array(3 * 128); // depth of a k-d tree of 2^64 points, twice over
/** The box (west, south, east, north) of each node on KD_STACK. */
const KD_BOXES = new Float64Array(4 * 128);
/** Matches of one count, kept when there are few: they are then the whole answer, no second search needed. */
const FEW_MATCHES = new Uint32Array(256);
/** Stations asked for beyond a page, to see the ties of its last one without a second search. */
const TIE_SLACK = 8;

/**
 * How many stations `accept` lets through within radiusKm of (lon, lat): the
 * k-d tree's bounding-box walk with the great-circle test inline (geokdbush's
 * haversine, so the count agrees exactly with its `around`), no arrays built.
 * The first matches are written to `few` (all of them when the count is at
 * most its length).
 */
function countWithin(s: Snapshot, lon: number, lat: number, radiusKm: number, accept: (i: number) => boolean, few: Uint32Array): number {
  if (s.size === 0) return 0;
  const angular = radiusKm / EARTH_RADIUS_KM;
  const dLat = angular / RAD;
  const minLat = Math.max(lat - dLat, -90);
  const maxLat = Math.min(lat + dLat, 90);
  const ranges: [number, number][] = [];
  if (lat - dLat <= -90 || lat + dLat >= 90 || angular >= Math.PI / 2) {
    ranges.push([-180, 180]);
  } else {
    const dLon = Math.asin(Math.min(1, Math.sin(angular) / Math.cos(lat * RAD))) / RAD;
    ranges.push([Math.max(lon - dLon, -180), Math.min(lon + dLon, 180)]);
    if (lon - dLon < -180) ranges.push([lon - dLon + 360, 180]);
    if (lon + dLon > 180) ranges.push([-180, lon + dLon - 360]);
  }
  const maxH = haverSin(angular);
  const cosLat = Math.cos(lat * RAD);
  const { ids, coords, nodeSize } = s.index;
  let count = 0;
  const inside = (k: number, x: number, y: number): boolean => {
    const id = ids[k] as number;
    if (haverSinBetween(lon, lat, cosLat, x, y, s.cosLatitudes[id] as number) > maxH || !accept(id)) return false;
    if (count < few.length) few[count] = id;
    return true;
  };
  // A k-d node whose box lies inside the circle (its four corners do, with a
  // margin against rounding; boxes this small hold no farther point) needs no
  // distance test for its points, only the filter.
  const hCorner = (x: number, y: number) => haverSinBetween(lon, lat, cosLat, x, y, Math.cos(y * RAD));
  const surelyInside = maxH * (1 - 1e-9);
  for (const [minLon, maxLon] of ranges) {
    const stack = KD_STACK;
    const box = KD_BOXES;
    stack[0] = 0;
    stack[1] = ids.length - 1;
    stack[2] = 0;
    box.set([-180, -90, 180, 90], 0);
    let sp = 3;
    while (sp > 0) {
      const axis = stack[--sp] as number;
      const right = stack[--sp] as number;
      const left = stack[--sp] as number;
      const b = (sp / 3) * 4;
      const x0 = box[b] as number;
      const y0 = box[b + 1] as number;
      const x1 = box[b + 2] as number;
      const y1 = box[b + 3] as number;
      if (
        x0 >= minLon &&
        x1 <= maxLon &&
        y0 >= minLat &&
        y1 <= maxLat &&
        hCorner(x0, y0) <= surelyInside &&
        hCorner(x0, y1) <= surelyInside &&
        hCorner(x1, y0) <= surelyInside &&
        hCorner(x1, y1) <= surelyInside
      ) {
        for (let k = left; k <= right; k++) {
          const id = ids[k] as number;
          if (!accept(id)) continue;
          if (count < few.length) few[count] = id;
          count++;
        }
        continue;
      }
      if (right - left <= nodeSize) {
        for (let k = left; k <= right; k++) {
          const x = coords[2 * k] as number;
          const y = coords[2 * k + 1] as number;
          if (x >= minLon && x <= maxLon && y >= minLat && y <= maxLat && inside(k, x, y)) count++;
        }
        continue;
      }
      const m = (left + right) >> 1;
      const x = coords[2 * m] as number;
      const y = coords[2 * m + 1] as number;
      if (x >= minLon && x <= maxLon && y >= minLat && y <= maxLat && inside(m, x, y)) count++;
      if (axis === 0 ? minLon <= x : minLat <= y) {
        box.set(axis === 0 ? [x0, y0, x, y1] : [x0, y0, x1, y], (sp / 3) * 4);
        stack[sp++] = left;
        stack[sp++] = m - 1;
        stack[sp++] = 1 - axis;
      }
      if (axis === 0 ? maxLon >= x : maxLat >= y) {
        box.set(axis === 0 ? [x, y0, x1, y1] : [x0, y, x1, y1], (sp / 3) * 4);
        stack[sp++] = m + 1;
        stack[sp++] = right;
        stack[sp++] = 1 - axis;
      }
    }
  }
  return count;
}

function formatHundredths(value: number): string {
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** The groups a layout's stations show at `nowMs`: derived once per layout and tariff validity window. */
function layoutGroups(s: Snapshot, layout: Layout, pricing: PricingConfig, now: Date): LayoutGroup[] {
  const nowMs = now.getTime();
  const cached = layout.groups;
  if (cached && cached.from <= nowMs && nowMs < cached.until) return cached.items;
  const party = s.parties[layout.party] as { country_code: string; party_id: string };
  const findTariff = (id: string) => s.tariffs.get(tariffKey(party.country_code, party.party_id, id));
  let from = Number.NEGATIVE_INFINITY;
  let until = Number.POSITIVE_INFINITY;
  for (const evse of layout.evses) {
    for (const connector of evse.connectors) {
      for (const id of connector.tariff_ids ?? []) {
        const tariff = findTariff(id);
        for (const change of tariff ? tariffChanges(tariff) : []) {
          if (change <= nowMs) from = Math.max(from, change);
          else until = Math.min(until, change);
        }
      }
    }
  }
  const country = s.countries[layout.country] as string;
  const groups = derivePriceGroups(layout.evses, findTariff, { ...pricingFor(country, pricing), now, timeZone: 'UTC', memo: s.priceMemo });
  const items = groups.map((g) => ({
    head: `"type":${JSON.stringify(g.type)},"power":${JSON.stringify(g.power)}`,
    positions: g.evse_ids.map(Number),
    priced: `"prices":${JSON.stringify(g.prices)},"currency":${JSON.stringify(g.currency)},"pre_authorization_amount":${JSON.stringify(g.pre_authorization_amount)},"is_fallback":${g.is_fallback}`,
  }));
  layout.groups = { from, until, items };
  return items;
}

export function createCatalogue(options: CatalogueOptions) {
  const { db, clock } = options;
  const pricing = options.pricing ?? DEFAULT_PRICING;
  const tileTtl = options.tileCacheTtlMs ?? 2_000;
  let snapshot = emptySnapshot();
  let rebuilding: Promise<void> | undefined;
  let rebuildAgain = false;
  const tileCache = new Map<string, { at: number; tile: TileJson }>();
  const TILE_CACHE_MAX = 20_000;

  /** Rebuilds the snapshot and swaps it in; concurrent calls coalesce into at most one more rebuild. */
  async function reload(): Promise<void> {
    if (rebuilding) {
      rebuildAgain = true;
      return rebuilding;
    }
    rebuilding = (async () => {
      try {
        do {
          rebuildAgain = false;
          const started = performance.now();
          snapshot = await buildSnapshot(db, pricing);
          tileCache.clear();
          options.log?.('station catalogue loaded', { stations: snapshot.size, ms: Math.round(performance.now() - started) });
        } while (rebuildAgain);
      } finally {
        rebuilding = undefined;
      }
    })();
    return rebuilding;
  }

  function matcher(s: Snapshot, filter: StationFilter): (i: number) => boolean {
    const operatorSet = new Set<number>();
    for (let op = 0; op < s.operatorNames.length; op++) if (filter.operators.includes((s.operatorNames[op] as string).toLowerCase())) operatorSet.add(op);
    const speeds = new Set((filter.speeds ?? []).map((sp) => SPEED_CODES.indexOf(sp)));
    const maxHundredths = filter.maxPrice === undefined ? undefined : filter.maxPrice * 100 + 1e-9;
    return (i: number) =>
      (filter.connectorMask === 0 || ((s.connectorMasks[i] as number) & filter.connectorMask) !== 0) &&
      (!filter.onlyAvailable || s.statusCodes[i] === 0) &&
      (!filter.onlyPartners || s.operatorIsPartner[s.operatorOf[i] as number] === 1) &&
      (filter.operators.length === 0 || operatorSet.has(s.operatorOf[i] as number)) &&
      (speeds.size === 0 || speeds.has(s.speedCodes[i] as number)) &&
      (maxHundredths === undefined || (s.priceHundredths[i] as number) === NO_PRICE || (s.priceHundredths[i] as number) <= maxHundredths);
  }

  // local_datetime of price groups: one formatting per time zone (of the snapshot) and second.
  let localNow: { of: Snapshot; second: number[]; text: string[] } | undefined;
  function localDateTimeNow(s: Snapshot, zone: number, now: Date): string {
    if (localNow?.of !== s) localNow = { of: s, second: [], text: [] };
    const second = Math.floor(now.getTime() / 1000);
    if (localNow.second[zone] !== second) {
      localNow.text[zone] = localIsoDateTime(now, s.zones[zone] as string);
      localNow.second[zone] = second;
    }
    return localNow.text[zone] as string;
  }

  /** Station i as JSON text at `now`, with `"distance":…` when given. */
  function stationJson(s: Snapshot, i: number, now: Date, distance?: number): string {
    const first = s.evseStart[i] as number;
    const end = s.evseStart[i + 1] as number;
    const live: number[] = [];
    let evses = '';
    let updated = s.updatedMs[i] as number;
    for (let e = first; e < end; e++) {
      const status = s.evseStatus[e] as number;
      if ((s.evseUpdatedMs[e] as number) > updated) updated = s.evseUpdatedMs[e] as number;
      if (status === REMOVED) continue;
      evses += `${live.length > 0 ? ',' : ''}{"evse_id":${s.evseIdJson[e]},"status":"${EVSE_STATUSES[status]}"}`;
      live.push(e);
    }
    const local = localDateTimeNow(s, s.zoneOf[i] as number, now);
    let groups = '';
    for (const group of layoutGroups(s, s.layouts[s.layoutOf[i] as number] as Layout, pricing, now)) {
      let ids = '';
      for (const p of group.positions) ids += `${ids ? ',' : ''}${s.evseIdJson[live[p] as number]}`;
      groups += `${groups ? ',' : ''}{${group.head},"evse_ids":[${ids}],${group.priced},"local_datetime":"${local}"}`;
    }
    return (
      `{"id":"${s.stationIds[i]}",${s.nameAddress[i]},"coordinates":{"latitude":${s.latitudeJson[i]},"longitude":${s.longitudeJson[i]}},` +
      `"opening_times":${s.hoursJson[s.hoursOf[i] as number]},${s.operatorJson[s.operatorOf[i] as number]},"evses":[${evses}],` +
      `"last_updated":"${new Date(updated).toISOString()}","speed":"${SPEED_CODES[s.speedCodes[i] as number]}","status":"${STATUS_CODES[s.statusCodes[i] as number]}",` +
      `"amenities":${s.amenitiesJson[s.amenitiesOf[i] as number]},"price_groups":[${groups}]${distance === undefined ? '' : `,"distance":${distance}`}}`
    );
  }

  function stationFeature(s: Snapshot, i: number): string {
    const op = s.operatorOf[i] as number;
    const price = s.priceHundredths[i] as number;
    const priced =
      price === NO_PRICE
        ? ''
        : `,"price_properties":{"price":"${formatHundredths(price)}","type":"${s.priceIsTime[i] === 1 ? 'time_price' : 'charging_price'}","currency":"${s.currencies[s.currencyOf[i] as number]}"}`;
    return (
      `{"type":"Feature","geometry":{"type":"Point","coordinates":[${s.longitudeJson[i]},${s.latitudeJson[i]}]},` +
      `"properties":{"count":1,"speed":"${SPEED_CODES[s.speedCodes[i] as number]}","status":"${STATUS_CODES[s.statusCodes[i] as number]}","operator_id":${JSON.stringify(s.operatorIds[op])}},` +
      `"station_id":"${s.stationIds[i]}","custom_properties":{"is_partner":${s.operatorIsPartner[op] === 1}}${priced}}`
    );
  }

  function computeTile(s: Snapshot, z: number, x: number, y: number, filter: StationFilter): TileJson {
    const unfiltered =
      filter.connectorMask === 0 &&
      !filter.onlyAvailable &&
      !filter.onlyPartners &&
      filter.operators.length === 0 &&
      (filter.speeds ?? []).length === 0 &&
      filter.maxPrice === undefined;
    const items = tileItems(s.mortonCodes, z, x, y, unfiltered ? null : matcher(s, filter), {
      longitudes: s.longitudes,
      latitudes: s.latitudes,
      speedCodes: s.speedCodes,
      statuses: STATUS_CODES,
      statusCodes: s.statusCodes,
    });
    const features = items.map((item) =>
      item.kind === 'station'
        ? stationFeature(s, item.index)
        : `{"type":"Feature","geometry":{"type":"Point","coordinates":["${item.longitude.toFixed(6)}","${item.latitude.toFixed(6)}"]},` +
          `"properties":{"count":${item.count},"expansion_zoom":${item.expansionZoom},"speed":"${SPEED_CODES[item.speedCode]}","status":"${item.status}"},"cluster_id":"${item.id}"}`,
    );
    return { count: features.length, json: features.join(',') };
  }

  function stationIndex(s: Snapshot, by: { stationId: string } | { evseId: string }): number {
    if ('stationId' in by) return s.byStationId.get(by.stationId) ?? -1;
    const evse = findEvse(s, by.evseId);
    return evse < 0 ? -1 : stationOfEvse(s, evse);
  }

  return {
    reload,
    get size() {
      return snapshot.size;
    },

    /**
     * Stations within `distance` meters matching the filters, nearest first
     * (ties in catalogue order): the total count and one page of stations as
     * JSON text, each with its distance in meters.
     */
    around(query: AroundQuery, page: { offset: number; limit: number }): { count: number; results: string[] } {
      const s = snapshot;
      const accept = matcher(s, query);
      const radiusKm = query.distance / 1000;
      const { longitude: lon, latitude: lat } = query;
      // The count needs every match but no order: bounding box, then the exact distance.
      const count = countWithin(s, lon, lat, radiusKm, accept, FEW_MATCHES);
      const wanted = page.offset + page.limit;
      if (count === 0 || page.offset >= count || page.limit <= 0) return { count, results: [] };
      // The page needs order but only the nearest `wanted` (plus any tied with the last of them):
      // the count's own matches when they are few, else a nearest-first search.
      let ids = count <= FEW_MATCHES.length ? Array.from(FEW_MATCHES.subarray(0, count)) : kdAround(s.index, lon, lat, wanted + TIE_SLACK, radiusKm, accept);
      if (count > FEW_MATCHES.length && ids.length > wanted) {
        // Keep the stations within 0.1 m of the wanted-th (ties once rounded); when even the
        // extra ones asked for are that close, there may be more: ask for all of them.
        const last = ids[wanted - 1] as number;
        const lastKm = greatCircleKm(lon, lat, s.longitudes[last] as number, s.latitudes[last] as number);
        const limit = haverSin(Math.min(radiusKm, lastKm + 0.0001) / EARTH_RADIUS_KM);
        const cosLat = Math.cos(lat * RAD);
        const h = (i: number) => haverSinBetween(lon, lat, cosLat, s.longitudes[i] as number, s.latitudes[i] as number, s.cosLatitudes[i] as number);
        ids =
          ids.length === wanted + TIE_SLACK && h(ids[ids.length - 1] as number) <= limit
            ? kdAround(s.index, lon, lat, Number.POSITIVE_INFINITY, Math.min(radiusKm, lastKm + 0.0001), accept)
            : ids.filter((i) => h(i) <= limit);
      }
      const hits = ids.map((i) => ({
        index: i,
        distance: Math.round(greatCircleKm(lon, lat, s.longitudes[i] as number, s.latitudes[i] as number) * 10_000) / 10,
      }));
      hits.sort((a, b) => a.distance - b.distance || (s.rank[a.index] as number) - (s.rank[b.index] as number));
      const now = clock.now();
      return { count, results: hits.slice(page.offset, wanted).map((hit) => stationJson(s, hit.index, now, hit.distance)) };
    },

    /** Features of one map tile: single stations and clusters (cached briefly per tile and filter). */
    tile(z: number, x: number, y: number, filter: StationFilter): TileJson {
      const s = snapshot;
      const key = `${s.version}|${z}/${x}/${y}|${JSON.stringify(filter)}`;
      const now = Date.now(); // cache age, not domain time
      const hit = tileCache.get(key);
      if (hit && now - hit.at < tileTtl) return hit.tile;
      const tile = computeTile(s, z, x, y, filter);
      if (tileCache.size >= TILE_CACHE_MAX) tileCache.delete(tileCache.keys().next().value as string);
      tileCache.set(key, { at: now, tile });
      return tile;
    },

    /** One station as JSON text, by station id or by the id of one of its live EVSEs. */
    stationJson(by: { stationId: string } | { evseId: string }): string | undefined {
      const s = snapshot;
      const i = stationIndex(s, by);
      return i < 0 ? undefined : stationJson(s, i, clock.now());
    },

    /** One station, as the API shows it. */
    station(by: { stationId: string } | { evseId: string }): Station | undefined {
      const json = this.stationJson(by);
      return json === undefined ? undefined : (JSON.parse(json) as Station);
    },

    /** Where a live EVSE is at its CPO, with its current status. */
    evse(evseId: string): EvseRef | undefined {
      const s = snapshot;
      const e = findEvse(s, evseId);
      if (e < 0) return undefined;
      const i = stationOfEvse(s, e);
      const party = s.parties[s.partyOf[i] as number] as { country_code: string; party_id: string };
      return {
        ...party,
        location_id: s.locationIds[i] as string,
        evse_uid: s.evseUids[e] as string,
        evse_id: JSON.parse(s.evseIdJson[e] as string) as string,
        status: EVSE_STATUSES[s.evseStatus[e] as number] as string,
        station_id: s.stationIds[i] as string,
      };
    },

    /**
     * An EVSE status change applied in place (no rebuild): around and details see
     * it at once, tiles when their cached copy expires. false when it cannot be
     * applied in place (unknown EVSE, or one appearing or disappearing: REMOVED
     * changes what the station offers), so the caller rebuilds.
     */
    applyEvseStatus(change: repo.EvseStatusChange): boolean {
      const s = snapshot;
      const i = s.byStationId.get(repo.stationIdOf(change.country_code, change.party_id, change.location_id)) ?? -1;
      if (i < 0) return false;
      const status = EVSE_STATUSES.indexOf(change.status as (typeof EVSE_STATUSES)[number]);
      for (let e = s.evseStart[i] as number; e < (s.evseStart[i + 1] as number); e++) {
        if (s.evseUids[e] !== change.uid) continue;
        const at = Date.parse(change.last_updated);
        if ((s.evseUpdatedMs[e] as number) > at) return true; // already newer here
        if (status < 0 || status === REMOVED || s.evseStatus[e] === REMOVED) return false;
        s.evseStatus[e] = status;
        s.evseUpdatedMs[e] = at;
        s.statusCodes[i] = stationStatusCode(s, i);
        return true;
      }
      return false;
    },

    /** Follows a change announced on the catalogue channel: in place for a status, else a rebuild. */
    async onChange(payload: string | undefined): Promise<void> {
      let change: repo.CatalogueChange | undefined;
      try {
        change = payload ? (JSON.parse(payload) as repo.CatalogueChange) : undefined;
      } catch {
        change = undefined;
      }
      if (change?.kind === 'evse_status' && this.applyEvseStatus(change)) return;
      await reload();
    },

    partners(): repo.PartnerRow[] {
      return [...snapshot.partners.values()].sort((a, b) => a.name.localeCompare(b.name));
    },

    /** Facts of every station in catalogue (database) order, for brute-force checks in tests and benchmarks. */
    inspect(): {
      size: number;
      longitudes: Float64Array;
      latitudes: Float64Array;
      stationIds: string[];
      matches(filter: StationFilter): (i: number) => boolean;
    } {
      const s = snapshot;
      const internal = new Uint32Array(s.size);
      for (let i = 0; i < s.size; i++) internal[s.rank[i] as number] = i;
      const pick = <T>(read: (i: number) => T) => Array.from(internal, read);
      return {
        size: s.size,
        longitudes: Float64Array.from(pick((i) => s.longitudes[i] as number)),
        latitudes: Float64Array.from(pick((i) => s.latitudes[i] as number)),
        stationIds: pick((i) => s.stationIds[i] as string),
        matches: (filter) => {
          const accept = matcher(s, filter);
          return (r: number) => accept(internal[r] as number);
        },
      };
    },
  };
}

export type Catalogue = ReturnType<typeof createCatalogue>;
