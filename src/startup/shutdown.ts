// How the service stops: on SIGINT/SIGTERM (a second signal leaves at once),
// or after a failed start-up. Either way the stop list stops what was started,
// last first.
import type { Logger } from 'pino';
import type { StartupContext } from './context.ts';

/** The embedded PostgreSQL's name on the stop list: a second signal stops only that. */
export const EMBEDDED_POSTGRES = 'embedded PostgreSQL';

/** Whether the process is stopping (a signal or a failed start-up), shared by both ways of stopping. */
export interface Stopping {
  stopping: boolean;
}

function stopFailureReporter(log: Logger): (name: string, error: Error) => void {
  return (name, error) => log.error({ reason: error.message }, `stopping the ${name} failed`);
}

/** SIGINT/SIGTERM stop everything and exit 0; a second signal stops only the embedded PostgreSQL and exits 1 at once. */
export function stopOnSignals({ log, stops }: StartupContext): Stopping {
  const reportStop = stopFailureReporter(log);
  const state: Stopping = { stopping: false };
  const shutdown = async (signal: string) => {
    if (state.stopping) {
      // Out at once, but not leaving the embedded PostgreSQL running behind us.
      log.warn('second signal: stopping the embedded PostgreSQL and exiting at once');
      await stops.stopOne(EMBEDDED_POSTGRES, reportStop);
      process.exit(1);
    }
    state.stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    await stops.stopAll(reportStop);
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  return state;
}

/** A failed start-up: one clear line, what was started stopped (last first), exit 1; unless a signal is already stopping it all. */
export async function stopAfterFailedStart({ log, stops }: StartupContext, state: Stopping, error: unknown): Promise<void> {
  if (state.stopping) return; // a signal during start-up: the shutdown stops what was started
  state.stopping = true;
  // One clear line (the cause's message); the stack only at debug, for whoever hunts a bug.
  log.fatal({ reason: (error as Error).message }, `start-up failed: ${(error as Error).message}`);
  log.debug({ err: error }, 'start-up failure');
  await stops.stopAll(stopFailureReporter(log));
  process.exit(1);
}
