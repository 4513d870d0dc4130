// Rate-limit benchmark: `npm run bench:rate-limit [-- options]` (see bench/README.md).
//
// What the per-client rate limiter costs: the same app, the same route, two
// API clients, one limited far above the load (every request is counted, the
// RateLimit-* headers are written) and one unlimited (0: the limiter is
// skipped). autocannon (a child process, bench/worker.ts) loads each in
// alternating rounds; the figure is the median over rounds of the limited
// client's throughput divided by the unlimited one's in the same round pair.
// Two routes: a station query (answered from memory, so the limiter's share
// is the largest) and a users page (one PostgreSQL query).
import { fork } from 'node:child_process';
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
import { migrate } from '../src/platform/migrations.ts';
import type { LoadResult } from './worker.ts';

const { values: argv } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    help: { type: 'boolean', default: false },
  },
});
if (argv.help) {
  process.stdout.write('npm run bench:rate-limit -- [--rounds 5] [--duration 5 (seconds per client and round)] [--connections 50]\n');
  process.exit(0);
}
const ROUNDS = Number(argv.rounds);
const DURATION_S = Number(argv.duration);
const CONNECTIONS = Number(argv.connections);
const FAR_ABOVE_LOAD = 1_000_000_000; // requests per minute: never reached, so every request is admitted and counted

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

function load(baseUrl: string, pathsFile: string, token: string): Promise<LoadResult> {
  const child = fork(new URL('./worker.ts', import.meta.url).pathname, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let result: LoadResult | undefined;
    child.on('message', (message: { type: string; result: LoadResult }) => {
      result = message.result;
    });
    child.once('exit', (code) => (result ? resolve(result) : reject(new Error(`autocannon worker exited with ${code}`))));
    child.send({ role: 'load', baseUrl, pathsFile, token, connections: CONNECTIONS, durationS: DURATION_S });
  });
}

const tmp = await mkdtemp(path.join(os.tmpdir(), 'charging-access-bench-rl-'));
await chmod(tmp, 0o755); // the embedded server's non-root user must reach it
const embedded = await startEmbeddedPostgres({ dataDir: tmp, role: 'cli', log: () => {} });
const db = createDatabase(embedded.url, { max: 20, applicationName: 'bench-rate-limit' });
try {
  await migrate(db);
  const config = loadConfig({ NODE_ENV: 'development', LOG_LEVEL: 'silent', DATA_DIR: tmp, HOST: '127.0.0.1', PORT: '0', DEMO_CLIENT: 'false' });
  const { generateKeyPairSync } = await import('node:crypto');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const clients = createClientsService({
    db,
    clock: systemClock,
    jwt: config.jwt,
    keys: { algorithm: 'EdDSA', privateKey, verifyKey: publicKey },
    cacheTtlMs: config.authCacheTtlMs,
  });
  const limited = await clients.createClient('limited far above the load');
  await clients.setRateLimit(limited.clientId, FAR_ABOVE_LOAD);
  const unlimited = await clients.createClient('unlimited');
  await clients.setRateLimit(unlimited.clientId, 0);
  const catalogue = createCatalogue({ db, clock: systemClock });
  await catalogue.reload();
  const app = await buildApp({ config, db, clock: systemClock, authenticate: clients.authenticate, catalogue, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  const baseUrl = `http://127.0.0.1:${address.port}`;

  // Both clients answer 200, and only the limited one carries the headers.
  for (const [name, token, expected] of [
    ['limited', limited.token, String(FAR_ABOVE_LOAD)],
    ['unlimited', unlimited.token, null],
  ] as const) {
    const response = await fetch(`${baseUrl}/api/v1/users/?page_size=1`, { headers: { authorization: `Bearer ${token}` } });
    if (response.status !== 200 || response.headers.get('ratelimit-limit') !== expected) throw new Error(`${name}: ${response.status}`);
  }

  const routes = [
    { name: 'station query (from memory)', path: '/api/v1/stations/around/?latitude=52.52&longitude=13.40&distance=2000' },
    { name: 'users page (one PostgreSQL query)', path: '/api/v1/users/?page_size=1' },
  ];
  log(`${ROUNDS} rounds x 2 clients x ${DURATION_S} s per route, ${CONNECTIONS} connections, ${os.cpus().length} cores`);
  const lines: string[] = [];
  for (const route of routes) {
    const pathsFile = path.join(tmp, 'paths.json');
    await writeFile(pathsFile, JSON.stringify([route.path]));
    await load(baseUrl, pathsFile, unlimited.token); // warm-up (JIT, pools)
    const on: number[] = [];
    const off: number[] = [];
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which client goes first, so a drift of the machine does not favour one.
      const order = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      const rps: Record<'on' | 'off', number> = { on: 0, off: 0 };
      // The serving process's CPU time per request (this process serves; autocannon is a child): less sensitive
      // than throughput to the load generator sharing the two cores and to other load on the machine.
      const cpu: Record<'on' | 'off', number> = { on: 0, off: 0 };
      for (const mode of order) {
        const before = process.cpuUsage();
        const result = await load(baseUrl, pathsFile, mode === 'on' ? limited.token : unlimited.token);
        const used = process.cpuUsage(before);
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${route.name} ${mode}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        rps[mode] = result.rps;
        cpu[mode] = (used.user + used.system) / result.requests;
      }
      on.push(rps.on);
      off.push(rps.off);
      ratios.push(rps.on / rps.off);
      cpuRatios.push(cpu.on / cpu.off);
      log(
        `${route.name} round ${round + 1}: limited ${Math.round(rps.on)} req/s, unlimited ${Math.round(rps.off)} req/s, ratio ${(rps.on / rps.off).toFixed(3)}; ` +
          `server CPU per request ${cpu.on.toFixed(1)} / ${cpu.off.toFixed(1)} µs (${(cpu.on / cpu.off).toFixed(3)})`,
      );
    }
    const ratio = median(ratios);
    const verdict = ratio >= 0.95 ? 'PASS' : 'FAIL';
    lines.push(
      `${route.name.padEnd(36)} limited ${String(Math.round(median(on))).padStart(6)} req/s  unlimited ${String(Math.round(median(off))).padStart(6)} req/s  ` +
        `ratio ${ratio.toFixed(3)} (cost ${((1 - ratio) * 100).toFixed(1)}%, target <= 5%) ${verdict}; server CPU per request limited/unlimited ${median(cpuRatios).toFixed(3)}`,
    );
  }
  const { rows } = await db.query<{ windows: number; taken: number }>(
    'SELECT count(*)::int AS windows, coalesce(sum(taken), 0)::bigint AS taken FROM rate_limit_windows',
  );
  process.stdout.write(`\nRate limiting, medians of ${ROUNDS} rounds (ratio: limited / unlimited in the same round)\n${lines.join('\n')}\n`);
  process.stdout.write(`allowance rows in PostgreSQL: ${rows[0]?.windows}, requests handed out: ${rows[0]?.taken}\n`);
  await app.close();
} finally {
  await db.close();
  await embedded.stop();
  await rm(tmp, { recursive: true, force: true });
}
