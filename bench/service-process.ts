// One service process for a benchmark: `node src/main.ts` as `npm start` runs it, in development, on a free loopback
// port (plain HTTP, PUBLIC_BASE_URL set to it), with the caller's settings; answered once /readyz says 200.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../src/platform/free-port.ts';

const root = path.resolve(import.meta.dirname, '..');
const READY_WITHIN_MS = 120_000;

export interface ServiceProcess {
  child: ChildProcess;
  /** What it wrote (stdout and stderr), for the message of a failure. */
  output: string[];
  exited: Promise<number | null>;
  base: string;
}

/**
 * The Node and V8 flags `npm start` gives the service: the words between `node` and `src/main.ts` in package.json's
 * start script (the heap sizing of the service, see README "Memory"), so that a benchmark measures the process
 * `npm start` runs.
 */
export function startScriptNodeFlags(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  const words = (manifest.scripts?.start ?? '').trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'src/main.ts') {
    throw new Error(`package.json's start script is not "node [flags] src/main.ts": ${JSON.stringify(manifest.scripts?.start)}`);
  }
  return words.slice(1, -1);
}

export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...startScriptNodeFlags(), path.join(root, 'src/main.ts')], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'development', HOST: '127.0.0.1', PORT: String(port), PUBLIC_BASE_URL: base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited:\n${output.join('')}`);
    if (Date.now() > deadline) throw new Error(`not ready in ${READY_WITHIN_MS / 1000} s:\n${output.join('')}`);
    const ready = await fetch(`${base}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return { child, output, exited, base };
    await sleep(100);
  }
}
