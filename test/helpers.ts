// Test harness: each test file gets its own database cloned from the migrated
// template (see scripts/test.ts), the real app on it, and helpers to create API
// clients and call the API through HTTP (inject).

import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import pg from 'pg';
import { type AppModules, buildApp } from '../src/app.ts';
import { createClientsService } from '../src/modules/clients/service.ts';
import type { Ocpi } from '../src/modules/ocpi/service.ts';
import type { PaymentProcessor } from '../src/modules/payments/processor.ts';
import type { PaymentMethodRemovalGuard, PaymentsService } from '../src/modules/payments/service.ts';
import { createStripeProcessor, STRIPE_API_VERSION } from '../src/modules/payments/stripe-processor.ts';
import { type Catalogue, createCatalogue } from '../src/modules/stations/catalogue.ts';
import { createIngestion, type Ingestion } from '../src/modules/stations/ingest.ts';
import type { OcpiSettings } from '../src/modules.ts';
import type { SigningKeys } from '../src/platform/auth/keys.ts';
import { manualClock } from '../src/platform/clock.ts';
import { type Config, loadConfig } from '../src/platform/config.ts';
import { createDatabase, type Database } from '../src/platform/db.ts';
import { ERROR_CODES, type ErrorCode } from '../src/platform/errors.ts';
import { freePort } from '../src/platform/free-port.ts';
import type { HttpApp } from '../src/platform/http/server.ts';
import { createJobRunner, type JobRunner } from '../src/platform/jobs.ts';
import type { Metrics } from '../src/platform/metrics.ts';
import { CATALOGUE_PART, type Readiness } from '../src/platform/readiness.ts';
import { sandboxBrowserRoutes } from '../src/sandbox/stripe/browser.ts';
import { createStripeSandbox, type StripeSandbox } from '../src/sandbox/stripe/index.ts';

export const BASE_URL = 'https://api.charging-access.test';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with npm test`);
  return value;
}

/** A fresh database cloned from the migrated template; `drop` closes and removes it. */
export async function createTestDatabase(options: { onError?: (error: Error) => void } = {}): Promise<{ db: Database; url: string; drop(): Promise<void> }> {
  const adminUrl = required('CA_TEST_ADMIN_URL');
  const name = `${required('CA_TEST_DB_PREFIX')}${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${required('CA_TEST_TEMPLATE')}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = createDatabase(url.toString(), { max: 10, onError: options.onError });
  return {
    db,
    url: url.toString(),
    async drop() {
      await db.close();
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await dropper.end();
    },
  };
}

export function testKeys(): SigningKeys {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { algorithm: 'EdDSA', privateKey, verifyKey: publicKey };
}

// Test clocks stand still, so a file's requests all fall in one rate-limit window: the default limit is set far
// above what a file sends (the limiter still counts every request); test/rate-limit.test.ts sets its own.
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: '/nonexistent-test-data',
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: BASE_URL,
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...env,
  });
}

export interface CallOptions {
  token?: string | undefined;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  body: any;
  text: string;
}

export interface TestContext {
  app: HttpApp;
  db: Database;
  /** The test database's URL (for processes started by the test: the CLI, another instance). */
  databaseUrl: string;
  config: Config;
  clock: ReturnType<typeof manualClock>;
  keys: SigningKeys;
  clients: ReturnType<typeof createClientsService>;
  catalogue: Catalogue;
  ingestion: Ingestion;
  /** The built-in Stripe sandbox (on its own loopback port) the app's payment processor talks to. */
  sandbox: StripeSandbox;
  /** The Stripe adapter pointed at the sandbox, as the app uses it. */
  processor: PaymentProcessor;
  /** The payments module over the same database and processor (holds have no HTTP route of their own). */
  payments: PaymentsService;
  /** With `payments.webhooks` or `listen`: the app's plain-HTTP loopback address. */
  address: string | undefined;
  /** The OCPI module (its routes are under /ocpi). */
  ocpi: Ocpi;
  /** Charging and invoicing (with the OCPI module and the payment sandbox), and their job handlers. */
  modules: AppModules;
  /** A job runner over the app's handlers: not started (call start() or runDue()). */
  jobs: JobRunner;
  /** Creates an API client with a token. */
  newClient(name?: string): Promise<{ clientId: string; token: string; jti: string }>;
  call(method: string, url: string, options?: CallOptions): Promise<TestResponse>;
  /** Closes the app and drops the database: call it from the file's after() hook. */
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  authCacheTtlMs?: number;
  payments?: {
    /** Listen on a loopback port and have the sandbox deliver its webhooks there (in the background). */
    webhooks?: boolean;
    removalGuards?: PaymentMethodRemovalGuard[];
  };
  /** Listen on this loopback port (0: any) so peers (the sandbox CPO network) can call the app; PUBLIC_BASE_URL follows. */
  listen?: number;
  /** What start-up still waits for, as main.ts passes it. */
  readiness?: Readiness;
  /** Record into these metrics, wired as main.ts wires them (requests, database errors, OCPI calls, processor calls, catalogue). */
  metrics?: Metrics;
  /** How the app's OCPI module is made (src/modules.ts). */
  ocpi?: OcpiSettings;
  /** Serve the playground (/playground/) as the demo client whose token this gives (main.ts: DATA_DIR/demo-token). */
  playground?: { demoToken(): Promise<string | undefined> };
}

export { freePort };
export async function setupTestApp(options: TestAppOptions = {}): Promise<TestContext> {
  const metrics = options.metrics;
  const { db, url: databaseUrl, drop } = await createTestDatabase({ onError: metrics?.databaseError });
  const port = options.listen === undefined ? undefined : options.listen || (await freePort());
  const config = testConfig({ ...(port === undefined ? {} : { PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }), ...options.env });
  const clock = manualClock(new Date());
  const keys = testKeys();
  const clients = createClientsService({ db, clock, jwt: config.jwt, keys, cacheTtlMs: options.authCacheTtlMs ?? config.authCacheTtlMs });
  const readiness = options.readiness;
  const catalogue = createCatalogue({ db, clock, metrics, ...(readiness ? { ready: () => readiness.isReady(CATALOGUE_PART) } : {}) });
  const ingestion = createIngestion({ db, clock });
  const sandbox = await createStripeSandbox({ db, clock, apiVersion: STRIPE_API_VERSION, browserBaseUrl: config.publicBaseUrl });
  await sandbox.listen({ port: 0 });
  const processor = createStripeProcessor({
    secretKey: sandbox.keys.secretKey,
    publishableKey: sandbox.keys.publishableKey,
    webhookSecret: sandbox.keys.webhookSecret,
    apiBase: sandbox.url,
    sandbox: true,
    metrics,
  });
  const removalGuards = options.payments?.removalGuards ?? [];
  const app = await buildApp({
    ocpi: options.ocpi ?? {},
    config,
    db,
    clock,
    authenticate: clients.authenticate,
    catalogue,
    ingestion,
    payments: { processor, removalGuards, processorRoutes: sandboxBrowserRoutes(sandbox) },
    ...(options.readiness ? { readiness: options.readiness } : {}),
    ...(options.playground ? { playground: { demoToken: options.playground.demoToken, issueToken: clients.issueToken } } : {}),
    metrics,
    // TEST_LOG=error (or another level) prints the app's log lines while debugging a test.
    logger: process.env.TEST_LOG ? { level: process.env.TEST_LOG } : false,
  });
  const jobs = createJobRunner({ db, clock, handlers: app.modules.jobHandlers, pollMs: 200 });
  // The app's own modules (src/modules.ts): tests reach holds and OCPI through the very instances the routes use.
  const { payments, ocpi } = app.modules;
  assert.ok(payments && ocpi, 'the test app has payments and OCPI');
  let address: string | undefined;
  if (port !== undefined) address = await app.listen({ host: '127.0.0.1', port });
  if (options.payments?.webhooks) {
    address ??= await app.listen({ host: '127.0.0.1', port: 0 });
    await sandbox.addWebhookEndpoint({ url: `${address}/webhooks/stripe` });
    sandbox.startBackgroundWork(100);
  }
  let counter = 0;
  return {
    app,
    db,
    databaseUrl,
    config,
    clock,
    keys,
    clients,
    catalogue,
    ingestion,
    sandbox,
    processor,
    payments,
    address,
    ocpi,
    modules: app.modules,
    jobs,
    async close() {
      await jobs.stop();
      await ocpi.stop();
      await app.close();
      await sandbox.close();
      await drop();
    },
    async newClient(name = `client-${++counter}`) {
      const issued = await clients.createClient(name);
      return { clientId: issued.clientId, token: issued.token, jti: issued.jti };
    },
    async call(method, url, callOptions = {}) {
      const headers: Record<string, string> = { ...(callOptions.headers ?? {}) };
      if (callOptions.token) headers.authorization = `Bearer ${callOptions.token}`;
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers,
        ...(callOptions.body !== undefined ? { payload: callOptions.body as object } : {}),
      });
      let body: unknown;
      try {
        body = response.body ? JSON.parse(response.body) : undefined;
      } catch {
        body = undefined;
      }
      return { status: response.statusCode, headers: response.headers, body, text: response.body };
    },
  };
}

/** Asserts the one problem+json shape every error answer has. */
export function assertProblem(res: TestResponse, status: number, code: ErrorCode): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json; charset=utf-8$/);
  const body = res.body;
  const keys = Object.keys(body).sort();
  const expected = ['detail', 'error', 'request_id', 'status', 'title', 'type'];
  assert.deepEqual(
    keys.filter((k) => k !== 'errors'),
    expected,
  );
  // The app's public base URL: the default test one, or the loopback address of a listening test app.
  assert.match(body.type, new RegExp(`^(${BASE_URL.replace(/[.]/g, '\\.')}|http://127\\.0\\.0\\.1:\\d+)/problems/${code}$`));
  assert.equal(body.title, ERROR_CODES[code].title);
  assert.equal(body.status, status);
  assert.equal(typeof body.detail, 'string');
  assert.ok(body.detail.length > 0);
  assert.deepEqual(Object.keys(body.error).sort(), ['details', 'type']);
  assert.equal(body.error.type, code);
  assert.equal(body.error.details, body.detail);
  assert.equal(typeof body.request_id, 'string');
  assert.ok(body.request_id.length >= 8);
  assert.equal(res.headers['x-request-id'], body.request_id);
  if (body.errors !== undefined) {
    assert.ok(Array.isArray(body.errors) && body.errors.length > 0);
    for (const e of body.errors) assert.deepEqual(Object.keys(e).sort(), ['field', 'message']);
  }
}

/** Where no PostgreSQL answers: connections are refused at once. */
const UNREACHABLE_DATABASE_URL = 'postgres://nobody:wrong@127.0.0.1:1/none';

export interface BrokenApp {
  app: HttpApp & { modules: AppModules };
  /** The database that cannot be reached (for a worker made beside the app). */
  db: Database;
  /** Closes the app and its database. */
  close(): Promise<void>;
}

/** The test app's modules (OCPI, payments with ctx's processor, ctx's clients and catalogue) built again on `db`. */
export function appOn(ctx: TestContext, db: Database): Promise<HttpApp & { modules: AppModules }> {
  return buildApp({
    config: ctx.config,
    db,
    clock: ctx.clock,
    authenticate: ctx.clients.authenticate,
    catalogue: ctx.catalogue,
    ocpi: {},
    payments: { processor: ctx.processor },
    logger: false,
  });
}

/** The test app's modules built on a database that cannot be reached, for the 503 paths. */
export async function brokenApp(ctx: TestContext): Promise<BrokenApp> {
  const db = createDatabase(UNREACHABLE_DATABASE_URL);
  const app = await appOn(ctx, db);
  return {
    app,
    db,
    async close() {
      await app.modules.ocpi?.stop();
      await app.close();
      await db.close();
    },
  };
}
