// One immutable-in-shape picture of the whole station catalogue, as the
// in-memory catalogue holds it (see catalogue.ts). Built from the database in
// one streaming pass, then renumbered in Morton order.
//
// Memory is the constraint (a million EVSEs must fit, with the rest of the
// process, in 1 GB): a snapshot keeps no OCPI objects. Per station it keeps its
// id, its "head" (the JSON text of id, name, address and coordinates as the CPO
// wrote them) and typed arrays; per EVSE its uid, its evse_id as JSON text,
// its status, its last_updated and the index of its interned connector set.
// Heads and evse_id texts are made after the Morton renumbering, in Morton
// order: V8 places objects about in the order they are made, so the text of
// stations near each other on the map lies near each other in memory (an
// around page then reads a few pages of memory instead of one per station).
// What many stations share is interned once: connector sets (per party),
// opening hours, amenities, time zones, operators, and "layouts" (a party,
// a country and the connector sets of the live EVSEs), which carry the price
// groups of every station built the same way.

import Big from 'big.js';
import KDBush from 'kdbush';
import { EVSE_STATUSES, type OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Database } from '../../platform/db.ts';
import { withVat } from '../../platform/money.ts';
import { type PricingConfig, pricingFor } from '../../pricing/country-pricing.ts';
import { WEEKDAYS } from '../../pricing/local-time.ts';
import { connectorPowerKw, type GroupedEvse, type PriceGroupOptions } from '../../pricing/price-groups.ts';
import { AMENITIES, connectorBit, type Speed, type StationStatus, speedOf, statusOf } from './projection.ts';
import * as repo from './repository.ts';
import { buildCellSummary, type CellSummary, mortonCode } from './tiles.ts';

export const STATUS_CODES: readonly StationStatus[] = ['free', 'busy', 'error', 'unknown'];
export const SPEED_CODES: readonly Speed[] = ['slow', 'fast', 'turbo'];
export const NO_PRICE = -1;
export const REMOVED = EVSE_STATUSES.indexOf('REMOVED');

/** Connectors of one EVSE, interned per party (tariff ids are the party's). */
export interface ConnectorSet {
  connectors: GroupedEvse['connectors'];
  mask: number;
  maxPowerKw: number;
}

/** Stations of one party and country whose live EVSEs have the same connector sets, in order, share price groups. */
export interface Layout {
  party: number;
  country: number;
  /** One stand-in EVSE per live EVSE; its uid is its position among the station's live EVSEs. */
  evses: GroupedEvse[];
}

/**
 * The rendered price groups of every layout, compact: writing a station reads
 * one entry of one typed array instead of a chain of objects per layout (each
 * a cache miss when the catalogue is large). Filled by the catalogue.
 */
export interface GroupTable {
  /**
   * Per layout: the clock range [from, until) in which its entry holds (tariffs have validity
   * dates), and the entry's offset in `codes` (-1 until derived).
   */
  meta: Float64Array;
  /** Entries: number of groups, then per group: its item, its number of EVSEs and their positions among the station's live EVSEs. */
  codes: Int32Array;
  /** Length of `codes` in use. */
  used: number;
  /** Per item (a group's type, power and prices): `{"type":…,"power":…,"evse_ids":[`. */
  open: string[];
  /** Per item: `],"prices":…,"currency":…,"pre_authorization_amount":…,"is_fallback":…,"local_datetime":"`. */
  close: string[];
  /** Item by its text. */
  items: Map<string, number>;
}

export interface LayoutGroup {
  /** `"type":…,"power":…` */
  head: string;
  /** Positions of the group's EVSEs among the station's live EVSEs. */
  positions: number[];
  /** `"prices":…,"currency":…,"pre_authorization_amount":…,"is_fallback":…` */
  priced: string;
}

export interface Party {
  country_code: string;
  party_id: string;
}

export interface Snapshot {
  version: number;
  size: number;
  index: KDBush;
  // Per station, numbered in Morton order.
  /**
   * Stations by id (the id is in the station's head, see stationIdAt): FNV hash of the id *
   * 2^stationIndexBits + station, sorted; a lookup binary-searches the hash, then compares the ids.
   */
  stationLookup: Float64Array;
  stationIndexBits: number;
  /**
   * OCPI Location ids (with the party, the key CPOs use), one after another in one string (no
   * string per station): station i's is locationIdText[locationIdStart[i] .. locationIdStart[i + 1]).
   */
  locationIdText: string;
  locationIdStart: Uint32Array;
  /**
   * `{"id":…,"name":…,"address":…,"coordinates":{…},"opening_times":` as one flat string, made
   * in Morton order during the build (see writeStationsAndEvses), so neighbours on the map are neighbours in memory.
   */
  heads: string[];
  longitudes: Float64Array;
  latitudes: Float64Array;
  /** cos(latitude) as geokdbush computes it, for distance tests, by k-d position (see kdPosition). */
  kdCosLatitudes: Float64Array;
  /** Catalogue (database) order of each station: breaks distance ties. */
  rank: Uint32Array;
  /** Morton code of each station, ascending. */
  mortonCodes: Float64Array;
  updatedMs: Float64Array;
  partyOf: Uint16Array;
  hoursOf: Uint16Array;
  amenitiesOf: Uint16Array;
  zoneOf: Uint16Array;
  countryOf: Uint16Array;
  layoutOf: Uint32Array;
  statusCodes: Uint8Array;
  speedCodes: Uint8Array;
  connectorMasks: Uint32Array;
  operatorOf: Uint32Array;
  /** Price shown on the map, in hundredths of the currency (NO_PRICE when none). */
  priceHundredths: Int32Array;
  priceIsTime: Uint8Array;
  currencyOf: Uint8Array;
  /** EVSEs of station i are evseStart[i] .. evseStart[i + 1] - 1, in the CPO's order. */
  evseStart: Uint32Array;
  /**
   * Class of each station: stations with the same connector mask, speed, operator and map
   * price are told apart by no filter but the status one (classes are numbered from 0).
   */
  classOf: Uint32Array;
  classMask: Uint32Array;
  classSpeed: Uint8Array;
  classOperator: Uint32Array;
  classPrice: Int32Array;
  /** Per-cell sums of classes, for tiles at low zooms (statuses as STATUS_CODES). */
  cellSummary: CellSummary;
  /** Position of each station in the k-d index (index.ids[kdPosition[i]] === i). */
  kdPosition: Uint32Array;
  /** classOf * STATUS_CODES.length + status code of the station at each k-d position. */
  kdClassStatus: Uint32Array;
  // Per EVSE.
  /** EVSE uids, one after another (as locationIdText): EVSE e's ends where EVSE e + 1's starts. */
  evseUidText: string;
  evseUidStart: Uint32Array;
  /** evse_id (else uid) as a JSON string. */
  evseIdJson: string[];
  /** Index in EVSE_STATUSES. */
  evseStatus: Uint8Array;
  evseUpdatedMs: Float64Array;
  evseSet: Uint32Array;
  /**
   * Live EVSEs by evse_id (else uid): hash(evseIdJson) * 2^indexBits + EVSE
   * index, sorted; a lookup binary-searches the hash, then compares the ids.
   */
  evseLookup: Float64Array;
  evseIndexBits: number;
  // Shared tables.
  parties: Party[];
  hoursJson: string[];
  amenitiesJson: string[];
  zones: string[];
  countries: string[];
  connectorSets: ConnectorSet[];
  layouts: Layout[];
  /** Price groups of the layouts, as written (see GroupTable). */
  groupTable: GroupTable;
  operatorNames: string[];
  /** Operator names lower-cased, as filters name them. */
  operatorKeys: string[];
  operatorIds: string[];
  /** `"operator":{…},"is_partner":…[,"logo_url":…]` */
  operatorJson: string[];
  operatorIsPartner: Uint8Array;
  currencies: string[];
  tariffs: Map<string, OcpiTariff>;
  partners: Map<string, repo.PartnerRow>;
  /** Prices per (tariff, power, pricing options), shared by the stations of this snapshot. */
  priceMemo: NonNullable<PriceGroupOptions['memo']>;
}

export const tariffKey = (countryCode: string, partyId: string, id: string) => `${countryCode}*${partyId}*${id}`;

/** The price a map shows for a tariff: its highest kWh price incl. VAT, else its highest time price per minute incl. VAT. */
function tariffMapPrice(tariff: OcpiTariff): MapPrice | undefined {
  let best: Big | undefined;
  let bestTime: Big | undefined;
  for (const element of tariff.elements) {
    if (element.restrictions?.reservation) continue;
    for (const component of element.price_components) {
      const gross = withVat(component.price, component.vat ?? 0);
      if (component.type === 'ENERGY' && (!best || gross.gt(best))) best = gross;
      if (component.type === 'TIME' && (!bestTime || gross.gt(bestTime))) bestTime = gross;
    }
  }
  if (best) return { hundredths: Number(best.times(100).round(0, Big.roundHalfUp)), isTime: false, currency: tariff.currency };
  if (bestTime) return { hundredths: Number(bestTime.div(60).times(100).round(0, Big.roundHalfUp)), isTime: true, currency: tariff.currency };
  return undefined;
}

interface MapPrice {
  hundredths: number;
  isTime: boolean;
  currency: string;
}

/** The cheaper of two map prices (a kWh price beats a time price). */
function cheaper(a: MapPrice | undefined, b: MapPrice | undefined): MapPrice | undefined {
  if (!a || !b) return a ?? b;
  if (a.isTime !== b.isTime) return a.isTime ? b : a;
  return b.hundredths < a.hundredths ? b : a;
}

/** Returns the index of `key` in `table`, adding it (made by `make`) when new. */
function intern<T>(index: Map<string, number>, table: T[], key: string, make: () => T): number {
  let k = index.get(key);
  if (k === undefined) {
    k = table.length;
    table.push(make());
    index.set(key, k);
  }
  return k;
}

/** OCPI opening_times as the API shows them: upper-case weekday names, twentyfourseven defaulting to true. */
function openingTimesJson(text: string | null): string {
  const hours = text
    ? (JSON.parse(text) as { twentyfourseven?: boolean; regular_hours?: { weekday: number; period_begin: string; period_end: string }[] })
    : {};
  return JSON.stringify({
    twentyfourseven: hours.twentyfourseven ?? true,
    regular_hours: (hours.regular_hours ?? []).map((h) => ({
      weekday: WEEKDAYS[h.weekday - 1] ?? 'MONDAY',
      period_begin: h.period_begin,
      period_end: h.period_end,
    })),
  });
}

function amenitiesJson(text: string | null): string {
  const facilities = text ? (JSON.parse(text) as string[]) : [];
  return JSON.stringify(facilities.filter((f) => (AMENITIES as readonly string[]).includes(f)));
}

const WIDE = /[\u0100-\uffff]/;
const WIDE_ALL = /[\u0100-\uffff]/g;

/**
 * JSON text with its characters above U+00FF escaped (\uXXXX, the same JSON
 * value), as a one-byte string: one two-byte string makes a whole answer two
 * bytes a character, and five times slower to send. V8 keeps the two-byte form
 * through `replace` (and slices and joins) whatever the characters, so the
 * escaped text is made again by JSON.parse, which picks the form by content.
 */
function escapeWide(json: string): string {
  if (!WIDE.test(json)) return json;
  return JSON.parse(JSON.stringify(json.replace(WIDE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))) as string;
}

/**
 * JSON text as answers are written from it: one-byte (see escapeWide), and
 * flattened: a string made by concatenation is a tree of its parts until
 * something needs it in one piece, and V8 then copies the parts together every
 * time the tree is part of a larger one. Converting a string to a number
 * flattens it in place.
 */
export function fragment(json: string): string {
  const text = escapeWide(json);
  Number(text);
  return text;
}

/** How every station's head starts and ends (see Snapshot.heads). */
const HEAD_START = '{"id":"';
const HEAD_END = '},"opening_times":';

/** The coordinates of a station as JSON text (as the CPO wrote them), read back from its head. */
export function coordinatesJson(s: Snapshot, i: number): { latitude: string; longitude: string } {
  const head = s.heads[i] as string;
  const end = head.length - HEAD_END.length;
  const longitudeAt = head.lastIndexOf(',"longitude":', end);
  const latitudeAt = head.lastIndexOf(',"coordinates":{"latitude":', longitudeAt);
  return {
    latitude: head.slice(latitudeAt + ',"coordinates":{"latitude":'.length, longitudeAt),
    longitude: head.slice(longitudeAt + ',"longitude":'.length, end),
  };
}

function nameAddressJson(row: repo.CatalogueLocationRow): string {
  const postalCity = [row.postal_code, row.city].filter(Boolean).join(' ');
  const address = [row.address, postalCity].filter(Boolean).join(', ');
  return `"name":${JSON.stringify(row.name ?? row.address)},"address":${JSON.stringify(address)}`;
}

type ConnectorTuple = [string, string, number, number, number | null, string[] | null];

function connectorSetOf(text: string): ConnectorSet {
  const connectors = (JSON.parse(text) as ConnectorTuple[]).map(([standard, power_type, max_voltage, max_amperage, max_electric_power, tariff_ids]) => ({
    standard,
    power_type,
    max_voltage,
    max_amperage,
    ...(max_electric_power === null ? {} : { max_electric_power }),
    ...(tariff_ids === null ? {} : { tariff_ids }),
  }));
  let mask = 0;
  let maxPowerKw = 0;
  for (const c of connectors) {
    mask |= connectorBit(c.standard);
    maxPowerKw = Math.max(maxPowerKw, connectorPowerKw(c));
  }
  return { connectors, mask: mask >>> 0, maxPowerKw };
}

/** A station's status from its EVSEs' status codes (contract rules, REMOVED EVSEs ignored). */
export function stationStatusCode(s: Pick<Snapshot, 'evseStart' | 'evseStatus'>, i: number): number {
  const statuses: string[] = [];
  for (let e = s.evseStart[i] as number; e < (s.evseStart[i + 1] as number); e++) {
    const code = s.evseStatus[e] as number;
    if (code !== REMOVED) statuses.push(EVSE_STATUSES[code] as string);
  }
  return STATUS_CODES.indexOf(statusOf(statuses));
}

/** The operator of stations (one per party and name, see addBatch). */
interface Operator {
  name: string;
  id: string;
  phone: string | null;
}

/** Map price of a connector set: the cheapest of its connectors' first known tariffs; `without` when a connector has none. */
interface SetPrice {
  price: MapPrice | undefined;
  without: boolean;
}

/** What a build has read of the catalogue so far, in catalogue order (addBatch adds to it, finishSnapshot numbers it in Morton order). */
interface Collected {
  version: number;
  tariffs: Map<string, OcpiTariff>;
  partners: Map<string, repo.PartnerRow>;
  partyNames: Map<string, repo.PartyRow>;
  // The text of each batch's stations, and of their ids, one string each per batch (no string
  // kept per station or EVSE while the catalogue is read: the strings the snapshot keeps are made
  // by finishSnapshot). Head texts are one-byte (escaped JSON); id texts are the ids as the CPOs wrote them.
  headTexts: string[];
  idTexts: string[];
  // Per station, in catalogue order: its batch, where the middle of its head
  // (`id","name":…,"coordinates":{…}`) starts and ends in the batch's head text, and where its
  // location id starts and ends in the batch's id text.
  textOf: number[];
  headFrom: number[];
  headTo: number[];
  locationIdFrom: number[];
  locationIdTo: number[];
  lons: number[];
  lats: number[];
  updated: number[];
  // Indexes into the shared tables, per station.
  of: { party: number[]; hours: number[]; amenities: number[]; zone: number[]; country: number[] };
  layoutOf: number[];
  operatorOf: number[];
  priceOf: number[];
  evseCount: number[];
  // Per EVSE, in catalogue order, in its batch's id text: where its uid starts and ends (and its
  // evse_id, else uid, starts), and where that ends.
  uidFrom: number[];
  uidTo: number[];
  evseIdTo: number[];
  evseStatus: number[];
  evseUpdated: number[];
  evseSet: number[];
  tables: {
    parties: Party[];
    hoursJson: string[];
    amenitiesJson: string[];
    zones: string[];
    countries: string[];
    connectorSets: ConnectorSet[];
    layouts: Layout[];
    operators: Operator[];
    mapPrices: (MapPrice | undefined)[];
  };
  indexes: {
    parties: Map<string, number>;
    hours: Map<string, number>;
    amenities: Map<string, number>;
    zones: Map<string, number>;
    countries: Map<string, number>;
    layouts: Map<string, number>;
    operators: Map<string, number>;
    mapPrices: Map<string, number>;
  };
  /** Connector sets by party, then by their text. */
  setsByParty: Map<string, number>[];
  /** Map price per connector set (see SetPrice). */
  setPrices: Map<number, SetPrice>;
}

/** Collects a catalogue batch by batch in catalogue order, then numbers the stations in Morton order. */
function snapshotBuilder(version: number, tariffs: Map<string, OcpiTariff>, partners: Map<string, repo.PartnerRow>, partyNames: Map<string, repo.PartyRow>) {
  const collected: Collected = {
    version,
    tariffs,
    partners,
    partyNames,
    headTexts: [],
    idTexts: [],
    textOf: [],
    headFrom: [],
    headTo: [],
    locationIdFrom: [],
    locationIdTo: [],
    lons: [],
    lats: [],
    updated: [],
    of: { party: [], hours: [], amenities: [], zone: [], country: [] },
    layoutOf: [],
    operatorOf: [],
    priceOf: [],
    evseCount: [],
    uidFrom: [],
    uidTo: [],
    evseIdTo: [],
    evseStatus: [],
    evseUpdated: [],
    evseSet: [],
    tables: { parties: [], hoursJson: [], amenitiesJson: [], zones: [], countries: [], connectorSets: [], layouts: [], operators: [], mapPrices: [] },
    indexes: {
      parties: new Map(),
      hours: new Map(),
      amenities: new Map(),
      zones: new Map(),
      countries: new Map(),
      layouts: new Map(),
      operators: new Map(),
      mapPrices: new Map(),
    },
    setsByParty: [],
    setPrices: new Map(),
  };
  return {
    add: (batch: repo.CatalogueBatch, fallbackPrice: (country: string) => MapPrice | undefined): void => addBatch(collected, batch, fallbackPrice),
    finish: (): Snapshot => finishSnapshot(collected),
  };
}

/** The map price of a party's connector set (see SetPrice), worked out once per set. */
function setPrice(c: Collected, set: number, party: Party): SetPrice {
  let known = c.setPrices.get(set);
  if (!known) {
    known = { price: undefined, without: false };
    for (const connector of (c.tables.connectorSets[set] as ConnectorSet).connectors) {
      const tariff = (connector.tariff_ids ?? []).map((id) => c.tariffs.get(tariffKey(party.country_code, party.party_id, id))).find((t) => t !== undefined);
      if (tariff) known.price = cheaper(known.price, tariffMapPrice(tariff));
      else known.without = true;
    }
    c.setPrices.set(set, known);
  }
  return known;
}

/** Adds one batch of the catalogue: its texts, its stations and EVSEs, interning what they share. */
function addBatch(c: Collected, batch: repo.CatalogueBatch, fallbackPrice: (country: string) => MapPrice | undefined): void {
  const { headTexts, idTexts, textOf, headFrom, headTo, locationIdFrom, locationIdTo, lons, lats, updated, of, layoutOf, operatorOf, priceOf, evseCount } = c;
  const { uidFrom, uidTo, evseIdTo, evseStatus, evseUpdated, evseSet, tables, indexes, setsByParty, partyNames } = c;
  const batchNumber = headTexts.length;
  const heads: string[] = [];
  let headAt = 0;
  const ids: string[] = [];
  let idAt = 0;
  const putId = (id: string) => {
    ids.push(id);
    idAt += id.length;
  };
  batch.locations.forEach((row, k) => {
    const evses = batch.evses[k] as repo.CatalogueEvseRow[];
    const partyKey = `${row.country_code}*${row.party_id}`;
    const party = intern(indexes.parties, tables.parties, partyKey, () => ({ country_code: row.country_code, party_id: row.party_id }));
    const country = intern(indexes.countries, tables.countries, row.country, () => row.country);
    const name = row.operator_name ?? partyNames.get(partyKey)?.name ?? partyKey;
    // One entry per (party, name): two parties may sell under one brand name.
    const operator = intern(indexes.operators, tables.operators, `${partyKey}\u0000${name}`, () => ({
      name,
      id: partyKey,
      phone: partyNames.get(partyKey)?.phone ?? null,
    }));
    const liveSets: number[] = [];
    let price: MapPrice | undefined;
    let without = false;
    for (const evse of evses) {
      // Per party, by the connectors' text itself (no key string made per EVSE).
      let setsOfParty = setsByParty[party];
      if (setsOfParty === undefined) {
        setsOfParty = new Map();
        setsByParty[party] = setsOfParty;
      }
      const set = intern(setsOfParty, tables.connectorSets, evse.connectors, () => connectorSetOf(evse.connectors));
      const status = EVSE_STATUSES.indexOf(evse.status as (typeof EVSE_STATUSES)[number]);
      uidFrom.push(idAt);
      putId(evse.uid);
      uidTo.push(idAt);
      putId(evse.evse_id ?? evse.uid);
      evseIdTo.push(idAt);
      evseStatus.push(status < 0 ? EVSE_STATUSES.indexOf('UNKNOWN') : status);
      evseUpdated.push(evse.updated_ms);
      evseSet.push(set);
      if (status === REMOVED) continue;
      liveSets.push(set);
      const p = setPrice(c, set, tables.parties[party] as Party);
      price = cheaper(price, p.price);
      without ||= p.without;
    }
    if (!price && without) price = fallbackPrice(row.country);
    const layout = intern(indexes.layouts, tables.layouts, `${party}|${country}|${liveSets.join(',')}`, () => ({
      party,
      country,
      evses: liveSets.map((set, position) => ({
        uid: String(position),
        status: 'AVAILABLE',
        connectors: (tables.connectorSets[set] as ConnectorSet).connectors,
      })),
    }));
    const priceKey = price ? `${price.hundredths}|${price.isTime}|${price.currency}` : '';
    textOf.push(batchNumber);
    const head = escapeWide(
      `${row.station_id}",${nameAddressJson(row)},"coordinates":{"latitude":${JSON.stringify(row.latitude_text)},"longitude":${JSON.stringify(row.longitude_text)}`,
    );
    heads.push(head);
    headFrom.push(headAt);
    headAt += head.length;
    headTo.push(headAt);
    locationIdFrom.push(idAt);
    putId(row.id);
    locationIdTo.push(idAt);
    lons.push(row.longitude);
    lats.push(row.latitude);
    updated.push(row.updated_ms);
    evseCount.push(evses.length);
    of.party.push(party);
    // Numbered here, written by finishSnapshot.
    of.hours.push(intern(indexes.hours, tables.hoursJson, row.opening_times ?? '', () => ''));
    of.amenities.push(intern(indexes.amenities, tables.amenitiesJson, row.facilities ?? '', () => ''));
    of.zone.push(intern(indexes.zones, tables.zones, row.time_zone, () => row.time_zone));
    of.country.push(country);
    layoutOf.push(layout);
    operatorOf.push(operator);
    priceOf.push(intern(indexes.mapPrices, tables.mapPrices, priceKey, () => price));
  });
  headTexts.push(heads.join(''));
  idTexts.push(ids.join(''));
}

/** The snapshot of what was collected, its stations numbered in Morton order. */
function finishSnapshot(c: Collected): Snapshot {
  const size = c.textOf.length;
  // Stations are numbered in Morton (Z-order) of their position, so a map
  // tile (a contiguous Morton range) reads the per-station arrays sequentially.
  const codes = new Float64Array(size);
  for (let r = 0; r < size; r++) codes[r] = mortonCode(c.lons[r] as number, c.lats[r] as number);
  const order = Uint32Array.from({ length: size }, (_, r) => r).sort((a, b) => (codes[a] as number) - (codes[b] as number) || a - b);
  const firstEvse = new Uint32Array(size + 1);
  for (let r = 0; r < size; r++) firstEvse[r + 1] = (firstEvse[r] as number) + (c.evseCount[r] as number);
  const evses = c.uidFrom.length;
  const s = snapshotInMortonOrder(c, order, codes);
  writeStationsAndEvses(s, c, order, firstEvse);
  s.index.finish();
  numberClasses(s);
  for (let k = 0; k < size; k++) {
    const i = s.index.ids[k] as number;
    s.kdPosition[i] = k;
    s.kdClassStatus[k] = (s.classOf[i] as number) * STATUS_CODES.length + (s.statusCodes[i] as number);
    s.kdCosLatitudes[k] = Math.cos((s.latitudes[i] as number) * (Math.PI / 180));
  }
  s.cellSummary = buildCellSummary(s.mortonCodes, s.classOf, STATUS_CODES.length, s);
  indexEvseIds(s, evses);
  indexStationIds(s);
  return s;
}

/**
 * A new snapshot of what was collected, stations in Morton `order` (`codes`: Morton code by
 * catalogue order): what is known per station taken over in that order, the shared tables
 * written, and the arrays that writeStationsAndEvses and finishSnapshot fill allocated.
 */
function snapshotInMortonOrder(c: Collected, order: Uint32Array, codes: Float64Array): Snapshot {
  const { lons, lats, updated, of, layoutOf, operatorOf, tables, indexes, partners } = c;
  const size = c.textOf.length;
  const evses = c.uidFrom.length;
  return {
    version: c.version,
    size,
    // Leaves of 128: fewer nodes to test against a large circle (about 5 % off slow counts at 3M EVSEs than 64).
    index: new KDBush(size, 128),
    stationLookup: new Float64Array(0),
    stationIndexBits: 0,
    locationIdText: '',
    locationIdStart: new Uint32Array(size + 1),
    heads: new Array<string>(size),
    longitudes: Float64Array.from(order, (r) => lons[r] as number),
    latitudes: Float64Array.from(order, (r) => lats[r] as number),
    kdCosLatitudes: new Float64Array(size),
    rank: order,
    mortonCodes: Float64Array.from(order, (r) => codes[r] as number),
    updatedMs: Float64Array.from(order, (r) => updated[r] as number),
    partyOf: Uint16Array.from(order, (r) => of.party[r] as number),
    hoursOf: Uint16Array.from(order, (r) => of.hours[r] as number),
    amenitiesOf: Uint16Array.from(order, (r) => of.amenities[r] as number),
    zoneOf: Uint16Array.from(order, (r) => of.zone[r] as number),
    countryOf: Uint16Array.from(order, (r) => of.country[r] as number),
    layoutOf: Uint32Array.from(order, (r) => layoutOf[r] as number),
    statusCodes: new Uint8Array(size),
    speedCodes: new Uint8Array(size),
    connectorMasks: new Uint32Array(size),
    operatorOf: Uint32Array.from(order, (r) => operatorOf[r] as number),
    priceHundredths: new Int32Array(size),
    priceIsTime: new Uint8Array(size),
    currencyOf: new Uint8Array(size),
    evseStart: new Uint32Array(size + 1),
    classOf: new Uint32Array(size),
    classMask: new Uint32Array(0),
    classSpeed: new Uint8Array(0),
    classOperator: new Uint32Array(0),
    classPrice: new Int32Array(0),
    cellSummary: undefined as unknown as CellSummary,
    kdPosition: new Uint32Array(size),
    kdClassStatus: new Uint32Array(size),
    evseUidText: '',
    evseUidStart: new Uint32Array(evses + 1),
    evseIdJson: new Array<string>(evses),
    evseStatus: new Uint8Array(evses),
    evseUpdatedMs: new Float64Array(evses),
    evseSet: new Uint32Array(evses),
    evseLookup: new Float64Array(0),
    evseIndexBits: 0,
    parties: tables.parties,
    // Made again here, one after the other (see headTexts): amenities are many (16,000 at 3M EVSEs).
    hoursJson: Array.from(indexes.hours.keys(), (text) => fragment(openingTimesJson(text || null))),
    amenitiesJson: Array.from(indexes.amenities.keys(), (text) => fragment(amenitiesJson(text || null))),
    zones: tables.zones,
    countries: tables.countries,
    connectorSets: tables.connectorSets,
    layouts: tables.layouts,
    groupTable: {
      meta: new Float64Array(3 * tables.layouts.length).fill(-1),
      codes: new Int32Array(8 * tables.layouts.length),
      used: 0,
      open: [],
      close: [],
      items: new Map(),
    },
    operatorNames: tables.operators.map((o) => o.name),
    operatorKeys: tables.operators.map((o) => o.name.toLowerCase()),
    operatorIds: tables.operators.map((o) => o.id),
    operatorJson: tables.operators.map(({ name, phone }) => {
      const partner = partners.get(name.toLowerCase());
      const operator = JSON.stringify({ name, contact: { phone } });
      return fragment(`"operator":${operator},"is_partner":${partner !== undefined}${partner ? `,"logo_url":${JSON.stringify(partner.logo_url)}` : ''}`);
    }),
    operatorIsPartner: Uint8Array.from(tables.operators, (o) => (partners.has(o.name.toLowerCase()) ? 1 : 0)),
    currencies: [],
    tariffs: c.tariffs,
    partners,
    priceMemo: new Map(),
  };
}

/**
 * Writes each station (in Morton order) and its EVSEs into `s`: the k-d index points, heads, ids,
 * EVSE facts, and what the station shows of them (connectors, speed, status, map price).
 */
function writeStationsAndEvses(s: Snapshot, c: Collected, order: Uint32Array, firstEvse: Uint32Array): void {
  const { textOf, headTexts, idTexts, headFrom, headTo, locationIdFrom, locationIdTo, priceOf, tables } = c;
  const { uidFrom, uidTo, evseIdTo, evseStatus, evseUpdated, evseSet } = c;
  const size = textOf.length;
  const evses = uidFrom.length;
  const currencyIndex = new Map<string, number>();
  // Ids as one text each (Morton order); every string the snapshot keeps is made here, after
  // the catalogue was read: what reading it left in memory is then all garbage, in whole pages.
  const locationIdParts = new Array<string>(size);
  const evseUidParts = new Array<string>(evses);
  let e = 0;
  for (let i = 0; i < size; i++) {
    const r = order[i] as number;
    const batch = textOf[r] as number;
    const idText = idTexts[batch] as string;
    s.index.add(s.longitudes[i] as number, s.latitudes[i] as number);
    // Allocated here, in Morton order: a station's text and its EVSEs' ids lie beside its neighbours'.
    s.heads[i] = fragment([HEAD_START, (headTexts[batch] as string).slice(headFrom[r] as number, headTo[r] as number), HEAD_END].join(''));
    const locationId = idText.slice(locationIdFrom[r] as number, locationIdTo[r] as number);
    locationIdParts[i] = locationId;
    s.locationIdStart[i + 1] = (s.locationIdStart[i] as number) + locationId.length;
    s.evseStart[i] = e;
    let mask = 0;
    let maxPower = 0;
    for (let from = firstEvse[r] as number; from < (firstEvse[r + 1] as number); from++, e++) {
      const uid = idText.slice(uidFrom[from] as number, uidTo[from] as number);
      evseUidParts[e] = uid;
      s.evseUidStart[e + 1] = (s.evseUidStart[e] as number) + uid.length;
      s.evseIdJson[e] = fragment(JSON.stringify(idText.slice(uidTo[from] as number, evseIdTo[from] as number)));
      s.evseStatus[e] = evseStatus[from] as number;
      s.evseUpdatedMs[e] = evseUpdated[from] as number;
      s.evseSet[e] = evseSet[from] as number;
      if (s.evseStatus[e] === REMOVED) continue;
      const set = s.connectorSets[s.evseSet[e] as number] as ConnectorSet;
      mask |= set.mask;
      maxPower = Math.max(maxPower, set.maxPowerKw);
    }
    s.evseStart[i + 1] = e;
    s.connectorMasks[i] = mask >>> 0;
    s.speedCodes[i] = SPEED_CODES.indexOf(speedOf(maxPower));
    s.statusCodes[i] = stationStatusCode(s, i);
    const price = tables.mapPrices[priceOf[r] as number];
    s.priceHundredths[i] = price ? price.hundredths : NO_PRICE;
    s.priceIsTime[i] = price?.isTime ? 1 : 0;
    s.currencyOf[i] = intern(currencyIndex, s.currencies, price?.currency ?? '', () => price?.currency ?? '');
  }
  s.locationIdText = locationIdParts.join('');
  s.evseUidText = evseUidParts.join('');
}

/** Live EVSEs by evse_id (else uid), for details by EVSE id: numbers, sorted natively (see Snapshot.evseLookup). */
function indexEvseIds(s: Snapshot, evses: number): void {
  s.evseIndexBits = Math.max(1, Math.ceil(Math.log2(evses + 1)));
  const hashRange = 2 ** (53 - s.evseIndexBits);
  const keys: number[] = [];
  for (let k = 0; k < evses; k++) {
    if (s.evseStatus[k] !== REMOVED) keys.push((hashOf(s.evseIdJson[k] as string) % hashRange) * 2 ** s.evseIndexBits + k);
  }
  s.evseLookup = Float64Array.from(keys).sort();
}

/** Stations by id, the same way as EVSEs (see Snapshot.stationLookup). */
function indexStationIds(s: Snapshot): void {
  const size = s.size;
  s.stationIndexBits = Math.max(1, Math.ceil(Math.log2(size + 1)));
  const stationUnit = 2 ** s.stationIndexBits;
  const stationHashRange = 2 ** (53 - s.stationIndexBits);
  s.stationLookup = new Float64Array(size);
  for (let i = 0; i < size; i++) {
    const head = s.heads[i] as string;
    s.stationLookup[i] = (hashOf(head, HEAD_START.length, head.indexOf('"', HEAD_START.length)) % stationHashRange) * stationUnit + i;
  }
  s.stationLookup.sort();
}

/** Numbers the station classes (see Snapshot.classOf) in order of first appearance. */
function numberClasses(s: Snapshot): void {
  const masks = new Map<number, number>();
  const prices = new Map<number, number>();
  for (let i = 0; i < s.size; i++) {
    if (!masks.has(s.connectorMasks[i] as number)) masks.set(s.connectorMasks[i] as number, masks.size);
    if (!prices.has(s.priceHundredths[i] as number)) prices.set(s.priceHundredths[i] as number, prices.size);
  }
  const operators = s.operatorNames.length;
  const speeds = SPEED_CODES.length;
  // A number per class key while it stays exact, else a string.
  const exact = masks.size * speeds * operators * prices.size <= Number.MAX_SAFE_INTEGER;
  const classes = new Map<number | string, number>();
  const mask: number[] = [];
  const speed: number[] = [];
  const operator: number[] = [];
  const price: number[] = [];
  for (let i = 0; i < s.size; i++) {
    const maskIndex = masks.get(s.connectorMasks[i] as number) as number;
    const priceIndex = prices.get(s.priceHundredths[i] as number) as number;
    const key = exact
      ? ((maskIndex * speeds + (s.speedCodes[i] as number)) * operators + (s.operatorOf[i] as number)) * prices.size + priceIndex
      : `${maskIndex}|${s.speedCodes[i]}|${s.operatorOf[i]}|${priceIndex}`;
    let c = classes.get(key);
    if (c === undefined) {
      c = classes.size;
      classes.set(key, c);
      mask.push(s.connectorMasks[i] as number);
      speed.push(s.speedCodes[i] as number);
      operator.push(s.operatorOf[i] as number);
      price.push(s.priceHundredths[i] as number);
    }
    s.classOf[i] = c;
  }
  s.classMask = Uint32Array.from(mask);
  s.classSpeed = Uint8Array.from(speed);
  s.classOperator = Uint32Array.from(operator);
  s.classPrice = Int32Array.from(price);
}

/** FNV-1a, 32 bits, of text[from .. to). */
function hashOf(text: string, from = 0, to = text.length): number {
  let h = 0x811c9dc5;
  for (let k = from; k < to; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
  return h >>> 0;
}

/** The first position of the sorted `values` holding `value` or more (their length if none). */
function lowerBound(values: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The station whose id is `stationId`, or -1. */
export function findStation(s: Snapshot, stationId: string): number {
  const unit = 2 ** s.stationIndexBits;
  const first = (hashOf(stationId) % 2 ** (53 - s.stationIndexBits)) * unit;
  let lo = lowerBound(s.stationLookup, first);
  for (; lo < s.stationLookup.length && (s.stationLookup[lo] as number) < first + unit; lo++) {
    const i = (s.stationLookup[lo] as number) - first;
    const head = s.heads[i] as string;
    // Station ids hold no quote: the id is what lies between `{"id":"` and the next one.
    if (head.indexOf('"', HEAD_START.length) === HEAD_START.length + stationId.length && head.startsWith(stationId, HEAD_START.length)) return i;
  }
  return -1;
}

/** Station i's id. */
export function stationIdAt(s: Snapshot, i: number): string {
  const head = s.heads[i] as string;
  return head.slice(HEAD_START.length, head.indexOf('"', HEAD_START.length));
}

/** Station i's OCPI Location id. */
export function locationIdAt(s: Snapshot, i: number): string {
  return s.locationIdText.slice(s.locationIdStart[i], s.locationIdStart[i + 1]);
}

/** EVSE e's uid. */
export function evseUidAt(s: Snapshot, e: number): string {
  return s.evseUidText.slice(s.evseUidStart[e], s.evseUidStart[e + 1]);
}

/** Whether EVSE e's uid is `uid` (without making a string). */
export function isEvseUid(s: Snapshot, e: number, uid: string): boolean {
  const from = s.evseUidStart[e] as number;
  return (s.evseUidStart[e + 1] as number) - from === uid.length && s.evseUidText.startsWith(uid, from);
}

/** The live EVSE whose evse_id (else uid) is `evseId`, or -1. */
export function findEvse(s: Snapshot, evseId: string): number {
  const key = fragment(JSON.stringify(evseId));
  const unit = 2 ** s.evseIndexBits;
  const first = (hashOf(key) % 2 ** (53 - s.evseIndexBits)) * unit;
  let lo = lowerBound(s.evseLookup, first);
  for (; lo < s.evseLookup.length && (s.evseLookup[lo] as number) < first + unit; lo++) {
    const evse = (s.evseLookup[lo] as number) - first;
    if (s.evseIdJson[evse] === key) return evse;
  }
  return -1;
}

/** The station an EVSE belongs to. */
export function stationOfEvse(s: Snapshot, evse: number): number {
  let lo = 0;
  let hi = s.size - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if ((s.evseStart[mid] as number) <= evse) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

let snapshotVersion = 0;

/** Reads the whole catalogue from the database into a new snapshot. */
export async function buildSnapshot(db: Database, pricing: PricingConfig): Promise<Snapshot> {
  const [parties, tariffRows, partnerRows] = await Promise.all([repo.listParties(db), repo.listTariffs(db), repo.listPartners(db)]);
  const tariffs = new Map(tariffRows.map((t) => [tariffKey(t.country_code, t.party_id, t.id), t]));
  const builder = snapshotBuilder(
    ++snapshotVersion,
    tariffs,
    new Map(partnerRows.map((p) => [p.name.toLowerCase(), p])),
    new Map(parties.map((p) => [`${p.country_code}*${p.party_id}`, p])),
  );
  const fallbacks = new Map<string, MapPrice | undefined>();
  const fallbackPrice = (country: string): MapPrice | undefined => {
    if (!fallbacks.has(country)) {
      const fallback = pricingFor(country, pricing).fallback;
      fallbacks.set(
        country,
        fallback && {
          hundredths: Number(withVat(fallback.kwhPrice, fallback.vat).times(100).round(0, Big.roundHalfUp)),
          isTime: false,
          currency: fallback.currency,
        },
      );
    }
    return fallbacks.get(country);
  };
  for await (const batch of repo.streamCatalogue(db)) builder.add(batch, fallbackPrice);
  return builder.finish();
}

/** The snapshot of an empty catalogue. */
export function emptySnapshot(): Snapshot {
  return snapshotBuilder(0, new Map(), new Map(), new Map()).finish();
}
