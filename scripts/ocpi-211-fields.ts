// The fields of OCPI 2.1.1's objects, from the 2.1.1 spec's tables
// (mod_locations, mod_tariffs, mod_sessions, mod_cdrs, mod_tokens,
// mod_commands, credentials, version_information_endpoint): what every 2.1.1
// message recorded in CI (scripts/ocpi-official-check.ts; there is no
// official 2.1.1 OpenAPI) and on the wire in test/ocpi-211.test.ts is held
// to: its required fields there, and no field the 2.1.1 object does not have
// (2.2.1-only fields such as country_code). Nested Locations, EVSEs,
// Connectors, Tariffs, price components, Tokens and endpoints are checked too.

export interface Shape {
  required: readonly string[];
  optional: readonly string[];
}

/** The 2.1.1 objects' fields, from the 2.1.1 spec's tables (card. 1 / + required; ? / * optional). */
export const SHAPES_211 = {
  Location: {
    required: ['id', 'type', 'address', 'city', 'postal_code', 'country', 'coordinates', 'last_updated'],
    optional: [
      'name',
      'related_locations',
      'evses',
      'directions',
      'operator',
      'suboperator',
      'owner',
      'facilities',
      'time_zone',
      'opening_times',
      'charging_when_closed',
      'images',
      'energy_mix',
    ],
  },
  EVSE: {
    required: ['uid', 'status', 'connectors', 'last_updated'],
    optional: [
      'evse_id',
      'status_schedule',
      'capabilities',
      'floor_level',
      'coordinates',
      'physical_reference',
      'directions',
      'parking_restrictions',
      'images',
    ],
  },
  Connector: {
    required: ['id', 'standard', 'format', 'power_type', 'voltage', 'amperage', 'last_updated'],
    optional: ['tariff_id', 'terms_and_conditions'],
  },
  Tariff: { required: ['id', 'currency', 'elements', 'last_updated'], optional: ['tariff_alt_text', 'tariff_alt_url', 'energy_mix'] },
  PriceComponent: { required: ['type', 'price', 'step_size'], optional: [] },
  Session: {
    required: ['id', 'start_datetime', 'kwh', 'auth_id', 'auth_method', 'location', 'currency', 'status', 'last_updated'],
    optional: ['end_datetime', 'meter_id', 'charging_periods', 'total_cost'],
  },
  CDR: {
    required: [
      'id',
      'start_date_time',
      'stop_date_time',
      'auth_id',
      'auth_method',
      'location',
      'currency',
      'charging_periods',
      'total_cost',
      'total_energy',
      'total_time',
      'last_updated',
    ],
    optional: ['meter_id', 'tariffs', 'total_parking_time', 'remark'],
  },
  Token: { required: ['uid', 'type', 'auth_id', 'issuer', 'valid', 'whitelist', 'last_updated'], optional: ['visual_number', 'language'] },
  Credentials: { required: ['token', 'url', 'business_details', 'party_id', 'country_code'], optional: [] },
  StartSession: { required: ['response_url', 'token', 'location_id'], optional: ['evse_uid'] },
  StopSession: { required: ['response_url', 'session_id'], optional: [] },
  CommandResponse: { required: ['result'], optional: [] },
  Endpoint: { required: ['identifier', 'url'], optional: [] },
  VersionDetails: { required: ['version', 'endpoints'], optional: [] },
} as const satisfies Record<string, Shape>;

export type Shape211 = keyof typeof SHAPES_211;

/** What of `value` departs from the 2.1.1 object `shape` (nested Locations, EVSEs, Connectors, Tariffs and Tokens too). */
export function problems211(shape: Shape211, value: unknown, at: string = shape): string[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [`${at}: not an object`];
  const o = value as Record<string, unknown>;
  const { required, optional } = SHAPES_211[shape] as Shape;
  const out = [
    ...required.filter((f) => o[f] === undefined || o[f] === null).map((f) => `${at}: ${f} missing`),
    ...Object.keys(o)
      .filter((f) => !required.includes(f) && !optional.includes(f))
      .map((f) => `${at}: ${f} is not a 2.1.1 field`),
  ];
  const each = (field: string, inner: Shape211) => {
    const list = o[field];
    if (!Array.isArray(list)) return;
    for (const [i, item] of list.entries()) out.push(...problems211(inner, item, `${at}.${field}[${i}]`));
  };
  if (shape === 'Location') each('evses', 'EVSE');
  if (shape === 'EVSE') each('connectors', 'Connector');
  if (shape === 'Session' || shape === 'CDR') out.push(...problems211('Location', o.location, `${at}.location`));
  if (shape === 'CDR') each('tariffs', 'Tariff');
  if (shape === 'Tariff' && Array.isArray(o.elements)) {
    for (const [i, e] of (o.elements as { price_components?: unknown[] }[]).entries()) {
      for (const [j, c] of (e.price_components ?? []).entries()) out.push(...problems211('PriceComponent', c, `${at}.elements[${i}].price_components[${j}]`));
    }
  }
  if (shape === 'StartSession') out.push(...problems211('Token', o.token, `${at}.token`));
  if (shape === 'VersionDetails') each('endpoints', 'Endpoint');
  return out;
}
