// Group commit: writes that arrive together commit together. Each durable
// transaction costs the same whatever it holds (BEGIN, COMMIT, one WAL flush,
// the round trips), so under load that cost dominates a small write (a
// sign-up): a bare BEGIN, insert, COMMIT takes 13-15 times the CPU of a
// health check here. A group sends its items to `write` in one transaction,
// as many as are waiting when a slot frees, so the busier the service, the
// bigger the groups, and a lone request goes at once (no timer, no added
// latency). Each item still has its own outcome: `write` answers an error for
// an item that fails alone (an external id already taken) while the others
// commit. A transaction that fails as a whole is retried item by item, so one
// item's unexpected failure never fails its neighbours; when the database is
// unavailable every item answers that (the service says 503) instead.
import { type Database, isDatabaseUnavailable, type Queryable } from './db.ts';

/** What one item of a group came to: its result, or the error it answers on its own. */
export type Outcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface GroupCommitOptions<I, O> {
  db: Database;
  /** Writes the items inside the group's transaction; one outcome per item, in the items' order. */
  write(tx: Queryable, items: readonly I[]): Promise<Outcome<O>[]>;
  /** Items per transaction at most (default 64). */
  maxGroup?: number;
  /** Transactions under way at once (default 2): connections the groups take from the pool. */
  maxInFlight?: number;
  /** Told the size of every group that committed (a metric). */
  committed?(size: number): void;
}

export interface GroupCommit<I, O> {
  /** Resolves once the item's transaction committed (or rejects with its own error, or the group's). */
  submit(item: I): Promise<O>;
}

interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

const settle = <I, O>(waiting: Waiting<I, O>, outcome: Outcome<O> | undefined) => {
  if (!outcome) waiting.reject(new Error('group commit: write answered no outcome for an item'));
  else if (outcome.ok) waiting.resolve(outcome.value);
  else waiting.reject(outcome.error);
};

export function groupCommit<I, O>(options: GroupCommitOptions<I, O>): GroupCommit<I, O> {
  const { db, write } = options;
  const maxGroup = options.maxGroup ?? 64;
  const maxInFlight = options.maxInFlight ?? 2;
  const queue: Waiting<I, O>[] = [];
  let inFlight = 0;

  /** Commits the group; answers the error that made it fail as a whole (after rejecting what cannot be retried), if any. */
  async function run(group: Waiting<I, O>[]): Promise<unknown> {
    const items = group.map((waiting) => waiting.item);
    let outcomes: Outcome<O>[];
    try {
      outcomes = await db.transaction((tx) => write(tx, items));
    } catch (error) {
      if (group.length === 1 || isDatabaseUnavailable(error)) {
        for (const waiting of group) waiting.reject(error);
        return error;
      }
      // Something in the group failed the whole transaction, so nothing of it committed (a deadlock, a
      // constraint `write` does not expect): each item again in a transaction of its own, so only the one
      // at fault fails; once the database is unavailable, the rest answer that at once.
      for (const [index, waiting] of group.entries()) {
        const failure = await run([waiting]);
        if (isDatabaseUnavailable(failure)) {
          for (const rest of group.slice(index + 1)) rest.reject(failure);
          break;
        }
      }
      return error;
    }
    for (const [index, waiting] of group.entries()) settle(waiting, outcomes[index]);
    try {
      options.committed?.(group.length);
    } catch {
      // A metric that cannot be recorded changes nothing that was committed.
    }
    return undefined;
  }

  function next(): void {
    while (inFlight < maxInFlight && queue.length > 0) {
      const group = queue.splice(0, maxGroup);
      inFlight++;
      void run(group).finally(() => {
        inFlight--;
        next();
      });
    }
  }

  return {
    submit(item: I): Promise<O> {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        next();
      });
    },
  };
}
