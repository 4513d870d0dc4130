// Live session streams: latency from an event's commit to its arrival on a Server-Sent Events stream, and that
// nothing is lost, repeated or out of order. The real service process (`node src/main.ts`, development mode, plain
// HTTP behind a pretend proxy) on a throw-away embedded PostgreSQL serves one stream per session; this process
// records events, each in its own transaction that first updates the session row (as a status change does), at
// the rate of 100 concurrent charging sessions, and reads every stream.
// Three phases, to show what the stream's "settled" horizon (src/modules/events/streams.ts) costs:
//   plain      only these writers;
//   idle tx    plus a transaction open for the whole phase that writes no events (streams must not wait for it);
//   slow tx    plus, 2 times a second, an event whose transaction stays open 200 ms before its commit (streams
//              hold later events back until it is settled: their latency grows by up to that much).
//
//   npm run bench:event-stream                          # 100 sessions, 30 events/s, 20 s per phase (about 1.5 min)
//   npm run bench:event-stream -- --rate 100 --duration 10

import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { recordEvent } from '../src/modules/events/outbox.ts';
import { createDatabase, type Database, type Queryable } from '../src/platform/db.ts';
import { startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';
import { insertSessionFor } from '../test/events-support.ts';
import { type ServiceProcess, startServiceProcess } from './service-process.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => process.stdout.write(`${line}\n`);
/** Milliseconds on a clock both ends of a measurement share (this process writes and reads). */
const now = () => performance.now();
function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
}

const { values: argv } = parseArgs({
  options: {
    duration: { type: 'string', default: '20' },
    rate: { type: 'string', default: '30' },
    sessions: { type: 'string', default: '100' },
  },
});
const DURATION_S = Number(argv.duration);
const EVENT_RATE = Number(argv.rate);
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
    SSE_MAX_STREAMS_PER_CLIENT: String(SESSIONS + 10),
    METRICS_PORT: 'off',
    LOG_LEVEL: 'warn',
  });
  const token = (await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim();
  return { ...service, token };
}

/** One session's stream: arrival time per event id, and whether ids only ever grew. */
interface Stream {
  arrivals: Map<string, number>;
  lastSeq: number;
  outOfOrder: number;
  duplicates: number;
  close(): void;
}

function openStream(service: Service, userId: string, sessionId: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const stream: Omit<Stream, 'close'> = { arrivals: new Map(), lastSeq: 0, outOfOrder: 0, duplicates: 0 };
    const req = request(
      `${service.base}/api/v1/users/${userId}/charging-sessions/${sessionId}/events`,
      { headers: { authorization: `Bearer ${service.token}`, 'x-forwarded-proto': 'https' } },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = now();
          buffer += chunk;
          for (let cut = buffer.indexOf('\n\n'); cut !== -1; cut = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const seq = Number(/^id: (\d+)$/m.exec(block)?.[1] ?? 0);
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (!seq || !data) continue;
            const id = (JSON.parse(data) as { id: string }).id;
            if (seq <= stream.lastSeq) stream.outOfOrder++;
            if (stream.arrivals.has(id)) stream.duplicates++;
            stream.lastSeq = Math.max(stream.lastSeq, seq);
            stream.arrivals.set(id, at);
          }
        });
        resolve(Object.assign(stream, { close: () => req.destroy() }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface Session {
  sessionId: string;
  userId: string;
}

/** An event of the session, in a transaction that first writes the session row (as changeStatus does). */
async function sessionEvent(tx: Queryable, clientId: string, session: Session, n: number) {
  await tx.query('UPDATE charging_sessions SET version = version + 1, updated_at = now() WHERE id = $1', [session.sessionId]);
  return recordEvent(
    tx,
    {
      clientId,
      userId: session.userId,
      type: 'charging_session.progress',
      sessionId: session.sessionId,
      object: { id: session.sessionId, status: 'active', consumed_energy: (n / 10).toFixed(3) },
    },
    new Date(),
  );
}

interface PhaseOptions {
  idleTransaction: boolean;
  slowWriters: boolean;
}

/** Records events at EVENT_RATE for DURATION_S over the sessions; the commit time of each, by event id. */
async function produce(db: Database, clientId: string, sessions: Session[], options: PhaseOptions): Promise<Map<string, number>> {
  const committed = new Map<string, number>();
  const inFlight = new Set<Promise<unknown>>();
  const idle = options.idleTransaction ? await db.checkOut() : undefined;
  if (idle) await idle.client.query('BEGIN; SELECT txid_current()');
  const started = now();
  let issued = 0;
  let slow = 0;
  const track = (work: Promise<unknown>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  while (now() - started < DURATION_S * 1000) {
    const due = Math.floor(((now() - started) * EVENT_RATE) / 1000) - issued;
    for (let k = 0; k < due; k++) {
      const session = sessions[issued % sessions.length] as Session;
      const n = ++issued;
      track(db.transaction((tx) => sessionEvent(tx, clientId, session, n)).then((recorded) => committed.set(recorded.body.id, now())));
    }
    // Slow writers: an event whose transaction stays open 200 ms after it drew its seq, twice a second.
    if (options.slowWriters && Math.floor(((now() - started) * 2) / 1000) > slow) {
      slow++;
      const session = sessions[(issued * 7 + slow) % sessions.length] as Session;
      track(
        db
          .transaction(async (tx) => {
            const recorded = await sessionEvent(tx, clientId, session, issued);
            await sleep(200);
            return recorded;
          })
          .then((recorded) => committed.set(recorded.body.id, now())),
      );
    }
    await sleep(5);
  }
  await Promise.all(inFlight);
  if (idle) {
    await idle.client.query('ROLLBACK');
    idle.release();
  }
  return committed;
}

async function phase(name: string, db: Database, clientId: string, sessions: Session[], streams: Stream[], options: PhaseOptions) {
  for (const stream of streams) stream.arrivals.clear();
  const committed = await produce(db, clientId, sessions, options);
  const arrivals = new Map<string, number>();
  const deadline = now() + 10_000;
  for (;;) {
    arrivals.clear();
    for (const stream of streams) for (const [id, at] of stream.arrivals) arrivals.set(id, at);
    if ([...committed.keys()].every((id) => arrivals.has(id)) || now() > deadline) break;
    await sleep(50);
  }
  const latencies = [...committed].flatMap(([id, at]) => (arrivals.has(id) ? [Math.max(0, (arrivals.get(id) as number) - at)] : []));
  const missing = committed.size - latencies.length;
  const fmt = (p: number) => percentile(latencies, p).toFixed(1);
  say(
    `${name.padEnd(8)} ${latencies.length}/${committed.size} events on their stream: commit -> stream p50 ${fmt(0.5)} ms, p95 ${fmt(0.95)} ms, ` +
      `p99 ${fmt(0.99)} ms, max ${Math.max(...latencies).toFixed(1)} ms; missing after 10 s ${missing}`,
  );
  return { latencies, missing };
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'charging-access-bench-streams-'));
  await chmod(tmp, 0o755); // the embedded server's non-root user must reach it
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), role: 'cli', log: () => {} });
  const db = createDatabase(postgres.url, { max: 30, applicationName: 'bench-event-stream' });
  let service: Service | undefined;
  const streams: Stream[] = [];
  try {
    service = await startService(path.join(tmp, 'service'), postgres.url);
    const clientId = (await db.query<{ id: string }>("SELECT id FROM api_clients WHERE name = 'demo'")).rows[0]?.id as string;
    const sessions: Session[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const res = await fetch(`${service.base}/api/v1/users/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
        body: '{}',
      });
      const userId = ((await res.json()) as { id: string }).id;
      sessions.push({ userId, sessionId: await insertSessionFor(db, clientId, userId) });
    }
    for (const s of sessions) streams.push(await openStream(service, s.userId, s.sessionId));
    say(`${SESSIONS} sessions, one open stream each; ${EVENT_RATE} events/s for ${DURATION_S} s per phase`);
    // Warm-up (not counted).
    await phase('warm-up', db, clientId, sessions, streams, { idleTransaction: false, slowWriters: false });
    await phase('plain', db, clientId, sessions, streams, { idleTransaction: false, slowWriters: false });
    await phase('idle tx', db, clientId, sessions, streams, { idleTransaction: true, slowWriters: false });
    await phase('slow tx', db, clientId, sessions, streams, { idleTransaction: false, slowWriters: true });
    const outOfOrder = streams.reduce((n, s) => n + s.outOfOrder, 0);
    const duplicates = streams.reduce((n, s) => n + s.duplicates, 0);
    say(`over all phases: events out of order on a stream ${outOfOrder}, repeated ${duplicates}`);
  } finally {
    for (const stream of streams) stream.close();
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    await db.close();
    await postgres.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
