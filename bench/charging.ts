// The full charging lifecycle against the real service process, at several
// concurrency levels (issue 17).
//
// The bench starts its own embedded PostgreSQL in a temporary directory and
// one service process on it exactly as `npm start` runs it (`node
// src/main.ts`: the built-in Stripe sandbox, the built-in sandbox CPO network
// with CPO_SANDBOX_TIME_COMPRESSION, the demo client), on free ports. Per
// level, N virtual clients loop over what a client app does for a driver:
// create a user, PUT billing details, ask for a setup intent, confirm it with
// a test card on the payment sandbox's browser stand-in, wait until the card is
// listed, find an available EVSE with the stations API, start charging, poll
// the session every 0.5 s until active, charge ~3 s, stop, poll until
// completed and until the invoice exists. A level ramps up until every client
// has finished one driver, then measures for --duration seconds (no new driver
// begins after it; those under way finish). Afterwards it checks through the
// API and the database: one invoice and one capture per completed session, and
// gapless invoice numbers. The service's RSS and CPU are read from /proc every
// second, its outbound calls from its Prometheus listener. bench/README.md
// describes the method.
//
//   npm run bench:charging                                  # levels 10,50,100,200; 120 s measured each
//   npm run bench:charging -- --levels 10,50 --duration 30  # shorter
//   npm run bench:charging -- --quick                       # levels 10,50; 20 s each
//   npm run bench:charging -- --help

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { createDatabase, type Database } from '../src/platform/db.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';
import { freePort } from '../src/platform/free-port.ts';
import { type AllocationSampling, startAllocationSampling } from './allocation-profile.ts';
import { type ReceiverFigures, type ReceiverMode, startWebhookReceiver, type WebhookReceiver } from './charging-webhooks.ts';
import { startScriptNodeFlags } from './service-process.ts';

const root = path.resolve(import.meta.dirname, '..');

// ---------------------------------------------------------------------------
// Options

const USAGE = `npm run bench:charging -- [options]
  --levels 10,50,100,200   concurrent virtual clients per level
  --duration 120           seconds measured per level, after its ramp-up (each client has finished one driver)
  --quick                  levels 10,50 and 20 s each (unless given)
  --locations 2000         STATIONS_DEFAULT_LOCATIONS of the sandbox network (start-up time grows with it)
  --compression 60         CPO_SANDBOX_TIME_COMPRESSION
  --charge-seconds 3       real seconds of charging between "active" and the stop
  --status-changes 0       CPO_SANDBOX_STATUS_CHANGES_PER_SECOND (random EVSE status changes; 0: only ours)
  --log-level info         LOG_LEVEL of the service (its log is kept in the temporary directory until the end)
  --keep-log FILE          copy the service's log to FILE at the end
  --json-out FILE          write every figure as JSON
  --statements             preload pg_stat_statements; print the 15 statements that took PostgreSQL the most time,
                           those run most often and those returning the most rows
  --cpu-prof DIR           the service writes a V8 CPU profile into DIR when it stops (open it in Chrome DevTools)
  --heap-snapshots DIR     the service writes a V8 heap snapshot into DIR (SIGUSR2, --heapsnapshot-signal) when each
                           level's window opens and when it closes; a snapshot stops the service for seconds and
                           leaves its RSS some 200 MiB higher (the writer's memory), so such a run is a diagnosis only
  --allocation-profile FILE  the service runs with --inspect on a loopback port; through each level's window V8's
                           sampling heap profiler records the allocations that outlive the young generation (what
                           the old generation must hold and collect); written to FILE (.heapprofile, one per level
                           with several) and summarised by package and function
  --node-flags=FLAGS       more Node/V8 flags for the service, after those of the start script in package.json
                           (to try one: --node-flags=--max-semi-space-size=8; several: --node-flags="--a=1 --b=2";
                           V8's own heap sizing, as before the start script set it:
                           --node-flags="--max-semi-space-size=0 --heap-growing-percent=0")
  --service-env NAME=VALUE one more variable in the service's environment (repeatable; e.g. MALLOC_ARENA_MAX=2)
  --sandboxes in-process   where the Stripe sandbox and the sandbox CPO network run: in-process (the service's built-in
                           ones, sharing its event loop and counted in its CPU) or apart (each a process of its own, as
                           Stripe and a CPO are: the service talks to them over the network, and its CPU is its own)`;

interface Options {
  levels: number[];
  durationS: number;
  locations: number;
  compression: number;
  chargeMs: number;
  statusChanges: number;
  logLevel: string;
  keepLog: string | undefined;
  jsonOut: string | undefined;
  /** Preload pg_stat_statements and print the statements that took PostgreSQL's time. */
  statements: boolean;
  webhooks: 'off' | 'up' | 'down' | 'both';
  cpuProf: string | undefined;
  heapSnapshots: string | undefined;
  allocationProfile: string | undefined;
  nodeFlags: string[];
  serviceEnv: Record<string, string>;
  sandboxes: 'in-process' | 'apart';
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      levels: { type: 'string' },
      duration: { type: 'string' },
      quick: { type: 'boolean', default: false },
      locations: { type: 'string', default: '2000' },
      compression: { type: 'string', default: '60' },
      'charge-seconds': { type: 'string', default: '3' },
      'status-changes': { type: 'string', default: '0' },
      'log-level': { type: 'string', default: 'info' },
      'keep-log': { type: 'string' },
      'json-out': { type: 'string' },
      statements: { type: 'boolean', default: false },
      webhooks: { type: 'string', default: 'off' },
      'cpu-prof': { type: 'string' },
      'heap-snapshots': { type: 'string' },
      'allocation-profile': { type: 'string' },
      'node-flags': { type: 'string' },
      'service-env': { type: 'string', multiple: true, default: [] },
      sandboxes: { type: 'string', default: 'in-process' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const levels = (values.levels ?? (values.quick ? '10,50' : '10,50,100,200')).split(',').map(Number);
  const positive = (name: string, value: number) => {
    if (!Number.isFinite(value) || value < 0) throw new Error(`--${name}: expected a number >= 0, got ${value}`);
    return value;
  };
  if (levels.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--levels: expected positive integers, got ${values.levels}`);
  const webhooks = values.webhooks ?? 'off';
  if (webhooks !== 'off' && webhooks !== 'up' && webhooks !== 'down' && webhooks !== 'both') {
    throw new Error(`--webhooks: expected off, up, down or both, got ${webhooks}`);
  }
  const sandboxes = values.sandboxes ?? 'in-process';
  if (sandboxes !== 'in-process' && sandboxes !== 'apart') throw new Error(`--sandboxes: expected in-process or apart, got ${sandboxes}`);
  return {
    levels,
    durationS: positive('duration', Number(values.duration ?? (values.quick ? 20 : 120))),
    locations: positive('locations', Number(values.locations)),
    compression: positive('compression', Number(values.compression)),
    chargeMs: positive('charge-seconds', Number(values['charge-seconds'])) * 1000,
    statusChanges: positive('status-changes', Number(values['status-changes'])),
    logLevel: values['log-level'] ?? 'info',
    keepLog: values['keep-log'],
    jsonOut: values['json-out'],
    statements: values.statements ?? false,
    webhooks,
    cpuProf: values['cpu-prof'] === undefined ? undefined : path.resolve(values['cpu-prof']),
    heapSnapshots: values['heap-snapshots'] === undefined ? undefined : path.resolve(values['heap-snapshots']),
    allocationProfile: values['allocation-profile'] === undefined ? undefined : path.resolve(values['allocation-profile']),
    nodeFlags: (values['node-flags'] ?? '').split(/\s+/).filter(Boolean),
    serviceEnv: Object.fromEntries((values['service-env'] ?? []).map(serviceVariable)),
    sandboxes,
  };
}

function serviceVariable(setting: string): [string, string] {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(setting);
  if (!match?.[1] || match[2] === undefined) throw new Error(`--service-env: expected NAME=VALUE, got ${JSON.stringify(setting)}`);
  return [match[1], match[2]];
}

// Client behaviour: poll period and how long each stage may take before it counts as a failure.
const POLL_MS = 500;
const REQUEST_TIMEOUT_MS = 60_000;
const CARD_LISTED_TIMEOUT_MS = 30_000;
const ACTIVE_TIMEOUT_MS = 60_000;
const COMPLETED_TIMEOUT_MS = 120_000;
const INVOICED_TIMEOUT_MS = 120_000;
/** After the last client finished: how long sessions may take to settle (bills, invoices) before the checks. */
const SETTLE_TIMEOUT_MS = 60_000;
const USERS = '/api/v1/users';
const VISA = '4242424242424242';

// ---------------------------------------------------------------------------
// Small helpers

const say = (line = '') => process.stdout.write(`${line}\n`);
const now = () => performance.now();

function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const seconds = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`);
const fixed = (value: number | undefined, digits: number) => (value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits));

/** A field of a JSON value, or undefined. */
function get(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) current = current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[key] : undefined;
  return current;
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

// ---------------------------------------------------------------------------
// HTTP as a client app does it: HTTPS, kept-alive connections, the service's own certificate trusted

interface Answer {
  status: number;
  body: unknown;
  ms: number;
}

/** A step of a virtual client that did not go as the scenario says; `kind` is what the failure counts are keyed by. */
class StepFailure extends Error {
  readonly kind: string;
  constructor(kind: string) {
    super(kind);
    this.kind = kind;
  }
}

type Call = (stage: string, method: string, pathname: string, options?: { body?: unknown; bearer?: boolean }) => Promise<Answer>;

function createApi(base: string, ca: string, token: string): { call: Call; agent: Agent } {
  const agent = new Agent({ keepAlive: true, ca, maxSockets: Number.POSITIVE_INFINITY });
  const call: Call = (stage, method, pathname, options = {}) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = {
      ...(options.bearer === false ? {} : { authorization: `Bearer ${token}` }),
      ...(payload ? { 'content-type': 'application/json' } : {}),
    };
    const started = now();
    return new Promise((resolve, reject) => {
      const url = new URL(pathname, base);
      // The service over HTTPS; the Stripe sandbox's browser stand-in of --sandboxes apart over plain HTTP.
      const send = (handler: (res: IncomingMessage) => void) =>
        url.protocol === 'http:'
          ? httpRequest(url, { method, headers }, handler)
          : httpsRequest(url, { method, headers, agent, servername: 'localhost' }, handler);
      const req = send((res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          data += chunk;
        });
        res.on('error', (error: NodeJS.ErrnoException) => reject(new StepFailure(`${stage}: ${error.code ?? error.message} while reading the answer`)));
        res.on('end', () => {
          let body: unknown = data;
          try {
            body = data ? JSON.parse(data) : undefined;
          } catch {}
          resolve({ status: res.statusCode ?? 0, body, ms: now() - started });
        });
      });
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timeout'), { code: `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` })));
      req.on('error', (error: NodeJS.ErrnoException) =>
        reject(new StepFailure(`${stage}: ${error.code ?? error.message}${req.reusedSocket ? ' (on a reused connection)' : ''}`)),
      );
      req.end(payload);
    });
  };
  return { call, agent };
}

/** Throws the step's failure unless the answer has the expected status ("HTTP 424 charging_provider_error"). */
function expectStatus(stage: string, answer: Answer, status: number): void {
  if (answer.status === status) return;
  const type = text(get(answer.body, 'error', 'type')) ?? text(get(answer.body, 'error', 'code')) ?? '';
  throw new StepFailure(`${stage}: HTTP ${answer.status} ${type}`.trim());
}

// ---------------------------------------------------------------------------
// /proc sampling: the service's RSS and CPU, PostgreSQL's CPU (postmaster and its backends), every second

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime, stime, cutime, cstime of a process in seconds, or undefined when it is gone. */
function cpuTimes(pid: number): [number, number, number, number] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Field 14 of stat (utime) is index 11 here: the fields after the command start at field 3.
    const at = (i: number) => Number(fields[i]) / CLOCK_TICKS;
    return [at(11), at(12), at(13), at(14)];
  } catch {
    return undefined;
  }
}

/** Resident memory of a process from /proc/<pid>/status: all of it, anonymous (heap, malloc, stacks) and file-backed (code, mapped files). */
function residentMiB(pid: number): { rss: number; anon: number; file: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) / 1024;
    const rss = kib('VmRSS');
    return Number.isNaN(rss) ? undefined : { rss, anon: kib('RssAnon'), file: kib('RssFile') + kib('RssShmem') };
  } catch {
    return undefined;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds of PostgreSQL: the postmaster's own and its reaped children's, plus its live backends'. */
function postgresCpu(postmasterPid: number | undefined): number {
  if (postmasterPid === undefined) return 0;
  const own = cpuTimes(postmasterPid);
  if (!own) return 0;
  let total = own[0] + own[1] + own[2] + own[3];
  for (const child of childrenOf(postmasterPid)) {
    const times = cpuTimes(child);
    if (times) total += times[0] + times[1];
  }
  return total;
}

/** The machine's idle and stolen CPU seconds so far (all cores, /proc/stat), when it tells them. */
function machineTimes(): { at: number; idle: number; steal: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const ticks = 100; // USER_HZ
    return { at: now(), idle: ((fields[3] ?? 0) + (fields[4] ?? 0)) / ticks, steal: (fields[7] ?? 0) / ticks };
  } catch {
    return undefined;
  }
}

interface Sample {
  at: number;
  rssMiB: number;
  rssAnonMiB: number;
  rssFileMiB: number;
  serviceCpuS: number;
  postgresCpuS: number;
  benchCpuS: number;
  /** The sandboxes' own processes (--sandboxes apart; 0 in process). */
  sandboxesCpuS: number;
}

/** The last CPU seconds read of each sandbox process. */
const sandboxCpuSeen = new Map<number, number>();

function takeSample(servicePid: number, postmasterPid: number | undefined, sandboxPids: number[]): Sample | undefined {
  const service = cpuTimes(servicePid);
  const resident = residentMiB(servicePid);
  if (!service || resident === undefined) return undefined;
  const bench = process.cpuUsage();
  return {
    at: now(),
    rssMiB: resident.rss,
    rssAnonMiB: resident.anon,
    rssFileMiB: resident.file,
    serviceCpuS: service[0] + service[1],
    postgresCpuS: postgresCpu(postmasterPid),
    benchCpuS: (bench.user + bench.system) / 1e6,
    // A sandbox process that has exited counts with its last figure (the sum never goes down).
    sandboxesCpuS: sandboxPids.reduce((sum, pid) => {
      const times = cpuTimes(pid);
      if (times) sandboxCpuSeen.set(pid, times[0] + times[1]);
      return sum + (sandboxCpuSeen.get(pid) ?? 0);
    }, 0),
  };
}

function createSampler(servicePid: number, postmasterPid: number | undefined, sandboxPids: number[]) {
  const samples: Sample[] = [];
  const sample = () => {
    const taken = takeSample(servicePid, postmasterPid, sandboxPids);
    if (taken) samples.push(taken);
    return taken;
  };
  sample();
  const timer = setInterval(sample, 1_000);
  timer.unref();
  return {
    samples,
    /** A sample now (also kept). */
    sample,
    stop: () => clearInterval(timer),
  };
}

// ---------------------------------------------------------------------------
// What the bench starts, and stops again whatever happens

interface Service {
  child: ChildProcess;
  pid: number;
  base: string;
  metricsUrl: string;
  logFile: string;
  exit: Promise<{ code: number | null; signal: string | null }>;
}

/** Everything started, so that cleanup() stops exactly that (and nothing else) once. */
const started: {
  tmp?: string;
  postgres?: EmbeddedPostgres;
  db?: Database;
  service?: Service;
  agent?: Agent;
  receiver?: WebhookReceiver;
  /** With --sandboxes apart: the Stripe sandbox's and the CPO network's processes. */
  sandboxes?: ChildProcess[];
} = {};
let cleaning: Promise<void> | undefined;

/** Stops the service: SIGTERM, SIGKILL if it has not exited 30 s later. How long it took and how it ended. */
async function stopService(service: Service): Promise<{ ms: number; how: string } | undefined> {
  return stopChild(service.child, 30_000);
}

/** Stops a process the bench started: SIGTERM, SIGKILL if it has not exited `graceMs` later. How long it took and how it ended. */
async function stopChild(child: ChildProcess, graceMs: number): Promise<{ ms: number; how: string } | undefined> {
  if (child.exitCode !== null || child.signalCode !== null) return undefined;
  const begun = now();
  const exited = new Promise<[number | null, string | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const [code, signal] = await exited;
  clearTimeout(killer);
  return { ms: now() - begun, how: signal ? `killed (${signal})` : `exited with code ${code}` };
}

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    started.agent?.destroy();
    await started.receiver?.close().catch(() => {});
    const stopped = started.service && (await stopService(started.service));
    if (stopped) say(`service: ${stopped.how} ${seconds(stopped.ms)} after SIGTERM`);
    await Promise.all((started.sandboxes ?? []).map((child) => stopChild(child, 15_000)));
    await started.db?.close().catch(() => {});
    await started.postgres?.stop().catch((error: Error) => say(`stopping PostgreSQL failed: ${error.message}`));
    if (started.tmp) await rm(started.tmp, { recursive: true, force: true });
  })();
  return cleaning;
}

/** The last lines of the service's log. */
async function logTail(lines = 40): Promise<string> {
  if (!started.service) return '';
  const content = await readFile(started.service.logFile, 'utf8').catch(() => '');
  return content.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Warnings and errors the service logged from byte `from` on, counted by message. */
async function logProblems(from: number): Promise<{ size: number; counts: Map<string, number> }> {
  const counts = new Map<string, number>();
  if (!started.service) return { size: from, counts };
  const content = await readFile(started.service.logFile).catch(() => Buffer.alloc(0));
  for (const line of content.subarray(from).toString('utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const record = JSON.parse(line) as { level?: number; msg?: string; reason?: string };
      if ((record.level ?? 0) < 40) continue;
      const key = `${record.level === 40 ? 'warn' : 'error'}: ${record.msg ?? ''}${record.reason ? ` (${String(record.reason).slice(0, 120)})` : ''}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    } catch {}
  }
  return { size: content.length, counts };
}

function startService(tmp: string, env: Record<string, string>, ports: { api: number; metrics: number }, nodeFlags: string[]): Service {
  const logFile = path.join(tmp, 'service.log');
  const fd = openSync(logFile, 'a');
  // Its own process group: a Ctrl-C on the terminal reaches the bench, which stops the service itself.
  // As `npm start` runs it: the start script's Node flags (package.json), then those to try (--node-flags).
  const args = [...startScriptNodeFlags(), ...nodeFlags, path.join(root, 'src/main.ts')];
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  if (child.pid === undefined) throw new Error('the service process could not be started');
  return {
    child,
    pid: child.pid,
    base: `https://127.0.0.1:${ports.api}`,
    metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics`,
    logFile,
    exit,
  };
}

/** What a process the bench starts inherits of the bench's environment: no STRIPE_* key, TLS file or TEST_* setting of the caller's shell. */
function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ'].flatMap((name) => (process.env[name] ? [[name, process.env[name] as string]] : [])));
}

/** A sandbox process of --sandboxes apart, its output kept in `logFile`; listed in `started` to be stopped whatever happens. */
function startSandboxProcess(args: string[], env: Record<string, string>, logFile: string, stdout: 'pipe' | 'log'): ChildProcess {
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', stdout === 'pipe' ? 'pipe' : fd, fd], detached: true });
  closeSync(fd);
  started.sandboxes = [...(started.sandboxes ?? []), child];
  return child;
}

interface StripeSandboxProcess {
  pid: number;
  url: string;
  browserUrl: string;
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
  /** Resolves once the sandbox registered the service's webhook endpoint (it waits for the service's certificate). */
  webhooksRegistered(): Promise<void>;
}

/** The Stripe sandbox as its own process (bench/stripe-sandbox-process.ts): its address and keys, once it listens. */
async function startStripeSandboxProcess(tmp: string, databaseUrl: string, apiPort: number): Promise<StripeSandboxProcess> {
  const child = startSandboxProcess(
    [path.join(root, 'bench/stripe-sandbox-process.ts')],
    {
      ...inheritedEnv(),
      DATABASE_URL: databaseUrl,
      WEBHOOK_URL: `https://127.0.0.1:${apiPort}/webhooks/stripe`,
      WEBHOOK_CERT_FILE: path.join(tmp, 'service', 'tls', 'localhost-cert.pem'),
    },
    path.join(tmp, 'stripe-sandbox.log'),
    'pipe',
  );
  const nextLine = lineReader(child, 'the Stripe sandbox process', path.join(tmp, 'stripe-sandbox.log'));
  const listening = JSON.parse(await nextLine(60_000)) as Omit<StripeSandboxProcess, 'pid' | 'webhooksRegistered'>;
  return {
    pid: child.pid as number,
    ...listening,
    // Its second line: the service's certificate was read and its webhook endpoint registered.
    webhooksRegistered: async () => {
      await nextLine(120_000);
    },
  };
}

/** The lines a process writes to its stdout, one per call, each within `timeoutMs`; its exit or silence fails the call. */
function lineReader(child: ChildProcess, what: string, logFile: string): (timeoutMs: number) => Promise<string> {
  const lines: string[] = [];
  let buffered = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      lines.push(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
    }
  });
  return async (timeoutMs) => {
    const deadline = now() + timeoutMs;
    while (lines.length === 0) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited: see ${logFile}`);
      if (now() > deadline) throw new Error(`${what} said nothing within ${timeoutMs / 1000} s: see ${logFile}`);
      await sleep(100);
    }
    return lines.shift() as string;
  };
}

/** The sandbox CPO network as its own process (`charging-access sandbox cpo`), beside the service, on its database. */
function startCpoNetworkProcess(options: Options, tmp: string, databaseUrl: string, ports: ServicePorts): ChildProcess {
  return startSandboxProcess(
    [path.join(root, 'bin/charging-access.js'), 'sandbox', 'cpo'],
    {
      ...inheritedEnv(),
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: String(ports.api),
      DATA_DIR: path.join(tmp, 'service'),
      DATABASE_URL: databaseUrl,
      CPO_SANDBOX_PORT: String(ports.cpo),
      STATIONS_DEFAULT_LOCATIONS: String(options.locations),
      CPO_SANDBOX_TIME_COMPRESSION: String(options.compression),
      CPO_SANDBOX_STATUS_CHANGES_PER_SECOND: String(options.statusChanges),
      LOG_LEVEL: options.logLevel,
    },
    path.join(tmp, 'cpo-network.log'),
    'log',
  );
}

async function waitReady(service: Service, ca: string, timeoutMs = 300_000): Promise<number> {
  const begun = now();
  const { call, agent } = createApi(service.base, ca, '');
  try {
    while (now() - begun < timeoutMs) {
      if (service.child.exitCode !== null || service.child.signalCode !== null) throw new Error(`the service exited during start-up:\n${await logTail()}`);
      const ready = await call('readyz', 'GET', '/readyz', { bearer: false }).then(
        (answer) => answer.status === 200,
        () => false,
      );
      if (ready) return now() - begun;
      await sleep(250);
    }
  } finally {
    agent.destroy();
  }
  throw new Error(`the service was not ready within ${timeoutMs / 1000} s:\n${await logTail()}`);
}

/** A file the service writes at start-up (its certificate, the demo token), once `complete` says it is whole. */
async function fileWritten(file: string, service: Service, complete: (content: string) => boolean, timeoutMs = 120_000): Promise<string> {
  const begun = now();
  for (;;) {
    const content = await readFile(file, 'utf8').catch(() => '');
    if (complete(content)) return content;
    if (service.child.exitCode !== null) throw new Error(`the service exited during start-up:\n${await logTail()}`);
    if (now() - begun > timeoutMs) throw new Error(`${file} was not written within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------
// Set-up: PostgreSQL, the service, the EVSEs the clients drive

interface Home {
  latitude: number;
  longitude: number;
}

interface Bench {
  options: Options;
  db: Database;
  call: Call;
  service: Service;
  sampler: ReturnType<typeof createSampler>;
  /** The evse_ids the clients may start: remotely startable, no scenario EVSE. */
  evses: Set<string>;
  /** Where drivers look for stations from: the locations of those EVSEs. */
  homes: Home[];
  /** Byte offset of the service log already looked at. */
  logOffset: number;
  /** Every API answer (client requests of the virtual drivers): when it was sent and how long it took. */
  answers: { at: number; ms: number }[];
  /** With --webhooks: the client's receiver. */
  receiver: WebhookReceiver | undefined;
  /** With --allocation-profile: the service's inspector port (127.0.0.1). */
  inspectorPort: number | undefined;
  /** With --sandboxes apart: where the Stripe sandbox's browser stand-in listens (else the service mounts it). */
  browserUrl: string | undefined;
}

interface ServicePorts {
  api: number;
  metrics: number;
  cpo: number;
  inspector: number | undefined;
}

function serviceEnv(options: Options, tmp: string, databaseUrl: string, ports: ServicePorts, stripe?: StripeSandboxProcess): Record<string, string> {
  // Only what the service needs: no STRIPE_* keys, TLS files, TEST_* settings leak in from the caller's shell.
  return {
    ...inheritedEnv(),
    NODE_ENV: 'development',
    ...serviceNodeOptions(options, ports.inspector),
    HOST: '127.0.0.1',
    PORT: String(ports.api),
    METRICS_PORT: String(ports.metrics),
    CPO_SANDBOX_PORT: String(ports.cpo),
    STRIPE_SANDBOX_PORT: '0',
    DATA_DIR: path.join(tmp, 'service'),
    DATABASE_URL: databaseUrl,
    DEMO_CLIENT: 'true',
    STATIONS_DEFAULT_LOCATIONS: String(options.locations),
    CPO_SANDBOX_TIME_COMPRESSION: String(options.compression),
    CPO_SANDBOX_STATUS_CHANGES_PER_SECOND: String(options.statusChanges),
    // One API client drives every virtual driver: its default 1,200 requests/min would refuse most of them.
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: options.logLevel,
    LOG_FORMAT: 'json',
    // --sandboxes apart: the processor and the CPO network are other processes, reached over the network.
    ...(stripe
      ? {
          CPO_SANDBOX: 'false',
          STRIPE_SECRET_KEY: stripe.secretKey,
          STRIPE_PUBLISHABLE_KEY: stripe.publishableKey,
          STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
          STRIPE_API_BASE: stripe.url,
        }
      : {}),
    ...options.serviceEnv,
  };
}

/** NODE_OPTIONS of the service: the diagnostics asked for, and the flags to try. */
function serviceNodeOptions(options: Options, inspectorPort: number | undefined): { NODE_OPTIONS?: string } {
  const flags = [
    ...(inspectorPort === undefined ? [] : [`--inspect=127.0.0.1:${inspectorPort}`]),
    ...(options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProf}`] : []),
    ...(options.heapSnapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${options.heapSnapshots}`] : []),
  ];
  return flags.length > 0 ? { NODE_OPTIONS: flags.join(' ') } : {};
}

/**
 * Waits (up to 5 min) until the CPO network's process serves: it says so once it connected to the service and its
 * first pull (every location and tariff) is in the database; then 3 s for the service's catalogue reload that the
 * import's notification starts. The network or the service exiting meanwhile fails the bench.
 */
async function networkConnected(network: ChildProcess, service: Service, tmp: string): Promise<void> {
  const logFile = path.join(tmp, 'cpo-network.log');
  const begun = now();
  const gone = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
  while (!(await readFile(logFile, 'utf8').catch(() => '')).includes('sandbox CPO network: serving ')) {
    if (gone(network)) throw new Error(`the CPO network's process exited: see ${logFile}`);
    if (gone(service.child)) throw new Error(`the service exited while the CPO network connected:\n${await logTail()}`);
    if (now() - begun > 300_000) throw new Error(`the CPO network did not serve within 5 min: see ${logFile}`);
    await sleep(250);
  }
  await sleep(3_000);
}

async function drivableEvses(db: Database): Promise<{ evses: Set<string>; homes: Home[] }> {
  const { rows } = await db.query<{ evse_id: string; latitude: number; longitude: number }>(
    `SELECT e.evse_id, l.latitude, l.longitude
       FROM ocpi_evses e JOIN ocpi_locations l ON l.country_code = e.country_code AND l.party_id = e.party_id AND l.id = e.location_id
      WHERE e.evse_id IS NOT NULL AND e.status <> 'REMOVED' AND e.evse_id NOT LIKE '%*ESCN*%'
        AND e.data->'capabilities' ? 'REMOTE_START_STOP_CAPABLE'`,
  );
  const homes = new Map<string, Home>();
  for (const row of rows) homes.set(`${row.latitude},${row.longitude}`, { latitude: row.latitude, longitude: row.longitude });
  return { evses: new Set(rows.map((r) => r.evse_id)), homes: [...homes.values()] };
}

async function setUp(options: Options): Promise<Bench> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'charging-access-bench-charging-'));
  started.tmp = tmp;
  await chmod(tmp, 0o755); // the embedded server's non-root user must reach it
  let postgres = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), role: 'cli', log: () => {} });
  started.postgres = postgres;
  if (options.statements) postgres = await withStatementStatistics(postgres, path.join(tmp, 'pg'));
  const postmasterPid = Number((await readFile(path.join(tmp, 'pg', 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]) || undefined;
  const ports: ServicePorts = {
    api: await freePort(),
    metrics: await freePort(),
    cpo: await freePort(),
    inspector: options.allocationProfile ? await freePort() : undefined,
  };
  const begun = now();
  const databaseUrl = postgres.localUrl ?? postgres.url;
  const stripe = options.sandboxes === 'apart' ? await startStripeSandboxProcess(tmp, databaseUrl, ports.api) : undefined;
  const service = startService(tmp, serviceEnv(options, tmp, databaseUrl, ports, stripe), ports, options.nodeFlags);
  started.service = service;
  const ca = await fileWritten(path.join(tmp, 'service', 'tls', 'localhost-cert.pem'), service, (pem) => pem.includes('-----END CERTIFICATE-----'));
  const token = (await fileWritten(path.join(tmp, 'service', 'demo-token'), service, (t) => t.endsWith('\n'))).trim();
  await waitReady(service, ca);
  say(`service pid ${service.pid} ready in ${seconds(now() - begun)} (PostgreSQL pid ${postmasterPid ?? '?'}, data in ${tmp})`);
  const flags = [...startScriptNodeFlags(), ...options.nodeFlags];
  say(
    `service Node flags: ${flags.length > 0 ? flags.join(' ') : 'none'}${
      Object.keys(options.serviceEnv).length > 0
        ? `; more environment: ${Object.entries(options.serviceEnv)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}`
        : ''
    }`,
  );
  const db = createDatabase(postgres.url, { max: 4, applicationName: 'bench-charging' });
  started.db = db;
  const sandboxPids: number[] = [];
  if (stripe) {
    const network = startCpoNetworkProcess(options, tmp, databaseUrl, ports);
    sandboxPids.push(stripe.pid, network.pid as number);
    await stripe.webhooksRegistered();
    await networkConnected(network, service, tmp);
    say(`sandboxes apart: the Stripe sandbox (pid ${stripe.pid}, ${stripe.url}) and the CPO network (pid ${network.pid}), each a process of its own`);
  }
  const { evses, homes } = await drivableEvses(db);
  say(`${evses.size} EVSEs at ${homes.length} locations can be started remotely (scenario EVSEs left out)`);
  if (evses.size === 0) throw new Error('no EVSE to charge at: is the sandbox network connected?');
  const api = createApi(service.base, ca, token);
  started.agent = api.agent;
  const answers: { at: number; ms: number }[] = [];
  const call: Call = async (...args) => {
    const answer = await api.call(...args);
    answers.push({ at: now() - answer.ms, ms: answer.ms });
    return answer;
  };
  const sampler = createSampler(service.pid, postmasterPid, sandboxPids);
  const receiver = options.webhooks === 'off' ? undefined : await registerReceiver(call);
  return { options, db, call, service, sampler, evses, homes, logOffset: 0, answers, receiver, inspectorPort: ports.inspector, browserUrl: stripe?.browserUrl };
}

/** A loopback receiver, and the client's endpoint for every event type pointing at it (through the API). */
async function registerReceiver(call: Call): Promise<WebhookReceiver> {
  const receiver = await startWebhookReceiver();
  started.receiver = receiver;
  const created = await call('register webhook endpoint', 'POST', '/api/v1/webhook-endpoints/', {
    body: { url: receiver.url, events: ['*'], description: 'bench:charging receiver' },
  });
  expectStatus('register webhook endpoint', created, 201);
  say(`webhook endpoint ${text(get(created.body, 'id'))} -> ${receiver.url} (every event type)`);
  return receiver;
}

/** The embedded server restarted with pg_stat_statements preloaded (the extension created in the database the service uses). */
async function withStatementStatistics(postgres: EmbeddedPostgres, dataDir: string): Promise<EmbeddedPostgres> {
  const setup = createDatabase(postgres.url, { max: 1 });
  await setup.query('ALTER SYSTEM SET shared_preload_libraries = pg_stat_statements');
  await setup.query('ALTER SYSTEM SET pg_stat_statements.track_planning = on');
  await setup.close();
  await postgres.stop();
  const restarted = await startEmbeddedPostgres({ dataDir, role: 'cli', log: () => {} });
  started.postgres = restarted;
  const db = createDatabase(restarted.url, { max: 1 });
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await db.close();
  return restarted;
}

/** The statements that took PostgreSQL the most time over the run (with --statements). */
async function printStatements(db: Database): Promise<void> {
  const { rows } = await db.query<{ calls: string; total: number; mean: number; query: string }>(
    `SELECT calls, total_exec_time AS total, mean_exec_time AS mean, query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 15`,
  );
  say('\n== the statements that took PostgreSQL the most time (pg_stat_statements, whole run)');
  say('| total ms | calls | mean ms | statement |\n| ---: | ---: | ---: | --- |');
  for (const row of rows) {
    say(`| ${Math.round(row.total)} | ${row.calls} | ${row.mean.toFixed(2)} | ${row.query.replace(/\s+/g, ' ').slice(0, 160).replaceAll('|', '\\|')} |`);
  }
  const totals = await db.query<{ statements: number; calls: number; exec: number; plan: number; plans: number }>(
    `SELECT count(*)::int AS statements, sum(calls)::float8 AS calls, sum(total_exec_time) AS exec, sum(total_plan_time) AS plan, sum(plans)::float8 AS plans
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  const chatty = await db.query<{ calls: string; plan: number; query: string }>(
    `SELECT calls, total_plan_time AS plan, query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY calls DESC LIMIT 25`,
  );
  say('\n== the statements run most often\n| calls | planning ms | statement |\n| ---: | ---: | --- |');
  for (const row of chatty.rows) say(`| ${row.calls} | ${Math.round(row.plan)} | ${row.query.replace(/\s+/g, ' ').slice(0, 160).replaceAll('|', '\\|')} |`);
  // A statement PostgreSQL plans anew on most runs (a custom plan each time, or never prepared) costs planning on top.
  const planned = await db.query<{ plans: string; calls: string; plan: number; query: string }>(
    `SELECT plans, calls, total_plan_time AS plan, query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_plan_time DESC LIMIT 15`,
  );
  say('\n== the statements that took the most planning\n| planning ms | plans | calls | statement |\n| ---: | ---: | ---: | --- |');
  for (const row of planned.rows) {
    say(`| ${Math.round(row.plan)} | ${row.plans} | ${row.calls} | ${row.query.replace(/\s+/g, ' ').slice(0, 160).replaceAll('|', '\\|')} |`);
  }
  const rowsBack = await db.query<{ rows: string; calls: string; query: string }>(
    `SELECT rows, calls, query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY rows DESC LIMIT 15`,
  );
  // Every row answered becomes JavaScript objects in the process that asked (node-postgres parses each into an object).
  say('\n== the statements returning the most rows\n| rows | calls | rows per call | statement |\n| ---: | ---: | ---: | --- |');
  for (const row of rowsBack.rows) {
    const perCall = Number(row.rows) / Math.max(1, Number(row.calls));
    say(`| ${row.rows} | ${row.calls} | ${perCall.toFixed(1)} | ${row.query.replace(/\s+/g, ' ').slice(0, 160).replaceAll('|', '\\|')} |`);
  }
  // Whose statements: the sandboxes' schemas against the service's own (a statement naming both counts as the sandbox's).
  const areas = await db.query<{ area: string; calls: number; exec: number; plan: number }>(
    `SELECT CASE WHEN query ~ 'stripe_sandbox\\.' THEN 'Stripe sandbox' WHEN query ~ 'cpo_sandbox\\.' THEN 'CPO sandbox'
                 WHEN query ~* '^\\s*(BEGIN|COMMIT|ROLLBACK)' THEN 'BEGIN / COMMIT (everyone)' ELSE 'the service' END AS area,
            sum(calls)::float8 AS calls, sum(total_exec_time) AS exec, sum(total_plan_time) AS plan
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      GROUP BY 1 ORDER BY 2 DESC`,
  );
  const sessions = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM invoices');
  const perSession = Math.max(1, sessions.rows[0]?.n ?? 1);
  say(
    `\n== statements by whose they are (per invoice: ${perSession} invoices)\n| whose | calls | per invoice | executing ms | planning ms |\n| --- | ---: | ---: | ---: | ---: |`,
  );
  for (const row of areas.rows) {
    say(`| ${row.area} | ${row.calls} | ${(row.calls / perSession).toFixed(1)} | ${Math.round(row.exec)} | ${Math.round(row.plan)} |`);
  }
  const t = totals.rows[0];
  if (t) {
    say(
      `all statements: ${t.statements} distinct, ${t.calls} calls, executing ${Math.round(t.exec)} ms, planning ${Math.round(t.plan)} ms in ${t.plans} plans`,
    );
  }
}

// ---------------------------------------------------------------------------
// A virtual client: one driver after another, each through the whole lifecycle

interface Invoiced {
  userId: string;
  sessionId: string;
  /** POST start: request sent -> answer. */
  startMs: number;
  /** Request sent -> first poll that saw the session active. */
  toActiveMs: number;
  /** Request sent -> first poll that saw the session completed with its invoice. */
  toInvoicedMs: number;
  /** Where the time between active and invoiced goes: POST stop's answer, stop sent -> completed seen, completed seen -> invoice seen. */
  stopMs: number;
  stopToCompletedMs: number;
  completedToInvoicedMs: number;
  /** When the start request was sent, and when the invoice was seen. */
  startedAt: number;
  invoicedAt: number;
}

/** A moment of the level: the service's /proc figures and its counters then. */
interface Mark {
  at: number;
  sample: Sample;
  counters: Promise<Counters>;
}

interface LevelRun {
  bench: Bench;
  concurrency: number;
  startedAt: number;
  /** The measurement: opened once every client has finished one driver (the ramp-up), closed durationS later. */
  window: { start: Mark; endsAt: number; closed: Promise<Mark> } | undefined;
  /** Clients that have finished at least one driver (successfully or not). */
  doneOnce: Set<number>;
  invoiced: Invoiced[];
  /** Every answered POST start (any status): when it was sent and how long the answer took. */
  startAnswers: { at: number; ms: number }[];
  /** The machine's idle and stolen CPU at the last progress line. */
  machineAt?: { at: number; idle: number; steal: number } | undefined;
  failures: Map<string, number>;
  users: string[];
  /** EVSEs a virtual driver is using: two drivers do not stand at one charger. */
  claimed: Set<string>;
  inFlight: number;
  drivers: number;
  /** Per queue, the most background jobs queued and the longest wait of a due one, seen by the 10-second progress lines. */
  jobsPeak: Record<string, QueueFigures>;
  /** With --allocation-profile: the sampling of the window (started when it opens). */
  sampling?: Promise<AllocationSampling | undefined>;
}

let aborting = false;

async function newDriver(run: LevelRun): Promise<{ userId: string; pm: string }> {
  const { call } = run.bench;
  const external = `bench-${run.concurrency}-${++run.drivers}-${Math.random().toString(36).slice(2, 8)}`;
  const created = await call('create user', 'POST', `${USERS}/`, {
    body: { email: `${external}@example.com`, locale: 'en', custom_properties: { external_id: external } },
  });
  expectStatus('create user', created, 201);
  const userId = text(get(created.body, 'id'));
  if (!userId) throw new StepFailure('create user: no id in the answer');
  run.users.push(userId);
  const billing = await call('billing details', 'PUT', `${USERS}/${userId}/billing-details/`, {
    body: { account_type: 'personal', first_name: 'Ada', last_name: 'Lovelace', line1: 'Hauptstraße 5', postal_code: '10115', city: 'Berlin', country: 'DE' },
  });
  expectStatus('billing details', billing, 200);
  const intent = await call('setup intent', 'GET', `${USERS}/${userId}/setup-intents/?pm_type=card`);
  expectStatus('setup intent', intent, 200);
  const intentId = text(get(intent.body, 'id'));
  // What Stripe.js does with the client secret, on the sandbox's stand-in for it (no bearer token).
  const confirm = `/sandbox/setup_intents/${intentId}/confirm`;
  const confirmed = await call('confirm card', 'POST', run.bench.browserUrl ? `${run.bench.browserUrl}${confirm}` : confirm, {
    body: { client_secret: text(get(intent.body, 'client_secret')), card_number: VISA },
    bearer: false,
  });
  expectStatus('confirm card', confirmed, 200);
  const pm = text(get(confirmed.body, 'payment_method'));
  if (text(get(confirmed.body, 'status')) !== 'succeeded' || !pm) throw new StepFailure(`confirm card: status ${text(get(confirmed.body, 'status'))}`);
  // The app shows the user's cards: the new one appears once the processor's webhook (or a lookup) told the service.
  const begun = now();
  for (;;) {
    const methods = await call('card listed', 'GET', `${USERS}/${userId}/payment-methods/`);
    expectStatus('card listed', methods, 200);
    const results = get(methods.body, 'results');
    if (Array.isArray(results) && results.some((m) => get(m, 'id') === pm)) return { userId, pm };
    if (now() - begun > CARD_LISTED_TIMEOUT_MS) throw new StepFailure(`card listed: not within ${CARD_LISTED_TIMEOUT_MS / 1000} s`);
    await sleep(POLL_MS);
  }
}

/**
 * An AVAILABLE EVSE the bench drives and no other virtual driver uses, near a random home (the next home when
 * none is within 100 km: the generated catalogue is sparse in places); claimed for the caller.
 */
async function pickEvse(run: LevelRun): Promise<string> {
  const { homes } = run.bench;
  for (let attempt = 0; attempt < 5; attempt++) {
    const home = homes[Math.floor(Math.random() * homes.length)] as Home;
    for (const distance of [5_000, 25_000, 100_000]) {
      const query = `latitude=${home.latitude}&longitude=${home.longitude}&distance=${distance}&only_available=true&page_size=100`;
      const found = await run.bench.call('find EVSE', 'GET', `/api/v1/stations/around/?${query}`);
      expectStatus('find EVSE', found, 200);
      const stations = get(found.body, 'results');
      for (const station of Array.isArray(stations) ? stations : []) {
        const evses = get(station, 'evses');
        for (const evse of Array.isArray(evses) ? evses : []) {
          const id = text(get(evse, 'evse_id'));
          if (id && text(get(evse, 'status'))?.toUpperCase() === 'AVAILABLE' && run.bench.evses.has(id) && !run.claimed.has(id)) {
            run.claimed.add(id);
            return id;
          }
        }
      }
    }
  }
  throw new StepFailure('find EVSE: none available within 100 km of 5 places');
}

/** Polls the session every POLL_MS until `done` says so (answers that session); a failed session or the deadline is a failure of `stage`. */
async function pollSession(run: LevelRun, stage: string, pathname: string, done: (session: unknown) => boolean, timeoutMs: number): Promise<unknown> {
  const begun = now();
  for (;;) {
    const answer = await run.bench.call(stage, 'GET', pathname);
    expectStatus(stage, answer, 200);
    if (done(answer.body)) return answer.body;
    const status = text(get(answer.body, 'status'));
    if (status === 'failed') throw new StepFailure(`${stage}: session failed (${text(get(answer.body, 'failure_reason')) ?? 'no reason'})`);
    if (now() - begun > timeoutMs) throw new StepFailure(`${stage}: not within ${timeoutMs / 1000} s (status ${status})`);
    await sleep(POLL_MS);
  }
}

async function charge(run: LevelRun, driver: { userId: string; pm: string }, evseId: string): Promise<void> {
  const { call, options } = run.bench;
  const { userId } = driver;
  const t0 = now();
  const answer = await call('start', 'POST', `${USERS}/${userId}/charging/start/`, { body: { payment_method_id: driver.pm, evse_id: evseId } });
  run.startAnswers.push({ at: t0, ms: answer.ms });
  expectStatus('start', answer, 201);
  const sessionId = text(get(answer.body, 'id'));
  if (!sessionId) throw new StepFailure('start: no session id in the answer');
  const sessionPath = `${USERS}/${userId}/charging-sessions/${sessionId}/`;
  let stopped = false;
  try {
    await pollSession(run, 'wait active', sessionPath, (s) => get(s, 'status') === 'active', ACTIVE_TIMEOUT_MS);
    const toActiveMs = now() - t0;
    await sleep(options.chargeMs);
    const stopAt = now();
    const stop = await call('stop', 'POST', `${USERS}/${userId}/charging/stop/${sessionId}/`);
    expectStatus('stop', stop, 204);
    stopped = true;
    const invoiced = (s: unknown) => Boolean(get(s, 'session_cost', 'invoice_download'));
    const completed = await pollSession(run, 'wait completed', sessionPath, (s) => get(s, 'status') === 'completed', COMPLETED_TIMEOUT_MS);
    const completedAt = now();
    if (!invoiced(completed)) await pollSession(run, 'wait invoice', sessionPath, invoiced, INVOICED_TIMEOUT_MS);
    const invoicedAt = now();
    run.invoiced.push({
      userId,
      sessionId,
      startMs: answer.ms,
      toActiveMs,
      toInvoicedMs: invoicedAt - t0,
      stopMs: stop.ms,
      stopToCompletedMs: completedAt - stopAt,
      completedToInvoicedMs: invoicedAt - completedAt,
      startedAt: t0,
      invoicedAt,
    });
  } catch (error) {
    // The driver gives up; the app still ends the session, so it does not charge on (not measured).
    if (!stopped) await call('clean-up stop', 'POST', `${USERS}/${userId}/charging/stop/${sessionId}/`).catch(() => undefined);
    throw error;
  }
}

function mark(bench: Bench): Mark {
  const counters = readCounters(bench);
  counters.catch(() => {}); // awaited later, or never when the run is interrupted
  return { at: now(), sample: bench.sampler.sample() ?? (bench.sampler.samples.at(-1) as Sample), counters };
}

/** Opens the measurement window (once): it ends durationS later; clients begin no new driver after it. */
function openWindow(run: LevelRun, why: string): void {
  if (run.window) return;
  const start = mark(run.bench);
  const durationMs = run.bench.options.durationS * 1000;
  const closed = sleep(durationMs).then(async () => {
    const end = mark(run.bench);
    heapSnapshot(run, 'window closed');
    await stopAllocationSampling(run);
    return end;
  });
  run.sampling = startSampling(run);
  run.window = { start, endsAt: start.at + durationMs, closed };
  say(`  ${Math.round((start.at - run.startedAt) / 1000)} s: ${why}: measuring for ${run.bench.options.durationS} s`);
  heapSnapshot(run, 'window opened');
}

/** With --allocation-profile: V8's sampling heap profiler in the service, for the window. */
async function startSampling(run: LevelRun): Promise<AllocationSampling | undefined> {
  if (run.bench.inspectorPort === undefined) return undefined;
  try {
    return await startAllocationSampling(run.bench.inspectorPort);
  } catch (error) {
    say(`  allocation profile not started: ${(error as Error).message}`);
    return undefined;
  }
}

async function stopAllocationSampling(run: LevelRun): Promise<void> {
  const sampling = await run.sampling;
  const file = run.bench.options.allocationProfile;
  if (!sampling || !file) return;
  const target = run.bench.options.levels.length > 1 ? file.replace(/(\.heapprofile)?$/, `-${run.concurrency}.heapprofile`) : file;
  try {
    const lines = await sampling.stop(target);
    say(`  allocation profile of the window written to ${target}; ${lines.join('\n    ')}`);
  } catch (error) {
    say(`  allocation profile not written: ${(error as Error).message}`);
  }
}

/** With --heap-snapshots: the service writes a heap snapshot (its --heapsnapshot-signal) into that directory. */
function heapSnapshot(run: LevelRun, when: string): void {
  const dir = run.bench.options.heapSnapshots;
  if (!dir) return;
  process.kill(run.bench.service.pid, 'SIGUSR2');
  say(`  ${Math.round((now() - run.startedAt) / 1000)} s: ${when}: heap snapshot asked for (into ${dir}; the service pauses while it writes)`);
}

async function virtualClient(run: LevelRun, index: number): Promise<void> {
  // The clients begin spread over the first second, not all in the same millisecond.
  await sleep((index * 1000) / run.concurrency);
  while (!aborting && (run.window === undefined || now() < run.window.endsAt)) {
    run.inFlight++;
    let evse: string | undefined;
    try {
      const driver = await newDriver(run);
      evse = await pickEvse(run);
      await charge(run, driver, evse);
    } catch (error) {
      const kind = error instanceof StepFailure ? error.kind : `bench error: ${(error as Error).message}`;
      const seen = run.failures.get(kind) ?? 0;
      if (seen === 0) say(`  ${Math.round((now() - run.startedAt) / 1000)} s: first failure of its kind: ${kind}`);
      run.failures.set(kind, seen + 1);
      await sleep(1_000); // a client backs off a little after a failure
    } finally {
      if (evse) run.claimed.delete(evse);
      run.inFlight--;
      run.doneOnce.add(index);
      if (run.doneOnce.size === run.concurrency) openWindow(run, 'every client has finished one driver');
    }
  }
}

// ---------------------------------------------------------------------------
// Outbound calls: from the service's Prometheus listener and the Stripe sandbox's delivery table

interface Counters {
  /** Our calls to CPOs (the sandbox network), after retries. */
  ocpiCalls: number;
  /** Our calls to the payment processor (the Stripe sandbox's API). */
  processorCalls: number;
  /** The sandbox network's calls to our OCPI interface (command results, Session updates, CDRs, EVSE statuses). */
  cpoCalls: number;
  /** The Stripe sandbox's webhook delivery attempts to us. */
  webhookAttempts: number;
  /** Requests of the (virtual) client apps: the API and the payment sandbox's browser stand-in. */
  apiRequests: number;
  tokenPushBacklog: number | undefined;
  webhookBacklog: number | undefined;
  /** Seconds the service spent in garbage collection (prom-client's nodejs_gc_duration_seconds): young generation, the rest. */
  gcS: { minor: number; major: number };
}

/** Sums of a Prometheus text's samples named `name` whose labels pass `labels`. */
function metricValues(metricsText: string, name: string, labels: (labels: string) => boolean = () => true): number[] {
  const values: number[] = [];
  for (const line of metricsText.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match && match[1] === name && labels(match[2] ?? '')) values.push(Number(match[3]));
  }
  return values;
}

function metricSum(metricsText: string, name: string, labels: (labels: string) => boolean = () => true): number | undefined {
  const values = metricValues(metricsText, name, labels);
  return values.length > 0 ? values.reduce((a, b) => a + b, 0) : undefined;
}

interface QueueFigures {
  /** Queued jobs, due or scheduled for later (a start deadline waits 120 s by design). */
  queued: number;
  /** How long the oldest due job has waited. */
  oldestDueS: number;
}

/** Background jobs by queue (billing, hold releases, start deadlines), from the service's metrics listener. */
async function jobQueues(bench: Bench): Promise<Map<string, QueueFigures>> {
  const metricsText = await fetch(bench.service.metricsUrl)
    .then((res) => res.text())
    .catch(() => '');
  const queues = new Map<string, QueueFigures>();
  const read = (name: string, set: (figures: QueueFigures, value: number) => void) => {
    for (const line of metricsText.split('\n')) {
      const match = new RegExp(`^${name}\\{[^}]*queue="([^"]*)"[^}]*\\}\\s+(\\S+)`).exec(line);
      if (!match) continue;
      const queue = match[1] as string;
      const figures = queues.get(queue) ?? { queued: 0, oldestDueS: 0 };
      set(figures, Number(match[2]));
      queues.set(queue, figures);
    }
  };
  read('charging_access_job_queue_depth', (f, v) => {
    f.queued = v;
  });
  read('charging_access_job_queue_oldest_due_seconds', (f, v) => {
    f.oldestDueS = v;
  });
  return queues;
}

const queuesText = (queues: Record<string, QueueFigures>) =>
  Object.entries(queues)
    .filter(([, f]) => f.queued > 0 || f.oldestDueS > 0)
    .map(([queue, f]) => `${queue} ${f.queued}${f.oldestDueS > 0 ? ` (oldest due ${f.oldestDueS.toFixed(1)} s)` : ''}`)
    .join(', ') || 'none';

async function readCounters(bench: Bench): Promise<Counters> {
  const metricsText = await fetch(bench.service.metricsUrl)
    .then((res) => res.text())
    .catch(() => '');
  const { rows } = await bench.db.query<{ attempts: number; webhooks: number; pushes: number }>(
    `SELECT (SELECT coalesce(sum(attempts), 0)::bigint FROM stripe_sandbox.webhook_deliveries) AS attempts,
            (SELECT count(*) FROM stripe_sandbox.webhook_deliveries WHERE next_attempt_at IS NOT NULL) AS webhooks,
            (SELECT count(*) FROM ocpi_outbox) AS pushes`,
  );
  const requests = (route: (r: string) => boolean) =>
    metricSum(metricsText, 'charging_access_http_requests_total', (labels) => route(/route="([^"]*)"/.exec(labels)?.[1] ?? '')) ?? 0;
  const gc = (kinds: string[]) =>
    metricSum(metricsText, 'charging_access_nodejs_gc_duration_seconds_sum', (labels) => kinds.some((kind) => labels.includes(`kind="${kind}"`))) ?? 0;
  return {
    gcS: { minor: gc(['minor']), major: gc(['major', 'incremental', 'weakcb']) },
    ocpiCalls: metricSum(metricsText, 'charging_access_ocpi_calls_total') ?? 0,
    processorCalls: metricSum(metricsText, 'charging_access_payment_processor_calls_total') ?? 0,
    cpoCalls: requests((r) => r.startsWith('/ocpi/')),
    webhookAttempts: rows[0]?.attempts ?? 0,
    apiRequests: requests((r) => r.startsWith('/api/') || r.startsWith('/sandbox/')),
    tokenPushBacklog: rows[0]?.pushes,
    webhookBacklog: rows[0]?.webhooks,
  };
}

// ---------------------------------------------------------------------------
// After a level: the money and the invoices, through the database and the API

interface Verification {
  users: number;
  sessionsByStatus: Record<string, number>;
  /** Completed sessions with a bill (sessions without energy are not billed). */
  billed: number;
  notBilled: number;
  /** Completed sessions still without a bill or invoice when the checks ran. */
  unsettled: number;
  /** Billed sessions whose invoice count is not exactly 1. */
  invoicesNotOne: number;
  /** Billed sessions whose hold's payment intent was not captured exactly once (the processor's own events). */
  capturesNotOne: number;
  /** Billed sessions where the processor's amount received, the bill and the invoice disagree. */
  moneyMismatches: number;
  offSessionCharges: number;
  priceMismatches: number;
  /** Of those, sessions priced with our fallback tariff (the operator sent none; the sandbox CPO then bills 0). */
  priceMismatchesOnFallback: number;
  failedJobs: number;
  /** Holds of failed sessions still authorized (funds left held). */
  heldAfterFailure: number;
  /** Invoiced sessions (as the clients saw them) whose user's invoice list has exactly that one invoice. */
  apiChecked: number;
  apiNotOne: number;
  gapless: boolean;
  invoiceNumbers: string;
}

interface SessionRow {
  id: string;
  status: string;
  step: string | null;
  bill_gross: number | null;
  captured: number | null;
  charged: number | null;
  price_mismatch: boolean | null;
  tariff_is_fallback: boolean;
  hold_status: string | null;
  payment_intent_id: string | null;
  invoices: number;
  invoice_gross: number | null;
}

const sessionsOf = async (db: Database, users: string[]) =>
  (
    await db.query<SessionRow>(
      `SELECT s.id, s.status, s.tariff_is_fallback, b.step, b.gross AS bill_gross, b.captured, b.charged, b.price_mismatch, h.status AS hold_status, h.payment_intent_id,
              (SELECT count(*) FROM invoices i WHERE i.session_id = s.id) AS invoices,
              (SELECT min(i.gross) FROM invoices i WHERE i.session_id = s.id) AS invoice_gross
         FROM charging_sessions s
         LEFT JOIN charging_bills b ON b.session_id = s.id
         LEFT JOIN payment_holds h ON h.reference = s.hold_reference
        WHERE s.user_id = ANY($1::uuid[])`,
      [users],
    )
  ).rows;

const unsettled = (rows: SessionRow[]) =>
  rows.filter((r) => ['pending', 'active', 'stopping'].includes(r.status) || (r.status === 'completed' && r.step !== 'not_billed' && r.invoices === 0));

/** Waits (at most SETTLE_TIMEOUT_MS) until no session of the level runs and every completed one is invoiced or not billed. */
async function settledSessions(db: Database, users: string[]): Promise<SessionRow[]> {
  const begun = now();
  for (;;) {
    const rows = await sessionsOf(db, users);
    if (unsettled(rows).length === 0 || now() - begun > SETTLE_TIMEOUT_MS) return rows;
    await sleep(1_000);
  }
}

/** The processor's side: captures (payment_intent.succeeded events of manual-capture intents) and amounts received, by intent. */
async function captures(db: Database, intents: string[]): Promise<Map<string, { captures: number; received: number }>> {
  const { rows } = await db.query<{ pi: string; captures: number; received: number }>(
    `SELECT e.data->'data'->'object'->>'id' AS pi, count(*) AS captures, max(o.received) AS received
       FROM stripe_sandbox.events e
       JOIN LATERAL (SELECT (data->>'amount_received')::bigint AS received FROM stripe_sandbox.objects WHERE id = e.data->'data'->'object'->>'id') o ON true
      WHERE e.type = 'payment_intent.succeeded' AND e.data->'data'->'object'->>'capture_method' = 'manual'
        AND e.data->'data'->'object'->>'id' = ANY($1::text[])
      GROUP BY 1`,
    [intents],
  );
  return new Map(rows.map((r) => [r.pi, { captures: r.captures, received: r.received }]));
}

async function invoiceNumbering(db: Database): Promise<{ gapless: boolean; invoiceNumbers: string }> {
  const { rows } = await db.query<{ issuer: string; n: number; lo: number; hi: number; last_number: number | null }>(
    `SELECT i.issuer, count(*) AS n, min(i.number) AS lo, max(i.number) AS hi, c.last_number
       FROM invoices i LEFT JOIN invoice_counters c ON c.issuer = i.issuer GROUP BY i.issuer, c.last_number`,
  );
  return {
    gapless: rows.every((r) => r.lo === 1 && r.hi === r.n && r.last_number === r.hi),
    invoiceNumbers: rows.map((r) => `${r.issuer}: ${r.n} invoices, numbers ${r.lo}..${r.hi}, counter ${r.last_number}`).join('; ') || 'no invoices',
  };
}

/** Through the API, as the client: each invoiced session's user has exactly one invoice, for that session. */
async function apiInvoiceCheck(run: LevelRun): Promise<number> {
  let wrong = 0;
  const queue = [...run.invoiced];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const list = await run.bench.call('check invoices', 'GET', `${USERS}/${next.userId}/invoices/`).catch(() => undefined);
      const results = get(list?.body, 'results');
      const one = list?.status === 200 && get(list.body, 'count') === 1 && Array.isArray(results) && get(results[0], 'charging_session_id') === next.sessionId;
      if (!one) wrong++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return wrong;
}

async function verifyLevel(run: LevelRun): Promise<Verification> {
  const { db } = run.bench;
  const rows = await settledSessions(db, run.users);
  const sessionsByStatus: Record<string, number> = {};
  for (const row of rows) sessionsByStatus[row.status] = (sessionsByStatus[row.status] ?? 0) + 1;
  const billed = rows.filter((r) => r.status === 'completed' && r.step !== null && r.step !== 'not_billed');
  const processor = await captures(
    db,
    billed.flatMap((r) => (r.payment_intent_id ? [r.payment_intent_id] : [])),
  );
  const moneyWrong = (r: SessionRow) => {
    const taken = processor.get(r.payment_intent_id ?? '');
    return r.invoice_gross !== r.bill_gross || (r.captured ?? 0) + (r.charged ?? 0) !== r.bill_gross || (taken !== undefined && taken.received !== r.captured);
  };
  const sessionIds = rows.map((r) => r.id);
  const { rows: jobs } = await db.query<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE state = 'failed' AND payload->>'session_id' = ANY($1::text[])", [
    sessionIds,
  ]);
  return {
    users: run.users.length,
    sessionsByStatus,
    billed: billed.length,
    notBilled: rows.filter((r) => r.step === 'not_billed').length,
    unsettled: unsettled(rows).length,
    invoicesNotOne: billed.filter((r) => r.invoices !== 1).length,
    capturesNotOne: billed.filter((r) => processor.get(r.payment_intent_id ?? '')?.captures !== 1).length,
    moneyMismatches: billed.filter(moneyWrong).length,
    offSessionCharges: billed.filter((r) => (r.charged ?? 0) > 0).length,
    priceMismatches: billed.filter((r) => r.price_mismatch).length,
    priceMismatchesOnFallback: billed.filter((r) => r.price_mismatch && r.tariff_is_fallback).length,
    failedJobs: jobs[0]?.n ?? 0,
    heldAfterFailure: rows.filter((r) => r.status === 'failed' && ['authorized', 'pending', 'requires_action'].includes(r.hold_status ?? '')).length,
    apiChecked: run.invoiced.length,
    apiNotOne: await apiInvoiceCheck(run),
    ...(await invoiceNumbering(db)),
  };
}

const verificationPassed = (v: Verification) =>
  v.invoicesNotOne === 0 && v.capturesNotOne === 0 && v.moneyMismatches === 0 && v.apiNotOne === 0 && v.unsettled === 0 && v.failedJobs === 0;

// ---------------------------------------------------------------------------
// One level

interface Spread {
  p50: number | undefined;
  p99: number | undefined;
  n: number;
}

interface LevelResult {
  concurrency: number;
  /** With --webhooks: the receiver's state during the level, and what it received of the level's events. */
  webhooks: { mode: ReceiverMode; events: number; requests: number; latencyMs: Spread; staleArrivals: number; byType: Record<string, number> } | undefined;
  /** Every client request sent within the window (the API as client apps see it). */
  apiMs: Spread;
  /** From the level's start until every client had finished one driver (the window then opens). */
  warmupS: number;
  windowS: number;
  /** From the window's end until the last client finished its driver. */
  drainS: number;
  /** Sessions whose invoice a client saw within the window, per minute of window. */
  perMinute: number;
  invoicedInWindow: number;
  invoiced: number;
  /** Of sessions whose start was sent within the window (each followed to its end). */
  startMs: Spread;
  toActiveMs: Spread;
  toInvoicedMs: Spread;
  stopMs: Spread;
  stopToCompletedMs: Spread;
  completedToInvoicedMs: Spread;
  /** Every failure of the level, ramp-up and drain included. */
  failures: Record<string, number>;
  failureCount: number;
  verification: Verification;
  /** At the level's start, highest of the level, after the drain. */
  /** everyMinute: the level's first sample, then one a minute (the highest of that minute), up to the drain's end. */
  rssMiB: { start: number; peak: number; end: number; everyMinute: number[] };
  /** Within the window. */
  cpuS: { service: number; postgres: number; bench: number; sandboxes: number };
  serviceCpuSPerInvoiced: number | undefined;
  outbound: { ocpi: number; processor: number; cpo: number; webhooks: number; total: number; serviceCpuMsPerCall: number | undefined };
  /** Requests of the client apps, and the service's CPU per HTTP exchange of either kind. */
  apiRequests: number;
  serviceCpuMsPerExchange: number | undefined;
  /** Within the window: the service's garbage collection, seconds (young generation, the rest). */
  gcS: { minor: number; major: number };
  backlogAtEnd: { tokenPushes: number | undefined; webhooks: number | undefined };
  /** Sampled every 10 s, per queue: the most background jobs queued, the longest a due one had waited. */
  jobsPeak: Record<string, QueueFigures>;
  serviceProblems: Record<string, number>;
}

/** How often a level prints its progress line. */
const PROGRESS_EVERY_MS = 10_000;

const spread = (values: number[]): Spread => ({ p50: percentile(values, 50), p99: percentile(values, 99), n: values.length });

async function progress(run: LevelRun): Promise<void> {
  const failures = [...run.failures.values()].reduce((a, b) => a + b, 0);
  const latest = run.bench.sampler.samples.at(-1);
  const jobs = await jobQueues(run.bench);
  for (const [queue, figures] of jobs) {
    const peak = run.jobsPeak[queue] ?? { queued: 0, oldestDueS: 0 };
    run.jobsPeak[queue] = { queued: Math.max(peak.queued, figures.queued), oldestDueS: Math.max(peak.oldestDueS, figures.oldestDueS) };
  }
  const memory = await memoryFigures(run.bench);
  // The starts answered since the last line: whether the slow ones come together (a pause) or spread over the run.
  const recent = run.startAnswers.filter((s) => s.at + s.ms >= now() - PROGRESS_EVERY_MS).map((s) => s.ms);
  const starts = recent.length > 0 ? `starts ${recent.length} (p99 ${seconds(spread(recent).p99)}, slowest ${seconds(Math.max(...recent))}), ` : '';
  // Who had the cores since the last line: more work of ours, or less machine (time stolen by the host, other processes).
  const samples = run.bench.sampler.samples;
  const since = samples.find((sample) => sample.at >= now() - PROGRESS_EVERY_MS);
  const machine = machineTimes();
  const cores = (a: number, b: number, ms: number) => ((a - b) / (ms / 1000)).toFixed(2);
  const usage =
    since && latest && latest.at > since.at
      ? `cores: service ${cores(latest.serviceCpuS, since.serviceCpuS, latest.at - since.at)}, PostgreSQL ${cores(latest.postgresCpuS, since.postgresCpuS, latest.at - since.at)}` +
        (machine && run.machineAt
          ? `, idle ${cores(machine.idle, run.machineAt.idle, machine.at - run.machineAt.at)}, stolen ${cores(machine.steal, run.machineAt.steal, machine.at - run.machineAt.at)}`
          : '') +
        '; '
      : '';
  run.machineAt = machine;
  say(
    `  ${Math.round((now() - run.startedAt) / 1000)} s: ${run.invoiced.length} invoiced, ${run.inFlight} drivers in flight, ${failures} failures, ${starts}${usage}` +
      `service RSS ${fixed(latest?.rssMiB, 0)} MiB; webhook deliveries waiting ${memory.webhookBacklog ?? '?'}; jobs queued: ${queuesText(Object.fromEntries(jobs))}`,
  );
  say(`      memory: ${memoryText(latest, memory)}`);
}

/** Where the service's resident memory is: anonymous vs file-backed, the V8 heap (used, committed, by space), external. */
function memoryText(sample: Sample | undefined, memory: MemoryFigures): string {
  const spaces = Object.entries(memory.heapSpacesMiB)
    .map(([space, mib]) => `${space} ${mib.toFixed(0)}`)
    .join(', ');
  const outside =
    sample && memory.heapTotalMiB !== undefined && memory.externalMiB !== undefined ? sample.rssAnonMiB - memory.heapTotalMiB - memory.externalMiB : undefined;
  return (
    `RSS anon ${fixed(sample?.rssAnonMiB, 0)} + file ${fixed(sample?.rssFileMiB, 0)} MiB; JS heap used ${fixed(memory.heapUsedMiB, 0)} of ` +
    `${fixed(memory.heapTotalMiB, 0)} committed (${spaces}); external ${fixed(memory.externalMiB, 0)}; anon - heap - external ${fixed(outside, 0)} MiB`
  );
}

interface MemoryFigures {
  heapUsedMiB: number | undefined;
  heapTotalMiB: number | undefined;
  /** Committed size of the main V8 heap spaces ("new" is the young generation). */
  heapSpacesMiB: Record<string, number>;
  externalMiB: number | undefined;
  webhookBacklog: number | undefined;
}

/** What the service's memory holds (its metrics listener) and the payment sandbox's webhooks still to deliver: is a figure growing? */
async function memoryFigures(bench: Bench): Promise<MemoryFigures> {
  const metricsText = await fetch(bench.service.metricsUrl)
    .then((res) => res.text())
    .catch(() => '');
  const mib = (name: string) => {
    const bytes = metricSum(metricsText, name);
    return bytes === undefined ? undefined : bytes / 1_048_576;
  };
  const heapSpacesMiB: Record<string, number> = {};
  for (const space of ['new', 'old', 'code', 'large_object', 'trusted']) {
    const bytes = metricSum(metricsText, 'charging_access_nodejs_heap_space_size_total_bytes', (labels) => labels.includes(`space="${space}"`));
    if (bytes !== undefined) heapSpacesMiB[space] = bytes / 1_048_576;
  }
  const { rows } = await bench.db.query<{ webhooks: number }>(
    'SELECT count(*) AS webhooks FROM stripe_sandbox.webhook_deliveries WHERE next_attempt_at IS NOT NULL',
  );
  return {
    heapUsedMiB: mib('charging_access_nodejs_heap_size_used_bytes'),
    heapTotalMiB: mib('charging_access_nodejs_heap_size_total_bytes'),
    heapSpacesMiB,
    externalMiB: mib('charging_access_nodejs_external_memory_bytes'),
    webhookBacklog: rows[0]?.webhooks,
  };
}

interface Marks {
  level: Sample;
  windowStart: Mark;
  windowEnd: Mark;
  drainEnd: Mark;
}

/** The window's figures: throughput, latencies of the sessions started in it, CPU and outbound calls in it. */
async function windowFigures(run: LevelRun, marks: Marks) {
  const from = marks.windowStart.at;
  const to = marks.windowEnd.at;
  const inWindow = run.invoiced.filter((i) => i.invoicedAt >= from && i.invoicedAt <= to);
  const startedIn = run.invoiced.filter((i) => i.startedAt >= from && i.startedAt <= to);
  const [first, last] = [marks.windowStart.sample, marks.windowEnd.sample];
  const cpu = {
    service: last.serviceCpuS - first.serviceCpuS,
    postgres: last.postgresCpuS - first.postgresCpuS,
    bench: last.benchCpuS - first.benchCpuS,
    sandboxes: last.sandboxesCpuS - first.sandboxesCpuS,
  };
  const [before, after] = await Promise.all([marks.windowStart.counters, marks.windowEnd.counters]);
  const outbound = {
    ocpi: after.ocpiCalls - before.ocpiCalls,
    processor: after.processorCalls - before.processorCalls,
    cpo: after.cpoCalls - before.cpoCalls,
    webhooks: after.webhookAttempts - before.webhookAttempts,
  };
  const total = outbound.ocpi + outbound.processor + outbound.cpo + outbound.webhooks;
  const apiRequests = after.apiRequests - before.apiRequests;
  return {
    perMinute: inWindow.length / ((to - from) / 60_000),
    invoicedInWindow: inWindow.length,
    startMs: spread(run.startAnswers.filter((s) => s.at >= from && s.at <= to).map((s) => s.ms)),
    apiMs: spread(run.bench.answers.filter((a) => a.at >= from && a.at <= to).map((a) => a.ms)),
    toActiveMs: spread(startedIn.map((i) => i.toActiveMs)),
    toInvoicedMs: spread(startedIn.map((i) => i.toInvoicedMs)),
    stopMs: spread(startedIn.map((i) => i.stopMs)),
    stopToCompletedMs: spread(startedIn.map((i) => i.stopToCompletedMs)),
    completedToInvoicedMs: spread(startedIn.map((i) => i.completedToInvoicedMs)),
    cpuS: cpu,
    serviceCpuSPerInvoiced: inWindow.length > 0 ? cpu.service / inWindow.length : undefined,
    outbound: { ...outbound, total, serviceCpuMsPerCall: total > 0 ? (cpu.service * 1000) / total : undefined },
    apiRequests,
    serviceCpuMsPerExchange: total + apiRequests > 0 ? (cpu.service * 1000) / (total + apiRequests) : undefined,
    gcS: { minor: after.gcS.minor - before.gcS.minor, major: after.gcS.major - before.gcS.major },
  };
}

async function summarise(run: LevelRun, marks: Marks) {
  const during = run.bench.sampler.samples.filter((s) => s.at >= marks.level.at && s.at <= marks.drainEnd.at);
  const atEnd = await marks.drainEnd.counters;
  return {
    concurrency: run.concurrency,
    warmupS: (marks.windowStart.at - run.startedAt) / 1000,
    windowS: (marks.windowEnd.at - marks.windowStart.at) / 1000,
    drainS: (marks.drainEnd.at - marks.windowEnd.at) / 1000,
    invoiced: run.invoiced.length,
    ...(await windowFigures(run, marks)),
    failures: Object.fromEntries([...run.failures.entries()].sort((a, b) => b[1] - a[1])),
    failureCount: [...run.failures.values()].reduce((a, b) => a + b, 0),
    rssMiB: {
      start: marks.level.rssMiB,
      peak: Math.max(...during.map((s) => s.rssMiB), marks.drainEnd.sample.rssMiB),
      end: marks.drainEnd.sample.rssMiB,
      everyMinute: rssEveryMinute(during, marks.level),
    },
    backlogAtEnd: { tokenPushes: atEnd.tokenPushBacklog, webhooks: atEnd.webhookBacklog },
    jobsPeak: run.jobsPeak,
  };
}

/** The level's RSS minute by minute: its first sample, then the highest of each minute after it. */
function rssEveryMinute(samples: Sample[], first: Sample): number[] {
  const minutes: number[] = [first.rssMiB];
  for (const sample of samples) {
    const minute = Math.floor((sample.at - first.at) / 60_000) + 1;
    minutes[minute] = Math.max(minutes[minute] ?? 0, sample.rssMiB);
  }
  return Array.from(minutes, (mib) => mib ?? 0);
}

/** Longest ramp-up: then the window opens even if some client has not finished its first driver. */
const WARMUP_CAP_MS = 300_000;

async function runLevel(bench: Bench, concurrency: number, receiverMode?: ReceiverMode): Promise<LevelResult> {
  say(
    `\n== ${concurrency} concurrent drivers${receiverMode ? ` (webhook receiver ${receiverMode})` : ''}: ramp-up until each has finished one, then ${bench.options.durationS} s measured`,
  );
  if (bench.receiver && receiverMode) {
    await bench.receiver.setMode(receiverMode);
    bench.receiver.takeFigures(Date.now());
  }
  const level = bench.sampler.sample() ?? (bench.sampler.samples.at(-1) as Sample);
  const run: LevelRun = {
    bench,
    concurrency,
    startedAt: now(),
    window: undefined,
    doneOnce: new Set(),
    invoiced: [],
    startAnswers: [],
    failures: new Map(),
    users: [],
    claimed: new Set(),
    inFlight: 0,
    drivers: 0,
    jobsPeak: {},
  };
  const ticker = setInterval(() => void progress(run), PROGRESS_EVERY_MS);
  const cap = setTimeout(() => openWindow(run, `no window yet after ${WARMUP_CAP_MS / 1000} s`), WARMUP_CAP_MS);
  await Promise.all(Array.from({ length: concurrency }, (_, i) => virtualClient(run, i)));
  clearInterval(ticker);
  clearTimeout(cap);
  if (!run.window) throw new Error('the level ended before its window opened (interrupted)');
  const windowEnd = await run.window.closed;
  const drainEnd = mark(bench);
  say(`  window over; the last drivers finished ${seconds(drainEnd.at - windowEnd.at)} later; checking invoices and captures`);
  const verification = await verifyLevel(run);
  const problems = await logProblems(bench.logOffset);
  bench.logOffset = problems.size;
  return {
    ...(await summarise(run, { level, windowStart: run.window.start, windowEnd, drainEnd })),
    webhooks: bench.receiver && receiverMode ? await receiverFigures(bench.receiver, receiverMode) : undefined,
    verification,
    serviceProblems: Object.fromEntries([...problems.counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)),
  };
}

/** The level's events at the receiver: with the receiver up, those of the level's last sessions get a few seconds more. */
async function receiverFigures(receiver: WebhookReceiver, mode: ReceiverMode): Promise<NonNullable<LevelResult['webhooks']>> {
  if (mode === 'up') await sleep(3_000);
  const figures: ReceiverFigures = receiver.takeFigures(Date.now());
  return {
    mode,
    events: figures.events,
    requests: figures.requests,
    latencyMs: spread(figures.latenciesMs),
    staleArrivals: figures.staleArrivals,
    byType: figures.byType,
  };
}

// ---------------------------------------------------------------------------
// Report

const pair = (s: Spread) => `${seconds(s.p50)} / ${seconds(s.p99)}`;

function printLevel(r: LevelResult): void {
  const v = r.verification;
  say(
    `  invoiced sessions/min   ${r.perMinute.toFixed(1)} (${r.invoicedInWindow} invoices seen in the ${r.windowS.toFixed(0)} s window, after a ` +
      `${r.warmupS.toFixed(1)} s ramp-up; ${r.invoiced} in all, the last ${r.drainS.toFixed(1)} s after the window)`,
  );
  say(`  start p50 / p99         ${pair(r.startMs)} (${r.startMs.n} starts answered, sent within the window)`);
  say(`  API p50 / p99           ${pair(r.apiMs)} (${r.apiMs.n} client requests sent within the window, every kind)`);
  if (r.webhooks) {
    const w = r.webhooks;
    say(
      w.mode === 'up'
        ? `  webhooks (receiver up)  ${w.events} events of the level received (${w.requests} requests); created -> received ${pair(w.latencyMs)}; ` +
            `session events after a later version of their session ${w.staleArrivals}; by type: ${Object.entries(w.byType)
              .map(([type, n]) => `${type} ${n}`)
              .join(', ')}`
        : `  webhooks (receiver down) ${w.events} events received while down (expected 0); the service retries them later`,
    );
  }
  say(`  start -> active         ${pair(r.toActiveMs)} (${r.toActiveMs.n} invoiced sessions started within the window)`);
  say(`  start -> invoiced       ${pair(r.toInvoicedMs)}`);
  say(
    `    of which              stop answer ${pair(r.stopMs)}, stop -> completed ${pair(r.stopToCompletedMs)}, ` +
      `completed -> invoice ${pair(r.completedToInvoicedMs)} (p50 / p99 each)`,
  );
  say(`  failures                ${r.failureCount} in the whole level (the scenario asks for none: every one is unrequested)`);
  for (const [kind, n] of Object.entries(r.failures)) say(`    ${String(n).padStart(5)}  ${kind}  [not asked for]`);
  say(
    `  checks                  ${v.billed} billed sessions: invoice count != 1: ${v.invoicesNotOne}, capture count != 1: ${v.capturesNotOne}, ` +
      `amounts disagreeing: ${v.moneyMismatches}; API invoice lists not exactly that one invoice: ${v.apiNotOne} of ${v.apiChecked}; ` +
      `${v.gapless ? 'gapless' : 'NOT gapless'} (${v.invoiceNumbers}) -> ${verificationPassed(v) && v.gapless ? 'OK' : 'WRONG'}`,
  );
  say(
    `  sessions                ${Object.entries(v.sessionsByStatus)
      .map(([status, n]) => `${n} ${status}`)
      .join(', ')} of ${v.users} users; not billed (no energy) ${v.notBilled}, unsettled after ${SETTLE_TIMEOUT_MS / 1000} s ${v.unsettled}, ` +
      `off-session charges ${v.offSessionCharges}, CDR/engine price mismatches ${v.priceMismatches} (${v.priceMismatchesOnFallback} on our fallback tariff), failed jobs ${v.failedJobs}, ` +
      `holds of failed sessions still held ${v.heldAfterFailure}`,
  );
  say(
    `  service process         RSS ${r.rssMiB.start.toFixed(0)} -> peak ${r.rssMiB.peak.toFixed(0)} -> ${r.rssMiB.end.toFixed(0)} MiB (level start, peak, after the drain); ` +
      `CPU in the window ${r.cpuS.service.toFixed(1)} s (${fixed(r.serviceCpuSPerInvoiced, 3)} s per invoiced session, ${fixed(r.cpuS.service / r.windowS, 2)} cores); ` +
      `PostgreSQL ${r.cpuS.postgres.toFixed(1)} s (${fixed(r.cpuS.postgres / r.windowS, 2)} cores), bench ${r.cpuS.bench.toFixed(1)} s` +
      (r.cpuS.sandboxes > 0 ? `, sandboxes' processes ${r.cpuS.sandboxes.toFixed(1)} s (${fixed(r.cpuS.sandboxes / r.windowS, 2)} cores)` : ''),
  );
  say(
    `  garbage collection      ${(r.gcS.minor + r.gcS.major).toFixed(1)} s in the window (young generation ${r.gcS.minor.toFixed(1)} s, ` +
      `old ${r.gcS.major.toFixed(1)} s): ${fixed(((r.gcS.minor + r.gcS.major) / r.cpuS.service) * 100, 1)}% of the service's CPU`,
  );
  say(`  service RSS each minute  ${r.rssMiB.everyMinute.map((mib) => mib.toFixed(0)).join(', ')} MiB (the level's start, then each minute's highest)`);
  const o = r.outbound;
  say(
    `  outbound calls          ${o.total} in the window (OCPI to CPO ${o.ocpi}, to the processor ${o.processor}, CPO to us ${o.cpo}, webhooks ${o.webhooks}); ` +
      `${fixed(r.invoicedInWindow > 0 ? o.total / r.invoicedInWindow : undefined, 1)} per invoiced session; all service CPU / calls = ${fixed(o.serviceCpuMsPerCall, 2)} ms per call`,
  );
  say(
    `  client requests         ${r.apiRequests} (API and payment sandbox); all service CPU / (requests + outbound calls) = ` +
      `${fixed(r.serviceCpuMsPerExchange, 2)} ms per HTTP exchange`,
  );
  say(
    `  backlogs                after the drain: token pushes ${r.backlogAtEnd.tokenPushes ?? 'n/a'}, webhook deliveries ${r.backlogAtEnd.webhooks ?? 'n/a'}; ` +
      `highest jobs queued during the level (read every 10 s): ${queuesText(r.jobsPeak)}`,
  );
  const problems = Object.entries(r.serviceProblems);
  if (problems.length > 0) {
    say('  service warnings/errors during the level (most frequent first):');
    for (const [message, n] of problems) say(`    ${String(n).padStart(5)}  ${message}`);
  }
}

interface Target {
  figure: string;
  measured: string;
  target: string;
  pass: boolean | undefined;
}

/** Issue 19: delivery latency with the receiver up; the API's p99 with it down against up at the same concurrency. */
function webhookTargets(levels: LevelResult[]): Target[] {
  const rows: Target[] = [];
  for (const r of levels) {
    if (!r.webhooks) continue;
    const at = `${r.concurrency} concurrent`;
    if (r.webhooks.mode === 'up') {
      const p99 = r.webhooks.latencyMs.p99;
      rows.push({
        figure: `${at}: event delivery, created -> receiver p99`,
        measured: seconds(p99),
        target: '<= 1 s',
        pass: p99 !== undefined && p99 <= 1_000,
      });
      continue;
    }
    const up = levels.find((u) => u.concurrency === r.concurrency && u.webhooks?.mode === 'up');
    if (!up || up.apiMs.p99 === undefined || r.apiMs.p99 === undefined) continue;
    const ratio = r.apiMs.p99 / up.apiMs.p99;
    rows.push({
      figure: `${at}: API p99 with the receiver down / up`,
      measured: `${fixed(ratio, 2)} (${seconds(r.apiMs.p99)} / ${seconds(up.apiMs.p99)})`,
      target: '<= 1.10',
      pass: ratio <= 1.1,
    });
  }
  return rows;
}

function targets(levels: LevelResult[]): Target[] {
  const base = levels[0] as LevelResult;
  const rows: Target[] = [];
  for (const r of levels) {
    const at = `${r.concurrency} concurrent`;
    if (r !== base) {
      const ratio = r.perMinute / base.perMinute;
      rows.push({
        figure: `${at}: throughput / ${base.concurrency}-level throughput`,
        measured: fixed(ratio, 2),
        target: '>= 0.95 (rises or flat)',
        pass: ratio >= 0.95,
      });
    }
    rows.push({ figure: `${at}: failures the scenario does not ask for`, measured: String(r.failureCount), target: '0', pass: r.failureCount === 0 });
    const checked = verificationPassed(r.verification) && r.verification.gapless;
    rows.push({
      figure: `${at}: one invoice and one capture per completed session, gapless numbers`,
      measured: checked ? 'yes' : 'no',
      target: 'yes',
      pass: checked,
    });
    const perCall = r.outbound.serviceCpuMsPerCall;
    rows.push({
      figure: `${at}: service CPU per outbound call (all its CPU / calls)`,
      measured: `${fixed(perCall, 2)} ms`,
      target: '<= 1.5 ms',
      pass: perCall === undefined ? undefined : perCall <= 1.5,
    });
    rows.push({ figure: `${at}: service RSS peak`, measured: `${r.rssMiB.peak.toFixed(0)} MiB`, target: '< 600 MiB', pass: r.rssMiB.peak < 600 });
    if (r.concurrency === 100) {
      rows.push({ figure: `${at}: invoiced sessions/min`, measured: r.perMinute.toFixed(1), target: '>= 600', pass: r.perMinute >= 600 });
      const startP99 = r.startMs.p99;
      rows.push({ figure: `${at}: start p99`, measured: seconds(startP99), target: '<= 1 s', pass: startP99 !== undefined && startP99 <= 1_000 });
      const invoicedP99 = r.toInvoicedMs.p99;
      rows.push({
        figure: `${at}: start -> invoiced p99`,
        measured: seconds(invoicedP99),
        target: '<= 10 s',
        pass: invoicedP99 !== undefined && invoicedP99 <= 10_000,
      });
    }
  }
  if (!levels.some((r) => r.concurrency === 100))
    rows.push({
      figure: '100 concurrent: throughput, start p99, start -> invoiced p99',
      measured: 'not run',
      target: '>= 600/min, <= 1 s, <= 10 s',
      pass: undefined,
    });
  return rows;
}

const verdict = (pass: boolean | undefined) => (pass === undefined ? '-' : pass ? 'PASS' : '**FAIL**');

function printTables(levels: LevelResult[], rows: Target[]): void {
  const base = levels[0] as LevelResult;
  say('\n## Targets (issue 17)\n');
  say('| Figure | Measured | Target | Result |\n| --- | ---: | --- | --- |');
  for (const t of rows) say(`| ${t.figure} | ${t.measured} | ${t.target} | ${verdict(t.pass)} |`);
  say(`\n## Per level (ratio: throughput / the ${base.concurrency}-level throughput of this run)\n`);
  say(
    '| concurrent | invoiced/min | ratio | start p50 / p99 | start -> active p50 / p99 | start -> invoiced p50 / p99 | failures | invoices, captures, numbers | RSS start / peak / end | service CPU per invoiced session | CPU per outbound call |',
  );
  say('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |');
  for (const r of levels) {
    const checked = verificationPassed(r.verification) && r.verification.gapless ? 'OK' : '**WRONG**';
    say(
      `| ${r.concurrency}${r.webhooks ? ` (receiver ${r.webhooks.mode})` : ''} | ${r.perMinute.toFixed(1)} | ${fixed(r.perMinute / base.perMinute, 2)} | ${pair(r.startMs)} | ${pair(r.toActiveMs)} | ${pair(r.toInvoicedMs)} | ` +
        `${r.failureCount} | ${checked} | ${r.rssMiB.start.toFixed(0)} / ${r.rssMiB.peak.toFixed(0)} / ${r.rssMiB.end.toFixed(0)} MiB | ` +
        `${fixed(r.serviceCpuSPerInvoiced, 3)} s | ${fixed(r.outbound.serviceCpuMsPerCall, 2)} ms |`,
    );
  }
}

// ---------------------------------------------------------------------------

/** SHUTDOWN_GRACE_MS of the service (its default: the bench does not set it). */
const SHUTDOWN_GRACE_MS = 10_000;

async function measure(options: Options): Promise<void> {
  const bench = await setUp(options);
  const levels: LevelResult[] = [];
  const modes: (ReceiverMode | undefined)[] = options.webhooks === 'off' ? [undefined] : options.webhooks === 'both' ? ['up', 'down'] : [options.webhooks];
  for (const concurrency of options.levels) {
    for (const mode of modes) {
      if (aborting) return;
      const result = await runLevel(bench, concurrency, mode);
      printLevel(result);
      levels.push(result);
    }
  }
  bench.sampler.stop();
  if (options.statements) await printStatements(bench.db);
  say('\n== shutdown (SIGTERM) with whatever backlog is left');
  const backlog = await readCounters(bench);
  const stopped = await stopService(bench.service);
  say(
    `  token pushes waiting ${backlog.tokenPushBacklog ?? 'n/a'}: the service ${stopped ? `${stopped.how} ${seconds(stopped.ms)} after SIGTERM` : 'had already exited'}`,
  );
  if (levels.length === 0) return;
  const rows = [...targets(levels), ...webhookTargets(levels)];
  rows.push({
    figure: `shutdown with ${backlog.tokenPushBacklog ?? '?'} token pushes waiting`,
    measured: stopped ? `${seconds(stopped.ms)}, ${stopped.how}` : 'already exited',
    target: `<= SHUTDOWN_GRACE_MS (${SHUTDOWN_GRACE_MS / 1000} s), exit code 0`,
    pass: stopped !== undefined && stopped.ms <= SHUTDOWN_GRACE_MS + 1_000 && stopped.how === 'exited with code 0',
  });
  printTables(levels, rows);
  if (options.jsonOut) {
    const machine = { cpus: os.cpus().length, loadavg: os.loadavg(), node: process.version };
    await writeFile(options.jsonOut, `${JSON.stringify({ options, machine, levels, targets: rows, shutdown: stopped ?? null }, null, 2)}\n`);
    say(`\nfigures written to ${options.jsonOut}`);
  }
}

async function main(): Promise<void> {
  const options = parseOptions();
  say(
    `charging lifecycle bench: levels ${options.levels.join(', ')}, ${options.durationS} s each; ${options.locations} locations, ` +
      `time compression ${options.compression}x, ${options.chargeMs / 1000} s charging; ${os.cpus().length} CPUs, load average ${os.loadavg()[0]?.toFixed(2)}`,
  );
  const interrupted = (signal: string) => {
    if (aborting) return;
    aborting = true;
    say(`\n${signal}: stopping what the bench started`);
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', () => interrupted('SIGINT'));
  process.on('SIGTERM', () => interrupted('SIGTERM'));
  let exitCode = 0;
  try {
    await measure(options);
  } catch (error) {
    exitCode = 1;
    if (!aborting) {
      say(`\nthe bench failed: ${(error as Error).stack ?? error}`);
      say(`last lines of the service log:\n${await logTail()}`);
    }
  } finally {
    if (options.keepLog && started.service) await copyFile(started.service.logFile, options.keepLog).catch(() => {});
    await cleanup();
  }
  if (!aborting) process.exit(exitCode);
}

await main();
