// CI-only extra check: validates recorded OCPI messages against the OFFICIAL
// OCPI 2.2.1 OpenAPI, when a copy of it sits next to the repository
// (../shared/reference/ocpi-2.2.1/openapi). Our own schemas (src/ocpi-protocol/*.ts) are
// written from the spec's text; this catches any message they let through that
// the official schemas refuse. Without that folder it prints a notice and
// exits 0, so clones without it are unaffected.
//
//   node scripts/ocpi-official-check.ts [recordings-dir] [--openapi <dir>]
//
// recordings-dir (default .ocpi-recordings/) holds *.json files, each
// { "schema": "<component name>", "message": <object> }, as written by
// recordOcpiMessage (src/ocpi-protocol/validate.ts) when setOcpiRecorder(dir) is on.
// "Version" may hold one Version or the array a versions endpoint returns.
// Exit codes: 0 all match (or no official copy), 1 a message failed or the
// recordings cannot be read, 2 the official OpenAPI cannot be loaded.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsImport as unknown as { default?: typeof addFormatsImport }).default ?? addFormatsImport) as unknown as (ajv: Ajv) => Ajv;

const repoRoot = path.resolve(import.meta.dirname, '..');
const BASE_URI = 'https://ocpi-openapi.invalid/';

function parseArgs(argv: string[]): { recordings: string; openapi: string } {
  let recordings: string | undefined;
  let openapi = path.resolve(repoRoot, '../shared/reference/ocpi-2.2.1/openapi');
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--openapi') {
      const value = argv[i + 1];
      if (!value) throw new Error('--openapi needs a directory');
      openapi = path.resolve(value);
      i += 1;
    } else if (recordings === undefined) {
      recordings = arg;
    } else {
      throw new Error(`unexpected argument: ${arg}`);
    }
  }
  return { recordings: path.resolve(recordings ?? '.ocpi-recordings/'), openapi };
}

type YamlParse = (text: string, file: string) => unknown;

const PYTHON_YAML_TO_JSON = 'import json, sys, yaml\nwith open(sys.argv[1], encoding="utf-8") as f:\n    print(json.dumps(yaml.safe_load(f)))';

/** The `yaml` package when installed (it arrives as a dependency of a dependency), else python3 with PyYAML. */
async function yamlParser(): Promise<YamlParse> {
  const specifier = 'yaml';
  try {
    const module = (await import(specifier)) as { parse?: (text: string) => unknown; default?: { parse?: (text: string) => unknown } };
    const parse = module.parse ?? module.default?.parse;
    if (parse) return (text) => parse(text);
  } catch {
    // not installed: try python3 below
  }
  try {
    execFileSync('python3', ['-c', 'import yaml'], { stdio: 'ignore' });
  } catch {
    throw new Error('no YAML parser: neither the npm package "yaml" nor python3 with PyYAML is available');
  }
  return (_text, file) => JSON.parse(execFileSync('python3', ['-c', PYTHON_YAML_TO_JSON, file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
}

function schemaFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => /(^|[\\/])schema\.ya?ml$/.test(file))
    .map((file) => file.split(path.sep).join('/'))
    .sort();
}

/**
 * The OpenAPI marks some enums "format: open-enum": the listed values are the
 * known ones and others may appear (custom module ids, newer versions). Such
 * an enum is informative, so it is dropped before validating.
 */
function openEnums(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) openEnums(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  if (record.format === 'open-enum' && Array.isArray(record.enum)) delete record.enum;
  for (const value of Object.values(record)) openEnums(value);
}

/** OCPI DateTime (types.asciidoc): RFC 3339, where a missing zone designator means UTC. */
function ocpiDateTime(value: string): boolean {
  const match = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/i.exec(value);
  return match !== null && !Number.isNaN(Date.parse(match[2] ? value : `${value}Z`));
}

interface OfficialSchemas {
  validate(name: string): ValidateFunction | undefined;
  names: string[];
}

async function loadOfficial(dir: string): Promise<OfficialSchemas> {
  const parse = await yamlParser();
  const ajv = addFormats(new Ajv({ allErrors: true, strict: false, validateSchema: false }));
  ajv.addFormat('date-time', { type: 'string', validate: ocpiDateTime });
  ajv.addFormat('enum', true);
  ajv.addFormat('open-enum', true);
  const byName = new Map<string, string>();
  const byLowerName = new Map<string, string>();
  const files = schemaFiles(dir);
  if (files.length === 0) throw new Error(`no schema.yaml files under ${dir}`);
  for (const file of files) {
    const document = parse(readFileSync(path.join(dir, file), 'utf8'), path.join(dir, file)) as { components?: { schemas?: Record<string, unknown> } };
    openEnums(document);
    const uri = `${BASE_URI}${file}`;
    ajv.addSchema(document as object, uri);
    for (const name of Object.keys(document.components?.schemas ?? {})) {
      const ref = `${uri}#/components/schemas/${name}`;
      if (!byName.has(name)) byName.set(name, ref);
      if (!byLowerName.has(name.toLowerCase())) byLowerName.set(name.toLowerCase(), ref);
    }
  }
  const compiled = new Map<string, ValidateFunction>();
  return {
    names: [...byName.keys()].sort(),
    validate(name) {
      const ref = byName.get(name) ?? byLowerName.get(name.toLowerCase());
      if (ref === undefined) return undefined;
      let validate = compiled.get(ref);
      if (validate === undefined) {
        validate = ajv.compile({ $ref: ref });
        compiled.set(ref, validate);
      }
      return validate;
    },
  };
}

function explain(errors: readonly ErrorObject[] | null | undefined, prefix = ''): string[] {
  return (errors ?? []).map((e) => {
    const where = `${prefix}${e.instancePath}` || '/';
    const allowed = e.keyword === 'enum' ? ` ${JSON.stringify(e.params)}` : '';
    return `${where} ${e.message ?? 'is invalid'}${allowed}`;
  });
}

function checkRecording(official: OfficialSchemas, file: string): string[] {
  let recording: unknown;
  try {
    recording = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return [`not JSON: ${(error as Error).message}`];
  }
  const { schema, message } = (recording ?? {}) as { schema?: unknown; message?: unknown };
  if (typeof schema !== 'string' || message === undefined) return ['not a recording: expected { "schema": <name>, "message": <object> }'];
  const validate = official.validate(schema);
  if (validate === undefined) return [`no schema named ${schema} in the official OpenAPI`];
  if (schema === 'Version' && Array.isArray(message)) {
    return message.flatMap((item, index) => (validate(item) ? [] : explain(validate.errors, `/${index}`)));
  }
  return validate(message) ? [] : explain(validate.errors);
}

async function main(): Promise<number> {
  const { recordings, openapi } = parseArgs(process.argv.slice(2));
  if (!existsSync(openapi) || !statSync(openapi).isDirectory()) {
    process.stdout.write(`ocpi-official-check: skipped, no official OCPI 2.2.1 OpenAPI at ${openapi}\n`);
    return 0;
  }
  let official: OfficialSchemas;
  try {
    official = await loadOfficial(openapi);
  } catch (error) {
    process.stderr.write(`ocpi-official-check: cannot load the official OpenAPI at ${openapi}: ${(error as Error).message}\n`);
    return 2;
  }
  if (!existsSync(recordings) || !statSync(recordings).isDirectory()) {
    process.stderr.write(`ocpi-official-check: no recordings directory ${recordings} (run the tests with recording on, see src/ocpi-protocol/validate.ts)\n`);
    return 1;
  }
  const files = readdirSync(recordings)
    .filter((f) => f.endsWith('.json'))
    .sort();
  let failed = 0;
  for (const name of files) {
    const problems = checkRecording(official, path.join(recordings, name));
    if (problems.length === 0) continue;
    failed += 1;
    process.stderr.write(`FAIL ${name}\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
  }
  if (files.length === 0) process.stdout.write(`ocpi-official-check: warning, no recorded messages in ${recordings}\n`);
  if (failed > 0) {
    process.stderr.write(`ocpi-official-check: ${failed} of ${files.length} recorded messages do not match the official OCPI 2.2.1 OpenAPI\n`);
    return 1;
  }
  process.stdout.write(`ocpi-official-check: ${files.length} recorded messages match the official OCPI 2.2.1 OpenAPI\n`);
  return 0;
}

process.exit(await main());
