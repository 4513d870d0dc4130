// `npm start` with no Stripe key, as a client developer meets it: the real
// process wires the Stripe adapter to the built-in sandbox, the sandbox
// delivers its webhooks to the service over HTTPS (pinned to the service's own
// certificate), and a restart keeps the sandbox's objects and our mirror. In
// production, no key is a configuration error unless PAYMENTS_SANDBOX=true.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

const root = path.resolve(import.meta.dirname, '..');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers read by key
  body: any;
  text: string;
}

interface Service {
  child: ChildProcess;
  output: string[];
  ready: Promise<void>;
  exited: Promise<number | null>;
}

/**
 * Stops a service that is still running the way an operator would (SIGTERM),
 * so that it stops its embedded PostgreSQL; a killed service would leave it
 * running (and holding our pipes).
 */
async function stopQuietly(service: Service): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  await Promise.race([service.exited, sleep(30_000)]);
}

function start(env: Record<string, string>): Service {
  const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 60 s:\n${output.join('')}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (output.join('').includes('is ready at')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${output.join('')}`));
    });
  });
  return { child, output, ready, exited };
}

describe('npm start without Stripe keys: the built-in sandbox', { timeout: 180_000 }, () => {
  let dataDir: string;
  let env: Record<string, string>;
  let base: string;
  let ca: string;
  let token: string;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-payments-'));
    await chmod(dataDir, 0o755);
    const port = await freePort();
    base = `https://localhost:${port}`;
    env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: '',
      NODE_ENV: 'development',
      STATIONS_DEFAULT_LOCATIONS: '0',
      CPO_SANDBOX: 'false',
      STRIPE_SECRET_KEY: '',
      STRIPE_PUBLISHABLE_KEY: '',
      STRIPE_WEBHOOK_SECRET: '',
    };
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  function call(method: string, url: string, options: { auth?: boolean; body?: unknown } = {}): Promise<Answer> {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    return new Promise((resolve, reject) => {
      const req = request(
        `${base}${url}`,
        {
          method,
          ca,
          headers: {
            ...(options.auth === false ? {} : { authorization: `Bearer ${token}` }),
            ...(payload ? { 'content-type': 'application/json' } : {}),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, text, body: /json/.test(String(res.headers['content-type'])) && text ? JSON.parse(text) : undefined }),
          );
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  test('connect a card through the sandbox routes, webhooks arrive over HTTPS, and a restart keeps it all', async () => {
    const first = start(env);
    try {
      await first.ready;
      assert.match(
        first.output.join(''),
        /Payments run on the built-in Stripe sandbox: confirm setup intents and 3-D Secure at https:\/\/localhost:\d+\/sandbox\//,
      );
      ca = await readFile(path.join(dataDir, 'tls/localhost-cert.pem'), 'utf8');
      token = (await readFile(path.join(dataDir, 'demo-token'), 'utf8')).trim();

      const user = await call('POST', '/api/v1/users/', { body: { email: 'dev@example.com' } });
      assert.equal(user.status, 201, user.text);
      const userId = user.body.id as string;
      const intent = await call('GET', `/api/v1/users/${userId}/setup-intents/`);
      assert.equal(intent.status, 200, intent.text);
      assert.equal(intent.body.processor, 'stripe_sandbox');
      assert.match(intent.body.publishable_key, /^pk_test_/);
      const confirmed = await call('POST', `/sandbox/setup_intents/${intent.body.id}/confirm`, {
        auth: false,
        body: { client_secret: intent.body.client_secret, card_number: '4000002760003184' },
      });
      assert.equal(confirmed.body.status, 'requires_action', confirmed.text);
      const authenticated = await call('POST', `/sandbox/setup_intents/${intent.body.id}/authenticate`, {
        auth: false,
        body: { client_secret: intent.body.client_secret, outcome: 'approve' },
      });
      assert.equal(authenticated.body.status, 'succeeded', authenticated.text);
      const pm = authenticated.body.payment_method as string;

      // The sandbox's events reach /webhooks/stripe of the running service.
      const started = Date.now();
      // Both events, in whichever order their deliveries are handled.
      const handled = () => ['setup_intent.succeeded', 'payment_method.attached'].every((type) => first.output.join('').includes(`"event_type":"${type}"`));
      while (!handled() && Date.now() - started < 10_000) await sleep(100);
      const log = first.output.join('');
      assert.ok(log.includes('"event_type":"setup_intent.succeeded"'), 'the setup_intent.succeeded webhook was handled');
      assert.ok(log.includes('"event_type":"payment_method.attached"'));
      assert.ok(!log.includes('webhook delivery failed'), 'no delivery failed');

      const listed = await call('GET', `/api/v1/users/${userId}/payment-methods/`);
      assert.deepEqual(
        listed.body.results.map((m: { id: string; default: boolean; card: { last4: string } }) => [m.id, m.default, m.card.last4]),
        [[pm, true, '3184']],
      );
      assert.equal((await call('GET', '/sandbox/', { auth: false })).status, 200);

      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0);

      const second = start(env);
      try {
        await second.ready;
        const again = await call('GET', `/api/v1/users/${userId}/payment-methods/`);
        assert.equal(again.status, 200, again.text);
        assert.deepEqual(
          again.body.results.map((m: { id: string; default: boolean }) => [m.id, m.default]),
          [[pm, true]],
          'the sandbox still has the method the mirror points at',
        );
        const another = await call('GET', `/api/v1/users/${userId}/setup-intents/`);
        assert.equal(another.status, 200, another.text);
        assert.equal(another.body.publishable_key, intent.body.publishable_key, 'the sandbox keeps its keys');
        assert.equal((await call('DELETE', `/api/v1/users/${userId}/payment-methods/${pm}/`)).status, 204);
        assert.equal((await call('GET', `/api/v1/users/${userId}/payment-methods/`)).body.count, 0);
        second.child.kill('SIGINT');
        assert.equal(await second.exited, 0);
      } finally {
        await stopQuietly(second);
      }
    } finally {
      await stopQuietly(first);
    }
  });
});

describe('npm start in production without Stripe keys', () => {
  test('refuses to start (exit 2) with a configuration error naming the variables, before touching anything', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-payments-prod-'));
    try {
      const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
        cwd: root,
        env: {
          ...process.env,
          DATA_DIR: dataDir,
          PORT: String(await freePort()),
          HOST: '127.0.0.1',
          DATABASE_URL: '',
          NODE_ENV: 'production',
          STRIPE_SECRET_KEY: '',
          STRIPE_PUBLISHABLE_KEY: '',
          STRIPE_WEBHOOK_SECRET: '',
          PAYMENTS_SANDBOX: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.stdout?.resume();
      // Should it start after all, it is stopped (SIGTERM: it stops its database) and the test fails.
      const running = setTimeout(() => child.kill('SIGTERM'), 30_000);
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      clearTimeout(running);
      assert.equal(code, 2, stderr);
      assert.match(stderr, /^Configuration error: STRIPE_SECRET_KEY: is required in production/m);
      assert.match(stderr, /PAYMENTS_SANDBOX=true/);
      assert.match(stderr, /STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
