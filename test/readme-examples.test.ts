// Every example in README.md, run as printed against a started service: the real
// `node src/main.ts` (as `npm start` runs it: HTTPS with its own certificate, the
// demo client, the built-in Stripe sandbox and sandbox CPO network) on a
// throw-away DATA_DIR and the test PostgreSQL, from a directory that looks like
// the repository to the examples (`data/` is the service's DATA_DIR, `npx
// charging-access` is this checkout's CLI).
//
// How README.md marks its blocks: the line before each ```sh block is
//   <!-- example: NAME -->                         run, in README order, in one shell (variables carry over)
//   <!-- example: NAME (not run: REASON) -->       illustrative only; REASON says why (keep these few)
// and a block of another language may be
//   <!-- example: NAME (file: FILE) -->            written to FILE, for the examples after it to run.
// A `# prints: TEXT` comment in a block is checked: the block's output contains TEXT (in that order).
// The shell runs with `set -euo pipefail`; curl fails on an HTTP error status unless the example prints the
// status itself (`-w '%{http_code}'`, then its `# prints:` checks it), and a timeout the example asks for
// (`--max-time`) is not a failure. The only rewrite: the ports (the service's 8443 and the receiver's 4000 are
// free ports here, so that a developer's running service is never touched).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ServiceProcess, startServiceProcess } from '../bench/service-process.ts';
import { freePort } from '../src/platform/free-port.ts';
import { SCENARIOS } from '../src/sandbox/cpo/scenarios.ts';
import { CARD_BEHAVIOURS } from '../src/sandbox/stripe/cards.ts';
import { createTestDatabase } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '..');
const RUN_WITHIN_MS = 150_000;
const ARTEFACTS = path.join(root, '.tmp', 'readme');
const MARKER = /^<!-- example: ([a-z0-9-]+)(?: \((not run|file): (.+)\))? -->$/;

interface ReadmeBlock {
  name: string;
  lang: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  mode: 'run' | 'not run' | 'file';
  /** Why it is not run, or the file it is written to. */
  note?: string;
}

/** The fenced blocks of a README with their markers; an unmarked shell block is an error (every example is run or says why not). */
function readmeBlocks(text: string): ReadmeBlock[] {
  const lines = text.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)$/.exec(lines[i] as string);
    if (!fence) continue;
    const end = lines.indexOf('```', i + 1);
    assert.ok(end > i, `README.md:${i + 1}: an unclosed block`);
    const lang = fence[1] ?? '';
    let before = i - 1;
    while (before >= 0 && (lines[before] as string).trim() === '') before--;
    const marker = MARKER.exec((lines[before] ?? '').trim());
    const code = lines.slice(i + 1, end).join('\n');
    i = end;
    if (!marker) {
      assert.ok(!['sh', 'bash', 'shell'].includes(lang), `README.md:${i + 1}: a shell block without an <!-- example: NAME --> marker`);
      continue;
    }
    const kind = marker[2] as 'not run' | 'file' | undefined;
    blocks.push({ name: marker[1] as string, lang, code, line: before + 2, mode: kind ?? 'run', ...(marker[3] ? { note: marker[3] } : {}) });
  }
  return blocks;
}

/** What a block's `# prints: TEXT` comments say it prints, in order. */
const printsOf = (code: string) => [...code.matchAll(/#\s*prints:\s*(.+?)\s*$/gm)].map((m) => m[1] as string);

const PRELUDE = [
  'set -euo pipefail',
  'curl() {',
  '  local strict=(--fail-with-body) timeout_ok=0 a code=0',
  '  for a in "$@"; do',
  "    if [[ $a == *'%{http_code}'* ]]; then strict=(); fi",
  '    if [[ $a == --max-time || $a == -m ]]; then timeout_ok=1; fi',
  '  done',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash array expansion, not a JavaScript template
  '  command curl -sS "${strict[@]}" "$@" || code=$?',
  '  if [[ $code -eq 28 && $timeout_ok -eq 1 ]]; then code=0; fi',
  '  return $code',
  '}',
  "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT",
].join('\n');

const readme = await readFile(path.join(root, 'README.md'), 'utf8');

describe('README.md', () => {
  it('marks every shell block: run, or not run with a reason; few are not run', () => {
    const blocks = readmeBlocks(readme);
    const names = blocks.map((b) => b.name);
    assert.equal(new Set(names).size, names.length, `example names are unique: ${names.join(', ')}`);
    const skipped = blocks.filter((b) => b.mode === 'not run');
    for (const b of skipped) assert.ok((b.note ?? '').length > 20, `README.md:${b.line}: ${b.name} says why it is not run`);
    const run = blocks.filter((b) => b.mode === 'run');
    assert.ok(run.length >= 2 * skipped.length, `${run.length} run, ${skipped.length} not run (${skipped.map((b) => b.name).join(', ')})`);
  });

  it("lists the sandbox network's scenario EVSEs and the payment sandbox's test cards, exactly", () => {
    const listed = new Set([...readme.matchAll(/DE\*HHC\*ESCN\*([A-Z]+)|\.\.\.\*([A-Z]+)/g)].map((m) => m[1] ?? m[2]));
    assert.deepEqual([...listed].sort(), [...SCENARIOS].sort());
    const cardsParagraph = readme.slice(readme.indexOf('Test cards (Stripe'), readme.indexOf('### Using Stripe'));
    const cards = new Set([...cardsParagraph.matchAll(/`(\d{16})`/g)].map((m) => m[1]));
    assert.deepEqual([...cards].sort(), ['4242424242424242', ...Object.keys(CARD_BEHAVIOURS)].sort());
  });
});

describe('README.md examples against a started service', { timeout: RUN_WITHIN_MS + 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dir: string;
  let service: ServiceProcess | undefined;
  let port: number;

  before(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-readme-'));
    await chmod(dir, 0o755);
    // What the examples see of the repository: its package and CLI, and data/ (the service's DATA_DIR).
    for (const entry of ['package.json', 'node_modules', 'bin', 'src']) await symlink(path.join(root, entry), path.join(dir, entry));
    await mkdir(path.join(dir, 'data'));
    service = await startServiceProcess({
      DATABASE_URL: database.url,
      DATA_DIR: path.join(dir, 'data'),
      // As npm start: the address it announces is https://localhost:PORT.
      PUBLIC_BASE_URL: '',
      CPO_SANDBOX_PORT: String(await freePort()),
      // The examples poll; at 600x the charging ones take seconds.
      CPO_SANDBOX_TIME_COMPRESSION: '600',
      STATIONS_DEFAULT_LOCATIONS: '30',
      METRICS_PORT: 'off',
      LOG_LEVEL: 'warn',
    });
    port = Number(new URL(service.base).port);
  });
  after(async () => {
    service?.child.kill('SIGTERM');
    await service?.exited;
    await database?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('every example runs as printed and prints what it says', { timeout: RUN_WITHIN_MS + 10_000 }, async (t) => {
    const receiverPort = await freePort();
    const rewrite = (code: string) =>
      code
        .replaceAll('localhost:8443', `localhost:${port}`)
        .replaceAll('localhost:4000', `localhost:${receiverPort}`)
        .replaceAll('listen(4000', `listen(${receiverPort}`);
    const blocks = readmeBlocks(readme);
    let script = PRELUDE;
    for (const b of blocks) {
      if (b.mode === 'file') await writeFile(path.join(dir, b.note as string), rewrite(b.code));
      if (b.mode !== 'run') continue;
      script += `\necho "::example ${b.name}::"; echo "::at ${b.name} $(date +%s.%N)" >&2\n${rewrite(b.code)}\necho '::end ${b.name}::'\n`;
    }
    await writeFile(path.join(dir, 'readme-examples.sh'), script);

    const started = performance.now();
    const child = spawn('bash', ['readme-examples.sh'], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', DATABASE_URL: database.url, NODE_ENV: 'development' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_WITHIN_MS);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    clearTimeout(timer);
    const seconds = (performance.now() - started) / 1000;
    // Kept for a look afterwards (what each example printed, and when each started).
    await mkdir(ARTEFACTS, { recursive: true });
    await writeFile(path.join(ARTEFACTS, 'readme-examples.log'), `${out}\n--- stderr ---\n${err}`);

    const ran = [...out.matchAll(/^::example (.+)::$/gm)].map((m) => m[1] as string);
    const last = ran.at(-1);
    const failed = last && !out.includes(`::end ${last}::`) ? blocks.find((b) => b.name === last) : undefined;
    const tail = (text: string) => text.split('\n').slice(-25).join('\n');
    assert.equal(
      code,
      0,
      `${failed ? `the example "${failed.name}" (README.md:${failed.line}) failed` : 'the examples failed'} after ${seconds.toFixed(1)} s\n--- output ---\n${tail(out)}\n--- errors ---\n${tail(err)}`,
    );
    for (const b of blocks.filter((x) => x.mode === 'run')) {
      const output = out.slice(out.indexOf(`::example ${b.name}::`), out.indexOf(`::end ${b.name}::`));
      let from = 0;
      for (const expected of printsOf(rewrite(b.code))) {
        const at = output.indexOf(expected, from);
        assert.ok(at >= 0, `the example "${b.name}" (README.md:${b.line}) prints "${expected}"; it printed:\n${output}`);
        from = at + expected.length;
      }
    }
    assert.deepEqual(
      ran,
      blocks.filter((b) => b.mode === 'run').map((b) => b.name),
    );
    // Their run time is reported, not asserted (about 50 s here; a loaded machine takes longer).
    t.diagnostic(`the examples took ${seconds.toFixed(1)} s`);
  });
});
