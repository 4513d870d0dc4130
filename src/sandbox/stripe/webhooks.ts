// Webhook delivery as Stripe does it: the event JSON POSTed to each endpoint
// with `Stripe-Signature: t=<unix time>,v1=<HMAC-SHA256(secret, "<t>.<body>")>`,
// any answer other than 2xx retried with growing delays for up to three days.
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isStaleConnection, outboundAgent } from '../../platform/http/outbound.ts';

export function signatureHeader(payload: string, secret: string, timestamp: number): string {
  const signature = createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');
  return `t=${timestamp},v1=${signature}`;
}

export interface WebhookEndpoint {
  url: string;
  /**
   * For an https endpoint that is the service itself: its certificate (PEM).
   * The connection is accepted only if the server presents exactly this
   * certificate (so a self-signed localhost certificate works on 127.0.0.1).
   */
  pinnedCertificatePem?: string;
  /** Extra headers, e.g. X-Forwarded-Proto for a service behind a TLS-terminating proxy. */
  headers?: Record<string, string>;
  /** Event types it receives (Stripe's enabled_events); default every type. */
  enabledEvents?: readonly string[];
}

/** Delays before the 2nd, 3rd, ... attempt; the last one repeats until three days have passed. */
export const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];
export const GIVE_UP_AFTER_MS = 3 * 24 * 3_600_000;

export function retryDelay(failedAttempts: number): number {
  return RETRY_DELAYS_MS[Math.min(failedAttempts, RETRY_DELAYS_MS.length) - 1] ?? 1_000;
}

export interface DeliveryResult {
  status: number | null;
  error: string | null;
}

/** POSTs one delivery; `signal` cuts it off (the result then says so in `error`). */
export function postWebhook(endpoint: WebhookEndpoint, payload: string, signature: string, timeoutMs = 10_000, signal?: AbortSignal): Promise<DeliveryResult> {
  const url = new URL(endpoint.url);
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(payload)),
    'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    'stripe-signature': signature,
    ...(endpoint.headers ?? {}),
  };
  // A pooled, kept-alive connection; for a pinned certificate, its agent's TLS context accepts exactly that one.
  const options = { method: 'POST', headers, timeout: timeoutMs, agent: outboundAgent(url, endpoint.pinnedCertificatePem), ...(signal ? { signal } : {}) };
  const attempt = (firstTry: boolean) =>
    new Promise<DeliveryResult>((resolve) => {
      const onResponse = (res: import('node:http').IncomingMessage) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? null, error: null }));
        res.on('error', (error) => resolve({ status: res.statusCode ?? null, error: error.message }));
      };
      const req = url.protocol === 'https:' ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      // A kept-alive connection the endpoint had just closed: the delivery never reached it, send it once more on a new one.
      req.on('error', (error) =>
        firstTry && !signal?.aborted && isStaleConnection(req, error) ? attempt(false).then(resolve) : resolve({ status: null, error: error.message }),
      );
      req.end(payload);
    });
  return attempt(true);
}
