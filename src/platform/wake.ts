// A background loop's wake-up: the loop sleeps in waitForWake until its poll interval passes or something calls
// wake (a NOTIFY, a finished task freeing a slot, stop()). A wake while the loop is busy is kept (pending), so the
// next wait returns at once instead of sleeping through it. Shared by the job runner and the webhook delivery.

/** What a loop keeps of its wake-up state. */
export interface Wakeable {
  pending: boolean;
  stopping: boolean;
  wakeUp: (() => void) | undefined;
}

export function wake(loop: Wakeable): void {
  loop.pending = true;
  loop.wakeUp?.();
}

/** Resolves after `ms`, or at once on a wake (also one that came while the loop was busy) or while stopping. */
export function waitForWake(loop: Wakeable, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (loop.pending || loop.stopping) return resolve();
    const done = () => {
      clearTimeout(timer);
      loop.wakeUp = undefined;
      resolve();
    };
    const timer = setTimeout(done, ms);
    loop.wakeUp = done;
  });
}
