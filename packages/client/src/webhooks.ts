// Verifies a webhook delivery as the service signs it (Standard Webhooks): `webhook-signature` holds one or two
// (after a secret rotation) `v1,<base64 HMAC-SHA256>` of "<webhook-id>.<webhook-timestamp>.<raw body>", keyed with
// the bytes of the endpoint's secret (whsec_<base64>). Web Crypto only, so it runs in Node 24, Deno, Bun, workers
// and browsers alike. Verify the raw body as received, before parsing it.
import type { ClientEvent } from './events.ts';

export type WebhookVerificationReason = 'missing_header' | 'invalid_timestamp' | 'timestamp_too_old' | 'timestamp_too_new' | 'invalid_signature';

/** The delivery is not one the service signed with this secret (or not recently): answer it 400 and drop it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Request headers as fetch (Headers) or Node's http module (lower-cased names; a repeated header as an array) give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The endpoint's secret (whsec_...); several while you roll a rotated one out (any one verifying is enough). */
  secret: string | readonly string[];
  headers: WebhookHeaders;
  /** The raw body: the exact bytes or text received (not JSON re-serialized). */
  body: string | Uint8Array;
  /** How far the webhook-timestamp may be from now, either way (default 300 s, as Standard Webhooks says). */
  toleranceSeconds?: number;
  /** Now, in ms since the epoch (default Date.now()). */
  now?: number;
}

const SECRET_PREFIX = 'whsec_';

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

function base64Bytes(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function secretBytes(secret: string): Uint8Array {
  const bytes = base64Bytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (!bytes || bytes.length === 0) throw new TypeError('secret must be the endpoint secret as the API gave it: whsec_<base64>');
  return bytes;
}

/** Compares two byte strings in time that depends only on their length (no early exit on the first difference). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}

async function hmac(key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  const cryptoKey = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', cryptoKey, message as Uint8Array<ArrayBuffer>));
}

function signedContent(id: string, timestamp: string, body: string | Uint8Array): Uint8Array {
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const payload = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const content = new Uint8Array(prefix.length + payload.length);
  content.set(prefix);
  content.set(payload, prefix.length);
  return content;
}

/** The timestamp's refusal, if any: not a number of seconds, or further from now than the tolerance. */
function timestampProblem(timestamp: string, now: number, toleranceSeconds: number): WebhookVerificationError | undefined {
  if (!/^\d{1,12}$/.test(timestamp)) return new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not a number of seconds');
  const age = Math.floor(now / 1000) - Number(timestamp);
  if (age > toleranceSeconds) return new WebhookVerificationError('timestamp_too_old', `webhook-timestamp is ${age} s old (tolerance ${toleranceSeconds} s)`);
  if (-age > toleranceSeconds)
    return new WebhookVerificationError('timestamp_too_new', `webhook-timestamp is ${-age} s ahead (tolerance ${toleranceSeconds} s)`);
  return undefined;
}

/**
 * Checks a delivery's signature and timestamp; answers the event (the parsed body), or throws
 * WebhookVerificationError. Deduplicate on the event's `id`: a delivery may come more than once.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<ClientEvent> {
  if (typeof options.body !== 'string' && !(options.body instanceof Uint8Array)) {
    throw new TypeError('body must be the raw request body (a string or bytes as received), not parsed JSON');
  }
  const id = header(options.headers, 'webhook-id');
  const timestamp = header(options.headers, 'webhook-timestamp');
  const signatures = header(options.headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing_header', 'webhook-id, webhook-timestamp and webhook-signature are required');
  const refused = timestampProblem(timestamp, options.now ?? Date.now(), options.toleranceSeconds ?? 300);
  if (refused) throw refused;
  const content = signedContent(id, timestamp, options.body);
  const received = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => base64Bytes(s.slice(3)))
    .filter((b): b is Uint8Array => b !== undefined);
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  for (const secret of secrets) {
    const expected = await hmac(secretBytes(secret), content);
    if (received.some((signature) => constantTimeEqual(signature, expected))) {
      return JSON.parse(typeof options.body === 'string' ? options.body : new TextDecoder().decode(options.body)) as ClientEvent;
    }
  }
  throw new WebhookVerificationError('invalid_signature', 'no webhook-signature matches the body with this secret');
}
