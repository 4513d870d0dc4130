// What fills the old generation of a service process: V8's sampling heap profiler, driven over the inspector
// protocol (the service runs with --inspect on a loopback port of the bench's choosing), keeping the samples of
// objects that survived the young generation (collected later by a major GC, or still alive) and dropping those
// a scavenge collected. So the profile shows where the objects come from that the old generation has to hold
// and collect: by allocating function and by package, with their sampled bytes. The profile is written as a
// .heapprofile file (DevTools, Memory tab, "Load").
import { writeFile } from 'node:fs/promises';

/** One node of the profile's call tree (the inspector's SamplingHeapProfileNode). */
interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

export interface AllocationSampling {
  /** Stops sampling, writes the profile to `file` and returns the lines of its summary. */
  stop(file: string, top?: number): Promise<string[]>;
}

/** Starts sampling in the process whose inspector listens on `inspectorPort` (127.0.0.1). */
export async function startAllocationSampling(inspectorPort: number): Promise<AllocationSampling> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${inspectorPort}`);
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`cannot connect to the inspector at ${url}`)), { once: true });
  });
  let nextId = 1;
  const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const pending = message.id === undefined ? undefined : waiting.get(message.id);
    if (!pending || message.id === undefined) return;
    waiting.delete(message.id);
    if (message.error) pending.reject(new Error(message.error.message));
    else pending.resolve(message.result);
  });
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send('HeapProfiler.enable');
  // One sample per 64 KiB allocated on average; objects a scavenge collects are dropped from the profile.
  await send('HeapProfiler.startSampling', { samplingInterval: 65_536, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
  return {
    async stop(file: string, top = 20): Promise<string[]> {
      try {
        const { profile } = (await send('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
        await writeFile(file, JSON.stringify(profile));
        return summary(profile.head, top);
      } finally {
        socket.close();
      }
    },
  };
}

function summary(head: ProfileNode, top: number): string[] {
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode) => {
    if (node.selfSize > 0) {
      const { functionName, url, lineNumber } = node.callFrame;
      const where = url.replace(/^file:\/\/.*?\/(node_modules|src)\//, '$1/');
      const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
      byPackage.set(packageOf(url), (byPackage.get(packageOf(url)) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  walk(head);
  const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(1).padStart(7)} MiB ${((bytes / total) * 100).toFixed(1).padStart(5)}%`;
  const best = (map: Map<string, number>) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `sampled allocations that outlived the young generation: ${(total / 1_048_576).toFixed(1)} MiB`,
    'by package (or src/ directory):',
    ...best(byPackage).map(([key, bytes]) => `  ${mib(bytes)}  ${key}`),
    'by allocating function:',
    ...best(byFunction).map(([key, bytes]) => `  ${mib(bytes)}  ${key}`),
  ];
}

function packageOf(url: string): string {
  const inModules = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules?.[1]) return inModules[1];
  const inSrc = /\/(src\/[^/]+(\/[^/]+)?)\//.exec(url);
  if (inSrc?.[1]) return inSrc[1];
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  if (url === '') return '(no script: V8, native)';
  return url.replace(/^file:\/\/.*\//, '');
}
