// The Stripe sandbox as a process of its own, for `npm run bench:charging -- --sandboxes apart`: the service then
// talks to it as to Stripe (STRIPE_SECRET_KEY, STRIPE_API_BASE), and its work no longer runs on the service's event
// loop nor counts in the service's CPU. Environment: DATABASE_URL (the service's database: the sandbox keeps its
// objects in its own schema there), WEBHOOK_URL (the service's /webhooks/stripe) and WEBHOOK_CERT_FILE (the
// certificate the service presents there, pinned; written by the service when it starts, so waited for).
// Prints one JSON line when it listens: { url, browserUrl, secretKey, publishableKey, webhookSecret } (the browser
// stand-in, what Stripe.js does with a client secret, listens on a port of its own), and a second one,
// { webhooks: 'registered' }, once the service's endpoint is registered. SIGTERM stops it.
import { readFile } from 'node:fs/promises';
import Fastify from 'fastify';
import { STRIPE_API_VERSION } from '../src/modules/payments/stripe-processor.ts';
import { HANDLED_EVENT_TYPES } from '../src/modules/payments/webhooks.ts';
import { systemClock } from '../src/platform/clock.ts';
import { createDatabase } from '../src/platform/db.ts';
import { migrate } from '../src/platform/migrations.ts';
import { sandboxBrowserRoutes } from '../src/sandbox/stripe/browser.ts';
import { createStripeSandbox } from '../src/sandbox/stripe/index.ts';
import { SANDBOX_POOL_SIZE } from '../src/sandbox-network.ts';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const db = createDatabase(required('DATABASE_URL'), { max: SANDBOX_POOL_SIZE, applicationName: 'bench-stripe-sandbox' });
// Started before the service: the sandbox's tables come with the service's migrations (taken under their lock).
await migrate(db);
const sandbox = await createStripeSandbox({
  db,
  clock: systemClock,
  apiVersion: STRIPE_API_VERSION,
  log: (level, message, fields) => process.stderr.write(`stripe sandbox ${level}: ${message} ${JSON.stringify(fields ?? {})}\n`),
});
const url = await sandbox.listen({ host: '127.0.0.1', port: 0 });
const browser = Fastify();
await browser.register(sandboxBrowserRoutes(sandbox));
const browserUrl = await browser.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url, browserUrl, ...sandbox.keys })}\n`);

// The service writes its certificate when it starts, after it read our keys: waited for at most 2 min.
const certFile = required('WEBHOOK_CERT_FILE');
const deadline = Date.now() + 120_000;
let cert = '';
while (!cert.includes('-----END CERTIFICATE-----')) {
  cert = await readFile(certFile, 'utf8').catch(() => '');
  if (cert.includes('-----END CERTIFICATE-----')) break;
  if (Date.now() > deadline) {
    process.stderr.write(`stripe sandbox: no certificate in ${certFile} within 2 min; stopping\n`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}
await sandbox.addWebhookEndpoint({ url: required('WEBHOOK_URL'), pinnedCertificatePem: cert, enabledEvents: HANDLED_EVENT_TYPES });
sandbox.startBackgroundWork();
process.stdout.write(`${JSON.stringify({ webhooks: 'registered' })}\n`);

process.once('SIGTERM', () => {
  void (async () => {
    await browser.close();
    await sandbox.close();
    await db.close();
    process.exit(0);
  })();
});
