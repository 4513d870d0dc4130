// Writes the SDK's generated files from the API's OpenAPI document (scripts/openapi-document.ts): the types
// (openapi-typescript) and the table of writes that take an Idempotency-Key. `generated()` is also what the CI check
// (test/generated.test.ts) compares with the checked-in files.
import openapiTS, { astToString } from 'openapi-typescript';
import { clientDocument, type OpenApiDocument, serviceDocument } from './openapi-document.ts';

const HEADER = (what: string) =>
  `// Generated from the Charging Access OpenAPI document by \`npm run sdk:generate\` (${what}). Do not edit: the CI\n` +
  '// check (packages/client/test/generated.test.ts) fails when this file differs from what the API generates.\n';

/** The generated files: path (relative to packages/client/) -> content. */
export async function generated(document?: OpenApiDocument): Promise<Record<string, string>> {
  const doc = clientDocument(document ?? (await serviceDocument()));
  const ast = await openapiTS(doc as Parameters<typeof openapiTS>[0], { silent: true, alphabetize: true });
  return {
    'src/generated/api.ts': `${HEADER('openapi-typescript')}\n${astToString(ast)}`,
    'src/generated/operations.ts': `${HEADER('the operations table')}\n${operationsTable(doc)}`,
  };
}

const WRITES = ['post', 'put', 'patch', 'delete'];

/** `METHOD path` of every write that accepts an Idempotency-Key (so the SDK sends one and may retry it). */
function operationsTable(doc: OpenApiDocument): string {
  const idempotent: string[] = [];
  const paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>> = doc.paths ?? {};
  for (const [path, item] of Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const method of WRITES) {
      const parameters = item[method]?.parameters ?? [];
      if (parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')) idempotent.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return [
    '/** Writes that accept an Idempotency-Key: the SDK sends one on each (a retry repeats it) and may retry them. */',
    'export const IDEMPOTENT_WRITES: ReadonlySet<string> = new Set([',
    ...idempotent.map((op) => `  '${op}',`),
    ']);',
    '',
  ].join('\n');
}
