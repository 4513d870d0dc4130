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
//
// Writes of one kind may also commit in groups (grouped(): sign-ups): the
// group's keys are claimed together, in its one transaction, and twins within
// a group wait as twins in flight do.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Database, NamedStatement, Queryable } from '../db.ts';
import { AppError } from '../errors.ts';
import { groupCommit, type Outcome } from '../group-commit.ts';

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
  text: `SELECT c.state, c.fingerprint, c.response_status, c.response_body
           FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS k (client_id, key, n)
          CROSS JOIN LATERAL idempotency_claim(k.client_id, k.key, $3) AS c
          ORDER BY k.n`,
};
const STORE: NamedStatement = {
  name: 'idempotency.store',
  text: `INSERT INTO idempotency_keys (client_id, key, fingerprint, response_status, response_body, created_at)
         SELECT a.client_id, a.key, a.fingerprint, a.response_status, a.response_body, $6
           FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::jsonb[]) AS a (client_id, key, fingerprint, response_status, response_body)
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

export type IdempotentAnswer = StoredAnswer & { replayed: boolean };

/** A request, with the fingerprint of its method, path and body when it has a key. */
interface Fingerprinted {
  request: IdempotentRequest;
  fingerprint: string | undefined;
}

/** The request's twin (same client and key) is in flight: wait for it, then try again. Never leaves this module. */
class TwinInFlight extends Error {}

/** Writes that commit in groups (see grouped()), each under its request's Idempotency-Key if it has one. */
export interface GroupedWrites<B> {
  submit(request: IdempotentRequest, item: B): Promise<IdempotentAnswer>;
}

export function createIdempotency(deps: { db: Database; clock: Clock; inFlightWaitMs?: number }) {
  const { db, clock } = deps;
  const inFlightWaitMs = deps.inFlightWaitMs ?? IDEMPOTENCY_IN_FLIGHT_WAIT_MS;

  const fingerprinted = (request: IdempotentRequest): Fingerprinted => ({
    request,
    fingerprint: request.key === undefined ? undefined : requestFingerprint(request.method, request.url, request.body),
  });

  /**
   * In `tx`, claims the keys of the requests that have one, in one statement. Per request: the replay (or 422) of
   * a key with a stored answer; TwinInFlight for a key another transaction holds, or an earlier one of `requests`
   * has; undefined for a request to run (no key, or its key now held by `tx` until it ends).
   */
  async function claim(tx: Queryable, requests: readonly Fingerprinted[]): Promise<(Outcome<IdempotentAnswer> | undefined)[]> {
    const outcomes: (Outcome<IdempotentAnswer> | undefined)[] = requests.map(() => undefined);
    const claiming: { index: number; clientId: string; key: string }[] = [];
    const seen = new Set<string>();
    for (const [index, { request }] of requests.entries()) {
      if (request.key === undefined) continue;
      const id = `${request.clientId}:${request.key}`;
      if (seen.has(id)) outcomes[index] = { ok: false, error: new TwinInFlight() };
      else claiming.push({ index, clientId: request.clientId, key: request.key });
      seen.add(id);
    }
    if (claiming.length === 0) return outcomes;
    const freshAfter = new Date(clock.now().getTime() - IDEMPOTENCY_TTL_MS);
    const { rows } = await tx.query<Claim>(CLAIM, [claiming.map((c) => c.clientId), claiming.map((c) => c.key), freshAfter]);
    for (const [n, { index }] of claiming.entries()) {
      const claimed = rows[n] as Claim;
      if (claimed.state === 'busy') outcomes[index] = { ok: false, error: new TwinInFlight() };
      else if (claimed.state === 'stored') outcomes[index] = replay(claimed, requests[index]?.fingerprint);
    }
    return outcomes;
  }

  /** In `tx`, stores the answers of the requests that have a key, in one statement (none without keys). */
  async function store(tx: Queryable, answered: readonly { request: Fingerprinted; answer: StoredAnswer }[]): Promise<void> {
    const keyed = answered.filter(({ request }) => request.request.key !== undefined);
    if (keyed.length === 0) return;
    await tx.query(STORE, [
      keyed.map(({ request }) => request.request.clientId),
      keyed.map(({ request }) => request.request.key),
      keyed.map(({ request }) => request.fingerprint),
      keyed.map(({ answer }) => answer.status),
      keyed.map(({ answer }) => (answer.body === undefined ? null : JSON.stringify(answer.body))),
      clock.now(),
    ]);
  }

  /** The stored answer; 422 if it was stored for another request. */
  function replay(claimed: Claim, fingerprint: string | undefined): Outcome<IdempotentAnswer> {
    if (claimed.fingerprint !== fingerprint) {
      return {
        ok: false,
        error: new AppError('idempotency_conflict', 'This Idempotency-Key was already used with a different request (method, path or body).'),
      };
    }
    return { ok: true, value: { status: claimed.response_status as number, body: claimed.response_body, replayed: true } };
  }

  /**
   * Tries `attempt` until it is not refused with TwinInFlight: a twin in flight (in this process or another) is
   * waited for, without holding a connection, and its answer replayed; 409 if it outlasts IDEMPOTENCY_IN_FLIGHT_WAIT_MS.
   */
  async function afterTwins<T>(attempt: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + inFlightWaitMs;
    for (let tries = 0; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof TwinInFlight)) throw error;
      }
      const pause = Math.min(IN_FLIGHT_POLL_MAX_MS, IN_FLIGHT_POLL_MIN_MS * 2 ** tries);
      if (Date.now() + pause > deadline) {
        throw new AppError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.');
      }
      await sleep(pause);
    }
  }

  /**
   * Runs `work` in a transaction. With a key: replays the stored answer of an
   * earlier identical request, refuses a different request under the same key
   * (422), waits for a twin still in flight (409 if it outlasts the wait), and
   * otherwise stores the answer in the same transaction as the effect. The
   * first three are one call (idempotency_claim, migration 0018) in that
   * transaction; an expired record is replaced by the new answer.
   */
  function run(request: IdempotentRequest, work: (tx: Queryable) => Promise<StoredAnswer>): Promise<IdempotentAnswer> {
    const pending = fingerprinted(request);
    return afterTwins(() =>
      db.transaction(async (tx) => {
        const [claimed] = await claim(tx, [pending]);
        if (claimed && !claimed.ok) throw claimed.error;
        if (claimed) return claimed.value;
        const answer = await work(tx);
        await store(tx, [{ request: pending, answer }]);
        return { ...answer, replayed: false };
      }),
    );
  }

  /**
   * Writes of one kind (sign-ups) that commit in groups (src/platform/group-commit.ts), each under its request's
   * key as run() would: the group's keys are claimed in one statement, `write` gets the items to run (an error of
   * its own for an item that fails alone), and the answers are stored in one statement, with the effects.
   */
  function grouped<B>(options: {
    write(tx: Queryable, items: readonly B[]): Promise<Outcome<StoredAnswer>[]>;
    committed?(size: number): void;
  }): GroupedWrites<B> {
    const group = groupCommit<Fingerprinted & { item: B }, IdempotentAnswer>({
      db,
      ...(options.committed ? { committed: options.committed } : {}),
      async write(tx, requests) {
        const outcomes = await claim(tx, requests);
        // The requests to run: no key, or their key now held by this transaction.
        const toRun = requests.flatMap((request, index) => (outcomes[index] === undefined ? [{ request, index }] : []));
        if (toRun.length === 0) return outcomes as Outcome<IdempotentAnswer>[];
        const results = await options.write(
          tx,
          toRun.map(({ request }) => request.item),
        );
        const answered: { request: Fingerprinted; answer: StoredAnswer }[] = [];
        for (const [n, { request, index }] of toRun.entries()) {
          const result = results[n] ?? { ok: false, error: new Error('grouped write answered no outcome for an item') };
          outcomes[index] = result.ok ? { ok: true, value: { ...result.value, replayed: false } } : result;
          if (result.ok) answered.push({ request, answer: result.value });
        }
        await store(tx, answered);
        return outcomes as Outcome<IdempotentAnswer>[];
      },
    });
    return {
      submit(request: IdempotentRequest, item: B): Promise<IdempotentAnswer> {
        const pending = { ...fingerprinted(request), item };
        return afterTwins(() => group.submit(pending));
      },
    };
  }

  /** Deletes expired records; run periodically. */
  async function purgeExpired(): Promise<number> {
    const cutoff = new Date(clock.now().getTime() - IDEMPOTENCY_TTL_MS);
    const { rowCount } = await db.query('DELETE FROM idempotency_keys WHERE created_at < $1', [cutoff]);
    return rowCount ?? 0;
  }

  return { run, grouped, purgeExpired };
}

export type Idempotency = ReturnType<typeof createIdempotency>;

/** The request's Idempotency-Key, if it sent one; a 400 validation_error if it is not 1..255 visible ASCII characters. */
function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  const key = typeof header === 'string' ? header : undefined;
  if (key !== undefined && (key.length === 0 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key))) {
    throw new AppError('validation_error', 'Idempotency-Key: must be 1..255 visible ASCII characters', {
      errors: [{ field: 'Idempotency-Key', message: 'must be 1..255 visible ASCII characters' }],
    });
  }
  return key;
}

/**
 * Route helper for mutations: runs `work` under the request's Idempotency-Key
 * (if any) and sends the (possibly replayed) answer.
 */
export async function sendIdempotent(
  idempotency: Idempotency,
  request: FastifyRequest,
  reply: FastifyReply,
  clientId: string,
  work: (tx: Queryable) => Promise<StoredAnswer>,
): Promise<FastifyReply> {
  return sendAnswer(reply, await idempotency.run(idempotentRequest(request, clientId), work));
}

/** sendIdempotent for writes that commit in groups (Idempotency.grouped): `item` is what the group's write gets. */
export async function sendGrouped<B>(writes: GroupedWrites<B>, request: FastifyRequest, reply: FastifyReply, clientId: string, item: B): Promise<FastifyReply> {
  return sendAnswer(reply, await writes.submit(idempotentRequest(request, clientId), item));
}

/** The request as idempotency sees it: its client, key (checked), method, path and body. */
function idempotentRequest(request: FastifyRequest, clientId: string): IdempotentRequest {
  return { clientId, key: idempotencyKeyOf(request), method: request.method, url: request.url, body: request.body };
}

function sendAnswer(reply: FastifyReply, answer: IdempotentAnswer): FastifyReply {
  if (answer.replayed) void reply.header('Idempotent-Replayed', 'true');
  void reply.code(answer.status);
  return answer.body === undefined || answer.body === null ? reply.send() : reply.send(answer.body);
}
