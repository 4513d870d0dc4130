// Standard Webhooks signing (https://www.standardwebhooks.com): each delivery
// carries webhook-id (the event id, the same on every retry), webhook-timestamp
// (seconds) and webhook-signature, a space-separated list of
// `v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`: one per
// secret in force, so a receiver still holding the secret just rotated out
// verifies too, for 24 hours.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** 32 random bytes (Standard Webhooks asks for 24 to 64). */
const SECRET_BYTES = 32;
/** How long a secret rotated out keeps signing beside the new one. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;

export function newSecret(): Buffer {
  return randomBytes(SECRET_BYTES);
}

/** The secret as the client receives it (and gives to a Standard Webhooks library): whsec_<base64>. */
export function formatSecret(secret: Buffer): string {
  return `${SECRET_PREFIX}${secret.toString('base64')}`;
}

export function signature(secret: Buffer, webhookId: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', secret).update(`${webhookId}.${timestamp}.${body}`).digest('base64')}`;
}

interface SigningSecrets {
  secret: Buffer;
  previous_secret: Buffer | null;
  previous_secret_expires_at: Date | null;
}

/** The three Standard Webhooks headers of one attempt at `now`. */
export function signedHeaders(secrets: SigningSecrets, webhookId: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signatures = [signature(secrets.secret, webhookId, timestamp, body)];
  if (secrets.previous_secret && secrets.previous_secret_expires_at && secrets.previous_secret_expires_at > now) {
    signatures.push(signature(secrets.previous_secret, webhookId, timestamp, body));
  }
  return { 'webhook-id': webhookId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures.join(' ') };
}
