// The service as several real processes on one test database: an instance
// behind a TLS-terminating proxy (TRUST_PROXY) prints a banner that works as
// printed, and the sandbox CPO network runs as its own process.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createTestDatabase, freePort } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '..');
const exec = promisify(execFile);

interface Proc {
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
  text(): string;
}

/** Spawns `node <args>` in the project with `env`, collecting its output. */
function start(args: string[], env: Record<string, string>, cwd = root): Proc {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited, text: () => output.join('') };
}

async function waitFor(proc: Proc, what: RegExp, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void proc.exited.then(() => {
    gone = true;
  });
  while (!what.test(proc.text())) {
    if (gone) throw new Error(`the process exited before printing ${what}:\n${proc.text()}`);
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms:\n${proc.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(proc: Proc | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return proc?.child.exitCode ?? null;
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  const code = await proc.exited;
  clearTimeout(timer);
  return code;
}

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;
const running: Proc[] = [];

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-procs-'));
});
after(async () => {
  for (const proc of running) await stop(proc, 'SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
  await database.drop();
});

function serviceEnv(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
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
    SHUTDOWN_GRACE_MS: '1000',
    ...extra,
  };
}

describe('behind a TLS-terminating proxy', { timeout: 120_000 }, () => {
  test('the banner shows PUBLIC_BASE_URL for clients, and its direct curl line works as printed', async () => {
    const port = await freePort();
    const service = start(['src/main.ts'], serviceEnv(port, { TRUST_PROXY: 'true', PUBLIC_BASE_URL: 'https://api.example.test' }));
    running.push(service);
    await waitFor(service, /is ready at[\s\S]*\n\n/);
    const banner = service.text();
    const tokenFile = path.join(dataDir, 'demo-token');
    assert.ok(banner.includes('Charging Access is ready at https://api.example.test through the proxy'), banner);
    assert.ok(banner.includes(`  curl -H "Authorization: Bearer $(cat ${tokenFile})" https://api.example.test/api/v1/users/\n`), banner);
    assert.doesNotMatch(banner, /curl --cacert/, 'the proxy serves its own certificate');
    const direct = /^ {2}(curl -H "X-Forwarded-Proto: https" .*)$/m.exec(banner)?.[1];
    assert.ok(direct?.endsWith(` http://localhost:${port}/api/v1/users/`), banner);
    // The line as a shell runs it: it answers the demo client's (empty) user list.
    const { stdout } = await exec('sh', ['-c', `${direct} -s -w '\\n%{http_code}'`], { cwd: root });
    const [body, status] = stdout.trim().split('\n');
    assert.equal(status, '200', stdout);
    assert.equal(JSON.parse(body ?? '').count, 0);
    assert.equal(await stop(service), 0);
  });
});
