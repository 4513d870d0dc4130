// OCPI 2.2.1 Tokens module (mod_tokens.asciidoc): the Token object the eMSP
// pushes to CPOs, and the AuthorizationInfo it answers a real-time
// authorization with. Written from the spec's tables.
import { type Static, Type } from 'typebox';
import { CiString, CountryCode, DateTime, DisplayText, PartyId } from './types.ts';

export const TOKEN_TYPES = ['AD_HOC_USER', 'APP_USER', 'OTHER', 'RFID'] as const;
export const TokenType = Type.Enum(TOKEN_TYPES);
export type TokenType = Static<typeof TokenType>;

export const WHITELIST_TYPES = ['ALWAYS', 'ALLOWED', 'ALLOWED_OFFLINE', 'NEVER'] as const;
export const WhitelistType = Type.Enum(WHITELIST_TYPES);
export type WhitelistType = Static<typeof WhitelistType>;

export const ALLOWED_TYPES = ['ALLOWED', 'BLOCKED', 'EXPIRED', 'NO_CREDIT', 'NOT_ALLOWED'] as const;
export const AllowedType = Type.Enum(ALLOWED_TYPES);
export type AllowedType = Static<typeof AllowedType>;

/**
 * ProfileType (mod_sessions), used by Token.default_profile_type. Defined here
 * rather than in sessions.ts so that sessions.ts can import TokenType from this
 * module without an import cycle; sessions.ts re-exports it.
 */
export const PROFILE_TYPES = ['CHEAP', 'FAST', 'GREEN', 'REGULAR'] as const;
export const ProfileType = Type.Enum(PROFILE_TYPES);
export type ProfileType = Static<typeof ProfileType>;

export const EnergyContract = Type.Object({
  supplier_name: Type.String({ minLength: 1, maxLength: 64 }),
  contract_id: Type.Optional(Type.String({ maxLength: 64 })),
});
export type EnergyContract = Static<typeof EnergyContract>;

export const Token = Type.Object({
  country_code: CountryCode,
  party_id: PartyId,
  uid: CiString(36),
  type: TokenType,
  contract_id: CiString(36),
  visual_number: Type.Optional(Type.String({ maxLength: 64 })),
  issuer: Type.String({ minLength: 1, maxLength: 64 }),
  group_id: Type.Optional(CiString(36)),
  valid: Type.Boolean(),
  whitelist: WhitelistType,
  language: Type.Optional(Type.String({ minLength: 2, maxLength: 2 })),
  default_profile_type: Type.Optional(ProfileType),
  energy_contract: Type.Optional(EnergyContract),
  last_updated: DateTime,
});
export type Token = Static<typeof Token>;

/** The body of a PATCH on a Token: any Token field, and always last_updated. */
export const TokenPatch = Type.Object({ ...Type.Partial(Token).properties, last_updated: DateTime });
export type TokenPatch = Static<typeof TokenPatch>;

export const LocationReferences = Type.Object({
  location_id: CiString(36),
  evse_uids: Type.Optional(Type.Array(CiString(36))),
});
export type LocationReferences = Static<typeof LocationReferences>;

export const AuthorizationInfo = Type.Object({
  allowed: AllowedType,
  token: Token,
  location: Type.Optional(LocationReferences),
  authorization_reference: Type.Optional(CiString(36)),
  info: Type.Optional(DisplayText),
});
export type AuthorizationInfo = Static<typeof AuthorizationInfo>;
