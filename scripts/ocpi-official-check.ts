// CI-only extra check of the OCPI messages the tests recorded
// (OCPI_RECORD_DIR, see src/ocpi-protocol/validate.ts), two parts:
//
// - Exchanges ({ "exchange": ... }): every request our senders made (the
//   eMSP, the sandbox CPO network) and every answer of our OCPI interface,
//   held to OCPI 2.2.1's routing-header and status-code rules
//   (scripts/ocpi-exchange-rules.ts, written from the spec's text): always.
// - Messages ({ "schema": ..., "message": ... }): validated against the
//   OFFICIAL OCPI 2.2.1 OpenAPI when a copy of it sits next to the repository
//   (../shared/reference/ocpi-2.2.1/openapi). Our own schemas
//   (src/ocpi-protocol/*.ts) are written from the spec's text; this catches any
//   message they let through that the official schemas refuse. Without that
//   folder this part prints a notice and is skipped. Messages of OCPI 2.1.1
//   ("2.1.1/<object>": what a 2.1.1 peer sent us and what we wrote to one;
//   there is no official 2.1.1 OpenAPI) are held to the 2.1.1 spec's field
//   lists (scripts/ocpi-211-fields.ts), always.
//
//   node scripts/ocpi-official-check.ts [recordings-dir] [--openapi <dir>]
//
// recordings-dir (default .ocpi-recordings/) holds *.json files as written by
// recordOcpiMessage and recordOcpiExchange when setOcpiRecorder(dir) is on.
// "Version" may hold one Version or the array a versions endpoint returns.
// Exit codes: 0 all match (or nothing to check), 1 a message or exchange
// failed or the recordings cannot be read, 2 the official OpenAPI cannot be
// loaded.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { problems211, SHAPES_211, type Shape211 } from './ocpi-211-fields.ts';
import { exchangeProblems, type RecordedExchange } from './ocpi-exchange-rules.ts';

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

/** What is wrong with one recorded message (its official schema), or with one exchange (the transport rules). */
function checkRecording(official: OfficialSchemas | undefined, recording: unknown): string[] {
  const { schema, message, exchange } = (recording ?? {}) as { schema?: unknown; message?: unknown; exchange?: unknown };
  if (exchange !== undefined) return exchangeProblems(exchange as RecordedExchange);
  if (typeof schema !== 'string' || message === undefined)
    return ['not a recording: expected { "schema": <name>, "message": <object> } or { "exchange": ... }'];
  // OCPI 2.1.1 has no official OpenAPI: its messages are held to the 2.1.1 spec's field lists.
  if (schema.startsWith('2.1.1/')) {
    const shape = schema.slice('2.1.1/'.length);
    return shape in SHAPES_211 ? problems211(shape as Shape211, message) : [`no 2.1.1 object named ${shape}`];
  }
  if (official === undefined) return [];
  const validate = official.validate(schema);
  if (validate === undefined) return [`no schema named ${schema} in the official OpenAPI`];
  if (schema === 'Version' && Array.isArray(message)) {
    return message.flatMap((item, index) => (validate(item) ? [] : explain(validate.errors, `/${index}`)));
  }
  return validate(message) ? [] : explain(validate.errors);
}

function readRecording(file: string): { recording: unknown } | { error: string } {
  try {
    return { recording: JSON.parse(readFileSync(file, 'utf8')) };
  } catch (error) {
    return { error: `not JSON: ${(error as Error).message}` };
  }
}

/** Checks every recording; returns how many were messages and exchanges, and how many of each failed. */
function checkAll(official: OfficialSchemas | undefined, recordings: string) {
  const files = readdirSync(recordings)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const figures = { messages: 0, messages211: 0, exchanges: 0, failedMessages: 0, failedExchanges: 0 };
  for (const name of files) {
    const read = readRecording(path.join(recordings, name));
    const isExchange = 'recording' in read && (read.recording as { exchange?: unknown } | null)?.exchange !== undefined;
    if (isExchange) figures.exchanges += 1;
    else figures.messages += 1;
    if ('recording' in read && String((read.recording as { schema?: unknown } | null)?.schema).startsWith('2.1.1/')) figures.messages211 += 1;
    const problems = 'error' in read ? [read.error] : checkRecording(official, read.recording);
    if (problems.length === 0) continue;
    if (isExchange) figures.failedExchanges += 1;
    else figures.failedMessages += 1;
    process.stderr.write(`FAIL ${name}\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
  }
  return figures;
}

async function main(): Promise<number> {
  const { recordings, openapi } = parseArgs(process.argv.slice(2));
  const hasOfficial = existsSync(openapi) && statSync(openapi).isDirectory();
  const hasRecordings = existsSync(recordings) && statSync(recordings).isDirectory();
  if (!hasOfficial && !hasRecordings) {
    process.stdout.write(`ocpi-official-check: skipped, no official OCPI 2.2.1 OpenAPI at ${openapi} and no recordings at ${recordings}\n`);
    return 0;
  }
  let official: OfficialSchemas | undefined;
  if (hasOfficial) {
    try {
      official = await loadOfficial(openapi);
    } catch (error) {
      process.stderr.write(`ocpi-official-check: cannot load the official OpenAPI at ${openapi}: ${(error as Error).message}\n`);
      return 2;
    }
  } else {
    process.stdout.write(`ocpi-official-check: messages not checked against the official schemas (skipped, no official OCPI 2.2.1 OpenAPI at ${openapi})\n`);
  }
  if (!hasRecordings) {
    process.stderr.write(`ocpi-official-check: no recordings directory ${recordings} (run the tests with recording on, see src/ocpi-protocol/validate.ts)\n`);
    return 1;
  }
  const f = checkAll(official, recordings);
  if (f.messages + f.exchanges === 0) process.stdout.write(`ocpi-official-check: warning, no recorded messages in ${recordings}\n`);
  if (f.failedMessages > 0) {
    process.stderr.write(
      `ocpi-official-check: ${f.failedMessages} of ${f.messages} recorded messages do not match the official OCPI 2.2.1 OpenAPI (2.1.1 messages: its field lists)\n`,
    );
  } else if (official) {
    process.stdout.write(
      `ocpi-official-check: ${f.messages} recorded messages match the official OCPI 2.2.1 OpenAPI (of them ${f.messages211} 2.1.1 messages its field lists)\n`,
    );
  } else if (f.messages211 > 0) {
    process.stdout.write(`ocpi-official-check: ${f.messages211} recorded OCPI 2.1.1 messages match the 2.1.1 field lists\n`);
  }
  if (f.failedExchanges > 0) {
    process.stderr.write(`ocpi-official-check: ${f.failedExchanges} of ${f.exchanges} recorded exchanges break the routing-header or status-code rules\n`);
  } else {
    process.stdout.write(`ocpi-official-check: ${f.exchanges} recorded exchanges follow the routing-header and status-code rules\n`);
  }
  return f.failedMessages + f.failedExchanges > 0 ? 1 : 0;
}

process.exit(await main());
