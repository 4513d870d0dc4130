// What the webhook tests share: a real HTTP receiver on loopback that records
// every request and answers as the test says (a status, slowly, or never),
// a verifier that is the official `standardwebhooks` library (independent of
// our signing code), and a delivery worker over a test app's database and clock.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createWebhookDelivery, type WebhookDelivery, type WebhookDeliveryDeps } from '../src/modules/webhooks/delivery.ts';
import type { Clock } from '../src/platform/clock.ts';
import type { TestContext } from './helpers.ts';
import { schemaValidator } from './schema-support.ts';

export const ENDPOINTS = '/api/v1/webhook-endpoints';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  body: string;
  /** Wall-clock time of arrival (performance.now()). */
  at: number;
}

/** How the receiver answers a request: a status (after `delayMs`), or never ('hang': the connection stays open, silent). */
export type Answer = number | 'hang' | { status: number; delayMs: number };

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** How the next requests are answered (default 200). */
  answer: (request: ReceivedRequest, index: number) => Answer;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const receiver = {
    url: '',
    requests: [] as ReceivedRequest[],
    answer: (() => 200) as Receiver['answer'],
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      const index = receiver.requests.push(request) - 1;
      const answer = receiver.answer(request, index);
      if (answer === 'hang') return;
      const { status, delayMs } = typeof answer === 'number' ? { status: answer, delayMs: 0 } : answer;
      const send = () => {
        if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      };
      if (delayMs === 0) send();
      else {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, delayMs);
        timers.add(timer);
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
  return Object.assign(receiver, {
    async waitFor(count: number, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.requests.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${receiver.requests.length} requests, not ${count}, within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return receiver.requests;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

/**
 * Verifies a received request with the official Standard Webhooks library and `secret`, as a receiver would at
 * `clock`'s time (the library checks the timestamp against Date.now(): here the test's clock, which the service's
 * timestamps come from). Throws when no signature verifies.
 */
export function verify(secret: string, request: ReceivedRequest, clock: Clock): unknown {
  const realNow = Date.now;
  Date.now = () => clock.now().getTime();
  try {
    return new Webhook(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    });
  } finally {
    Date.now = realNow;
  }
}

/** Whether `secret` verifies the request (the library's own verdict). */
export function verifies(secret: string, request: ReceivedRequest, clock: Clock): boolean {
  try {
    verify(secret, request, clock);
    return true;
  } catch {
    return false;
  }
}

/** A delivery worker on the test app's database and manual clock; no jitter unless `random` says. */
export function deliveryOf(ctx: TestContext, options: Partial<WebhookDeliveryDeps> & { timeoutMs?: number } = {}): WebhookDelivery {
  const { timeoutMs, ...rest } = options;
  return createWebhookDelivery({
    db: ctx.db,
    clock: ctx.clock,
    settings: { timeoutMs: timeoutMs ?? 2_000, concurrency: 16, perEndpoint: 4 },
    policy: { production: ctx.config.mode === 'production' },
    random: () => 0.5,
    ...rest,
  });
}

/** Creates an endpoint through the API; answers its body (with the secret). */
export async function createEndpoint(
  ctx: TestContext,
  token: string,
  body: Record<string, unknown>,
): Promise<{ id: string; secret: string; [key: string]: unknown }> {
  const res = await ctx.call('POST', `${ENDPOINTS}/`, { token, body });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** The endpoint's delivery log (first page, newest first). */
export async function deliveriesOf(ctx: TestContext, token: string, endpointId: string) {
  const res = await ctx.call('GET', `${ENDPOINTS}/${endpointId}/deliveries/?page_size=100`, { token });
  assert.equal(res.status, 200, res.text);
  return res.body.results as {
    id: string;
    event_id: string;
    event_type: string;
    status: string;
    attempts: number;
    last_status_code: number | null;
    last_error: string | null;
    next_retry_at: string | null;
    delivered_at: string | null;
    attempt_log: { attempt: number; started_at: string; finished_at: string | null; status_code: number | null; error: string | null }[];
  }[];
}

type JsonSchema = Record<string, unknown>;

/** The schema with every object closed (no property beyond those it names), so an undocumented field is found too. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (!schema || typeof schema !== 'object') return schema;
  const node = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'examples' || key === 'example' ? value : closed(value)]));
  return node.type === 'object' && node.properties && node.additionalProperties === undefined ? { ...node, additionalProperties: false } : node;
}

export interface DocumentedEvents {
  /** The event types the document's `webhooks` section describes. */
  types: string[];
  /** Throws, naming the event and each difference, unless `body` is what the document says an event of its type is. */
  assertDocumented(body: unknown): void;
}

/**
 * The OpenAPI document's `webhooks` section (what the SDK's ClientEvent/EventOf are generated from) as a check of
 * real event bodies: each against `webhooks[type].post.requestBody.content['application/json'].schema`, with no
 * field the schema does not name.
 */
export function documentedEvents(document: {
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: JsonSchema }> } } }>;
}): DocumentedEvents {
  const ajv = schemaValidator();
  const validators = new Map(
    Object.entries(document.webhooks).map(([type, item]) => [
      type,
      ajv.compile(closed(item.post.requestBody.content['application/json']?.schema) as JsonSchema),
    ]),
  );
  return {
    types: [...validators.keys()],
    assertDocumented(body) {
      const type = (body as { type?: unknown } | null)?.type;
      const validate = validators.get(String(type));
      assert.ok(validate, `the event type ${JSON.stringify(type)} is in the document's webhooks`);
      assert.ok(validate(body), `${String(type)} as documented: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`);
    },
  };
}
