// The service's HTTP server: the app (API, OCPI, webhooks) built over the
// parts started before it, listening on PORT over HTTPS (or plain HTTP behind
// a TLS-terminating proxy), and closed with a grace period for requests in flight.
import { type AppDeps, type AppModules, buildApp } from '../app.ts';
import type { ClientsService } from '../modules/clients/service.ts';
import type { Ocpi } from '../modules/ocpi/service.ts';
import type { PaymentProcessor } from '../modules/payments/processor.ts';
import type { Catalogue } from '../modules/stations/catalogue.ts';
import type { Ingestion } from '../modules/stations/ingest.ts';
import type { Database } from '../platform/db.ts';
import type { HttpApp } from '../platform/http/server.ts';
import { createDualProtocolServer, createPlainServer, type TlsMaterial } from '../platform/http/tls.ts';
import { listening } from '../platform/lifecycle.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { Readiness } from '../platform/readiness.ts';
import { announcedAddress, recordServiceAddress } from '../platform/service-address.ts';
import { sandboxBrowserRoutes } from '../sandbox/stripe/browser.ts';
import type { StripeSandbox } from '../sandbox/stripe/index.ts';
import { readDemoToken } from './clients.ts';
import type { StartupContext } from './context.ts';

export interface HttpServerDeps {
  db: Database;
  clients: ClientsService;
  catalogue: Catalogue;
  ingestion: Ingestion;
  readiness: Readiness;
  processor: PaymentProcessor;
  sandbox: StripeSandbox | undefined;
  metrics: Metrics | undefined;
  tls: TlsMaterial | undefined;
  /** DATA_DIR/demo-token: the playground's tokens are minted for its client. */
  demoTokenFile: string;
  ownTraffic: NonNullable<AppDeps['ownTraffic']>;
}

/** The app, listening; and its OCPI module (made by the composition root, src/modules.ts), not started yet. */
export async function startHttpServer(
  { config, log, clock, stops }: StartupContext,
  deps: HttpServerDeps,
): Promise<{ server: HttpApp & { modules: AppModules }; ocpi: Ocpi }> {
  const { db, clients, catalogue, ingestion, readiness, processor, sandbox, metrics, tls, demoTokenFile, ownTraffic } = deps;
  const ocpiLog = log.child({ component: 'ocpi' });
  const server = await buildApp({
    config,
    db,
    clock,
    authenticate: clients.authenticate,
    catalogue,
    ingestion,
    // The OCPI module is made by the composition root (src/modules.ts), with charging's hooks.
    ocpi: { log: (level, message, fields) => ocpiLog[level](fields ?? {}, message) },
    readiness,
    // The development playground (served outside production only): tokens of the demo client, minted as it asks.
    playground: { demoToken: async () => (config.demoClient ? readDemoToken(demoTokenFile) : undefined), issueToken: clients.issueToken },
    payments: { processor, ...(sandbox ? { processorRoutes: sandboxBrowserRoutes(sandbox) } : {}) },
    loggerInstance: log,
    metrics,
    ownTraffic,
    serverFactory: (handler) => (tls ? createDualProtocolServer(tls, handler, config.connections) : createPlainServer(config.connections, handler)),
  });
  stops.add('HTTP server', async (remainingMs) => {
    // Idle connections end at once (Fastify closes them); in-flight requests get what is left of SHUTDOWN_GRACE_MS.
    const force = setTimeout(() => server.server.closeAllConnections(), remainingMs);
    force.unref();
    await server.close();
    clearTimeout(force);
  });
  const ocpi = server.modules.ocpi as NonNullable<typeof server.modules.ocpi>;
  metrics?.watch({ ocpiPushes: ocpi.pushBacklog });
  // Listening before the catalogue is loaded: liveness and the API answer, /readyz and station routes say 503 until it is.
  await listening('the service', 'PORT', () =>
    server.listen({
      host: config.host,
      port: config.port,
      listenTextResolver: (address) => `listening on ${tls ? address.replace(/^http:/, 'https:') : address}`,
    }),
  );
  // Operator commands (`cpo invite`, ...) hand out the address the service announces: recorded once it listens.
  const address = server.server.address();
  await recordServiceAddress({ db, clock }, announcedAddress(config, typeof address === 'object' && address ? address.port : undefined));
  return { server, ocpi };
}
