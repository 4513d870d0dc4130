// Prometheus metrics: one registry per process, made in the composition root
// (main.ts) and handed to the modules that record (none when METRICS_PORT is
// off, so nothing is recorded and nothing costs), and the listener that serves
// it as Prometheus text on its own port, away from the API and its clients.
//
// Figures that live in PostgreSQL (job queues, push and webhook backlogs) are
// read when Prometheus scrapes, with a short deadline: a scrape during a
// database outage still answers (with the pool and error figures, which matter
// most then), leaving those gauges out rather than showing stale values. Every
// process on one database reports the same backlog figures: aggregate them
// with max(), not sum().
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { OcpiCallOutcome } from '../ocpi-protocol/client.ts';
import { isDatabaseUnavailable } from './db.ts';

export type RateLimitScope = 'client' | 'ocpi';

/** How a payment processor call ended: an answer (success, declined, requires_action) or a failure (retryable: unavailable). */
export type ProcessorCallOutcome = 'success' | 'declined' | 'requires_action' | 'unavailable' | 'failed';

/** Label value of requests no route matched: one value, whatever the URL (bounded cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';

export interface PoolFigures {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

export interface JobQueueFigures {
  queue: string;
  queued: number;
  running: number;
  /** Seconds the oldest due queued job has waited since it became due (0: none is due). */
  oldestDueSeconds: number;
}

export interface BacklogFigures {
  pending: number;
  /** Seconds since the oldest pending item was created (0: none). */
  oldestSeconds: number;
}

/** What is read at scrape time; main.ts names the sources once they exist. */
export interface MetricSources {
  pool?: PoolFigures;
  jobQueues?: () => Promise<JobQueueFigures[]>;
  /** Outbound OCPI pushes (token pushes) waiting in the outbox, by module. */
  ocpiPushes?: () => Promise<(BacklogFigures & { module: string })[]>;
  /** The built-in Stripe sandbox's webhook deliveries not yet delivered (nor given up). */
  stripeWebhooks?: () => Promise<BacklogFigures>;
  catalogue?: () => { stations: number; evses: number };
}

const SCRAPE_DEADLINE_MS = 2_000;

function withinDeadline<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${SCRAPE_DEADLINE_MS} ms`)), SCRAPE_DEADLINE_MS);
    timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * One read per scrape: callers while a read is under way share it. A source that fails or does not answer
 * within the deadline gives undefined (its gauges are left out of that scrape).
 */
function onePerScrape<T>(read: () => Promise<T> | undefined): () => Promise<T | undefined> {
  let pending: Promise<T | undefined> | undefined;
  return () => {
    if (pending) return pending;
    const started = read();
    if (!started) return Promise.resolve(undefined);
    pending = withinDeadline(started)
      .catch(() => undefined)
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
}

/** What each family of metrics is made with: the registries it registers on, and the sources read at scrape time (named by watch()). */
interface MetricsContext {
  registers: Registry[];
  sources: MetricSources;
}

/** Requests answered and how long each took, by route pattern, method and status code. */
function httpMetrics({ registers }: MetricsContext) {
  const httpRequests = new Counter({
    name: 'charging_access_http_requests_total',
    help: 'HTTP requests answered, by route pattern (unmatched: no route), method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'charging_access_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by route pattern, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  return { httpRequests, httpDuration };
}

/** Requests refused by rate limiting, by scope. */
function rateLimitMetrics({ registers }: MetricsContext) {
  const rateLimitRejections = new Counter({
    name: 'charging_access_rate_limit_rejections_total',
    help: 'Requests refused with 429 by rate limiting: client (API clients) or ocpi (OCPI peers).',
    labelNames: ['scope'] as const,
    registers,
  });
  // Both scopes are shown from the start, so a rate() over them never starts from nothing.
  rateLimitRejections.inc({ scope: 'client' }, 0);
  rateLimitRejections.inc({ scope: 'ocpi' }, 0);
  return rateLimitRejections;
}

/** Failed database operations, and the pool's connections read at scrape time. */
function databaseMetrics({ registers, sources }: MetricsContext) {
  const dbErrors = new Counter({
    name: 'charging_access_db_errors_total',
    help: 'Failed database operations: unavailable (unreachable, restarting, connection lost) or other (a statement failed).',
    labelNames: ['kind'] as const,
    registers,
  });
  dbErrors.inc({ kind: 'unavailable' }, 0);
  dbErrors.inc({ kind: 'other' }, 0);
  const poolGauge = (name: string, help: string, read: (pool: PoolFigures) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        if (sources.pool) this.set(read(sources.pool));
      },
    });
  poolGauge('charging_access_db_pool_clients', 'Connections the database pool holds open.', (p) => p.totalCount);
  poolGauge('charging_access_db_pool_idle_clients', 'Open pool connections not checked out.', (p) => p.idleCount);
  poolGauge('charging_access_db_pool_waiting_requests', 'Requests waiting for a pool connection.', (p) => p.waitingCount);
  return dbErrors;
}

/** A gauge set at each scrape from the figures a source answers: one value per figure, none when the source gave nothing. */
function scrapedGauge<R>(
  { registers }: MetricsContext,
  name: string,
  help: string,
  labelNames: string[],
  figures: () => Promise<R[] | undefined>,
  value: (figure: R) => { labels: Record<string, string>; value: number },
): Gauge {
  return new Gauge({
    name,
    help,
    labelNames,
    registers,
    async collect() {
      this.reset();
      for (const figure of (await figures()) ?? []) {
        const sampled = value(figure);
        this.set(sampled.labels, sampled.value);
      }
    },
  });
}

/** The figures that live in PostgreSQL, read at scrape time: job queues, OCPI pushes and the Stripe sandbox's webhooks waiting. */
function backlogGauges(ctx: MetricsContext): void {
  const { sources } = ctx;
  // Gauges fed by one query set each of their values from the same answer: the first of them to be
  // collected in a scrape asks, the others wait for that answer (gauges are collected in parallel).
  const jobFigures = onePerScrape(() => sources.jobQueues?.());
  const pushFigures = onePerScrape(() => sources.ocpiPushes?.());
  const webhookFigures = onePerScrape(() => sources.stripeWebhooks?.());
  scrapedGauge(ctx, 'charging_access_job_queue_depth', 'Queued jobs (due or scheduled), by queue.', ['queue'], jobFigures, (f) => ({
    labels: { queue: f.queue },
    value: f.queued,
  }));
  scrapedGauge(ctx, 'charging_access_jobs_running', 'Jobs held by a worker, by queue.', ['queue'], jobFigures, (f) => ({
    labels: { queue: f.queue },
    value: f.running,
  }));
  scrapedGauge(
    ctx,
    'charging_access_job_queue_oldest_due_seconds',
    'How long the oldest due queued job has waited since it became due, by queue (0: none waits).',
    ['queue'],
    jobFigures,
    (f) => ({ labels: { queue: f.queue }, value: f.oldestDueSeconds }),
  );
  scrapedGauge(
    ctx,
    'charging_access_ocpi_push_backlog',
    'OCPI pushes (token pushes) waiting in the outbox to be delivered to CPOs, by module.',
    ['module'],
    pushFigures,
    (f) => ({ labels: { module: f.module }, value: f.pending }),
  );
  scrapedGauge(
    ctx,
    'charging_access_ocpi_push_oldest_seconds',
    'Age of the oldest OCPI push (token pushes) waiting in the outbox, by module.',
    ['module'],
    pushFigures,
    (f) => ({ labels: { module: f.module }, value: f.oldestSeconds }),
  );
  const webhookList = async () => {
    const figures = await webhookFigures();
    return figures ? [figures] : undefined;
  };
  scrapedGauge(
    ctx,
    'charging_access_stripe_sandbox_webhook_backlog',
    'Webhook deliveries of the built-in Stripe sandbox not yet delivered (nor given up).',
    [],
    webhookList,
    (f) => ({ labels: {}, value: f.pending }),
  );
  scrapedGauge(
    ctx,
    'charging_access_stripe_sandbox_webhook_oldest_seconds',
    'Age of the oldest webhook delivery of the built-in Stripe sandbox not yet delivered.',
    [],
    webhookList,
    (f) => ({ labels: {}, value: f.oldestSeconds }),
  );
}

/** Outbound OCPI calls, by peer, module and outcome. */
function ocpiMetrics({ registers }: MetricsContext) {
  return new Counter({
    name: 'charging_access_ocpi_calls_total',
    help: 'Outbound OCPI calls (after their retries), by peer (connection name), module and outcome.',
    labelNames: ['peer', 'module', 'outcome'] as const,
    registers,
  });
}

/** Payment processor calls, by operation and outcome, and how long they took. */
function processorMetrics({ registers }: MetricsContext) {
  const processorCalls = new Counter({
    name: 'charging_access_payment_processor_calls_total',
    help: 'Payment processor calls, by operation and outcome (unavailable: a retryable failure).',
    labelNames: ['operation', 'outcome'] as const,
    registers,
  });
  const processorDuration = new Histogram({
    name: 'charging_access_payment_processor_call_duration_seconds',
    help: 'Time of payment processor calls (the SDK’s own retries included), by operation.',
    labelNames: ['operation'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  return { processorCalls, processorDuration };
}

/** The station catalogue's size, read at scrape time, and how long its reloads take. */
function catalogueMetrics({ registers, sources }: MetricsContext) {
  new Gauge({
    name: 'charging_access_catalogue_stations',
    help: 'Stations in this process’s station catalogue.',
    registers,
    collect() {
      if (sources.catalogue) this.set(sources.catalogue().stations);
    },
  });
  new Gauge({
    name: 'charging_access_catalogue_evses',
    help: 'EVSEs (not removed) in this process’s station catalogue.',
    registers,
    collect() {
      if (sources.catalogue) this.set(sources.catalogue().evses);
    },
  });
  return new Histogram({
    name: 'charging_access_catalogue_reload_seconds',
    help: 'Time to rebuild the station catalogue from the database.',
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80],
    registers,
  });
}

/** Writes committed together by group commit (src/platform/group-commit.ts): how many went into each transaction. */
function groupCommitMetrics({ registers }: MetricsContext) {
  return new Histogram({
    name: 'charging_access_group_commit_size',
    help: 'Writes committed together in one transaction by group commit, by kind (sign_up: POST /users/, with or without an Idempotency-Key).',
    labelNames: ['kind'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers,
  });
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}) {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'charging_access_' });
  const sources: MetricSources = {};
  // Made in this order, so the registry lists them in it.
  const ctx: MetricsContext = { registers: [registry], sources };
  const { httpRequests, httpDuration } = httpMetrics(ctx);
  const rateLimitRejections = rateLimitMetrics(ctx);
  const dbErrors = databaseMetrics(ctx);
  backlogGauges(ctx);
  const ocpiCalls = ocpiMetrics(ctx);
  const { processorCalls, processorDuration } = processorMetrics(ctx);
  const catalogueReload = catalogueMetrics(ctx);
  const groupCommitSize = groupCommitMetrics(ctx);

  return {
    registry,
    /** Names what is read at scrape time (the pool, queues, backlogs, the catalogue). */
    watch(more: MetricSources): void {
      Object.assign(sources, more);
    },
    httpRequest(route: string, method: string, status: number, seconds: number): void {
      const labels = { route, method, status: String(status) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    rateLimitRejected(scope: RateLimitScope): void {
      rateLimitRejections.inc({ scope });
    },
    /** Counts a failed database operation, by whether the database was unreachable. */
    databaseError(error: unknown): void {
      dbErrors.inc({ kind: isDatabaseUnavailable(error) ? 'unavailable' : 'other' });
    },
    ocpiCall(peer: string, module: string, outcome: OcpiCallOutcome): void {
      ocpiCalls.inc({ peer, module, outcome });
    },
    processorCall(operation: string, outcome: ProcessorCallOutcome, seconds: number): void {
      processorCalls.inc({ operation, outcome });
      processorDuration.observe({ operation }, seconds);
    },
    catalogueReloaded(seconds: number): void {
      catalogueReload.observe(seconds);
    },
    groupCommitted(kind: 'sign_up', size: number): void {
      groupCommitSize.observe({ kind }, size);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * The Prometheus listener: GET /metrics answers the registry as Prometheus
 * text; anything else is 404. Its own port, so a balancer never exposes it.
 */
export async function listenMetrics(metrics: Metrics, options: { host: string; port: number }): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const pathname = (request.url ?? '/').split('?')[0];
    if (pathname !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at GET /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      () => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('collecting the metrics failed\n');
      },
    );
  });
  // Scrapers keep their connection open between scrapes; none of them may hold up a shutdown.
  server.keepAliveTimeout = 75_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
