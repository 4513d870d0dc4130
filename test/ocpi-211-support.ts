// What the OCPI over-the-wire tests share (2.1.1, 2.2, platforms and hubs): a
// recording HTTP proxy put between the service and a CPO (every request and
// answer that crosses it, headers and JSON bodies, as on the wire), the app and
// a sandbox CPO network each behind one, the parties a recorded message is
// routed from and to, and the 2.1.1 spec's field lists
// (scripts/ocpi-211-fields.ts) that every recorded 2.1.1 message is held to.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CpoSandbox, type CpoSandboxOptions, createCpoSandbox } from '../src/sandbox/cpo/index.ts';
import { createTestDatabase, freePort, setupTestApp, type TestContext } from './helpers.ts';
import { eventually, USERS } from './payments-support.ts';

export { problems211, SHAPES_211, type Shape211 } from '../scripts/ocpi-211-fields.ts';

export interface Exchange {
  method: string;
  path: string;
  requestHeaders: IncomingHttpHeaders;
  requestBody: unknown;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  responseBody: unknown;
}

const parse = (text: string): unknown => {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
};

/** A loopback proxy to `target()` (known later: a server's address once it listens) that records every exchange. */
export async function startRecordingProxy(target: () => string) {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const to = new URL(req.url ?? '/', target());
      const headers = { ...req.headers, host: to.host };
      const out = httpRequest(to, { method: req.method, headers }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          exchanges.push({
            method: req.method ?? 'GET',
            path: to.pathname,
            requestHeaders: req.headers,
            requestBody: parse(body.toString('utf8')),
            status: answer.statusCode ?? 0,
            responseHeaders: answer.headers,
            responseBody: parse(text),
          });
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(text);
        });
      });
      out.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type RecordingProxy = Awaited<ReturnType<typeof startRecordingProxy>>;

/** The OCPI data of a recorded envelope. */
export const dataOf = (body: unknown) => (body as { data?: unknown } | undefined)?.data;

export const ROUTING_HEADERS = ['ocpi-from-country-code', 'ocpi-from-party-id', 'ocpi-to-country-code', 'ocpi-to-party-id'] as const;

type Party = { country_code: string; party_id: string };
/** A party as CC*PID. */
export const code = (p: Party) => `${p.country_code}*${p.party_id}`;
/** The party a recorded request is addressed to (OCPI-to), as CC*PID. */
export const toOf = (e: Exchange) => `${e.requestHeaders['ocpi-to-country-code']}*${e.requestHeaders['ocpi-to-party-id']}`;
/** The party a recorded request comes from (OCPI-from), as CC*PID. */
export const fromOf = (e: Exchange) => `${e.requestHeaders['ocpi-from-country-code']}*${e.requestHeaders['ocpi-from-party-id']}`;

export interface ProxiedCpo {
  ctx: TestContext;
  /** In front of the app: the public URL the app gives the CPO, so what the CPO sends us is recorded. */
  emspProxy: RecordingProxy;
  cpo: CpoSandbox;
  /** In front of the CPO: its public URL, so what we send it is recorded. */
  cpoProxy: RecordingProxy;
  /** Closes the CPO, the app and both proxies. */
  close(): Promise<void>;
}

/**
 * The app (Stripe sandbox with webhooks, OCPI calls timing out after 1.5 s, pages of 10) listening behind a recording
 * proxy, and a sandbox CPO network of `options` on the app's database behind another; not connected yet. When a step
 * fails, what was started is closed.
 */
export async function startProxiedCpo(options: Omit<CpoSandboxOptions, 'db' | 'publicUrl'>): Promise<ProxiedCpo> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c();
  };
  try {
    const emspPort = await freePort();
    const emspProxy = await startRecordingProxy(() => `http://127.0.0.1:${emspPort}`);
    closers.push(() => emspProxy.close());
    const ctx = await setupTestApp({
      listen: emspPort,
      payments: { webhooks: true },
      env: { PUBLIC_BASE_URL: emspProxy.url, OCPI_REQUEST_TIMEOUT_MS: '1500', OCPI_PAGE_LIMIT: '10' },
    });
    const cpoPort = await freePort();
    const cpoProxy = await startRecordingProxy(() => `http://127.0.0.1:${cpoPort}`);
    closers.push(
      () => cpoProxy.close(),
      () => ctx.close(),
    );
    const cpo = await createCpoSandbox({ db: ctx.db, publicUrl: cpoProxy.url, ...options });
    closers.push(() => cpo.close());
    await cpo.listen({ port: cpoPort });
    return { ctx, emspProxy, cpo, cpoProxy, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A sandbox CPO on a database of its own, listening, that registers with us when a test says so; `close` drops its database. */
export async function startRegisteringCpo(options: Omit<CpoSandboxOptions, 'db' | 'publicUrl'>): Promise<{ cpo: CpoSandbox; close(): Promise<void> }> {
  const database = await createTestDatabase();
  try {
    const cpo = await createCpoSandbox({ db: database.db, ...options });
    await cpo.listen({ port: 0 });
    return {
      cpo,
      async close() {
        await cpo.close();
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/**
 * A new user of a new client, its token pushed until `receivers` (the sandbox's parties holding it) counts `count`;
 * answers the token's uid.
 */
export async function pushedNewUserToken(ctx: TestContext, receivers: (uid: string) => Promise<string[]>, count: number): Promise<string> {
  const client = await ctx.newClient();
  const user = await ctx.call('POST', `${USERS}/`, { token: client.token, body: {} });
  assert.equal(user.status, 201, user.text);
  const uid = user.body.id as string;
  await eventually(
    async () => {
      await ctx.ocpi.deliverPushes();
      return (await receivers(uid)).length === count ? true : undefined;
    },
    `the token at ${count} parties`,
    10_000,
  );
  return uid;
}
