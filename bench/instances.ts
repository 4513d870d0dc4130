// Several instances behind nginx: `npm run bench:instances [-- --instances N --duration S]`.
//
// Runs the README's "Running several instances" set-up on loopback and measures it:
// a throw-away PostgreSQL (the embedded binaries), N service processes (default 3)
// with TRUST_PROXY on one DATABASE_URL and one signing key (JWT_PRIVATE_KEY_FILE),
// and nginx with deploy/nginx.conf as it is (only its ports, certificate and log
// directory replaced) terminating TLS in front of them. Then, through nginx and
// against the instances one by one:
//  1. users created through one instance are read through every other;
//  2. a token revoked with the CLI is refused by every instance, and how soon;
//  3. an Idempotency-Key replayed on another instance, and the same request sent
//     to all instances at once: one user, every answer the same;
//  4. throughput through nginx (autocannon), and how requests spread over the
//     instances (nginx's access log);
//  5. one instance killed (SIGKILL) under that load: what clients saw.
// A measuring tool, not a test: it prints figures and exits non-zero only when a
// behaviour above is wrong. It needs nginx (Debian: apt-get install -y nginx).

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { type Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import autocannon from 'autocannon';
import { startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';
import { freePort } from '../src/platform/free-port.ts';
import { ensureCertificate } from '../src/platform/http/tls.ts';

const exec = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');

const { values: argv } = parseArgs({
  options: {
    instances: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    help: { type: 'boolean', default: false },
  },
});
if (argv.help) {
  process.stdout.write('npm run bench:instances -- [--instances N (2..8, default 3)] [--duration SECONDS (load phases, default 10)]\n');
  process.exit(0);
}
const INSTANCES = Number(argv.instances);
const DURATION_S = Number(argv.duration);
if (!Number.isInteger(INSTANCES) || INSTANCES < 2 || INSTANCES > 8) throw new Error('--instances must be 2..8');
if (!Number.isInteger(DURATION_S) || DURATION_S < 2) throw new Error('--duration must be an integer >= 2');

const say = (line: string) => process.stdout.write(`${line}\n`);
const problems: string[] = [];
function expect(ok: boolean, what: string): void {
  say(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) problems.push(what);
}

// ---------------------------------------------------------------------------
// nginx

async function nginxVersion(): Promise<string | undefined> {
  for (const binary of ['nginx', '/usr/sbin/nginx']) {
    try {
      const { stderr, stdout } = await exec(binary, ['-v']);
      return `${binary}: ${(stderr || stdout).trim()}`;
    } catch {}
  }
  return undefined;
}

/** deploy/nginx.conf with this run's ports, certificate and log directory; every replaced piece must be there. */
async function nginxConfig(options: { listenPort: number; upstreams: number[]; cert: string; key: string; logDir: string }): Promise<string> {
  let text = await readFile(path.join(root, 'deploy/nginx.conf'), 'utf8');
  const replace = (pattern: RegExp, by: string | ((...groups: string[]) => string)) => {
    if (!pattern.test(text)) throw new Error(`deploy/nginx.conf no longer has ${pattern}: update bench/instances.ts with it`);
    text = typeof by === 'string' ? text.replace(pattern, by) : text.replace(pattern, by);
  };
  replace(/listen 443 ssl;/, `listen 127.0.0.1:${options.listenPort} ssl;`);
  replace(/( *)server 127\.0\.0\.1:8081 (.*);\n(?: *server 127\.0\.0\.1:808\d .*;\n)*/, (_m: string, indent: string, params: string) =>
    options.upstreams.map((port) => `${indent}server 127.0.0.1:${port} ${params};\n`).join(''),
  );
  replace(/ssl_certificate +\S+;/, `ssl_certificate ${options.cert};`);
  replace(/ssl_certificate_key +\S+;/, `ssl_certificate_key ${options.key};`);
  replace(/\/var\/log\/nginx\//, `${options.logDir}/`);
  return text;
}

// ---------------------------------------------------------------------------
// HTTP

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON read by key
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

function call(
  base: string,
  method: string,
  pathname: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string>; ca?: string; agent?: HttpAgent } = {},
): Promise<Answer> {
  const url = new URL(pathname, base);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    ...(payload ? { 'content-type': 'application/json' } : {}),
    ...options.headers,
  };
  const make = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = make(url, { method, headers, ...(options.agent ? { agent: options.agent } : {}), ...(options.ca ? { ca: options.ca } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {}
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

// ---------------------------------------------------------------------------
// Processes

interface Instance {
  port: number;
  base: string;
  child: ChildProcess;
  output: string[];
  exited: Promise<void>;
}

const children: ChildProcess[] = [];

function startInstance(port: number, env: Record<string, string>): Instance {
  const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { port, base: `http://127.0.0.1:${port}`, child, output, exited };
}

async function waitReady(instance: Instance, timeoutMs = 120_000): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (instance.child.exitCode !== null) throw new Error(`instance on ${instance.port} exited:\n${instance.output.join('')}`);
    const ready = await call(instance.base, 'GET', '/readyz').then(
      (a) => a.status === 200,
      () => false,
    );
    if (ready) return performance.now() - started;
    await sleep(100);
  }
  throw new Error(`instance on ${instance.port} not ready within ${timeoutMs} ms:\n${instance.output.join('')}`);
}

async function cli(env: Record<string, string>, ...args: string[]): Promise<string> {
  const { stdout } = await exec(process.execPath, [path.join(root, 'bin/charging-access.js'), ...args], { cwd: root, env: { ...process.env, ...env } });
  return stdout;
}

// ---------------------------------------------------------------------------

const version = await nginxVersion();
if (!version) {
  process.stderr.write(
    'nginx is missing: this bench runs deploy/nginx.conf in a real nginx. Install it (Debian/Ubuntu: apt-get install -y nginx; ' +
      'the package may leave a system nginx running on port 80: this bench never touches it) and run it again.\n',
  );
  process.exit(2);
}
say(`${version}; ${INSTANCES} instances; ${os.cpus().length} cores`);

const tmp = await mkdtemp(path.join(os.tmpdir(), 'charging-access-instances-'));
await chmod(tmp, 0o755); // the embedded server's non-root user must reach it
let nginx: ChildProcess | undefined;
let stopPostgres: (() => Promise<void>) | undefined;
try {
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), role: 'cli', log: () => {} });
  stopPostgres = () => embedded.stop();
  say(`PostgreSQL (embedded binaries) in ${tmp}/pg`);

  // One signing key for every instance and the CLI.
  const keyFile = path.join(tmp, 'operator-signing-key.pem');
  await writeFile(keyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  // The proxy's certificate (a self-signed one for localhost here; a real one in production).
  const proxyTls = { certFile: path.join(tmp, 'proxy', 'cert.pem'), keyFile: path.join(tmp, 'proxy', 'key.pem') };
  await ensureCertificate({ ...proxyTls, generated: true });
  const ca = await readFile(proxyTls.certFile, 'utf8');

  const nginxPort = await freePort();
  const ports = await Promise.all(Array.from({ length: INSTANCES }, () => freePort()));
  const publicBase = `https://localhost:${nginxPort}`;
  const shared = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    TRUST_PROXY: 'true',
    PUBLIC_BASE_URL: publicBase,
    DATABASE_URL: embedded.url,
    JWT_PRIVATE_KEY_FILE: keyFile,
    PAYMENTS_SANDBOX: 'true',
    CPO_SANDBOX: 'false',
    STATIONS_DEFAULT_LOCATIONS: '2000',
    LOG_LEVEL: 'warn',
  };
  const instanceEnv = (i: number) => ({
    ...shared,
    PORT: String(ports[i]),
    DATA_DIR: path.join(tmp, `instance-${i + 1}`),
    DEMO_CLIENT: i === 0 ? 'true' : 'false',
  });

  // The first instance migrates and loads the first catalogue; the others start together after it.
  say('\n== start-up');
  const instances: Instance[] = [startInstance(ports[0] as number, instanceEnv(0))];
  say(`  instance 1 (migrations, catalogue of 2000 locations, demo client) ready in ${Math.round(await waitReady(instances[0] as Instance))} ms`);
  for (let i = 1; i < INSTANCES; i++) instances.push(startInstance(ports[i] as number, instanceEnv(i)));
  const readyMs = await Promise.all(instances.slice(1).map((instance) => waitReady(instance)));
  say(`  instances 2..${INSTANCES} ready in ${readyMs.map((ms) => Math.round(ms)).join(', ')} ms (started together)`);

  const logDir = path.join(tmp, 'nginx', 'logs');
  await mkdir(logDir, { recursive: true });
  const confFile = path.join(tmp, 'nginx', 'nginx.conf');
  await writeFile(confFile, await nginxConfig({ listenPort: nginxPort, upstreams: ports, cert: proxyTls.certFile, key: proxyTls.keyFile, logDir }));
  nginx = spawn(
    (version.split(':')[0] as string) || 'nginx',
    [
      '-p',
      path.join(tmp, 'nginx'),
      '-c',
      confFile,
      '-g',
      `daemon off; pid ${path.join(tmp, 'nginx', 'nginx.pid')}; error_log ${path.join(logDir, 'error.log')};`,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  children.push(nginx);
  for (let tries = 0; ; tries++) {
    const up = await call(publicBase, 'GET', '/readyz', { ca }).then(
      (a) => a.status === 200,
      () => false,
    );
    if (up) break;
    if (tries > 100 || nginx.exitCode !== null) throw new Error('nginx did not start (see its output above)');
    await sleep(100);
  }
  say(`  nginx on ${publicBase} -> ${ports.map((p) => `127.0.0.1:${p}`).join(', ')}`);

  const cliEnv = { ...shared, DATA_DIR: path.join(tmp, 'instance-1') };
  const client = JSON.parse(await cli(cliEnv, 'clients', 'create', '--name', 'bench', '--json')) as { client_id: string; token: string };
  const token = client.token;
  // What the proxy adds; the instances refuse plain HTTP without it (403 https_required).
  const asProxy = { 'x-forwarded-proto': 'https' };
  const agent = new HttpsAgent({ keepAlive: true, ca });

  // 1. Users across instances.
  say('\n== users: created through one instance, read through the others');
  let seen = 0;
  let expected = 0;
  const perInstance = 10;
  for (const [i, instance] of instances.entries()) {
    for (let n = 0; n < perInstance; n++) {
      const created = await call(instance.base, 'POST', '/api/v1/users/', {
        token,
        headers: asProxy,
        body: { locale: 'en', custom_properties: { external_id: `i${i}-${n}` } },
      });
      if (created.status !== 201) throw new Error(`create on instance ${i + 1}: ${created.status} ${JSON.stringify(created.body)}`);
      for (const other of instances) {
        if (other === instance) continue;
        expected++;
        const got = await call(other.base, 'GET', `/api/v1/users/${created.body.id}/`, { token, headers: asProxy });
        if (got.status === 200 && got.body.id === created.body.id) seen++;
      }
    }
  }
  expect(seen === expected, `${seen}/${expected} reads of a user created on another instance found it at once`);
  const listed = await call(publicBase, 'GET', '/api/v1/users/?page_size=1', { token, ca });
  expect(listed.body?.count === INSTANCES * perInstance, `through nginx the client has ${listed.body?.count} users (${INSTANCES * perInstance} created)`);

  // 2. Revocation.
  say('\n== revocation: a token revoked with the CLI, refused by every instance');
  const issued = JSON.parse(await cli(cliEnv, 'tokens', 'issue', client.client_id, '--json')) as { token: string; token_id?: string; jti?: string };
  const jti = issued.token_id ?? issued.jti ?? (JSON.parse(Buffer.from(issued.token.split('.')[1] as string, 'base64url').toString()) as { jti: string }).jti;
  for (const instance of instances) {
    const warm = await call(instance.base, 'GET', '/api/v1/users/?page_size=1', { token: issued.token, headers: asProxy });
    if (warm.status !== 200) throw new Error(`the new token on ${instance.port}: ${warm.status}`);
  }
  const revokedAt = performance.now();
  await cli(cliEnv, 'tokens', 'revoke', jti);
  const cliMs = performance.now() - revokedAt;
  const refusedAfter = await Promise.all(
    instances.map(async (instance) => {
      for (;;) {
        const answer = await call(instance.base, 'GET', '/api/v1/users/?page_size=1', { token: issued.token, headers: asProxy });
        if (answer.status === 401) return performance.now() - revokedAt;
        if (performance.now() - revokedAt > 10_000) return Number.POSITIVE_INFINITY;
        await sleep(50);
      }
    }),
  );
  const worst = Math.max(...refusedAfter);
  say(
    `  refused (401) after ${refusedAfter.map((ms) => `${Math.round(ms)} ms`).join(', ')} from the start of the CLI command (which took ${Math.round(cliMs)} ms)`,
  );
  expect(worst <= 5_000, `every instance refuses the revoked token within 5 s (worst ${Math.round(worst)} ms)`);

  // 3. Idempotency across instances.
  say('\n== Idempotency-Key across instances');
  const key = `bench-${randomUUID()}`;
  const body = { locale: 'de', custom_properties: { external_id: 'idem-across' } };
  const first = await call((instances[0] as Instance).base, 'POST', '/api/v1/users/', { token, headers: { ...asProxy, 'idempotency-key': key }, body });
  const replays = await Promise.all(
    instances.slice(1).map((instance) => call(instance.base, 'POST', '/api/v1/users/', { token, headers: { ...asProxy, 'idempotency-key': key }, body })),
  );
  expect(
    first.status === 201 && replays.every((r) => r.status === 201 && r.headers['idempotent-replayed'] === 'true' && r.body.id === first.body.id),
    `replayed on instances 2..${INSTANCES}: ${replays.map((r) => `${r.status}${r.headers['idempotent-replayed'] ? ' replayed' : ''}`).join(', ')}`,
  );
  const stormKey = `bench-${randomUUID()}`;
  const stormBody = { locale: 'en', custom_properties: { external_id: 'idem-storm' } };
  const storm = await Promise.all(
    Array.from({ length: 5 * INSTANCES }, (_, n) =>
      call((instances[n % INSTANCES] as Instance).base, 'POST', '/api/v1/users/', {
        token,
        headers: { ...asProxy, 'idempotency-key': stormKey },
        body: stormBody,
      }),
    ),
  );
  const statuses = storm.map((a) => a.status);
  const ids = new Set(storm.filter((a) => a.status === 201).map((a) => a.body.id));
  const originals = storm.filter((a) => a.status === 201 && !a.headers['idempotent-replayed']).length;
  expect(
    statuses.every((s) => s === 201) && ids.size === 1 && originals === 1,
    `${storm.length} identical POSTs at once over ${INSTANCES} instances: ${statuses.filter((s) => s === 201).length}x 201, ${originals} original, ${ids.size} user`,
  );
  const found = await call(publicBase, 'GET', '/api/v1/users/?search=idem-storm', { token, ca, agent });
  expect(found.body?.count === 1, `one user idem-storm (${found.body?.count})`);

  // 4. Throughput through nginx, and the spread over the instances.
  say(`\n== load through nginx: GET /api/v1/users/?page_size=5, 32 connections, ${DURATION_S} s`);
  const accessLog = path.join(logDir, 'charging-access.access.log');
  const logStart = (await readFile(accessLog, 'utf8')).length;
  const load = (seconds: number) =>
    autocannon({
      url: `${publicBase}/api/v1/users/?page_size=5`,
      connections: 32,
      duration: seconds,
      headers: { authorization: `Bearer ${token}` },
      tlsOptions: { ca },
    } as autocannon.Options);
  const steady = await load(DURATION_S);
  say(
    `  ${Math.round(steady.requests.average)} req/s, latency p50 ${steady.latency.p50} ms, p99 ${steady.latency.p99} ms; ` +
      `2xx ${steady['2xx']}, non-2xx ${steady.non2xx}, errors ${steady.errors}`,
  );
  const spread = new Map<string, number>();
  for (const line of (await readFile(accessLog, 'utf8')).slice(logStart).split('\n')) {
    const upstream = /upstream=(\S+)/.exec(line)?.[1];
    if (upstream) spread.set(upstream, (spread.get(upstream) ?? 0) + 1);
  }
  say(`  per instance: ${[...spread.entries()].map(([u, n]) => `${u} ${n}`).join(', ')}`);
  expect(steady.non2xx === 0 && steady.errors === 0, 'no error answers');
  expect(spread.size === INSTANCES, `every instance served (${spread.size}/${INSTANCES})`);

  // 5. An instance killed under load.
  say(`\n== instance ${INSTANCES} killed (SIGKILL) ${Math.round(DURATION_S / 2)} s into ${DURATION_S} s of the same load`);
  const victim = instances[INSTANCES - 1] as Instance;
  const killing = sleep((DURATION_S / 2) * 1000).then(() => victim.child.kill('SIGKILL'));
  const during = await load(DURATION_S);
  await killing;
  say(
    `  ${Math.round(during.requests.average)} req/s, p99 ${during.latency.p99} ms; 2xx ${during['2xx']}, non-2xx ${during.non2xx}, errors ${during.errors} ` +
      '(nginx resends a GET that found the instance gone to another one)',
  );
  expect(during.non2xx === 0 && during.errors === 0, 'clients saw no error while an instance died');
} finally {
  nginx?.kill('SIGQUIT');
  for (const child of children) if (child !== nginx && child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((r) => child.once('exit', r)) : undefined)));
  await stopPostgres?.().catch(() => {});
  await rm(tmp, { recursive: true, force: true });
}

say(problems.length === 0 ? '\nall behaviours as expected' : `\n${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
process.exit(problems.length === 0 ? 0 : 1);
