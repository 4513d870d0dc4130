// The users benchmark's second measure of POST /api/v1/users/ (bench/users.ts): the service as `npm start` runs it
// (src/main.ts in a child process: HTTPS with its self-signed certificate, its request log lines written to a pipe
// this process drains, its hooks and limits), with its own database in the benchmark's PostgreSQL. This is the set-up
// issue 17 measured in (0.05-0.09 of /healthz, healthz 1,500-2,200 req/s); autocannon loads it over TLS, keep-alive.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { createServer } from 'node:net';
import path from 'node:path';
import type { Database } from '../src/platform/db.ts';

export interface ServiceUnderTest {
  baseUrl: string;
  token: string;
  /** CPU seconds (user + system) the service process has used so far. */
  cpuSeconds(): Promise<number>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** GET over HTTPS, trusting the service's self-signed certificate (loopback only). */
function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Starts src/main.ts on a database of its own (created here) and waits until /readyz answers 200. */
export async function startService(options: { db: Database; databaseUrl: string; dataDir: string }): Promise<ServiceUnderTest> {
  await options.db.query('CREATE DATABASE bench_service');
  const url = new URL(options.databaseUrl);
  url.pathname = '/bench_service';
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [new URL('../src/main.ts', import.meta.url).pathname], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      DATA_DIR: options.dataDir,
      DATABASE_URL: url.toString(),
      HOST: '127.0.0.1',
      PORT: String(port),
      STRIPE_SANDBOX_PORT: String(await freePort()),
      CPO_SANDBOX: 'false',
      STATIONS_DEFAULT_LOCATIONS: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      METRICS_PORT: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its log lines go where a log collector would read them: a pipe, drained.
  child.stdout?.resume();
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-2_000);
  });
  const baseUrl = `https://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while ((await status(`${baseUrl}/readyz`)) !== 200) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not become ready: ${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const token = (await readFile(path.join(options.dataDir, 'demo-token'), 'utf8')).trim();
  return {
    baseUrl,
    token,
    async cpuSeconds() {
      const stat = await readFile(`/proc/${child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
