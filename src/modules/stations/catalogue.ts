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

import { EVSE_STATUSES } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { serviceUnavailable } from '../../platform/errors.ts';
import type { Metrics } from '../../platform/metrics.ts';
import { sharedPasses } from '../../platform/shared-passes.ts';
import { type PricingConfig, pricingFor } from '../../pricing/country-pricing.ts';
import { localIsoDateTime } from '../../pricing/local-time.ts';
import { DEFAULT_PRE_AUTHORIZATION, derivePriceGroups, type GroupedEvse, type PriceGroup, tariffChanges } from '../../pricing/price-groups.ts';
import { nearestOut, nearestWithin } from './kd-nearest.ts';
import type { Speed, StationBase } from './projection.ts';
import * as repo from './repository.ts';
import {
  buildSnapshot,
  coordinatesJson,
  emptySnapshot,
  evseUidAt,
  findEvse,
  findStation,
  fragment,
  isEvseUid,
  type Layout,
  type LayoutGroup,
  locationIdAt,
  NO_PRICE,
  REMOVED,
  type Snapshot,
  SPEED_CODES,
  STATUS_CODES,
  stationIdAt,
  stationOfEvse,
  stationStatusCode,
  tariffKey,
} from './snapshot.ts';
import { refreshSummaryEntry, SUMMARY_MAX_ZOOM, summaryTileItems, tileItems } from './tiles.ts';

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
  /** Where rebuild times are recorded (METRICS_PORT); without it none are. */
  metrics?: Pick<Metrics, 'catalogueReloaded'>;
  /** How long a computed tile is reused; bounds how stale a tile may be (default 2 s). */
  tileCacheTtlMs?: number;
  /**
   * False while start-up still loads the catalogue (main.ts: the readiness of the station catalogue): queries
   * then answer 503 service_unavailable instead of an empty catalogue's "nothing here" / "no such EVSE".
   */
  ready?: () => boolean;
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
/**
 * Bounds within which a cheap haversine term decides a distance test on its own: a point whose
 * half angles (longitude and latitude difference, in radians, halved) are both below NEAR_HALF_ANGLE
 * gets sin(u) from its Taylor polynomial u - u^3/6 + u^5/120, whose relative error is then below
 * u^6/5040 < 4e-12 (so below 1e-11 for the term, rounding included). Only a point within
 * NEAR_MARGIN (relative) of the radius needs the exact term, computed as geokdbush does.
 */
const NEAR_HALF_ANGLE = 0.05;
const NEAR_MARGIN = 1e-9;

/** sin(u)^2 by the Taylor polynomial of sin(u), for |u| < NEAR_HALF_ANGLE. */
function nearSin2(u: number): number {
  const u2 = u * u;
  const sine = u * (1 - (u2 / 6) * (1 - u2 / 20));
  return sine * sine;
}

/**
 * Whether (x, y) is within the circle of haversine term maxH around (lon, lat): exactly
 * `haverSinBetween(lon, lat, cosLat, x, y, cosY) <= maxH`, with the cheap term where it decides.
 */
export function withinTerm(lon: number, lat: number, cosLat: number, x: number, y: number, cosY: number, maxH: number): boolean {
  const u = (lon - x) * (RAD / 2);
  const v = (lat - y) * (RAD / 2);
  if (u > -NEAR_HALF_ANGLE && u < NEAR_HALF_ANGLE && v > -NEAR_HALF_ANGLE && v < NEAR_HALF_ANGLE) {
    const near = cosLat * cosY * nearSin2(u) + nearSin2(v);
    if (near < maxH * (1 - NEAR_MARGIN)) return true;
    if (near > maxH * (1 + NEAR_MARGIN)) return false;
  }
  return haverSinBetween(lon, lat, cosLat, x, y, cosY) <= maxH;
}

const KD_STACK = new Uint32Array(3 * 128); // depth of a k-d tree of 2^64 points, twice over
/** The box (west, south, east, north) of each node on KD_STACK. */
const KD_BOXES = new Float64Array(4 * 128);
/**
 * Matches of one count (their k-d positions, whose coordinates the count has just read), kept when
 * there are few: they are then the whole answer, no second search needed.
 */
const FEW_MATCHES = new Uint32Array(256);
/** Stations inside the circle after which a count is worth a filter table (see countWithin). */
const TABLE_AFTER = 128;
/** Candidates of a page from the nearest-first search (grown by it when needed). */
const NEAREST = nearestOut(1024);
/** One page being chosen: stations and their distances in tenths of a meter, in answer order. */
let pageIds = new Uint32Array(256);
let pageTenths = new Float64Array(256);

/** The class-status table (see classStatusTable) the last count used, or null. */
let countTable: Uint8Array | null = null;

/** What warmPage read, summed (kept, so that the reads stay). */
const warmSink = { sum: 0 };

/**
 * Reads what writing the stations pageIds[from..to) reads, one kind of data at a time for all of
 * them. Writing a station reads its data one piece after another, each a cache miss when the
 * catalogue is large and the station was not written lately; here the reads of different stations
 * do not wait for each other, so their misses overlap (about a quarter off writing a page at 3M EVSEs).
 */
function warmPage(s: Snapshot, from: number, to: number): void {
  const { heads, evseStart, updatedMs, layoutOf, amenitiesOf, amenitiesJson, evseIdJson, evseStatus, evseUpdatedMs } = s;
  const meta = s.groupTable.meta;
  let sum = 0;
  for (let k = from; k < to; k++) {
    const i = pageIds[k] as number;
    sum +=
      (heads[i] as string).length +
      (evseStart[i] as number) +
      (updatedMs[i] as number) +
      (s.zoneOf[i] as number) +
      (s.hoursOf[i] as number) +
      (s.operatorOf[i] as number) +
      (s.speedCodes[i] as number) +
      (s.statusCodes[i] as number);
  }
  for (let k = from; k < to; k++) {
    const i = pageIds[k] as number;
    sum += (amenitiesJson[amenitiesOf[i] as number] as string).length + (meta[3 * (layoutOf[i] as number) + 2] as number);
  }
  for (let k = from; k < to; k++) {
    const i = pageIds[k] as number;
    for (let e = evseStart[i] as number; e < (evseStart[i + 1] as number); e++)
      sum += (evseIdJson[e] as string).length + (evseStatus[e] as number) + (evseUpdatedMs[e] as number);
  }
  const codes = s.groupTable.codes;
  for (let k = from; k < to; k++) {
    const at = meta[3 * (layoutOf[pageIds[k] as number] as number) + 2] as number;
    if (at >= 0) sum += codes[at] as number;
  }
  warmSink.sum = sum;
}

/** Distance in tenths of a meter (rounded) for geokdbush's haversine term h: its `distance`, to the last step. */
function tenthsOf(h: number): number {
  return Math.round(2 * EARTH_RADIUS_KM * Math.asin(Math.sqrt(h)) * 10_000);
}

/**
 * Keeps the first `wanted` of the candidates offered by (distance in tenths, catalogue rank) in
 * pageIds/pageTenths; returns how many are kept. Candidates may come in any order.
 */
function offerToPage(rank: Uint32Array, kept: number, wanted: number, id: number, tenths: number): number {
  let pos = kept;
  if (kept === wanted) {
    const last = pageTenths[wanted - 1] as number;
    if (tenths > last || (tenths === last && (rank[id] as number) > (rank[pageIds[wanted - 1] as number] as number))) return kept;
    pos = wanted - 1;
  } else kept++;
  while (pos > 0) {
    const t = pageTenths[pos - 1] as number;
    if (t < tenths || (t === tenths && (rank[pageIds[pos - 1] as number] as number) < (rank[id] as number))) break;
    pageTenths[pos] = t;
    pageIds[pos] = pageIds[pos - 1] as number;
    pos--;
  }
  pageTenths[pos] = tenths;
  pageIds[pos] = id;
  return kept;
}

/**
 * How many stations `accept` lets through within radiusKm of (lon, lat): the
 * k-d tree's bounding-box walk with the great-circle test inline (geokdbush's
 * haversine, so the count agrees exactly with its `around`), no arrays built.
 * Matches are written to `few` as k-d positions: all of them when the count
 * is at most its length (otherwise some or none). `accept` null: every station matches.
 * Whole k-d nodes inside the circle are counted from the k-d ordered class and
 * status of their stations with `acceptTable` (by class * statuses + status,
 * asked for once enough stations are inside: building it has a cost).
 */
function countWithin(
  s: Snapshot,
  lon: number,
  lat: number,
  radiusKm: number,
  accept: ((i: number) => boolean) | null,
  acceptTable: () => Uint8Array,
  few: Uint32Array,
): number {
  countTable = null;
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
  let insideSeen = 0;
  let table: Uint8Array | null = null;
  const kdCos = s.kdCosLatitudes;
  const kdClassStatus = s.kdClassStatus;
  const inside = (k: number, x: number, y: number): boolean => {
    if (!withinTerm(lon, lat, cosLat, x, y, kdCos[k] as number, maxH)) return false;
    if (table !== null ? table[kdClassStatus[k] as number] === 0 : accept !== null && !accept(ids[k] as number)) return false;
    if (count < few.length) few[count] = k;
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
    box[0] = -180;
    box[1] = -90;
    box[2] = 180;
    box[3] = 90;
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
        if (accept === null) {
          // Every point counts; their ids are only needed while the count stays small.
          if (count + right - left + 1 <= few.length) for (let k = left; k <= right; k++) few[count++] = k;
          else count += right - left + 1;
          continue;
        }
        insideSeen += right - left + 1;
        if (table === null && insideSeen >= TABLE_AFTER) table = acceptTable();
        if (table !== null) {
          // Without branches on the filter (its answers are unpredictable): a match is kept by counting it.
          let k = left;
          for (; k <= right && count < few.length; k++) {
            few[count] = k;
            count += table[kdClassStatus[k] as number] as number;
          }
          for (; k <= right; k++) count += table[kdClassStatus[k] as number] as number;
          continue;
        }
        for (let k = left; k <= right; k++) {
          if (!accept(ids[k] as number)) continue;
          if (count < few.length) few[count] = k;
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
        const at = (sp / 3) * 4;
        box[at] = x0;
        box[at + 1] = y0;
        box[at + 2] = axis === 0 ? x : x1;
        box[at + 3] = axis === 0 ? y1 : y;
        stack[sp++] = left;
        stack[sp++] = m - 1;
        stack[sp++] = 1 - axis;
      }
      if (axis === 0 ? maxLon >= x : maxLat >= y) {
        const at = (sp / 3) * 4;
        box[at] = axis === 0 ? x : x0;
        box[at + 1] = axis === 0 ? y0 : y;
        box[at + 2] = x1;
        box[at + 3] = y1;
        stack[sp++] = m + 1;
        stack[sp++] = right;
        stack[sp++] = 1 - axis;
      }
    }
  }
  countTable = table;
  return count;
}

function formatHundredths(value: number): string {
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Whether a filter lets every station through. */
function isUnfiltered(filter: StationFilter): boolean {
  return (
    filter.connectorMask === 0 &&
    !filter.onlyAvailable &&
    !filter.onlyPartners &&
    filter.operators.length === 0 &&
    (filter.speeds ?? []).length === 0 &&
    filter.maxPrice === undefined
  );
}

/** 1 for each operator the filter's operator names and partner flag let through; null when they let all through. */
function operatorTable(s: Snapshot, filter: StationFilter): Uint8Array | null {
  if (!filter.onlyPartners && filter.operators.length === 0) return null;
  const ok = new Uint8Array(s.operatorNames.length);
  for (let op = 0; op < ok.length; op++) {
    const named = filter.operators.length === 0 || filter.operators.includes(s.operatorKeys[op] as string);
    ok[op] = named && (!filter.onlyPartners || s.operatorIsPartner[op] === 1) ? 1 : 0;
  }
  return ok;
}

/** 1 for each speed code the filter lets through; null when it lets all through. */
function speedTable(filter: StationFilter): Uint8Array | null {
  if ((filter.speeds ?? []).length === 0) return null;
  return Uint8Array.from(SPEED_CODES, (speed) => ((filter.speeds as Speed[]).includes(speed) ? 1 : 0));
}

/** 1 for each station class whose stations the filter lets through, its status filter aside (one pass per filter part). */
function computeClassTable(s: Snapshot, filter: StationFilter): Uint8Array {
  const mask = filter.connectorMask;
  const operatorOk = operatorTable(s, filter);
  const speedOk = speedTable(filter);
  const maxHundredths = filter.maxPrice === undefined ? undefined : filter.maxPrice * 100 + 1e-9;
  const { classMask, classOperator, classSpeed, classPrice } = s;
  const n = classMask.length;
  const ok = new Uint8Array(n);
  if (mask === 0) ok.fill(1);
  else for (let c = 0; c < n; c++) ok[c] = ((classMask[c] as number) & mask) !== 0 ? 1 : 0;
  if (operatorOk !== null) for (let c = 0; c < n; c++) ok[c] = (ok[c] as number) & (operatorOk[classOperator[c] as number] as number);
  if (speedOk !== null) for (let c = 0; c < n; c++) ok[c] = (ok[c] as number) & (speedOk[classSpeed[c] as number] as number);
  if (maxHundredths !== undefined) {
    for (let c = 0; c < n; c++) {
      const price = classPrice[c] as number;
      if (price !== NO_PRICE && price > maxHundredths) ok[c] = 0;
    }
  }
  return ok;
}

/** Four bytes of a class's row in a class-status table (STATUS_CODES: free first), as one word: every status, or free only. */
const EVERY_STATUS_WORD = new Uint32Array(new Uint8Array([1, 1, 1, 1]).buffer)[0] as number;
const FREE_ONLY_WORD = new Uint32Array(new Uint8Array([1, 0, 0, 0]).buffer)[0] as number;

/** Filter tables of a snapshot by filter (few filters are in use at a time): classes, and classes by status. */
const filterTables = new WeakMap<Snapshot, Map<string, { classes: Uint8Array; classStatus?: Uint8Array }>>();
const FILTER_TABLES_MAX = 512;

function filterTablesOf(s: Snapshot, filter: StationFilter): { classes: Uint8Array; classStatus?: Uint8Array } {
  let tables = filterTables.get(s);
  if (!tables) {
    tables = new Map();
    filterTables.set(s, tables);
  }
  const key = `${filter.connectorMask}|${filter.onlyAvailable}|${filter.onlyPartners}|${filter.speeds?.join(',') ?? ''}|${filter.maxPrice ?? ''}|${filter.operators.join('\u0000')}`;
  let entry = tables.get(key);
  if (!entry) {
    if (tables.size >= FILTER_TABLES_MAX) tables.delete(tables.keys().next().value as string);
    entry = { classes: computeClassTable(s, filter) };
    tables.set(key, entry);
  }
  return entry;
}

/** 1 for each station class the filter lets through (its status filter aside). */
function classTable(s: Snapshot, filter: StationFilter): Uint8Array {
  return filterTablesOf(s, filter).classes;
}

/** 1 for each class * STATUS_CODES.length + status code the filter lets through (index of Snapshot.kdClassStatus). */
function classStatusTable(s: Snapshot, filter: StationFilter): Uint8Array {
  const entry = filterTablesOf(s, filter);
  if (!entry.classStatus) {
    const classes = entry.classes;
    const statuses = STATUS_CODES.length;
    const table = new Uint8Array(classes.length * statuses);
    if (statuses === 4) {
      // One word per class.
      const words = new Uint32Array(table.buffer);
      const word = filter.onlyAvailable ? FREE_ONLY_WORD : EVERY_STATUS_WORD;
      for (let c = 0; c < classes.length; c++) words[c] = (classes[c] as number) * word;
    } else {
      for (let c = 0; c < classes.length; c++) {
        if (classes[c] === 0) continue;
        for (let st = 0; st < statuses; st++) table[c * statuses + st] = !filter.onlyAvailable || st === 0 ? 1 : 0;
      }
    }
    entry.classStatus = table;
  }
  return entry.classStatus;
}

/** Pricing options per country, for one pricing configuration (pricingFor computes with big.js). */
const countryPricing = new WeakMap<PricingConfig, Map<string, ReturnType<typeof pricingFor>>>();

function pricingOf(country: string, pricing: PricingConfig): ReturnType<typeof pricingFor> {
  let byCountry = countryPricing.get(pricing);
  if (!byCountry) {
    byCountry = new Map();
    countryPricing.set(pricing, byCountry);
  }
  let options = byCountry.get(country);
  if (!options) {
    options = pricingFor(country, pricing);
    byCountry.set(country, options);
  }
  return options;
}

/**
 * `"prices":…,"currency":…,"pre_authorization_amount":…,"is_fallback":…` of a group, written once per
 * prices object (derivePriceGroups shares one per tariff, power and options through the snapshot's memo).
 */
const pricedText = new WeakMap<object, { currency: string; amount: string; fallback: boolean; text: string }>();

function pricedJson(g: PriceGroup): string {
  const known = pricedText.get(g.prices);
  if (known && known.currency === g.currency && known.amount === g.pre_authorization_amount && known.fallback === g.is_fallback) return known.text;
  const text = fragment(
    `"prices":${JSON.stringify(g.prices)},"currency":${JSON.stringify(g.currency)},"pre_authorization_amount":${JSON.stringify(g.pre_authorization_amount)},"is_fallback":${g.is_fallback}`,
  );
  pricedText.set(g.prices, { currency: g.currency, amount: g.pre_authorization_amount, fallback: g.is_fallback, text });
  return text;
}

/** Groups derived over distinct connector sets, shared by the layouts of a party and country with the same sets in the same order. */
interface SharedGroups {
  from: number;
  until: number;
  items: { head: string; sets: Set<number>; priced: string }[];
}

/** Per snapshot: the index of each connector set (by its connectors array), and groups shared by set list. */
const derivedBySnapshot = new WeakMap<Snapshot, { setIndex: Map<object, number>; shared: Map<string, SharedGroups> }>();

function derivedOf(s: Snapshot): { setIndex: Map<object, number>; shared: Map<string, SharedGroups> } {
  let derived = derivedBySnapshot.get(s);
  if (!derived) {
    derived = { setIndex: new Map(s.connectorSets.map((set, k) => [set.connectors, k])), shared: new Map() };
    derivedBySnapshot.set(s, derived);
  }
  return derived;
}

/**
 * The groups a layout's stations show at `now`, valid in [from, until). EVSEs with the same
 * connector set fall into the same groups, so groups are derived over one stand-in per
 * distinct set (in order of first appearance), once per party, country and set list and
 * tariff validity window, and each layout gives a group the positions of its EVSEs with those sets.
 */
function layoutGroups(s: Snapshot, layout: Layout, pricing: PricingConfig, now: Date): { from: number; until: number; items: LayoutGroup[] } {
  const nowMs = now.getTime();
  const derived = derivedOf(s);
  const sets: GroupedEvse['connectors'][] = [];
  const setAt: number[] = [];
  for (const evse of layout.evses) {
    let k = sets.indexOf(evse.connectors);
    if (k < 0) k = sets.push(evse.connectors) - 1;
    setAt.push(k);
  }
  // Sets are the snapshot's (a layout's EVSEs point at them); one that is not is never shared.
  const known = sets.every((connectors) => derived.setIndex.has(connectors));
  const key = known ? `${layout.party}|${layout.country}|${sets.map((connectors) => derived.setIndex.get(connectors)).join(',')}` : undefined;
  let shared = key === undefined ? undefined : derived.shared.get(key);
  if (!shared || !(shared.from <= nowMs && nowMs < shared.until)) {
    shared = deriveShared(s, layout, sets, pricing, now);
    if (key !== undefined) derived.shared.set(key, shared);
  }
  const items = shared.items.map(({ head, sets: inGroup, priced }) => {
    const positions: number[] = [];
    for (let position = 0; position < setAt.length; position++) if (inGroup.has(setAt[position] as number)) positions.push(position);
    return { head, positions, priced };
  });
  return { from: shared.from, until: shared.until, items };
}

/** Offset in s.groupTable.codes of the entry of layout k valid at `now` (derived when it has none yet or its range has passed). */
function groupEntry(s: Snapshot, k: number, pricing: PricingConfig, now: Date, nowMs: number): number {
  const meta = s.groupTable.meta;
  const at = meta[3 * k + 2] as number;
  if (at >= 0 && (meta[3 * k] as number) <= nowMs && nowMs < (meta[3 * k + 1] as number)) return at;
  return writeGroupEntry(s, k, layoutGroups(s, s.layouts[k] as Layout, pricing, now));
}

/** Writes layout k's groups into the group table (over its previous entry when they fit, else at the end); returns the entry's offset. */
function writeGroupEntry(s: Snapshot, k: number, groups: { from: number; until: number; items: LayoutGroup[] }): number {
  const table = s.groupTable;
  let size = 1;
  for (const item of groups.items) size += 2 + item.positions.length;
  let at = table.meta[3 * k + 2] as number;
  if (at < 0 || entrySize(table.codes, at) < size) {
    at = table.used;
    if (at + size > table.codes.length) {
      const grown = new Int32Array(Math.max(2 * table.codes.length, at + size));
      grown.set(table.codes.subarray(0, at));
      table.codes = grown;
    }
    table.used = at + size;
  }
  const codes = table.codes;
  let p = at;
  codes[p++] = groups.items.length;
  for (const { head, positions, priced } of groups.items) {
    const key = `${head}\u0000${priced}`;
    let item = table.items.get(key);
    if (item === undefined) {
      item = table.open.length;
      table.open.push(fragment(`{${head},"evse_ids":[`));
      table.close.push(fragment(`],${priced},"local_datetime":"`));
      table.items.set(key, item);
    }
    codes[p++] = item;
    codes[p++] = positions.length;
    for (const position of positions) codes[p++] = position;
  }
  table.meta[3 * k] = groups.from;
  table.meta[3 * k + 1] = groups.until;
  table.meta[3 * k + 2] = at;
  return at;
}

function entrySize(codes: Int32Array, at: number): number {
  let p = at + 1;
  for (let g = codes[at] as number; g > 0; g--) p += 2 + (codes[p + 1] as number);
  return p - at;
}

function deriveShared(s: Snapshot, layout: Layout, sets: GroupedEvse['connectors'][], pricing: PricingConfig, now: Date): SharedGroups {
  const nowMs = now.getTime();
  const party = s.parties[layout.party] as { country_code: string; party_id: string };
  const findTariff = (id: string) => s.tariffs.get(tariffKey(party.country_code, party.party_id, id));
  let from = Number.NEGATIVE_INFINITY;
  let until = Number.POSITIVE_INFINITY;
  for (const connectors of sets) {
    for (const connector of connectors) {
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
  const standIns = sets.map((connectors, k) => ({ uid: String(k), status: 'AVAILABLE' as const, connectors }));
  const groups = derivePriceGroups(standIns, findTariff, { ...pricingOf(country, pricing), now, timeZone: 'UTC', memo: s.priceMemo });
  return {
    from,
    until,
    items: groups.map((g) => ({
      head: fragment(`"type":${JSON.stringify(g.type)},"power":${JSON.stringify(g.power)}`),
      sets: new Set(g.evse_ids.map(Number)),
      priced: pricedJson(g),
    })),
  };
}

/** `,"status":"…"}` closing an EVSE of each status. */
const EVSE_STATUS_TAIL = EVSE_STATUSES.map((status) => fragment(`,"status":"${status}"}`));
/** `","speed":"…","status":"…","amenities":` by speed code * 4 + status code. */
const STATION_FACTS = SPEED_CODES.flatMap((speed) => STATUS_CODES.map((status) => fragment(`","speed":"${speed}","status":"${status}","amenities":`)));
/** EVSE positions of the station being written. */
let liveEvses = new Uint32Array(64);

const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
/** `HH:MM:` by minute of the day, and `SS.` by second, `mmmZ` by millisecond. */
const CLOCK_MINUTES = Array.from({ length: 1440 }, (_, m) => fragment(`${TWO_DIGITS[Math.floor(m / 60)]}:${TWO_DIGITS[m % 60]}:`));
const CLOCK_SECONDS = Array.from({ length: 60 }, (_, n) => `${TWO_DIGITS[n]}.`);
const CLOCK_MILLIS = Array.from({ length: 1000 }, (_, n) => `${String(n).padStart(3, '0')}Z`);
const DAY_MS = 86_400_000;
let isoDay = Number.NaN;
let isoDayText = '';

/** `new Date(ms).toISOString()` without a Date per call (the date part is kept for the last day asked). */
export function isoDateTime(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  const rest = ms - day * DAY_MS;
  if (!Number.isInteger(rest) || day * DAY_MS < -8.64e15 || day * DAY_MS > 8.64e15 - DAY_MS) return new Date(ms).toISOString();
  if (day !== isoDay) {
    isoDayText = new Date(day * DAY_MS).toISOString().slice(0, -13);
    isoDay = day;
  }
  const seconds = Math.floor(rest / 1000);
  return (
    isoDayText + (CLOCK_MINUTES[Math.floor(seconds / 60)] as string) + (CLOCK_SECONDS[seconds % 60] as string) + (CLOCK_MILLIS[rest - seconds * 1000] as string)
  );
}

/** A distance in tenths of a meter as JavaScript writes tenths / 10 (no trailing ".0"). */
export function metersJson(tenths: number): string {
  const units = tenths % 10;
  return units === 0 ? String(tenths / 10) : `${(tenths - units) / 10}.${units}`;
}

// local_datetime of price groups: one formatting per time zone (of the snapshot) and second.
interface LocalNow {
  of: Snapshot;
  second: number[];
  text: string[];
}

/** What the catalogue's rules read besides the snapshot: one per catalogue, made by createCatalogue. */
interface CatalogueContext {
  clock: Clock;
  pricing: PricingConfig;
  /** The local_datetime texts last written (see localDateTimeNow). */
  localNow: LocalNow | undefined;
}

/**
 * Derives the price groups of every layout before a snapshot is swapped in, so
 * its first queries do not (in slices, letting other work run in between).
 * A layout whose groups cannot be derived is left for the query to report.
 */
async function warmLayouts(ctx: CatalogueContext, s: Snapshot): Promise<void> {
  for (let k = 0; k < s.layouts.length; k++) {
    try {
      const now = ctx.clock.now();
      groupEntry(s, k, ctx.pricing, now, now.getTime());
    } catch {
      // the query that shows this layout fails the same way
    }
    if (k % 2_000 === 1_999) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Whether station i passes `filter`, read from the per-station arrays (see classTable for whole classes). */
function matcher(s: Snapshot, filter: StationFilter): (i: number) => boolean {
  const mask = filter.connectorMask;
  const onlyAvailable = filter.onlyAvailable;
  const operatorOk = operatorTable(s, filter);
  const speedOk = speedTable(filter);
  const maxHundredths = filter.maxPrice === undefined ? undefined : filter.maxPrice * 100 + 1e-9;
  const { connectorMasks, statusCodes, operatorOf, speedCodes, priceHundredths } = s;
  return (i: number) =>
    (mask === 0 || ((connectorMasks[i] as number) & mask) !== 0) &&
    (!onlyAvailable || statusCodes[i] === 0) &&
    (operatorOk === null || operatorOk[operatorOf[i] as number] === 1) &&
    (speedOk === null || speedOk[speedCodes[i] as number] === 1) &&
    (maxHundredths === undefined || (priceHundredths[i] as number) === NO_PRICE || (priceHundredths[i] as number) <= maxHundredths);
}

/** local_datetime of price groups in time zone `zone` of `s` at `now` (see LocalNow). */
function localDateTimeNow(ctx: CatalogueContext, s: Snapshot, zone: number, now: Date): string {
  let localNow = ctx.localNow;
  if (localNow?.of !== s) {
    localNow = { of: s, second: [], text: [] };
    ctx.localNow = localNow;
  }
  const second = Math.floor(now.getTime() / 1000);
  if (localNow.second[zone] !== second) {
    localNow.text[zone] = fragment(localIsoDateTime(now, s.zones[zone] as string));
    localNow.second[zone] = second;
  }
  return localNow.text[zone] as string;
}

/** Station i as JSON text at `now`, with `"distance":…` (JSON text) when given. */
function stationJson(ctx: CatalogueContext, s: Snapshot, i: number, now: Date, distance?: string): string {
  const first = s.evseStart[i] as number;
  const end = s.evseStart[i + 1] as number;
  if (end - first > liveEvses.length) liveEvses = new Uint32Array(2 * (end - first));
  const live = liveEvses;
  let count = 0;
  let evses = '';
  let updated = s.updatedMs[i] as number;
  for (let e = first; e < end; e++) {
    const status = s.evseStatus[e] as number;
    const at = s.evseUpdatedMs[e] as number;
    if (at > updated) updated = at;
    if (status === REMOVED) continue;
    evses += (count > 0 ? ',{"evse_id":' : '{"evse_id":') + s.evseIdJson[e] + (EVSE_STATUS_TAIL[status] as string);
    live[count++] = e;
  }
  const local = localDateTimeNow(ctx, s, s.zoneOf[i] as number, now);
  let groups = '';
  let p = groupEntry(s, s.layoutOf[i] as number, ctx.pricing, now, now.getTime());
  const { codes, open, close } = s.groupTable;
  for (let g = codes[p++] as number; g > 0; g--) {
    const item = codes[p++] as number;
    let ids = '';
    for (let n = codes[p++] as number, k = 0; k < n; k++) ids += (k > 0 ? ',' : '') + s.evseIdJson[live[codes[p++] as number] as number];
    groups += `${groups === '' ? '' : ','}${open[item]}${ids}${close[item]}${local}"}`;
  }
  return (
    (s.heads[i] as string) +
    s.hoursJson[s.hoursOf[i] as number] +
    ',' +
    s.operatorJson[s.operatorOf[i] as number] +
    ',"evses":[' +
    evses +
    '],"last_updated":"' +
    isoDateTime(updated) +
    (STATION_FACTS[(s.speedCodes[i] as number) * STATUS_CODES.length + (s.statusCodes[i] as number)] as string) +
    s.amenitiesJson[s.amenitiesOf[i] as number] +
    ',"price_groups":[' +
    groups +
    (distance === undefined ? ']}' : `],"distance":${distance}}`)
  );
}

function stationFeature(s: Snapshot, i: number): string {
  const op = s.operatorOf[i] as number;
  const { latitude, longitude } = coordinatesJson(s, i);
  const price = s.priceHundredths[i] as number;
  const priced =
    price === NO_PRICE
      ? ''
      : `,"price_properties":{"price":"${formatHundredths(price)}","type":"${s.priceIsTime[i] === 1 ? 'time_price' : 'charging_price'}","currency":"${s.currencies[s.currencyOf[i] as number]}"}`;
  return (
    `{"type":"Feature","geometry":{"type":"Point","coordinates":[${longitude},${latitude}]},` +
    `"properties":{"count":1,"speed":"${SPEED_CODES[s.speedCodes[i] as number]}","status":"${STATUS_CODES[s.statusCodes[i] as number]}","operator_id":${JSON.stringify(s.operatorIds[op])}},` +
    `"station_id":"${stationIdAt(s, i)}","custom_properties":{"is_partner":${s.operatorIsPartner[op] === 1}}${priced}}`
  );
}

function computeTile(s: Snapshot, z: number, x: number, y: number, filter: StationFilter): TileJson {
  const unfiltered = isUnfiltered(filter);
  const items =
    z <= SUMMARY_MAX_ZOOM
      ? summaryTileItems(
          s.cellSummary,
          s.mortonCodes,
          z,
          x,
          y,
          unfiltered ? null : classTable(s, filter),
          filter.onlyAvailable ? 1 << STATUS_CODES.indexOf('free') : (1 << STATUS_CODES.length) - 1,
          s.classSpeed,
          STATUS_CODES,
          s,
        )
      : tileItems(s.mortonCodes, z, x, y, unfiltered ? null : matcher(s, filter), {
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
  if ('stationId' in by) return findStation(s, by.stationId);
  const evse = findEvse(s, by.evseId);
  return evse < 0 ? -1 : stationOfEvse(s, evse);
}

/** The answer of Catalogue.around from snapshot `s`. */
function stationsAround(ctx: CatalogueContext, s: Snapshot, query: AroundQuery, page: { offset: number; limit: number }): { count: number; results: string[] } {
  const accept = isUnfiltered(query) ? null : matcher(s, query);
  const radiusKm = query.distance / 1000;
  const { longitude: lon, latitude: lat } = query;
  // The count needs every match but no order: bounding box, then the exact distance.
  const count = countWithin(s, lon, lat, radiusKm, accept, () => classStatusTable(s, query), FEW_MATCHES);
  const wanted = page.offset + page.limit;
  if (count === 0 || page.offset >= count || page.limit <= 0) return { count, results: [] };
  // The page needs order but only the nearest `wanted` (plus any tied with the last of them):
  // the count's own matches when they are few, else a nearest-first search.
  if (pageIds.length < wanted) {
    pageIds = new Uint32Array(wanted);
    pageTenths = new Float64Array(wanted);
  }
  const cosLat = Math.cos(lat * RAD);
  let kept = 0;
  if (count <= FEW_MATCHES.length) {
    const { ids, coords } = s.index;
    for (let m = 0; m < count; m++) {
      const k = FEW_MATCHES[m] as number;
      const h = haverSinBetween(lon, lat, cosLat, coords[2 * k] as number, coords[2 * k + 1] as number, s.kdCosLatitudes[k] as number);
      kept = offerToPage(s.rank, kept, wanted, ids[k] as number, tenthsOf(h));
    }
  } else {
    // Nearest first: the wanted nearest, then the stations within 0.1 m of the wanted-th
    // (they may tie with it once rounded, and come first in catalogue order).
    const tieLimit = (h: number) => haverSin(Math.min(radiusKm, 2 * EARTH_RADIUS_KM * Math.asin(Math.sqrt(h)) + 0.0001) / EARTH_RADIUS_KM);
    // The count's class-status table, when it built one, answers by k-d position (no per-station arrays read).
    const table = countTable;
    const kdClassStatus = s.kdClassStatus;
    const near = accept === null || table === null ? accept : (_id: number, k: number) => table[kdClassStatus[k] as number] === 1;
    const n = nearestWithin(s.index, s.kdCosLatitudes, lon, lat, haverSin(radiusKm / EARTH_RADIUS_KM), wanted, tieLimit, near, NEAREST);
    for (let k = 0; k < n; k++) kept = offerToPage(s.rank, kept, wanted, NEAREST.ids[k] as number, tenthsOf(NEAREST.hs[k] as number));
  }
  const now = ctx.clock.now();
  warmPage(s, page.offset, kept);
  const results: string[] = [];
  for (let k = page.offset; k < kept; k++) results.push(stationJson(ctx, s, pageIds[k] as number, now, metersJson(pageTenths[k] as number)));
  return { count, results };
}

/** Where live EVSE `evseId` is at its CPO, with its current status (see Catalogue.evse). */
function evseRef(s: Snapshot, evseId: string): EvseRef | undefined {
  const e = findEvse(s, evseId);
  if (e < 0) return undefined;
  const i = stationOfEvse(s, e);
  const party = s.parties[s.partyOf[i] as number] as { country_code: string; party_id: string };
  return {
    ...party,
    location_id: locationIdAt(s, i),
    evse_uid: evseUidAt(s, e),
    evse_id: JSON.parse(s.evseIdJson[e] as string) as string,
    status: EVSE_STATUSES[s.evseStatus[e] as number] as string,
    station_id: stationIdAt(s, i),
  };
}

/** An EVSE status change applied to snapshot `s` in place; false when it cannot be (see Catalogue.applyEvseStatus). */
function applyEvseStatus(s: Snapshot, change: repo.EvseStatusChange): boolean {
  const i = findStation(s, repo.stationIdOf(change.country_code, change.party_id, change.location_id));
  if (i < 0) return false;
  const status = EVSE_STATUSES.indexOf(change.status as (typeof EVSE_STATUSES)[number]);
  for (let e = s.evseStart[i] as number; e < (s.evseStart[i + 1] as number); e++) {
    if (!isEvseUid(s, e, change.uid)) continue;
    const at = Date.parse(change.last_updated);
    if ((s.evseUpdatedMs[e] as number) > at) return true; // already newer here
    if (status < 0 || status === REMOVED || s.evseStatus[e] === REMOVED) return false;
    s.evseStatus[e] = status;
    s.evseUpdatedMs[e] = at;
    const code = stationStatusCode(s, i);
    if (code !== s.statusCodes[i]) {
      s.statusCodes[i] = code;
      s.kdClassStatus[s.kdPosition[i] as number] = (s.classOf[i] as number) * STATUS_CODES.length + code;
      refreshSummaryEntry(s.cellSummary, s.cellSummary.entryOf[i] as number, s);
    }
    return true;
  }
  return false;
}

/** Facts of every station of `s` in catalogue (database) order (see Catalogue.inspect). */
function inspectSnapshot(s: Snapshot): {
  size: number;
  longitudes: Float64Array;
  latitudes: Float64Array;
  stationIds: string[];
  matches(filter: StationFilter): (i: number) => boolean;
} {
  const internal = new Uint32Array(s.size);
  for (let i = 0; i < s.size; i++) internal[s.rank[i] as number] = i;
  const pick = <T>(read: (i: number) => T) => Array.from(internal, read);
  return {
    size: s.size,
    longitudes: Float64Array.from(pick((i) => s.longitudes[i] as number)),
    latitudes: Float64Array.from(pick((i) => s.latitudes[i] as number)),
    stationIds: pick((i) => stationIdAt(s, i)),
    matches: (filter) => {
      const accept = matcher(s, filter);
      return (r: number) => accept(internal[r] as number);
    },
  };
}

export function createCatalogue(options: CatalogueOptions) {
  const { db, clock } = options;
  const pricing = options.pricing ?? DEFAULT_PRICING;
  const ctx: CatalogueContext = { clock, pricing, localNow: undefined };
  const tileTtl = options.tileCacheTtlMs ?? 2_000;
  let snapshot = emptySnapshot();
  const ready = options.ready;
  /** The snapshot queries answer from, once start-up has loaded it. */
  const served = (): Snapshot => {
    if (ready && !ready()) throw serviceUnavailable('The station catalogue is still loading; retry shortly.', 5);
    return snapshot;
  };
  let evses: { of: Snapshot; count: number } | undefined;
  const tileCache = new Map<string, { at: number; tile: TileJson }>();
  const TILE_CACHE_MAX = 20_000;

  /** Rebuilds the snapshot and swaps it in; calls during a rebuild share the one after it (sharedPasses). */
  const { run: reload } = sharedPasses(async () => {
    const started = performance.now();
    const next = await buildSnapshot(db, pricing);
    await warmLayouts(ctx, next);
    snapshot = next;
    tileCache.clear();
    const ms = performance.now() - started;
    options.metrics?.catalogueReloaded(ms / 1000);
    options.log?.('station catalogue loaded', { stations: snapshot.size, ms: Math.round(ms) });
  });

  return {
    reload,
    get size() {
      return snapshot.size;
    },
    /** EVSEs not removed: counted once per snapshot (status changes in place never add or remove one). */
    get evseCount() {
      if (evses?.of !== snapshot) {
        let count = 0;
        for (const status of snapshot.evseStatus) if (status !== REMOVED) count++;
        evses = { of: snapshot, count };
      }
      return evses.count;
    },

    /**
     * Stations within `distance` meters matching the filters, nearest first
     * (ties in catalogue order): the total count and one page of stations as
     * JSON text, each with its distance in meters.
     */
    around(query: AroundQuery, page: { offset: number; limit: number }): { count: number; results: string[] } {
      return stationsAround(ctx, served(), query, page);
    },

    /** Features of one map tile: single stations and clusters (cached briefly per tile and filter). */
    tile(z: number, x: number, y: number, filter: StationFilter): TileJson {
      const s = served();
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
      const s = served();
      const i = stationIndex(s, by);
      return i < 0 ? undefined : stationJson(ctx, s, i, clock.now());
    },

    /** One station, as the API shows it. */
    station(by: { stationId: string } | { evseId: string }): Station | undefined {
      const json = this.stationJson(by);
      return json === undefined ? undefined : (JSON.parse(json) as Station);
    },

    /** Where a live EVSE is at its CPO, with its current status. */
    evse(evseId: string): EvseRef | undefined {
      return evseRef(served(), evseId);
    },

    /**
     * An EVSE status change applied in place (no rebuild): around and details see
     * it at once, tiles when their cached copy expires. false when it cannot be
     * applied in place (unknown EVSE, or one appearing or disappearing: REMOVED
     * changes what the station offers), so the caller rebuilds.
     */
    applyEvseStatus(change: repo.EvseStatusChange): boolean {
      return applyEvseStatus(snapshot, change);
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
      if (change?.kind === 'evse_statuses' && Array.isArray(change.changes)) {
        // Every change applied in place; one that cannot be (a new EVSE, a removal) rebuilds once for all.
        let inPlace = true;
        for (const one of change.changes) inPlace = this.applyEvseStatus(one) && inPlace;
        if (inPlace) return;
      }
      await reload();
    },

    partners(): repo.PartnerRow[] {
      return [...served().partners.values()].sort((a, b) => a.name.localeCompare(b.name));
    },

    /** Facts of every station in catalogue (database) order, for brute-force checks in tests and benchmarks. */
    inspect(): ReturnType<typeof inspectSnapshot> {
      return inspectSnapshot(snapshot);
    },
  };
}

export type Catalogue = ReturnType<typeof createCatalogue>;
