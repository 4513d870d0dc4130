// Named points in multi-step work (the charging saga, the bill job, applying
// a CDR) where a test kills the real process, to prove that a restart leaves
// no orphan hold, no double charge and no lost CDR. Configured only through
// TEST_CRASH_POINTS, which config.ts refuses in production; without it every
// point is a no-op.

/** Called at a named point; kills the process there when that point is configured. */
export type CrashPoint = (name: CrashPointName) => void;

/** Every point, in the order the work passes them. */
export const CRASH_POINTS = [
  // Start saga (charging/start.ts)
  'start:begun', // the session row is committed, no hold yet
  'start:hold-placed', // the processor authorized the hold, not yet recorded as held
  'start:held', // recorded as held, START_SESSION not sent
  'start:command-accepted', // the CPO accepted START_SESSION, not yet recorded
  'start:accepted', // recorded as accepted, the 201 not yet answered
  // Stop
  'stop:command-accepted', // the CPO accepted STOP_SESSION, not yet recorded as stopping
  // A CDR from the CPO (inside the transaction that stores it: the CPO gets no answer and sends it again)
  'cdr:applied',
  // Bill job (invoicing/bill.ts)
  'bill:priced', // the bill is recorded as priced, nothing captured
  'bill:captured', // the processor captured the hold, not yet recorded
  'bill:charged', // the excess was charged off-session, not yet recorded
  'bill:settled', // recorded as settled, no invoice yet
] as const;

export type CrashPointName = (typeof CRASH_POINTS)[number];

export const noCrashPoints: CrashPoint = () => {};

/** The crash point function for the configured names (none: a no-op). Unknown names are refused. */
export function crashPoints(names: readonly string[]): CrashPoint {
  if (names.length === 0) return noCrashPoints;
  const wanted = new Set<string>(names);
  for (const name of wanted) {
    if (!(CRASH_POINTS as readonly string[]).includes(name)) throw new Error(`unknown crash point ${name}`);
  }
  return (name) => {
    if (!wanted.has(name)) return;
    process.stderr.write(`crash point ${name}: killing the process (TEST_CRASH_POINTS)\n`);
    process.kill(process.pid, 'SIGKILL');
  };
}
