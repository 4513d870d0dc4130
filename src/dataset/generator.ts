// Deterministic, Europe-wide dataset of charging stations as OCPI 2.2.1
// Locations (with EVSEs and Connectors) and Tariffs, for development, demos and
// load tests. Same options give byte-identical output: all randomness comes
// from a seeded sfc32 generator. Locations are produced lazily in batches, so
// hundreds of thousands never sit in memory at once.
//
// Shape of the data:
// - 87.5% of locations lie around real cities (generator-data.ts), chosen by
//   population times the country's charging density, at a log-normal distance
//   from the centre whose scale grows with sqrt(population); 6% along
//   motorways between neighbouring cities; 6.5% in the countryside 8-40 km
//   around them. Points are kept inside the country's rough bounding box.
// - AC_3_PHASE connectors state 400 V (line to line) with
//   max_electric_power = V x A x sqrt(3); OCPI 2.2.1 defines max_voltage as
//   line to neutral for AC_3_PHASE (230 V, x 3), so consumers should prefer
//   max_electric_power, which every connector carries.
// - Each location has a venue (street, supermarket, garage, fast-charging hub,
//   motorway service area, ...) that decides its name, parking type,
//   facilities, opening hours and hardware; its operator is drawn among those
//   active in the country that run that kind of site.
// - Every connector refers to exactly one tariff of its operator for the
//   location's country and its kind (AC, DC up to 100 kW, DC from 150 kW,
//   domestic socket); operators that publish no tariffs leave tariff_ids out.

import type { OcpiConnector, OcpiEvse, OcpiLocation, OcpiPriceComponent, OcpiTariff, OcpiTariffRestrictions } from '../ocpi-protocol/locations-tariffs.ts';
import { type CountryFacts, countryByAlpha2, EUROPEAN_COUNTRIES } from '../platform/european-countries.ts';
import {
  CITIES,
  COUNTRY_EXTRA,
  type CountryExtra,
  LANGUAGES,
  type LanguageWords,
  OPERATORS,
  type OperatorProfile,
  type OperatorSpec,
} from './generator-data.ts';

export interface GeneratorOptions {
  locations: number;
  seed: number;
  /** last_updated stamp of every object; default 2026-01-01T00:00:00Z. */
  now?: Date;
}

export interface GeneratedParty {
  country_code: string;
  party_id: string;
  name: string;
  phone: string;
  website: string;
}

export interface GeneratedCatalogue {
  /** The CPOs (charge point operators) owning the locations. */
  parties: GeneratedParty[];
  /** Every tariff the connectors may reference (per operator, country and kind of charging). */
  tariffs: OcpiTariff[];
  /** Batches of at most 1000 locations, generated lazily; each call starts again from the first location. */
  locations(): Generator<OcpiLocation[]>;
}

const LOCATION_BATCH_SIZE = 1000;
const DEFAULT_NOW = new Date('2026-01-01T00:00:00Z');

// ---------------------------------------------------------------------------
// Seeded randomness

/** sfc32 (Small Fast Counting) PRNG, state initialised by splitmix32 from (seed, stream). */
class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream: number) {
    const big = BigInt(seed);
    let s = (Number(BigInt.asUintN(32, big)) ^ Math.imul(Number(BigInt.asUintN(32, big >> 32n)) + 0x632be5ab, 0x85ebca6b) ^ Math.imul(stream, 0x9e3779b9)) | 0;
    const splitmix = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s ^ (s >>> 16);
      z = Math.imul(z, 0x21f0aaad);
      z ^= z >>> 15;
      z = Math.imul(z, 0x735a2d97);
      return (z ^ (z >>> 15)) | 0;
    };
    this.a = splitmix();
    this.b = splitmix();
    this.c = splitmix();
    this.d = splitmix();
    for (let i = 0; i < 16; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  uniform(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** Standard normal (Box-Muller). */
  gaussian(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  pick<T>(items: readonly T[]): T {
    return at(items, Math.floor(this.next() * items.length));
  }
}

function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`index ${index} out of range (${items.length} items)`);
  return item;
}

/** Items with relative weights; pick is O(log n). */
class Weighted<T> {
  readonly items: readonly T[];
  private readonly cumulative: Float64Array;
  readonly total: number;

  constructor(entries: readonly (readonly [T, number])[]) {
    const kept = entries.filter(([, w]) => w > 0);
    if (kept.length === 0) throw new Error('no item with a positive weight');
    this.items = kept.map(([item]) => item);
    this.cumulative = new Float64Array(kept.length);
    let sum = 0;
    kept.forEach(([, w], i) => {
      sum += w;
      this.cumulative[i] = sum;
    });
    this.total = sum;
  }

  pick(rng: Random): T {
    const x = rng.next() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (x < (this.cumulative[mid] ?? 0)) hi = mid;
      else lo = mid + 1;
    }
    return at(this.items, lo);
  }
}

const w = <T>(entries: readonly (readonly [T, number])[]): Weighted<T> => new Weighted(entries);

// ---------------------------------------------------------------------------
// Geography (seed-independent, computed once)

interface City {
  index: number;
  name: string;
  lat: number;
  lon: number;
  populationK: number;
  postalPrefixes: readonly string[];
  country: CountryFacts;
  extra: CountryExtra;
  words: LanguageWords;
}

interface Corridor {
  from: City;
  to: City;
  km: number;
  road: string;
  kmOffset: number;
}

function extraOf(alpha2: string): CountryExtra {
  const extra = COUNTRY_EXTRA[alpha2];
  if (!extra) throw new Error(`no generator data for country ${alpha2}`);
  return extra;
}

function wordsOf(language: string): LanguageWords {
  const words = LANGUAGES[language];
  if (!words) throw new Error(`no street names for language ${language}`);
  return words;
}

const EARTH_KM_PER_DEGREE = 111.32;

/** Great-circle distance in km. */
function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h)));
}

interface Geography {
  cities: readonly City[];
  urban: Weighted<City>;
  rural: Weighted<City>;
  corridors: Weighted<Corridor>;
}

let geography: Geography | undefined;

function geo(): Geography {
  if (geography) return geography;
  const cities: City[] = CITIES.map(([name, cc, lat, lon, populationK, postal, language], index) => {
    const country = countryByAlpha2(cc);
    if (!country) throw new Error(`city ${name}: unknown country ${cc}`);
    const extra = extraOf(cc);
    return { index, name, lat, lon, populationK, postalPrefixes: postal.split('|'), country, extra, words: wordsOf(language ?? extra.language) };
  });
  const urban = w(cities.map((c) => [c, c.populationK * c.extra.evDensity] as const));
  const rural = w(cities.map((c) => [c, Math.sqrt(c.populationK) * c.extra.evDensity] as const));

  // Motorway corridors: each city to its three nearest neighbours in the same country (25-450 km away).
  const seen = new Set<string>();
  const corridors: (readonly [Corridor, number])[] = [];
  const roadsPerCountry = new Map<string, number>();
  for (const city of cities) {
    const neighbours = cities
      .filter((o) => o !== city && o.country === city.country)
      .map((o) => ({ o, km: distanceKm(city.lat, city.lon, o.lat, o.lon) }))
      .filter(({ km }) => km >= 25 && km <= 450)
      .sort((x, y) => x.km - y.km || x.o.index - y.o.index)
      .slice(0, 3);
    for (const { o, km } of neighbours) {
      const [from, to] = city.index < o.index ? [city, o] : [o, city];
      const key = `${from.index}-${to.index}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const n = roadsPerCountry.get(city.country.alpha2) ?? 0;
      roadsPerCountry.set(city.country.alpha2, n + 1);
      const road = `${city.extra.roadPrefix}${1 + ((n * 7 + from.index) % 95)}`;
      const corridor: Corridor = { from, to, km, road, kmOffset: (from.index * 37 + to.index * 11) % 180 };
      corridors.push([corridor, (Math.sqrt(from.populationK) + Math.sqrt(to.populationK)) * city.extra.evDensity]);
    }
  }
  geography = { cities, urban, rural, corridors: w(corridors) };
  return geography;
}

function inBox(extra: CountryExtra, lat: number, lon: number): boolean {
  const [minLat, minLon, maxLat, maxLon] = extra.bbox;
  return lat >= minLat && lat <= maxLat && lon >= minLon && lon <= maxLon;
}

function clampToBox(extra: CountryExtra, lat: number, lon: number): [number, number] {
  const [minLat, minLon, maxLat, maxLon] = extra.bbox;
  return [Math.min(maxLat, Math.max(minLat, lat)), Math.min(maxLon, Math.max(minLon, lon))];
}

/** A point at a random bearing, distance drawn by `distance`, kept inside the country's box (retried, then clamped). */
function around(rng: Random, city: City, distance: () => number): [number, number] {
  let lat = city.lat;
  let lon = city.lon;
  for (let attempt = 0; attempt < 6; attempt++) {
    const km = distance();
    const bearing = rng.next() * 2 * Math.PI;
    lat = city.lat + (km * Math.cos(bearing)) / EARTH_KM_PER_DEGREE;
    lon = city.lon + (km * Math.sin(bearing)) / (EARTH_KM_PER_DEGREE * Math.cos((city.lat * Math.PI) / 180));
    if (inBox(city.extra, lat, lon)) return [lat, lon];
  }
  return clampToBox(city.extra, lat, lon);
}

// ---------------------------------------------------------------------------
// Operators and tariffs

type TariffKind = 'AC' | 'DC' | 'HPC' | 'DOM';

const PROFILE_KINDS: Record<OperatorProfile, readonly TariffKind[]> = {
  mixed: ['AC', 'DC', 'HPC', 'DOM'],
  ac: ['AC', 'DC', 'DOM'],
  hpc: ['DC', 'HPC'],
};

interface Operator {
  spec: OperatorSpec;
  party: GeneratedParty;
  countries: readonly string[];
  business: { name: string; website: string };
  /** `${country}:${kind}` -> tariff id; empty for operators without tariffs. */
  tariffIds: Map<string, string>;
}

function phoneNumber(rng: Random, callingCode: string): string {
  return `+${callingCode} ${rng.int(20, 99)} ${rng.int(100, 999)} ${rng.int(1000, 9999)}`;
}

const ZERO_DECIMAL_CURRENCIES = new Set(['HUF', 'ISK']);

/** An amount in EUR converted to the country's currency, rounded to what price lists show. */
function price(eur: number, country: CountryFacts, extra: CountryExtra, charm = false): number {
  const value = eur * extra.fx;
  if (ZERO_DECIMAL_CURRENCIES.has(country.currency)) {
    if (!charm || value < 20) return Math.max(1, Math.round(value));
    return Math.round(value / 10) * 10 - 1;
  }
  const cents = Math.max(1, Math.round(value * 100));
  if (!charm || cents < 20) return cents / 100;
  return (Math.floor(cents / 10) * 10 + 9) / 100;
}

function withVat(amount: number, country: CountryFacts): number {
  const gross = amount * (1 + Number(country.vat) / 100);
  return ZERO_DECIMAL_CURRENCIES.has(country.currency) ? Math.round(gross) : Math.round(gross * 100) / 100;
}

function show(amount: number, currency: string): string {
  return `${ZERO_DECIMAL_CURRENCIES.has(currency) ? String(amount) : amount.toFixed(2)} ${currency}`;
}

const KIND_LABEL: Record<TariffKind, string> = { AC: 'AC charging', DC: 'DC fast charging', HPC: 'DC ultra-fast charging', DOM: 'Domestic socket' };
const ENERGY_EUR: Record<TariffKind, readonly [number, number]> = { AC: [0.35, 0.55], DOM: [0.3, 0.45], DC: [0.49, 0.65], HPC: [0.59, 0.79] };

function buildTariff(rng: Random, party: GeneratedParty, operatorLevel: number, country: CountryFacts, kind: TariffKind, lastUpdated: string): OcpiTariff {
  const extra = extraOf(country.alpha2);
  const vat = Number(country.vat);
  const [lo, hi] = ENERGY_EUR[kind];
  // Country and operator price levels shift the base range gently (half their deviation), within 10% of it.
  const level = 1 + (extra.priceLevel * operatorLevel - 1) / 2;
  const energyEur = Math.min(hi * 1.1, Math.max(lo * 0.9, rng.uniform(lo, hi) * level));
  const energy = price(energyEur, country, extra, rng.chance(0.6));
  const component = (type: OcpiPriceComponent['type'], amount: number): OcpiPriceComponent => ({
    type,
    price: amount,
    vat,
    step_size: type === 'ENERGY' ? 1 : type === 'FLAT' ? 0 : 60,
  });
  const notes = [`${show(energy, country.currency)}/kWh`];
  const elements: OcpiTariff['elements'] = [];

  const offPeak = rng.next();
  if (offPeak < 0.15) {
    const night = price(energyEur * 0.85, country, extra);
    elements.push({ price_components: [component('ENERGY', night)], restrictions: { start_time: '22:00', end_time: '06:00' } });
    notes.push(`${show(night, country.currency)}/kWh 22:00-06:00`);
  } else if (offPeak < 0.25) {
    const weekend = price(energyEur * 0.9, country, extra);
    elements.push({ price_components: [component('ENERGY', weekend)], restrictions: { day_of_week: ['SATURDAY', 'SUNDAY'] } });
    notes.push(`${show(weekend, country.currency)}/kWh at weekends`);
  }

  const blockingChance = { AC: 0.35, DOM: 0.1, DC: 0.5, HPC: 0.55 }[kind];
  let blocking = false;
  if (rng.chance(blockingChance)) {
    blocking = true;
    const afterMinutes = kind === 'AC' ? 240 : kind === 'DOM' ? 480 : rng.pick([45, 60]);
    const perMinuteEur = kind === 'AC' || kind === 'DOM' ? rng.pick([0.05, 0.08, 0.1]) : kind === 'DC' ? rng.pick([0.2, 0.3]) : rng.pick([0.3, 0.4]);
    const perHour = price(perMinuteEur * 60, country, extra);
    const restrictions: OcpiTariffRestrictions = { min_duration: afterMinutes * 60 };
    elements.push({ price_components: [component('PARKING_TIME', perHour)], restrictions });
    notes.push(`blocking fee ${show(perHour, country.currency)}/h after ${afterMinutes} min`);
  }

  const defaults = [component('ENERGY', energy)];
  if (rng.chance({ AC: 0.25, DOM: 0.2, DC: 0.3, HPC: 0.2 }[kind])) {
    const fee = price(rng.pick([0.25, 0.35, 0.5, 0.75, 1]), country, extra);
    defaults.push(component('FLAT', fee));
    notes.push(`session fee ${show(fee, country.currency)}`);
  }
  if (rng.chance({ AC: 0.15, DOM: 0.1, DC: 0.1, HPC: 0 }[kind])) {
    const perHour = price(kind === 'DC' ? rng.uniform(3, 6) : rng.uniform(0.6, 1.2), country, extra);
    defaults.push(component('TIME', perHour));
    notes.push(`${show(perHour, country.currency)}/h charging time`);
  }
  elements.push({ price_components: defaults });

  const tariff: OcpiTariff = {
    country_code: party.country_code,
    party_id: party.party_id,
    id: `${kind}-${country.alpha2}`,
    currency: country.currency,
    tariff_alt_text: [{ language: 'en', text: `${KIND_LABEL[kind]} in ${country.name}: ${notes.join(', ')} (prices excl. ${country.vat}% VAT).` }],
    elements,
    last_updated: lastUpdated,
  };
  if (blocking && rng.chance(0.4)) {
    const capEur = { AC: 30, DOM: 20, DC: 90, HPC: 120 }[kind];
    const cap = price(capEur, country, extra);
    tariff.max_price = { excl_vat: cap, incl_vat: withVat(cap, country) };
  }
  return tariff;
}

function buildOperators(rng: Random, lastUpdated: string): { operators: Operator[]; tariffs: OcpiTariff[] } {
  const operators: Operator[] = [];
  const tariffs: OcpiTariff[] = [];
  for (const spec of OPERATORS) {
    const home = extraOf(spec.home);
    const party: GeneratedParty = {
      country_code: spec.home,
      party_id: spec.partyId,
      name: spec.name,
      phone: phoneNumber(rng, home.callingCode),
      website: `https://www.${spec.domain}`,
    };
    const countries = spec.countries === 'ALL' ? EUROPEAN_COUNTRIES.map((c) => c.alpha2) : [...spec.countries];
    const tariffIds = new Map<string, string>();
    const operatorLevel = rng.uniform(0.9, 1.1);
    if (!spec.noTariff) {
      for (const cc of countries) {
        const country = countryByAlpha2(cc);
        if (!country) throw new Error(`operator ${spec.name}: unknown country ${cc}`);
        for (const kind of PROFILE_KINDS[spec.profile]) {
          const tariff = buildTariff(rng, party, operatorLevel, country, kind, lastUpdated);
          tariffs.push(tariff);
          tariffIds.set(`${cc}:${kind}`, tariff.id);
        }
      }
    }
    operators.push({ spec, party, countries, business: { name: spec.name, website: party.website }, tariffIds });
  }
  return { operators, tariffs };
}

// ---------------------------------------------------------------------------
// Venues: what kind of site a location is

type Venue =
  | 'street'
  | 'supermarket'
  | 'garage'
  | 'park_ride'
  | 'hotel'
  | 'mall'
  | 'hub'
  | 'fuel'
  | 'office'
  | 'restaurant'
  | 'sport'
  | 'airport'
  | 'campsite'
  | 'highway';

const URBAN_VENUE_WEIGHTS: readonly (readonly [Venue, number])[] = [
  ['street', 34],
  ['supermarket', 13],
  ['garage', 9],
  ['park_ride', 4],
  ['hotel', 5],
  ['mall', 5],
  ['hub', 4],
  ['fuel', 4],
  ['office', 7],
  ['restaurant', 5],
  ['sport', 3],
];
const URBAN_VENUES = w(URBAN_VENUE_WEIGHTS);
/** Cities of 300,000 and more also have airport car parks. */
const URBAN_VENUES_WITH_AIRPORT = w<Venue>([...URBAN_VENUE_WEIGHTS, ['airport', 0.6]]);
const RURAL_VENUES = w<Venue>([
  ['street', 20],
  ['supermarket', 12],
  ['hotel', 12],
  ['restaurant', 14],
  ['campsite', 12],
  ['fuel', 12],
  ['hub', 8],
  ['sport', 4],
  ['park_ride', 3],
  ['office', 3],
]);

/** How well an operator profile fits a venue (0: never runs such sites). */
function fit(profile: OperatorProfile, venue: Venue): number {
  if (profile === 'hpc') return venue === 'highway' ? 4 : venue === 'hub' ? 3 : venue === 'fuel' ? 1.5 : venue === 'mall' ? 0.4 : 0;
  if (profile === 'ac') return venue === 'hub' || venue === 'highway' || venue === 'fuel' ? 0 : venue === 'mall' || venue === 'supermarket' ? 0.9 : 1.25;
  return venue === 'highway' ? 0.8 : 1;
}

const VENUE_LABELS: Record<Venue, readonly string[]> = {
  street: ['Street Parking'],
  highway: ['Service Area'],
  airport: ['Airport Parking'],
  supermarket: ['Supermarket', 'Hypermarket', 'Discount Market', 'Food Market'],
  garage: ['Parking Garage', 'Car Park', 'City Parking', 'Parking Centre'],
  park_ride: ['P+R', 'Park & Ride'],
  hotel: ['Hotel', 'Business Hotel', 'Apartment Hotel', 'Guesthouse'],
  mall: ['Shopping Centre', 'Retail Park', 'Outlet Centre'],
  hub: ['Charging Hub', 'Fast Charging Park', 'eHub', 'Charging Plaza'],
  fuel: ['Service Station', 'Energy Station', 'Fuel & Charge'],
  office: ['Business Park', 'Office Park', 'Tech Campus', 'Logistics Centre'],
  restaurant: ['Restaurant', 'Drive-In', 'Bistro', 'Roadhouse'],
  sport: ['Sports Centre', 'Stadium', 'Swimming Pool', 'Ice Rink'],
  campsite: ['Camping', 'Holiday Park', 'Caravan Park'],
};

const VENUE_FACILITIES: Record<Venue, readonly string[]> = {
  street: [],
  supermarket: ['SUPERMARKET'],
  garage: [],
  park_ride: ['CARPOOL_PARKING'],
  hotel: ['HOTEL'],
  mall: ['MALL'],
  hub: [],
  fuel: ['FUEL_STATION'],
  office: [],
  restaurant: ['RESTAURANT'],
  sport: ['SPORT'],
  airport: ['AIRPORT'],
  campsite: ['NATURE'],
  highway: ['RESTAURANT'],
};

const EXTRA_FACILITIES = w<string>([
  ['SUPERMARKET', 8],
  ['RESTAURANT', 8],
  ['CAFE', 9],
  ['WIFI', 7],
  ['PARKING_LOT', 4],
  ['BUS_STOP', 3],
  ['HOTEL', 2],
  ['MALL', 2],
  ['TRAM_STOP', 2],
  ['BIKE_SHARING', 2],
  ['TRAIN_STATION', 1],
  ['METRO_STATION', 1],
  ['TAXI_STAND', 1],
  ['SPORT', 1],
  ['RECREATION_AREA', 1],
  ['NATURE', 1],
  ['MUSEUM', 1],
  ['FUEL_STATION', 1],
  ['CARPOOL_PARKING', 1],
]);
const EXTRA_FACILITY_COUNT = w<number>([
  [0, 35],
  [1, 35],
  [2, 20],
  [3, 10],
]);

function facilities(rng: Random, venue: Venue): string[] {
  const result = [...VENUE_FACILITIES[venue]];
  if (venue === 'park_ride') result.push(rng.chance(0.6) ? 'TRAIN_STATION' : 'BUS_STOP');
  if (venue === 'highway' && rng.chance(0.6)) result.push('FUEL_STATION');
  if (venue === 'campsite' && rng.chance(0.5)) result.push('RECREATION_AREA');
  const extra = EXTRA_FACILITY_COUNT.pick(rng);
  for (let i = 0; i < extra && result.length < 4; i++) {
    const f = EXTRA_FACILITIES.pick(rng);
    if (!result.includes(f)) result.push(f);
  }
  return result;
}

function parkingType(rng: Random, venue: Venue): string {
  switch (venue) {
    case 'street':
      return 'ON_STREET';
    case 'highway':
      return 'ALONG_MOTORWAY';
    case 'garage':
      return rng.chance(0.35) ? 'UNDERGROUND_GARAGE' : 'PARKING_GARAGE';
    case 'airport':
    case 'mall':
      return rng.chance(0.4) ? 'PARKING_GARAGE' : 'PARKING_LOT';
    case 'hotel':
      return rng.chance(0.2) ? 'UNDERGROUND_GARAGE' : 'PARKING_LOT';
    default:
      return 'PARKING_LOT';
  }
}

type OpeningTimes = NonNullable<OcpiLocation['opening_times']>;

function hours(days: readonly number[], begin: string, end: string): NonNullable<OpeningTimes['regular_hours']> {
  return days.map((weekday) => ({ weekday, period_begin: begin, period_end: end }));
}

const WEEKDAYS = [1, 2, 3, 4, 5];
const MON_SAT = [1, 2, 3, 4, 5, 6];
const ALL_DAYS = [1, 2, 3, 4, 5, 6, 7];

function openingTimes(rng: Random, venue: Venue, extra: CountryExtra): OpeningTimes {
  const r = rng.next();
  switch (venue) {
    case 'supermarket':
      if (r < 0.7) {
        const regular = rng.chance(0.6) ? hours(MON_SAT, '07:00', '22:00') : hours(MON_SAT, '08:00', '21:00');
        if (!extra.sundayClosed) regular.push(...hours([7], '09:00', '18:00'));
        return { twentyfourseven: false, regular_hours: regular };
      }
      break;
    case 'mall':
      if (r < 0.65) {
        const regular = hours(MON_SAT, '09:00', '21:00');
        if (!extra.sundayClosed) regular.push(...hours([7], '10:00', '19:00'));
        return { twentyfourseven: false, regular_hours: regular };
      }
      break;
    case 'office':
      if (r < 0.6) return { twentyfourseven: false, regular_hours: hours(WEEKDAYS, '07:00', '19:00') };
      break;
    case 'garage':
      if (r < 0.25) return { twentyfourseven: false, regular_hours: hours(ALL_DAYS, '06:00', '23:00') };
      break;
    case 'restaurant':
      if (r < 0.4) return { twentyfourseven: false, regular_hours: hours(ALL_DAYS, '11:00', '23:00') };
      break;
    case 'sport':
      if (r < 0.5) return { twentyfourseven: false, regular_hours: hours(ALL_DAYS, '08:00', '22:00') };
      break;
    case 'park_ride':
      if (r < 0.1) return { twentyfourseven: false, regular_hours: hours(ALL_DAYS, '05:00', '23:30') };
      break;
    default:
      break;
  }
  return { twentyfourseven: true };
}

// ---------------------------------------------------------------------------
// Hardware: EVSEs and connectors

type Outlet = 'AC7' | 'AC11' | 'AC22' | 'DOM' | 'DC50' | 'DC75' | 'DC150' | 'DC300' | 'DC400';

const SQRT3 = Math.sqrt(3);

interface ConnectorSpec {
  standard: string;
  format: 'SOCKET' | 'CABLE';
  power_type: string;
  max_voltage: number;
  max_amperage: number;
  max_electric_power: number;
  kind: TariffKind;
}

const ac3 = (amperage: number, format: 'SOCKET' | 'CABLE'): ConnectorSpec => ({
  standard: 'IEC_62196_T2',
  format,
  power_type: 'AC_3_PHASE',
  max_voltage: 400,
  max_amperage: amperage,
  max_electric_power: Math.round(400 * amperage * SQRT3),
  kind: 'AC',
});
const dc = (standard: string, kw: number, voltage: number, amperage: number): ConnectorSpec => ({
  standard,
  format: 'CABLE',
  power_type: 'DC',
  max_voltage: voltage,
  max_amperage: amperage,
  max_electric_power: kw * 1000,
  kind: kw >= 150 ? 'HPC' : 'DC',
});
const DC_CONNECTORS: Record<'DC50' | 'DC75' | 'DC150' | 'DC300' | 'DC400', ConnectorSpec> = {
  DC50: dc('IEC_62196_T2_COMBO', 50, 500, 125),
  DC75: dc('IEC_62196_T2_COMBO', 75, 500, 150),
  DC150: dc('IEC_62196_T2_COMBO', 150, 920, 200),
  DC300: dc('IEC_62196_T2_COMBO', 300, 920, 400),
  DC400: dc('IEC_62196_T2_COMBO', 400, 1000, 500),
};
const CHADEMO = dc('CHADEMO', 50, 500, 125);
const AC43_CABLE = ac3(63, 'CABLE');
const AC7_SINGLE: ConnectorSpec = {
  standard: 'IEC_62196_T2',
  format: 'CABLE',
  power_type: 'AC_1_PHASE',
  max_voltage: 230,
  max_amperage: 32,
  max_electric_power: 230 * 32,
  kind: 'AC',
};

function domestic(extra: CountryExtra): ConnectorSpec {
  return {
    standard: extra.domestic.standard,
    format: 'SOCKET',
    power_type: 'AC_1_PHASE',
    max_voltage: 230,
    max_amperage: extra.domestic.amperage,
    max_electric_power: 230 * extra.domestic.amperage,
    kind: 'DOM',
  };
}

const HUB_DC = w<Outlet>([
  ['DC50', 8],
  ['DC75', 7],
  ['DC150', 35],
  ['DC300', 35],
  ['DC400', 15],
]);
const HPC_DC = w<Outlet>([
  ['DC50', 4],
  ['DC150', 30],
  ['DC300', 41],
  ['DC400', 25],
]);
const DESTINATION_DC = w<Outlet>([
  ['DC50', 35],
  ['DC75', 25],
  ['DC150', 40],
]);
const FUEL_DC = w<Outlet>([
  ['DC50', 25],
  ['DC150', 40],
  ['DC300', 35],
]);
const STREET_COUNT = w<number>([
  [1, 35],
  [2, 52],
  [3, 8],
  [4, 5],
]);
const HUB_COUNT = w<number>([
  [2, 18],
  [4, 32],
  [6, 22],
  [8, 15],
  [10, 7],
  [12, 6],
]);

/** The outlets (one per EVSE) a site gets. */
function plan(rng: Random, venue: Venue, profile: OperatorProfile, country: CountryFacts): Outlet[] {
  const outlets: Outlet[] = [];
  const add = (outlet: Outlet, n: number) => {
    for (let i = 0; i < n; i++) outlets.push(outlet);
  };
  const acType = (): Outlet => (country.alpha2 === 'GB' && rng.chance(0.35) ? 'AC7' : rng.chance(0.7) ? 'AC22' : 'AC11');
  const dcOutlets = (table: Weighted<Outlet>, n: number) => {
    if (profile === 'ac') add('DC50', n);
    else add(table.pick(rng), n);
  };
  switch (venue) {
    case 'street':
      add(acType(), STREET_COUNT.pick(rng));
      break;
    case 'supermarket':
      add(acType(), rng.int(1, 5));
      if (rng.chance(profile === 'ac' ? 0.12 : 0.4)) dcOutlets(DESTINATION_DC, rng.int(1, 2));
      break;
    case 'garage':
      add(acType(), rng.int(2, 8));
      break;
    case 'park_ride':
      add(acType(), rng.int(2, 6));
      break;
    case 'hotel':
      add(acType(), rng.int(1, 3));
      if (rng.chance(0.3)) add('DOM', rng.int(1, 2));
      break;
    case 'mall':
      if (profile !== 'hpc') add(acType(), rng.int(2, 6));
      if (profile === 'hpc' || rng.chance(profile === 'ac' ? 0.15 : 0.55)) dcOutlets(DESTINATION_DC, rng.int(2, 4));
      break;
    case 'hub':
    case 'highway': {
      const n = venue === 'hub' ? HUB_COUNT.pick(rng) : at([2, 4, 4, 6, 6, 8, 12], rng.int(0, 6));
      add((profile === 'hpc' ? HPC_DC : HUB_DC).pick(rng), n);
      // Sites built in stages keep a couple of older 50 kW units.
      if (rng.chance(0.15)) add('DC50', rng.int(1, 2));
      if (profile === 'mixed' && rng.chance(0.25)) add(acType(), rng.int(1, 2));
      break;
    }
    case 'fuel':
      add((profile === 'hpc' ? HPC_DC : FUEL_DC).pick(rng), rng.int(1, 4));
      break;
    case 'office':
      add(acType(), rng.int(2, 8));
      break;
    case 'restaurant':
      add(acType(), rng.int(1, 2));
      if (rng.chance(profile === 'ac' ? 0.1 : 0.35)) dcOutlets(DESTINATION_DC, rng.int(1, 2));
      break;
    case 'sport':
      add(acType(), rng.int(1, 4));
      break;
    case 'airport':
      add(acType(), rng.int(4, 12));
      break;
    case 'campsite':
      add('DOM', rng.int(2, 4));
      if (rng.chance(0.5)) add(acType(), rng.int(1, 2));
      break;
  }
  return outlets;
}

const STATUSES = w<string>([
  ['AVAILABLE', 66],
  ['CHARGING', 20],
  ['UNKNOWN', 4],
  ['OUTOFORDER', 3.5],
  ['INOPERATIVE', 2.5],
  ['BLOCKED', 2.5],
  ['RESERVED', 1.5],
]);

// ---------------------------------------------------------------------------
// Addresses

const GB_LETTERS = 'ABDEFGHJLNPQRSTUWXYZ';
const NL_LETTERS = 'ABCEGHJKLMNPRSTVWXZ';
const IE_CHARS = 'ACDEFHKNPRTVWXY0123456789';

function digits(rng: Random, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String(rng.int(0, 9));
  return s;
}

function letters(rng: Random, alphabet: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet.charAt(rng.int(0, alphabet.length - 1));
  return s;
}

/** A postal code in the country's format starting with the city's prefix. */
function postalCode(rng: Random, city: City): string {
  const prefix = rng.pick(city.postalPrefixes);
  const fill = (total: number) => (prefix + digits(rng, Math.max(0, total - prefix.length))).slice(0, total);
  switch (city.country.alpha2) {
    case 'GB':
      return `${prefix}${rng.int(1, 20)} ${rng.int(1, 9)}${letters(rng, GB_LETTERS, 2)}`;
    case 'IE':
      return `${prefix} ${letters(rng, IE_CHARS, 4)}`;
    case 'MT':
      return `${prefix} ${rng.int(1000, 9999)}`;
    case 'NL':
      return `${fill(4)} ${letters(rng, NL_LETTERS, 2)}`;
    case 'CZ':
    case 'SK':
    case 'SE':
    case 'GR': {
      const d = fill(5);
      return `${d.slice(0, 3)} ${d.slice(3)}`;
    }
    case 'PL': {
      const d = fill(5);
      return `${d.slice(0, 2)}-${d.slice(2)}`;
    }
    case 'PT':
      return `${fill(4)}-${digits(rng, 3)}`;
    case 'LT':
      return `LT-${fill(5)}`;
    case 'LV':
      return `LV-${fill(4)}`;
    case 'RO':
      return fill(6);
    case 'IS':
      return fill(3);
    case 'DE':
    case 'EE':
    case 'ES':
    case 'FI':
    case 'FR':
    case 'HR':
    case 'IT':
      return fill(5);
    default:
      return fill(4);
  }
}

function houseNumber(rng: Random): string {
  const n = rng.chance(0.7) ? rng.int(1, 60) : rng.int(61, 240);
  return rng.chance(0.08) ? `${n}${rng.pick(['a', 'b', 'c'])}` : String(n);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max).trimEnd();
}

function streetAddress(words: LanguageWords, street: string, number: string): string {
  return clip(words.address.replace('{s}', street).replace('{n}', number), 45);
}

function coordinate(value: number): string {
  return value.toFixed(6);
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

// ---------------------------------------------------------------------------
// Catalogue context

/** Per-catalogue state every location is drawn from, created once per generateCatalogue call. */
interface CatalogueContext {
  lastUpdated: string;
  places: Geography;
  /** Operators active in each country (alpha-2). */
  byCountry: ReadonlyMap<string, readonly Operator[]>;
  /** `${country}:${venue}` -> operators weighted for that venue, built on first use. */
  operatorTables: Map<string, Weighted<Operator>>;
}

function operatorsByCountry(operators: readonly Operator[]): Map<string, Operator[]> {
  const byCountry = new Map<string, Operator[]>();
  for (const op of operators) {
    for (const cc of op.countries) {
      const list = byCountry.get(cc) ?? [];
      list.push(op);
      byCountry.set(cc, list);
    }
  }
  return byCountry;
}

/** Operators per country and venue, weighted by market weight and fit. */
function operatorFor(ctx: CatalogueContext, rng: Random, cc: string, venue: Venue): Operator {
  const key = `${cc}:${venue}`;
  let table = ctx.operatorTables.get(key);
  if (!table) {
    table = w((ctx.byCountry.get(cc) ?? []).map((op) => [op, op.spec.weight * fit(op.spec.profile, venue)] as const));
    ctx.operatorTables.set(key, table);
  }
  return table.pick(rng);
}

// ---------------------------------------------------------------------------
// Locations

/** Where a location lies and what kind of site it is. */
interface Placement {
  city: City;
  lat: number;
  lon: number;
  venue: Venue;
  /** Set for motorway service areas only. */
  corridor: Corridor | undefined;
  /** Kilometre marker along the corridor's road (0 off motorways). */
  alongKm: number;
}

/** Where: around a city, along a motorway, or in the countryside. */
function placeLocation(places: Geography, rng: Random): Placement {
  const where = rng.next();
  if (where < 0.06) return alongMotorway(places, rng);
  if (where < 0.125) return inCountryside(places, rng);
  return inCity(places, rng);
}

function alongMotorway(places: Geography, rng: Random): Placement {
  const corridor = places.corridors.pick(rng);
  const t = rng.uniform(0.08, 0.92);
  const offset = rng.gaussian() * 0.8;
  const { from, to } = corridor;
  const cos = Math.cos((from.lat * Math.PI) / 180);
  const dx = (to.lon - from.lon) * cos;
  const dy = to.lat - from.lat;
  const len = Math.hypot(dx, dy) || 1;
  const offsetDeg = offset / EARTH_KM_PER_DEGREE;
  const [lat, lon] = clampToBox(from.extra, from.lat + dy * t + (dx / len) * offsetDeg, from.lon + dx * t * (1 / cos) - ((dy / len) * offsetDeg) / cos);
  return {
    city: t < 0.5 ? from : to,
    lat,
    lon,
    venue: 'highway',
    corridor,
    alongKm: Math.round(t * corridor.km * 1.15) + corridor.kmOffset,
  };
}

function inCountryside(places: Geography, rng: Random): Placement {
  const city = places.rural.pick(rng);
  const [lat, lon] = around(rng, city, () => rng.uniform(8, 40));
  return { city, lat, lon, venue: RURAL_VENUES.pick(rng), corridor: undefined, alongKm: 0 };
}

function inCity(places: Geography, rng: Random): Placement {
  const city = places.urban.pick(rng);
  const scaleKm = 0.12 * Math.sqrt(city.populationK);
  const [lat, lon] = around(rng, city, () => Math.min(scaleKm * Math.exp(0.75 * rng.gaussian()), 4 * scaleKm + 3));
  const venue = (city.populationK >= 300 ? URBAN_VENUES_WITH_AIRPORT : URBAN_VENUES).pick(rng);
  return { city, lat, lon, venue, corridor: undefined, alongKm: 0 };
}

/** Name and address. The street is drawn even for motorway sites, which do not use it. */
function nameAndAddress(rng: Random, { city, venue, corridor, alongKm }: Placement): { name: string; address: string } {
  const street = rng.pick(city.words.streets);
  if (corridor) {
    return {
      name: city.words.restArea.replace('{r}', `${corridor.from.name}-${corridor.to.name}`),
      address: clip(`${corridor.road} km ${alongKm}`, 45),
    };
  }
  const address = streetAddress(city.words, street, houseNumber(rng));
  return { name: siteName(rng, city, venue, street), address };
}

function siteName(rng: Random, city: City, venue: Venue, street: string): string {
  if (venue === 'street') return rng.chance(0.7) ? `${city.name} ${street}` : street;
  if (venue === 'airport') return `${city.name} Airport P${rng.int(1, 9)}`;
  const label = rng.pick(VENUE_LABELS[venue]);
  const form = rng.next();
  return form < 0.45 ? `${label} ${city.name} ${street}` : form < 0.8 ? `${city.name} ${label}` : `${label} ${street}`;
}

/** Site-wide hardware choices, shared by every EVSE of a location. */
interface SiteHardware {
  outlets: Outlet[];
  acFormat: 'SOCKET' | 'CABLE';
  offline: boolean;
  reservable: boolean;
  remote: boolean;
  restriction: 'EV_ONLY' | 'CUSTOMERS' | undefined;
  floor: string | undefined;
  chademoSite: boolean;
  tripleSite: boolean;
  schukoSite: boolean;
}

function siteHardware(rng: Random, venue: Venue, profile: OperatorProfile, country: CountryFacts, parking: string | undefined): SiteHardware {
  const outlets = plan(rng, venue, profile, country);
  const acFormat = rng.chance(0.85) ? 'SOCKET' : 'CABLE';
  const offline = rng.chance(0.015);
  const reservable = rng.chance(0.1);
  const remote = rng.chance(0.97);
  const restriction =
    venue === 'street'
      ? rng.chance(0.4)
        ? 'EV_ONLY'
        : undefined
      : ['supermarket', 'hotel', 'restaurant', 'mall'].includes(venue) && rng.chance(0.5)
        ? 'CUSTOMERS'
        : undefined;
  const floor = parking === 'UNDERGROUND_GARAGE' ? rng.pick(['-1', '-2', '-3']) : parking === 'PARKING_GARAGE' ? rng.pick(['0', '1', '2', '3']) : undefined;
  const chademoSite = rng.chance(0.55);
  const tripleSite = rng.chance(0.4);
  const schukoSite = rng.chance(0.04);
  return { outlets, acFormat, offline, reservable, remote, restriction, floor, chademoSite, tripleSite, schukoSite };
}

/** What every EVSE of one location is built from. */
interface EvseSite {
  /** Location id and number. */
  id: string;
  n: number;
  op: Operator;
  country: CountryFacts;
  extra: CountryExtra;
  venue: Venue;
  hardware: SiteHardware;
}

function tariffIdsFor(op: Operator, country: CountryFacts, spec: ConnectorSpec): string[] | undefined {
  if (op.tariffIds.size === 0) return undefined;
  const tariffId = op.tariffIds.get(`${country.alpha2}:${spec.kind}`);
  if (!tariffId) throw new Error(`operator ${op.spec.name} has no ${spec.kind} tariff in ${country.alpha2}`);
  return [tariffId];
}

function makeConnector(ctx: CatalogueContext, site: EvseSite, cid: number, spec: ConnectorSpec, format = spec.format): OcpiConnector {
  const c: OcpiConnector = {
    id: String(cid),
    standard: spec.standard,
    format,
    power_type: spec.power_type,
    max_voltage: spec.max_voltage,
    max_amperage: spec.max_amperage,
    max_electric_power: spec.max_electric_power,
    last_updated: ctx.lastUpdated,
  };
  const ids = tariffIdsFor(site.op, site.country, spec);
  if (ids) c.tariff_ids = ids;
  return c;
}

/** The EVSE for outlet number k (1-based) of the site. */
function makeEvse(ctx: CatalogueContext, rng: Random, site: EvseSite, outlet: Outlet, k: number): OcpiEvse {
  const { op, extra, venue, hardware } = site;
  const { acFormat, chademoSite, tripleSite, schukoSite } = hardware;
  const connectors: OcpiConnector[] = [];
  const capabilities: string[] = hardware.remote ? ['REMOTE_START_STOP_CAPABLE', 'RFID_READER'] : ['RFID_READER'];
  switch (outlet) {
    case 'AC7':
      connectors.push(makeConnector(ctx, site, 1, AC7_SINGLE));
      break;
    case 'AC11':
    case 'AC22':
      connectors.push(makeConnector(ctx, site, 1, ac3(outlet === 'AC11' ? 16 : 32, acFormat), acFormat));
      if (schukoSite) connectors.push(makeConnector(ctx, site, 2, domestic(extra)));
      if (acFormat === 'SOCKET') capabilities.push('UNLOCK_CAPABLE');
      if (venue === 'office' || venue === 'garage') capabilities.push('CHARGING_PROFILE_CAPABLE');
      break;
    case 'DOM':
      connectors.push(makeConnector(ctx, site, 1, domestic(extra)));
      break;
    default: {
      connectors.push(makeConnector(ctx, site, 1, DC_CONNECTORS[outlet]));
      if (outlet === 'DC50' && chademoSite) {
        connectors.push(makeConnector(ctx, site, 2, CHADEMO));
        if (tripleSite && op.spec.profile !== 'hpc') connectors.push(makeConnector(ctx, site, 3, AC43_CABLE));
      }
      // AFIR: ad-hoc card payment at DC chargers of 50 kW and more.
      capabilities.push('CONTACTLESS_CARD_SUPPORT', 'CREDIT_CARD_PAYABLE');
    }
  }
  if (hardware.reservable) capabilities.push('RESERVABLE');
  const evse: OcpiEvse = {
    uid: `${site.id}-${k}`,
    evse_id: `${op.party.country_code}*${op.party.party_id}*E${pad(site.n, 7)}${pad(k, 2)}`,
    status: hardware.offline ? 'UNKNOWN' : STATUSES.pick(rng),
    capabilities,
    connectors,
    last_updated: ctx.lastUpdated,
  };
  if (hardware.outlets.length > 1) evse.physical_reference = String(k);
  if (hardware.floor !== undefined) evse.floor_level = hardware.floor;
  if (hardware.restriction) evse.parking_restrictions = [hardware.restriction];
  return evse;
}

function makeLocation(ctx: CatalogueContext, rng: Random, n: number): OcpiLocation {
  const id = `LOC-${pad(n, 7)}`;
  const placement = placeLocation(ctx.places, rng);
  const { city, venue } = placement;
  const country = city.country;
  const extra = city.extra;
  const op = operatorFor(ctx, rng, country.alpha2, venue);
  const { name, address } = nameAndAddress(rng, placement);

  const location: OcpiLocation = {
    country_code: op.party.country_code,
    party_id: op.party.party_id,
    id,
    publish: true,
    name,
    address,
    city: clip(city.name, 45),
    postal_code: postalCode(rng, city),
    country: country.alpha3,
    coordinates: { latitude: coordinate(placement.lat), longitude: coordinate(placement.lon) },
    parking_type: parkingType(rng, venue),
    operator: { ...op.business },
    time_zone: country.timeZone,
    last_updated: ctx.lastUpdated,
  };
  const facilityList = facilities(rng, venue);
  if (facilityList.length > 0) location.facilities = facilityList;
  const opening = openingTimes(rng, venue, extra);
  location.opening_times = opening;
  if (!opening.twentyfourseven) location.charging_when_closed = rng.chance(0.3);

  // EVSEs: site-wide hardware choices, then one EVSE per outlet.
  const hardware = siteHardware(rng, venue, op.spec.profile, country, location.parking_type);
  const site: EvseSite = { id, n, op, country, extra, venue, hardware };
  location.evses = hardware.outlets.map((outlet, i) => makeEvse(ctx, rng, site, outlet, i + 1));
  return location;
}

// ---------------------------------------------------------------------------
// Catalogue

export function generateCatalogue(options: GeneratorOptions): GeneratedCatalogue {
  const { locations: count, seed } = options;
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError('locations must be a non-negative integer');
  if (!Number.isSafeInteger(seed)) throw new RangeError('seed must be a safe integer');
  const now = options.now ?? DEFAULT_NOW;
  if (Number.isNaN(now.getTime())) throw new RangeError('now must be a valid date');
  const lastUpdated = now.toISOString();

  const { operators, tariffs } = buildOperators(new Random(seed, 1), lastUpdated);
  const ctx: CatalogueContext = { lastUpdated, places: geo(), byCountry: operatorsByCountry(operators), operatorTables: new Map() };

  return {
    parties: operators.map((op) => ({ ...op.party })),
    tariffs,
    *locations(): Generator<OcpiLocation[]> {
      const rng = new Random(seed, 2);
      let batch: OcpiLocation[] = [];
      for (let n = 1; n <= count; n++) {
        batch.push(makeLocation(ctx, rng, n));
        if (batch.length === LOCATION_BATCH_SIZE) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    },
  };
}
