#!/usr/bin/env node
// Launcher of the operator CLI. The project runs on the Node 24 that it
// installs (npm package `node@24`); when started by an older system Node, it
// re-runs itself with that one. Plain JavaScript so that any Node can read it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major >= 24) {
  await import('../src/cli/main.ts');
} else {
  const node24 = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(node24)) {
    process.stderr.write(`charging-access needs Node 24 (found ${process.version}); run npm install first.\n`);
    process.exit(1);
  }
  const result = spawnSync(node24, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
