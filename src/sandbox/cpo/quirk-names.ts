// The names of the sandbox network's quirks (quirks.ts says what each sends),
// on their own so the configuration can check CPO_SANDBOX_QUIRKS without
// loading the network.

export const QUIRKS = [
  /** Coordinates with 4 decimals (2.2.1 wants 5 to 7). */
  'coordinates',
  /** Regular hours ending "24:00", tariff restrictions ending "24:00". */
  '24h',
  /** Locations without time_zone. */
  'no-timezone',
  /** "" for optional ids and references: physical_reference, a tariff_ids entry, meter_id. */
  'empty-ids',
  /** VAT as a fraction (0.19 for 19 %), in Tariffs and the tariffs of CDRs. */
  'vat-fraction',
  /** Enum values 2.2.1 does not know or spells otherwise: EVSE statuses, connector standards, facilities, parking types. */
  'unknown-enums',
  /** Fields 2.2.1 does not define, on every object. */
  'extra-fields',
  /** Objects that cannot be used: Locations without coordinates, EVSEs without uid, Tariffs with an unknown dimension. */
  'unusable',
] as const;
export type Quirk = (typeof QUIRKS)[number];

/** A comma-separated list of quirk names ("all" for every one); a RangeError names an unknown one. */
export function parseQuirks(text: string | undefined): Quirk[] {
  const names = (text ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.includes('all')) return [...QUIRKS];
  for (const name of names) {
    if (!(QUIRKS as readonly string[]).includes(name)) throw new RangeError(`unknown sandbox quirk "${name}" (known: ${QUIRKS.join(', ')}, all)`);
  }
  return [...new Set(names)] as Quirk[];
}
