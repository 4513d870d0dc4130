// The sandbox's HTTP API: Stripe's REST conventions on a loopback port.
// Bearer (or Basic) secret-key auth, form-encoded parameters, Stripe-Version,
// Idempotency-Key replay, Stripe error objects, Request-Id on every answer.
// Each request is one database transaction.
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import type { ApiCall, Engine } from './engine.ts';
import { invalidRequest, SandboxError, type StripeErrorBody } from './errors.ts';
import { decodeForm, type FormObject } from './form.ts';
import { sameSecret, stripeOrder } from './objects.ts';
import { unrecognized } from './routes.ts';
import * as store from './store.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
const MAX_BODY_BYTES = 1024 * 1024;
const API_VERSION = /^\d{4}-\d{2}-\d{2}(\.[a-z]+)?$/;

/** One request as the sandbox received it (for wire tests and debugging). */
export interface RecordedRequest {
  at: Date;
  requestId: string;
  method: string;
  path: string;
  /** Raw query string without '?'. */
  query: string;
  /** Raw form body. */
  body: string;
  /** Decoded parameters (query for GET/DELETE, body for POST). */
  params: FormObject;
  stripeVersion: string | undefined;
  idempotencyKey: string | undefined;
  contentType: string | undefined;
  status: number;
  replayed: boolean;
}

export interface ApiServerDeps {
  db: Database;
  clock: Clock;
  engine: Engine;
  keys: { secretKey: string; publishableKey: string };
  defaultApiVersion: string;
  /** Called after each committed request (new events may wait for delivery). */
  onCommitted: () => void;
  onRequest: (request: RecordedRequest) => void;
  onError: (error: unknown) => void;
}

class Answer {
  readonly status: number;
  readonly body: unknown;
  readonly replayed: boolean;
  constructor(status: number, body: unknown, replayed = false) {
    this.status = status;
    this.body = body;
    this.replayed = replayed;
  }
}

function errorAnswer(error: SandboxError): Answer {
  return new Answer(error.status, { error: error.body });
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sk_test_abc...wxyz -> sk_test_********wxyz: never echo a key back. */
export function maskKey(key: string): string {
  const prefix = /^[a-z]{2,3}_(test|live)_/.exec(key)?.[0] ?? '';
  const tail = key.length > prefix.length + 8 ? key.slice(-4) : '';
  return `${prefix}${'*'.repeat(Math.max(4, Math.min(24, key.length - prefix.length - tail.length)))}${tail}`;
}

function presentedKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const bearer = /^Bearer\s+(\S+)$/i.exec(header);
  if (bearer) return bearer[1];
  const basic = /^Basic\s+(\S+)$/i.exec(header);
  if (basic)
    return (
      Buffer.from(basic[1] as string, 'base64')
        .toString('utf8')
        .split(':')[0] || undefined
    );
  return undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(invalidRequest('The request body is too large.', { status: 413 }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Only the account's secret key may call the API (a publishable key is refused by name). */
function authenticate(keys: ApiServerDeps['keys'], req: IncomingMessage): void {
  const key = presentedKey(req.headers.authorization);
  if (key === undefined) {
    throw invalidRequest(
      "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
      { status: 401 },
    );
  }
  if (sameSecret(keys.secretKey, key)) return;
  if (sameSecret(keys.publishableKey, key)) {
    throw invalidRequest('This API call cannot be made with a publishable API key. Please use a secret API key.', { status: 401 });
  }
  throw invalidRequest(`Invalid API Key provided: ${maskKey(key)}`, { status: 401 });
}

/** Runs the call in one transaction; a POST with an Idempotency-Key replays the stored result of the same parameters, as Stripe does. */
async function execute(deps: ApiServerDeps, call: ApiCall): Promise<Answer> {
  const { db, clock, engine } = deps;
  const key = call.idempotencyKey;
  if (call.method !== 'POST' || key === null) {
    return db.transaction(async (tx) => {
      const answer = await engine.handle(tx, call);
      return new Answer(answer.status, answer.body);
    });
  }
  const fingerprint = createHash('sha256')
    .update(`${call.method} ${call.path}\n${canonical(call.params)}`)
    .digest('hex');
  return db.transaction(async (tx) => {
    if (!(await store.tryLockIdempotencyKey(tx, key))) {
      throw new SandboxError(409, {
        type: 'idempotency_error',
        code: 'idempotency_key_in_use',
        message: `There is currently another in-progress request using this idempotent key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
      });
    }
    const now = clock.now();
    const previous = await store.findIdempotencyResult(tx, key, new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
    if (previous) {
      if (previous.fingerprint !== fingerprint) {
        throw new SandboxError(400, {
          type: 'idempotency_error',
          message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
        });
      }
      return new Answer(previous.status, previous.body, true);
    }
    const answer = await engine.handle(tx, call);
    // Results are kept once the request executed: successes and declines, not refused parameters.
    if (answer.status === 200 || answer.status === 402) await store.storeIdempotencyResult(tx, key, fingerprint, answer.status, answer.body, now);
    return new Answer(answer.status, answer.body);
  });
}

async function respond(deps: ApiServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { clock, engine } = deps;
  const requestId = `req_${randomUUID().replaceAll('-', '').slice(0, 14)}`;
  const url = new URL(req.url ?? '/', 'http://sandbox');
  const method = (req.method ?? 'GET').toUpperCase();
  const stripeVersion = typeof req.headers['stripe-version'] === 'string' ? req.headers['stripe-version'] : undefined;
  const idempotencyHeader = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
  let body = '';
  let params: FormObject = {};
  let answer: Answer;
  let committed = false;
  try {
    body = await readBody(req);
    authenticate(deps.keys, req);
    if (stripeVersion !== undefined && !API_VERSION.test(stripeVersion)) {
      throw invalidRequest(`Invalid Stripe API version: ${stripeVersion}`, { param: 'Stripe-Version' });
    }
    if (idempotencyHeader !== undefined && (idempotencyHeader.length === 0 || idempotencyHeader.length > 255)) {
      throw invalidRequest('Idempotency keys must be between 1 and 255 characters long.', { param: 'Idempotency-Key' });
    }
    if (!engine.recognizes(method, url.pathname)) throw unrecognized(method, url.pathname);
    const query = url.search.slice(1);
    params = method === 'POST' ? { ...decodeForm(query), ...decodeForm(body) } : decodeForm(query);
    answer = await execute(deps, {
      method,
      apiVersion: stripeVersion ?? deps.defaultApiVersion,
      path: url.pathname,
      params,
      requestId,
      idempotencyKey: idempotencyHeader ?? null,
    });
    committed = !answer.replayed;
  } catch (error) {
    if (error instanceof SandboxError) {
      answer = errorAnswer(error);
    } else {
      deps.onError(error);
      const failure: StripeErrorBody = { type: 'api_error', message: `An unknown error occurred (request ${requestId}).` };
      answer = new Answer(500, { error: failure });
    }
  }
  const payload = JSON.stringify(stripeOrder(answer.body), null, 2);
  res.writeHead(answer.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-cache, no-store',
    'request-id': requestId,
    'stripe-version': stripeVersion ?? deps.defaultApiVersion,
    ...(idempotencyHeader !== undefined && method === 'POST' ? { 'idempotency-key': idempotencyHeader } : {}),
    ...(answer.replayed ? { 'idempotent-replayed': 'true' } : {}),
    // The SDK retries 409 (a concurrent idempotent request) and 5xx; a refused request is final.
    ...(answer.status === 409 ? { 'stripe-should-retry': 'true' } : answer.status >= 400 && answer.status < 500 ? { 'stripe-should-retry': 'false' } : {}),
  });
  res.end(payload);
  deps.onRequest({
    at: clock.now(),
    requestId,
    method,
    path: url.pathname,
    query: url.search.slice(1),
    body,
    params,
    stripeVersion,
    idempotencyKey: idempotencyHeader,
    contentType: typeof req.headers['content-type'] === 'string' ? req.headers['content-type'] : undefined,
    status: answer.status,
    replayed: answer.replayed,
  });
  if (committed) deps.onCommitted();
}

export function createApiServer(deps: ApiServerDeps): Server {
  return createServer((req, res) => {
    respond(deps, req, res).catch((error: unknown) => {
      deps.onError(error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'api_error', message: 'An unknown error occurred.' } }));
    });
  });
}

/** Serves the API on `port` (loopback unless `host` says otherwise); resolves once it listens, with its base URL. */
export async function listenApiServer(at: { host?: string; port: number }, deps: ApiServerDeps): Promise<{ server: Server; url: string }> {
  const host = at.host ?? '127.0.0.1';
  const server = createApiServer(deps);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}` };
}

/** Stops listening and drops open keep-alive connections, so close does not wait for clients to hang up. */
export function closeApiServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
