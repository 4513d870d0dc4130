// What a token's signature cannot tell: whether its client is still enabled,
// the token not revoked (and, for tokens we sign, registered), and the
// client's rate limit. One query, cached briefly.
import type { Database } from '../../platform/db.ts';
import * as repo from './repository.ts';

/** A credential check beyond the signature: why it fails (undefined: it passes), and the client's rate limit, which comes with it at no extra query. */
export interface CredentialCheck {
  failure: string | undefined;
  rateLimitPerMinute: number | null;
}

// Credential checks beyond the signature are cached briefly so a request does
// not always cost a query; the TTL (<= 5 s) bounds how long a revoked token or
// a disabled client keeps working on any instance.
// One refresh at a time per credential: requests arriving while it runs wait
// for it (or, while the previous answer is younger than twice the TTL and
// 5 s, use that one), so an expiring entry never sends a burst of queries.
export type CredentialCache = Map<string, { at: number; check: CredentialCheck | undefined; refreshing?: Promise<CredentialCheck> }>;

export interface CredentialCheckContext {
  db: Database;
  /** How long a positive or negative credential check is reused; bounds revocation latency. */
  cacheTtlMs: number;
  /** True when tokens come from an external issuer (JWKS) and are not registered with us. */
  acceptUnregisteredTokens?: boolean;
  credentialCache: CredentialCache;
}

export async function credentialCheck(ctx: CredentialCheckContext, clientId: string, jti: string): Promise<CredentialCheck> {
  const cache = ctx.credentialCache;
  const key = `${clientId}:${jti}`;
  const now = Date.now(); // wall-clock on purpose: a cache age, not domain time
  const hit = cache.get(key);
  if (hit?.check && now - hit.at < ctx.cacheTtlMs) return hit.check;
  const staleLimit = Math.min(2 * ctx.cacheTtlMs, 5_000); // revocation still takes effect within 5 s
  if (hit?.refreshing) return hit.check && now - hit.at < staleLimit ? hit.check : hit.refreshing;
  const refreshing = repo.findCredentialState(ctx.db, clientId, jti).then(
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
              !state.token_registered && !ctx.acceptUnregisteredTokens
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
