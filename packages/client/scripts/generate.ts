// `npm run sdk:generate`: regenerates packages/client/src/generated/ from the API's OpenAPI document.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generated } from './generate-types.ts';

const root = path.join(import.meta.dirname, '..');
for (const [file, content] of Object.entries(await generated())) {
  await mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await writeFile(path.join(root, file), content);
  process.stdout.write(`wrote packages/client/${file} (${content.length} characters)\n`);
}
