// The OpenAPI document /docs renders, as a reader of the reference relies on it:
// every operation has a tag and a summary, every tag is described and shown in
// one sidebar group, the OCPI interface (for CPOs) has tags of its own apart from
// the client API, every example is valid for its schema, the examples of the
// GET operations answer 200 when sent as they are (the map tile's z/x/y among
// them), and the main operations show a success example and an example of each
// problem they document, as the service renders problems.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ERROR_CODES } from '../src/platform/errors.ts';
import type { CpoSandbox } from '../src/sandbox/cpo/index.ts';
import { startCpoNetwork } from './charging-support.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { newOwner } from './payments-support.ts';
import { schemaValidator } from './schema-support.ts';

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Json;
  example?: unknown;
}
interface Media {
  schema?: Json;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  tags?: string[];
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  components: Json;
  tags: { name: string; description?: string }[];
  'x-tagGroups': { name: string; tags: string[] }[];
  paths: Record<string, Record<string, Operation>>;
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

let ctx: TestContext;
let cpo: CpoSandbox;
let doc: Document;
const operations: { method: string; path: string; op: Operation }[] = [];

before(async () => {
  ctx = await setupTestApp({ listen: 0, payments: { webhooks: true } });
  cpo = await startCpoNetwork(ctx);
  const res = await ctx.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  doc = res.json() as Document;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) if (METHODS.has(method)) operations.push({ method, path, op });
  }
});
after(async () => {
  await cpo?.close();
  await ctx?.close();
});

describe('tags', () => {
  it('every operation has one tag and a summary', () => {
    const missing = operations.filter(({ op }) => op.tags?.length !== 1 || !op.summary?.trim()).map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    assert.deepEqual(missing, []);
    assert.ok(operations.length > 80, `${operations.length} operations`);
  });

  it('every tag used is described in the document, none is described but unused, and each is in exactly one sidebar group', () => {
    const used = new Set(operations.flatMap(({ op }) => op.tags ?? []));
    const described = new Map(doc.tags.map((t) => [t.name, t.description ?? '']));
    for (const tag of used) assert.ok((described.get(tag) ?? '').length >= 40, `the tag "${tag}" has a description`);
    assert.deepEqual(
      [...described.keys()].filter((t) => !used.has(t)),
      [],
      'no tag described that no operation has',
    );
    const grouped = doc['x-tagGroups'].flatMap((g) => g.tags);
    assert.deepEqual([...grouped].sort(), [...described.keys()].sort(), 'each tag in one group');
    assert.equal(new Set(grouped).size, grouped.length);
  });

  it('the OCPI interface (for CPOs) is in tags of its own, per version, apart from the client API', () => {
    const ocpiTag = (path: string) => (path.startsWith('/ocpi/2.1.1') ? 'OCPI 2.1.1' : 'OCPI 2.2.1');
    for (const { method, path, op } of operations) {
      const tag = op.tags?.[0] ?? '';
      if (path.startsWith('/ocpi/')) assert.equal(tag, ocpiTag(path), `${method} ${path}`);
      else assert.ok(!tag.startsWith('OCPI'), `${method} ${path} is not OCPI`);
    }
    const group = doc['x-tagGroups'].find((g) => g.tags.includes('OCPI 2.2.1'));
    assert.deepEqual(group?.tags, ['OCPI 2.2.1', 'OCPI 2.1.1']);
    assert.ok(!group?.tags.some((t) => doc['x-tagGroups'][0]?.tags.includes(t)), 'not in the client API group');
    const cdr = doc.paths['/ocpi/2.2.1/cdrs']?.post;
    assert.match(cdr?.summary ?? '', /CDR/);
  });
});

describe('examples', () => {
  const ajv = schemaValidator();
  /** Every (example, schema) pair of the document: parameters, request and response bodies, and schemas' own examples. */
  function pairs(): { where: string; value: unknown; schema: Json }[] {
    const found: { where: string; value: unknown; schema: Json }[] = [];
    const walk = (schema: unknown, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const node = schema as Json;
      if (Array.isArray(node.examples) && typeof node.type !== 'undefined') {
        const { examples, ...rest } = node;
        (examples as unknown[]).forEach((value, i) => {
          found.push({ where: `${where} examples[${i}]`, value, schema: rest });
        });
      }
      for (const [key, child] of Object.entries(node)) if (key !== 'examples' && key !== 'example') walk(child, `${where}/${key}`);
    };
    const media = (m: Media, where: string) => {
      if (!m.schema) return;
      if (m.example !== undefined) found.push({ where: `${where} example`, value: m.example, schema: m.schema });
      for (const [name, e] of Object.entries(m.examples ?? {})) found.push({ where: `${where} examples.${name}`, value: e.value, schema: m.schema });
      walk(m.schema, where);
    };
    for (const { method, path, op } of operations) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) {
        if (p.example !== undefined) found.push({ where: `${at} ${p.in} ${p.name}`, value: p.example, schema: p.schema });
        walk(p.schema, `${at} ${p.in} ${p.name}`);
      }
      for (const [type, m] of Object.entries(op.requestBody?.content ?? {})) media(m, `${at} body ${type}`);
      for (const [status, r] of Object.entries(op.responses)) for (const [type, m] of Object.entries(r.content ?? {})) media(m, `${at} ${status} ${type}`);
    }
    return found;
  }

  it('every example is valid for its schema', () => {
    const all = pairs();
    assert.ok(all.length > 150, `${all.length} examples`);
    const invalid = all.flatMap(({ where, value, schema }) => {
      // The document's components go along: a schema may refer to them (#/components/schemas/Problem).
      const validate = ajv.compile({ allOf: [schema], components: doc.components });
      return validate(value) ? [] : [`${where}: ${ajv.errorsText(validate.errors)}`];
    });
    assert.deepEqual(invalid, []);
  });

  it("every problem example is a problem of its response's status, with a known error type", () => {
    let checked = 0;
    for (const { method, path, op } of operations) {
      for (const [status, r] of Object.entries(op.responses)) {
        const problems = r.content?.['application/problem+json'];
        if (!problems) continue;
        const values = Object.values(problems.examples ?? {}).map((e) => e.value as { status: number; type: string; error: { type: string } });
        assert.ok(values.length > 0, `${method} ${path} ${status}: an example`);
        for (const v of values) {
          assert.equal(v.status, Number(status), `${method} ${path} ${status}`);
          assert.ok(Object.hasOwn(ERROR_CODES, v.error.type), v.error.type);
          assert.ok(v.type.endsWith(`/problems/${v.error.type}`));
          checked++;
        }
      }
    }
    assert.ok(checked > 200, `${checked} problem examples`);
    const start = doc.paths['/api/v1/users/{user_id}/charging/start/']?.post?.responses['409']?.content?.['application/problem+json'];
    assert.deepEqual(Object.keys(start?.examples ?? {}), ['billing_data_required', 'already_charging', 'station_availability_issue', 'conflict']);
  });

  it('the main operations show a success example', () => {
    const main: [string, string, string][] = [
      ['post', '/api/v1/users/', '201'],
      ['get', '/api/v1/users/{user_id}/', '200'],
      ['put', '/api/v1/users/{user_id}/billing-details/', '200'],
      ['get', '/api/v1/users/{user_id}/setup-intents/', '200'],
      ['get', '/api/v1/users/{user_id}/payment-methods/', '200'],
      ['post', '/api/v1/users/{user_id}/charging/start/', '201'],
      ['get', '/api/v1/users/{user_id}/charging-sessions/{session_id}/', '200'],
      ['get', '/api/v1/users/{user_id}/charging-sessions/', '200'],
      ['get', '/api/v1/stations/details/', '200'],
      ['get', '/api/v1/stations/tile/', '200'],
      ['get', '/api/v1/users/{user_id}/invoices/', '200'],
    ];
    for (const [method, path, status] of main) {
      const media = doc.paths[path]?.[method]?.responses[status]?.content?.['application/json'];
      assert.ok(media?.schema, `${method} ${path} ${status}`);
      // A page shows the example of its results' items.
      const items = ((media.schema.properties as Json | undefined)?.results as Json | undefined)?.items as Json | undefined;
      const shown = media.example ?? (items?.examples as unknown[] | undefined)?.[0];
      assert.ok(shown, `${method.toUpperCase()} ${path} ${status} has an example`);
    }
    // The start answers a session the operator accepted and that has not begun charging: its example says so.
    const started = doc.paths['/api/v1/users/{user_id}/charging/start/']?.post?.responses['201']?.content?.['application/json'];
    const example = (started?.example ?? (started?.schema?.examples as unknown[] | undefined)?.[0]) as { status?: string; start_time?: unknown };
    assert.deepEqual([example?.status, example?.start_time], ['pending', null]);
  });

  it("the GET operations' examples, sent as they are, answer 200 (the tile's z/x/y is a valid tile)", async () => {
    const owner = await newOwner(ctx);
    let sent = 0;
    for (const { method, path, op } of operations) {
      if (method !== 'get' || !path.startsWith('/api/v1/') || path.includes('{')) continue;
      const required = (op.parameters ?? []).filter((p) => p.required);
      if (required.length === 0 || required.some((p) => p.example === undefined)) continue;
      const query = new URLSearchParams();
      for (const p of op.parameters ?? []) {
        if (p.example === undefined) continue;
        for (const v of Array.isArray(p.example) ? p.example : [p.example]) query.append(p.name, String(v));
      }
      const res = await ctx.call('GET', `${path}?${query}`, { token: owner.token });
      assert.equal(res.status, 200, `${path}?${query}: ${res.text}`);
      sent++;
    }
    assert.ok(sent >= 3, `${sent} operations sent (around, details, tile)`);
    const tile = doc.paths['/api/v1/stations/tile/']?.get?.parameters ?? [];
    const [z, x, y] = ['z', 'x', 'y'].map((name) => tile.find((p) => p.name === name)?.example) as [number, number[], number[]];
    assert.ok(x.length === y.length && [...x, ...y].every((c) => c < 2 ** z), `z=${z} x=${x} y=${y}`);
  });
});
