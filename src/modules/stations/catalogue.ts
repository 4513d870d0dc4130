// The in-memory station catalogue of one process: built from the database at
// start, rebuilt off the request path when the catalogue changes and swapped
// in atomically. Queries never wait for a rebuild; they read the snapshot that
// was current when they started.
//
// A snapshot holds the OCPI locations (for projection), a static k-d tree over
// their coordinates (radius search by great-circle distance), and typed arrays
// of what filters need (status, connector mask, operator, partner flag).

import Big from 'big.js';
import { distance as greatCircleKm, around as kdAround } from 'geokdbush';
import KDBush from 'kdbush';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { countryByAlpha3, UNITS_PER_EUR } from './european-countries.ts';
import type { OcpiLocation, OcpiTariff } from './ocpi-schemas.ts';
import {
  DEFAULT_PRE_AUTHORIZATION,
  derivePriceGroups,
  localIsoDateTime,
  type PreAuthorizationRule,
  type PriceGroup,
  type PriceGroupOptions,
} from './price-groups.ts';
import {
  connectorMask,
  maxPowerKw,
  operatorName,
  projectStation,
  type Speed,
  type StationBase,
  type StationStatus,
  speedOf,
  stationStatus,
} from './projection.ts';
import * as repo from './repository.ts';
import { mortonCode, tileItems } from './tiles.ts';

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

export interface TileFeature {
  type: 'Feature';
  geometry: { type: 'Point'; coordinates: [string, string] };
  properties: { count: number; expansion_zoom?: number; speed: Speed; status: StationStatus; operator_id?: string };
  station_id?: string;
  cluster_id?: string;
  custom_properties?: { is_partner: boolean };
  price_properties?: { price: string; type: 'charging_price' | 'time_price'; currency: string };
}

const EARTH_RADIUS_KM = 6371; // as geokdbush

const STATUS_CODES: readonly StationStatus[] = ['free', 'busy', 'error', 'unknown'];
const SPEED_CODES: readonly Speed[] = ['slow', 'fast', 'turbo'];
const NO_PRICE = -1;

interface Snapshot {
  version: number;
  size: number;
  stationIds: string[];
  locations: OcpiLocation[];
  index: KDBush;
  /** Catalogue (database) order of each station; stations themselves are numbered in Morton order. */
  rank: Uint32Array;
  /** Morton code of each station, ascending (stations are numbered in Morton order). */
  mortonCodes: Float64Array;
  longitudes: Float64Array;
  latitudes: Float64Array;
  statusCodes: Uint8Array;
  speedCodes: Uint8Array;
  connectorMasks: Uint32Array;
  operatorOf: Uint32Array;
  operatorNames: string[];
  operatorIds: string[];
  operatorPhones: (string | null)[];
  operatorIsPartner: Uint8Array;
  /** Price shown on the map, in hundredths of the currency (NO_PRICE when none). */
  priceHundredths: Int32Array;
  priceIsTime: Uint8Array;
  currencyOf: Uint8Array;
  currencies: string[];
  byStationId: Map<string, number>;
  byEvseId: Map<string, number>;
  byLocationKey: Map<string, number>;
  tariffs: Map<string, OcpiTariff>;
  partners: Map<string, repo.PartnerRow>;
  /** Prices per (tariff, power, pricing options), shared by the stations of this snapshot. */
  priceMemo: NonNullable<PriceGroupOptions['memo']>;
}

/**
 * The operator's pricing settings, in euros; scaled into a location's currency
 * with UNITS_PER_EUR (the hold rule's minimum/maximum and round-up step too).
 */
export interface PricingConfig {
  /** Price per kWh excl. VAT applied where a CPO sent no tariff; undefined: no fallback. */
  fallbackKwhPriceEur?: string | undefined;
  /** Our own one-off fee per session excl. VAT; undefined: none. */
  startingFeeEur?: string | undefined;
  preAuthorization: PreAuthorizationRule;
}

export const DEFAULT_PRICING: PricingConfig = { fallbackKwhPriceEur: '0.59', preAuthorization: DEFAULT_PRE_AUTHORIZATION };

/** Price-group options of one location: currency, VAT and amounts of its country. */
export function pricingFor(location: OcpiLocation, config: PricingConfig): Omit<PriceGroupOptions, 'now' | 'timeZone'> {
  const country = countryByAlpha3(location.country);
  const currency = country?.currency ?? 'EUR';
  const rate = new Big(UNITS_PER_EUR[currency] ?? '1');
  const vat = country?.vat ?? '0';
  const scale = (eur: string, dp: number) => new Big(eur).times(rate).round(dp, Big.roundHalfUp).toFixed(dp);
  const step = rate.gte(50) ? '100' : rate.gte(5) ? '10' : config.preAuthorization.roundUpTo;
  const rule = config.preAuthorization;
  return {
    currency,
    ...(config.fallbackKwhPriceEur ? { fallback: { currency, kwhPrice: scale(config.fallbackKwhPriceEur, 2), vat } } : {}),
    ...(config.startingFeeEur ? { startingFee: { price: scale(config.startingFeeEur, 2), vat } } : {}),
    preAuthorization: {
      ...rule,
      minimum: new Big(scale(rule.minimum, 2)).div(step).round(0, Big.roundUp).times(step).toFixed(2),
      maximum: new Big(scale(rule.maximum, 2)).div(step).round(0, Big.roundDown).times(step).toFixed(2),
      roundUpTo: step,
    },
  };
}

export interface CatalogueOptions {
  db: Database;
  clock: Clock;
  pricing?: PricingConfig;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** How long a computed tile is reused; bounds how stale a tile may be (default 2 s). */
  tileCacheTtlMs?: number;
}

const tariffKey = (countryCode: string, partyId: string, id: string) => `${countryCode}*${partyId}*${id}`;
const locationKey = (countryCode: string, partyId: string, id: string) => `${countryCode}*${partyId}*${id}`;

/** The price a map shows for a tariff: its highest kWh price incl. VAT, else its highest time price per minute incl. VAT. */
function tariffMapPrice(tariff: OcpiTariff): { hundredths: number; isTime: boolean } | undefined {
  let best: Big | undefined;
  let bestTime: Big | undefined;
  for (const element of tariff.elements) {
    if (element.restrictions?.reservation) continue;
    for (const component of element.price_components) {
      const gross = new Big(String(component.price)).times(new Big(String(component.vat ?? 0)).div(100).plus(1));
      if (component.type === 'ENERGY' && (!best || gross.gt(best))) best = gross;
      if (component.type === 'TIME' && (!bestTime || gross.gt(bestTime))) bestTime = gross;
    }
  }
  if (best) return { hundredths: Number(best.times(100).round(0, Big.roundHalfUp)), isTime: false };
  if (bestTime) return { hundredths: Number(bestTime.div(60).times(100).round(0, Big.roundHalfUp)), isTime: true };
  return undefined;
}

function emptyKdIndex(): KDBush {
  const index = new KDBush(0);
  index.finish();
  return index;
}

let snapshotVersion = 0;

async function buildSnapshot(db: Database, pricing: PricingConfig): Promise<Snapshot> {
  const [parties, tariffRows, partnerRows] = await Promise.all([repo.listParties(db), repo.listTariffs(db), repo.listPartners(db)]);
  const partyByKey = new Map(parties.map((p) => [`${p.country_code}*${p.party_id}`, p]));
  const tariffs = new Map(tariffRows.map((t) => [tariffKey(t.country_code, t.party_id, t.id), t]));
  const partners = new Map(partnerRows.map((p) => [p.name.toLowerCase(), p]));
  const tariffPrices = new Map<string, { hundredths: number; isTime: boolean } | undefined>();
  const stationIds: string[] = [];
  const locations: OcpiLocation[] = [];
  for await (const batch of repo.streamLocations(db)) {
    for (const { stationId, location } of batch) {
      stationIds.push(stationId);
      locations.push(location);
    }
  }
  // Stations are numbered in Morton (Z-order) of their position, so a map tile
  // (a contiguous Morton range) reads the per-station arrays sequentially.
  // `rank` keeps the catalogue (database) order, which breaks distance ties.
  const codes = locations.map((l) => mortonCode(Number(l.coordinates.longitude), Number(l.coordinates.latitude)));
  const order = codes.map((_, i) => i).sort((a, b) => (codes[a] as number) - (codes[b] as number) || a - b);
  const rank = Uint32Array.from(order);
  {
    const sortedLocations = order.map((i) => locations[i] as OcpiLocation);
    const sortedIds = order.map((i) => stationIds[i] as string);
    for (let k = 0; k < order.length; k++) {
      locations[k] = sortedLocations[k] as OcpiLocation;
      stationIds[k] = sortedIds[k] as string;
    }
  }
  const size = locations.length;
  const index = size > 0 ? new KDBush(size, 64) : emptyKdIndex();
  const s: Snapshot = {
    version: ++snapshotVersion,
    size,
    stationIds,
    locations,
    index,
    rank,
    mortonCodes: Float64Array.from(order, (i) => codes[i] as number),
    longitudes: new Float64Array(size),
    latitudes: new Float64Array(size),
    statusCodes: new Uint8Array(size),
    speedCodes: new Uint8Array(size),
    connectorMasks: new Uint32Array(size),
    operatorOf: new Uint32Array(size),
    operatorNames: [],
    operatorIds: [],
    operatorPhones: [],
    operatorIsPartner: new Uint8Array(0),
    priceHundredths: new Int32Array(size),
    priceIsTime: new Uint8Array(size),
    currencyOf: new Uint8Array(size),
    currencies: [],
    byStationId: new Map(),
    byEvseId: new Map(),
    byLocationKey: new Map(),
    tariffs,
    partners,
    priceMemo: new Map(),
  };
  const operatorIndex = new Map<string, number>();
  const currencyIndex = new Map<string, number>();
  for (let i = 0; i < size; i++) {
    const location = locations[i] as OcpiLocation;
    const lon = Number(location.coordinates.longitude);
    const lat = Number(location.coordinates.latitude);
    if (size > 0) index.add(lon, lat);
    s.longitudes[i] = lon;
    s.latitudes[i] = lat;
    s.statusCodes[i] = STATUS_CODES.indexOf(stationStatus(location));
    s.speedCodes[i] = SPEED_CODES.indexOf(speedOf(maxPowerKw(location)));
    s.connectorMasks[i] = connectorMask(location);
    const party = partyByKey.get(`${location.country_code}*${location.party_id}`);
    const name = operatorName(location, party?.name);
    // One entry per (party, name): two parties may sell under one brand name.
    const operatorKey = `${location.country_code}*${location.party_id}\u0000${name}`;
    let op = operatorIndex.get(operatorKey);
    if (op === undefined) {
      op = s.operatorNames.length;
      operatorIndex.set(operatorKey, op);
      s.operatorNames.push(name);
      s.operatorIds.push(`${location.country_code}*${location.party_id}`);
      s.operatorPhones.push(party?.phone ?? null);
    }
    s.operatorOf[i] = op;
    s.byStationId.set(stationIds[i] as string, i);
    s.byLocationKey.set(locationKey(location.country_code, location.party_id, location.id), i);
    // Map price: the cheapest of the station's tariffs (each at its highest kWh price), else the fallback price.
    let price: { hundredths: number; isTime: boolean } | undefined;
    let currency: string | undefined;
    let anyWithoutTariff = false;
    for (const evse of location.evses ?? []) {
      if (evse.evse_id && evse.status !== 'REMOVED') s.byEvseId.set(evse.evse_id, i);
      if (evse.status === 'REMOVED') continue;
      for (const connector of evse.connectors) {
        const key = (connector.tariff_ids ?? []).map((id) => tariffKey(location.country_code, location.party_id, id)).find((k) => tariffs.has(k));
        if (!key) {
          anyWithoutTariff = true;
          continue;
        }
        if (!tariffPrices.has(key)) tariffPrices.set(key, tariffMapPrice(tariffs.get(key) as OcpiTariff));
        const candidate = tariffPrices.get(key);
        if (candidate && (!price || (candidate.isTime === price.isTime ? candidate.hundredths < price.hundredths : !candidate.isTime))) {
          price = candidate;
          currency = tariffs.get(key)?.currency;
        }
      }
    }
    if (!price && anyWithoutTariff) {
      const fallback = pricingFor(location, pricing).fallback;
      if (fallback) {
        price = {
          hundredths: Number(new Big(fallback.kwhPrice).times(new Big(fallback.vat).div(100).plus(1)).times(100).round(0, Big.roundHalfUp)),
          isTime: false,
        };
        currency = fallback.currency;
      }
    }
    s.priceHundredths[i] = price ? price.hundredths : NO_PRICE;
    s.priceIsTime[i] = price?.isTime ? 1 : 0;
    let ci = currencyIndex.get(currency ?? '');
    if (ci === undefined) {
      ci = s.currencies.length;
      currencyIndex.set(currency ?? '', ci);
      s.currencies.push(currency ?? '');
    }
    s.currencyOf[i] = ci;
  }
  if (size > 0) index.finish();
  s.operatorIsPartner = Uint8Array.from(s.operatorNames, (n) => (partners.has(n.toLowerCase()) ? 1 : 0));
  return s;
}

function emptySnapshot(): Snapshot {
  return {
    version: 0,
    size: 0,
    stationIds: [],
    locations: [],
    index: emptyKdIndex(),
    rank: new Uint32Array(0),
    mortonCodes: new Float64Array(0),
    longitudes: new Float64Array(0),
    latitudes: new Float64Array(0),
    statusCodes: new Uint8Array(0),
    speedCodes: new Uint8Array(0),
    connectorMasks: new Uint32Array(0),
    operatorOf: new Uint32Array(0),
    operatorNames: [],
    operatorIds: [],
    operatorPhones: [],
    operatorIsPartner: new Uint8Array(0),
    priceHundredths: new Int32Array(0),
    priceIsTime: new Uint8Array(0),
    currencyOf: new Uint8Array(0),
    currencies: [],
    byStationId: new Map(),
    byEvseId: new Map(),
    byLocationKey: new Map(),
    tariffs: new Map(),
    partners: new Map(),
    priceMemo: new Map(),
  };
}

/** How many stations `accept` lets through within radiusKm of (lon, lat), by great-circle distance. */
function countWithin(s: Snapshot, lon: number, lat: number, radiusKm: number, accept: (i: number) => boolean): number {
  if (s.size === 0) return 0;
  const angular = radiusKm / EARTH_RADIUS_KM;
  const dLat = (angular * 180) / Math.PI;
  const minLat = lat - dLat;
  const maxLat = lat + dLat;
  const ranges: [number, number][] = [];
  if (minLat <= -90 || maxLat >= 90 || angular >= Math.PI / 2) {
    ranges.push([-180, 180]);
  } else {
    const dLon = (Math.asin(Math.min(1, Math.sin(angular) / Math.cos((lat * Math.PI) / 180))) * 180) / Math.PI;
    const minLon = lon - dLon;
    const maxLon = lon + dLon;
    ranges.push([Math.max(minLon, -180), Math.min(maxLon, 180)]);
    if (minLon < -180) ranges.push([minLon + 360, 180]);
    if (maxLon > 180) ranges.push([-180, maxLon - 360]);
  }
  let count = 0;
  for (const [west, east] of ranges) {
    for (const i of s.index.range(west, Math.max(minLat, -90), east, Math.min(maxLat, 90))) {
      if (greatCircleKm(lon, lat, s.longitudes[i] as number, s.latitudes[i] as number) <= radiusKm && accept(i)) count++;
    }
  }
  return count;
}

function formatHundredths(value: number): string {
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export function createCatalogue(options: CatalogueOptions) {
  const { db, clock } = options;
  const pricing = options.pricing ?? DEFAULT_PRICING;
  const tileTtl = options.tileCacheTtlMs ?? 2_000;
  let snapshot = emptySnapshot();
  let rebuilding: Promise<void> | undefined;
  let rebuildAgain = false;
  const tileCache = new Map<string, { at: number; features: TileFeature[] }>();
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

  function projectUncached(s: Snapshot, i: number): Station {
    const location = s.locations[i] as OcpiLocation;
    const op = s.operatorOf[i] as number;
    const name = s.operatorNames[op] as string;
    const base = projectStation(s.stationIds[i] as string, location, { name, phone: s.operatorPhones[op] ?? null }, s.partners.get(name.toLowerCase()));
    const price_groups = derivePriceGroups(location.evses ?? [], (tariffId) => s.tariffs.get(tariffKey(location.country_code, location.party_id, tariffId)), {
      ...pricingOf(location),
      now: clock.now(),
      timeZone: location.time_zone,
      memo: s.priceMemo,
    });
    return { ...base, price_groups };
  }

  const pricingByCountry = new Map<string, ReturnType<typeof pricingFor>>();
  function pricingOf(location: OcpiLocation): ReturnType<typeof pricingFor> {
    let options = pricingByCountry.get(location.country);
    if (!options) {
      options = pricingFor(location, pricing);
      pricingByCountry.set(location.country, options);
    }
    return options;
  }

  // Projections are reused: deriving price groups is the costly part of an
  // answer. An entry is dropped when its station's EVSE status changes, when the
  // snapshot is replaced, and after PROJECTION_TTL_MS (tariffs have validity
  // dates); local_datetime is always brought to the current second.
  const PROJECTION_MAX = 50_000;
  const PROJECTION_TTL_MS = 60_000;
  const projections = new Map<number, { at: number; station: Station }>();
  let projectionsOf: Snapshot | undefined;
  const localNow = new Map<string, { second: number; text: string }>();

  function localDateTimeNow(timeZone: string): string {
    const now = clock.now();
    const second = Math.floor(now.getTime() / 1000);
    const hit = localNow.get(timeZone);
    if (hit?.second === second) return hit.text;
    const text = localIsoDateTime(now, timeZone);
    localNow.set(timeZone, { second, text });
    return text;
  }

  function project(s: Snapshot, i: number): Station {
    if (projectionsOf !== s) {
      projections.clear();
      projectionsOf = s;
    }
    const now = clock.now().getTime();
    let entry = projections.get(i);
    if (!entry || now - entry.at > PROJECTION_TTL_MS) {
      entry = { at: now, station: projectUncached(s, i) };
      if (projections.size >= PROJECTION_MAX) projections.delete(projections.keys().next().value as number);
      projections.set(i, entry);
    }
    const station = entry.station;
    const local = localDateTimeNow((s.locations[i] as OcpiLocation).time_zone);
    if (station.price_groups.every((g) => g.local_datetime === local)) return station;
    return { ...station, price_groups: station.price_groups.map((g) => ({ ...g, local_datetime: local })) };
  }

  function stationFeature(s: Snapshot, i: number): TileFeature {
    const location = s.locations[i] as OcpiLocation;
    const op = s.operatorOf[i] as number;
    const feature: TileFeature = {
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [location.coordinates.longitude, location.coordinates.latitude] },
      properties: {
        count: 1,
        speed: SPEED_CODES[s.speedCodes[i] as number] as Speed,
        status: STATUS_CODES[s.statusCodes[i] as number] as StationStatus,
        operator_id: s.operatorIds[op] as string,
      },
      station_id: s.stationIds[i] as string,
      custom_properties: { is_partner: s.operatorIsPartner[op] === 1 },
    };
    const price = s.priceHundredths[i] as number;
    if (price !== NO_PRICE) {
      feature.price_properties = {
        price: formatHundredths(price),
        type: s.priceIsTime[i] === 1 ? 'time_price' : 'charging_price',
        currency: s.currencies[s.currencyOf[i] as number] as string,
      };
    }
    return feature;
  }

  function computeTile(s: Snapshot, z: number, x: number, y: number, filter: StationFilter): TileFeature[] {
    const accept = matcher(s, filter);
    const items = tileItems(s.mortonCodes, z, x, y, accept, {
      longitudes: s.longitudes,
      latitudes: s.latitudes,
      speedCodes: s.speedCodes,
      status: (i) => STATUS_CODES[s.statusCodes[i] as number] as StationStatus,
    });
    return items.map((item) =>
      item.kind === 'station'
        ? stationFeature(s, item.index)
        : {
            type: 'Feature' as const,
            geometry: { type: 'Point' as const, coordinates: [item.longitude.toFixed(6), item.latitude.toFixed(6)] as [string, string] },
            properties: { count: item.count, expansion_zoom: item.expansionZoom, speed: SPEED_CODES[item.speedCode] as Speed, status: item.status },
            cluster_id: item.id,
          },
    );
  }

  return {
    reload,
    get size() {
      return snapshot.size;
    },

    /**
     * Stations within `distance` meters matching the filters, nearest first
     * (ties in catalogue order): the total count and one page, each with its
     * distance in meters.
     */
    around(query: AroundQuery, page: { offset: number; limit: number }): { count: number; results: (Station & { distance: number })[] } {
      const s = snapshot;
      const accept = matcher(s, query);
      const radiusKm = query.distance / 1000;
      const { longitude: lon, latitude: lat } = query;
      // The count needs every match but no order: bounding box, then the exact distance.
      const count = countWithin(s, lon, lat, radiusKm, accept);
      const wanted = page.offset + page.limit;
      if (count === 0 || page.offset >= count) return { count, results: [] };
      // The page needs order but only the nearest `wanted` (plus any tied with the last of them).
      let ids = kdAround(s.index, lon, lat, wanted, radiusKm, accept);
      if (ids.length === wanted && wanted < count) {
        const last = ids[ids.length - 1] as number;
        const lastKm = greatCircleKm(lon, lat, s.longitudes[last] as number, s.latitudes[last] as number);
        ids = kdAround(s.index, lon, lat, Number.POSITIVE_INFINITY, Math.min(radiusKm, lastKm + 0.0001), accept);
      }
      const hits = ids.map((i) => ({
        index: i,
        distance: Math.round(greatCircleKm(lon, lat, s.longitudes[i] as number, s.latitudes[i] as number) * 10_000) / 10,
      }));
      hits.sort((a, b) => a.distance - b.distance || (s.rank[a.index] as number) - (s.rank[b.index] as number));
      const results = hits.slice(page.offset, wanted).map((hit) => ({ ...project(s, hit.index), distance: hit.distance }));
      return { count, results };
    },

    /** Features of one map tile: single stations and clusters (cached briefly per tile and filter). */
    tile(z: number, x: number, y: number, filter: StationFilter): TileFeature[] {
      const s = snapshot;
      const key = `${s.version}|${z}/${x}/${y}|${JSON.stringify(filter)}`;
      const now = Date.now(); // cache age, not domain time
      const hit = tileCache.get(key);
      if (hit && now - hit.at < tileTtl) return hit.features;
      const features = computeTile(s, z, x, y, filter);
      if (tileCache.size >= TILE_CACHE_MAX) tileCache.delete(tileCache.keys().next().value as string);
      tileCache.set(key, { at: now, features });
      return features;
    },

    findByStationId(stationId: string): Station | undefined {
      const s = snapshot;
      const i = s.byStationId.get(stationId);
      return i === undefined ? undefined : project(s, i);
    },

    findByEvseId(evseId: string): Station | undefined {
      const s = snapshot;
      const i = s.byEvseId.get(evseId);
      return i === undefined ? undefined : project(s, i);
    },

    /**
     * An EVSE status change applied in place (no rebuild): around and details see
     * it at once, tiles when their cached copy expires.
     */
    applyEvseStatus(change: { country_code: string; party_id: string; location_id: string; uid: string; status: string; last_updated: string }): boolean {
      const s = snapshot;
      const i = s.byLocationKey.get(locationKey(change.country_code, change.party_id, change.location_id));
      if (i === undefined) return false;
      const location = s.locations[i] as OcpiLocation;
      const evse = (location.evses ?? []).find((e) => e.uid === change.uid);
      if (!evse) return false;
      if (Date.parse(evse.last_updated) > Date.parse(change.last_updated)) return true; // already newer here
      evse.status = change.status;
      evse.last_updated = change.last_updated;
      s.statusCodes[i] = STATUS_CODES.indexOf(stationStatus(location));
      if (projectionsOf === s) projections.delete(i);
      return true;
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
