// Webhook delivery: latency from an event's commit to its arrival at a
// receiver, and the API's p99 while the receiver is up and while it is down.
// The real service process (`node src/main.ts`, development mode) on a
// throw-away embedded PostgreSQL delivers; this process records events with
// recordEvent, each in its own transaction, at the rate of 100 concurrent
// charging sessions (about 30 events/s, spread over 100 sessions), runs the
// receiver (a plain HTTP server on loopback that checks every signature with
// the official standardwebhooks library), and loads a list endpoint at a
// steady rate with autocannon in a child process (bench/worker.ts).
// Phases alternate up / down (the receiver accepts connections and never
// answers: every attempt waits for WEBHOOK_TIMEOUT_MS), each on a fresh endpoint.
//
//   npm run bench:webhooks                                  # 5 s warm-up, 2 runs of up + down, 20 s each, about 2 min
//   npm run bench:webhooks -- --runs 1 --duration 10 --rate 30 --api-rate 200

import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { recordEvent } from '../src/modules/events/outbox.ts';
import { createDatabase, type Database } from '../src/platform/db.ts';
import { startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';
import { type ServiceProcess, startServiceProcess } from './service-process.ts';
import type { LoadResult } from './worker.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => process.stdout.write(`${line}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
}

const { values: argv } = parseArgs({
  options: {
    runs: { type: 'string', default: '2' },
    duration: { type: 'string', default: '20' },
    rate: { type: 'string', default: '30' },
    'api-rate': { type: 'string', default: '200' },
    sessions: { type: 'string', default: '100' },
  },
});
const RUNS = Number(argv.runs);
const DURATION_S = Number(argv.duration);
const EVENT_RATE = Number(argv.rate);
const API_RATE = Number(argv['api-rate']);
const SESSIONS = Number(argv.sessions);

type Service = ServiceProcess & { token: string };

async function startService(dataDir: string, databaseUrl: string): Promise<Service> {
  const service = await startServiceProcess({
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    DEMO_CLIENT: 'true',
    PAYMENTS_SANDBOX: 'true',
    CPO_SANDBOX: 'false',
    STATIONS_DEFAULT_LOCATIONS: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    METRICS_PORT: 'off',
    LOG_LEVEL: 'warn',
  });
  const token = (await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim();
  return { ...service, token };
}

/** The receiver: arrival time per webhook-id, signatures checked; `down` makes it hold every request unanswered. */
interface Receiver {
  url: string;
  arrivals: Map<string, number>;
  duplicates: number;
  badSignatures: number;
  down: boolean;
  secret: string;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const receiver: Omit<Receiver, 'url' | 'close'> = { arrivals: new Map(), duplicates: 0, badSignatures: 0, down: false, secret: '' };
  const server: Server = createServer((req, res) => {
    if (receiver.down) return; // never answered: the attempt times out
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const id = String(req.headers['webhook-id']);
      try {
        new Webhook(receiver.secret).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
      } catch {
        receiver.badSignatures++;
      }
      if (receiver.arrivals.has(id)) receiver.duplicates++;
      else receiver.arrivals.set(id, at);
      res.writeHead(204).end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 75_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

function apiLoad(baseUrl: string, pathsFile: string, token: string, durationS: number): Promise<LoadResult> {
  const child = fork(new URL('./worker.ts', import.meta.url).pathname, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let result: LoadResult | undefined;
    child.on('message', (message: { type: string; result: LoadResult }) => {
      result = message.result;
    });
    child.once('exit', (code) => (result ? resolve(result) : reject(new Error(`autocannon worker exited with ${code}`))));
    child.send({ role: 'load', baseUrl, pathsFile, token, connections: 10, durationS, overallRate: API_RATE });
  });
}

/** Records events at EVENT_RATE for DURATION_S, each in its own transaction; the commit time of each, by event id. */
async function produceEvents(db: Database, clientId: string, durationS: number): Promise<Map<string, number>> {
  const committed = new Map<string, number>();
  const sessions = Array.from({ length: SESSIONS }, () => ({ sessionId: randomUUID(), userId: randomUUID() }));
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  let issued = 0;
  while (performance.now() - started < durationS * 1000) {
    const due = Math.floor(((performance.now() - started) * EVENT_RATE) / 1000) - issued;
    for (let k = 0; k < due; k++) {
      const session = sessions[issued % sessions.length] as (typeof sessions)[number];
      issued++;
      const work = db
        .transaction((tx) =>
          recordEvent(
            tx,
            {
              clientId,
              userId: session.userId,
              type: 'charging_session.progress',
              sessionId: session.sessionId,
              object: { id: session.sessionId, status: 'active', consumed_energy: (issued / 10).toFixed(3) },
            },
            new Date(),
          ),
        )
        .then((recorded) => {
          committed.set(recorded.body.id, performance.now());
        })
        .finally(() => inFlight.delete(work));
      inFlight.add(work);
    }
    await sleep(5);
  }
  await Promise.all(inFlight);
  return committed;
}

interface Phase {
  latencies: number[];
  produced: number;
  delivered: number;
  api: LoadResult;
}

interface PhaseSettings {
  down: boolean;
  durationS: number;
  pathsFile: string;
}

async function runPhase(service: Service, db: Database, clientId: string, rx: Receiver, settings: PhaseSettings): Promise<Phase> {
  const { down, durationS, pathsFile } = settings;
  const created = await fetch(`${service.base}/api/v1/webhook-endpoints/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: rx.url, events: ['*'] }),
  });
  const endpoint = (await created.json()) as { id: string; secret: string };
  rx.secret = endpoint.secret;
  rx.down = down;
  rx.arrivals.clear();
  const [committed, api] = await Promise.all([produceEvents(db, clientId, durationS), apiLoad(service.base, pathsFile, service.token, durationS)]);
  // Up: wait until every event arrived (at most 10 s more).
  const deadline = performance.now() + 10_000;
  while (!down && rx.arrivals.size < committed.size && performance.now() < deadline) await sleep(50);
  const latencies = [...committed].flatMap(([id, at]) => (rx.arrivals.has(id) ? [Math.max(0, (rx.arrivals.get(id) as number) - at)] : []));
  await fetch(`${service.base}/api/v1/webhook-endpoints/${endpoint.id}/`, { method: 'DELETE', headers: { authorization: `Bearer ${service.token}` } });
  rx.down = false;
  return { latencies, produced: committed.size, delivered: latencies.length, api };
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'charging-access-bench-webhooks-'));
  await chmod(tmp, 0o755); // the embedded server's non-root user must reach it
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), role: 'cli', log: () => {} });
  const db = createDatabase(postgres.url, { max: 20, applicationName: 'bench-webhooks' });
  const rx = await startReceiver();
  let service: Service | undefined;
  try {
    service = await startService(path.join(tmp, 'service'), postgres.url);
    const clientId = (await db.query<{ id: string }>("SELECT id FROM api_clients WHERE name = 'demo'")).rows[0]?.id as string;
    const pathsFile = path.join(tmp, 'paths.json');
    await writeFile(pathsFile, JSON.stringify(['/api/v1/webhook-endpoints/', '/api/v1/users/']));
    say(
      `${RUNS} runs of receiver up and down, ${DURATION_S} s each: ${EVENT_RATE} events/s over ${SESSIONS} sessions; API load ${API_RATE} req/s (10 connections)`,
    );
    // Warm-up (not counted): the service's code paths compiled, its pools and kept-alive connections open.
    await runPhase(service, db, clientId, rx, { down: false, durationS: 5, pathsFile });
    const up: Phase[] = [];
    const down: Phase[] = [];
    for (let run = 1; run <= RUNS; run++) {
      for (const isDown of [false, true]) {
        const phase = await runPhase(service, db, clientId, rx, { down: isDown, durationS: DURATION_S, pathsFile });
        (isDown ? down : up).push(phase);
        say(
          `run ${run} receiver ${isDown ? 'down' : 'up  '}: ${phase.delivered}/${phase.produced} delivered` +
            (isDown
              ? ''
              : `, latency p50 ${percentile(phase.latencies, 0.5).toFixed(1)} ms p99 ${percentile(phase.latencies, 0.99).toFixed(1)} ms max ${Math.max(...phase.latencies).toFixed(1)} ms`) +
            `; API ${Math.round(phase.api.rps)} req/s p50 ${phase.api.latencyP50} ms p99 ${phase.api.latencyP99} ms, non-2xx ${phase.api.non2xx}, errors ${phase.api.errors}`,
        );
      }
    }
    report(up, down, rx);
  } finally {
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    await rx.close();
    await db.close();
    await postgres.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

function report(up: Phase[], down: Phase[], rx: Receiver): void {
  const latencies = up.flatMap((p) => p.latencies);
  const p50 = percentile(latencies, 0.5);
  const p99 = percentile(latencies, 0.99);
  const lost = up.reduce((n, p) => n + p.produced - p.delivered, 0);
  say(
    `delivery latency (commit -> receiver), ${latencies.length} events: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target p99 <= 1000 ms): ${p99 <= 1000 ? 'PASS' : 'FAIL'}`,
  );
  say(`not delivered within 10 s while up: ${lost}; duplicates: ${rx.duplicates}; signatures that did not verify: ${rx.badSignatures}`);
  const upP99 = median(up.map((p) => p.api.latencyP99));
  const downP99 = median(down.map((p) => p.api.latencyP99));
  const ratio = downP99 / upP99;
  say(
    `API p99, median of ${up.length}: receiver up ${upP99} ms, down ${downP99} ms, ratio down/up ${ratio.toFixed(2)} (target <= 1.10): ${ratio <= 1.1 ? 'PASS' : 'FAIL'}`,
  );
}

await main();
