// The CI check of the SDK's generated files: they are regenerated in memory from the API's OpenAPI document (the
// app built in-process, as `npm run sdk:generate` builds it) and must equal the checked-in ones. A change to the API
// that was not regenerated fails here.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { generated } from '../scripts/generate-types.ts';

const root = path.join(import.meta.dirname, '..');

test('the checked-in generated files are what the API generates now (else: npm run sdk:generate)', async () => {
  const files = await generated();
  assert.deepEqual(Object.keys(files).sort(), ['src/generated/api.ts', 'src/generated/operations.ts']);
  for (const [file, content] of Object.entries(files)) {
    const checkedIn = await readFile(path.join(root, file), 'utf8');
    if (checkedIn !== content) {
      const lines = checkedIn.split('\n');
      const fresh = content.split('\n');
      const at = fresh.findIndex((line, i) => line !== lines[i]);
      assert.fail(
        `packages/client/${file} differs from what the API generates (first at line ${at + 1}: ${JSON.stringify(lines[at])} vs ${JSON.stringify(fresh[at])}): run npm run sdk:generate and commit it`,
      );
    }
  }
});
