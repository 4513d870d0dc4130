// OCPI 2.2.1 Credentials module (credentials.asciidoc): the object both
// parties exchange to register, with the roles a platform plays and the
// business details of each (BusinessDetails and Image from mod_locations).
// Written from the spec's tables.
import { type Static, Type } from 'typebox';
import { CiString, CountryCode, PartyId } from './types.ts';
import { OcpiUrl } from './versions.ts';

/** Role (types.asciidoc). */
export const ROLES = ['CPO', 'EMSP', 'HUB', 'NAP', 'NSP', 'OTHER', 'SCSP'] as const;
export const Role = Type.Enum(ROLES);
export type Role = Static<typeof Role>;

export const IMAGE_CATEGORIES = ['CHARGER', 'ENTRANCE', 'LOCATION', 'NETWORK', 'OPERATOR', 'OTHER', 'OWNER'] as const;
export const ImageCategory = Type.Enum(IMAGE_CATEGORIES);
export type ImageCategory = Static<typeof ImageCategory>;

/** Image (mod_locations): width and height are int(5). */
export const Image = Type.Object({
  url: OcpiUrl,
  thumbnail: Type.Optional(OcpiUrl),
  category: ImageCategory,
  type: CiString(4),
  width: Type.Optional(Type.Integer({ minimum: 0, maximum: 99999 })),
  height: Type.Optional(Type.Integer({ minimum: 0, maximum: 99999 })),
});
export type Image = Static<typeof Image>;

/** BusinessDetails (mod_locations). */
export const BusinessDetails = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  website: Type.Optional(OcpiUrl),
  logo: Type.Optional(Image),
});
export type BusinessDetails = Static<typeof BusinessDetails>;

export const CredentialsRole = Type.Object({
  role: Role,
  business_details: BusinessDetails,
  party_id: PartyId,
  country_code: CountryCode,
});
export type CredentialsRole = Static<typeof CredentialsRole>;

/** The credentials token: string(64) of printable non-whitespace ASCII (U+0021 to U+007E). */
export const CredentialsToken = Type.String({ minLength: 1, maxLength: 64, pattern: '^[!-~]+$' });

export const Credentials = Type.Object({
  token: CredentialsToken,
  url: OcpiUrl,
  roles: Type.Array(CredentialsRole, { minItems: 1 }),
});
export type Credentials = Static<typeof Credentials>;
