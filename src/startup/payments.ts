// Payments: Stripe when its keys are configured, else the built-in Stripe
// sandbox, which delivers its webhooks back to this very service.
import type { AddressInfo } from 'node:net';
import type { PaymentProcessor } from '../modules/payments/processor.ts';
import { createStripeProcessor, STRIPE_API_VERSION } from '../modules/payments/stripe-processor.ts';
import { HANDLED_EVENT_TYPES } from '../modules/payments/webhooks.ts';
import type { Database } from '../platform/db.ts';
import type { HttpApp } from '../platform/http/server.ts';
import type { TlsMaterial } from '../platform/http/tls.ts';
import { listening } from '../platform/lifecycle.ts';
import type { Metrics } from '../platform/metrics.ts';
import { createStripeSandbox, type StripeSandbox } from '../sandbox/stripe/index.ts';
import { pendingDeliveries } from '../sandbox/stripe/store.ts';
import type { StartupContext } from './context.ts';

/** The processor, and the built-in sandbox when it is the one (listening on STRIPE_SANDBOX_PORT). */
export async function startPaymentProcessor(
  { config, log, clock, stops }: StartupContext,
  { db, metrics }: { db: Database; metrics: Metrics | undefined },
): Promise<{ processor: PaymentProcessor; sandbox: StripeSandbox | undefined }> {
  // Payments: Stripe when its keys are configured, else the built-in Stripe sandbox (in production only with
  // PAYMENTS_SANDBOX=true: requirePaymentProcessor refused to start otherwise); the same adapter either way.
  const stripe = config.stripe;
  if (!stripe.sandbox && stripe.secretKey && stripe.publishableKey && stripe.webhookSecret) {
    const processor = createStripeProcessor({
      secretKey: stripe.secretKey,
      publishableKey: stripe.publishableKey,
      webhookSecret: stripe.webhookSecret,
      apiBase: stripe.apiBase,
      metrics,
    });
    return { processor, sandbox: undefined };
  }
  const sandboxLog = log.child({ component: 'stripe-sandbox' });
  const stripeSandbox = await createStripeSandbox({
    db,
    clock,
    apiVersion: STRIPE_API_VERSION,
    browserBaseUrl: config.publicBaseUrl,
    log: (level, message, fields) => sandboxLog[level](fields ?? {}, message),
  });
  stops.add('Stripe sandbox', () => stripeSandbox.close());
  const apiBase = await listening('the built-in Stripe sandbox', 'STRIPE_SANDBOX_PORT', () => stripeSandbox.listen({ port: stripe.sandboxPort }));
  const processor = createStripeProcessor({ ...stripeSandbox.keys, apiBase, sandbox: true, metrics });
  metrics?.watch({ stripeWebhooks: () => pendingDeliveries(db, clock.now()) });
  log.info({ url: apiBase }, 'payments: no STRIPE_SECRET_KEY, so the built-in Stripe sandbox is the processor');
  if (config.mode === 'production') log.warn('NODE_ENV=production with PAYMENTS_SANDBOX=true: payments go to the built-in sandbox and move no money');
  return { processor, sandbox: stripeSandbox };
}

/** Points the sandbox's webhooks at the service once it listens, then starts the sandbox's background work. */
export async function connectSandboxWebhooks(
  { config }: StartupContext,
  { sandbox, server, tls }: { sandbox: StripeSandbox; server: HttpApp; tls: TlsMaterial | undefined },
): Promise<void> {
  // The sandbox delivers its webhooks to this very listener, over loopback, pinned to our own certificate.
  const { port } = server.server.address() as AddressInfo;
  const loopback = ['0.0.0.0', '::', '127.0.0.1', 'localhost'].includes(config.host)
    ? '127.0.0.1'
    : config.host.includes(':')
      ? `[${config.host}]`
      : config.host;
  await sandbox.addWebhookEndpoint({
    url: `${tls ? 'https' : 'http'}://${loopback}:${port}/webhooks/stripe`,
    ...(tls ? { pinnedCertificatePem: tls.cert } : {}),
    ...(config.trustProxy ? { headers: { 'x-forwarded-proto': 'https' } } : {}),
    // As a Stripe dashboard endpoint of ours is set up (README): only what the payments module acts on.
    enabledEvents: HANDLED_EVENT_TYPES,
  });
  sandbox.startBackgroundWork();
}
