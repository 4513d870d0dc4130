// Crash tests: the real service (`node src/main.ts`) is killed at each step of
// the start saga, the stop, the CDR's application and the bill job, then
// started again; whatever path the repair takes, the end state must hold no
// orphan hold, no double charge and no lost CDR.
//
// The service runs as a child process on this file's test database. The
// payment processor (the Stripe sandbox, reached through the real Stripe
// adapter as with real Stripe keys) and the CPO network live in this test
// process, so they outlive the service like real outside systems do: the CPO
// retries the pushes the dead service did not answer. TEST_CRASH_POINTS makes
// the service SIGKILL itself at the named point (src/platform/crash-points.ts).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FAILURES } from '../src/modules/charging/service.ts';
import { createOcpi } from '../src/modules/ocpi/service.ts';
import { STRIPE_API_VERSION } from '../src/modules/payments/stripe-processor.ts';
import { createIngestion } from '../src/modules/stations/ingest.ts';
import { systemClock } from '../src/platform/clock.ts';
import { loadConfig } from '../src/platform/config.ts';
import type { CrashPointName } from '../src/platform/crash-points.ts';
import type { Database } from '../src/platform/db.ts';
import { toMinorUnits } from '../src/platform/money.ts';
import { type CpoSandbox, createCpoSandbox } from '../src/sandbox/cpo/index.ts';
import { createStripeSandbox, type StripeSandbox } from '../src/sandbox/stripe/index.ts';
import { FAST_CPO_TIMINGS } from './charging-support.ts';
import { createTestDatabase, freePort } from './helpers.ts';
import { CARDS, USERS } from './payments-support.ts';

interface Service {
  child: ChildProcess;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  body: any;
  text: string;
}

let db: Database;
let dropDatabase: () => Promise<void>;
let dataDir: string;
let base: string;
let env: Record<string, string>;
let stripe: StripeSandbox;
let cpo: CpoSandbox;
let service: Service | undefined;
let token: string;
const evses: string[] = [];

/** Starts the service (optionally with crash points) and waits until it is ready (/readyz: catalogue loaded). */
async function startService(crashAt: CrashPointName[] = []): Promise<Service> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { ...process.env, ...env, TEST_CRASH_POINTS: crashAt.join(',') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gone) throw new Error(`the service exited during start-up:\n${output.join('')}`);
    if (Date.now() > deadline) throw new Error(`the service did not start within 60 s:\n${output.join('')}`);
    const ready = await fetch(`${base}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) return { child, output, exited };
    await sleep(100);
  }
}

/** Stops the running service: SIGTERM, and SIGKILL if it lingers. */
async function stopService(): Promise<void> {
  const running = service;
  service = undefined;
  if (!running || running.child.exitCode !== null || running.child.signalCode !== null) return;
  running.child.kill('SIGTERM');
  const timer = setTimeout(() => running.child.kill('SIGKILL'), 10_000);
  await running.exited;
  clearTimeout(timer);
}

/** (Re)starts the service; the previous one is stopped first. */
async function restart(crashAt: CrashPointName[] = []): Promise<void> {
  await stopService();
  service = await startService(crashAt);
}

/** Waits until the service killed itself at its crash point, and checks it did. */
async function died(point: CrashPointName): Promise<void> {
  const running = service as Service;
  const timer = setTimeout(() => running.child.kill('SIGKILL'), 30_000);
  const { signal } = await running.exited;
  clearTimeout(timer);
  const output = running.output.join('');
  assert.ok(output.includes(`crash point ${point}:`), `the service did not reach crash point ${point} (signal ${signal}):\n${output.slice(-4000)}`);
  assert.equal(signal, 'SIGKILL');
  service = undefined;
}

/** The running service's warnings and errors, and its last lines (for failure messages). */
function serviceLog(): string {
  const lines = (service?.output ?? []).join('').split('\n');
  const problems = lines.filter((line) => /"level":(40|50|60)/.test(line) || line.startsWith('crash point'));
  return `service warnings and errors:\n${problems.slice(-30).join('\n')}\nlast lines:\n${lines.slice(-5).join('\n')}`.slice(-12000);
}

async function call(method: string, url: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/** A request the service dies during: the connection is cut, no answer. */
async function callAndDie(method: string, url: string, point: CrashPointName, body?: unknown): Promise<void> {
  const answered = await call(method, url, body).then(
    (answer) => answer,
    () => undefined,
  );
  assert.equal(answered, undefined, `expected no answer (the service dies at ${point}), got ${answered?.status} ${answered?.text}\n${serviceLog()}`);
  await died(point);
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${serviceLog()}`);
    await sleep(150);
  }
}

/** A user with complete billing details and a card, through the API and the processor's confirmation. */
async function newDriver(): Promise<{ userId: string; pm: string }> {
  const user = await call('POST', `${USERS}/`, { email: 'driver@example.com' });
  assert.equal(user.status, 201, user.text);
  const userId = user.body.id as string;
  const billing = await call('PUT', `${USERS}/${userId}/billing-details/`, {
    account_type: 'personal',
    first_name: 'Ada',
    last_name: 'Lovelace',
    line1: 'Hauptstraße 5',
    postal_code: '10115',
    city: 'Berlin',
    country: 'DE',
  });
  assert.equal(billing.status, 200, billing.text);
  const intent = await call('GET', `${USERS}/${userId}/setup-intents/?pm_type=card`);
  assert.equal(intent.status, 200, intent.text);
  const confirmed = await stripe.browser.confirmSetupIntent(intent.body.id, { clientSecret: intent.body.client_secret, cardNumber: CARDS.visa });
  assert.equal(confirmed.status, 'succeeded');
  const pm = confirmed.payment_method as string;
  // The webhook (or the start's own lookup) tells the service about the card.
  await until('the card to be listed', async () => {
    const methods = await call('GET', `${USERS}/${userId}/payment-methods/`);
    return methods.body?.results?.some((m: { id: string }) => m.id === pm) ? true : undefined;
  });
  return { userId, pm };
}

const sessionPath = (userId: string, id: string) => `${USERS}/${userId}/charging-sessions/${id}/`;

async function sessionsOf(userId: string) {
  const list = await call('GET', `${USERS}/${userId}/charging-sessions/`);
  assert.equal(list.status, 200, list.text);
  return list.body.results as { id: string; status: string; consumed_energy: string; failure_reason: string | null; session_cost: unknown }[];
}

/** The one session of the user (the start's answer may have been lost with the process). */
async function onlySession(userId: string) {
  const sessions = await until('the session row', async () => {
    const found = await sessionsOf(userId);
    return found.length > 0 ? found : undefined;
  });
  assert.equal(sessions.length, 1, JSON.stringify(sessions));
  return sessions[0] as (typeof sessions)[number];
}

async function startCharging(driver: { userId: string; pm: string }, evseId: string): Promise<string> {
  const started = await call('POST', `${USERS}/${driver.userId}/charging/start/`, { payment_method_id: driver.pm, evse_id: evseId });
  assert.equal(started.status, 201, `${started.text}\n${serviceLog()}`);
  return started.body.id as string;
}

/** Waits until the session charges (energy flowing, at least `minimumCost` estimated), then stops it. */
async function chargeThenStop(userId: string, sessionId: string, minimumCost = 0): Promise<void> {
  await until('the session to charge', async () => {
    const s = await call('GET', sessionPath(userId, sessionId));
    return s.body?.status === 'active' && Number(s.body.consumed_energy) > 0 && Number(s.body.estimated_cost ?? 0) >= minimumCost ? true : undefined;
  });
  await stopCharging(userId, sessionId);
}

async function stopCharging(userId: string, sessionId: string): Promise<void> {
  const stopped = await call('POST', `${USERS}/${userId}/charging/stop/${sessionId}/`);
  assert.equal(stopped.status, 204, stopped.text);
}

/** Everything the processor knows about the user's money: payment intents by status, and the sum received. */
async function processorMoney(userId: string) {
  const { rows } = await db.query<{ status: string; amount_received: string; amount_capturable: string; amount: string; currency: string }>(
    `SELECT o.data->>'status' AS status, o.data->>'amount_received' AS amount_received, o.data->>'amount_capturable' AS amount_capturable,
            o.data->>'amount' AS amount, o.data->>'currency' AS currency
       FROM stripe_sandbox.objects o JOIN payment_customers c ON c.customer_id = o.customer
      WHERE o.object = 'payment_intent' AND c.user_id = $1`,
    [userId],
  );
  return {
    intents: rows,
    received: rows.reduce((sum, r) => sum + Number(r.amount_received), 0),
    stillHeld: rows.filter((r) => r.status === 'requires_capture' || r.status === 'requires_action'),
  };
}

/** The end state of a billed session: completed, one invoice, the processor took exactly its total, nothing held. */
async function assertBilledOnce(userId: string, sessionId: string): Promise<void> {
  const invoice = await until('the invoice', async () => {
    const list = await call('GET', `${USERS}/${userId}/invoices/`);
    return list.body?.count > 0 ? list.body : undefined;
  });
  assert.equal(invoice.count, 1, JSON.stringify(invoice));
  const [only] = invoice.results;
  assert.equal(only.charging_session_id, sessionId);
  const session = await call('GET', sessionPath(userId, sessionId));
  assert.equal(session.body.status, 'completed', session.text);
  const { rows: cdrs } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM ocpi_cdrs c JOIN charging_sessions s ON s.cdr_id = c.id AND s.cdr_country_code = c.country_code AND s.cdr_party_id = c.party_id
      WHERE s.id = $1`,
    [sessionId],
  );
  assert.equal(Number(cdrs[0]?.n), 1, 'the CDR is stored and linked to the session');
  const minor = toMinorUnits(only.total, only.currency);
  const money = await until('the processor to settle', async () => {
    const m = await processorMoney(userId);
    return m.stillHeld.length === 0 && m.received === minor ? m : undefined;
  }).catch(async (error: Error) => {
    throw new Error(`${error.message}\ninvoice total ${only.total}; processor: ${JSON.stringify(await processorMoney(userId))}`);
  });
  assert.equal(money.received, minor, 'the processor received exactly the invoice total');
  const { rows: holds } = await db.query<{ status: string }>('SELECT status FROM payment_holds WHERE user_id = $1', [userId]);
  assert.ok(
    holds.every((h) => ['captured', 'released', 'declined', 'expired'].includes(h.status)),
    `no hold left holding: ${JSON.stringify(holds)}`,
  );
  // No job of this session gave up.
  const { rows: failedJobs } = await db.query<{ queue: string; last_error: string }>(
    "SELECT queue, last_error FROM jobs WHERE payload->>'session_id' = $1 AND state = 'failed'",
    [sessionId],
  );
  assert.deepEqual(failedJobs, []);
}

/** The end state of a start that did not survive: failed, nothing taken, nothing held. */
async function assertFailedAndReleased(userId: string, sessionId: string): Promise<void> {
  await until('the session to fail', async () => {
    const s = await call('GET', sessionPath(userId, sessionId));
    return s.body?.status === 'failed' ? true : undefined;
  });
  const money = await until('the hold to be released', async () => {
    const m = await processorMoney(userId);
    return m.stillHeld.length === 0 ? m : undefined;
  });
  assert.equal(money.received, 0, 'nothing was taken');
  const invoices = await call('GET', `${USERS}/${userId}/invoices/`);
  assert.equal(invoices.body.count, 0);
}

function nextEvse(): string {
  const evse = evses.shift();
  assert.ok(evse, 'ran out of available EVSEs');
  return evse;
}

before(async () => {
  const database = await createTestDatabase();
  db = database.db;
  dropDatabase = database.drop;
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-crash-'));
  base = `http://127.0.0.1:${await freePort()}`;
  stripe = await createStripeSandbox({ db, clock: systemClock, apiVersion: STRIPE_API_VERSION, browserBaseUrl: base });
  await stripe.listen({ port: 0 });
  await stripe.addWebhookEndpoint({ url: `${base}/webhooks/stripe` });
  stripe.startBackgroundWork(100);
  cpo = await createCpoSandbox({
    db,
    clock: systemClock,
    locations: 40,
    seed: 23,
    ...FAST_CPO_TIMINGS,
  });
  await cpo.listen({ port: 0 });
  env = {
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: new URL(base).port,
    PUBLIC_BASE_URL: base,
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'info',
    DEMO_CLIENT: 'true',
    STRIPE_SECRET_KEY: stripe.keys.secretKey,
    STRIPE_PUBLISHABLE_KEY: stripe.keys.publishableKey,
    STRIPE_WEBHOOK_SECRET: stripe.keys.webhookSecret,
    STRIPE_API_BASE: stripe.url,
    CPO_SANDBOX: 'false',
    STATIONS_DEFAULT_LOCATIONS: '0',
    // Fast repairs: a start cut short is failed after 2 s, a killed worker's job runs again after 2 s.
    CHARGING_STALLED_START_SECONDS: '2',
    CHARGING_RECONCILE_SECONDS: '1',
    CHARGING_START_TIMEOUT_SECONDS: '10',
    JOBS_LEASE_SECONDS: '2',
    SHUTDOWN_GRACE_MS: '1000',
    // The file's polls (every 150 ms) pass the default 1,200 requests a minute on a slow machine; rate limits have their own test.
    RATE_LIMIT_PER_MINUTE: '0',
    // A small hold, so that every bill captures the hold and charges the rest off-session.
    PRE_AUTH_MIN_EUR: '1.00',
    PRE_AUTH_MAX_EUR: '1.00',
  };
  service = await startService();
  token = (await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim();
  // Our side of the OCPI handshake, as `cpo connect` does it: the CPO calls the running service back.
  const ocpi = createOcpi({
    db,
    clock: systemClock,
    config: loadConfig(env).ocpi,
    baseUrl: `${base}/ocpi`,
    ingestion: createIngestion({ db, clock: systemClock }),
  });
  const connection = await ocpi.connections.connect({ versionsUrl: cpo.versionsUrl, token: await cpo.issueTokenA(), name: 'network' });
  await ocpi.sync.syncConnection(connection, { full: true });
  await ocpi.stop();
  cpo.startBackgroundWork();
  const { rows } = await db.query<{ evse_id: string }>(
    "SELECT evse_id FROM ocpi_evses WHERE status = 'AVAILABLE' AND evse_id IS NOT NULL AND evse_id NOT LIKE '%*ESCN*%' ORDER BY evse_id",
  );
  evses.push(...rows.map((r) => r.evse_id));
  // The service follows the catalogue the pull wrote.
  const probe = evses[0] as string;
  await until('the service’s catalogue to have the network', async () => {
    const found = await call('GET', `/api/v1/stations/details/?type=evse_id&id=${encodeURIComponent(probe)}`);
    return found.status === 200 ? true : undefined;
  });
});

after(async () => {
  await stopService();
  await cpo?.close();
  await stripe?.close();
  await dropDatabase?.();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a killed service leaves no orphan hold, no double charge, no lost CDR', { concurrency: 1, timeout: 600_000 }, () => {
  for (const point of ['start:begun', 'start:hold-placed', 'start:held'] as const) {
    it(`killed at ${point}: the start is failed on restart and its hold released`, async () => {
      await restart([point]);
      const driver = await newDriver();
      await callAndDie('POST', `${USERS}/${driver.userId}/charging/start/`, point, { payment_method_id: driver.pm, evse_id: nextEvse() });
      await restart();
      const session = await onlySession(driver.userId);
      await assertFailedAndReleased(driver.userId, session.id);
      assert.equal((await call('GET', sessionPath(driver.userId, session.id))).body.failure_reason, FAILURES.interrupted);
    });
  }

  it('killed after the CPO accepted START_SESSION: the session either runs and is billed, or is stopped at the CPO and still billed', async (t) => {
    await restart(['start:command-accepted']);
    const driver = await newDriver();
    await callAndDie('POST', `${USERS}/${driver.userId}/charging/start/`, 'start:command-accepted', { payment_method_id: driver.pm, evse_id: nextEvse() });
    await restart();
    const session = await onlySession(driver.userId);
    // Either the CPO's Session (retried until the restarted service answers) made it active, or the
    // reconciliation failed the start first and the orphan is stopped at the CPO: both end with the CDR billed.
    const outcome = await until('active or failed', async () => {
      const s = await call('GET', sessionPath(driver.userId, session.id));
      return ['active', 'failed', 'completed'].includes(s.body?.status) ? (s.body.status as string) : undefined;
    });
    t.diagnostic(`after the restart the session was ${outcome}`);
    if (outcome === 'active') await chargeThenStop(driver.userId, session.id);
    const end = await until('the session to end', async () => {
      const s = await call('GET', sessionPath(driver.userId, session.id));
      return s.body?.status === 'completed' || (s.body?.status === 'failed' && outcome === 'failed') ? s.body : undefined;
    });
    if (end.status === 'completed') await assertBilledOnce(driver.userId, session.id);
    else {
      // Given up and stopped at the CPO: its CDR completes and bills it.
      await until('the orphan’s CDR to complete it', async () => {
        const s = await call('GET', sessionPath(driver.userId, session.id));
        return s.body?.status === 'completed' ? true : undefined;
      });
      await assertBilledOnce(driver.userId, session.id);
    }
  });

  it('killed before answering the accepted start: the session runs on and is billed once', async () => {
    await restart(['start:accepted']);
    const driver = await newDriver();
    await callAndDie('POST', `${USERS}/${driver.userId}/charging/start/`, 'start:accepted', { payment_method_id: driver.pm, evse_id: nextEvse() });
    await restart();
    const session = await onlySession(driver.userId);
    await chargeThenStop(driver.userId, session.id);
    await assertBilledOnce(driver.userId, session.id);
  });

  it('killed after the CPO accepted STOP_SESSION: the CPO stops anyway and the CDR bills it once', async () => {
    await restart(['stop:command-accepted']);
    const driver = await newDriver();
    const sessionId = await startCharging(driver, nextEvse());
    await until('the session to charge', async () => {
      const s = await call('GET', sessionPath(driver.userId, sessionId));
      return s.body?.status === 'active' && Number(s.body.consumed_energy) > 0 ? true : undefined;
    });
    await callAndDie('POST', `${USERS}/${driver.userId}/charging/stop/${sessionId}/`, 'stop:command-accepted');
    await restart();
    await assertBilledOnce(driver.userId, sessionId);
  });

  for (const point of ['cdr:applied', 'bill:priced', 'bill:captured', 'bill:charged', 'bill:settled'] as const) {
    it(`killed at ${point}: the restarted service bills the session exactly once`, async () => {
      await restart([point]);
      const driver = await newDriver();
      const sessionId = await startCharging(driver, nextEvse());
      // More than the 1.00 hold, so that the bill charges the rest off-session too.
      await chargeThenStop(driver.userId, sessionId, 2);
      await died(point);
      await restart();
      await assertBilledOnce(driver.userId, sessionId);
    });
  }
});
