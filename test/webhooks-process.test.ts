// Webhook delivery by real service processes (`node src/main.ts`) on one test
// database: a process killed with SIGKILL in the middle of a delivery leaves
// its lease to expire, and the next process delivers the event (same
// webhook-id, signature verified by standardwebhooks); a process stopped with
// SIGTERM while a receiver hangs exits within SHUTDOWN_GRACE_MS and leaves the
// delivery due. The operator's CLI lists the endpoints and the delivery log.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { createTestDatabase, freePort } from './helpers.ts';
import { ENDPOINTS, type Receiver, startReceiver } from './webhooks-support.ts';

const root = path.resolve(import.meta.dirname, '..');
const exec = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Attempts time out after 8 s here (longer than the grace, so SIGTERM must cut one off), and a lease lasts 13 s (timeout + 5 s). */
const TIMEOUT_MS = 8_000;
const GRACE_MS = 1_000;

interface Service {
  child: ChildProcess;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  base: string;
  token: string;
}

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;
let rx: Receiver;
const running: Service[] = [];

before(async () => {
  [database, dataDir, rx] = await Promise.all([createTestDatabase(), mkdtemp(path.join(os.tmpdir(), 'charging-access-webhooks-')), startReceiver()]);
});
after(async () => {
  for (const service of running) if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  await Promise.all(running.map((s) => s.exited));
  await rx.close();
  await rm(dataDir, { recursive: true, force: true });
  await database.drop();
});

async function startService(): Promise<Service> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // Not as a test file: the test runner's context variable would change how the child treats unhandled rejections.
  const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: root,
    env: {
      ...inherited,
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      LOG_LEVEL: 'info',
      DEMO_CLIENT: 'true',
      PAYMENTS_SANDBOX: 'true',
      STRIPE_SANDBOX_PORT: '0',
      CPO_SANDBOX: 'false',
      STATIONS_DEFAULT_LOCATIONS: '0',
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const service = { child, output, exited, base, token: '' };
  running.push(service);
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`${base}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    ))
  ) {
    if (child.exitCode !== null) throw new Error(`the service exited during start-up:\n${output.join('')}`);
    if (Date.now() > deadline) throw new Error(`the service was not ready within 60 s:\n${output.join('')}`);
    await sleep(100);
  }
  service.token = (await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim();
  return service;
}

async function api(service: Service, method: string, url: string, body?: unknown) {
  const res = await fetch(`${service.base}${url}`, {
    method,
    headers: { authorization: `Bearer ${service.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

function cli(...args: string[]) {
  return exec(process.execPath, [path.join(root, 'bin/charging-access.js'), ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: database.url, DATA_DIR: dataDir, NODE_ENV: 'development' },
  });
}

test('killed with SIGKILL mid-delivery, the next process delivers the event; SIGTERM during a hung delivery exits within the grace; the CLI shows it all', {
  timeout: 180_000,
}, async () => {
  const first = await startService();
  const created = await api(first, 'POST', `${ENDPOINTS}/`, { url: rx.url, events: ['*'] });
  assert.equal(created.status, 201, created.text);
  const endpoint = created.body as { id: string; secret: string };

  // The receiver takes the first request and never answers: the process dies while the delivery is in flight.
  rx.answer = (_request, index) => (index === 0 ? 'hang' : 200);
  const ping = await api(first, 'POST', `${ENDPOINTS}/${endpoint.id}/test/`);
  assert.equal(ping.status, 202, ping.text);
  await rx.waitFor(1, 10_000);
  first.child.kill('SIGKILL');
  assert.equal((await first.exited).signal, 'SIGKILL');

  const second = await startService();
  const [, again] = await rx.waitFor(2, 30_000);
  assert.ok(again);
  assert.equal(rx.requests[0]?.headers['webhook-id'], ping.body.event_id);
  assert.equal(again.headers['webhook-id'], ping.body.event_id, 'the same webhook-id');
  const verified = new Webhook(endpoint.secret).verify(again.body, again.headers as Record<string, string>) as { id: string; type: string };
  assert.deepEqual([verified.id, verified.type], [ping.body.event_id, 'ping']);
  let log = await api(second, 'GET', `${ENDPOINTS}/${endpoint.id}/deliveries/`);
  for (let i = 0; i < 50 && log.body.results[0]?.status !== 'delivered'; i++) {
    await sleep(100);
    log = await api(second, 'GET', `${ENDPOINTS}/${endpoint.id}/deliveries/`);
  }
  const [delivery] = log.body.results;
  assert.deepEqual([delivery.status, delivery.attempts, delivery.last_status_code], ['delivered', 2, 200]);
  assert.match(delivery.attempt_log[0].error, /^interrupted: the process sending it stopped/);
  assert.equal(delivery.attempt_log[1].status_code, 200);

  // SIGTERM while the receiver hangs: out within the grace (plus start-up of the stop), the delivery left due.
  rx.answer = () => 'hang';
  const hung = await api(second, 'POST', `${ENDPOINTS}/${endpoint.id}/test/`);
  await rx.waitFor(3, 10_000);
  const stopping = performance.now();
  second.child.kill('SIGTERM');
  const { code } = await second.exited;
  const took = performance.now() - stopping;
  assert.equal(code, 0, second.output.join(''));
  assert.ok(took < GRACE_MS + 5_000, `stopped in ${Math.round(took)} ms, before the attempt's own ${TIMEOUT_MS} ms timeout`);

  const clientId = (await database.db.query<{ client_id: string }>('SELECT client_id FROM webhook_endpoints WHERE id = $1', [endpoint.id])).rows[0]?.client_id;
  assert.ok(clientId);
  const listed = JSON.parse((await cli('webhooks', 'list', '--client', clientId, '--json')).stdout);
  assert.equal(listed.length, 1);
  assert.deepEqual(
    [listed[0].id, listed[0].url, listed[0].enabled, listed[0].pending_deliveries, listed[0].failed_deliveries],
    [endpoint.id, rx.url, true, 1, 0],
  );
  assert.equal(listed[0].secret, undefined, 'never a secret');
  const text = (await cli('webhooks', 'list', '--client', clientId)).stdout;
  assert.ok(text.includes(endpoint.id) && text.includes('pending=1') && !text.includes(endpoint.secret.slice(6)), text);

  const deliveries = JSON.parse((await cli('webhooks', 'deliveries', endpoint.id, '--json')).stdout);
  assert.equal(deliveries.count, 2);
  const interrupted = deliveries.deliveries.find((d: { event_id: string }) => d.event_id === hung.body.event_id);
  assert.equal(interrupted.status, 'pending');
  assert.match(interrupted.attempt_log[0].error, /^interrupted: the service shut down/);
  const lines = (await cli('webhooks', 'deliveries', endpoint.id)).stdout;
  assert.match(lines, /2 deliveries to http:\/\/127\.0\.0\.1:\d+\/hooks/);
  assert.match(lines, new RegExp(`${ping.body.event_id}\\s+delivered\\s+attempts=2\\s+last=200`));

  await assert.rejects(cli('webhooks', 'list'), /webhooks list needs --client/);
  await assert.rejects(cli('webhooks', 'deliveries', '00000000-0000-4000-8000-000000000000'), /no webhook endpoint/);
});
