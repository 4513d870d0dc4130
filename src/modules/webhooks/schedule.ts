// When a failed delivery is tried again. The schedule is Standard Webhooks' /
// Svix's: the first attempt at once, then after 5 s, 5 min, 30 min, 2 h, 5 h,
// 10 h, and every 10 h after that, each delay jittered by ±10 % so that the
// retries of many deliveries that failed together (a receiver's outage) do not
// come back together. A delivery is tried for 3 days from its event: the last
// attempt falls at 3 days exactly, then it is given up. Without jitter the
// attempts fall at 0, 5 s, 5 min 5 s, 35 min 5 s, 2 h 35 min, 7 h 35 min,
// 17 h 35 min, 27 h 35 min, 37 h 35 min, 47 h 35 min, 57 h 35 min, 67 h 35 min
// and 72 h: 13 attempts.

/** Delay after failed attempt n (1-based) is RETRY_DELAYS_MS[n - 1]; the last one repeats. */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000] as const;
/** How long a delivery is tried, from its event; also how long an endpoint may fail before it is disabled. */
export const RETRY_WINDOW_MS = 3 * 24 * 3_600_000;
/** Each delay is multiplied by a factor between 1 - JITTER and 1 + JITTER. */
const JITTER = 0.1;

/** The delay after failed attempt `failedAttempts` (1-based), jittered by `random` (0..1; 0.5 = no jitter). */
export function retryDelayMs(failedAttempts: number, random: () => number = Math.random): number {
  const index = Math.min(Math.max(failedAttempts, 1), RETRY_DELAYS_MS.length) - 1;
  const base = RETRY_DELAYS_MS[index] as number;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

/**
 * When to try a delivery of an event created at `createdAt` again, after its attempt number `failedAttempts` failed
 * at `now`: the next step of the schedule, the end of the 3-day window if that step falls beyond it, or null once
 * the window is over (given up).
 */
export function nextAttemptAt(createdAt: Date, failedAttempts: number, now: Date, random: () => number = Math.random): Date | null {
  const deadline = createdAt.getTime() + RETRY_WINDOW_MS;
  const next = now.getTime() + retryDelayMs(failedAttempts, random);
  if (next <= deadline) return new Date(next);
  return now.getTime() < deadline ? new Date(deadline) : null;
}
