// Idempotency-Key for POST/PUT/PATCH/DELETE, scoped per API client.
//
// The effect and the stored answer commit in one transaction, so a stored
// answer always matches a committed effect and a failed attempt leaves nothing
// behind (it may be retried with the same key). A transaction-scoped advisory
// lock on (client, key) makes concurrent retries safe, across processes: a
// finished request's answer is replayed without the lock (so replays never
// refuse one another); a request whose twin is still in flight polls until it
// commits and replays its answer, or answers 409 conflict after
// IDEMPOTENCY_IN_FLIGHT_WAIT_MS.
// Only successful answers are stored: an error changed nothing, so the retry
// simply runs again. Records expire after 24 hours.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import type { Database, NamedStatement, Queryable } from '../db.ts';
import { AppError } from '../errors.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface StoredAnswer {
  status: number;
  body: unknown;
}

export interface IdempotentRequest {
  clientId: string;
  /** The Idempotency-Key header, if sent. */
  key: string | undefined;
  method: string;
  url: string;
  body: unknown;
}

/** JSON with object keys sorted, so that the same body in another key order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function requestFingerprint(method: string, url: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()} ${url}\n${canonicalJson(body)}`)
    .digest('hex');
}

/** How long a request waits for its in-flight twin (same client and key) before 409 conflict. */
export const IDEMPOTENCY_IN_FLIGHT_WAIT_MS = 5_000;
const IN_FLIGHT_POLL_MIN_MS = 10;
const IN_FLIGHT_POLL_MAX_MS = 200;

const CLAIM: NamedStatement = {
  name: 'idempotency.claim',
  text: 'SELECT state, fingerprint, response_status, response_body FROM idempotency_claim($1, $2, $3)',
};
const STORE: NamedStatement = {
  name: 'idempotency.store',
  text: `INSERT INTO idempotency_keys (client_id, key, fingerprint, response_status, response_body, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (client_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, response_status = EXCLUDED.response_status,
           response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at`,
};

/** What idempotency_claim answers: a stored answer newer than 24 h, a twin in flight, or the key now held by this transaction. */
interface Claim {
  state: 'stored' | 'busy' | 'claimed';
  fingerprint: string | null;
  response_status: number | null;
  response_body: unknown;
}

export function createIdempotency(deps: { db: Database; clock: Clock; inFlightWaitMs?: number }) {
  const { db, clock } = deps;
  const inFlightWaitMs = deps.inFlightWaitMs ?? IDEMPOTENCY_IN_FLIGHT_WAIT_MS;

  /**
   * Runs `work` in a transaction. With a key: replays the stored answer of an
   * earlier identical request, refuses a different request under the same key
   * (422), waits for a twin still in flight (409 if it outlasts the wait), and
   * otherwise stores the answer in the same transaction as the effect. The
   * first three are one call (idempotency_claim, migration 0018) in that
   * transaction; an expired record is replaced by the new answer.
   */
  async function run(request: IdempotentRequest, work: (tx: Queryable) => Promise<StoredAnswer>): Promise<StoredAnswer & { replayed: boolean }> {
    if (request.key === undefined) return { ...(await db.transaction(work)), replayed: false };
    const fingerprint = requestFingerprint(request.method, request.url, request.body);
    const { clientId, key } = request;
    const deadline = Date.now() + inFlightWaitMs;
    for (let attempt = 0; ; attempt++) {
      const outcome = await db.transaction(async (tx) => {
        const freshAfter = new Date(clock.now().getTime() - IDEMPOTENCY_TTL_MS);
        const { rows } = await tx.query<Claim>(CLAIM, [clientId, key, freshAfter]);
        const claim = rows[0] as Claim;
        if (claim.state === 'busy') return undefined;
        if (claim.state === 'stored') return replay(claim, fingerprint);
        const answer = await work(tx);
        await tx.query(STORE, [clientId, key, fingerprint, answer.status, answer.body === undefined ? null : JSON.stringify(answer.body), clock.now()]);
        return { ...answer, replayed: false };
      });
      if (outcome) return outcome;
      // The twin is in flight (in this process or another): wait for it, without
      // holding a connection, and replay its answer; refuse only if it takes too long.
      const pause = Math.min(IN_FLIGHT_POLL_MAX_MS, IN_FLIGHT_POLL_MIN_MS * 2 ** attempt);
      if (Date.now() + pause > deadline) {
        throw new AppError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.');
      }
      await sleep(pause);
    }
  }

  /** The stored answer; 422 if it was stored for another request. */
  function replay(claim: Claim, fingerprint: string): StoredAnswer & { replayed: true } {
    if (claim.fingerprint !== fingerprint) {
      throw new AppError('idempotency_conflict', 'This Idempotency-Key was already used with a different request (method, path or body).');
    }
    return { status: claim.response_status as number, body: claim.response_body, replayed: true };
  }

  /** Deletes expired records; run periodically. */
  async function purgeExpired(): Promise<number> {
    const cutoff = new Date(clock.now().getTime() - IDEMPOTENCY_TTL_MS);
    const { rowCount } = await db.query('DELETE FROM idempotency_keys WHERE created_at < $1', [cutoff]);
    return rowCount ?? 0;
  }

  return { run, purgeExpired };
}

export type Idempotency = ReturnType<typeof createIdempotency>;

/**
 * Route helper for mutations: runs `work` under the request's Idempotency-Key
 * (if any) and sends the (possibly replayed) answer.
 */
export async function sendIdempotent(
  idempotency: Idempotency,
  request: import('fastify').FastifyRequest,
  reply: import('fastify').FastifyReply,
  clientId: string,
  work: (tx: Queryable) => Promise<StoredAnswer>,
): Promise<import('fastify').FastifyReply> {
  const header = request.headers['idempotency-key'];
  const key = typeof header === 'string' ? header : undefined;
  if (key !== undefined && (key.length === 0 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key))) {
    throw new AppError('validation_error', 'Idempotency-Key: must be 1..255 visible ASCII characters', {
      errors: [{ field: 'Idempotency-Key', message: 'must be 1..255 visible ASCII characters' }],
    });
  }
  const answer = await idempotency.run({ clientId, key, method: request.method, url: request.url, body: request.body }, work);
  if (answer.replayed) void reply.header('Idempotent-Replayed', 'true');
  void reply.code(answer.status);
  return answer.body === undefined || answer.body === null ? reply.send() : reply.send(answer.body);
}
