// Outbound HTTPS cost: what one OCPI call (src/ocpi-protocol/client.ts) and
// one webhook delivery of the Stripe sandbox (src/sandbox/stripe/webhooks.ts)
// cost this process in CPU and memory, against our own HTTPS server (the
// service's dual-protocol server with its keep-alive settings) in a child
// process, with the self-signed certificate pinned as the service pins it.
// Figures: CPU ms per call (user + system of this process), TLS handshakes
// the server saw per call (1.0 = a new connection every call), RSS growth per
// 1,000 calls after gc.
//
//   npm run bench:outbound                 # 3 runs x 2,000 calls per client and concurrency, about 1 min
//   npm run bench:outbound -- --calls 500  # fewer calls
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ocpiRequest } from '../src/ocpi-protocol/client.ts';
import { createDualProtocolServer, ensureCertificate } from '../src/platform/http/tls.ts';
import { postWebhook } from '../src/sandbox/stripe/webhooks.ts';

const gc = (globalThis as { gc?: () => void }).gc;

async function serve(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-outbound-'));
  const material = await ensureCertificate({ certFile: path.join(dir, 'cert.pem'), keyFile: path.join(dir, 'key.pem'), generated: true });
  let handshakes = 0;
  const body = JSON.stringify({ data: [], status_code: 1000, status_message: 'Success', timestamp: new Date().toISOString() });
  const server = createDualProtocolServer(
    material,
    (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    },
    { firstByteMs: 10_000, headersMs: 30_000, requestMs: 300_000, keepAliveMs: 72_000 },
  );
  server.on('secureConnection', () => handshakes++);
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.send?.({ port, cert: material.cert });
  });
  process.on('message', (message: string) => {
    if (message === 'handshakes') process.send?.({ handshakes });
    if (message === 'stop') {
      server.close(() => rm(dir, { recursive: true, force: true }).then(() => process.exit(0)));
      server.closeIdleConnections();
    }
  });
}

function ask<T>(child: ChildProcess, message: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (answer) => resolve(answer as T));
    child.send(message);
  });
}

interface Figures {
  cpuMsPerCall: number;
  handshakesPerCall: number;
  rssMiBPer1000: number;
  callsPerSecond: number;
}

async function measure(child: ChildProcess, calls: number, concurrency: number, call: () => Promise<void>): Promise<Figures> {
  // Warm up (module loading, JIT), then measure from a collected heap.
  for (let i = 0; i < 20; i++) await call();
  gc?.();
  const before = { cpu: process.cpuUsage(), rss: process.memoryUsage().rss, handshakes: (await ask<{ handshakes: number }>(child, 'handshakes')).handshakes };
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < calls) await call();
    }),
  );
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(before.cpu);
  gc?.();
  const handshakes = (await ask<{ handshakes: number }>(child, 'handshakes')).handshakes - before.handshakes;
  return {
    cpuMsPerCall: (cpu.user + cpu.system) / 1000 / calls,
    handshakesPerCall: handshakes / calls,
    rssMiBPer1000: ((process.memoryUsage().rss - before.rss) / 2 ** 20 / calls) * 1000,
    callsPerSecond: (calls / elapsed) * 1000,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '2000' }, runs: { type: 'string', default: '3' } } });
  const calls = Number(values.calls);
  const runs = Number(values.runs);
  if (!gc) console.log('(run with --expose-gc for memory figures: npm run bench:outbound does)');
  const child = fork(import.meta.filename, ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port, cert } = await new Promise<{ port: number; cert: string }>((resolve) =>
    child.once('message', (m) => resolve(m as { port: number; cert: string })),
  );
  const url = `https://127.0.0.1:${port}`;
  const clients: [string, () => Promise<void>][] = [
    [
      'OCPI call (pinned certificate)',
      async () => {
        const reply = await ocpiRequest({ token: 'bench', pinnedCertificatePem: cert }, { method: 'GET', url: `${url}/ocpi/2.2.1/locations`, retries: 0 });
        if (reply.status !== 200) throw new Error(`answered ${reply.status}`);
      },
    ],
    [
      'Stripe sandbox webhook (pinned certificate)',
      async () => {
        const result = await postWebhook({ url: `${url}/webhooks/stripe`, pinnedCertificatePem: cert }, '{"id":"evt_bench"}', 't=1,v1=x');
        if (result.status !== 200) throw new Error(`delivery: ${result.status} ${result.error}`);
      },
    ],
  ];
  const rows: string[] = [];
  try {
    for (const [name, call] of clients) {
      for (const concurrency of [1, 10]) {
        const figures: Figures[] = [];
        for (let run = 0; run < runs; run++) figures.push(await measure(child, calls, concurrency, call));
        const pick = (key: keyof Figures) => median(figures.map((f) => f[key]));
        const row = `| ${name} | ${concurrency} | ${pick('cpuMsPerCall').toFixed(2)} | ${pick('handshakesPerCall').toFixed(3)} | ${gc ? pick('rssMiBPer1000').toFixed(1) : 'n/a'} | ${pick('callsPerSecond').toFixed(0)} |`;
        console.log(row);
        rows.push(row);
      }
    }
  } finally {
    child.send('stop');
  }
  console.log(`\nMedians of ${runs} runs x ${calls} calls (target: <= 1.5 ms CPU per outbound call; memory must not grow):\n`);
  console.log('| client | concurrency | CPU ms/call | TLS handshakes/call | RSS MiB per 1,000 calls | calls/s |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
}

if (process.argv.includes('--serve')) await serve();
else await main();
