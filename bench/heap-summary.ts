// What a V8 heap snapshot holds (one written by `npm run bench:charging -- --heap-snapshots DIR`, or any
// .heapsnapshot): the live objects grouped like DevTools' "Summary" view (by constructor for objects, by kind
// for strings, arrays, code, closures, native memory), with their count and self size, biggest first; with two
// snapshots, the growth of each group from the first to the second. It reads the whole file into memory
// (about 5-8x the heap it describes).
//
//   node bench/heap-summary.ts FILE [--top 30]
//   node bench/heap-summary.ts FIRST SECOND [--top 30]     # what grew between them
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Group {
  count: number;
  bytes: number;
}

/** Live objects by group: "Name" for objects (their constructor), "(kind)" or "(kind) name" for the rest. */
function groups(heap: Snapshot): Map<string, Group> {
  const fields = heap.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const types = heap.snapshot.meta.node_types[0];
  const result = new Map<string, Group>();
  for (let i = 0; i < heap.nodes.length; i += width) {
    const type = types[heap.nodes[i + typeAt] as number] ?? '?';
    const name = heap.strings[heap.nodes[i + nameAt] as number] ?? '';
    const key = groupOf(type, name);
    const group = result.get(key) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += heap.nodes[i + sizeAt] as number;
    result.set(key, group);
  }
  return result;
}

function groupOf(type: string, name: string): string {
  switch (type) {
    case 'object':
      return name;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'native':
      // Backing stores and the like: named for what they are ("system / JSArrayBufferData", "Node / TLSWrap" ...).
      return `(native) ${name.replace(/ \/ .*$/, '').slice(0, 60)}`;
    case 'closure':
      return '(closure)';
    case 'array':
      return `(array) ${name.slice(0, 40)}`;
    default:
      return `(${type})`;
  }
}

const mib = (bytes: number) => (bytes / 1_048_576).toFixed(2);

async function load(file: string): Promise<Map<string, Group>> {
  return groups(JSON.parse(await readFile(file, 'utf8')) as Snapshot);
}

function print(title: string, rows: [string, Group, number][], top: number): void {
  const total = rows.reduce((sum, [, g]) => sum + g.bytes, 0);
  process.stdout.write(`${title}: ${mib(total)} MiB in ${rows.reduce((sum, [, g]) => sum + g.count, 0)} objects\n`);
  for (const [key, group, delta] of rows.slice(0, top)) {
    process.stdout.write(
      `${mib(group.bytes).padStart(9)} MiB ${String(group.count).padStart(9)}  ${delta === 0 ? '' : `${delta > 0 ? '+' : ''}${mib(delta)} MiB  `}${key}\n`,
    );
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' } } });
  const top = Number(values.top);
  if (positionals.length < 1 || positionals.length > 2 || !Number.isInteger(top)) {
    process.stderr.write('usage: node bench/heap-summary.ts FILE [SECOND_FILE] [--top N]\n');
    process.exit(2);
  }
  const [first, second] = await Promise.all(positionals.map(load));
  if (!first) return;
  if (!second) {
    print(
      positionals[0] as string,
      [...first.entries()].map(([k, g]): [string, Group, number] => [k, g, 0]).sort((a, b) => b[1].bytes - a[1].bytes),
      top,
    );
    return;
  }
  const rows = [...second.entries()].map(([k, g]): [string, Group, number] => [k, g, g.bytes - (first.get(k)?.bytes ?? 0)]);
  print(
    `${positionals[1]}, biggest`,
    [...rows].sort((a, b) => b[1].bytes - a[1].bytes),
    top,
  );
  print(
    `\ngrowth since ${positionals[0]}`,
    [...rows].sort((a, b) => b[2] - a[2]),
    top,
  );
}

await main();
