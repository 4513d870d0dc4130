// When and how long the client waits before trying a call again. Only calls that are safe to repeat are retried
// (GETs, and writes that carry an Idempotency-Key: the service applies those at most once), and only after
// answers that say "not now": 429 rate_limited, 503 (the database restarting, the catalogue loading, the payment
// processor away), and 409 conflict with Retry-After (the same Idempotency-Key still in flight; a stop before the
// operator reported the session); or when no answer came at all (connection refused or reset, timeout).

export interface RetryOptions {
  /** Tries in all, the first included (default 4); 1 turns retrying off. */
  attempts?: number;
  /** The first backoff when the answer names no Retry-After (default 500 ms); doubled each time, with jitter. */
  baseDelayMs?: number;
  /** The longest backoff without Retry-After (default 8 s). */
  maxDelayMs?: number;
  /**
   * The longest Retry-After the client waits for (default 60 s: a rate-limit window). An answer asking for longer
   * is thrown at once (its ApiError.retryAfter says how long), rather than holding the call that long.
   */
  maxRetryAfterMs?: number;
}

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

export function retryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  const o = options === false ? { attempts: 1 } : (options ?? {});
  const attempts = o.attempts ?? 4;
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError('retry.attempts must be an integer of at least 1');
  return { attempts, baseDelayMs: o.baseDelayMs ?? 500, maxDelayMs: o.maxDelayMs ?? 8_000, maxRetryAfterMs: o.maxRetryAfterMs ?? 60_000 };
}

/** Whether an answer with this status (and Retry-After, when sent) says the same call may succeed later. */
export function isRetryableStatus(status: number, retryAfter: number | undefined): boolean {
  return status === 429 || status === 503 || (status === 409 && retryAfter !== undefined);
}

/**
 * How long to wait before try number `attempt + 1` (attempt counts from 1), or undefined when not to retry:
 * Retry-After when the answer gave one (undefined beyond maxRetryAfterMs), else exponential backoff with ±20 % jitter.
 */
export function delayBeforeRetry(policy: RetryPolicy, attempt: number, retryAfterSeconds: number | undefined, random = Math.random): number | undefined {
  if (attempt >= policy.attempts) return undefined;
  if (retryAfterSeconds !== undefined) {
    const ms = retryAfterSeconds * 1000;
    return ms <= policy.maxRetryAfterMs ? ms : undefined;
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(backoff * (0.8 + 0.4 * random()));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
