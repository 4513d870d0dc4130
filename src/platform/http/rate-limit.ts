// Per-client rate limits of the client API (contract.md "Limits"): after the
// bearer-token gate, every request counts against its client's requests per
// minute (the client's own limit, or the service default; 0 = unlimited).
// Answers carry RateLimit-Limit/Remaining/Reset; over the limit, 429
// rate_limited with Retry-After. The counting is src/platform/rate-limit/.
import { AppError } from '../errors.ts';
import type { RateDecision, RateLimiter } from '../rate-limit/limiter.ts';
import type { AfterAuthentication } from './auth.ts';
import type { FastifyReply } from './server.ts';

export interface ClientRateLimitDeps {
  limiter: RateLimiter;
  /** Requests per minute of a client without its own limit (RATE_LIMIT_PER_MINUTE); 0 = unlimited. */
  defaultPerMinute: number;
}

/** Puts a decision's RateLimit-* headers on the answer (draft-ietf-httpapi-ratelimit-headers, the separate-fields form). */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateDecision): void {
  // Lower-case names and string values: Fastify stores them as given (no case folding, no conversion per request).
  void reply.header('ratelimit-limit', String(decision.limit));
  void reply.header('ratelimit-remaining', String(decision.remaining));
  void reply.header('ratelimit-reset', String(decision.resetSeconds));
}

/**
 * The per-client limit, run by requireBearerToken right after authentication: it answers synchronously while
 * the process holds an allowance (nearly always), so a counted request costs no promise of its own.
 */
export function clientRateLimit(deps: ClientRateLimitDeps): AfterAuthentication {
  const refuse = (limit: number, decision: RateDecision) =>
    new AppError('rate_limited', `This client may make ${limit} requests per minute; retry after ${decision.resetSeconds} s.`, {
      headers: { 'Retry-After': String(decision.resetSeconds) },
    });
  return (request, reply) => {
    const principal = request.principal;
    const limit = principal ? (principal.rateLimitPerMinute ?? deps.defaultPerMinute) : 0;
    if (!principal || limit === 0) return;
    // Keyed by the client id alone; OCPI connections are `ocpi:<id>`, which no UUID can be.
    const decision = deps.limiter.decide(principal.clientId, limit);
    if (decision instanceof Promise) {
      return decision.then((settled) => {
        setRateLimitHeaders(reply, settled);
        if (!settled.allowed) throw refuse(limit, settled);
      });
    }
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) throw refuse(limit, decision);
  };
}
