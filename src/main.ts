// The service's entry point (`npm start`): configuration, database (embedded
// by default), migrations, keys, certificate, demo client, HTTPS listener, and a
// clean shutdown on SIGINT/SIGTERM.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { buildApp } from './app.ts';
import { readyBanner } from './banner.ts';
import { createClientsService } from './modules/clients/service.ts';
import type { PaymentProcessor } from './modules/payments/processor.ts';
import { purgeHandledWebhookEvents, sweepPendingHolds } from './modules/payments/service.ts';
import { createStripeProcessor, STRIPE_API_VERSION } from './modules/payments/stripe-processor.ts';
import { createCatalogue } from './modules/stations/catalogue.ts';
import { createIngestion } from './modules/stations/ingest.ts';
import { loadGeneratedCatalogue } from './modules/stations/loader.ts';
import { CATALOGUE_CHANNEL, countLocations } from './modules/stations/repository.ts';
import { loadSigningKeys } from './platform/auth/keys.ts';
import { systemClock } from './platform/clock.ts';
import { type Config, ConfigError, loadConfig, requirePaymentProcessor } from './platform/config.ts';
import { createDatabase, listen } from './platform/db.ts';
import { startEmbeddedPostgres } from './platform/embedded-postgres.ts';
import { createIdempotency } from './platform/http/idempotency.ts';
import { createDualProtocolServer, createPlainServer, ensureCertificate } from './platform/http/tls.ts';
import { createJobRunner, purgeFinished, queueFigures } from './platform/jobs.ts';
import { createStopList, listening } from './platform/lifecycle.ts';
import { createLogger } from './platform/logging.ts';
import { createMetrics, listenMetrics } from './platform/metrics.ts';
import { migrate } from './platform/migrations.ts';
import { CATALOGUE_PART, createReadiness } from './platform/readiness.ts';
import { sandboxBrowserRoutes } from './sandbox/stripe/browser.ts';
import { createStripeSandbox, type StripeSandbox } from './sandbox/stripe/index.ts';
import { pendingDeliveries } from './sandbox/stripe/store.ts';
import { startSandboxNetwork } from './sandbox-network.ts';

function configOrExit(): Config {
  try {
    const config = loadConfig();
    requirePaymentProcessor(config);
    return config;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

async function readDemoToken(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function main(): Promise<void> {
  const config = configOrExit();
  const log = createLogger(config);
  const clock = systemClock;
  // A promise rejected with nobody waiting for it is a bug to fix, not a reason to stop serving every client.
  process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled promise rejection (the service keeps running)'));

  // Everything started is registered here, so a shutdown or a failed start-up stops exactly that, last first.
  const stops = createStopList({ stepTimeoutMs: Math.max(config.shutdownGraceMs, 5_000) + 5_000 });
  const reportStop = (name: string, error: Error) => log.error({ reason: error.message }, `stopping the ${name} failed`);
  const readiness = createReadiness();
  const catalogueLoaded = readiness.waitFor(CATALOGUE_PART);
  const EMBEDDED_POSTGRES = 'embedded PostgreSQL';

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      // Out at once, but not leaving the embedded PostgreSQL running behind us.
      log.warn('second signal: stopping the embedded PostgreSQL and exiting at once');
      await stops.stopOne(EMBEDDED_POSTGRES, reportStop);
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    await stops.stopAll(reportStop);
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  // The built-in CPO network's versions URL: OCPI requests authenticated as the connection to it are its own traffic (logged at debug).
  let cpoSandboxVersionsUrl: string | undefined;
  try {
    await mkdir(config.dataDir, { recursive: true });
    const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: config.dataDir, role: 'service', log: (msg) => log.info(msg) });
    if (embedded) {
      stops.add(EMBEDDED_POSTGRES, () => embedded.stop());
      // Supervised: if it exits, it is started again on the same port and the pool reconnects to it.
      embedded.supervise({
        exited: () => log.warn('the embedded PostgreSQL exited; restarting it (requests needing the database answer 503 meanwhile)'),
        restarted: (attempt) => log.info({ attempt }, 'the embedded PostgreSQL is running again'),
        restartFailed: (error, retryInMs) => log.warn({ reason: error.message, retry_in_ms: retryInMs }, 'restarting the embedded PostgreSQL failed'),
      });
    }
    // One registry for the process, handed to what records (nothing is recorded with METRICS_PORT off).
    const metrics = config.metrics ? createMetrics() : undefined;
    const db = createDatabase(config.databaseUrl ?? (embedded as { url: string }).url, { max: 20, onError: metrics?.databaseError });
    stops.add('database pool', () => db.close());

    const migrations = await migrate(db);
    if (migrations.applied.length > 0) log.info({ applied: migrations.applied }, 'database migrations applied');
    if (metrics && config.metrics) {
      metrics.watch({ pool: db.pool, jobQueues: () => queueFigures(db, clock.now()) });
      const metricsListener = await listening('the metrics listener', 'METRICS_PORT', () =>
        listenMetrics(metrics, config.metrics as NonNullable<typeof config.metrics>),
      );
      stops.add('metrics listener', () => metricsListener.close());
      log.info({ url: metricsListener.url }, 'Prometheus metrics listening');
    }

    const keys = await loadSigningKeys(config.jwt, { create: true });
    if (keys.created) log.info({ file: config.jwt.privateKeyFile }, `generated the operator token-signing key (${config.jwt.algorithm})`);
    const clients = createClientsService({
      db,
      clock,
      jwt: config.jwt,
      keys,
      cacheTtlMs: config.authCacheTtlMs,
      acceptUnregisteredTokens: config.jwt.jwksUrl !== undefined,
    });

    const tls = config.trustProxy ? undefined : await ensureCertificate(config.tls);
    if (tls?.created) log.info({ file: config.tls.certFile }, 'generated a self-signed TLS certificate for localhost');

    const demoTokenFile = path.join(config.dataDir, 'demo-token');
    if (config.demoClient && !(await readDemoToken(demoTokenFile))) {
      const demo = await clients.createClient('demo');
      await writeFile(demoTokenFile, `${demo.token}\n`, { mode: 0o600 });
      log.info({ client_id: demo.clientId, file: demoTokenFile }, 'created the demo API client; its token is in the file');
    }

    const ingestion = createIngestion({ db, clock });
    // Without the sandbox CPO network (which delivers the default catalogue over OCPI), a first start loads it directly.
    if (!config.ocpi.cpoSandbox.enabled && config.stationsDefaultLocations > 0 && (await countLocations(db)) === 0) {
      const started = performance.now();
      log.info({ locations: config.stationsDefaultLocations, seed: config.stationsSeed }, 'first start: loading a generated station catalogue');
      const loaded = await loadGeneratedCatalogue(ingestion, { locations: config.stationsDefaultLocations, seed: config.stationsSeed });
      log.info({ locations: loaded.locations, tariffs: loaded.tariffs, ms: Math.round(performance.now() - started) }, 'generated station catalogue loaded');
      if (loaded.vacuumError) log.warn({ error: loaded.vacuumError }, 'vacuuming the station tables after the load failed (the load stands)');
    }
    const catalogue = createCatalogue({
      db,
      clock,
      pricing: config.pricing,
      log: (message, fields) => log.info(fields ?? {}, message),
      metrics,
      ready: () => readiness.isReady(CATALOGUE_PART),
    });
    metrics?.watch({ catalogue: () => ({ stations: catalogue.size, evses: catalogue.evseCount }) });
    // Every process follows catalogue changes made by any other (OCPI pushes, imports from the CLI). A reload
    // (after a reconnect, say) keeps serving the previous snapshot until the new one is built.
    const listener = listen(
      db,
      CATALOGUE_CHANNEL,
      (payload) => {
        catalogue
          .onChange(payload)
          .catch((error: Error) => log.warn({ reason: error.message }, 'updating the station catalogue failed; the previous one is served'));
      },
      (error) => log.warn({ reason: error.message }, 'catalogue change listener lost its connection; reconnecting'),
    );
    stops.add('catalogue change listener', () => listener.stop());

    // Payments: Stripe when its keys are configured, else the built-in Stripe sandbox (in production only with
    // PAYMENTS_SANDBOX=true: requirePaymentProcessor refused to start otherwise); the same adapter either way.
    const stripe = config.stripe;
    let processor: PaymentProcessor;
    let sandbox: StripeSandbox | undefined;
    if (!stripe.sandbox && stripe.secretKey && stripe.publishableKey && stripe.webhookSecret) {
      processor = createStripeProcessor({
        secretKey: stripe.secretKey,
        publishableKey: stripe.publishableKey,
        webhookSecret: stripe.webhookSecret,
        apiBase: stripe.apiBase,
        metrics,
      });
    } else {
      const sandboxLog = log.child({ component: 'stripe-sandbox' });
      const stripeSandbox = await createStripeSandbox({
        db,
        clock,
        apiVersion: STRIPE_API_VERSION,
        browserBaseUrl: config.publicBaseUrl,
        log: (level, message, fields) => sandboxLog[level](fields ?? {}, message),
      });
      sandbox = stripeSandbox;
      stops.add('Stripe sandbox', () => stripeSandbox.close());
      const apiBase = await listening('the built-in Stripe sandbox', 'STRIPE_SANDBOX_PORT', () => stripeSandbox.listen({ port: stripe.sandboxPort }));
      processor = createStripeProcessor({ ...stripeSandbox.keys, apiBase, sandbox: true, metrics });
      metrics?.watch({ stripeWebhooks: () => pendingDeliveries(db, clock.now()) });
      log.info({ url: apiBase }, 'payments: no STRIPE_SECRET_KEY, so the built-in Stripe sandbox is the processor');
      if (config.mode === 'production') log.warn('NODE_ENV=production with PAYMENTS_SANDBOX=true: payments go to the built-in sandbox and move no money');
    }

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
      payments: { processor, ...(sandbox ? { processorRoutes: sandboxBrowserRoutes(sandbox) } : {}) },
      loggerInstance: log,
      metrics,
      ownTraffic: (request) => cpoSandboxVersionsUrl !== undefined && request.ocpiConnection?.versions_url === cpoSandboxVersionsUrl,
      serverFactory: (handler) => (tls ? createDualProtocolServer(tls, handler, config.connections) : createPlainServer(config.connections, handler)),
    });
    stops.add('HTTP server', async () => {
      // Idle connections end at once (Fastify closes them); in-flight requests get SHUTDOWN_GRACE_MS.
      const force = setTimeout(() => server.server.closeAllConnections(), config.shutdownGraceMs);
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
    if (sandbox) {
      // The sandbox delivers its webhooks to this very listener, over loopback, pinned to our own certificate.
      const { port } = server.server.address() as AddressInfo;
      const loopback = ['0.0.0.0', '::', '127.0.0.1', 'localhost'].includes(config.host)
        ? '127.0.0.1'
        : config.host.includes(':')
          ? `[${config.host}]`
          : config.host;
      await sandbox.addWebhookEndpoint({
        url: `${tls ? 'https' : 'http'}://${loopback}:${port}/webhooks/stripe`,
        ...(tls ? { pinnedCertificatePem: tls.cert } : {}),
        ...(config.trustProxy ? { headers: { 'x-forwarded-proto': 'https' } } : {}),
      });
      sandbox.startBackgroundWork();
    }

    await catalogue.reload();

    ocpi.startBackgroundWork();
    stops.add('OCPI background work', () => ocpi.stop());

    // Durable background work (billing, hold releases, start deadlines), shared by every process on this database.
    if (config.charging.jobsEnabled && Object.keys(server.modules.jobHandlers).length > 0) {
      const jobLog = log.child({ component: 'jobs' });
      const jobs = createJobRunner({
        db,
        clock,
        handlers: server.modules.jobHandlers,
        leaseMs: config.charging.jobLeaseMs,
        log: (level, message, fields) => jobLog[level](fields ?? {}, message),
      });
      jobs.start();
      stops.add('job runner', () => jobs.stop());
      const modules = server.modules;
      const repairs = setInterval(() => {
        modules
          .reconcile()
          .then((repaired) => {
            if (Object.values(repaired).some((n) => n > 0)) log.info(repaired, 'charging reconciliation repaired sessions');
          })
          .catch((error: Error) => log.warn({ reason: error.message }, 'charging reconciliation failed; retried at the next interval'));
      }, config.charging.reconcileIntervalMs);
      repairs.unref();
      stops.add('charging reconciliation', () => clearInterval(repairs));
    }

    if (config.ocpi.cpoSandbox.enabled) {
      // The sandbox CPO network: its own loopback port, connected to us by the OCPI credentials handshake
      // (the same path as `cpo connect`), so the default catalogue arrives over OCPI.
      const cpoLog = log.child({ component: 'cpo-sandbox' });
      const network = await startSandboxNetwork({
        db,
        clock,
        config,
        ocpi,
        pinnedCertificatePem: tls?.cert,
        log: (level, message, fields) => cpoLog[level](fields ?? {}, message),
      });
      stops.add('sandbox CPO network', () => network.close());
      cpoSandboxVersionsUrl = network.versionsUrl;
      // A first connection pulled the network's catalogue, announcing it; this waits for the snapshot that has it.
      await catalogue.reload();
    }
    catalogueLoaded();

    const idempotency = createIdempotency({ db, clock });
    const housekeeping = setInterval(() => {
      idempotency.purgeExpired().catch((error: Error) => log.warn({ reason: error.message }, 'purging expired idempotency keys failed'));
      purgeHandledWebhookEvents(db, clock).catch((error: Error) => log.warn({ reason: error.message }, 'purging handled webhook events failed'));
      purgeFinished(db, new Date(clock.now().getTime() - 7 * 86_400_000)).catch((error: Error) =>
        log.warn({ reason: error.message }, 'purging finished jobs failed'),
      );
      sandbox?.purgeExpired().catch((error: Error) => log.warn({ reason: error.message }, 'purging the Stripe sandbox’s expired records failed'));
      // Holds a crash left pending are resumed (same idempotency key) or looked up at the processor.
      sweepPendingHolds({ db, clock, processor, log })
        .then((swept) => {
          if (swept.examined > 0) log.info(swept, 'pending payment holds swept');
        })
        .catch((error: Error) => log.warn({ reason: error.message }, 'sweeping pending payment holds failed'));
    }, 60 * 60_000);
    housekeeping.unref();
    stops.add('housekeeping', () => clearInterval(housekeeping));

    log.info({ url: config.publicBaseUrl }, 'ready');
    const shown = (file: string) => (path.relative(process.cwd(), file).startsWith('..') ? file : path.relative(process.cwd(), file));
    if (config.demoClient && (await readDemoToken(demoTokenFile))) {
      process.stdout.write(
        readyBanner({
          trustProxy: config.trustProxy,
          publicBaseUrl: config.publicBaseUrl,
          host: config.host,
          port: config.port,
          caCertFile: tls && config.tls.generated ? shown(config.tls.certFile) : undefined,
          demoTokenFile: shown(demoTokenFile),
          paymentsSandbox: sandbox !== undefined,
        }),
      );
    }
  } catch (error) {
    if (stopping) return; // a signal during start-up: the shutdown stops what was started
    stopping = true;
    // One clear line (the cause's message); the stack only at debug, for whoever hunts a bug.
    log.fatal({ reason: (error as Error).message }, `start-up failed: ${(error as Error).message}`);
    log.debug({ err: error }, 'start-up failure');
    await stops.stopAll(reportStop);
    process.exit(1);
  }
}

await main();
