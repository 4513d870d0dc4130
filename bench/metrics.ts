// What recording Prometheus metrics costs on cheap authenticated GETs.
//
// One process serves two apps built alike on one embedded PostgreSQL: one with
// metrics (requests counted and timed, database errors watched, the listener
// scraped every second: far more often than Prometheus would), one without.
// autocannon (a child process, bench/worker.ts) loads them in turn, alternating
// off/on each round so drift (other load on the machine, JIT, caches) falls on
// both; each figure is the median of the rounds, and the ratio on/off is taken
// per round and its median printed.
//
//   npm run bench:metrics -- [--rounds N] [--duration S] [--connections N] [--no-scrape]

import { fork } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.ts';
import { createClientsService } from '../src/modules/clients/service.ts';
import { createCatalogue } from '../src/modules/stations/catalogue.ts';
import { systemClock } from '../src/platform/clock.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createDatabase } from '../src/platform/db.ts';
import { startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';
import { queueFigures } from '../src/platform/jobs.ts';
import { createMetrics, listenMetrics } from '../src/platform/metrics.ts';
import { migrate } from '../src/platform/migrations.ts';
import type { LoadResult } from './worker.ts';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '20' },
    'no-scrape': { type: 'boolean', default: false },
  },
});
const rounds = Number(args.rounds);
const durationS = Number(args.duration);
const connections = Number(args.connections);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

function load(baseUrl: string, pathsFile: string, token: string): Promise<LoadResult> {
  const child = fork(new URL('./worker.ts', import.meta.url).pathname, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { type: string; result: LoadResult }) => {
      child.kill();
      resolve(message.result);
    });
    child.once('exit', (code) => (code ? reject(new Error(`load worker exited with ${code}`)) : undefined));
    child.send({ role: 'load', baseUrl, pathsFile, token, connections, durationS });
  });
}

const tmp = await mkdtemp(path.join(os.tmpdir(), 'charging-access-bench-metrics-'));
await chmod(tmp, 0o755); // the embedded server's non-root user must reach it
const embedded = await startEmbeddedPostgres({ dataDir: tmp, role: 'cli', log: () => {} });
try {
  const metrics = createMetrics();
  const plainDb = createDatabase(embedded.url, { max: 20, applicationName: 'bench-off' });
  const measuredDb = createDatabase(embedded.url, { max: 20, applicationName: 'bench-on', onError: metrics.databaseError });
  await migrate(plainDb);
  const config = loadConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    DATA_DIR: tmp,
    HOST: '127.0.0.1',
    PORT: '0',
    PUBLIC_BASE_URL: 'http://127.0.0.1',
    DEMO_CLIENT: 'false',
  });
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keys = { algorithm: 'EdDSA' as const, privateKey, verifyKey: publicKey };
  const clientsOff = createClientsService({ db: plainDb, clock: systemClock, jwt: config.jwt, keys, cacheTtlMs: config.authCacheTtlMs });
  const clientsOn = createClientsService({ db: measuredDb, clock: systemClock, jwt: config.jwt, keys, cacheTtlMs: config.authCacheTtlMs });
  const { token } = await clientsOff.createClient('bench');
  const catalogue = createCatalogue({ db: plainDb, clock: systemClock });
  await catalogue.reload();

  const off = await buildApp({ config, db: plainDb, clock: systemClock, authenticate: clientsOff.authenticate, catalogue, logger: false });
  const on = await buildApp({ config, db: measuredDb, clock: systemClock, authenticate: clientsOn.authenticate, catalogue, logger: false, metrics });
  metrics.watch({
    pool: measuredDb.pool,
    jobQueues: () => queueFigures(measuredDb, systemClock.now()),
    catalogue: () => ({ stations: catalogue.size, evses: catalogue.evseCount }),
  });
  const listener = await listenMetrics(metrics, { host: '127.0.0.1', port: 0 });
  const urls = {
    off: await off.listen({ host: '127.0.0.1', port: 0 }),
    on: await on.listen({ host: '127.0.0.1', port: 0 }),
  };

  const scenarios = {
    'users list (PostgreSQL)': '/api/v1/users/',
    'stations around (in memory)': '/api/v1/stations/around/?latitude=52.52&longitude=13.405&distance=1000',
  };
  process.stdout.write(
    `metrics cost: ${rounds} rounds x ${durationS} s per app and scenario, ${connections} connections, ${os.cpus().length} CPUs; ${args['no-scrape'] ? 'no scrapes' : 'scrape every 1 s while "on" runs'}\n`,
  );
  const rows: string[] = [];
  for (const [name, url] of Object.entries(scenarios)) {
    const pathsFile = path.join(tmp, 'paths.json');
    await writeFile(pathsFile, JSON.stringify([url]));
    const results: Record<'off' | 'on', LoadResult[]> = { off: [], on: [] };
    const cpuPerRequest: Record<'off' | 'on', number[]> = { off: [], on: [] };
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so neither always runs on a warmer machine.
      const order: ('off' | 'on')[] = round % 2 ? ['on', 'off'] : ['off', 'on'];
      for (const mode of order) {
        let scrapes = 0;
        const scraper =
          mode === 'on' && !args['no-scrape']
            ? setInterval(() => {
                void fetch(listener.url)
                  .then((r) => r.text())
                  .then(() => scrapes++);
              }, 1_000)
            : undefined;
        const cpu = process.cpuUsage();
        const result = await load(urls[mode], pathsFile, token);
        const used = process.cpuUsage(cpu);
        clearInterval(scraper);
        // CPU of this (the serving) process per request: less sensitive than throughput to other load on the machine.
        cpuPerRequest[mode].push((used.user + used.system) / result.requests);
        if (result.non2xx || result.errors) throw new Error(`${name} ${mode}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        results[mode].push(result);
        process.stdout.write(
          `  ${name} round ${round + 1} ${mode.padEnd(3)}: ${Math.round(result.rps)} req/s, p50 ${result.latencyP50} ms, p99 ${result.latencyP99} ms, ${(cpuPerRequest[mode].at(-1) as number).toFixed(1)} µs CPU/request${mode === 'on' ? `, ${scrapes} scrapes` : ''}\n`,
        );
      }
    }
    const ratio = median(results.on.map((r, i) => r.rps / (results.off[i] as LoadResult).rps));
    const rps = (mode: 'off' | 'on') => Math.round(median(results[mode].map((r) => r.rps)));
    const p99 = (mode: 'off' | 'on') => median(results[mode].map((r) => r.latencyP99));
    const cpu = (mode: 'off' | 'on') => median(cpuPerRequest[mode]);
    rows.push(
      `| ${name} | ${rps('off')} | ${rps('on')} | ${ratio.toFixed(3)} | ${p99('off')} | ${p99('on')} | ${cpu('off').toFixed(1)} | ${cpu('on').toFixed(1)} | ${(cpu('on') / cpu('off')).toFixed(3)} |`,
    );
  }
  // The recording itself, without HTTP: what one answered request adds (a counter and a histogram, one label set).
  const calls = 1_000_000;
  const started = performance.now();
  for (let i = 0; i < calls; i++) metrics.httpRequest('/api/v1/users/', 'GET', 200, 0.002);
  const perCallUs = ((performance.now() - started) * 1000) / calls;
  const scrapeStarted = performance.now();
  for (let i = 0; i < 20; i++) await metrics.registry.metrics();
  const scrapeMs = (performance.now() - scrapeStarted) / 20;
  process.stdout.write(
    `\nrecording one request: ${perCallUs.toFixed(2)} µs (mean of ${calls}); one scrape (registry to text, database sources included): ${scrapeMs.toFixed(1)} ms\n`,
  );
  process.stdout.write(
    `\n| GET | req/s off | req/s on | on/off (median of rounds) | p99 ms off | p99 ms on | CPU µs/req off | CPU µs/req on | CPU on/off |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n${rows.join('\n')}\n`,
  );
  await listener.close();
  await off.close();
  await on.close();
  await plainDb.close();
  await measuredDb.close();
} finally {
  await embedded.stop();
  await rm(tmp, { recursive: true, force: true });
}
