// Station benchmark: `npm run bench:stations [-- options]` (see bench/README.md).
//
// One run measures, on a throw-away embedded PostgreSQL:
//  1. load: a generated catalogue through the real ingestion path (a child
//     process), catalogue.reload() from the database, process RSS / heap;
//  2. core queries in process: around page 1, tiles (zoom >= 7, zoom <= 6
//     cached and computed), median of 3 runs;
//  3. the same around queries answered by PostgreSQL (plain GiST point index
//     plus exact haversine in SQL), results compared one by one;
//  4. HTTP on loopback with real bearer authentication, as ratios of a plain
//     hello-world route measured in the same run (autocannon in a child
//     process, 50 connections), plus server-side times;
//  5. EVSE status churn (1,000 changes/s through ingestion.updateEvseStatus,
//     followed through LISTEN/NOTIFY as src/main.ts does) under the HTTP mix,
//     and how fast a change becomes visible.
// Every figure is printed next to its target with PASS/FAIL. Timings are
// never asserted in tests: this is a measuring tool, not a test.
import { type ChildProcess, fork } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.ts';
import { createClientsService } from '../src/modules/clients/service.ts';
import { type AroundQuery, type Catalogue, createCatalogue, type StationFilter, type TileJson } from '../src/modules/stations/catalogue.ts';
import { createIngestion } from '../src/modules/stations/ingest.ts';
import type { Speed } from '../src/modules/stations/projection.ts';
import { CATALOGUE_CHANNEL, upsertPartner } from '../src/modules/stations/repository.ts';
import { connectorMaskOf } from '../src/modules/stations/routes.ts';
import { mercator } from '../src/modules/stations/tiles.ts';
import { systemClock } from '../src/platform/clock.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createDatabase, type Database, listen } from '../src/platform/db.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';
import type { HttpApp } from '../src/platform/http/server.ts';
import { migrate } from '../src/platform/migrations.ts';
import type { ChurnResult, IngestResult, LoadResult } from './worker.ts';

// ---------------------------------------------------------------------------
// Options

const { values: argv } = parseArgs({
  options: {
    locations: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'with-3m': { type: 'boolean', default: false },
    'core-only': { type: 'boolean', default: false },
    duration: { type: 'string' },
    runs: { type: 'string' },
    seed: { type: 'string', default: '1' },
    'json-out': { type: 'string' },
    '3m-locations': { type: 'string', default: '900000' },
    help: { type: 'boolean', default: false },
  },
});

if (argv.help) {
  process.stdout.write(`npm run bench:stations -- [options]
  --locations N   generated locations (default 300000, about 1,000,000 EVSEs; --quick: 30000)
  --quick         smoke run: 30,000 locations, 3 s HTTP scenarios, fewer queries
  --with-3m       afterwards, check load and core queries at about 3,000,000 EVSEs (900,000 locations, own process and database)
  --core-only     only load and in-process core queries (no PostgreSQL comparison, HTTP or churn)
  --duration S    seconds per HTTP scenario (default 10; --quick: 3)
  --runs N        repetitions whose median is reported (default 3)
  --seed N        generator seed (default 1)
  --json-out FILE also write the figures as JSON
`);
  process.exit(0);
}

const QUICK = argv.quick;
const LOCATIONS = Number(argv.locations ?? (QUICK ? 30_000 : 300_000));
const DURATION_S = Number(argv.duration ?? (QUICK ? 3 : 10));
const RUNS = Number(argv.runs ?? 3);
const SEED = Number(argv.seed);
const CORE_ONLY = argv['core-only'];
const CONNECTIONS = 50;
const PAGE = { offset: 0, limit: 20 };
const SIZES = QUICK
  ? { around: 3_000, tilesHigh: 2_000, lowComputed: 150, lowCachedKeys: 100, pgQueries: 300, warmup: 1 }
  : { around: 20_000, tilesHigh: 10_000, lowComputed: 600, lowCachedKeys: 300, pgQueries: 1_500, warmup: 2 };
for (const [name, value] of [
  ['--locations', LOCATIONS],
  ['--duration', DURATION_S],
  ['--runs', RUNS],
  ['--seed', SEED],
] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc (npm run bench:stations does)');

const benchStarted = performance.now();
const log = (message: string) => process.stderr.write(`[${((performance.now() - benchStarted) / 1000).toFixed(0).padStart(5)} s] ${message}\n`);

// ---------------------------------------------------------------------------
// Figures

interface Figure {
  section: string;
  name: string;
  value: number;
  unit: string;
  /** Human-readable target, e.g. "<= 50 us". */
  target?: string;
  pass?: boolean;
  note?: string;
}

const figures: Figure[] = [];

function fmt(value: number, unit: string): string {
  if (!Number.isFinite(value)) return String(value);
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : Math.abs(value) >= 1 ? 2 : 3;
  return `${value.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
}

function report(section: string, name: string, value: number, unit: string, check?: { max?: number; min?: number; note?: string }): Figure {
  const figure: Figure = { section, name, value, unit };
  if (check?.max !== undefined) {
    figure.target = `<= ${fmt(check.max, unit)}`;
    figure.pass = value <= check.max;
  } else if (check?.min !== undefined) {
    figure.target = `>= ${fmt(check.min, unit)}`;
    figure.pass = value >= check.min;
  }
  if (check?.note) figure.note = check.note;
  figures.push(figure);
  const verdict = figure.pass === undefined ? '' : figure.pass ? '  PASS' : '  FAIL';
  process.stdout.write(
    `${`${section}: ${name}`.padEnd(78)} ${fmt(value, unit).padStart(14)}${figure.target ? `  (target ${figure.target})` : ''}${verdict}${figure.note ? `  [${figure.note}]` : ''}\n`,
  );
  return figure;
}

function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
}

function median(values: number[]): number {
  return percentile(values, 0.5);
}

// ---------------------------------------------------------------------------
// Seeded randomness (mulberry32): the same queries every run of the benchmark

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rng = prng(SEED * 7_777 + 13);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;

// ---------------------------------------------------------------------------
// Child processes (bench/worker.ts)

const WORKER = new URL('./worker.ts', import.meta.url).pathname;

function startWorker(
  task: object,
  execArgv: string[] = [],
): { child: ChildProcess; next(): Promise<{ type: string; [key: string]: unknown }>; exit: Promise<void> } {
  const child = fork(WORKER, [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const queue: { type: string }[] = [];
  const waiting: ((message: { type: string }) => void)[] = [];
  let exited: Error | undefined;
  child.on('message', (message: { type: string }) => {
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  child.on('exit', (code) => {
    if (code !== 0) {
      exited = new Error(`bench worker exited with code ${code}`);
      for (const waiter of waiting.splice(0)) waiter({ type: 'error' });
    }
  });
  child.send(task);
  return {
    child,
    exit,
    next: () =>
      new Promise((resolve, reject) => {
        const queued = queue.shift();
        if (queued) return resolve(queued);
        if (exited) return reject(exited);
        waiting.push((message) => (message.type === 'error' ? reject(exited) : resolve(message)));
      }),
  };
}

/** Runs a worker to its result and its exit (so its CPU time is counted in this process's children before the next step). */
async function runWorker<R>(task: object, execArgv: string[] = []): Promise<R> {
  const worker = startWorker(task, execArgv);
  const message = await worker.next();
  await worker.exit;
  return message.result as R;
}

// ---------------------------------------------------------------------------
// Queries

interface BenchFilter {
  connectorTypes: string[];
  onlyAvailable: boolean;
  onlyPartners: boolean;
  /** Operator names as stored (not lower-cased). */
  operators: string[];
  speeds: Speed[];
  maxPrice?: number;
}

const NO_FILTER: BenchFilter = { connectorTypes: [], onlyAvailable: false, onlyPartners: false, operators: [], speeds: [] };
const COMMON_CONNECTORS = ['IEC_62196_T2', 'IEC_62196_T2_COMBO', 'CHADEMO', 'DOMESTIC_F', 'IEC_62196_T1', 'TESLA_S'];

function randomFilter(operatorNames: string[], withTileFilters: boolean): BenchFilter {
  if (rng() < 0.4) return NO_FILTER;
  const filter: BenchFilter = {
    connectorTypes: rng() < 0.4 ? [pick(COMMON_CONNECTORS), ...(rng() < 0.3 ? [pick(COMMON_CONNECTORS)] : [])] : [],
    onlyAvailable: rng() < 0.35,
    onlyPartners: rng() < 0.15,
    operators: rng() < 0.2 ? [pick(operatorNames), ...(rng() < 0.3 ? [pick(operatorNames)] : [])] : [],
    speeds: [],
  };
  if (withTileFilters) {
    if (rng() < 0.3) filter.speeds = rng() < 0.5 ? ['fast', 'turbo'] : [pick(['slow', 'fast', 'turbo'] as const)];
    if (rng() < 0.2) filter.maxPrice = pick([0.39, 0.49, 0.59, 0.69, 0.79]);
  }
  return filter;
}

function stationFilter(filter: BenchFilter): StationFilter {
  return {
    connectorMask: connectorMaskOf(filter.connectorTypes),
    onlyAvailable: filter.onlyAvailable,
    onlyPartners: filter.onlyPartners,
    operators: filter.operators.map((o) => o.toLowerCase()),
    speeds: filter.speeds,
    ...(filter.maxPrice !== undefined ? { maxPrice: filter.maxPrice } : {}),
  };
}

function filterQuery(filter: BenchFilter, withTileFilters: boolean): string {
  const parts: string[] = [];
  if (filter.connectorTypes.length > 0) parts.push(`connector_types=${filter.connectorTypes.join(',')}`);
  if (filter.onlyAvailable) parts.push('only_available=true');
  if (filter.onlyPartners) parts.push('only_partners=true');
  for (const op of filter.operators) parts.push(`operators=${encodeURIComponent(op)}`);
  if (withTileFilters) {
    if (filter.speeds.length > 0) parts.push(`power_groups=${filter.speeds.join(',')}`);
    if (filter.maxPrice !== undefined) parts.push(`max_price=${filter.maxPrice}`);
  }
  return parts.map((p) => `&${p}`).join('');
}

interface AroundCase {
  query: AroundQuery;
  filter: BenchFilter;
  path: string;
}

interface World {
  catalogue: Catalogue;
  size: number;
  longitudes: Float64Array;
  latitudes: Float64Array;
  stationIds: string[];
  operatorNames: string[];
}

function aroundCase(world: World): AroundCase {
  const i = Math.floor(rng() * world.size);
  // Near a station (within about 1 km), radius log-uniform 100 m .. 10 km.
  const latitude = Number(((world.latitudes[i] as number) + (rng() - 0.5) * 0.018).toFixed(6));
  const longitude = Number(((world.longitudes[i] as number) + (rng() - 0.5) * 0.028).toFixed(6));
  const distance = Math.round(100 * 100 ** rng());
  const filter = randomFilter(world.operatorNames, false);
  return {
    query: { latitude, longitude, distance, ...stationFilter(filter) },
    filter,
    path: `/api/v1/stations/around/?latitude=${latitude}&longitude=${longitude}&distance=${distance}${filterQuery(filter, false)}`,
  };
}

function tileOf(lon: number, lat: number, z: number): { x: number; y: number } {
  const [mx, my] = mercator(lon, lat);
  const n = 2 ** z;
  return { x: Math.min(n - 1, Math.floor(mx * n)), y: Math.min(n - 1, Math.floor(my * n)) };
}

interface TileCase {
  z: number;
  x: number;
  y: number;
  filter: BenchFilter;
  path: string;
}

function tileCase(world: World, minZoom: number, maxZoom: number, filtered: boolean): TileCase {
  const i = Math.floor(rng() * world.size);
  const z = minZoom + Math.floor(rng() * (maxZoom - minZoom + 1));
  const { x, y } = tileOf(world.longitudes[i] as number, world.latitudes[i] as number, z);
  const filter = filtered ? randomFilter(world.operatorNames, true) : NO_FILTER;
  return { z, x, y, filter, path: `/api/v1/stations/tile/?z=${z}&x=${x}&y=${y}${filterQuery(filter, true)}` };
}

/**
 * The tile cache is keyed by JSON.stringify(filter), and the catalogue has no
 * way to clear or bypass it (short of reload()): an extra, ignored property
 * makes a key no request has used, so the tile is computed.
 */
let nonce = 0;
function uncachedFilter(filter: BenchFilter): StationFilter {
  return { ...stationFilter(filter), benchNonce: ++nonce } as StationFilter;
}

function timeUs(work: () => unknown): number {
  const t0 = performance.now();
  work();
  return (performance.now() - t0) * 1000;
}

// ---------------------------------------------------------------------------
// Sections

async function setUpDatabase(): Promise<{ tmp: string; embedded: EmbeddedPostgres; db: Database }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'charging-access-bench-'));
  await chmod(tmp, 0o755); // the embedded server's non-root user must reach it
  const embedded = await startEmbeddedPostgres({ dataDir: tmp, role: 'cli', log: () => {} });
  const db = createDatabase(embedded.url, { max: 20, applicationName: 'bench' });
  await migrate(db);
  const { rows } = await db.query<{ server_version: string }>('SHOW server_version');
  log(`embedded PostgreSQL ${rows[0]?.server_version} in ${tmp}`);
  return { tmp, embedded, db };
}

async function loadSection(db: Database, url: string): Promise<{ catalogue: Catalogue; operatorNames: string[]; evses: number }> {
  const S = 'Load';
  log(`ingesting ${LOCATIONS} generated locations through the ingestion path (child process)`);
  const ingest = await runWorker<IngestResult>({ role: 'ingest', url, locations: LOCATIONS, seed: SEED });
  const { rows: counts } = await db.query<{ locations: number; evses: number }>(
    "SELECT (SELECT count(*) FROM ocpi_locations) AS locations, (SELECT count(*) FROM ocpi_evses WHERE status <> 'REMOVED') AS evses",
  );
  const evses = counts[0]?.evses ?? 0;
  report(S, `locations stored (${LOCATIONS} asked)`, counts[0]?.locations ?? 0, '');
  report(S, 'EVSEs stored (not REMOVED)', evses, '');
  report(S, 'ingestion through loadGeneratedCatalogue', ingest.ms / 1000, 's', {
    note: `${Math.round(ingest.locations / (ingest.ms / 1000))} locations/s`,
  });

  // Operators by number of stations; three become partners (for only_partners), all are filter candidates.
  const { rows: ops } = await db.query<{ name: string; n: number }>(
    `SELECT coalesce(l.data->'operator'->>'name', p.name, l.country_code || '*' || l.party_id) AS name, count(*) AS n
       FROM ocpi_locations l LEFT JOIN cpo_parties p ON p.country_code = l.country_code AND p.party_id = l.party_id
      GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 40`,
  );
  const operatorNames = ops.map((o) => o.name).filter((n) => !n.includes(',') && /^[\x20-\x7e]+$/.test(n));
  for (const name of [operatorNames[1], operatorNames[4], operatorNames[9]]) {
    if (name) await upsertPartner(db, { name, logo_url: `https://example.com/logos/${encodeURIComponent(name)}.png` }, new Date());
  }

  gc?.();
  gc?.();
  const before = process.memoryUsage();
  const catalogue = createCatalogue({ db, clock: systemClock });
  log('catalogue.reload() from the database');
  let t0 = performance.now();
  await catalogue.reload();
  const firstReloadMs = performance.now() - t0;
  gc?.();
  gc?.();
  const after = process.memoryUsage();
  const perMillion = 1_000_000 / Math.max(evses, 1);
  report(S, 'catalogue.reload() (first)', firstReloadMs / 1000, 's', {
    max: 20 / perMillion,
    note: `${(firstReloadMs / 1000 / (evses / 1e6)).toFixed(1)} s per 1M EVSEs; target 20 s per 1M EVSEs`,
  });
  const mib = (bytes: number) => bytes / 2 ** 20;
  const nearOneMillion = evses >= 800_000 && evses <= 1_200_000;
  const extrapolated = mib(before.rss + (after.rss - before.rss) * perMillion);
  report(S, 'process RSS after load (after gc)', mib(after.rss), 'MiB', {
    ...(nearOneMillion ? { max: 1024 } : {}),
    note: `before reload ${mib(before.rss).toFixed(0)} MiB; heapTotal ${mib(after.heapTotal).toFixed(0)} MiB; target 1 GiB at 1M EVSEs`,
  });
  if (!nearOneMillion) report(S, 'process RSS extrapolated to 1M EVSEs (linear in EVSEs)', extrapolated, 'MiB', { max: 1024 });
  report(S, 'heapUsed after load (after gc)', mib(after.heapUsed), 'MiB', {
    note: `catalogue share: +${mib(after.heapUsed - before.heapUsed).toFixed(0)} MiB heap (${((after.heapUsed - before.heapUsed) / Math.max(1, evses)).toFixed(0)} B per EVSE), +${mib(after.rss - before.rss).toFixed(0)} MiB RSS; external+arrayBuffers ${mib(after.external + after.arrayBuffers).toFixed(0)} MiB`,
  });
  // Two more reloads for a median of 3 (each builds a new snapshot beside the live one).
  const reloads = [firstReloadMs];
  for (let r = 1; r < RUNS; r++) {
    t0 = performance.now();
    await catalogue.reload();
    reloads.push(performance.now() - t0);
  }
  gc?.();
  const afterReloads = process.memoryUsage();
  report(S, `catalogue.reload() median of ${reloads.length}`, median(reloads) / 1000, 's', {
    max: 20 / perMillion,
    note: `runs ${reloads.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s`,
  });
  report(S, 'process RSS after the extra reloads (after gc)', afterReloads.rss / 2 ** 20, 'MiB', {
    note: `heapUsed ${(afterReloads.heapUsed / 2 ** 20).toFixed(0)} MiB`,
  });
  return { catalogue, operatorNames, evses };
}

function coreSection(world: World): void {
  const S = 'Core (in process)';
  const { catalogue } = world;
  const runs: Record<string, number[]> = {};
  const keep = (name: string, value: number) => {
    runs[name] ??= [];
    runs[name].push(value);
  };
  // Warm-up (JIT), not measured.
  for (let k = 0; k < 2_000; k++) catalogue.around(aroundCase(world).query, PAGE);
  for (let k = 0; k < 500; k++) {
    const t = tileCase(world, 0, 18, true);
    catalogue.tile(t.z, t.x, t.y, uncachedFilter(t.filter));
  }

  for (let run = 0; run < RUNS; run++) {
    log(`core queries, run ${run + 1} of ${RUNS}`);
    gc?.();
    const around: number[] = [];
    const aroundLarge: number[] = [];
    const aroundHits: number[] = [];
    for (let k = 0; k < SIZES.around; k++) {
      const c = aroundCase(world);
      let count = 0;
      const us = timeUs(() => {
        count = catalogue.around(c.query, PAGE).count;
      });
      around.push(us);
      aroundHits.push(count);
      if (c.query.distance >= 3_000) aroundLarge.push(us);
    }
    keep('around p50', percentile(around, 0.5));
    keep('around p99', percentile(around, 0.99));
    keep('around p99 (radius >= 3 km)', percentile(aroundLarge, 0.99));
    keep('around matches p50', percentile(aroundHits, 0.5));
    keep('around matches p99', percentile(aroundHits, 0.99));
    // Same kind of queries with an empty page: search, distances and sort only, no projection.
    const searchOnly: number[] = [];
    for (let k = 0; k < SIZES.around / 2; k++) {
      const c = aroundCase(world);
      searchOnly.push(timeUs(() => catalogue.around(c.query, { offset: 0, limit: 0 })));
    }
    keep('around without projection p50', percentile(searchOnly, 0.5));
    keep('around without projection p99', percentile(searchOnly, 0.99));
    const details: number[] = [];
    for (let k = 0; k < SIZES.around / 2; k++) {
      const id = world.stationIds[Math.floor(rng() * world.size)] as string;
      details.push(timeUs(() => catalogue.stationJson({ stationId: id })));
    }
    keep('details p50', percentile(details, 0.5));
    keep('details p99', percentile(details, 0.99));

    gc?.();
    const high: number[] = [];
    for (let k = 0; k < SIZES.tilesHigh; k++) {
      const t = tileCase(world, 7, 18, true);
      const filter = uncachedFilter(t.filter);
      high.push(timeUs(() => catalogue.tile(t.z, t.x, t.y, filter)));
    }
    keep('tile z>=7 computed p50', percentile(high, 0.5));
    keep('tile z>=7 computed p99', percentile(high, 0.99));

    gc?.();
    const lowComputed: number[] = [];
    for (let k = 0; k < SIZES.lowComputed; k++) {
      const t = tileCase(world, 0, 6, true);
      const filter = uncachedFilter(t.filter);
      lowComputed.push(timeUs(() => catalogue.tile(t.z, t.x, t.y, filter)));
    }
    keep('tile z<=6 computed p50', percentile(lowComputed, 0.5));
    keep('tile z<=6 computed p99', percentile(lowComputed, 0.99));
    keep(
      'tile z<=6 computed max',
      lowComputed.reduce((a, b) => Math.max(a, b), 0),
    );

    const lowCached: number[] = [];
    for (let k = 0; k < SIZES.lowCachedKeys; k++) {
      const t = tileCase(world, 0, 6, true);
      const filter = uncachedFilter(t.filter);
      catalogue.tile(t.z, t.x, t.y, filter); // computed: fills the cache (2 s TTL)
      for (let h = 0; h < 20; h++) lowCached.push(timeUs(() => catalogue.tile(t.z, t.x, t.y, filter)));
    }
    keep('tile z<=6 cached p50', percentile(lowCached, 0.5));
    keep('tile z<=6 cached p99', percentile(lowCached, 0.99));
  }

  const m = (name: string) => median(runs[name] ?? []);
  report(S, `around page 1 p50 (${SIZES.around} queries/run, radius 100 m..10 km, random filters)`, m('around p50'), 'us', { max: 50 });
  report(S, 'around page 1 p99', m('around p99'), 'us', { max: 250 });
  report(S, 'around page 1 p99, radius >= 3 km only', m('around p99 (radius >= 3 km)'), 'us');
  report(S, 'around matches per query p50 / p99', m('around matches p50'), '', { note: `p99 ${m('around matches p99')}` });
  report(S, 'around with an empty page (no projection) p50', m('around without projection p50'), 'us');
  report(S, 'around with an empty page (no projection) p99', m('around without projection p99'), 'us');
  report(S, 'details (stationJson: one station written as JSON) p50', m('details p50'), 'us', { note: `p99 ${m('details p99').toFixed(0)} us` });
  report(S, `tile z>=7 computed p50 (${SIZES.tilesHigh}/run, random filters)`, m('tile z>=7 computed p50'), 'us');
  report(S, 'tile z>=7 computed p99', m('tile z>=7 computed p99') / 1000, 'ms', { max: 2 });
  report(S, `tile z<=6 cached p99 (${SIZES.lowCachedKeys} tiles x 20 hits/run)`, m('tile z<=6 cached p99') / 1000, 'ms', { max: 1 });
  report(S, `tile z<=6 computed p50 (${SIZES.lowComputed}/run, cache bypassed by key)`, m('tile z<=6 computed p50') / 1000, 'ms');
  report(S, 'tile z<=6 computed p99', m('tile z<=6 computed p99') / 1000, 'ms', { max: 25 });
  report(S, 'tile z<=6 computed max', m('tile z<=6 computed max') / 1000, 'ms');
}

const PG_AROUND_SQL = `
WITH hits AS (
  SELECT l.station_id, l.country_code, l.party_id, l.id,
         floor(2 * 6371 * asin(sqrt(x.h)) * 10000 + 0.5) / 10 AS distance
    FROM ocpi_locations l
    LEFT JOIN cpo_parties p ON p.country_code = l.country_code AND p.party_id = l.party_id
    CROSS JOIN LATERAL (
      SELECT ($3::float8 * cos(l.latitude * $4::float8)) * (s.dlng * s.dlng) + s.dlat * s.dlat AS h
        FROM (SELECT sin((($2::float8 - l.longitude) * $4::float8) / 2) AS dlng, sin((($1::float8 - l.latitude) * $4::float8) / 2) AS dlat) s
    ) x
   WHERE point(l.longitude, l.latitude) <@ box(point($5::float8, $6::float8), point($7::float8, $8::float8))
     AND x.h <= $9::float8
     AND (cardinality($10::text[]) = 0 OR EXISTS (
           SELECT 1 FROM ocpi_evses e CROSS JOIN jsonb_array_elements(e.data->'connectors') c
            WHERE e.country_code = l.country_code AND e.party_id = l.party_id AND e.location_id = l.id
              AND e.status <> 'REMOVED' AND c->>'standard' = ANY($10::text[])))
     AND (NOT $11::boolean OR EXISTS (
           SELECT 1 FROM ocpi_evses e
            WHERE e.country_code = l.country_code AND e.party_id = l.party_id AND e.location_id = l.id AND e.status = 'AVAILABLE'))
     AND (NOT $12::boolean OR lower(coalesce(l.data->'operator'->>'name', p.name, l.country_code || '*' || l.party_id)) IN (SELECT lower(name) FROM partners))
     AND (cardinality($13::text[]) = 0 OR coalesce(l.data->'operator'->>'name', p.name, l.country_code || '*' || l.party_id) = ANY($13::text[]))
)
SELECT station_id::text AS station_id, distance, count(*) OVER () AS total
  FROM hits
 ORDER BY distance, country_code, party_id, id
 LIMIT ${PAGE.limit}`;

/** Parameters of PG_AROUND_SQL: the same floating-point steps as geokdbush (haversine, 6371 km) and the catalogue (distance to 0.1 m). */
function pgAroundParams(c: AroundCase): unknown[] {
  const rad = Math.PI / 180;
  const { latitude: lat, longitude: lon, distance } = c.query;
  const theta = distance / 1000 / 6371;
  const s = Math.sin(theta / 2);
  const dLat = (theta / rad) * 1.001 + 1e-9;
  const dLon = (Math.asin(Math.min(1, Math.sin(theta) / Math.cos(lat * rad))) / rad) * 1.001 + 1e-9;
  return [
    lat,
    lon,
    Math.cos(lat * rad),
    rad,
    lon - dLon,
    lat - dLat,
    lon + dLon,
    lat + dLat,
    s * s,
    c.filter.connectorTypes,
    c.filter.onlyAvailable,
    c.filter.onlyPartners,
    c.filter.operators,
  ];
}

async function postgresSection(world: World, db: Database): Promise<void> {
  const S = 'PostgreSQL comparison';
  // PostGIS from the distribution (e.g. postgresql-15-postgis-3) is built for another major version and is not on this server's path.
  const postgis = await db.query('CREATE EXTENSION IF NOT EXISTS postgis').then(
    () => 'available',
    (error: Error) => `not available (${error.message})`,
  );
  process.stdout.write(`${S}: PostGIS in the embedded server: ${postgis}\n`);
  log('PostgreSQL: GiST point index on ocpi_locations, ANALYZE');
  let t0 = performance.now();
  await db.query('CREATE INDEX bench_ocpi_locations_point ON ocpi_locations USING gist (point(longitude, latitude))');
  await db.query('ANALYZE ocpi_locations');
  await db.query('ANALYZE ocpi_evses');
  const indexMs = performance.now() - t0;
  const { rows: version } = await db.query<{ v: string }>('SELECT version() AS v');
  const variant = `embedded ${String(version[0]?.v).split(' on ')[0]}, no PostGIS: GiST index on point(longitude, latitude), box prefilter, exact haversine in SQL, same tie-break, LIMIT ${PAGE.limit} with count(*) OVER ()`;
  process.stdout.write(`${S}: variant: ${variant} (index built in ${(indexMs / 1000).toFixed(1)} s)\n`);

  const client = await db.pool.connect();
  try {
    const ours: number[] = [];
    const theirs: number[] = [];
    const ratios: number[] = [];
    const searchRatios: number[] = [];
    let compared = 0;
    let mismatches = 0;
    const examples: string[] = [];
    const total = SIZES.pgQueries + 100;
    for (let k = 0; k < total; k++) {
      const c = aroundCase(world);
      const params = pgAroundParams(c);
      let answer: ReturnType<Catalogue['around']> | undefined;
      let rows: { station_id: string; distance: number; total: number }[] = [];
      const runOurs = () => {
        t0 = performance.now();
        answer = world.catalogue.around(c.query, PAGE);
        return (performance.now() - t0) * 1000;
      };
      const runTheirs = async () => {
        t0 = performance.now();
        rows = (await client.query<{ station_id: string; distance: number; total: number }>({ name: 'bench_around', text: PG_AROUND_SQL, values: params }))
          .rows;
        return (performance.now() - t0) * 1000;
      };
      let usOurs: number;
      let usTheirs: number;
      if (k % 2 === 0) {
        usOurs = runOurs();
        usTheirs = await runTheirs();
      } else {
        usTheirs = await runTheirs();
        usOurs = runOurs();
      }
      const got = {
        count: (answer as ReturnType<Catalogue['around']>).count,
        results: (answer as ReturnType<Catalogue['around']>).results.map((r) => JSON.parse(r) as { id: string; distance: number }),
      };
      const same =
        got.count === (rows[0]?.total ?? 0) &&
        got.results.length === rows.length &&
        got.results.every((r, j) => r.id === rows[j]?.station_id && r.distance === Number(rows[j]?.distance));
      compared++;
      if (!same) {
        mismatches++;
        if (examples.length < 3) {
          examples.push(
            `${c.path}: ours count ${got.count} [${got.results
              .slice(0, 3)
              .map((r) => `${r.id.slice(0, 8)}@${r.distance}`)
              .join(' ')}], PostgreSQL count ${rows[0]?.total ?? 0} [${rows
              .slice(0, 3)
              .map((r) => `${r.station_id.slice(0, 8)}@${r.distance}`)
              .join(' ')}]`,
          );
        }
      }
      if (k >= 100) {
        ours.push(usOurs);
        theirs.push(usTheirs);
        ratios.push(usTheirs / usOurs);
        searchRatios.push(usTheirs / timeUs(() => world.catalogue.around(c.query, { offset: 0, limit: 0 })));
      }
    }
    report(S, `queries compared (ids, order, distances, count), ${SIZES.pgQueries} timed`, compared, '');
    report(S, 'answers that differ', mismatches, '', { max: 0 });
    for (const example of examples) process.stdout.write(`  differs: ${example}\n`);
    report(S, 'ours p50 (in process, page projected)', percentile(ours, 0.5), 'us');
    report(S, 'PostgreSQL p50 (loopback round trip, ids only)', percentile(theirs, 0.5), 'us');
    report(S, 'PostgreSQL p99', percentile(theirs, 0.99), 'us');
    report(S, 'speed ratio PostgreSQL / ours, median per query', median(ratios), 'x', { min: 20 });
    report(S, 'speed ratio, 10th percentile per query', percentile(ratios, 0.1), 'x');
    report(S, 'speed ratio against our search + count only (empty page), median per query', median(searchRatios), 'x');
    report(S, 'speed ratio of total time', theirs.reduce((a, b) => a + b, 0) / ours.reduce((a, b) => a + b, 0), 'x');
  } finally {
    client.release();
  }
}

interface HttpContext {
  app: HttpApp;
  baseUrl: string;
  token: string;
  /** reply.elapsedTime at onResponse (the response fully written), per route. */
  samples: Map<string, number[]>;
  /** reply.elapsedTime at onSend (handler and serialization done, before writing), per route. */
  sendSamples: Map<string, number[]>;
  recording: { on: boolean; errors: number };
}

/** Queries the clients service sends (credential checks when its cache entry expired), counted. */
const credentialQueries = { count: 0, inFlight: 0, maxInFlight: 0, totalMs: 0, maxMs: 0 };

function countingDatabase(db: Database, counter: typeof credentialQueries): Database {
  return {
    ...db,
    pool: db.pool,
    transaction: db.transaction,
    close: db.close,
    async query(text, values) {
      counter.count++;
      counter.inFlight++;
      counter.maxInFlight = Math.max(counter.maxInFlight, counter.inFlight);
      const t0 = performance.now();
      try {
        return await db.query(text, values);
      } finally {
        const ms = performance.now() - t0;
        counter.inFlight--;
        counter.totalMs += ms;
        counter.maxMs = Math.max(counter.maxMs, ms);
      }
    },
  } as Database;
}

async function startHttp(world: World, db: Database, tmp: string): Promise<HttpContext> {
  const config = loadConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    DATA_DIR: tmp,
    HOST: '127.0.0.1',
    PORT: '0',
    PUBLIC_BASE_URL: 'http://127.0.0.1',
    DEMO_CLIENT: 'false',
    // One client sends the whole load: unlimited, so the figures are the routes' (bench/rate-limit.ts measures the limiter).
    RATE_LIMIT_PER_MINUTE: '0',
  });
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const clients = createClientsService({
    db: countingDatabase(db, credentialQueries),
    clock: systemClock,
    jwt: config.jwt,
    keys: { algorithm: 'EdDSA', privateKey, verifyKey: publicKey },
    cacheTtlMs: config.authCacheTtlMs,
  });
  const { token } = await clients.createClient('bench');
  const app = await buildApp({ config, db, clock: systemClock, authenticate: clients.authenticate, catalogue: world.catalogue, logger: false });
  // Only in the benchmark: the baseline of every HTTP ratio.
  app.get('/bench/hello', async () => ({ hello: 'world' }));
  const samples = new Map<string, number[]>();
  const sendSamples = new Map<string, number[]>();
  const recording = { on: false, errors: 0 };
  const record = (into: Map<string, number[]>, route: string, ms: number) => {
    let list = into.get(route);
    if (!list) {
      list = [];
      into.set(route, list);
    }
    list.push(ms);
  };
  app.addHook('onSend', async (request, reply, payload) => {
    if (recording.on) record(sendSamples, request.routeOptions.url ?? 'unknown', reply.elapsedTime);
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    if (!recording.on) return;
    record(samples, request.routeOptions.url ?? 'unknown', reply.elapsedTime);
    if (reply.statusCode >= 300) recording.errors++;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return { app, baseUrl: `http://127.0.0.1:${address.port}`, token, samples, sendSamples, recording };
}

async function get(http: HttpContext, pathAndQuery: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${http.baseUrl}${pathAndQuery}`, { headers: { authorization: `Bearer ${http.token}` } });
  return { status: response.status, body: await response.json() };
}

interface ScenarioResult {
  client: LoadResult;
  server: Map<string, number[]>;
  serverSend: Map<string, number[]>;
  serverErrors: number;
  loopDelayP99Ms: number;
}

const pathFiles = new Map<string, string>();

async function scenario(http: HttpContext, tmp: string, name: string, paths: string[], auth: boolean, durationS: number, during?: () => Promise<void>) {
  let file = pathFiles.get(name);
  if (!file) {
    file = path.join(tmp, `paths-${name}.json`);
    await writeFile(file, JSON.stringify(paths));
    pathFiles.set(name, file);
  }
  http.samples.clear();
  http.sendSamples.clear();
  http.recording.errors = 0;
  http.recording.on = true;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const task = { role: 'load', baseUrl: http.baseUrl, pathsFile: file, connections: CONNECTIONS, durationS, ...(auth ? { token: http.token } : {}) };
  const [client] = await Promise.all([runWorker<LoadResult>(task), during?.()]);
  loop.disable();
  http.recording.on = false;
  const result: ScenarioResult = {
    client,
    server: new Map(http.samples),
    serverSend: new Map(http.sendSamples),
    serverErrors: http.recording.errors,
    loopDelayP99Ms: loop.percentile(99) / 1e6,
  };
  log(
    `  ${name}: ${Math.round(client.rps)} req/s, client p99 ${client.latencyP99} ms, non-2xx ${client.non2xx}, errors ${client.errors}, server-side ${[...result.server.entries()].map(([route, list]) => `${route.replace('/api/v1/stations', '')} p99 ${percentile(list, 0.99).toFixed(2)} ms`).join(', ')}`,
  );
  return result;
}

function allSamples(result: ScenarioResult): number[] {
  return [...result.server.values()].flat();
}

function allSendSamples(result: ScenarioResult): number[] {
  return [...result.serverSend.values()].flat();
}

async function httpSection(world: World, http: HttpContext, tmp: string, evseIds: string[]): Promise<void> {
  const S = 'HTTP';
  const detailsPaths = Array.from({ length: 4_000 }, (_, k) =>
    k % 2 === 0
      ? `/api/v1/stations/details/?type=station_id&id=${world.stationIds[Math.floor(rng() * world.size)]}`
      : `/api/v1/stations/details/?type=evse_id&id=${encodeURIComponent(pick(evseIds))}`,
  );
  const aroundPaths = Array.from({ length: 10_000 }, () => aroundCase(world).path);
  const tilePaths = Array.from({ length: 10_000 }, () => tileCase(world, 0, 18, rng() < 0.5).path);
  const scenarios = [
    { name: 'hello', paths: ['/bench/hello'], auth: false },
    { name: 'noop', paths: ['/api/v1/stations/partners/'], auth: true },
    { name: 'details', paths: detailsPaths, auth: true },
    { name: 'around', paths: aroundPaths, auth: true },
    { name: 'tiles', paths: tilePaths, auth: true },
  ];
  // Every kind of request answers 200 before anything is timed.
  for (const s of scenarios) {
    for (const p of s.paths.slice(0, 50)) {
      const response = await fetch(`${http.baseUrl}${p}`, { headers: s.auth ? { authorization: `Bearer ${http.token}` } : {} });
      if (response.status !== 200) throw new Error(`${p} answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    }
  }
  log('HTTP warm-up');
  const credentialsBefore = { ...credentialQueries };
  const httpStarted = performance.now();
  for (const s of scenarios) await scenario(http, tmp, s.name, s.paths, s.auth, SIZES.warmup);

  const results: Record<string, ScenarioResult[]> = {};
  for (let run = 0; run < RUNS; run++) {
    log(`HTTP run ${run + 1} of ${RUNS} (${DURATION_S} s per scenario, ${CONNECTIONS} connections)`);
    for (const s of scenarios) {
      results[s.name] ??= [];
      results[s.name]?.push(await scenario(http, tmp, s.name, s.paths, s.auth, DURATION_S));
    }
  }
  const of = (name: string) => results[name] ?? [];
  const ratio = (name: string) => median(of(name).map((r, run) => r.client.rps / (of('hello')[run] as ScenarioResult).client.rps));
  const rps = (name: string) => median(of(name).map((r) => r.client.rps));
  report(S, 'hello (plain, unauthenticated) throughput', rps('hello'), 'req/s');
  report(S, 'authenticated no-op (GET /stations/partners/) / hello', ratio('noop'), '', { min: 0.6, note: `${Math.round(rps('noop'))} req/s` });
  report(S, 'details / hello', ratio('details'), '', { min: 0.5, note: `${Math.round(rps('details'))} req/s` });
  report(S, 'around mix / hello', ratio('around'), '', { min: 0.15, note: `${Math.round(rps('around'))} req/s` });
  report(S, 'tile mix z0-18, with and without filters / hello', ratio('tiles'), '', { min: 0.1, note: `${Math.round(rps('tiles'))} req/s` });
  const serverP99 = (name: string) => median(of(name).map((r) => percentile(allSamples(r), 0.99)));
  const sendP = (name: string, p: number) => median(of(name).map((r) => percentile(allSendSamples(r), p)));
  const serverP50 = (name: string) => median(of(name).map((r) => percentile(allSamples(r), 0.5)));
  for (const name of ['around', 'details'] as const) {
    report(S, `server-side p99 ${name} (onResponse elapsedTime)`, serverP99(name), 'ms', {
      max: 1,
      note: `p50 ${serverP50(name).toFixed(3)} ms; until onSend (before writing): p50 ${sendP(name, 0.5).toFixed(3)} ms, p99 ${sendP(name, 0.99).toFixed(3)} ms`,
    });
  }
  report(S, 'server-side p99 tiles', serverP99('tiles'), 'ms', { note: `until onSend p99 ${sendP('tiles', 0.99).toFixed(3)} ms` });
  report(
    S,
    'server-side slowest tile request (all runs)',
    of('tiles').reduce((worst, r) => allSamples(r).reduce((a, b) => Math.max(a, b), worst), 0),
    'ms',
    {
      max: 25,
      note: `until onSend: ${of('tiles')
        .reduce((worst, r) => allSendSamples(r).reduce((a, b) => Math.max(a, b), worst), 0)
        .toFixed(1)} ms`,
    },
  );
  report(S, 'server-side p99 hello / no-op', serverP99('hello'), 'ms', { note: `no-op ${serverP99('noop').toFixed(3)} ms` });
  const clientP99 = (name: string) => median(of(name).map((r) => r.client.latencyP99));
  report(S, 'client-side p99 (autocannon) around / details / tiles', clientP99('around'), 'ms', {
    note: `details ${clientP99('details')} ms, tiles ${clientP99('tiles')} ms, hello ${clientP99('hello')} ms`,
  });
  const failures = Object.values(results)
    .flat()
    .reduce((n, r) => n + r.client.non2xx + r.client.errors + r.client.timeouts, 0);
  report(S, 'non-2xx answers, errors and timeouts (all runs)', failures, '', { max: 0 });
  const queries = credentialQueries.count - credentialsBefore.count;
  const seconds = (performance.now() - httpStarted) / 1000;
  report(S, 'credential-check queries to PostgreSQL (one token, 2 s cache)', queries / seconds, '/s', {
    note: `${queries} in ${seconds.toFixed(0)} s, up to ${credentialQueries.maxInFlight} at once, avg ${(credentialQueries.totalMs / Math.max(1, credentialQueries.count)).toFixed(1)} ms, max ${credentialQueries.maxMs.toFixed(1)} ms; one per 2 s would be 0.5/s`,
  });
}

async function concurrentMissSection(world: World, http: HttpContext): Promise<void> {
  const S = 'Tile cache';
  // A tile no request has asked for (max_price high enough to keep every station, but a key of its own).
  const i = Math.floor(rng() * world.size);
  const { x, y } = tileOf(world.longitudes[i] as number, world.latitudes[i] as number, 0);
  const maxPrice = 100_000 + Math.floor(rng() * 1e6) / 1000;
  const requests = 50;
  const computations = new Set<TileJson>();
  const original = world.catalogue.tile;
  let calls = 0;
  world.catalogue.tile = (z, tx, ty, filter) => {
    const features = original(z, tx, ty, filter);
    if (filter.maxPrice === maxPrice) {
      calls++;
      computations.add(features); // a cache hit returns the cached tile itself
    }
    return features;
  };
  try {
    const t0 = performance.now();
    const answers = await Promise.all(
      Array.from({ length: requests }, () => get(http, `/api/v1/stations/tile/?z=0&x=${x}&y=${y}&max_price=${maxPrice}`).then((r) => r.status)),
    );
    const ms = performance.now() - t0;
    report(S, `${requests} concurrent HTTP requests for one uncached z0 tile: computations`, computations.size, '', {
      max: 1,
      note: `${calls} calls, ${answers.filter((s) => s === 200).length} answered 200 in ${ms.toFixed(0)} ms; computing is synchronous, so every request after the first finds the cached tile`,
    });
  } finally {
    world.catalogue.tile = original;
  }
}

interface Probe {
  station_id: string;
  country_code: string;
  party_id: string;
  location_id: string;
  uid: string;
  evse_id: string;
  status: string;
  latitude: number;
  longitude: number;
}

async function visibilityProbe(world: World, http: HttpContext, db: Database, probe: Probe): Promise<{ aroundMs: number; detailsMs: number; tileMs: number }> {
  const ingestion = createIngestion({ db, clock: systemClock });
  // The deepest tile in which the station is drawn on its own.
  let tile = { z: 20, ...tileOf(probe.longitude, probe.latitude, 20) };
  for (let z = 14; z <= 20; z++) {
    const t = tileOf(probe.longitude, probe.latitude, z);
    const features = JSON.parse(`[${world.catalogue.tile(z, t.x, t.y, stationFilter(NO_FILTER)).json}]`) as { station_id?: string }[];
    if (features.some((f) => f.station_id === probe.station_id)) {
      tile = { z, ...t };
      break;
    }
  }
  const newStatus = probe.status === 'AVAILABLE' ? 'CHARGING' : 'AVAILABLE';
  const newStationStatus = newStatus === 'AVAILABLE' ? 'free' : 'busy';
  const seen = { around: Number.NaN, details: Number.NaN, tile: Number.NaN };
  const t0 = performance.now();
  const changed = await ingestion.updateEvseStatus({
    country_code: probe.country_code,
    party_id: probe.party_id,
    location_id: probe.location_id,
    uid: probe.uid,
    status: newStatus,
    last_updated: new Date().toISOString(),
  });
  if (!changed) throw new Error(`probe EVSE ${probe.uid} did not change`);
  probe.status = newStatus;
  type Body = {
    results?: { id: string; evses: { evse_id: string; status: string }[] }[];
    evses?: { evse_id: string; status: string }[];
    features?: { station_id?: string; properties: { status: string } }[];
  };
  const hasStatus = (evses: { evse_id: string; status: string }[] | undefined) =>
    (evses ?? []).some((e) => e.evse_id === probe.evse_id && e.status === newStatus);
  while ((Number.isNaN(seen.around) || Number.isNaN(seen.details) || Number.isNaN(seen.tile)) && performance.now() - t0 < 15_000) {
    await Promise.all([
      Number.isNaN(seen.details) &&
        get(http, `/api/v1/stations/details/?type=station_id&id=${probe.station_id}`).then(({ body }) => {
          if (hasStatus((body as Body).evses)) seen.details = performance.now() - t0;
        }),
      Number.isNaN(seen.around) &&
        get(http, `/api/v1/stations/around/?latitude=${probe.latitude}&longitude=${probe.longitude}&distance=5`).then(({ body }) => {
          if (hasStatus((body as Body).results?.find((r) => r.id === probe.station_id)?.evses)) seen.around = performance.now() - t0;
        }),
      Number.isNaN(seen.tile) &&
        get(http, `/api/v1/stations/tile/?z=${tile.z}&x=${tile.x}&y=${tile.y}`).then(({ body }) => {
          const feature = (body as Body).features?.find((f) => f.station_id === probe.station_id);
          if (feature?.properties.status === newStationStatus) seen.tile = performance.now() - t0;
        }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { aroundMs: seen.around, detailsMs: seen.details, tileMs: seen.tile };
}

/** Pseudo process id under which cpuByProcess() reports the CPU time of this process's exited (reaped) children. */
const EXITED_CHILDREN = -1;

/** CPU seconds (user + system) used so far by every process of this machine, by pid, with its command name (Linux /proc). */
async function cpuByProcess(): Promise<Map<number, { comm: string; seconds: number }>> {
  const ticks = 100; // USER_HZ: /proc reports clock ticks of 1/100 s on Linux
  const result = new Map<number, { comm: string; seconds: number }>();
  const own = await readFile('/proc/self/stat', 'utf8').catch(() => undefined);
  if (own) {
    // cutime and cstime (fields 16 and 17): CPU time of the children this process has waited for.
    const fields = own.slice(own.lastIndexOf(')') + 2).split(' ');
    result.set(EXITED_CHILDREN, { comm: '(exited children)', seconds: (Number(fields[13]) + Number(fields[14])) / ticks });
  }
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
    if (!stat) continue;
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15 (indexes 11 and 12 here).
    result.set(Number(entry), { comm: stat.slice(stat.indexOf('(') + 1, close), seconds: (Number(fields[11]) + Number(fields[12])) / ticks });
  }
  return result;
}

/** Cores used per kind of process between two cpuByProcess() readings `seconds` apart. */
function coresUsed(
  before: Map<number, { comm: string; seconds: number }>,
  after: Map<number, { comm: string; seconds: number }>,
  seconds: number,
  kindOf: (pid: number, comm: string) => string,
): Map<string, number> {
  const used = new Map<string, number>();
  for (const [pid, now] of after) {
    const spent = now.seconds - (before.get(pid)?.seconds ?? 0);
    if (spent <= 0) continue;
    const kind = kindOf(pid, now.comm);
    used.set(kind, (used.get(kind) ?? 0) + spent / seconds);
  }
  return used;
}

async function churnSection(world: World, http: HttpContext, db: Database, tmp: string, url: string, evseIds: string[], notifications: { count: number }) {
  const S = 'Status churn';
  const { rows: probes } = await db.query<Probe>(
    `SELECT l.station_id::text AS station_id, e.country_code, e.party_id, e.location_id, e.uid, e.evse_id, e.status, l.latitude, l.longitude
       FROM ocpi_evses e
       JOIN ocpi_locations l ON l.country_code = e.country_code AND l.party_id = e.party_id AND l.id = e.location_id
      WHERE (e.country_code, e.party_id, e.location_id) IN (SELECT country_code, party_id, location_id FROM ocpi_evses GROUP BY 1, 2, 3 HAVING count(*) = 1)
        AND e.evse_id IS NOT NULL AND e.status <> 'REMOVED'
      ORDER BY md5(e.uid || e.location_id) LIMIT 20`,
  );
  const mixPaths: string[] = [];
  for (let k = 0; k < 10_000; k++) {
    const r = rng();
    if (r < 0.4) mixPaths.push(aroundCase(world).path);
    else if (r < 0.7) mixPaths.push(`/api/v1/stations/details/?type=evse_id&id=${encodeURIComponent(pick(evseIds))}`);
    else mixPaths.push(tileCase(world, 0, 18, rng() < 0.5).path);
  }
  const quiet: ScenarioResult[] = [];
  const busy: ScenarioResult[] = [];
  const churns: ChurnResult[] = [];
  const visibility: { aroundMs: number; detailsMs: number; tileMs: number }[] = [];
  const received: number[] = [];
  const cpuQuiet: Map<string, number>[] = [];
  const cpuBusy: Map<string, number>[] = [];
  const waits = new Map<string, number>();
  let waitSamples = 0;
  await scenario(http, tmp, 'mix', mixPaths, true, SIZES.warmup);
  for (let run = 0; run < RUNS; run++) {
    log(`churn run ${run + 1} of ${RUNS}: quiet mix, then the same mix with 1,000 status changes/s`);
    let cpuBefore = await cpuByProcess();
    let cpuAt = performance.now();
    quiet.push(await scenario(http, tmp, 'mix', mixPaths, true, DURATION_S));
    // autocannon runs in a child process that has exited (and been waited for) when the scenario ends.
    const kindQuiet = (pid: number, comm: string) =>
      pid === process.pid ? 'server' : comm === 'postgres' ? 'PostgreSQL' : pid === EXITED_CHILDREN ? 'autocannon' : 'other';
    cpuQuiet.push(coresUsed(cpuBefore, await cpuByProcess(), (performance.now() - cpuAt) / 1000, kindQuiet));
    const churner = startWorker({ role: 'churn', url, rate: 1_000 });
    await churner.next(); // ready: EVSEs chosen
    const notifiedBefore = notifications.count;
    const startedAt = performance.now();
    cpuBefore = await cpuByProcess();
    cpuAt = performance.now();
    churner.child.send({ type: 'start' });
    // What the writer's PostgreSQL sessions wait on (sampled every 50 ms).
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await db.query<{ w: string; n: number }>(
          `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU (' || state || ')') AS w, count(*) AS n
             FROM pg_stat_activity WHERE application_name = 'bench-churn' AND state <> 'idle' GROUP BY 1`,
        );
        for (const { w, n } of rows) waits.set(w, (waits.get(w) ?? 0) + n);
        waitSamples++;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    busy.push(
      await scenario(http, tmp, 'mix', mixPaths, true, DURATION_S, async () => {
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, DURATION_S * 200)));
        const probe = probes[run % probes.length];
        if (probe) visibility.push(await visibilityProbe(world, http, db, probe));
      }),
    );
    sampling = false;
    await sampler;
    const writerPid = churner.child.pid;
    cpuBusy.push(
      coresUsed(cpuBefore, await cpuByProcess(), (performance.now() - cpuAt) / 1000, (pid, comm) =>
        pid === writerPid ? 'churn writer' : kindQuiet(pid, comm),
      ),
    );
    churner.child.send({ type: 'stop' });
    churns.push((await churner.next()).result as ChurnResult);
    await churner.exit; // its CPU time is counted now, not in the next quiet run
    received.push((notifications.count - notifiedBefore) / ((performance.now() - startedAt) / 1000));
  }
  const ratioOf = (pick99: (r: ScenarioResult) => number) => median(busy.map((r, run) => pick99(r) / pick99(quiet[run] as ScenarioResult)));
  report(S, 'status changes sent through updateEvseStatus (median of runs)', median(churns.map((c) => c.achievedRate)), '/s', {
    min: 950,
    note: `target 1,000/s; update p50 ${median(churns.map((c) => c.updateP50Ms)).toFixed(1)} ms, p99 ${median(churns.map((c) => c.updateP99Ms)).toFixed(1)} ms; failed ${churns.reduce((n, c) => n + c.failed, 0)}`,
  });
  report(S, 'notifications received by the server process', median(received), '/s');
  report(S, "writer's PostgreSQL sessions busy (average per sample)", [...waits.values()].reduce((a, b) => a + b, 0) / Math.max(1, waitSamples), '', {
    note: `waiting on: ${[...waits.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([w, n]) => `${w} ${(n / Math.max(1, waitSamples)).toFixed(1)}`)
      .join(', ')}`,
  });
  // Where the machine's cores go (the churn's writer and PostgreSQL take them from the server and autocannon).
  const cores = (runs: Map<string, number>[]) =>
    ['server', 'autocannon', 'churn writer', 'PostgreSQL', 'other']
      .map((kind) => [kind, median(runs.map((r) => r.get(kind) ?? 0))] as const)
      .filter(([, n]) => n >= 0.005)
      .map(([kind, n]) => `${kind} ${n.toFixed(2)}`)
      .join(', ');
  const total = (runs: Map<string, number>[]) => median(runs.map((r) => [...r.values()].reduce((a, b) => a + b, 0)));
  report(S, 'cores used during the quiet mix', total(cpuQuiet), 'cores', { note: cores(cpuQuiet) });
  report(S, 'cores used during the mix under churn', total(cpuBusy), 'cores', { note: cores(cpuBusy) });
  report(S, 'mix throughput quiet', median(quiet.map((r) => r.client.rps)), 'req/s', {
    note: `under churn ${Math.round(median(busy.map((r) => r.client.rps)))} req/s`,
  });
  report(
    S,
    'client-side p99 under churn / quiet',
    ratioOf((r) => r.client.latencyP99),
    'x',
    {
      max: 2,
      note: `quiet ${median(quiet.map((r) => r.client.latencyP99))} ms, churn ${median(busy.map((r) => r.client.latencyP99))} ms`,
    },
  );
  report(
    S,
    'server-side p99 under churn / quiet',
    ratioOf((r) => percentile(allSamples(r), 0.99)),
    'x',
    {
      max: 2,
      note: `quiet ${median(quiet.map((r) => percentile(allSamples(r), 0.99))).toFixed(2)} ms, churn ${median(busy.map((r) => percentile(allSamples(r), 0.99))).toFixed(2)} ms`,
    },
  );
  report(S, 'event-loop delay p99 quiet / churn', median(quiet.map((r) => r.loopDelayP99Ms)), 'ms', {
    note: `churn ${median(busy.map((r) => r.loopDelayP99Ms)).toFixed(1)} ms`,
  });
  const worst = (key: 'aroundMs' | 'detailsMs' | 'tileMs') => Math.max(...visibility.map((v) => (Number.isNaN(v[key]) ? Number.POSITIVE_INFINITY : v[key])));
  const all = (key: 'aroundMs' | 'detailsMs' | 'tileMs') => visibility.map((v) => v[key].toFixed(0)).join(', ');
  report(S, `change visible in details (worst of ${visibility.length}, under churn)`, worst('detailsMs'), 'ms', {
    max: 1_000,
    note: `each: ${all('detailsMs')} ms`,
  });
  report(S, 'change visible in around (worst, under churn)', worst('aroundMs'), 'ms', { max: 1_000, note: `each: ${all('aroundMs')} ms` });
  report(S, 'change visible in tiles (worst, under churn)', worst('tileMs'), 'ms', { max: 5_000, note: `each: ${all('tileMs')} ms` });
  const failures = [...quiet, ...busy].reduce((n, r) => n + r.client.non2xx + r.client.errors + r.client.timeouts, 0);
  report(S, 'non-2xx answers, errors and timeouts (all runs)', failures, '', { max: 0 });
}

// ---------------------------------------------------------------------------
// Main

function printSummary(title: string): void {
  process.stdout.write(`\n## ${title}\n\n| Section | Figure | Measured | Target | Result |\n| --- | --- | ---: | --- | --- |\n`);
  for (const f of figures) {
    process.stdout.write(
      `| ${f.section} | ${f.name}${f.note ? ` (${f.note})` : ''} | ${fmt(f.value, f.unit)} | ${f.target ?? ''} | ${f.pass === undefined ? '' : f.pass ? 'PASS' : 'FAIL'} |\n`,
    );
  }
  const checked = figures.filter((f) => f.pass !== undefined);
  process.stdout.write(`\n${checked.filter((f) => f.pass).length} of ${checked.length} targets met.\n`);
}

async function with3m(): Promise<void> {
  log('--with-3m: load and core queries at about 3,000,000 EVSEs in a separate process and database');
  const out = path.join(os.tmpdir(), `charging-access-bench-3m-${process.pid}.json`);
  const child = fork(
    new URL(import.meta.url).pathname,
    [
      '--core-only',
      '--locations',
      String(argv['3m-locations']),
      '--runs',
      String(RUNS),
      '--seed',
      String(SEED),
      '--json-out',
      out,
      ...(QUICK ? ['--quick'] : []),
    ],
    { execArgv: ['--expose-gc', '--max-old-space-size=8192'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  if (code !== 0) throw new Error(`the 3M run exited with code ${code}`);
  const theirs = JSON.parse(await readFile(out, 'utf8')) as { figures: Figure[] };
  await rm(out, { force: true });
  for (const f of theirs.figures) figures.push({ ...f, section: `3M EVSEs ${f.section}` });
}

async function main(): Promise<void> {
  process.stdout.write(
    `Station benchmark: ${LOCATIONS} locations, seed ${SEED}, ${RUNS} runs, ${DURATION_S} s per HTTP scenario, ${CONNECTIONS} connections; ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), Node ${process.version}, ${new Date().toISOString()}\n`,
  );
  const { tmp, embedded, db } = await setUpDatabase();
  let http: HttpContext | undefined;
  let listener: { stop(): Promise<void> } | undefined;
  const cleanup = async () => {
    await http?.app.close().catch(() => {});
    await listener?.stop().catch(() => {});
    await db.close().catch(() => {});
    await embedded.stop().catch((error: Error) => log(`stopping PostgreSQL failed: ${error.message}`));
    await rm(tmp, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    void cleanup().finally(() => process.exit(130));
  });
  try {
    const { catalogue, operatorNames } = await loadSection(db, embedded.url);
    const notifications = { count: 0 };
    const facts = catalogue.inspect();
    const world: World = {
      catalogue,
      size: facts.size,
      longitudes: facts.longitudes,
      latitudes: facts.latitudes,
      stationIds: facts.stationIds,
      operatorNames,
    };
    coreSection(world);
    if (!CORE_ONLY) {
      // As src/main.ts: every change announced on the channel reaches catalogue.onChange. Started
      // after the core section, whose long synchronous loops would time out its connection (and a
      // reconnect reloads the whole catalogue).
      listener = listen(
        db,
        CATALOGUE_CHANNEL,
        (payload) => {
          notifications.count++;
          if (payload === undefined) log('catalogue change listener reconnected: the catalogue reloads');
          catalogue.onChange(payload).catch((error: Error) => log(`updating the station catalogue failed: ${error.message}`));
        },
        (error) => log(`catalogue change listener: ${error.message}`),
      );
      await postgresSection(world, db);
      const { rows } = await db.query<{ evse_id: string }>(
        "SELECT evse_id FROM ocpi_evses WHERE evse_id IS NOT NULL AND status <> 'REMOVED' ORDER BY md5(uid || location_id) LIMIT 20000",
      );
      const evseIds = rows.map((r) => r.evse_id);
      http = await startHttp(world, db, tmp);
      await httpSection(world, http, tmp, evseIds);
      await concurrentMissSection(world, http);
      await churnSection(world, http, db, tmp, embedded.url, evseIds, notifications);
    }
  } finally {
    await cleanup();
  }
  const defaultMinutes = (performance.now() - benchStarted) / 60_000;
  log(`the ${LOCATIONS}-location run took ${defaultMinutes.toFixed(1)} min`);
  if (argv['with-3m']) await with3m();
  if (argv['json-out']) await writeFile(argv['json-out'], JSON.stringify({ locations: LOCATIONS, figures }, null, 2));
  if (process.send) return; // the 3M check run by a parent: its figures go back in the JSON file
  printSummary(`Figures (${LOCATIONS} locations${argv['with-3m'] ? ' and the 3M-EVSE check' : ''})`);
  process.stdout.write(
    `\nTotal time: ${((performance.now() - benchStarted) / 60_000).toFixed(1)} min${argv['with-3m'] ? ` (${defaultMinutes.toFixed(1)} min before the 3M check)` : ''}\n`,
  );
}

await main();
process.exit(0);
