// Per-client rate limits of the client API (contract.md "Limits"): after the
// bearer-token gate, every request counts against its client's requests per
// minute (the client's own limit, or the service default; 0 = unlimited).
// Answers carry RateLimit-Limit/Remaining/Reset; over the limit, 429
// rate_limited with Retry-After. The counting is src/platform/rate-limit/.
import { AppError } from '../errors.ts';
import type { RateDecision, RateLimiter } from '../rate-limit/limiter.ts';
import type { HttpApp } from './server.ts';

export interface ClientRateLimitDeps {
  limiter: RateLimiter;
  /** Requests per minute of a client without its own limit (RATE_LIMIT_PER_MINUTE); 0 = unlimited. */
  defaultPerMinute: number;
}

/** The RateLimit-* headers of a decision (draft-ietf-httpapi-ratelimit-headers, the separate-fields form). */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}

/** Every route registered in `scope` counts against its client's limit; call after requireBearerToken. */
export function limitRequestsPerClient(scope: HttpApp, deps: ClientRateLimitDeps): void {
  scope.addHook('onRequest', async (request, reply) => {
    const principal = request.principal;
    if (!principal) return;
    const limit = principal.rateLimitPerMinute ?? deps.defaultPerMinute;
    if (limit === 0) return;
    const decision = await deps.limiter.admit(`client:${principal.clientId}`, limit);
    void reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) {
      throw new AppError('rate_limited', `This client may make ${limit} requests per minute; retry after ${decision.resetSeconds} s.`, {
        headers: { 'Retry-After': String(decision.resetSeconds) },
      });
    }
  });
}
