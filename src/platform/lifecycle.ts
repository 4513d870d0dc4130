// What a process started, in order, so that a shutdown or a failed start-up
// stops exactly that, last started first, each step bounded in time: a step
// that hangs (a pool waiting for a connection that never comes back) must not
// keep a half-started process alive.

export interface StopList {
  /** Registers how to stop something just started (or about to be: stopping what never started must be harmless). */
  add(name: string, stop: (remainingMs: number) => Promise<void> | void): void;
  /** Runs every stop, last added first; failures and timeouts are reported, never thrown. */
  stopAll(report: (name: string, error: Error) => void): Promise<void>;
  /** Runs (and removes) only the named stop. */
  stopOne(name: string, report: (name: string, error: Error) => void): Promise<void>;
}

/**
 * `graceMs`: the whole stop's budget (SHUTDOWN_GRACE_MS), counted from the first stop: a step that lets work in flight
 * finish is given what is left of it (`remainingMs`), so graces of several steps do not add up.
 */
export function createStopList(options: { stepTimeoutMs: number; graceMs?: number }): StopList {
  type Step = { name: string; stop: (remainingMs: number) => Promise<void> | void };
  const steps: Step[] = [];
  let deadline: number | undefined;
  const run = async (step: Step, report: (name: string, error: Error) => void) => {
    deadline ??= Date.now() + (options.graceMs ?? options.stepTimeoutMs);
    const remainingMs = Math.max(0, deadline - Date.now());
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`did not stop within ${options.stepTimeoutMs} ms`)), options.stepTimeoutMs);
    });
    try {
      await Promise.race([Promise.resolve().then(() => step.stop(remainingMs)), timeout]);
    } catch (error) {
      report(step.name, error as Error);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    add(name, stop) {
      steps.push({ name, stop });
    },
    async stopAll(report) {
      while (steps.length > 0) await run(steps.pop() as (typeof steps)[number], report);
    },
    async stopOne(name, report) {
      const index = steps.findIndex((s) => s.name === name);
      if (index === -1) return;
      const [step] = steps.splice(index, 1);
      if (step) await run(step, report);
    },
  };
}

/** A listener that cannot bind says which setting names its port. */
export async function listening<T>(what: string, variable: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { address?: string; port?: number };
    if (e.code === 'EADDRINUSE' || e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL') {
      const where = e.address !== undefined ? ` ${e.address}:${e.port}` : '';
      const why = e.code === 'EADDRINUSE' ? 'the address is already in use' : e.code === 'EACCES' ? 'permission denied' : 'no such local address';
      throw new Error(`${what} cannot listen on${where} (${variable}): ${why}`);
    }
    throw error;
  }
}
