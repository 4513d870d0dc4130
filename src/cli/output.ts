// What CLI commands write: their answer on stdout (JSON with --json, else
// text), and progress on stderr when it is a terminal.
import type { Progress } from '../modules/stations/loader.ts';

export function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/** Progress on a terminal (stderr), nothing when output is redirected. */
export function progress(unit: string): Progress | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = 0;
  return (done, total) => {
    const now = performance.now();
    if (now - last < 200 && done !== total) return;
    last = now;
    const share = total ? ` (${Math.floor((100 * done) / total)}%)` : '';
    process.stderr.write(`\r${done}${total ? `/${total}` : ''} ${unit}${share}   `);
    if (done === total) process.stderr.write('\n');
  };
}
