// The built-in Stripe-compatible sandbox: the subset of Stripe's REST API the
// service's Stripe adapter uses, served on its own loopback port with Stripe's
// semantics, its state in PostgreSQL (schema stripe_sandbox), signed webhook
// events delivered with retries, and the browser stand-in (browser.ts) that
// does what Stripe's frontend SDK would. It knows nothing of the service.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { backgroundFailures } from '../../platform/background.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { createEngine } from './engine.ts';
import { randomToken, stripeOrder } from './objects.ts';
import { createApiServer, IDEMPOTENCY_TTL_MS, type RecordedRequest } from './server.ts';
import * as store from './store.ts';
import { GIVE_UP_AFTER_MS, postWebhook, retryDelay, signatureHeader, type WebhookEndpoint } from './webhooks.ts';

export type { RecordedRequest } from './server.ts';
export type { DeliveryRecord, SandboxKeys } from './store.ts';
export type { WebhookEndpoint } from './webhooks.ts';

/** Stripe's hold: an uncaptured card authorization is canceled after 7 days. */
export const DEFAULT_HOLD_VALIDITY_MS = 7 * 24 * 3_600_000;
const REQUEST_LOG_SIZE = 2_000;
const DELIVERY_LEASE_MS = 60_000;

export interface StripeSandboxOptions {
  db: Database;
  clock: Clock;
  /** The API version events are rendered in (the account's default version). */
  apiVersion: string;
  holdValidityMs?: number;
  /** Base URL of the service that mounts the browser stand-in (shown in next_action URLs). */
  browserBaseUrl?: string;
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export interface DueWorkResult {
  expired: number;
  delivered: number;
  retried: number;
}

function freshKeys(): store.SandboxKeys {
  return {
    secretKey: `sk_test_sandbox${randomToken(32)}`,
    publishableKey: `pk_test_sandbox${randomToken(32)}`,
    webhookSecret: `whsec_${randomToken(32)}`,
  };
}

export async function createStripeSandbox(options: StripeSandboxOptions) {
  const { db, clock } = options;
  const log = options.log ?? (() => {});
  const backgroundFailed = backgroundFailures(log, 'sandbox background work failed');
  const keys = await store.accountKeys(db, freshKeys(), clock.now());
  const requestLog: RecordedRequest[] = [];
  const engine = createEngine({
    clock,
    apiVersion: options.apiVersion,
    holdValidityMs: options.holdValidityMs ?? DEFAULT_HOLD_VALIDITY_MS,
    fingerprintKey: keys.webhookSecret,
    browserBaseUrl: options.browserBaseUrl,
    // In PostgreSQL, not in this process: any process creating an event or delivering it sees every endpoint as registered.
    endpoints: (tx) => store.webhookEndpointUrls(tx),
  });

  let server: Server | undefined;
  let url: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<DueWorkResult> | undefined;
  let again = false;
  let closed = false;

  async function expireDue(): Promise<number> {
    let count = 0;
    for (const id of await store.dueExpiries(db, clock.now(), 100)) {
      await db.transaction((tx) => engine.expireIfDue(tx, id));
      count++;
    }
    return count;
  }

  async function deliverDue(): Promise<{ delivered: number; retried: number }> {
    let delivered = 0;
    let retried = 0;
    for (;;) {
      const due = await store.claimDueDeliveries(db, clock.now(), DELIVERY_LEASE_MS, 20);
      if (due.length === 0) break;
      await Promise.all(
        due.map(async (delivery) => {
          const payload = JSON.stringify(stripeOrder(delivery.event), null, 2);
          const sentAt = clock.now();
          const result = await postWebhook(delivery.target, payload, signatureHeader(payload, keys.webhookSecret, Math.floor(sentAt.getTime() / 1000)));
          const ok = result.status !== null && result.status >= 200 && result.status < 300;
          const now = clock.now();
          const attempts = delivery.attempts + 1;
          const giveUp = !ok && now.getTime() - delivery.createdAt.getTime() >= GIVE_UP_AFTER_MS;
          const nextAttemptAt = ok || giveUp ? null : new Date(now.getTime() + retryDelay(attempts));
          await store.recordDeliveryAttempt(db, delivery, { delivered: ok, status: result.status, error: result.error, nextAttemptAt, at: now });
          if (ok) delivered++;
          else {
            retried++;
            log('warn', 'webhook delivery failed', {
              event: delivery.eventId,
              endpoint: delivery.endpoint,
              status: result.status,
              error: result.error,
              attempts,
              giveUp,
            });
          }
        }),
      );
      // Deliveries that failed just now are due again only later; those claimed are leased.
    }
    return { delivered, retried };
  }

  /** Lapses due authorizations and delivers due webhooks; concurrent calls share one pass (and one more if asked meanwhile). */
  function runDueWork(): Promise<DueWorkResult> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      const total: DueWorkResult = { expired: 0, delivered: 0, retried: 0 };
      do {
        again = false;
        total.expired += await expireDue();
        const sent = await deliverDue();
        total.delivered += sent.delivered;
        total.retried += sent.retried;
      } while (again && !closed);
      return total;
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  function kick(): void {
    if (timer && !closed) setImmediate(() => void runDueWork().catch(backgroundFailed));
  }

  /** Runs a browser stand-in operation in a transaction, then lets its events go out. */
  async function inTransaction<T>(work: (tx: import('../../platform/db.ts').Queryable) => Promise<T>): Promise<T> {
    const result = await db.transaction(work);
    kick();
    return result;
  }

  return {
    keys,
    engine,
    /** Requests received, oldest first (the last 2000). */
    requestLog: requestLog as readonly RecordedRequest[],
    get url(): string {
      if (!url) throw new Error('the Stripe sandbox is not listening');
      return url;
    },

    async listen(listenOptions: { host?: string; port: number }): Promise<string> {
      const host = listenOptions.host ?? '127.0.0.1';
      server = createApiServer({
        db,
        clock,
        engine,
        keys,
        defaultApiVersion: options.apiVersion,
        onCommitted: kick,
        onRequest: (request) => {
          requestLog.push(request);
          if (requestLog.length > REQUEST_LOG_SIZE) requestLog.splice(0, requestLog.length - REQUEST_LOG_SIZE);
        },
        onError: (error) => log('error', 'sandbox request failed', { err: error instanceof Error ? error.message : String(error) }),
      });
      server.keepAliveTimeout = 5_000;
      const listening = server;
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(listenOptions.port, host, () => resolve());
      });
      const { port } = listening.address() as AddressInfo;
      url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
      return url;
    },

    /** Every event from now on is also delivered to this endpoint (by any sandbox process on this database); the same URL again updates it. */
    addWebhookEndpoint: (endpoint: WebhookEndpoint): Promise<void> => store.upsertWebhookEndpoint(db, endpoint, clock.now()),

    /** Delivers and lapses in the background: at once after each change, and every `intervalMs`. */
    startBackgroundWork(intervalMs = 500): void {
      if (timer) return;
      timer = setInterval(() => void runDueWork().catch(backgroundFailed), intervalMs);
      timer.unref();
      kick();
    },

    runDueWork,
    deliveries: (eventId?: string) => store.listDeliveries(db, eventId),
    /** Forgets Idempotency-Key results past their 24 hours and finished deliveries; run periodically. */
    purgeExpired: () => store.purgeExpired(db, new Date(clock.now().getTime() - IDEMPOTENCY_TTL_MS)),

    browser: {
      confirmSetupIntent: (id: string, input: Parameters<typeof engine.browserConfirmSetupIntent>[2]) =>
        inTransaction((tx) => engine.browserConfirmSetupIntent(tx, id, input)),
      authenticateSetupIntent: (id: string, clientSecret: string, outcome: 'approve' | 'fail') =>
        inTransaction((tx) => engine.browserAuthenticateSetupIntent(tx, id, clientSecret, outcome)),
      authenticatePaymentIntent: (id: string, clientSecret: string, outcome: 'approve' | 'fail') =>
        inTransaction((tx) => engine.browserAuthenticatePaymentIntent(tx, id, clientSecret, outcome)),
      retrieve: (kind: 'setup_intent' | 'payment_intent', id: string, clientSecret: string) =>
        inTransaction((tx) => engine.browserRetrieve(tx, kind, id, clientSecret)),
    },

    async close(): Promise<void> {
      closed = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await running?.catch(() => {});
      if (server) {
        const closing = server;
        await new Promise<void>((resolve) => {
          closing.close(() => resolve());
          closing.closeAllConnections();
        });
      }
    },
  };
}

export type StripeSandbox = Awaited<ReturnType<typeof createStripeSandbox>>;
