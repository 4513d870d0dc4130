// The service's entry point (`npm start`): configuration, database (embedded
// by default), migrations, keys, certificate, demo client, HTTPS listener, and a
// clean shutdown on SIGINT/SIGTERM.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp } from './app.ts';
import { createClientsService } from './modules/clients/service.ts';
import { createOcpi, type Ocpi } from './modules/ocpi/service.ts';
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
import { loggerOptions } from './platform/http/server.ts';
import { createDualProtocolServer, ensureCertificate } from './platform/http/tls.ts';
import { createJobRunner, type JobRunner, purgeFinished, queueFigures } from './platform/jobs.ts';
import { createMetrics, listenMetrics } from './platform/metrics.ts';
import { migrate } from './platform/migrations.ts';
import { type CpoSandbox, createCpoSandbox } from './sandbox/cpo/index.ts';
import { sandboxBrowserRoutes } from './sandbox/stripe/browser.ts';
import { createStripeSandbox, type StripeSandbox } from './sandbox/stripe/index.ts';
import { pendingDeliveries } from './sandbox/stripe/store.ts';

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
  const log = pino(loggerOptions(config.logLevel));
  const clock = systemClock;
  await mkdir(config.dataDir, { recursive: true });

  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: config.dataDir, role: 'service', log: (msg) => log.info(msg) });
  // One registry for the process, handed to what records (nothing is recorded with METRICS_PORT off).
  const metrics = config.metrics ? createMetrics() : undefined;
  const db = createDatabase(config.databaseUrl ?? (embedded as { url: string }).url, { max: 20, onError: metrics?.databaseError });
  let metricsListener: Awaited<ReturnType<typeof listenMetrics>> | undefined;
  const cleanup = async () => {
    await metricsListener?.close();
    await db.close().catch(() => {});
    await embedded?.stop().catch((error: Error) => log.error({ err: error }, 'stopping PostgreSQL failed'));
  };

  let app: Awaited<ReturnType<typeof buildApp>>;
  let stopListening: (() => Promise<void>) | undefined;
  let sandbox: StripeSandbox | undefined;
  let processor: PaymentProcessor | undefined;
  let ocpi: Ocpi | undefined;
  let cpoSandbox: CpoSandbox | undefined;
  let jobs: JobRunner | undefined;
  const timers: NodeJS.Timeout[] = [];
  try {
    const migrations = await migrate(db);
    if (migrations.applied.length > 0) log.info({ applied: migrations.applied }, 'database migrations applied');
    if (metrics && config.metrics) {
      metrics.watch({ pool: db.pool, jobQueues: () => queueFigures(db, clock.now()) });
      metricsListener = await listenMetrics(metrics, config.metrics);
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
    const ocpiLog = log.child({ component: 'ocpi' });
    ocpi = createOcpi({
      db,
      clock,
      config: config.ocpi,
      baseUrl: `${config.publicBaseUrl}/ocpi`,
      ingestion,
      log: (level, message, fields) => ocpiLog[level](fields ?? {}, message),
      metrics,
    });
    const catalogue = createCatalogue({ db, clock, pricing: config.pricing, log: (message, fields) => log.info(fields ?? {}, message), metrics });
    metrics?.watch({ ocpiPushes: ocpi.pushBacklog, catalogue: () => ({ stations: catalogue.size, evses: catalogue.evseCount }) });
    await catalogue.reload();
    // Every process follows catalogue changes made by any other (OCPI pushes, imports from the CLI).
    const listener = listen(
      db,
      CATALOGUE_CHANNEL,
      (payload) => {
        catalogue.onChange(payload).catch((error: Error) => log.error({ err: error }, 'updating the station catalogue failed'));
      },
      (error) => log.warn({ err: error }, 'catalogue change listener lost its connection; reconnecting'),
    );
    stopListening = listener.stop;

    // Payments: Stripe when its keys are configured, else the built-in Stripe sandbox (in production only with
    // PAYMENTS_SANDBOX=true: requirePaymentProcessor refused to start otherwise); the same adapter either way.
    const stripe = config.stripe;
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
      sandbox = await createStripeSandbox({
        db,
        clock,
        apiVersion: STRIPE_API_VERSION,
        browserBaseUrl: config.publicBaseUrl,
        log: (level, message, fields) => sandboxLog[level](fields ?? {}, message),
      });
      const apiBase = await sandbox.listen({ port: stripe.sandboxPort });
      processor = createStripeProcessor({ ...sandbox.keys, apiBase, sandbox: true, metrics });
      metrics?.watch({ stripeWebhooks: () => pendingDeliveries(db, clock.now()) });
      log.info({ url: apiBase }, 'payments: no STRIPE_SECRET_KEY, so the built-in Stripe sandbox is the processor');
      if (config.mode === 'production') log.warn('NODE_ENV=production with PAYMENTS_SANDBOX=true: payments go to the built-in sandbox and move no money');
    }

    app = await buildApp({
      config,
      db,
      clock,
      authenticate: clients.authenticate,
      catalogue,
      ocpi,
      payments: { processor, ...(sandbox ? { processorRoutes: sandboxBrowserRoutes(sandbox) } : {}) },
      loggerInstance: log,
      metrics,
      serverFactory: (handler) => (tls ? createDualProtocolServer(tls, handler) : createHttpServer(handler)),
    });
    await app.listen({
      host: config.host,
      port: config.port,
      listenTextResolver: (address) => `listening on ${tls ? address.replace(/^http:/, 'https:') : address}`,
    });
    if (sandbox) {
      // The sandbox delivers its webhooks to this very listener, over loopback, pinned to our own certificate.
      const { port } = app.server.address() as AddressInfo;
      const loopback = ['0.0.0.0', '::', '127.0.0.1', 'localhost'].includes(config.host)
        ? '127.0.0.1'
        : config.host.includes(':')
          ? `[${config.host}]`
          : config.host;
      sandbox.addWebhookEndpoint({
        url: `${tls ? 'https' : 'http'}://${loopback}:${port}/webhooks/stripe`,
        ...(tls ? { pinnedCertificatePem: tls.cert } : {}),
        ...(config.trustProxy ? { headers: { 'x-forwarded-proto': 'https' } } : {}),
      });
      sandbox.startBackgroundWork();
    }

    ocpi.startBackgroundWork();

    // Durable background work (billing, hold releases, start deadlines), shared by every process on this database.
    if (config.charging.jobsEnabled && Object.keys(app.modules.jobHandlers).length > 0) {
      const jobLog = log.child({ component: 'jobs' });
      jobs = createJobRunner({
        db,
        clock,
        handlers: app.modules.jobHandlers,
        leaseMs: config.charging.jobLeaseMs,
        log: (level, message, fields) => jobLog[level](fields ?? {}, message),
      });
      jobs.start();
      const modules = app.modules;
      const repairs = setInterval(() => {
        modules
          .reconcile()
          .then((repaired) => {
            if (Object.values(repaired).some((n) => n > 0)) log.info(repaired, 'charging reconciliation repaired sessions');
          })
          .catch((error: Error) => log.warn({ err: error }, 'charging reconciliation failed; retried at the next interval'));
      }, config.charging.reconcileIntervalMs);
      repairs.unref();
      timers.push(repairs);
    }

    if (config.ocpi.cpoSandbox.enabled) {
      // The sandbox CPO network: its own loopback port, connected to us by the OCPI credentials handshake
      // (the same path as `cpo connect`), so the default catalogue arrives over OCPI.
      const sandboxConfig = config.ocpi.cpoSandbox;
      const cpoLog = log.child({ component: 'cpo-sandbox' });
      cpoSandbox = await createCpoSandbox({
        db,
        clock,
        locations: config.stationsDefaultLocations,
        seed: config.stationsSeed,
        timeCompression: sandboxConfig.timeCompression,
        statusChangesPerSecond: sandboxConfig.statusChangesPerSecond,
        log: (level, message, fields) => cpoLog[level](fields ?? {}, message),
      });
      const versionsUrl = await cpoSandbox.listen({ port: sandboxConfig.port });
      const connected = (await ocpi.connections.list()).find((c) => c.status === 'connected' && c.versions_url === versionsUrl);
      if (!connected) {
        const started = performance.now();
        log.info({ versions_url: versionsUrl }, 'connecting the sandbox CPO network over OCPI');
        const token = await cpoSandbox.issueTokenA(tls ? { pinnedCertificatePem: tls.cert } : {});
        const connection = await ocpi.connections.connect({ versionsUrl, token, name: 'sandbox' });
        const pulled = await ocpi.sync.syncConnection(connection, { full: true });
        log.info(
          { connection: connection.name, ...pulled, ms: Math.round(performance.now() - started) },
          'sandbox CPO network connected; its catalogue pulled over OCPI',
        );
      }
      cpoSandbox.startBackgroundWork();
    }

    const scheme = config.trustProxy ? 'http' : 'https';
    const shownHost = config.host.includes(':') ? `[${config.host}]` : config.host;
    const shown = (file: string) => (path.relative(process.cwd(), file).startsWith('..') ? file : path.relative(process.cwd(), file));
    const address = `${scheme}://${['127.0.0.1', '0.0.0.0', '::1', '::'].includes(config.host) ? 'localhost' : shownHost}:${config.port}`;
    if (config.demoClient && (await readDemoToken(demoTokenFile))) {
      const cacert = tls && config.tls.generated ? `--cacert ${shown(config.tls.certFile)} ` : '';
      process.stdout.write(
        `\nCharging Access is ready at ${address} (API reference: ${address}/docs)\nTry it:\n  curl ${cacert}-H "Authorization: Bearer $(cat ${shown(demoTokenFile)})" ${address}/api/v1/users/\n` +
          (sandbox ? `Payments run on the built-in Stripe sandbox: confirm setup intents and 3-D Secure at ${address}/sandbox/ (README: Payments)\n` : '') +
          '\n',
      );
    }
  } catch (error) {
    log.fatal({ err: error }, 'start-up failed');
    await cpoSandbox?.close().catch(() => {});
    await sandbox?.close().catch(() => {});
    await cleanup();
    process.exit(1);
  }

  const idempotency = createIdempotency({ db, clock });
  const housekeeping = setInterval(() => {
    idempotency.purgeExpired().catch((error: Error) => log.warn({ err: error }, 'purging expired idempotency keys failed'));
    purgeHandledWebhookEvents(db, clock).catch((error: Error) => log.warn({ err: error }, 'purging handled webhook events failed'));
    purgeFinished(db, new Date(clock.now().getTime() - 7 * 86_400_000)).catch((error: Error) => log.warn({ err: error }, 'purging finished jobs failed'));
    sandbox?.purgeExpired().catch((error: Error) => log.warn({ err: error }, 'purging the Stripe sandbox’s expired records failed'));
    if (processor) {
      // Holds a crash left pending are resumed (same idempotency key) or looked up at the processor.
      sweepPendingHolds({ db, clock, processor, log })
        .then((swept) => {
          if (swept.examined > 0) log.info(swept, 'pending payment holds swept');
        })
        .catch((error: Error) => log.warn({ err: error }, 'sweeping pending payment holds failed'));
    }
  }, 60 * 60_000);
  housekeeping.unref();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log.warn('second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    clearInterval(housekeeping);
    for (const timer of timers) clearInterval(timer);
    await jobs?.stop().catch((error: Error) => log.error({ err: error }, 'stopping the job runner failed'));
    await cpoSandbox?.close().catch((error: Error) => log.error({ err: error }, 'stopping the sandbox CPO network failed'));
    await ocpi?.stop().catch(() => {});
    const force = setTimeout(() => app.server.closeAllConnections(), config.shutdownGraceMs);
    force.unref();
    await app.close().catch((error: Error) => log.error({ err: error }, 'closing the HTTP server failed'));
    clearTimeout(force);
    await stopListening?.();
    await sandbox?.close().catch((error: Error) => log.error({ err: error }, 'stopping the Stripe sandbox failed'));
    await cleanup();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

await main();
