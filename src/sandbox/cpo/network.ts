// The sandbox's charging network in memory: the generated dataset (parties,
// tariffs, locations), the scenario location of each scenario party, and the
// live EVSE statuses laid over it. The dataset is regenerated from (locations,
// seed) at every start; only the statuses that changed are stored (store.ts).
import { type GeneratedParty, generateCatalogue } from '../../dataset/generator.ts';
import type { EvseStatus, OcpiConnector, OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { PageQuery } from '../../ocpi-protocol/transport.ts';
import { tariffValidAt } from '../../pricing/tariff-engine.ts';
import { scenarioLocation, scenarioOf, scenarioTariff } from './scenarios.ts';

/** The generator's default `last_updated` stamp of every object. */
export const DATASET_EPOCH = '2026-01-01T00:00:00.000Z';

export interface EvseRef {
  location: OcpiLocation;
  evse: OcpiEvse;
}

export interface StatusOverride {
  location_id: string;
  evse_uid: string;
  status: EvseStatus;
  last_updated: Date;
}

export interface NetworkOptions {
  locations: number;
  seed: number;
  /** How many parties (the first ones of the generator's list) get a scenario location. */
  scenarioParties: number;
  /**
   * Only the generator's first `parties` parties, their locations and tariffs (an OCPI 2.1.1 network: one, as 2.1.1
   * credentials name one party; a small platform or hub: a few). Default: every party of the generator.
   */
  parties?: number;
}

const key = (locationId: string, evseUid: string) => `${locationId}\u0000${evseUid}`;
const tariffKey = (countryCode: string, partyId: string, id: string) => `${countryCode}*${partyId}*${id}`;

function inWindow(ms: number, page: PageQuery): boolean {
  return (!page.date_from || ms >= page.date_from.getTime()) && (!page.date_to || ms < page.date_to.getTime());
}

/** A page of `objects` (as a Sender interface serves them): those last updated in the page's window, from its offset. */
export function pageOfObjects<T extends { last_updated: string }>(objects: readonly T[], page: PageQuery): { items: T[]; total: number } {
  const matching = objects.filter((o) => inWindow(Date.parse(o.last_updated), page));
  return { items: matching.slice(page.offset, page.offset + page.limit), total: matching.length };
}

export function createNetwork(options: NetworkOptions) {
  const catalogue = generateCatalogue({ locations: options.locations, seed: options.seed, now: new Date(DATASET_EPOCH) });
  const parties: GeneratedParty[] = options.parties === undefined ? catalogue.parties : catalogue.parties.slice(0, options.parties);
  const ours =
    options.parties !== undefined
      ? (o: { country_code: string; party_id: string }) => parties.some((p) => p.country_code === o.country_code && p.party_id === o.party_id)
      : () => true;
  const scenarioParties = parties.slice(0, Math.max(0, options.scenarioParties));
  const tariffs: OcpiTariff[] = [...catalogue.tariffs.filter(ours), ...scenarioParties.map((p) => scenarioTariff(p, DATASET_EPOCH))];
  const locations: OcpiLocation[] = scenarioParties.map((p) => scenarioLocation(p, DATASET_EPOCH));
  for (const batch of catalogue.locations()) for (const location of batch) if (ours(location)) locations.push(location);

  const locationIndex = new Map<string, number>();
  locations.forEach((location, i) => {
    locationIndex.set(location.id, i);
  });
  const tariffIndex = new Map(tariffs.map((t) => [tariffKey(t.country_code, t.party_id, t.id), t]));
  const partyIndex = new Map(parties.map((p) => [`${p.country_code}*${p.party_id}`.toUpperCase(), p]));

  // Every ordinary EVSE as (location index, EVSE index), for random status changes.
  const pickable: [number, number][] = [];
  locations.forEach((location, li) => {
    location.evses?.forEach((evse, ei) => {
      if (!scenarioOf(evse.evse_id)) pickable.push([li, ei]);
    });
  });

  const baseUpdatedMs = Date.parse(DATASET_EPOCH);
  const updatedMs = new Float64Array(locations.length).fill(baseUpdatedMs);
  const overrides = new Map<string, { status: EvseStatus; last_updated: string }>();

  function applyStatus(o: StatusOverride): void {
    const i = locationIndex.get(o.location_id);
    if (i === undefined) return;
    overrides.set(key(o.location_id, o.evse_uid), { status: o.status, last_updated: o.last_updated.toISOString() });
    updatedMs[i] = Math.max(updatedMs[i] as number, o.last_updated.getTime());
  }

  function viewEvse(location: OcpiLocation, evse: OcpiEvse): OcpiEvse {
    const o = overrides.get(key(location.id, evse.uid));
    return o ? { ...evse, status: o.status, last_updated: o.last_updated } : evse;
  }

  function view(location: OcpiLocation): OcpiLocation {
    const i = locationIndex.get(location.id) as number;
    const ms = updatedMs[i] as number;
    if (ms === baseUpdatedMs) return location;
    return { ...location, evses: location.evses?.map((e) => viewEvse(location, e)), last_updated: new Date(ms).toISOString() };
  }

  return {
    parties,
    scenarioParties,
    tariffs,
    get locationCount(): number {
      return locations.length;
    },

    party(countryCode: string, partyId: string): GeneratedParty | undefined {
      return partyIndex.get(`${countryCode}*${partyId}`.toUpperCase());
    },

    location(id: string): OcpiLocation | undefined {
      const i = locationIndex.get(id);
      return i === undefined ? undefined : locations[i];
    },

    evse(locationId: string, evseUid: string): EvseRef | undefined {
      const i = locationIndex.get(locationId);
      const location = i === undefined ? undefined : locations[i];
      const evse = location?.evses?.find((e) => e.uid === evseUid);
      return location && evse ? { location, evse } : undefined;
    },

    /** The EVSE's current status (the generated one unless it changed since). */
    status(location: OcpiLocation, evse: OcpiEvse): EvseStatus {
      return (overrides.get(key(location.id, evse.uid))?.status ?? evse.status) as EvseStatus;
    },

    applyStatus,
    view,
    viewEvse,

    /** A page of Locations as served (statuses applied), oldest first, filtered on last_updated. */
    locationPage(page: PageQuery): { items: OcpiLocation[]; total: number } {
      if (!page.date_from && !page.date_to) {
        return { items: locations.slice(page.offset, page.offset + page.limit).map(view), total: locations.length };
      }
      const items: OcpiLocation[] = [];
      let total = 0;
      for (let i = 0; i < locations.length; i++) {
        if (!inWindow(updatedMs[i] as number, page)) continue;
        if (total >= page.offset && items.length < page.limit) items.push(view(locations[i] as OcpiLocation));
        total++;
      }
      return { items, total };
    },

    tariffPage(page: PageQuery): { items: OcpiTariff[]; total: number } {
      return pageOfObjects(tariffs, page);
    },

    tariff(countryCode: string, partyId: string, id: string): OcpiTariff | undefined {
      return tariffIndex.get(tariffKey(countryCode, partyId, id));
    },

    /** The tariff a session on this connector starting at `at` is billed under: the first valid one, preferring regular tariffs. */
    tariffFor(location: OcpiLocation, connector: OcpiConnector, at: Date): OcpiTariff | undefined {
      const candidates = (connector.tariff_ids ?? [])
        .map((id) => tariffIndex.get(tariffKey(location.country_code, location.party_id, id)))
        .filter((t): t is OcpiTariff => t !== undefined && tariffValidAt(t, at));
      return candidates.find((t) => t.type === undefined || t.type === 'REGULAR') ?? candidates[0];
    },

    /** An ordinary (non-scenario) EVSE chosen with `random` in [0, 1). */
    randomEvse(random: () => number): EvseRef | undefined {
      if (pickable.length === 0) return undefined;
      const [li, ei] = pickable[Math.floor(random() * pickable.length)] as [number, number];
      const location = locations[li] as OcpiLocation;
      return { location, evse: (location.evses as OcpiEvse[])[ei] as OcpiEvse };
    },
  };
}

export type Network = ReturnType<typeof createNetwork>;
