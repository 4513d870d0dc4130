// OCPI 2.2.1 Versions module (version_information_endpoint.asciidoc): the list
// of versions a party supports and, per version, its endpoints. Also the URL
// type (types.asciidoc) every module uses. Written from the spec's tables.
import { type Static, Type } from 'typebox';

/**
 * OCPI URL: string(255) following the W3C URI spec. Absolute (a scheme, then
 * no whitespace); whether the scheme is one we are willing to call is the
 * caller's decision, not the schema's.
 */
export const OcpiUrl = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z][A-Za-z0-9+.-]*:\\S+$' });

/** The versions known to OCPI 2.2.1 (VersionNumber). Peers may list others (newer versions), so the schemas accept any version string. */
export const VERSION_NUMBERS = ['2.0', '2.1', '2.1.1', '2.2', '2.2.1'] as const;
export type VersionNumber = (typeof VERSION_NUMBERS)[number];
const VersionString = Type.String({ minLength: 1 });

/** The module identifiers of OCPI 2.2.1 (ModuleID). Custom modules are allowed ("nltnm-tokens"), so Endpoint.identifier accepts any string. */
export const MODULE_IDS = ['cdrs', 'chargingprofiles', 'commands', 'credentials', 'hubclientinfo', 'locations', 'sessions', 'tariffs', 'tokens'] as const;
export type ModuleId = (typeof MODULE_IDS)[number];

export const INTERFACE_ROLES = ['SENDER', 'RECEIVER'] as const;
export const InterfaceRole = Type.Enum(INTERFACE_ROLES);
export type InterfaceRole = Static<typeof InterfaceRole>;

export const Version = Type.Object({
  version: VersionString,
  url: OcpiUrl,
});
export type Version = Static<typeof Version>;

/** The data of GET on a versions endpoint: one or more Version. */
export const Versions = Type.Array(Version, { minItems: 1 });
export type Versions = Static<typeof Versions>;

export const Endpoint = Type.Object({
  identifier: Type.String({ minLength: 1 }),
  role: InterfaceRole,
  url: OcpiUrl,
});
export type Endpoint = Static<typeof Endpoint>;

export const VersionDetails = Type.Object({
  version: VersionString,
  endpoints: Type.Array(Endpoint, { minItems: 1 }),
});
export type VersionDetails = Static<typeof VersionDetails>;
