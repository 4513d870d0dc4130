// Request metrics of the HTTP app: every answer counted and timed by its route
// pattern (never the raw URL, whose ids would make a label value per user),
// method and status, and every 429 counted as a rate-limit rejection.
import type { FastifyInstance } from 'fastify';
import { type Metrics, UNMATCHED_ROUTE } from '../metrics.ts';

/** Adds the hook to the root context: call it before any route or plugin is registered, so every route inherits it. */
export function recordRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    // A 429 is a rate-limit rejection wherever it was decided (the API's rate_limited problem, OCPI's own 429).
    if (status === 429) metrics.rateLimitRejected(request.url.startsWith('/ocpi/') ? 'ocpi' : 'client');
    metrics.httpRequest(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, status, reply.elapsedTime / 1000);
    done();
  });
}
