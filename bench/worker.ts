// Child processes of the station benchmark (bench/stations.ts), so that the
// process being measured (HTTP server and in-memory catalogue) does not also
// pay for them:
//   ingest  loads a generated catalogue through the real ingestion path
//   load    runs autocannon against the server (50 keep-alive connections)
//   churn   sends EVSE status changes through ingestion.updateEvseStatus at a fixed rate
// Each gets its task on the IPC channel and answers there.
import { readFile } from 'node:fs/promises';
import autocannon from 'autocannon';
import { createIngestion } from '../src/modules/stations/ingest.ts';
import { loadGeneratedCatalogue } from '../src/modules/stations/loader.ts';
import { systemClock } from '../src/platform/clock.ts';
import { createDatabase } from '../src/platform/db.ts';

export interface IngestTask {
  role: 'ingest';
  url: string;
  locations: number;
  seed: number;
}

export interface IngestResult {
  locations: number;
  tariffs: number;
  ms: number;
}

export interface LoadTask {
  role: 'load';
  baseUrl: string;
  pathsFile: string;
  token?: string;
  connections: number;
  durationS: number;
  /** Requests per second over all connections (a steady load); default: as fast as the connections go. */
  overallRate?: number;
}

export interface LoadResult {
  requests: number;
  durationS: number;
  rps: number;
  latencyP50: number;
  latencyP99: number;
  latencyMax: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface ChurnTask {
  role: 'churn';
  url: string;
  rate: number;
}

export interface ChurnResult {
  sent: number;
  changed: number;
  failed: number;
  seconds: number;
  achievedRate: number;
  updateP50Ms: number;
  updateP99Ms: number;
  maxBacklog: number;
}

type Task = IngestTask | LoadTask | ChurnTask;

function send(message: unknown): void {
  process.send?.(message);
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
}

async function ingest(task: IngestTask): Promise<void> {
  const db = createDatabase(task.url, { max: 4, applicationName: 'bench-ingest' });
  const started = performance.now();
  let lastReport = started;
  const counts = await loadGeneratedCatalogue(createIngestion({ db, clock: systemClock }), { locations: task.locations, seed: task.seed }, (done, total) => {
    const now = performance.now();
    if (now - lastReport > 15_000) {
      lastReport = now;
      process.stderr.write(`  ingested ${done} / ${total} locations (${Math.round((now - started) / 1000)} s)\n`);
    }
  });
  const result: IngestResult = { ...counts, ms: performance.now() - started };
  await db.close();
  send({ type: 'done', result });
}

async function load(task: LoadTask): Promise<void> {
  const paths = JSON.parse(await readFile(task.pathsFile, 'utf8')) as string[];
  let next = 0;
  const result = await autocannon({
    url: task.baseUrl,
    connections: task.connections,
    pipelining: 1,
    duration: task.durationS,
    ...(task.overallRate ? { overallRate: task.overallRate } : {}),
    timeout: 10,
    headers: task.token ? { authorization: `Bearer ${task.token}` } : {},
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => {
          const path = paths[next++ % paths.length] as string;
          return { ...request, path };
        },
      },
    ],
  });
  const out: LoadResult = {
    requests: result.requests.total,
    durationS: result.duration,
    rps: result.requests.total / result.duration,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    latencyMax: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
  send({ type: 'done', result: out });
}

const CHURN_STATUSES = ['AVAILABLE', 'CHARGING', 'BLOCKED', 'RESERVED', 'OUTOFORDER', 'INOPERATIVE', 'UNKNOWN'];

async function churn(task: ChurnTask): Promise<void> {
  const db = createDatabase(task.url, { max: 12, applicationName: 'bench-churn' });
  const ingestion = createIngestion({ db, clock: systemClock });
  // EVSEs of locations with two or more EVSEs: the visibility probes of the benchmark
  // use single-EVSE locations, so the two never touch the same EVSE.
  const { rows } = await db.query<{ country_code: string; party_id: string; location_id: string; uid: string }>(
    `SELECT e.country_code, e.party_id, e.location_id, e.uid
       FROM ocpi_evses e
       JOIN (SELECT country_code, party_id, location_id FROM ocpi_evses GROUP BY 1, 2, 3 HAVING count(*) >= 2) m USING (country_code, party_id, location_id)
      ORDER BY random() LIMIT 100000`,
  );
  if (rows.length === 0) throw new Error('no EVSEs to change');
  let stopRequested = false;
  process.on('message', (message: { type: string }) => {
    if (message.type === 'stop') stopRequested = true;
  });
  await new Promise<void>((resolve) => {
    send({ type: 'ready', evses: rows.length });
    process.once('message', () => resolve());
  });

  const started = performance.now();
  const latencies: number[] = [];
  let issued = 0;
  let done = 0;
  let changed = 0;
  let failed = 0;
  let inFlight = 0;
  let maxBacklog = 0;
  let seq = 0;
  const base = Date.now();
  const MAX_IN_FLIGHT = 48;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = performance.now() - started;
      if (stopRequested) {
        clearInterval(tick);
        const wait = setInterval(() => {
          if (inFlight === 0) {
            clearInterval(wait);
            resolve();
          }
        }, 5);
        return;
      }
      const due = Math.floor((elapsed * task.rate) / 1000) - issued;
      maxBacklog = Math.max(maxBacklog, due);
      for (let k = 0; k < due && inFlight < MAX_IN_FLIGHT; k++) {
        const row = rows[(issued * 7919) % rows.length] as (typeof rows)[number];
        issued++;
        inFlight++;
        seq++;
        const t0 = performance.now();
        const status = CHURN_STATUSES[seq % CHURN_STATUSES.length] as string;
        // Strictly increasing stamps: never older than a stored one, so every change applies.
        const last_updated = new Date(base + Math.floor(performance.now() - started) + 1).toISOString();
        ingestion
          .updateEvseStatus({ ...row, status, last_updated })
          .then(
            (ok) => {
              if (ok) changed++;
            },
            () => {
              failed++;
            },
          )
          .finally(() => {
            inFlight--;
            done++;
            latencies.push(performance.now() - t0);
          });
      }
    }, 5);
  });
  const seconds = (performance.now() - started) / 1000;
  const result: ChurnResult = {
    sent: done,
    changed,
    failed,
    seconds,
    achievedRate: done / seconds,
    updateP50Ms: percentile(latencies, 0.5),
    updateP99Ms: percentile(latencies, 0.99),
    maxBacklog,
  };
  await db.close();
  send({ type: 'done', result });
}

process.once('message', (task: Task) => {
  const work = task.role === 'ingest' ? ingest(task) : task.role === 'load' ? load(task) : churn(task);
  work.then(
    () => process.exit(0),
    (error: Error) => {
      process.stderr.write(`bench worker (${task.role}) failed: ${error.stack ?? error.message}\n`);
      process.exit(1);
    },
  );
});
