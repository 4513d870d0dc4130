// The durable job queue (src/platform/jobs.ts) on a real PostgreSQL: enqueue
// (in the caller's transaction, singleton keys), runs, retries with backoff,
// failure after the last attempt, leases taken back from dead workers,
// exactly-once runs across workers, wake-up by NOTIFY and a graceful stop.
// Every test uses its own queue names: runners only claim their own queues.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manualClock } from '../src/platform/clock.ts';
import { type Database, listen } from '../src/platform/db.ts';
import { createJobRunner, enqueue, type JobLog, type JobRunnerOptions, purgeFinished, RetryLater, retryDelayMs } from '../src/platform/jobs.ts';
import { createTestDatabase } from './helpers.ts';

let db: Database;
let drop: () => Promise<void>;

before(async () => {
  ({ db, drop } = await createTestDatabase());
});
after(() => drop());

interface JobRow {
  id: number;
  queue: string;
  key: string | null;
  payload: unknown;
  state: string;
  run_at: Date;
  attempts: number;
  max_attempts: number;
  locked_by: string | null;
  locked_until: Date | null;
  last_error: string | null;
  finished_at: Date | null;
}

async function job(id: number): Promise<JobRow> {
  const { rows } = await db.query<JobRow>('SELECT * FROM jobs WHERE id = $1', [id]);
  assert.ok(rows[0], `job ${id} exists`);
  return rows[0];
}

async function jobsOf(queue: string): Promise<JobRow[]> {
  return (await db.query<JobRow>('SELECT * FROM jobs WHERE queue = $1 ORDER BY id', [queue])).rows;
}

function recordingLog(): JobLog & { entries: { level: string; message: string; fields?: Record<string, unknown> }[] } {
  const entries: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const log = ((level, message, fields) => {
    entries.push({ level, message, ...(fields ? { fields } : {}) });
  }) as JobLog & { entries: typeof entries };
  log.entries = entries;
  return log;
}

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** A started runner's LISTEN connection is up (its last statement was the LISTEN). */
async function listeners(): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle' AND query = 'LISTEN "jobs"'`,
  );
  return rows[0]?.n ?? 0;
}

function runner(options: Partial<JobRunnerOptions> & Pick<JobRunnerOptions, 'clock' | 'handlers'>) {
  return createJobRunner({ db, pollMs: 60_000, ...options });
}

describe('enqueue and run', () => {
  it('runs an enqueued job once, with its payload and attempt, and records it done', async () => {
    const clock = manualClock();
    const seen: { payload: unknown; attempt: number; jobId: number; queue: string }[] = [];
    const r = runner({
      clock,
      handlers: {
        basic: async (payload: { n: number; at: string }, ctx) => {
          seen.push({ payload, attempt: ctx.attempt, jobId: ctx.jobId, queue: ctx.queue });
        },
      },
    });
    const { id, created } = await enqueue(db, { queue: 'basic', payload: { n: 1, at: 'x' } }, clock.now());
    assert.equal(created, true);
    const queued = await job(id);
    assert.equal(queued.state, 'queued');
    assert.equal(queued.run_at.getTime(), clock.now().getTime());
    assert.equal(queued.max_attempts, 10);

    assert.equal(await r.runDue(), 1);
    assert.deepEqual(seen, [{ payload: { n: 1, at: 'x' }, attempt: 1, jobId: id, queue: 'basic' }]);
    const done = await job(id);
    assert.equal(done.state, 'done');
    assert.equal(done.attempts, 1);
    assert.equal(done.finished_at?.getTime(), clock.now().getTime());
    assert.equal(done.locked_by, null);
    assert.equal(done.locked_until, null);
    assert.equal(await r.runDue(), 0, 'a done job does not run again');
  });

  it('runs a job no earlier than its runAt, by the injected clock', async () => {
    const clock = manualClock();
    let runs = 0;
    const r = runner({ clock, handlers: { later: async () => void runs++ } });
    await enqueue(db, { queue: 'later', payload: null, runAt: new Date(clock.now().getTime() + 60_000) }, clock.now());
    assert.equal(await r.runDue(), 0);
    clock.advance(59_999);
    assert.equal(await r.runDue(), 0);
    clock.advance(1);
    assert.equal(await r.runDue(), 1);
    assert.equal(runs, 1);
  });

  it('claims only the queues it has handlers for', async () => {
    const clock = manualClock();
    const r = runner({ clock, handlers: { mine: async () => {} } });
    const { id } = await enqueue(db, { queue: 'not-mine', payload: {} }, clock.now());
    assert.equal(await r.runDue(), 0);
    assert.equal((await job(id)).state, 'queued');
  });

  it('refuses an empty queue name and a maxAttempts below 1', async () => {
    const now = new Date();
    await assert.rejects(enqueue(db, { queue: '', payload: {} }, now), /queue/);
    await assert.rejects(enqueue(db, { queue: 'q', payload: {}, maxAttempts: 0 }, now), /maxAttempts/);
  });

  it('runs at most `concurrency` handlers at once', async () => {
    const clock = manualClock();
    let running = 0;
    let most = 0;
    const r = runner({
      clock,
      concurrency: 3,
      handlers: {
        parallel: async () => {
          running++;
          most = Math.max(most, running);
          await sleep(20);
          running--;
        },
      },
    });
    for (let i = 0; i < 10; i++) await enqueue(db, { queue: 'parallel', payload: { i } }, clock.now());
    assert.equal(await r.runDue(), 10);
    assert.equal(most, 3);
  });
});

describe('singleton keys', () => {
  it('gives one job per key while it is unfinished, also for 20 concurrent enqueues', async () => {
    const clock = manualClock();
    const first = await enqueue(db, { queue: 'single', key: 'user-1', payload: { v: 1 } }, clock.now());
    const second = await enqueue(db, { queue: 'single', key: 'user-1', payload: { v: 2 } }, clock.now());
    assert.deepEqual(second, { id: first.id, created: false });
    assert.deepEqual((await job(first.id)).payload, { v: 1 }, 'the first payload stays');
    const other = await enqueue(db, { queue: 'single', key: 'user-2', payload: {} }, clock.now());
    assert.equal(other.created, true);
    const otherQueue = await enqueue(db, { queue: 'single-other', key: 'user-1', payload: {} }, clock.now());
    assert.equal(otherQueue.created, true, 'keys are per queue');

    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => enqueue(db, { queue: 'single', key: 'burst', payload: { i } }, clock.now())));
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.id)).size, 1);
    const { rows } = await db.query("SELECT count(*)::int AS n FROM jobs WHERE queue = 'single' AND key = 'burst'");
    assert.equal(rows[0]?.n, 1);
  });

  it('also deduplicates against a running job, and reuses a key once its job is done or failed', async () => {
    const clock = manualClock();
    const release = deferred();
    const started = deferred();
    let runs = 0;
    const r = runner({
      clock,
      handlers: {
        reuse: async (payload: { fail?: boolean }) => {
          runs++;
          started.resolve();
          await release.promise;
          if (payload.fail) throw new Error('no');
        },
      },
    });
    const first = await enqueue(db, { queue: 'reuse', key: 'k', payload: {} }, clock.now());
    const running = r.runDue();
    await started.promise;
    assert.equal((await job(first.id)).state, 'running');
    assert.deepEqual(await enqueue(db, { queue: 'reuse', key: 'k', payload: {} }, clock.now()), { id: first.id, created: false });
    release.resolve();
    assert.equal(await running, 1);
    assert.equal((await job(first.id)).state, 'done');

    const again = await enqueue(db, { queue: 'reuse', key: 'k', payload: { fail: true }, maxAttempts: 1 }, clock.now());
    assert.equal(again.created, true);
    assert.notEqual(again.id, first.id);
    assert.equal(await r.runDue(), 1);
    assert.equal((await job(again.id)).state, 'failed');
    const third = await enqueue(db, { queue: 'reuse', key: 'k', payload: {} }, clock.now());
    assert.equal(third.created, true, 'a failed job does not hold its key');
    assert.equal(runs, 2);
  });
});

describe('enqueue in a transaction', () => {
  it('leaves nothing (and notifies no one) when the transaction rolls back', async () => {
    const clock = manualClock();
    const received: (string | undefined)[] = [];
    const listener = listen(db, 'jobs', (payload) => received.push(payload));
    await sleep(200);
    try {
      await assert.rejects(
        db.transaction(async (tx) => {
          const { created } = await enqueue(tx, { queue: 'tx-rollback', key: 'k', payload: {} }, clock.now());
          assert.equal(created, true);
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      assert.deepEqual(await jobsOf('tx-rollback'), []);
      await sleep(200);
      assert.deepEqual(received, []);
    } finally {
      await listener.stop();
    }
  });

  it('commits the job with the change and notifies at commit only', async () => {
    const clock = manualClock();
    const received: (string | undefined)[] = [];
    const listener = listen(db, 'jobs', (payload) => received.push(payload));
    await sleep(200);
    try {
      const id = await db.transaction(async (tx) => {
        const { id } = await enqueue(tx, { queue: 'tx-commit', payload: { n: 1 } }, clock.now());
        await sleep(200);
        assert.deepEqual(received, [], 'no notification before commit');
        assert.deepEqual(await jobsOf('tx-commit'), [], 'invisible outside the transaction');
        return id;
      });
      assert.equal((await job(id)).state, 'queued');
      await waitFor(() => received.length > 0, 5_000, 'the notification');
      assert.deepEqual(received, ['["tx-commit"]']);
    } finally {
      await listener.stop();
    }
  });
});

describe('retries', () => {
  it('backs off exponentially with jitter, capped at 5 minutes', () => {
    assert.equal(
      retryDelayMs(1, () => 0),
      500,
    );
    assert.equal(
      retryDelayMs(1, () => 1),
      1_000,
    );
    assert.equal(
      retryDelayMs(2, () => 1),
      2_000,
    );
    assert.equal(
      retryDelayMs(3, () => 1),
      4_000,
    );
    assert.equal(
      retryDelayMs(9, () => 1),
      256_000,
    );
    assert.equal(
      retryDelayMs(10, () => 1),
      300_000,
    );
    assert.equal(
      retryDelayMs(50, () => 1),
      300_000,
    );
    assert.equal(
      retryDelayMs(50, () => 0),
      150_000,
    );
  });

  it('queues a failed run again after a backoff, and records the success', async () => {
    const clock = manualClock();
    const log = recordingLog();
    const attempts: number[] = [];
    const r = runner({
      clock,
      log,
      handlers: {
        flaky: async (_payload, ctx) => {
          attempts.push(ctx.attempt);
          if (ctx.attempt < 3) throw new Error(`boom ${ctx.attempt}`);
        },
      },
    });
    const { id } = await enqueue(db, { queue: 'flaky', payload: {} }, clock.now());
    assert.equal(await r.runDue(), 1);
    let row = await job(id);
    assert.equal(row.state, 'queued');
    assert.equal(row.attempts, 1);
    assert.equal(row.last_error, 'boom 1');
    assert.equal(row.locked_by, null);
    let delay = row.run_at.getTime() - clock.now().getTime();
    assert.ok(delay >= 500 && delay <= 1_000, `first delay ${delay}`);
    assert.equal(await r.runDue(), 0, 'not due before its backoff');

    clock.advance(1_000);
    assert.equal(await r.runDue(), 1);
    row = await job(id);
    assert.equal(row.attempts, 2);
    assert.equal(row.last_error, 'boom 2');
    delay = row.run_at.getTime() - clock.now().getTime();
    assert.ok(delay >= 1_000 && delay <= 2_000, `second delay ${delay}`);

    clock.advance(2_000);
    assert.equal(await r.runDue(), 1);
    row = await job(id);
    assert.equal(row.state, 'done');
    assert.equal(row.attempts, 3);
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.deepEqual(
      log.entries.map((e) => e.level),
      ['warn', 'warn'],
    );
  });

  it('fails a job after its last attempt, keeps it with a short error, and logs an error', async () => {
    const clock = manualClock();
    const log = recordingLog();
    let runs = 0;
    const r = runner({
      clock,
      log,
      handlers: {
        hopeless: async () => {
          runs++;
          throw new Error(`x${'y'.repeat(5_000)}`);
        },
      },
    });
    const { id } = await enqueue(db, { queue: 'hopeless', payload: {}, maxAttempts: 3 }, clock.now());
    for (let i = 0; i < 5; i++) {
      await r.runDue();
      clock.advance(5 * 60_000);
    }
    assert.equal(runs, 3);
    const row = await job(id);
    assert.equal(row.state, 'failed');
    assert.equal(row.attempts, 3);
    assert.ok(row.finished_at);
    assert.ok(row.last_error && row.last_error.length <= 500 && row.last_error.startsWith('xyyy'));
    assert.deepEqual(
      log.entries.map((e) => e.level),
      ['warn', 'warn', 'error'],
    );
    assert.equal(log.entries[2]?.fields?.jobId, id);
  });

  it('reschedules on RetryLater after the delay asked, logged as info, counting the attempt', async () => {
    const clock = manualClock();
    const log = recordingLog();
    const r = runner({
      clock,
      log,
      handlers: {
        patient: async (_payload, ctx) => {
          if (ctx.attempt === 1) throw new RetryLater(10_000, 'not yet');
        },
      },
    });
    const { id } = await enqueue(db, { queue: 'patient', payload: {} }, clock.now());
    assert.equal(await r.runDue(), 1);
    const row = await job(id);
    assert.equal(row.state, 'queued');
    assert.equal(row.attempts, 1);
    assert.equal(row.run_at.getTime(), clock.now().getTime() + 10_000);
    assert.equal(row.last_error, 'RetryLater: not yet');
    assert.deepEqual(
      log.entries.map((e) => e.level),
      ['info'],
    );
    clock.advance(9_999);
    assert.equal(await r.runDue(), 0);
    clock.advance(1);
    assert.equal(await r.runDue(), 1);
    assert.equal((await job(id)).state, 'done');
  });

  it('uses the retryDelay option when given', async () => {
    const clock = manualClock();
    const r = runner({
      clock,
      retryDelay: (attempt) => attempt * 7_000,
      handlers: {
        custom: async () => {
          throw new Error('again');
        },
      },
    });
    const { id } = await enqueue(db, { queue: 'custom', payload: {} }, clock.now());
    await r.runDue();
    assert.equal((await job(id)).run_at.getTime(), clock.now().getTime() + 7_000);
  });
});

describe('leases', () => {
  it('takes back a running job whose worker died (lease expired) and counts that run as an attempt', async () => {
    const clock = manualClock();
    const log = recordingLog();
    const attempts: number[] = [];
    const r = runner({ clock, log, handlers: { orphan: async (_payload, ctx) => void attempts.push(ctx.attempt) } });
    const now = clock.now();
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO jobs (queue, payload, state, run_at, attempts, max_attempts, locked_by, locked_until, created_at, updated_at)
       VALUES ('orphan', '{}', 'running', $1, 1, 5, 'dead-worker', $2, $1, $1) RETURNING id`,
      [new Date(now.getTime() - 60_000), new Date(now.getTime() + 1_000)],
    );
    const id = rows[0]?.id as number;
    assert.equal(await r.runDue(), 0, 'not before its lease expires');
    assert.equal((await job(id)).locked_by, 'dead-worker');
    clock.advance(1_000);
    assert.equal(await r.runDue(), 1);
    assert.deepEqual(attempts, [2]);
    const row = await job(id);
    assert.equal(row.state, 'done');
    assert.equal(row.attempts, 2);
    assert.match(row.last_error ?? '', /lease expired: worker dead-worker/);
    assert.equal(log.entries[0]?.level, 'warn');
    assert.equal(log.entries[0]?.fields?.worker, 'dead-worker');
  });

  it('fails a job whose worker died during its last attempt', async () => {
    const clock = manualClock();
    const log = recordingLog();
    let runs = 0;
    const r = runner({ clock, log, handlers: { 'orphan-last': async () => void runs++ } });
    const now = clock.now();
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO jobs (queue, payload, state, run_at, attempts, max_attempts, locked_by, locked_until, created_at, updated_at)
       VALUES ('orphan-last', '{}', 'running', $1, 2, 2, 'dead-worker', $1, $1, $1) RETURNING id`,
      [new Date(now.getTime() - 60_000)],
    );
    assert.equal(await r.runDue(), 0);
    assert.equal(runs, 0);
    const row = await job(rows[0]?.id as number);
    assert.equal(row.state, 'failed');
    assert.ok(row.finished_at);
    assert.equal(log.entries[0]?.level, 'error');
  });

  it('lets another runner re-run a job whose runner stopped renewing; the late outcome is discarded', async () => {
    const clock = manualClock();
    const logA = recordingLog();
    const hang = deferred();
    const started = deferred();
    const runs: string[] = [];
    const a = runner({
      clock,
      log: logA,
      id: 'worker-a',
      leaseMs: 30_000,
      handlers: {
        stuck: async () => {
          runs.push('a');
          started.resolve();
          await hang.promise;
          throw new Error('a finished late');
        },
      },
    });
    const b = runner({ clock, id: 'worker-b', leaseMs: 30_000, handlers: { stuck: async () => void runs.push('b') } });
    const { id } = await enqueue(db, { queue: 'stuck', payload: {} }, clock.now());
    const runningA = a.runDue();
    await started.promise;
    let row = await job(id);
    assert.equal(row.locked_by, 'worker-a');
    assert.equal(row.locked_until?.getTime(), clock.now().getTime() + 30_000);
    assert.equal(await b.runDue(), 0, 'b leaves a job under a live lease alone');

    clock.advance(30_001);
    assert.equal(await b.runDue(), 1);
    row = await job(id);
    assert.equal(row.state, 'done');
    assert.equal(row.attempts, 2);

    hang.resolve();
    assert.equal(await runningA, 1);
    row = await job(id);
    assert.equal(row.state, 'done', "a's late failure did not overwrite b's outcome");
    assert.equal(row.attempts, 2);
    assert.deepEqual(runs, ['a', 'b']);
    assert.ok(logA.entries.some((e) => e.level === 'warn' && /discarded/.test(e.message)));
  });

  it('renews the lease while the handler runs', async () => {
    const clock = manualClock();
    const release = deferred();
    const started = deferred();
    const r = runner({
      clock,
      leaseMs: 300,
      handlers: {
        slow: async () => {
          started.resolve();
          await release.promise;
        },
      },
    });
    const { id } = await enqueue(db, { queue: 'slow', payload: {} }, clock.now());
    const running = r.runDue();
    await started.promise;
    const first = (await job(id)).locked_until?.getTime() as number;
    clock.advance(1_000);
    await waitFor(async () => ((await job(id)).locked_until?.getTime() ?? 0) >= first + 1_000, 5_000, 'a renewed lease');
    release.resolve();
    await running;
    assert.equal((await job(id)).state, 'done');
  });
});

describe('several workers', () => {
  it('runs each of 200 jobs exactly once with two started runners', async () => {
    const clock = manualClock();
    const runs: number[] = [];
    const byRunner = { a: 0, b: 0 };
    const handler = (name: 'a' | 'b') => async (_payload: unknown, ctx: { jobId: number }) => {
      runs.push(ctx.jobId);
      byRunner[name]++;
      await sleep(Math.random() * 3);
    };
    const a = runner({ clock, concurrency: 4, pollMs: 100, handlers: { shared: handler('a') } });
    const b = runner({ clock, concurrency: 4, pollMs: 100, handlers: { shared: handler('b') } });
    a.start();
    b.start();
    try {
      await Promise.all(
        Array.from({ length: 10 }, (_, chunk) =>
          (async () => {
            for (let i = 0; i < 20; i++) await enqueue(db, { queue: 'shared', payload: { n: chunk * 20 + i } }, clock.now());
          })(),
        ),
      );
      await waitFor(
        async () => {
          const { rows } = await db.query("SELECT count(*)::int AS n FROM jobs WHERE queue = 'shared' AND state = 'done'");
          return rows[0]?.n === 200;
        },
        20_000,
        '200 done jobs',
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    assert.equal(runs.length, 200);
    assert.equal(new Set(runs).size, 200);
    assert.ok(byRunner.a > 0 && byRunner.b > 0, `both runners worked: ${JSON.stringify(byRunner)}`);
    const { rows } = await db.query("SELECT count(*)::int AS n FROM jobs WHERE queue = 'shared' AND attempts <> 1");
    assert.equal(rows[0]?.n, 0);
  });

  it('runs each of 200 jobs exactly once with two runners calling runDue at the same time', async () => {
    const clock = manualClock();
    const runs: number[] = [];
    const handlers = { 'shared-due': async (_payload: unknown, ctx: { jobId: number }) => void runs.push(ctx.jobId) };
    for (let i = 0; i < 200; i++) await enqueue(db, { queue: 'shared-due', payload: { i } }, clock.now());
    const a = runner({ clock, concurrency: 5, handlers });
    const b = runner({ clock, concurrency: 5, handlers });
    const [ranA, ranB] = await Promise.all([a.runDue(), b.runDue()]);
    assert.equal(ranA + ranB, 200);
    assert.equal(runs.length, 200);
    assert.equal(new Set(runs).size, 200);
  });
});

describe('the background loop', () => {
  it('is woken by NOTIFY: a job enqueued after start runs long before the next poll', async () => {
    const clock = manualClock();
    const ran = deferred();
    const r = runner({ clock, pollMs: 60_000, handlers: { wake: async () => ran.resolve() } });
    const before = await listeners();
    r.start();
    try {
      await waitFor(async () => (await listeners()) > before, 5_000, 'the LISTEN connection');
      await sleep(50);
      const started = Date.now();
      const { id } = await enqueue(db, { queue: 'wake', payload: {} }, clock.now());
      await Promise.race([ran.promise, sleep(5_000).then(() => assert.fail('the job did not run within 5 s'))]);
      assert.ok(Date.now() - started < 3_000);
      await waitFor(async () => (await job(id)).state === 'done', 5_000, 'done');
    } finally {
      await r.stop();
    }
  });

  it('runs one loop per runner however often start() is called', async () => {
    const clock = manualClock();
    const r = runner({ clock, handlers: { once: async () => {} } });
    const before = await listeners();
    r.start();
    r.start();
    try {
      await waitFor(async () => (await listeners()) > before, 5_000, 'the LISTEN connection');
      await sleep(100);
      assert.equal(await listeners(), before + 1);
    } finally {
      await r.stop();
    }
    await waitFor(async () => (await listeners()) === before, 5_000, 'the LISTEN connection released');
  });

  it('stop() waits for a running handler, and claims nothing more', async () => {
    const clock = manualClock();
    const started = deferred();
    let finished = 0;
    let runs = 0;
    const r = runner({
      clock,
      pollMs: 20,
      concurrency: 1,
      handlers: {
        graceful: async () => {
          runs++;
          started.resolve();
          await sleep(300);
          finished++;
        },
      },
    });
    const first = await enqueue(db, { queue: 'graceful', payload: {} }, clock.now());
    const second = await enqueue(db, { queue: 'graceful', payload: {} }, clock.now());
    r.start();
    await started.promise;
    await r.stop();
    assert.equal(finished, 1, 'the running handler finished before stop() resolved');
    assert.equal(runs, 1);
    assert.equal((await job(first.id)).state, 'done');
    assert.equal((await job(second.id)).state, 'queued');
  });

  it('logs a failing claim and keeps going', async () => {
    const clock = manualClock();
    const log = recordingLog();
    let failures = 2;
    const flaky: Database = {
      ...db,
      query: ((text: string, values?: unknown[]) => {
        if (failures > 0 && /FOR UPDATE SKIP LOCKED/.test(text)) {
          failures--;
          return Promise.reject(new Error('connection lost'));
        }
        return db.query(text, values);
      }) as Database['query'],
    };
    const ran = deferred();
    const r = createJobRunner({ db: flaky, clock, log, pollMs: 20, handlers: { resilient: async () => ran.resolve() } });
    await enqueue(db, { queue: 'resilient', payload: {} }, clock.now());
    r.start();
    try {
      await Promise.race([ran.promise, sleep(5_000).then(() => assert.fail('the job did not run'))]);
    } finally {
      await r.stop();
    }
    assert.equal(log.entries.filter((e) => e.level === 'error' && /claiming jobs failed/.test(e.message)).length, 2);
  });
});

describe('purgeFinished', () => {
  it('deletes done jobs finished before the date, keeps newer, failed and unfinished ones', async () => {
    const clock = manualClock(new Date('2026-02-01T00:00:00Z'));
    const r = runner({
      clock,
      handlers: {
        'purge-ok': async () => {},
        'purge-bad': async () => {
          throw new Error('bad');
        },
      },
    });
    const old = await enqueue(db, { queue: 'purge-ok', payload: {} }, clock.now());
    const failed = await enqueue(db, { queue: 'purge-bad', payload: {}, maxAttempts: 1 }, clock.now());
    await r.runDue();
    clock.advance(86_400_000);
    const recent = await enqueue(db, { queue: 'purge-ok', payload: {} }, clock.now());
    await r.runDue();
    const waiting = await enqueue(db, { queue: 'purge-ok', payload: {}, runAt: new Date('2027-01-01T00:00:00Z') }, clock.now());
    const purged = await purgeFinished(db, new Date(clock.now().getTime() - 3_600_000));
    assert.ok(purged >= 1);
    const left = (await db.query<{ id: number }>('SELECT id FROM jobs WHERE id = ANY($1::bigint[])', [[old.id, failed.id, recent.id, waiting.id]])).rows.map(
      (row) => row.id,
    );
    assert.deepEqual(
      left.sort((x, y) => x - y),
      [failed.id, recent.id, waiting.id],
    );
  });
});
