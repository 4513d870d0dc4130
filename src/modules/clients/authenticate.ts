// Every API request is authenticated here: the bearer token's signature and
// claims (verified once per token, then reused until it expires), then the
// credential check (credential-check.ts). Every failure is a 401 with a
// WWW-Authenticate challenge.
import { errors as joseErrors, jwtVerify } from 'jose';
import type { SigningKeys } from '../../platform/auth/keys.ts';
import type { Clock } from '../../platform/clock.ts';
import type { JwtConfig } from '../../platform/config.ts';
import { AppError } from '../../platform/errors.ts';
import { isUuid } from '../../platform/ids.ts';
import { type CredentialCheckContext, credentialCheck } from './credential-check.ts';

export interface Principal {
  clientId: string;
  tokenId: string;
  /** The client's own requests per minute (0 = unlimited); null: the service default. */
  rateLimitPerMinute: number | null;
}

// A token's signature is verified once; its verified claims are then reused
// until the token expires (bounded map, expiry checked on every hit against
// the injected clock). Revocation and disabling are not cached here: they go
// through credentialCheck, whose own cache is short.
export type VerifiedTokens = Map<string, { sub?: string; jti?: string; exp?: number }>;
const VERIFIED_MAX = 10_000;

export interface AuthenticateContext extends CredentialCheckContext {
  clock: Clock;
  jwt: JwtConfig;
  keys: SigningKeys;
  verifiedTokens: VerifiedTokens;
}

async function verifiedClaims(ctx: AuthenticateContext, token: string): Promise<{ sub?: string; jti?: string }> {
  const { clock, jwt, keys } = ctx;
  const verified = ctx.verifiedTokens;
  const hit = verified.get(token);
  if (hit && (hit.exp === undefined || hit.exp * 1000 + 30_000 > clock.now().getTime())) return hit;
  if (hit) {
    verified.delete(token);
    throw unauthorized('token expired', true);
  }
  let payload: { sub?: string; jti?: string; exp?: number };
  try {
    ({ payload } = await jwtVerify(token, keys.verifyKey as Parameters<typeof jwtVerify>[1], {
      algorithms: [keys.algorithm],
      issuer: jwt.issuer,
      audience: jwt.audience,
      requiredClaims: ['sub', 'jti', 'iat'],
      currentDate: clock.now(),
      clockTolerance: 30,
    }));
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw unauthorized('token expired', true);
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) throw unauthorized('invalid token signature', true);
    if (error instanceof joseErrors.JOSEAlgNotAllowed) throw unauthorized('token algorithm not allowed', true);
    if (error instanceof joseErrors.JWTClaimValidationFailed) throw unauthorized(`invalid token claim ${error.claim}`, true);
    throw unauthorized('malformed token', true);
  }
  if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value as string);
  verified.set(token, { sub: payload.sub, jti: payload.jti, exp: payload.exp });
  return payload;
}

function unauthorized(detail: string, withError: boolean): AppError {
  const challenge = withError ? `Bearer realm="charging-access", error="invalid_token", error_description="${detail}"` : 'Bearer realm="charging-access"';
  return new AppError('unauthorized', `${detail[0]?.toUpperCase()}${detail.slice(1)}.`, { headers: { 'WWW-Authenticate': challenge } });
}

/** Authenticates an Authorization header value; throws AppError('unauthorized') on every failure kind. */
export async function authenticate(ctx: AuthenticateContext, authorization: string | undefined): Promise<Principal> {
  if (!authorization) throw unauthorized('missing bearer token', false);
  const match = /^Bearer\s+([A-Za-z0-9_.~+/=-]+)\s*$/i.exec(authorization);
  if (!match?.[1]) throw unauthorized('malformed Authorization header: expected "Bearer <token>"', true);
  const payload = await verifiedClaims(ctx, match[1]);
  const { sub, jti } = payload;
  if (typeof sub !== 'string' || !isUuid(sub) || typeof jti !== 'string' || jti.length === 0 || jti.length > 200) {
    throw unauthorized('malformed token', true);
  }
  const { failure, rateLimitPerMinute } = await credentialCheck(ctx, sub, jti);
  if (failure) throw unauthorized(failure, true);
  return { clientId: sub, tokenId: jti, rateLimitPerMinute };
}
