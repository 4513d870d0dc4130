// Scenario EVSEs: one extra location per scenario party whose EVSEs misbehave
// on purpose, each as its evse_id says ("DE*HHC*ESCN*REJECT"), so eMSP
// developers and tests can reproduce failures. README.md has the table.
import type { GeneratedParty } from '../../dataset/generator.ts';
import { CITIES } from '../../dataset/generator-data.ts';
import type { OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import { countryByAlpha2, UNITS_PER_EUR } from '../../platform/european-countries.ts';

export const SCENARIOS = [
  /** Behaves like any EVSE, but random status changes never touch it. */
  'NORMAL',
  /** START_SESSION answered REJECTED. */
  'REJECT',
  /** START_SESSION's HTTP request is never answered (the connection is dropped after `hangMs`). */
  'TIMEOUT',
  /** START_SESSION ACCEPTED, the CommandResult is never posted, no session. */
  'NORESULT',
  /** START_SESSION ACCEPTED and CommandResult ACCEPTED, but the EV never plugs in: no session. */
  'NOSTART',
  /** Charges, but no Session is ever pushed (GET /sessions shows it); it ends by itself and only the CDR is posted. */
  'NOUPDATES',
  /** STOP_SESSION answered REJECTED; the session ends when the car is full. */
  'STOPREJECT',
  /** The car stops charging by itself after a few minutes' worth of charging; the session completes and the CDR follows. */
  'INTERRUPT',
  /** The CDR is posted `lateCdrDelayMs` after the session completed. */
  'LATECDR',
  /** Every Session PATCH is sent twice. */
  'DUPLICATE',
  /**
   * A long charge: the car is always the 100 kWh saloon at 10 %, so the session takes 90 kWh unless stopped (over an
   * hour's worth at 50 kW, more than a start's hold covers: how a client sees an excess charge, and a debt).
   */
  'LONGCHARGE',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

const SCENARIO_EVSE_ID = /^[A-Z]{2}\*[A-Z0-9]{3}\*ESCN\*([A-Z]+)$/;
export const SCENARIO_TARIFF_ID = 'SCENARIO';

export function scenarioEvseId(party: GeneratedParty, scenario: Scenario): string {
  return `${party.country_code}*${party.party_id}*ESCN*${scenario}`;
}

export function scenarioOf(evseId: string | undefined): Scenario | undefined {
  const code = evseId === undefined ? undefined : SCENARIO_EVSE_ID.exec(evseId)?.[1];
  return (SCENARIOS as readonly string[]).includes(code ?? '') ? (code as Scenario) : undefined;
}

export const scenarioLocationId = (party: GeneratedParty) => `SCN-${party.country_code}-${party.party_id}`;

function homeFacts(party: GeneratedParty) {
  const country = countryByAlpha2(party.country_code);
  if (!country) throw new Error(`scenario party ${party.country_code}*${party.party_id}: unknown country`);
  const city = CITIES.find((c) => c[1] === party.country_code);
  return { country, cityName: city?.[0] ?? country.name, lat: city?.[2] ?? 50.1109, lon: city?.[3] ?? 8.6821 };
}

/** The party's scenario tariff: a session fee, energy per kWh and charging time per minute, in its home currency. */
export function scenarioTariff(party: GeneratedParty, lastUpdated: string): OcpiTariff {
  const { country } = homeFacts(party);
  const rate = Number(UNITS_PER_EUR[country.currency] ?? '1');
  const amount = (eur: number) => Number((eur * rate).toFixed(country.currency === 'ISK' ? 0 : 2));
  const vat = Number(country.vat);
  return {
    country_code: party.country_code,
    party_id: party.party_id,
    id: SCENARIO_TARIFF_ID,
    currency: country.currency,
    tariff_alt_text: [{ language: 'en', text: 'Sandbox scenario tariff: session fee, energy per kWh and charging time billed per minute.' }],
    elements: [
      {
        price_components: [
          { type: 'FLAT', price: amount(0.5), vat, step_size: 0 },
          { type: 'ENERGY', price: amount(0.45), vat, step_size: 1 },
          { type: 'TIME', price: amount(1.2), vat, step_size: 60 },
        ],
      },
    ],
    last_updated: lastUpdated,
  };
}

export function scenarioLocation(party: GeneratedParty, lastUpdated: string): OcpiLocation {
  const { country, cityName, lat, lon } = homeFacts(party);
  const id = scenarioLocationId(party);
  const evses: OcpiEvse[] = SCENARIOS.map((scenario, i) => ({
    uid: `${id}-${scenario}`,
    evse_id: scenarioEvseId(party, scenario),
    status: 'AVAILABLE',
    capabilities: ['REMOTE_START_STOP_CAPABLE', 'RFID_READER'],
    connectors: [
      {
        id: '1',
        standard: 'IEC_62196_T2_COMBO',
        format: 'CABLE',
        power_type: 'DC',
        max_voltage: 500,
        max_amperage: 100,
        max_electric_power: 50_000,
        tariff_ids: [SCENARIO_TARIFF_ID],
        last_updated: lastUpdated,
      },
    ],
    physical_reference: String(i + 1),
    last_updated: lastUpdated,
  }));
  return {
    country_code: party.country_code,
    party_id: party.party_id,
    id,
    publish: true,
    name: `Sandbox scenarios (${party.name})`.slice(0, 255),
    address: 'Scenario Street 1',
    city: cityName.slice(0, 45),
    country: country.alpha3,
    coordinates: { latitude: (lat + 0.001).toFixed(6), longitude: (lon + 0.001).toFixed(6) },
    parking_type: 'PARKING_LOT',
    operator: { name: party.name, website: party.website },
    time_zone: country.timeZone,
    opening_times: { twentyfourseven: true },
    evses,
    last_updated: lastUpdated,
  };
}
