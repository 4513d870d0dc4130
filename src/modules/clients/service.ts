// API clients (tenants) and their bearer tokens: the operator creates and
// disables clients and issues and revokes tokens; every API request is
// authenticated here.
import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { SigningKeys } from '../../platform/auth/keys.ts';
import type { Clock } from '../../platform/clock.ts';
import type { JwtConfig } from '../../platform/config.ts';
import type { Database } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import { isUuid } from '../../platform/ids.ts';
import * as repo from './repository.ts';

export interface Principal {
  clientId: string;
  tokenId: string;
  /** The client's own requests per minute (0 = unlimited); null: the service default. */
  rateLimitPerMinute: number | null;
}

/** A credential check beyond the signature: why it fails (undefined: it passes), and the client's rate limit, which comes with it at no extra query. */
interface CredentialCheck {
  failure: string | undefined;
  rateLimitPerMinute: number | null;
}

export interface IssuedToken {
  clientId: string;
  jti: string;
  token: string;
  expiresAt: Date | null;
}

/** "30d", "12h", "45m", "90s": a lifetime in milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration such as 30d, 12h, 45m or 90s`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  const ms = Number(match[1]) * unit;
  if (ms <= 0) throw new Error('the lifetime must be positive');
  return ms;
}

export interface ClientsServiceDeps {
  db: Database;
  clock: Clock;
  jwt: JwtConfig;
  keys: SigningKeys;
  /** How long a positive or negative credential check is reused; bounds revocation latency. */
  cacheTtlMs: number;
  /** True when tokens come from an external issuer (JWKS) and are not registered with us. */
  acceptUnregisteredTokens?: boolean;
}

export function createClientsService(deps: ClientsServiceDeps) {
  const { db, clock, jwt, keys } = deps;

  async function issueToken(clientId: string, options: { expiresInMs?: number } = {}): Promise<IssuedToken> {
    if (!keys.privateKey) throw new Error('this instance has no private signing key (JWT_PRIVATE_KEY_FILE); it can only verify tokens');
    if (!isUuid(clientId)) throw new Error(`no client ${clientId}`);
    const client = await repo.findClient(db, clientId);
    if (!client) throw new Error(`no client ${clientId}`);
    if (client.disabled_at) throw new Error(`client ${clientId} is disabled`);
    const now = clock.now();
    const jti = randomUUID();
    const expiresAt = options.expiresInMs ? new Date(now.getTime() + options.expiresInMs) : null;
    const builder = new SignJWT({})
      .setProtectedHeader({ alg: keys.algorithm, typ: 'JWT' })
      .setIssuer(jwt.issuer)
      .setAudience(jwt.audience)
      .setSubject(clientId)
      .setJti(jti)
      .setIssuedAt(Math.floor(now.getTime() / 1000));
    if (expiresAt) builder.setExpirationTime(Math.floor(expiresAt.getTime() / 1000));
    const token = await builder.sign(keys.privateKey);
    await repo.insertToken(db, { jti, clientId, issuedAt: now, expiresAt });
    return { clientId, jti, token, expiresAt };
  }

  async function createClient(name: string, options: { expiresInMs?: number } = {}): Promise<IssuedToken> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 200) throw new Error('the client name must be 1..200 characters');
    const id = randomUUID();
    await repo.insertClient(db, { id, name: trimmed, createdAt: clock.now() });
    return issueToken(id, options);
  }

  // Credential checks beyond the signature are cached briefly so a request does
  // not always cost a query; the TTL (<= 5 s) bounds how long a revoked token or
  // a disabled client keeps working on any instance.
  // One refresh at a time per credential: requests arriving while it runs wait
  // for it (or, while the previous answer is younger than twice the TTL and
  // 5 s, use that one), so an expiring entry never sends a burst of queries.
  const cache = new Map<string, { at: number; check: CredentialCheck | undefined; refreshing?: Promise<CredentialCheck> }>();

  async function credentialCheck(clientId: string, jti: string): Promise<CredentialCheck> {
    const key = `${clientId}:${jti}`;
    const now = Date.now(); // wall-clock on purpose: a cache age, not domain time
    const hit = cache.get(key);
    if (hit?.check && now - hit.at < deps.cacheTtlMs) return hit.check;
    const staleLimit = Math.min(2 * deps.cacheTtlMs, 5_000); // revocation still takes effect within 5 s
    if (hit?.refreshing) return hit.check && now - hit.at < staleLimit ? hit.check : hit.refreshing;
    const refreshing = repo.findCredentialState(db, clientId, jti).then(
      (state) => {
        const failure = !state
          ? 'unknown client'
          : state.client_disabled
            ? 'client disabled'
            : state.token_revoked
              ? 'token revoked'
              : // Tokens we sign are registered when issued, so an unregistered one cannot be
                // revoked and is refused. Tokens from a JWKS issuer are not registered here;
                // for them only the deny-list (revoked jti) applies.
                !state.token_registered && !deps.acceptUnregisteredTokens
                ? 'unknown token'
                : undefined;
        const check = { failure, rateLimitPerMinute: state?.rate_limit_per_minute ?? null };
        if (cache.size > 50_000) cache.clear();
        cache.set(key, { at: Date.now(), check });
        return check;
      },
      (error: unknown) => {
        if (hit)
          cache.set(key, { at: hit.at, check: hit.check }); // let the next request try again
        else cache.delete(key);
        throw error;
      },
    );
    cache.set(key, { at: hit?.at ?? 0, check: hit?.check, refreshing });
    if (hit?.check && now - hit.at < staleLimit) {
      // The previous answer serves this request; a failed refresh (database away) is tried again by the next one.
      refreshing.catch(() => {});
      return hit.check;
    }
    return refreshing;
  }

  // A token's signature is verified once; its verified claims are then reused
  // until the token expires (bounded map, expiry checked on every hit against
  // the injected clock). Revocation and disabling are not cached here: they go
  // through credentialCheck, whose own cache is short.
  const verified = new Map<string, { sub?: string; jti?: string; exp?: number }>();
  const VERIFIED_MAX = 10_000;

  async function verifiedClaims(token: string): Promise<{ sub?: string; jti?: string }> {
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
  async function authenticate(authorization: string | undefined): Promise<Principal> {
    if (!authorization) throw unauthorized('missing bearer token', false);
    const match = /^Bearer\s+([A-Za-z0-9_.~+/=-]+)\s*$/i.exec(authorization);
    if (!match?.[1]) throw unauthorized('malformed Authorization header: expected "Bearer <token>"', true);
    const payload = await verifiedClaims(match[1]);
    const { sub, jti } = payload;
    if (typeof sub !== 'string' || !isUuid(sub) || typeof jti !== 'string' || jti.length === 0 || jti.length > 200) {
      throw unauthorized('malformed token', true);
    }
    const { failure, rateLimitPerMinute } = await credentialCheck(sub, jti);
    if (failure) throw unauthorized(failure, true);
    return { clientId: sub, tokenId: jti, rateLimitPerMinute };
  }

  return {
    createClient,
    issueToken,
    authenticate,
    listClients: () => repo.listClients(db),
    async disableClient(id: string): Promise<void> {
      if (!isUuid(id) || !(await repo.disableClient(db, id, clock.now()))) throw new Error(`no client ${id}`);
    },
    /** Sets a client's requests per minute (0 = unlimited; null = the service default); every instance applies it within the credential cache's TTL. */
    async setRateLimit(id: string, perMinute: number | null): Promise<void> {
      if (perMinute !== null && (!Number.isSafeInteger(perMinute) || perMinute < 0 || perMinute > 2_147_483_647)) {
        throw new Error('the rate limit must be an integer >= 0 (0 = unlimited)');
      }
      if (!isUuid(id) || !(await repo.setClientRateLimit(db, id, perMinute))) throw new Error(`no client ${id}`);
    },
    async revokeToken(jti: string): Promise<void> {
      if (!(await repo.revokeToken(db, jti, clock.now()))) throw new Error(`no token with id ${jti}`);
    },
  };
}

export type ClientsService = ReturnType<typeof createClientsService>;
