// Imperfect data, on request: the sandbox network can send what real CPOs
// send and OCPI 2.2.1 does not allow (CPO_SANDBOX_QUIRKS, or the `quirks`
// option), so an eMSP's tolerant reader is tried over real HTTP. Each quirk
// changes what is served (Locations, Tariffs, Sessions and CDRs pages, single
// objects) and pushed (EVSE statuses, Session PUT/PATCH, CDR POST), never the
// network's own state: its billing and simulation go on with the clean data.
// Which objects a quirk touches is decided by a hash of their id, so the same
// network sends the same imperfections every time (quirkPicks says which).
import Big from 'big.js';
import type { OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Quirk } from './quirk-names.ts';
import { scenarioOf } from './scenarios.ts';

export { parseQuirks, QUIRKS, type Quirk } from './quirk-names.ts';

/** FNV-1a of a string: a stable choice of objects by id. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
const picked = (salt: string, id: string, every: number) => hash(`${salt}:${id}`) % every === 0;

/** Which objects the quirks that touch only some of them touch (tests count on these). */
export const quirkPicks = {
  /** unusable: Locations sent without coordinates (never a scenario location). */
  locationWithoutCoordinates: (id: string) => !id.startsWith('SCN-') && picked('no-coordinates', id, 10),
  /** unusable: Locations whose first EVSE is sent without uid. */
  evseWithoutUid: (id: string) => !id.startsWith('SCN-') && picked('no-uid', id, 8),
  /** unusable: Tariffs with a price component of an unknown dimension. */
  tariffWithUnknownDimension: (id: string) => id !== 'SCENARIO' && picked('dimension', id, 6),
  /** unknown-enums: EVSEs sent with a status 2.2.1 does not know ("OUT_OF_SERVICE"). */
  evseWithUnknownStatus: (uid: string) => picked('status', uid, 5),
  /** unknown-enums: connectors sent with a standard 2.2.1 does not list ("NACS"). */
  connectorWithUnknownStandard: (uid: string) => picked('standard', uid, 7),
};

const withFourDecimals = (value: string) => new Big(value).toFixed(4);
const EXTRA = { x_sandbox_quirk: { note: 'a field 2.2.1 does not define' } };

function quirkEvse(evse: OcpiEvse, on: (q: Quirk) => boolean, scenario: boolean): Record<string, unknown> {
  let e: Record<string, unknown> = { ...evse, connectors: evse.connectors.map((c) => ({ ...c })) };
  const connectors = e.connectors as Record<string, unknown>[];
  if (on('empty-ids')) {
    e.physical_reference = '';
    for (const c of connectors) if (Array.isArray(c.tariff_ids)) c.tariff_ids = [...c.tariff_ids, ''];
  }
  if (on('unknown-enums') && !scenario) {
    // Every status in lower case ("available": a spelling), some outside 2.2.1 altogether.
    e.status = quirkPicks.evseWithUnknownStatus(evse.uid) ? 'OUT_OF_SERVICE' : evse.status.toLowerCase();
    if (quirkPicks.connectorWithUnknownStandard(evse.uid) && connectors[0]) connectors[0].standard = 'NACS';
    e.capabilities = [...(evse.capabilities ?? []), 'V2G_CAPABLE'];
  }
  if (on('extra-fields')) e = { ...e, ...EXTRA };
  return e;
}

function quirkLocationFields(l: Record<string, unknown>, location: OcpiLocation, on: (q: Quirk) => boolean): void {
  if (on('coordinates')) {
    l.coordinates = { latitude: withFourDecimals(location.coordinates.latitude), longitude: withFourDecimals(location.coordinates.longitude) };
  }
  if (on('24h') && location.opening_times?.regular_hours?.length) {
    l.opening_times = { ...location.opening_times, regular_hours: location.opening_times.regular_hours.map((h) => ({ ...h, period_end: '24:00' })) };
  }
  if (on('no-timezone')) delete l.time_zone;
  if (on('unknown-enums')) {
    l.facilities = [...(location.facilities ?? []), 'EV_LOUNGE'];
    l.parking_type = 'PARKING_DECK';
  }
  if (on('unusable') && quirkPicks.locationWithoutCoordinates(location.id)) delete l.coordinates;
}

function quirkTariffRecord(tariff: OcpiTariff, on: (q: Quirk) => boolean): Record<string, unknown> {
  const t: Record<string, unknown> = structuredClone(tariff) as unknown as Record<string, unknown>;
  const elements = t.elements as { price_components: { type: string; vat?: number }[]; restrictions?: { end_time?: string } }[];
  for (const element of elements) {
    if (on('vat-fraction')) {
      for (const c of element.price_components) if (c.vat !== undefined && c.vat >= 1 && c.vat <= 30) c.vat = Number(new Big(c.vat).div(100).toString());
    }
    if (on('24h') && element.restrictions?.end_time === '00:00') element.restrictions.end_time = '24:00';
  }
  if (on('unusable') && quirkPicks.tariffWithUnknownDimension(tariff.id) && elements[0]?.price_components[0]) elements[0].price_components[0].type = 'KWH';
  return on('extra-fields') ? { ...t, ...EXTRA } : t;
}

/** The quirks of one network: functions that turn what it serves or pushes into what a quirky CPO would send. */
export function createQuirks(quirks: readonly Quirk[]) {
  const set = new Set(quirks);
  const on = (q: Quirk) => set.has(q);
  const active = set.size > 0;
  return {
    quirks: [...set],
    location(location: OcpiLocation): unknown {
      if (!active) return location;
      const l: Record<string, unknown> = { ...location };
      quirkLocationFields(l, location, on);
      const scenario = location.id.startsWith('SCN-');
      const evses = (location.evses ?? []).map((e) => quirkEvse(e, on, scenario || scenarioOf(e.evse_id) !== undefined));
      if (on('unusable') && quirkPicks.evseWithoutUid(location.id) && evses[0]) delete evses[0].uid;
      l.evses = evses;
      return on('extra-fields') ? { ...l, ...EXTRA } : l;
    },
    evse(evse: OcpiEvse): unknown {
      return active ? quirkEvse(evse, on, scenarioOf(evse.evse_id) !== undefined) : evse;
    },
    /** An EVSE status as pushed (PATCH): in lower case with unknown-enums. */
    status(status: string): string {
      return on('unknown-enums') ? status.toLowerCase() : status;
    },
    tariff(tariff: OcpiTariff): unknown {
      return active ? quirkTariffRecord(tariff, on) : tariff;
    },
    /** A Session or CDR (pulled or pushed): "" meter_id, extra fields, a CDR's coordinates and tariffs as above. */
    sessionOrCdr<T>(object: T): unknown {
      if (!active || object === null || typeof object !== 'object') return object;
      const o: Record<string, unknown> = { ...(object as Record<string, unknown>) };
      if (on('empty-ids')) o.meter_id = '';
      const where = o.cdr_location as { coordinates?: { latitude: string; longitude: string } } | undefined;
      if (on('coordinates') && where?.coordinates) {
        o.cdr_location = {
          ...where,
          coordinates: { latitude: withFourDecimals(where.coordinates.latitude), longitude: withFourDecimals(where.coordinates.longitude) },
        };
      }
      if (Array.isArray(o.tariffs) && on('vat-fraction')) o.tariffs = (o.tariffs as OcpiTariff[]).map((t) => quirkTariffRecord(t, (q) => q === 'vat-fraction'));
      return on('extra-fields') ? { ...o, ...EXTRA } : o;
    },
  };
}

export type Quirks = ReturnType<typeof createQuirks>;
