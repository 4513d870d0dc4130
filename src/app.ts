// Builds the HTTP application from its dependencies (main.ts passes the real ones; tests pass their own: database,
// clock, keys) over the service's modules, which the composition root src/modules.ts makes.
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { chargingRoutes } from './modules/charging/routes.ts';
import { eventsRoutes } from './modules/events/routes.ts';
import { createSessionStreams } from './modules/events/streams.ts';
import { invoiceDocumentRoutes, invoicingRoutes } from './modules/invoicing/routes.ts';
import { ocpiPreRoutingAnswer } from './modules/ocpi/http.ts';
import type { Ocpi } from './modules/ocpi/service.ts';
import type { PaymentProcessor } from './modules/payments/processor.ts';
import { paymentsRoutes } from './modules/payments/routes.ts';
import type { PaymentMethodRemovalGuard } from './modules/payments/service.ts';
import { paymentWebhookRoutes } from './modules/payments/webhook-routes.ts';
import type { Catalogue } from './modules/stations/catalogue.ts';
import type { Ingestion } from './modules/stations/ingest.ts';
import { stationsRoutes } from './modules/stations/routes.ts';
import { usersRoutes } from './modules/users/routes.ts';
import { eventWebhooks } from './modules/webhooks/event-schemas.ts';
import { webhooksRoutes } from './modules/webhooks/routes.ts';
import { createModules, type Modules, type OcpiSettings } from './modules.ts';
import type { Clock } from './platform/clock.ts';
import type { Config } from './platform/config.ts';
import type { Database } from './platform/db.ts';
import { ERROR_CODES, type ErrorCode, notFound, problemTypeUri } from './platform/errors.ts';
import { type Authenticate, requireBearerToken } from './platform/http/auth.ts';
import { createIdempotency } from './platform/http/idempotency.ts';
import { recordRequestMetrics } from './platform/http/metrics.ts';
import { API_TAGS, docsConfiguration, documentRoute, OPENAPI_EXTENSIONS, SECURITY_SCHEMES } from './platform/http/openapi.ts';
import { clientRateLimit } from './platform/http/rate-limit.ts';
import { ProblemSchema, problemAsComponent } from './platform/http/schema.ts';
import { createHttpApp, type HttpApp, type HttpAppOptions } from './platform/http/server.ts';
import type { Metrics } from './platform/metrics.ts';
import { createRateLimiter } from './platform/rate-limit/limiter.ts';
import type { Readiness } from './platform/readiness.ts';
import { createPlayground, type PlaygroundSettings } from './playground/index.ts';

export interface AppDeps {
  config: Config;
  db: Database;
  clock: Clock;
  authenticate: Authenticate;
  catalogue: Catalogue;
  /** The payment processor (the Stripe adapter, talking to Stripe or to the built-in sandbox); without it no payment routes. */
  payments?: {
    processor: PaymentProcessor;
    removalGuards?: readonly PaymentMethodRemovalGuard[];
    /** Routes the processor itself serves on our port (the sandbox's browser stand-in under /sandbox/). */
    processorRoutes?: (app: FastifyInstance) => Promise<void>;
  };
  /**
   * The OCPI interface to CPOs (served under /ocpi): its settings, and src/modules.ts makes it with charging's hooks
   * (or a module made by the caller, used as it is). Without it no OCPI routes; charging needs it and payments.
   */
  ocpi?: Ocpi | OcpiSettings;
  /** The catalogue's OCPI objects (locations, tariffs), for charging; made here when absent. */
  ingestion?: Ingestion;
  /** What start-up still waits for (main.ts); absent: everything is ready once the database answers. */
  readiness?: Readiness;
  /** The development playground (/playground/, src/playground/); never served in production. */
  playground?: PlaygroundSettings;
  serverFactory?: HttpAppOptions['serverFactory'];
  /** Where requests are counted and timed (METRICS_PORT); without it nothing is recorded. */
  metrics?: Metrics;
  logger?: HttpAppOptions['logger'];
  loggerInstance?: HttpAppOptions['loggerInstance'];
  ownTraffic?: HttpAppOptions['ownTraffic'];
}

/** The app's modules (src/modules.ts), and what they give the process around it: background job handlers and periodic repairs. */
export type AppModules = Modules;

export const API_PREFIX = '/api/v1';
export const OCPI_PREFIX = '/ocpi';

export async function buildApp(deps: AppDeps): Promise<HttpApp & { modules: AppModules }> {
  const { config, db, clock } = deps;
  const app = createHttpApp({
    config,
    ...(deps.serverFactory ? { serverFactory: deps.serverFactory } : {}),
    ...(deps.logger !== undefined ? { logger: deps.logger } : {}),
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : {}),
    ...(deps.ownTraffic ? { ownTraffic: deps.ownTraffic } : {}),
    // A malformed URL under /ocpi is answered with OCPI's envelope, as the rest of that interface.
    preRoutingAnswers: [{ prefix: OCPI_PREFIX, answer: (reply, request, status, message) => ocpiPreRoutingAnswer(reply, request, clock, status, message) }],
  });
  if (deps.metrics) recordRequestMetrics(app, deps.metrics);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Charging Access API',
        version: '1.0.0',
        description:
          'HTTPS JSON API of the Charging Access e-Mobility Service Provider: users, billing details, payment methods, station discovery and charging sessions. ' +
          'Every /api/v1 request needs `Authorization: Bearer <token>` (a JWT issued by the operator). Errors are RFC 9457 problem+json bodies whose `error.type` is the machine-readable code. ' +
          'POST, PUT, PATCH and DELETE accept an `Idempotency-Key` header. ' +
          'Requests are rate limited per client (requests per minute, set by the operator): answers carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; past the limit, 429 `rate_limited` with `Retry-After`.',
      },
      servers: [{ url: config.publicBaseUrl }],
      components: { securitySchemes: SECURITY_SCHEMES },
      tags: [...API_TAGS],
      ...OPENAPI_EXTENSIONS,
      webhooks: eventWebhooks(),
    },
    transform: documentRoute(OCPI_PREFIX),
    transformObject: (document) => ('openapiObject' in document ? problemAsComponent(document.openapiObject) : document.swaggerObject),
  });

  const idempotency = createIdempotency({ db, clock });
  const modules = createModules({
    config,
    db,
    clock,
    catalogue: deps.catalogue,
    ...(deps.ingestion ? { ingestion: deps.ingestion } : {}),
    ...(deps.payments ? { payments: deps.payments } : {}),
    ...(deps.ocpi ? { ocpi: deps.ocpi } : {}),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    log: app.log,
  });
  const { users, payments, ocpi } = modules;
  // Live session streams: ended before the server closes (they would hold it open), their LISTEN connection released.
  const streams = createSessionStreams({
    db,
    heartbeatMs: config.events.sseHeartbeatMs,
    maxPerClient: config.events.sseMaxStreamsPerClient,
    log: (level, message, fields) => app.log[level](fields ?? {}, message),
  });
  app.addHook('preClose', () => streams.close());

  healthAndProblemRoutes(app, { db, readiness: deps.readiness, publicBaseUrl: config.publicBaseUrl });

  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  await app.register(scalar, { routePrefix: '/docs', configuration: docsConfiguration(`${API_PREFIX}/openapi.json`) });

  await app.register(
    async (api) => {
      const limiter = createRateLimiter({ db, clock, log: (level, message, fields) => app.log[level](fields ?? {}, message) });
      requireBearerToken(api as HttpApp, deps.authenticate, clientRateLimit({ limiter, defaultPerMinute: config.rateLimitPerMinute }));
      await api.register(usersRoutes({ db, users, idempotency, publicBaseUrl: config.publicBaseUrl, locales: config.locales, metrics: deps.metrics }));
      await api.register(stationsRoutes({ catalogue: deps.catalogue, publicBaseUrl: config.publicBaseUrl }));
      if (payments) await api.register(paymentsRoutes({ payments, idempotency, publicBaseUrl: config.publicBaseUrl }));
      await api.register(webhooksRoutes({ db, clock, idempotency, publicBaseUrl: config.publicBaseUrl, policy: { production: config.mode === 'production' } }));
      if (modules.charging && modules.invoicing) {
        await api.register(chargingRoutes({ charging: modules.charging, idempotency, publicBaseUrl: config.publicBaseUrl }));
        await api.register(invoicingRoutes({ invoicing: modules.invoicing, publicBaseUrl: config.publicBaseUrl }));
        await api.register(eventsRoutes({ streams, requireSession: modules.charging.requireSession, authenticate: deps.authenticate }));
      }
    },
    { prefix: API_PREFIX },
  );

  if (ocpi) await app.register(ocpi.routes(), { prefix: OCPI_PREFIX });
  if (payments) await app.register(paymentWebhookRoutes({ payments }));
  if (deps.payments?.processorRoutes) await app.register(deps.payments.processorRoutes);
  if (modules.invoicing) await app.register(invoiceDocumentRoutes({ invoicing: modules.invoicing }));
  // Off in production: /playground/ is then a 404 like any unknown path.
  if (deps.playground && config.mode !== 'production') await app.register(createPlayground({ ...deps.playground, clock, authenticate: deps.authenticate }));

  return Object.assign(app, { modules });
}

/** Liveness, readiness (what start-up still waits for, whether the database answers) and the error types' descriptions. */
function healthAndProblemRoutes(app: HttpApp, deps: { db: Database; readiness: Readiness | undefined; publicBaseUrl: string }): void {
  app.get('/healthz', { schema: { summary: 'Liveness', tags: ['Health'], response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({
    status: 'ok' as const,
  }));

  const ReadyzAnswer = Type.Object({
    status: Type.Union([Type.Literal('ready'), Type.Literal('starting'), Type.Literal('unavailable')]),
    waiting_for: Type.Optional(Type.Array(Type.String(), { description: 'Parts of the start-up not done yet.' })),
  });
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: migrations applied, the database answers and the station catalogue is loaded',
        description:
          'Route traffic to this instance only while this answers 200. 503 `starting` lists what start-up still waits for; 503 `unavailable`: the database does not answer.',
        tags: ['Health'],
        response: { 200: ReadyzAnswer, 503: ReadyzAnswer },
      },
    },
    async (_request, reply) => {
      const waiting = deps.readiness?.pending() ?? [];
      if (waiting.length > 0)
        return reply
          .code(503)
          .header('Retry-After', '5')
          .send({ status: 'starting' as const, waiting_for: waiting });
      try {
        await deps.db.query('SELECT 1');
        return { status: 'ready' as const };
      } catch {
        return reply
          .code(503)
          .header('Retry-After', '2')
          .send({ status: 'unavailable' as const });
      }
    },
  );

  app.get(
    '/problems/:code',
    {
      schema: {
        summary: 'Describe an error type',
        description: 'The `type` URI of every problem body points here.',
        tags: ['Errors'],
        params: Type.Object({ code: Type.String() }),
        response: {
          200: Type.Object({ type: Type.String(), code: Type.String(), title: Type.String(), status: Type.Integer(), description: Type.String() }),
          404: ProblemSchema,
        },
      },
    },
    async (request) => {
      const code = request.params.code as ErrorCode;
      const info = Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code] : undefined;
      if (!info) throw notFound('Error type');
      return { type: problemTypeUri(deps.publicBaseUrl, code), code, ...info };
    },
  );
}
