// The only place that reads process.env. Every setting is parsed and validated
// here; anything wrong stops start-up with a message that names the variable.
import path from 'node:path';
import { parseQuirks, type Quirk } from '../sandbox/cpo/quirk-names.ts';
import { CRASH_POINTS } from './crash-points.ts';

export type RuntimeMode = 'development' | 'production' | 'test';
export type JwtAlgorithm = 'EdDSA' | 'ES256' | 'RS256';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface JwtConfig {
  issuer: string;
  audience: string;
  algorithm: JwtAlgorithm;
  /** PEM (PKCS#8) private key used to sign tokens; generated on first start when it is the default path. */
  privateKeyFile: string;
  /** Optional PEM public key: verify with it instead of the private key's public half. */
  publicKeyFile: string | undefined;
  /** Optional JWKS URL: verify tokens against a remote key set (tokens are then issued elsewhere). */
  jwksUrl: string | undefined;
  /** True when privateKeyFile is the default under DATA_DIR and may be generated. */
  generateKey: boolean;
}

export interface StripeConfig {
  /** True: no key is set, so the built-in Stripe sandbox is the payment processor (see requirePaymentProcessor). */
  sandbox: boolean;
  /** PAYMENTS_SANDBOX: true to take payments on the sandbox (required in production), false to refuse it; undefined when unset. */
  sandboxOptIn: boolean | undefined;
  /** Undefined: the built-in Stripe sandbox is the payment processor. */
  secretKey: string | undefined;
  publishableKey: string | undefined;
  webhookSecret: string | undefined;
  /** Where the Stripe adapter sends requests when a secret key is set. */
  apiBase: string;
  /** Loopback port of the built-in sandbox (0: any free port). */
  sandboxPort: number;
}

export interface Config {
  mode: RuntimeMode;
  host: string;
  port: number;
  dataDir: string;
  /** Undefined: start the embedded PostgreSQL under DATA_DIR. */
  databaseUrl: string | undefined;
  tls: { certFile: string; keyFile: string; generated: boolean };
  /** Plain HTTP behind a TLS-terminating proxy that sets X-Forwarded-Proto. */
  trustProxy: boolean;
  publicBaseUrl: string;
  /** Where publicBaseUrl came from: PUBLIC_BASE_URL, HOST or PORT set, or the defaults alone (the CLI then prefers the address the running service recorded). */
  publicBaseUrlFrom: 'PUBLIC_BASE_URL' | 'HOST/PORT' | 'default';
  logLevel: LogLevel;
  /** LOG_FORMAT: human-readable lines or JSON lines; undefined: pretty on a terminal, JSON otherwise. */
  logFormat: 'pretty' | 'json' | undefined;
  jwt: JwtConfig;
  locales: string[];
  /** Create a demo API client and write its token to DATA_DIR/demo-token on first start. */
  demoClient: boolean;
  /** Longest time in-flight requests get to finish on shutdown. */
  shutdownGraceMs: number;
  /** Limits of each client connection (a silent or trickling connection is closed). */
  connections: { firstByteMs: number; headersMs: number; requestMs: number; keepAliveMs: number };
  /** How long a token/client check is cached; revocation takes effect within this time. */
  authCacheTtlMs: number;
  /** Requests per minute of an API client without its own limit (`clients update --rate-limit`); 0 = unlimited. */
  rateLimitPerMinute: number;
  /** On a first start with an empty catalogue, generate this many locations (0: none). */
  stationsDefaultLocations: number;
  /** Connections of this process's database pool (the built-in sandboxes have a pool of 10 of their own). */
  databasePoolSize: number;
  /** DATABASE_AUTO_PREPARE: statements run often with values are prepared once per connection (src/platform/db.ts). */
  databaseAutoPrepare: boolean;
  stationsSeed: number;
  /** Pricing of station price groups, in euros (scaled per currency). */
  pricing: {
    /** Per kWh excl. VAT where an operator sent no tariff; undefined: no fallback price. */
    fallbackKwhPriceEur: string | undefined;
    /** Our own one-off fee per session excl. VAT; undefined: none. */
    startingFeeEur: string | undefined;
    preAuthorization: { minimum: string; maximum: string; assumedDurationMinutes: number; assumedEnergyKwhCap: number; roundUpTo: string };
  };
  stripe: StripeConfig;
  /** Client events: progress throttle and the live session streams (Server-Sent Events). */
  events: EventsSettings;
  ocpi: OcpiConfig;
  charging: ChargingSettings;
  invoicing: InvoicingSettings;
  webhooks: WebhookSettings;
  /** TEST_CRASH_POINTS: points where the process kills itself (crash tests); refused in production. */
  testCrashPoints: string[];
  /** The Prometheus listener (METRICS_HOST, METRICS_PORT); undefined: no metrics are recorded. */
  metrics: { host: string; port: number } | undefined;
}

export interface ChargingSettings {
  /** From the CPO's acceptance of a start to its first Session report; later the session fails and its hold is released. */
  startTimeoutMs: number;
  /** A start that has not moved for this long was cut short (a crash): failed, hold released. */
  stalledStartMs: number;
  /** A stop the CPO has not finished (no message) for this long: CPOs are asked for what we missed, STOP_SESSION sent again. */
  stalledStopMs: number;
  /** Which price wins when our tariff engine and the CPO's CDR differ by more than a cent. */
  pricePolicy: 'engine' | 'cdr';
  /** Background jobs (billing, releases, reconciliation) in this process. */
  jobsEnabled: boolean;
  /** A job whose worker stopped renewing its lease this long ago (a killed process) is run again. */
  jobLeaseMs: number;
  /** Job handlers running at once in this process (they mostly wait on the processor and CPOs, not on CPU). */
  jobConcurrency: number;
  /** Repairs of sessions and holds this often. */
  reconcileIntervalMs: number;
}

export interface EventsSettings {
  /** EVENTS_PROGRESS_INTERVAL_MS: at most one charging_session.progress event per session this often. */
  progressIntervalMs: number;
  /** SSE_HEARTBEAT_MS: a comment line on every open live stream this often, so proxies and clients see it alive. */
  sseHeartbeatMs: number;
  /** SSE_MAX_STREAMS_PER_CLIENT: live streams one API client may have open on one instance (429 beyond). */
  sseMaxStreamsPerClient: number;
}

export interface WebhookSettings {
  /** WEBHOOK_TIMEOUT_MS: how long one delivery attempt may take (name look-up, connect, send, answer). */
  timeoutMs: number;
  /** WEBHOOK_CONCURRENCY: deliveries in flight in this process, over every endpoint. */
  concurrency: number;
  /** WEBHOOK_CONCURRENCY_PER_ENDPOINT: deliveries in flight to one endpoint, over every process. */
  perEndpoint: number;
}

export interface InvoicingSettings {
  /** The operator issuing invoices: name, address lines, VAT number, e-mail. */
  issuer: { name: string; addressLines: string[]; vatNumber: string | undefined; email: string | undefined };
  /** Invoice numbers are <prefix>-<6 digits>, sequential without gaps per prefix. */
  numberPrefix: string;
  /** Lifetime of the signed invoice download links. */
  linkTtlMs: number;
}

export interface OcpiConfig {
  /** Our own OCPI party (country code and party id) and its business name, as CPOs see us. */
  countryCode: string;
  partyId: string;
  businessName: string;
  /** Most objects we answer on one page of a GET, and ask for when we pull. */
  pageLimit: number;
  /** Per-attempt timeout of calls to CPOs. */
  requestTimeoutMs: number;
  /** Requests per minute each OCPI connection (peer) may make to us; 0 = unlimited. */
  rateLimitPerMinute: number;
  /** Pull Locations/Tariffs/Sessions/CDRs changed since the last pull this often (0: never). */
  reconcileIntervalMs: number;
  /** How far back a full pull of Sessions and CDRs reaches (their GET always carries date_from). */
  pullHorizonDays: number;
  /** The built-in sandbox CPO network, started beside the service and connected through the credentials handshake. */
  cpoSandbox: {
    enabled: boolean;
    port: number;
    timeCompression: number;
    statusChangesPerSecond: number;
    quirks: Quirk[];
    ocpiVersion: '2.2.1' | '2.2' | '2.1.1';
    /** How the network presents its parties: one platform, or a hub in front of them (src/sandbox/cpo/topology.ts). */
    topology: 'platform' | 'hub';
    /** How many of the generator's parties it hosts (0: all of them). */
    parties: number;
  };
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${value}")`);
  }
  return value as T;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new ConfigError(name, `must be an integer (got "${value}")`);
  const n = Number(value);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max} (got ${n})`);
  return n;
}

function connectionsConfig(env: Env): Config['connections'] {
  const headersMs = integer(env, 'HEADERS_TIMEOUT_MS', 30_000, 1_000, 600_000);
  const requestMs = integer(env, 'REQUEST_TIMEOUT_MS', 300_000, 1_000, 3_600_000);
  if (requestMs < headersMs) throw new ConfigError('REQUEST_TIMEOUT_MS', `must be at least HEADERS_TIMEOUT_MS (${headersMs})`);
  return {
    firstByteMs: integer(env, 'FIRST_BYTE_TIMEOUT_MS', 10_000, 100, 600_000),
    headersMs,
    requestMs,
    keepAliveMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 1_000, 600_000),
  };
}

/** CPO_SANDBOX_QUIRKS: the imperfect data the sandbox CPO network sends (src/sandbox/cpo/README.md). */
function sandboxQuirks(env: Env): Quirk[] {
  try {
    return parseQuirks(read(env, 'CPO_SANDBOX_QUIRKS'));
  } catch (error) {
    throw new ConfigError('CPO_SANDBOX_QUIRKS', (error as Error).message);
  }
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (['true', '1', 'yes'].includes(value.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(value.toLowerCase())) return false;
  throw new ConfigError(name, `must be true or false (got "${value}")`);
}

/** A non-negative amount with at most 2 decimals, kept as a string (money is never a float). */
function amount(env: Env, name: string, fallback: string | undefined): string | undefined {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (value.toLowerCase() === 'none') return undefined;
  if (!/^\d{1,6}(\.\d{1,2})?$/.test(value)) throw new ConfigError(name, `must be an amount such as 0.59 (got "${value}")`);
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.map((p) => p.replace(':', '')).join(' or ')}`);
  }
  return value;
}

/**
 * A PostgreSQL URL. One for a Unix socket names no host before the path (`postgres://user:pw@/db?host=/run/postgresql`),
 * which WHATWG URL refuses: it is checked with a stand-in host, and then must name its socket directory.
 */
function postgresUrl(env: Env, name: string): string | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  const socket = /^(postgres(?:ql)?:\/\/[^/?#]*@)(?=[/?])/.exec(value);
  url({ [name]: socket ? value.replace(socket[0], `${socket[1]}socket`) : value }, name, ['postgres:', 'postgresql:']);
  if (socket && !new URL(value.replace(socket[0], `${socket[1]}socket`)).searchParams.get('host')?.startsWith('/')) {
    throw new ConfigError(name, 'names no host: give one, or a Unix socket directory as ?host=/path');
  }
  return value;
}

function host(env: Env): string {
  const value = read(env, 'HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:_-]+$/.test(value)) throw new ConfigError('HOST', `is not a host name or address (got "${value}")`);
  return value;
}

function defaultPublicBaseUrl(hostName: string, port: number, tlsAtProxy: boolean): string {
  const shown = ['0.0.0.0', '::', '127.0.0.1', '::1'].includes(hostName) ? 'localhost' : hostName;
  return tlsAtProxy ? `https://${shown}` : `https://${shown}:${port}`;
}

function invoicePrefix(env: Env): string {
  const value = read(env, 'INVOICE_NUMBER_PREFIX') ?? 'CA';
  if (!/^[A-Z0-9][A-Z0-9-]{0,15}$/.test(value)) throw new ConfigError('INVOICE_NUMBER_PREFIX', 'must be 1..16 upper-case letters, digits or dashes');
  return value;
}

function pricingConfig(env: Env): Config['pricing'] {
  const minimum = amount(env, 'PRE_AUTH_MIN_EUR', '10.00') ?? '0';
  const maximum = amount(env, 'PRE_AUTH_MAX_EUR', '150.00') ?? '0';
  if (Number(minimum) > Number(maximum)) throw new ConfigError('PRE_AUTH_MIN_EUR', `must not exceed PRE_AUTH_MAX_EUR (${maximum})`);
  if (Number(maximum) < 1) throw new ConfigError('PRE_AUTH_MAX_EUR', 'must be at least 1');
  return {
    fallbackKwhPriceEur: amount(env, 'FALLBACK_KWH_PRICE_EUR', '0.59'),
    startingFeeEur: amount(env, 'STARTING_FEE_EUR', undefined),
    preAuthorization: {
      minimum,
      maximum,
      assumedDurationMinutes: integer(env, 'PRE_AUTH_DURATION_MINUTES', 60, 1, 24 * 60),
      assumedEnergyKwhCap: integer(env, 'PRE_AUTH_ENERGY_CAP_KWH', 80, 1, 1000),
      roundUpTo: '1',
    },
  };
}

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** Stripe's API over plain HTTP only on this machine (a local stand-in such as stripe-mock); anything else must be https. */
function stripeApiBase(env: Env): string {
  const value = url(env, 'STRIPE_API_BASE', ['https:', 'http:']) ?? 'https://api.stripe.com';
  const parsed = new URL(value);
  if (parsed.protocol === 'http:' && !LOOPBACK_HOSTS.test(parsed.hostname)) {
    throw new ConfigError('STRIPE_API_BASE', 'may use http only for a loopback host (localhost, 127.0.0.1, [::1]); use an https URL');
  }
  return value.replace(/\/+$/, '');
}

/** Stripe keys are secrets: a bad value is described, never echoed. */
function stripeConfig(env: Env): StripeConfig {
  const secretKey = read(env, 'STRIPE_SECRET_KEY');
  const publishableKey = read(env, 'STRIPE_PUBLISHABLE_KEY');
  const webhookSecret = read(env, 'STRIPE_WEBHOOK_SECRET');
  const apiBase = stripeApiBase(env);
  const sandboxPort = integer(env, 'STRIPE_SANDBOX_PORT', 0, 0, 65535);
  const sandboxOptIn = read(env, 'PAYMENTS_SANDBOX') === undefined ? undefined : boolean(env, 'PAYMENTS_SANDBOX', false);
  if (secretKey === undefined) {
    if (publishableKey !== undefined || webhookSecret !== undefined) {
      throw new ConfigError(
        'STRIPE_SECRET_KEY',
        'is required when STRIPE_PUBLISHABLE_KEY or STRIPE_WEBHOOK_SECRET is set (leave all three unset for the built-in sandbox)',
      );
    }
    return { sandbox: true, sandboxOptIn, secretKey, publishableKey, webhookSecret, apiBase, sandboxPort };
  }
  if (sandboxOptIn === true) throw new ConfigError('PAYMENTS_SANDBOX', 'cannot be true while STRIPE_SECRET_KEY is set: unset one of them');
  const mode = /^(sk|rk)_(test|live)_[A-Za-z0-9_]{8,}$/.exec(secretKey)?.[2];
  if (!mode) throw new ConfigError('STRIPE_SECRET_KEY', 'must be a Stripe secret or restricted key (sk_test_..., sk_live_..., rk_...)');
  if (publishableKey === undefined)
    throw new ConfigError('STRIPE_PUBLISHABLE_KEY', 'is required with STRIPE_SECRET_KEY (clients need it for the processor’s SDK)');
  const publishableMode = /^pk_(test|live)_[A-Za-z0-9_]{8,}$/.exec(publishableKey)?.[1];
  if (!publishableMode) throw new ConfigError('STRIPE_PUBLISHABLE_KEY', 'must be a Stripe publishable key (pk_test_... or pk_live_...)');
  if (publishableMode !== mode) throw new ConfigError('STRIPE_PUBLISHABLE_KEY', `is a ${publishableMode} key but STRIPE_SECRET_KEY is a ${mode} key`);
  if (webhookSecret === undefined) throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'is required with STRIPE_SECRET_KEY (webhooks are verified with it)');
  if (!/^whsec_[A-Za-z0-9+/=_]{8,}$/.test(webhookSecret)) throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'must be a Stripe webhook signing secret (whsec_...)');
  return { sandbox: false, sandboxOptIn, secretKey, publishableKey, webhookSecret, apiBase, sandboxPort };
}

/**
 * What the service (not the CLI, which moves no money) requires of its
 * payment processor: without a Stripe key the built-in sandbox takes
 * payments and moves no money, which is the default in development and test
 * but in production only with the explicit PAYMENTS_SANDBOX=true.
 */
export function requirePaymentProcessor(config: Pick<Config, 'mode' | 'stripe'>): void {
  const { stripe } = config;
  if (!stripe.sandbox || stripe.sandboxOptIn === true) return;
  if (stripe.sandboxOptIn === false || config.mode === 'production') {
    throw new ConfigError(
      'STRIPE_SECRET_KEY',
      `is required${stripe.sandboxOptIn === false ? ' with PAYMENTS_SANDBOX=false' : ' in production'} (with STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET); ` +
        'to take payments on the built-in Stripe sandbox instead, which moves no money, set PAYMENTS_SANDBOX=true',
    );
  }
}

/**
 * Production invoices name the issuer's VAT number (a VAT invoice without it is not one): checked at start, beside
 * the payment processor (a development or test service prints invoices without it).
 */
export function requireInvoiceIssuer(config: Pick<Config, 'mode' | 'invoicing'>): void {
  if (config.mode === 'production' && !config.invoicing.issuer.vatNumber) {
    throw new ConfigError('INVOICE_ISSUER_VAT_NUMBER', "is required in production (the issuer's VAT number, printed on every invoice), e.g. DE123456789");
  }
}

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const mode = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development');
  const hostName = host(env);
  const port = integer(env, 'PORT', 8443, 0, 65535);
  const dataDir = path.resolve(cwd, read(env, 'DATA_DIR') ?? 'data');
  const databaseUrl = postgresUrl(env, 'DATABASE_URL');
  const trustProxy = boolean(env, 'TRUST_PROXY', false);

  const certFile = read(env, 'TLS_CERT_FILE');
  const keyFile = read(env, 'TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(certFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE', 'TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  const tls =
    certFile !== undefined && keyFile !== undefined
      ? { certFile: path.resolve(cwd, certFile), keyFile: path.resolve(cwd, keyFile), generated: false }
      : { certFile: path.join(dataDir, 'tls', 'localhost-cert.pem'), keyFile: path.join(dataDir, 'tls', 'localhost-key.pem'), generated: true };

  const publicBaseUrl = (url(env, 'PUBLIC_BASE_URL', ['https:', 'http:']) ?? defaultPublicBaseUrl(hostName, port, trustProxy)).replace(/\/+$/, '');
  if (publicBaseUrl.startsWith('http:') && mode === 'production') {
    throw new ConfigError('PUBLIC_BASE_URL', 'must be an https URL in production');
  }

  const jwtPrivateKeyFile = read(env, 'JWT_PRIVATE_KEY_FILE');
  const jwtPublicKeyFile = read(env, 'JWT_PUBLIC_KEY_FILE');
  const jwt: JwtConfig = {
    issuer: read(env, 'JWT_ISSUER') ?? 'charging-access',
    audience: read(env, 'JWT_AUDIENCE') ?? 'charging-access-api',
    algorithm: oneOf(env, 'JWT_ALGORITHM', ['EdDSA', 'ES256', 'RS256'] as const, 'EdDSA'),
    privateKeyFile: jwtPrivateKeyFile ? path.resolve(cwd, jwtPrivateKeyFile) : path.join(dataDir, 'keys', 'operator-signing-key.pem'),
    publicKeyFile: jwtPublicKeyFile ? path.resolve(cwd, jwtPublicKeyFile) : undefined,
    jwksUrl: url(env, 'JWT_JWKS_URL', ['https:', 'http:']),
    generateKey: jwtPrivateKeyFile === undefined,
  };

  const locales = (read(env, 'LOCALES') ?? 'en,de').split(',').map((l) => l.trim());
  for (const locale of locales) {
    if (!/^[a-z]{2}(-[A-Z]{2})?$/.test(locale)) throw new ConfigError('LOCALES', `"${locale}" is not a locale such as en or de-AT`);
  }

  const testCrashPoints = (read(env, 'TEST_CRASH_POINTS') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (testCrashPoints.length > 0 && mode === 'production') throw new ConfigError('TEST_CRASH_POINTS', 'kills the process on purpose: refused in production');
  for (const name of testCrashPoints) {
    if (!(CRASH_POINTS as readonly string[]).includes(name)) throw new ConfigError('TEST_CRASH_POINTS', `"${name}" is not one of ${CRASH_POINTS.join(', ')}`);
  }

  return {
    mode,
    host: hostName,
    port,
    dataDir,
    databaseUrl,
    tls,
    trustProxy,
    publicBaseUrl,
    publicBaseUrlFrom: read(env, 'PUBLIC_BASE_URL') ? 'PUBLIC_BASE_URL' : read(env, 'HOST') || read(env, 'PORT') ? 'HOST/PORT' : 'default',
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    logFormat: read(env, 'LOG_FORMAT') === undefined ? undefined : oneOf(env, 'LOG_FORMAT', ['pretty', 'json'] as const, 'json'),
    jwt,
    locales,
    demoClient: boolean(env, 'DEMO_CLIENT', true),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    connections: connectionsConfig(env),
    authCacheTtlMs: integer(env, 'AUTH_CACHE_TTL_MS', 2_000, 0, 5_000),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 1_200, 0, 2_147_483_647),
    stationsDefaultLocations: integer(env, 'STATIONS_DEFAULT_LOCATIONS', 20_000, 0, 3_000_000),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 20, 2, 1_000),
    databaseAutoPrepare: boolean(env, 'DATABASE_AUTO_PREPARE', true),
    stationsSeed: integer(env, 'STATIONS_SEED', 1, 0, 2 ** 31 - 1),
    pricing: pricingConfig(env),
    stripe: stripeConfig(env),
    events: {
      progressIntervalMs: integer(env, 'EVENTS_PROGRESS_INTERVAL_MS', 30_000, 0, 86_400_000),
      sseHeartbeatMs: integer(env, 'SSE_HEARTBEAT_MS', 15_000, 100, 300_000),
      sseMaxStreamsPerClient: integer(env, 'SSE_MAX_STREAMS_PER_CLIENT', 100, 1, 100_000),
    },
    ocpi: ocpiConfig(env, mode),
    charging: {
      startTimeoutMs: integer(env, 'CHARGING_START_TIMEOUT_SECONDS', 120, 10, 3600) * 1000,
      stalledStartMs: integer(env, 'CHARGING_STALLED_START_SECONDS', 120, 2, 3600) * 1000,
      stalledStopMs: integer(env, 'CHARGING_STALLED_STOP_SECONDS', 600, 2, 86_400) * 1000,
      pricePolicy: oneOf(env, 'CHARGING_PRICE_POLICY', ['engine', 'cdr'] as const, 'engine'),
      jobsEnabled: boolean(env, 'JOBS_ENABLED', true),
      jobLeaseMs: integer(env, 'JOBS_LEASE_SECONDS', 30, 2, 3600) * 1000,
      jobConcurrency: integer(env, 'JOBS_CONCURRENCY', 16, 1, 256),
      reconcileIntervalMs: integer(env, 'CHARGING_RECONCILE_SECONDS', 60, 1, 86_400) * 1000,
    },
    invoicing: {
      issuer: {
        name: read(env, 'INVOICE_ISSUER_NAME') ?? 'Charging Access (sandbox operator)',
        addressLines: (read(env, 'INVOICE_ISSUER_ADDRESS') ?? 'Example Street 1|10115 Berlin|Germany')
          .split('|')
          .map((line) => line.trim())
          .filter(Boolean),
        vatNumber: read(env, 'INVOICE_ISSUER_VAT_NUMBER'),
        email: read(env, 'INVOICE_ISSUER_EMAIL'),
      },
      numberPrefix: invoicePrefix(env),
      linkTtlMs: integer(env, 'INVOICE_LINK_TTL_SECONDS', 3600, 60, 7 * 86_400) * 1000,
    },
    webhooks: {
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 64, 1, 1_024),
      perEndpoint: integer(env, 'WEBHOOK_CONCURRENCY_PER_ENDPOINT', 16, 1, 64),
    },
    testCrashPoints,
    metrics: metricsConfig(env, mode, port),
  };
}

/** Prometheus text on its own listener: on loopback by default, off in tests (METRICS_PORT=0 or off disables it). */
function metricsConfig(env: Env, mode: RuntimeMode, apiPort: number): Config['metrics'] {
  const value = read(env, 'METRICS_PORT');
  if (value?.toLowerCase() === 'off' || (value === undefined && mode === 'test')) return undefined;
  const port = integer(env, 'METRICS_PORT', 9464, 0, 65535);
  if (port === 0) return undefined;
  if (port === apiPort) throw new ConfigError('METRICS_PORT', `must differ from PORT (${apiPort}): metrics have a listener of their own`);
  const host = read(env, 'METRICS_HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:_-]+$/.test(host)) throw new ConfigError('METRICS_HOST', `is not a host name or address (got "${host}")`);
  return { host, port };
}

function ocpiConfig(env: Env, mode: Config['mode']): OcpiConfig {
  const countryCode = (read(env, 'OCPI_COUNTRY_CODE') ?? 'DE').toUpperCase();
  if (!/^[A-Z]{2}$/.test(countryCode)) throw new ConfigError('OCPI_COUNTRY_CODE', `must be an ISO 3166-1 alpha-2 code such as DE (got "${countryCode}")`);
  const partyId = (read(env, 'OCPI_PARTY_ID') ?? 'CAX').toUpperCase();
  if (!/^[A-Z0-9]{3}$/.test(partyId)) throw new ConfigError('OCPI_PARTY_ID', `must be three letters or digits such as CAX (got "${partyId}")`);
  return {
    countryCode,
    partyId,
    businessName: read(env, 'OCPI_BUSINESS_NAME') ?? 'Charging Access',
    pageLimit: integer(env, 'OCPI_PAGE_LIMIT', 1_000, 10, 10_000),
    requestTimeoutMs: integer(env, 'OCPI_REQUEST_TIMEOUT_MS', 10_000, 100, 120_000),
    // A CPO pushes every EVSE status change as its own PATCH: 120,000/min (2,000/s) leaves room for a
    // network of a million EVSEs changing 1,000 times a second (bench/stations.ts's churn rate).
    rateLimitPerMinute: integer(env, 'OCPI_RATE_LIMIT_PER_MINUTE', 120_000, 0, 2_147_483_647),
    reconcileIntervalMs: integer(env, 'OCPI_RECONCILE_INTERVAL_MS', 15 * 60_000, 0, 7 * 24 * 3_600_000),
    pullHorizonDays: integer(env, 'OCPI_PULL_HORIZON_DAYS', 30, 1, 3_650),
    cpoSandbox: {
      enabled: boolean(env, 'CPO_SANDBOX', mode !== 'production'),
      port: integer(env, 'CPO_SANDBOX_PORT', 8444, 0, 65535),
      timeCompression: integer(env, 'CPO_SANDBOX_TIME_COMPRESSION', 60, 1, 3_600),
      statusChangesPerSecond: integer(env, 'CPO_SANDBOX_STATUS_CHANGES_PER_SECOND', 2, 0, 10_000),
      quirks: sandboxQuirks(env),
      // The OCPI version the sandbox network speaks (its personality, src/sandbox/cpo/wire.ts).
      ocpiVersion: oneOf(env, 'CPO_SANDBOX_OCPI_VERSION', ['2.2.1', '2.2', '2.1.1'] as const, '2.2.1'),
      topology: oneOf(env, 'CPO_SANDBOX_TOPOLOGY', ['platform', 'hub'] as const, 'platform'),
      parties: integer(env, 'CPO_SANDBOX_PARTIES', 0, 0, 1_000),
    },
  };
}
