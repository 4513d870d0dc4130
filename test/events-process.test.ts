// The live session stream served by the service as a real process (src/main.ts over HTTPS, on a test database):
// a status change committed by another process (this one) reaches the stream through LISTEN/NOTIFY, and SIGTERM
// with streams open ends them cleanly and exits well within SHUTDOWN_GRACE_MS.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { changeStatus } from '../src/modules/charging/state.ts';
import { manualClock } from '../src/platform/clock.ts';
import { insertSessionFor, openSse } from './events-support.ts';
import { createTestDatabase, freePort } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '..');
const GRACE_MS = 6_000;

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;
let service: { child: ChildProcess; output: string[]; exited: Promise<number | null> } | undefined;

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-events-'));
});
after(async () => {
  if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
  await database.drop();
});

async function waitForOutput(what: RegExp, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!what.test(service?.output.join('') ?? '')) {
    if (service?.child.exitCode !== null) throw new Error(`the service exited:\n${service?.output.join('')}`);
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms:\n${service?.output.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the live stream of a real service process', { timeout: 120_000 }, () => {
  test('an event committed by another process reaches it; SIGTERM ends the open streams cleanly, within the grace period', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['src/main.ts'], {
      cwd: root,
      env: {
        ...process.env,
        NODE_ENV: 'development',
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        LOG_LEVEL: 'warn',
        DEMO_CLIENT: 'true',
        PAYMENTS_SANDBOX: 'true',
        STRIPE_SANDBOX_PORT: '0',
        CPO_SANDBOX: 'false',
        STATIONS_DEFAULT_LOCATIONS: '0',
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        SSE_HEARTBEAT_MS: '500',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    service = { child, output, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
    await waitForOutput(/is ready at/);

    const base = `https://localhost:${port}/api/v1`;
    const ca = await readFile(path.join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
    const token = (await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim();
    const created = await fetchJson(`${base}/users/`, token, ca);
    const { rows } = await database.db.query<{ client_id: string }>('SELECT client_id FROM users WHERE id = $1', [created.id]);
    const clientId = rows[0]?.client_id as string;
    const sessionId = await insertSessionFor(database.db, clientId, created.id);

    const url = `${base}/users/${created.id}/charging-sessions/${sessionId}/events`;
    const streams = [await openSse(url, token, {}, { ca }), await openSse(url, token, {}, { ca })];
    for (const sse of streams) {
      assert.equal(sse.status, 200);
      await sse.waitForComments(2); // connected, then a heartbeat
    }

    // This process moves the session on, as another instance's charging module would: the service streams it.
    const clock = manualClock(new Date());
    const ctx = { db: database.db, clock, payments: { getHolds: async () => new Map() }, sessionCosts: async () => new Map() };
    const active = await changeStatus(ctx, database.db, sessionId, 'chargingReported');
    assert.equal(active?.status, 'active');
    const { rows: events } = await database.db.query<{ seq: number; body: string }>('SELECT seq, body::text AS body FROM client_events WHERE session_id = $1', [
      sessionId,
    ]);
    assert.equal(events.length, 1);
    for (const sse of streams) {
      const [event] = await sse.waitForEvents(1);
      assert.deepEqual(event, { id: String(events[0]?.seq), event: 'charging_session.active', data: events[0]?.body });
    }

    // SIGTERM with both streams open: they end (cleanly, not cut off) and the process exits, long before the grace period.
    const stopping = Date.now();
    child.kill('SIGTERM');
    const [code, ...ends] = await Promise.all([service.exited, ...streams.map((s) => s.ended)]);
    const took = Date.now() - stopping;
    assert.equal(code, 0, output.join(''));
    assert.deepEqual(ends, ['end', 'end']);
    assert.ok(took < GRACE_MS, `exited ${took} ms after SIGTERM (grace ${GRACE_MS} ms)`);
  });
});

/** POSTs an empty user over HTTPS with the service's own certificate. */
async function fetchJson(url: string, token: string, ca: string): Promise<{ id: string }> {
  const { request } = await import('node:https');
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', ca, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(body)) : reject(new Error(`${res.statusCode}: ${body}`))));
    });
    req.on('error', reject);
    req.end('{}');
  });
}
