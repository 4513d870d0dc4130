// The Prometheus listener on METRICS_PORT, with what it reads from the
// database at each scrape (the pool, the job queues).
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db.ts';
import { queueFigures } from '../platform/jobs.ts';
import { listening } from '../platform/lifecycle.ts';
import { listenMetrics, type Metrics } from '../platform/metrics.ts';
import type { StartupContext } from './context.ts';

export async function startMetricsListener(
  { log, clock, stops }: StartupContext,
  { db, metrics, listenOn }: { db: Database; metrics: Metrics; listenOn: NonNullable<Config['metrics']> },
): Promise<void> {
  metrics.watch({ pool: db.pool, jobQueues: () => queueFigures(db, clock.now()) });
  const metricsListener = await listening('the metrics listener', 'METRICS_PORT', () => listenMetrics(metrics, listenOn));
  stops.add('metrics listener', () => metricsListener.close());
  log.info({ url: metricsListener.url }, 'Prometheus metrics listening');
}
