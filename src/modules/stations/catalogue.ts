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
import { DEFAULT_PRE_AUTHORIZATION, derivePriceGroups, type PreAuthorizationRule, type PriceGroup, type PriceGroupOptions } from './price-groups.ts';
import { connectorMask, operatorName, projectStation, type StationBase, stationStatus } from './projection.ts';
import * as repo from './repository.ts';

export type Station = StationBase & { price_groups: PriceGroup[] };

export interface AroundQuery {
  latitude: number;
  longitude: number;
  /** Radius in meters. */
  distance: number;
  connectorMask: number;
  onlyAvailable: boolean;
  onlyPartners: boolean;
  /** Lower-cased operator names; empty for any. */
  operators: string[];
}

interface Snapshot {
  size: number;
  stationIds: string[];
  locations: OcpiLocation[];
  index: KDBush;
  free: Uint8Array;
  connectorMasks: Uint32Array;
  operatorOf: Uint32Array;
  operatorNames: string[];
  operatorPhones: (string | null)[];
  byStationId: Map<string, number>;
  byEvseId: Map<string, number>;
  tariffs: Map<string, OcpiTariff>;
  partners: Map<string, repo.PartnerRow>;
}

/**
 * The operator's pricing settings, in euros; scaled into a location's currency
 * with UNITS_PER_EUR (the hold rule's minimum/maximum and round-up step too).
 */
export interface PricingConfig {
  /** Price per kWh excl. VAT applied where a CPO sent no tariff; undefined: no fallback. */
  fallbackKwhPriceEur?: string;
  /** Our own one-off fee per session excl. VAT; undefined: none. */
  startingFeeEur?: string;
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
}

const tariffKey = (countryCode: string, partyId: string, id: string) => `${countryCode}*${partyId}*${id}`;

function emptySnapshot(): Snapshot {
  const index = new KDBush(0);
  index.finish();
  return {
    size: 0,
    stationIds: [],
    locations: [],
    index,
    free: new Uint8Array(0),
    connectorMasks: new Uint32Array(0),
    operatorOf: new Uint32Array(0),
    operatorNames: [],
    operatorPhones: [],
    byStationId: new Map(),
    byEvseId: new Map(),
    tariffs: new Map(),
    partners: new Map(),
  };
}

async function buildSnapshot(db: Database): Promise<Snapshot> {
  const [parties, tariffRows, partnerRows] = await Promise.all([repo.listParties(db), repo.listTariffs(db), repo.listPartners(db)]);
  const partyByKey = new Map(parties.map((p) => [`${p.country_code}*${p.party_id}`, p]));
  const stationIds: string[] = [];
  const locations: OcpiLocation[] = [];
  for await (const batch of repo.streamLocations(db)) {
    for (const { stationId, location } of batch) {
      stationIds.push(stationId);
      locations.push(location);
    }
  }
  const size = locations.length;
  const index = new KDBush(size, 64);
  const free = new Uint8Array(size);
  const connectorMasks = new Uint32Array(size);
  const operatorOf = new Uint32Array(size);
  const operatorNames: string[] = [];
  const operatorPhones: (string | null)[] = [];
  const operatorIndex = new Map<string, number>();
  const byStationId = new Map<string, number>();
  const byEvseId = new Map<string, number>();
  for (let i = 0; i < size; i++) {
    const location = locations[i] as OcpiLocation;
    index.add(Number(location.coordinates.longitude), Number(location.coordinates.latitude));
    free[i] = stationStatus(location) === 'free' ? 1 : 0;
    connectorMasks[i] = connectorMask(location);
    const party = partyByKey.get(`${location.country_code}*${location.party_id}`);
    const name = operatorName(location, party?.name);
    let op = operatorIndex.get(name);
    if (op === undefined) {
      op = operatorNames.length;
      operatorIndex.set(name, op);
      operatorNames.push(name);
      operatorPhones.push(party?.phone ?? null);
    }
    operatorOf[i] = op;
    byStationId.set(stationIds[i] as string, i);
    for (const evse of location.evses ?? []) if (evse.evse_id && evse.status !== 'REMOVED') byEvseId.set(evse.evse_id, i);
  }
  index.finish();
  const tariffs = new Map(tariffRows.map((t) => [tariffKey(t.country_code, t.party_id, t.id), t]));
  const partners = new Map(partnerRows.map((p) => [p.name.toLowerCase(), p]));
  return { size, stationIds, locations, index, free, connectorMasks, operatorOf, operatorNames, operatorPhones, byStationId, byEvseId, tariffs, partners };
}

export function createCatalogue(options: CatalogueOptions) {
  const { db, clock } = options;
  let snapshot = emptySnapshot();
  let rebuilding: Promise<void> | undefined;
  let rebuildAgain = false;

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
          snapshot = await buildSnapshot(db);
          options.log?.('station catalogue loaded', { stations: snapshot.size, ms: Math.round(performance.now() - started) });
        } while (rebuildAgain);
      } finally {
        rebuilding = undefined;
      }
    })();
    return rebuilding;
  }

  function isPartner(s: Snapshot, i: number): boolean {
    return s.partners.has((s.operatorNames[s.operatorOf[i] as number] as string).toLowerCase());
  }

  function project(s: Snapshot, i: number): Station {
    const location = s.locations[i] as OcpiLocation;
    const op = s.operatorOf[i] as number;
    const name = s.operatorNames[op] as string;
    const base = projectStation(s.stationIds[i] as string, location, { name, phone: s.operatorPhones[op] ?? null }, s.partners.get(name.toLowerCase()));
    const price_groups = derivePriceGroups(location.evses ?? [], (tariffId) => s.tariffs.get(tariffKey(location.country_code, location.party_id, tariffId)), {
      ...pricingFor(location, options.pricing ?? DEFAULT_PRICING),
      now: clock.now(),
      timeZone: location.time_zone,
    });
    return { ...base, price_groups };
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
      const operators = query.operators;
      const predicate = (i: number) =>
        (query.connectorMask === 0 || ((s.connectorMasks[i] as number) & query.connectorMask) !== 0) &&
        (!query.onlyAvailable || s.free[i] === 1) &&
        (!query.onlyPartners || isPartner(s, i)) &&
        (operators.length === 0 || operators.includes((s.operatorNames[s.operatorOf[i] as number] as string).toLowerCase()));
      const ids = kdAround(s.index, query.longitude, query.latitude, Number.POSITIVE_INFINITY, query.distance / 1000, predicate);
      const hits = ids.map((i) => {
        const location = s.locations[i] as OcpiLocation;
        const km = greatCircleKm(query.longitude, query.latitude, Number(location.coordinates.longitude), Number(location.coordinates.latitude));
        return { index: i, distance: Math.round(km * 10_000) / 10 }; // meters, to 0.1 m
      });
      hits.sort((a, b) => a.distance - b.distance || a.index - b.index);
      const results = hits.slice(page.offset, page.offset + page.limit).map((hit) => ({ ...project(s, hit.index), distance: hit.distance }));
      return { count: hits.length, results };
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

    partners(): repo.PartnerRow[] {
      return [...snapshot.partners.values()].sort((a, b) => a.name.localeCompare(b.name));
    },

    /** Every station's coordinates and index, for brute-force checks in tests and benchmarks. */
    points(): { index: number; latitude: number; longitude: number }[] {
      return snapshot.locations.map((l, index) => ({ index, latitude: Number(l.coordinates.latitude), longitude: Number(l.coordinates.longitude) }));
    },
  };
}

export type Catalogue = ReturnType<typeof createCatalogue>;
