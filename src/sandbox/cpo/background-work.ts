import { sharedPasses } from '../../platform/shared-passes.ts';

// The sandbox CPO's background work: the outbox delivery and the simulation
// pass, every `tickMs` once started (the outbox also at once after a change).
// Each pass is shared by overlapping callers (the timers, the outbox kick,
// runDueWork in tests); its failure goes to its reporter, and the callers'
// promise always resolves.

export interface SharedPass {
  /** Runs a pass, or joins the one under way. */
  run(): Promise<void>;
  /** The pass under way, if any. */
  running(): Promise<void> | undefined;
}

/**
 * Delivers the due outbox; calls share passes (sharedPasses: a call during a pass joins the one after it, so a steady
 * stream of kicks never keeps one promise pending), none after `stopped`.
 */
function sharedOutboxDelivery(deliverDue: () => Promise<unknown>, failed: (error: Error) => void, stopped: () => boolean): SharedPass {
  const passes = sharedPasses(async () => {
    if (!stopped()) await deliverDue().catch(failed);
  });
  return { run: passes.run, running: passes.current };
}

/** A pass that overlapping calls share (calls made meanwhile get the pass under way, not another one). */
export function sharedPass(pass: () => Promise<void>, failed: (error: Error) => void): SharedPass {
  let passing: Promise<void> | undefined;
  return {
    run(): Promise<void> {
      passing ??= pass()
        .catch(failed)
        .finally(() => {
          passing = undefined;
        });
      return passing;
    },
    running: () => passing,
  };
}

/** The outbox delivery and the timers: nothing runs by itself before `start`, nor after `stop`. */
export function createBackgroundWork(tickMs: number, deliverDue: () => Promise<unknown>, outboxFailed: (error: Error) => void) {
  let started = false;
  let closed = false;
  const timers: NodeJS.Timeout[] = [];
  const outbox = sharedOutboxDelivery(deliverDue, outboxFailed, () => closed);

  return {
    /** Delivers the due outbox (joining the delivery under way). */
    deliverOutbox: outbox.run,
    /** The outbox delivery under way, if any. */
    outboxRunning: outbox.running,

    /** Asks for the outbox to be delivered soon (only while started). */
    kickOutbox(): void {
      if (started && !closed) setImmediate(() => void outbox.run());
    },

    /** Runs `simulate` and the outbox delivery every `tickMs`. */
    start(simulate: () => Promise<void>): void {
      if (started || closed) return;
      started = true;
      timers.push(
        setInterval(() => void simulate(), tickMs),
        setInterval(() => void outbox.run(), tickMs),
      );
      for (const timer of timers) timer.unref();
    },

    /** Stops the timers and the kicks for good. */
    stop(): void {
      closed = true;
      for (const timer of timers) clearInterval(timer);
    },
  };
}
