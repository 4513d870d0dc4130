// Child process of the users benchmark (bench/users.ts), so that the process being measured (the HTTP server)
// does not also pay for the load generator. Each gets its task on the IPC channel and answers there.
//   load     autocannon against one route (GET, or POST with a JSON body and optionally a fresh Idempotency-Key each)
//   latency  one GET after another (a few in parallel), each timed on the client
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';

export interface LoadTask {
  role: 'load';
  baseUrl: string;
  path: string;
  token?: string;
  method: 'GET' | 'POST';
  body?: unknown;
  /** POST only: a new Idempotency-Key on every request. */
  idempotencyKeys?: boolean;
  connections: number;
  durationS: number;
}

export interface LoadResult {
  requests: number;
  durationS: number;
  rps: number;
  latencyP50: number;
  latencyP99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface LatencyTask {
  role: 'latency';
  baseUrl: string;
  /** The Authorization header: `Bearer <API token>`, or `Token <base64>` for OCPI. */
  authorization: string;
  /** Requested in turn, round-robin, `samples` requests in all. */
  paths: string[];
  samples: number;
  /** Requests made first and not counted (JIT, connections, caches). */
  warmup: number;
  parallel: number;
}

export interface LatencyResult {
  /** Milliseconds, one per request. */
  latencies: number[];
  failures: { path: string; status: number; body: string }[];
}

type Task = LoadTask | LatencyTask;

async function load(task: LoadTask): Promise<LoadResult> {
  const headers: Record<string, string> = { ...(task.token ? { authorization: `Bearer ${task.token}` } : {}) };
  if (task.body !== undefined) headers['content-type'] = 'application/json';
  const body = task.body === undefined ? undefined : JSON.stringify(task.body);
  const result = await autocannon({
    url: task.baseUrl,
    connections: task.connections,
    pipelining: 1,
    duration: task.durationS,
    timeout: 10,
    headers,
    requests: [
      {
        method: task.method,
        path: task.path,
        ...(body === undefined ? {} : { body }),
        ...(task.idempotencyKeys ? { setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'idempotency-key': randomUUID() } }) } : {}),
      },
    ],
  });
  return {
    requests: result.requests.total,
    durationS: result.duration,
    rps: result.requests.total / result.duration,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

async function latency(task: LatencyTask): Promise<LatencyResult> {
  const latencies: number[] = [];
  const failures: LatencyResult['failures'] = [];
  let next = 0;
  const headers = { authorization: task.authorization };
  const lane = async (count: number, record: boolean) => {
    while (next < count) {
      const path = task.paths[next++ % task.paths.length] as string;
      const started = performance.now();
      const response = await fetch(`${task.baseUrl}${path}`, { headers });
      const text = await response.text();
      if (record) latencies.push(performance.now() - started);
      if (response.status !== 200 && failures.length < 5) failures.push({ path, status: response.status, body: text.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: task.parallel }, () => lane(task.warmup, false)));
  next = 0;
  await Promise.all(Array.from({ length: task.parallel }, () => lane(task.samples, true)));
  return { latencies, failures };
}

process.once('message', (task: Task) => {
  const work: Promise<unknown> = task.role === 'load' ? load(task) : latency(task);
  work.then(
    (result) => {
      process.send?.({ type: 'done', result }, () => process.exit(0));
    },
    (error: Error) => {
      process.stderr.write(`bench users worker (${task.role}) failed: ${error.stack ?? error.message}\n`);
      process.exit(1);
    },
  );
});
