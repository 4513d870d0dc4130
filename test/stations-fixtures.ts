// Small hand-made OCPI objects for station tests.
import type { OcpiLocation, OcpiTariff } from '../src/ocpi-protocol/locations-tariffs.ts';

const STAMP = '2026-01-01T00:00:00Z';

export interface EvseSpec {
  status?: string;
  standard?: string;
  kw?: number;
  tariff?: string;
  evseId?: string;
  extraConnector?: { standard: string; kw: number };
}

export function ocpiLocation(spec: {
  id: string;
  lat: number;
  lon: number;
  party?: string;
  operator?: string;
  evses?: EvseSpec[];
  facilities?: string[];
  hours?: { weekday: number; period_begin: string; period_end: string }[];
  name?: string;
}): OcpiLocation {
  const party = spec.party ?? 'ABC';
  const connector = (id: string, standard: string, kw: number, tariff?: string) => ({
    id,
    standard,
    format: 'CABLE',
    power_type: kw >= 50 ? 'DC' : 'AC_3_PHASE',
    max_voltage: kw >= 50 ? 800 : 400,
    max_amperage: kw >= 50 ? Math.round((kw * 1000) / 800) : Math.round((kw * 1000) / 400 / Math.sqrt(3)),
    max_electric_power: kw * 1000,
    ...(tariff ? { tariff_ids: [tariff] } : {}),
    last_updated: STAMP,
  });
  return {
    country_code: 'DE',
    party_id: party,
    id: spec.id,
    publish: true,
    name: spec.name ?? `Station ${spec.id}`,
    address: `Street ${spec.id}`,
    city: 'Berlin',
    postal_code: '10115',
    country: 'DEU',
    coordinates: { latitude: spec.lat.toFixed(6), longitude: spec.lon.toFixed(6) },
    ...(spec.operator ? { operator: { name: spec.operator } } : {}),
    facilities: spec.facilities ?? [],
    time_zone: 'Europe/Berlin',
    opening_times: spec.hours ? { twentyfourseven: false, regular_hours: spec.hours } : { twentyfourseven: true },
    evses: (spec.evses ?? [{}]).map((e, k) => ({
      uid: `${spec.id}-${k + 1}`,
      evse_id: e.evseId ?? `DE*${party}*E${spec.id}${k + 1}`,
      status: e.status ?? 'AVAILABLE',
      connectors: [
        connector('1', e.standard ?? 'IEC_62196_T2', e.kw ?? 22, e.tariff),
        ...(e.extraConnector ? [connector('2', e.extraConnector.standard, e.extraConnector.kw, e.tariff)] : []),
      ],
      last_updated: STAMP,
    })),
    last_updated: STAMP,
  } as OcpiLocation;
}

export function ocpiTariff(id: string, kwhPrice: number, options: { party?: string; vat?: number; flat?: number } = {}): OcpiTariff {
  return {
    country_code: 'DE',
    party_id: options.party ?? 'ABC',
    id,
    currency: 'EUR',
    elements: [
      {
        price_components: [
          { type: 'ENERGY', price: kwhPrice, vat: options.vat ?? 19, step_size: 1 },
          ...(options.flat !== undefined ? [{ type: 'FLAT', price: options.flat, vat: options.vat ?? 19, step_size: 0 }] : []),
        ],
      },
    ],
    last_updated: STAMP,
  } as OcpiTariff;
}
