// Fixed one-minute windows of requests per subject (an API client, an OCPI
// connection), counted across every process through PostgreSQL.
//
// A process does not count each request in the database. It takes an
// allowance of the window (a chunk of requests) from the shared row, which
// never hands out more than the limit in total, and spends it locally; a
// request costs a Map lookup. When the allowance runs low the next one is
// fetched in the background, so a request waits for the database only when
// its process has none left (the first request of a window, or a burst).
//
// Bound of error (documented in README "Rate limits"):
// - never more than the limit is admitted in a window, whatever the number of
//   processes (allowances are taken under the row lock, capped at the limit);
// - a client may be refused early by up to the allowances other processes
//   hold but have not spent: at most (processes - 1) x 1.25 chunks, a chunk
//   being at most 1/20 of the limit and at most 1/8 of what the window had
//   left when it was taken (so the early refusals shrink as the window fills);
// - processes whose clocks disagree count into different windows for as long
//   as they disagree; the table is unlogged, so after a PostgreSQL crash or a
//   failover the current window starts again from zero (one window too many);
// - while the database cannot be reached the limiter admits (fails open; it
//   must not refuse requests by itself) and logs one warning until it can.
import type { Clock } from '../clock.ts';
import type { Queryable } from '../db.ts';
import * as repo from './repository.ts';

export const WINDOW_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in this window (an estimate across processes, never above the truth by more than the bound above). */
  remaining: number;
  /** Seconds until the window ends (at least 1): RateLimit-Reset, and Retry-After when refused. */
  resetSeconds: number;
}

export type RateLimiterLog = (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;

export interface RateLimiterDeps {
  db: Queryable;
  /** Window boundaries are domain time: tests move the clock instead of sleeping. */
  clock: Clock;
  log?: RateLimiterLog;
}

interface WindowState {
  start: number;
  limit: number;
  /** Requests this process took from the window and has not spent yet. */
  allowance: number;
  /** What the window had handed out to all processes at our last take. */
  taken: number;
  /** The window refused us a grant: nothing more until it ends. */
  exhausted: boolean;
  /** The size of our last take, to fetch the next one before this one runs out. */
  lastChunk: number;
  taking: Promise<void> | undefined;
}

// After a failed take the limiter admits without asking again for this long (wall-clock: pacing, not domain time).
const FAIL_OPEN_RETRY_MS = 1_000;

export function createRateLimiter(deps: RateLimiterDeps) {
  const { db, clock } = deps;
  const log = deps.log ?? (() => {});
  const windows = new Map<string, WindowState>();
  let currentWindow = 0;
  let failingSince: number | undefined;
  let retryAt = 0;

  function chunkFor(w: WindowState): number {
    const left = Math.max(0, w.limit - w.taken);
    return Math.max(1, Math.min(Math.ceil(w.limit / 20), Math.ceil(left / 8)));
  }

  function take(w: WindowState, subject: string): Promise<void> {
    w.taking ??= repo
      .takeAllowance(db, { start: new Date(w.start), subject, limit: w.limit, wanted: chunkFor(w) })
      .then(
        ({ granted, taken }) => {
          w.allowance += granted;
          w.taken = taken;
          w.lastChunk = granted;
          if (granted === 0) w.exhausted = true;
          if (failingSince !== undefined) {
            log('info', 'rate limiting works again', { failed_for_ms: Date.now() - failingSince });
            failingSince = undefined;
          }
        },
        (error: unknown) => {
          retryAt = Date.now() + FAIL_OPEN_RETRY_MS;
          if (failingSince === undefined) {
            failingSince = Date.now();
            log('warn', 'rate limits cannot be counted (database unavailable); admitting requests until it answers', {
              reason: error instanceof Error ? error.message : String(error),
            });
          }
        },
      )
      .finally(() => {
        w.taking = undefined;
      });
    return w.taking;
  }

  function windowFor(subject: string, limit: number, start: number): WindowState {
    if (start !== currentWindow) {
      currentWindow = start;
      for (const [key, w] of windows) if (w.start < start) windows.delete(key);
      // One purge per process per window; another process may run the same one, which is harmless.
      repo.deleteWindowsBefore(db, new Date(start - WINDOW_MS)).catch(() => {});
    }
    let w = windows.get(subject);
    // A new window, or the subject's limit was changed (the operator's update reaches us through the credential cache).
    if (!w || w.start !== start || w.limit !== limit) {
      w = { start, limit, allowance: 0, taken: 0, exhausted: false, lastChunk: 0, taking: undefined };
      windows.set(subject, w);
    }
    return w;
  }

  /**
   * Counts one request of `subject` against `limit` requests per minute (a positive limit; 0 = unlimited is the
   * caller's). Synchronous while this process holds an allowance (nearly always); a promise only when it must take
   * one from PostgreSQL first.
   */
  function decide(subject: string, limit: number): RateDecision | Promise<RateDecision> {
    const now = clock.now().getTime();
    const start = now - (now % WINDOW_MS);
    const resetSeconds = Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000));
    const w = windowFor(subject, limit, start);
    const answer = fastAnswer(w, subject, limit, resetSeconds);
    return answer ?? slowAdmit(w, subject, limit, resetSeconds);
  }

  /** The answer without waiting, if there is one: an allowance left, the window exhausted, or failing open. */
  function fastAnswer(w: WindowState, subject: string, limit: number, resetSeconds: number): RateDecision | undefined {
    if (w.allowance > 0) {
      w.allowance--;
      // Fetch the next allowance before this one runs out, so requests do not wait for it.
      if (!w.exhausted && w.allowance <= w.lastChunk / 4) void take(w, subject);
      return { allowed: true, limit, remaining: Math.max(0, limit - (w.taken - w.allowance)), resetSeconds };
    }
    if (w.exhausted) return { allowed: false, limit, remaining: 0, resetSeconds };
    if (failingSince !== undefined) {
      // Failing open: no request waits for a database that did not answer (a connection timeout each time);
      // one take per subject and second tries again in the background.
      if (Date.now() >= retryAt) void take(w, subject);
      return { allowed: true, limit, remaining: Math.max(0, limit - (w.taken - w.allowance)), resetSeconds };
    }
    return undefined;
  }

  async function slowAdmit(w: WindowState, subject: string, limit: number, resetSeconds: number): Promise<RateDecision> {
    for (;;) {
      await take(w, subject);
      if (failingSince !== undefined && w.allowance === 0) return { allowed: true, limit, remaining: Math.max(0, limit - w.taken), resetSeconds };
      const answer = fastAnswer(w, subject, limit, resetSeconds);
      if (answer) return answer;
    }
  }

  return { decide };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
