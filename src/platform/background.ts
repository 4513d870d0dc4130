// Background loops (outbox deliveries, simulations, job polling) run every
// fraction of a second; while the database is away each pass fails the same
// way. One warning per outage says so; other failures are errors every time.
import { isDatabaseUnavailable } from './db.ts';

type Log = (level: 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

/** A reporter for one loop's failures: a database outage is one warning until it has been quiet for `quietMs`. */
export function backgroundFailures(log: Log, message: string, quietMs = 30_000): (error: Error) => void {
  let lastUnavailableAt = Number.NEGATIVE_INFINITY;
  return (error) => {
    if (isDatabaseUnavailable(error)) {
      const now = Date.now(); // wall-clock on purpose: how long the log has been quiet
      if (now - lastUnavailableAt >= quietMs) log('warn', `${message}: the database is unavailable; retrying`, { reason: error.message });
      lastUnavailableAt = now;
      return;
    }
    log('error', message, { err: error.message });
  };
}
