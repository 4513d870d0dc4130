// The built-in Stripe-compatible sandbox: the subset of Stripe's REST API the
// service's Stripe adapter uses, served on its own loopback port with Stripe's
// semantics, its state in PostgreSQL (schema stripe_sandbox), signed webhook
// events delivered with retries, and the browser stand-in (browser.ts) that
// does what Stripe's frontend SDK would. It knows nothing of the service.

import type { Server } from 'node:http';
import { backgroundFailures } from '../../platform/background.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { sharedDueWork } from './due-work.ts';
import { createEngine } from './engine.ts';
import { randomToken } from './objects.ts';
import { closeApiServer, IDEMPOTENCY_TTL_MS, listenApiServer, type RecordedRequest } from './server.ts';
import * as store from './store.ts';
import type { WebhookEndpoint } from './webhooks.ts';

export type { DueWorkResult } from './due-work.ts';
export type { RecordedRequest } from './server.ts';
export type { DeliveryRecord, SandboxKeys } from './store.ts';
export type { WebhookEndpoint } from './webhooks.ts';

/** Stripe's hold: an uncaptured card authorization is canceled after 7 days. */
export const DEFAULT_HOLD_VALIDITY_MS = 7 * 24 * 3_600_000;
const REQUEST_LOG_SIZE = 2_000;

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
  });

  let server: Server | undefined;
  let url: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const dueWork = sharedDueWork({ db, clock, engine, webhookSecret: keys.webhookSecret, log });
  const runDueWork = dueWork.run;

  /** Passes whose failure is reported already: the timer's calls and the kicks that join one pass report it once. */
  const reported = new WeakSet<Promise<unknown>>();
  function runInBackground(): void {
    const pass = runDueWork();
    if (reported.has(pass)) return;
    reported.add(pass);
    pass.catch(backgroundFailed);
  }
  function kick(): void {
    if (timer && !closed) setImmediate(runInBackground);
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
      const listening = await listenApiServer(listenOptions, {
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
      server = listening.server;
      url = listening.url;
      return url;
    },

    /** Every event from now on is also delivered to this endpoint (by any sandbox process on this database); the same URL again updates it. */
    addWebhookEndpoint: (endpoint: WebhookEndpoint): Promise<void> => store.upsertWebhookEndpoint(db, endpoint, clock.now()),

    /** Delivers and lapses in the background: at once after each change, and every `intervalMs`. */
    startBackgroundWork(intervalMs = 500): void {
      if (timer) return;
      timer = setInterval(runInBackground, intervalMs);
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
      await dueWork.stop();
      if (server) await closeApiServer(server);
    },
  };
}

export type StripeSandbox = Awaited<ReturnType<typeof createStripeSandbox>>;
