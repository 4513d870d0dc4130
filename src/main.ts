// The service's entry point (`npm start`): configuration, database (embedded
// by default), migrations, keys, certificate, demo client, HTTPS listener, and a
// clean shutdown on SIGINT/SIGTERM. Each step lives in src/startup/, in the order below.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createIngestion } from './modules/stations/ingest.ts';
import { systemClock } from './platform/clock.ts';
import { type Config, ConfigError, loadConfig, requireInvoiceIssuer, requirePaymentProcessor } from './platform/config.ts';
import { ensureCertificate } from './platform/http/tls.ts';
import { createStopList } from './platform/lifecycle.ts';
import { createLogger } from './platform/logging.ts';
import { createMetrics } from './platform/metrics.ts';
import { CATALOGUE_PART, createReadiness } from './platform/readiness.ts';
import { startHousekeeping, startJobs, startWebhookDelivery } from './startup/background-work.ts';
import { loadFirstCatalogue, startCatalogue } from './startup/catalogue.ts';
import { ensureDemoClient, printReadyBanner, startClients } from './startup/clients.ts';
import type { StartupContext } from './startup/context.ts';
import { startCpoSandbox } from './startup/cpo-sandbox.ts';
import { openDatabase, openSandboxDatabase, startDatabaseServer } from './startup/database.ts';
import { startHttpServer } from './startup/http-server.ts';
import { startMetricsListener } from './startup/metrics-listener.ts';
import { connectSandboxWebhooks, startPaymentProcessor } from './startup/payments.ts';
import { stopAfterFailedStart, stopOnSignals } from './startup/shutdown.ts';

function configOrExit(): Config {
  try {
    const config = loadConfig();
    requirePaymentProcessor(config);
    requireInvoiceIssuer(config);
    return config;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

export async function main(): Promise<void> {
  const config = configOrExit();
  const log = createLogger(config);
  const clock = systemClock;
  // A promise rejected with nobody waiting for it is a bug to fix, not a reason to stop serving every client.
  process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled promise rejection (the service keeps running)'));

  // Everything started is registered here, so a shutdown or a failed start-up stops exactly that, last first.
  const stops = createStopList({ stepTimeoutMs: Math.max(config.shutdownGraceMs, 5_000) + 5_000, graceMs: config.shutdownGraceMs });
  const ctx: StartupContext = { config, log, clock, stops };
  const readiness = createReadiness();
  const catalogueLoaded = readiness.waitFor(CATALOGUE_PART);
  const shutdown = stopOnSignals(ctx);

  // The built-in CPO network's versions URL: OCPI requests authenticated as the connection to it are its own traffic (logged at debug).
  let cpoSandboxVersionsUrl: string | undefined;
  try {
    await mkdir(config.dataDir, { recursive: true });
    const databaseUrl = await startDatabaseServer(ctx);
    // One registry for the process, handed to what records (nothing is recorded with METRICS_PORT off).
    const metrics = config.metrics ? createMetrics() : undefined;
    const db = await openDatabase(ctx, databaseUrl, metrics);
    if (metrics && config.metrics) await startMetricsListener(ctx, { db, metrics, listenOn: config.metrics });
    const sandboxDb = openSandboxDatabase(ctx, databaseUrl, db);

    const clients = await startClients(ctx, db);

    const tls = config.trustProxy ? undefined : await ensureCertificate(config.tls);
    if (tls?.created) log.info({ file: config.tls.certFile }, 'generated a self-signed TLS certificate for localhost');

    const demoTokenFile = path.join(config.dataDir, 'demo-token');
    await ensureDemoClient(ctx, clients, demoTokenFile);

    const ingestion = createIngestion({ db, clock });
    await loadFirstCatalogue(ctx, db, ingestion);
    const catalogue = startCatalogue(ctx, { db, metrics, readiness });

    const { processor, sandbox } = await startPaymentProcessor(ctx, { db: sandboxDb, metrics });

    // Before the HTTP server, so that on a stop it stops after it (the stop list runs last started first): requests in
    // flight drain first, deliveries in flight get what is left of the grace.
    startWebhookDelivery(ctx, { db });
    const { server, ocpi } = await startHttpServer(ctx, {
      db,
      clients,
      catalogue,
      ingestion,
      readiness,
      processor,
      sandbox,
      metrics,
      tls,
      demoTokenFile,
      ownTraffic: (request) => cpoSandboxVersionsUrl !== undefined && request.ocpiConnection?.versions_url === cpoSandboxVersionsUrl,
    });
    if (sandbox) await connectSandboxWebhooks(ctx, { sandbox, server, tls });

    await catalogue.reload();

    ocpi.startBackgroundWork();
    stops.add('OCPI background work', () => ocpi.stop());

    startJobs(ctx, { db, modules: server.modules });

    if (config.ocpi.cpoSandbox.enabled) {
      cpoSandboxVersionsUrl = await startCpoSandbox(ctx, { db: sandboxDb, ocpi, tls });
      // A first connection pulled the network's catalogue, announcing it; this waits for the snapshot that has it.
      await catalogue.reload();
    }
    catalogueLoaded();

    startHousekeeping(ctx, { db, processor, sandbox });

    log.info({ url: config.publicBaseUrl }, 'ready');
    await printReadyBanner(ctx, { tls, demoTokenFile, paymentsSandbox: sandbox !== undefined });
  } catch (error) {
    await stopAfterFailedStart(ctx, shutdown, error);
  }
}

await main();
