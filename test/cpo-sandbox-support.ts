// A small eMSP for the sandbox CPO tests: a real OCPI 2.2.1 peer on its own
// loopback port (HTTP or HTTPS with a self-signed certificate) that serves
// versions, credentials and the Receiver interfaces (Locations, Sessions,
// CDRs, command results), applies what it receives as an eMSP would
// (PATCHes append charging periods), validates every message against the
// src/ocpi schemas, and records it all. It calls the CPO with src/ocpi-protocol/client.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import selfsigned from 'selfsigned';
import type { Cdr } from '../src/ocpi-protocol/cdrs.ts';
import { type OcpiReply, ocpiData, ocpiRequest } from '../src/ocpi-protocol/client.ts';
import type { CommandResult } from '../src/ocpi-protocol/commands.ts';
import type { Credentials } from '../src/ocpi-protocol/credentials.ts';
import { EVSE_STATUSES } from '../src/ocpi-protocol/locations-tariffs.ts';
import type { Session } from '../src/ocpi-protocol/sessions.ts';
import { envelope, OCPI_STATUS, tokenCandidates } from '../src/ocpi-protocol/transport.ts';
import {
  parseCdr,
  parseCommandResult,
  parseCredentials,
  parseSession,
  parseSessionPatch,
  parseVersionDetails,
  parseVersions,
} from '../src/ocpi-protocol/validate.ts';
import type { Endpoint } from '../src/ocpi-protocol/versions.ts';

export const EMSP_PARTY = { country_code: 'NL', party_id: 'TST' };
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface SessionEvent {
  method: 'PUT' | 'PATCH';
  id: string;
  body: Record<string, unknown>;
  at: number;
}

export type FaultKind = 'session' | 'cdr' | 'command' | 'location';

export async function selfSignedCertificate(): Promise<{ cert: string; key: string }> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  } as Parameters<typeof selfsigned.generate>[1]);
  return { cert: pems.cert, key: pems.private };
}

export async function startEmspPeer(options: { tls?: { cert: string; key: string } } = {}) {
  const received: Received[] = [];
  const errors: string[] = [];
  const sessions = new Map<string, Session>();
  const sessionEvents: SessionEvent[] = [];
  const cdrs: Cdr[] = [];
  const commandResults = new Map<string, CommandResult[]>();
  const evsePatches: { path: string; body: { status: string; last_updated: string }; at: number }[] = [];
  const faults = new Map<FaultKind, { count: number; status: number }>();
  /** Tokens that may call us: our TOKEN_A (registration only), and the one the CPO uses once registered. */
  const state = {
    tokenA: `emsp-token-a-${randomUUID()}`,
    cpoCallsWith: undefined as string | undefined,
    /** The token we call the CPO with. */
    cpoToken: undefined as string | undefined,
    cpoVersionsUrl: undefined as string | undefined,
    cpoEndpoints: [] as Endpoint[],
    cpoRoles: [] as Credentials['roles'],
    /** Authorization values as the CPO sent them. */
    authorizations: [] as string[],
  };

  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    serverFactory: (handler) =>
      options.tls
        ? createHttpsServer(options.tls, handler as (req: IncomingMessage, res: ServerResponse) => void)
        : createHttpServer(handler as (req: IncomingMessage, res: ServerResponse) => void),
  }) as unknown as FastifyInstance;
  let base = '';
  const versionUrl = () => `${base}/ocpi/emsp/2.2.1`;
  const endpoints = (): Endpoint[] => [
    { identifier: 'credentials', role: 'SENDER', url: `${versionUrl()}/credentials` },
    { identifier: 'locations', role: 'RECEIVER', url: `${versionUrl()}/locations` },
    { identifier: 'sessions', role: 'RECEIVER', url: `${versionUrl()}/sessions` },
    { identifier: 'cdrs', role: 'RECEIVER', url: `${versionUrl()}/cdrs` },
    { identifier: 'commands', role: 'SENDER', url: `${versionUrl()}/commands` },
  ];
  const ourCredentials = (token: string): Credentials => ({
    token,
    url: `${base}/ocpi/emsp/versions`,
    roles: [{ role: 'EMSP', business_details: { name: 'Test eMSP' }, ...EMSP_PARTY }],
  });

  const send = (reply: FastifyReply, data?: unknown, status = 200) => reply.code(status).send(envelope(data, new Date()));
  const refuse = (reply: FastifyReply, message: string) => {
    errors.push(message);
    return reply.code(400).send(envelope(undefined, new Date(), OCPI_STATUS.invalidParameters, message));
  };
  function fault(kind: FaultKind, reply: FastifyReply): boolean {
    const f = faults.get(kind);
    if (!f || f.count <= 0) return false;
    f.count--;
    void reply.code(f.status).send(envelope(undefined, new Date(), OCPI_STATUS.serverError, 'injected failure'));
    return true;
  }

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization ?? '';
    state.authorizations.push(header);
    const candidates = tokenCandidates(header);
    const token = candidates?.decoded ?? candidates?.raw;
    const path = request.url.split('?')[0] ?? '';
    const registrationOnly = path === '/ocpi/emsp/versions' || path === '/ocpi/emsp/2.2.1' || path === '/ocpi/emsp/2.2.1/credentials';
    const ok = token !== undefined && (token === state.cpoCallsWith || (token === state.tokenA && registrationOnly));
    for (const name of ['x-request-id', 'x-correlation-id']) if (!request.headers[name]) errors.push(`${request.method} ${path} without ${name}`);
    void reply.header('X-Request-ID', request.headers['x-request-id'] ?? randomUUID());
    void reply.header('X-Correlation-ID', request.headers['x-correlation-id'] ?? randomUUID());
    if (!ok) return reply.code(401).send(envelope(undefined, new Date(), OCPI_STATUS.clientError, 'unknown token'));
  });
  app.addHook('preHandler', async (request) => {
    received.push({ method: request.method, path: request.url, headers: request.headers, body: request.body });
  });

  app.get('/ocpi/emsp/versions', async (_request, reply) =>
    send(reply, [
      { version: '2.1.1', url: `${base}/ocpi/emsp/2.1.1` },
      { version: '2.2.1', url: versionUrl() },
    ]),
  );
  app.get('/ocpi/emsp/2.2.1', async (_request, reply) => send(reply, { version: '2.2.1', endpoints: endpoints() }));

  // The CPO registers with us (its registerWith): it sends its token, we fetch its versions with it and answer ours.
  app.post('/ocpi/emsp/2.2.1/credentials', async (request, reply) => {
    const parsed = parseCredentials(request.body);
    if (!parsed.ok) return refuse(reply, `credentials: ${JSON.stringify(parsed.errors)}`);
    await discoverCpo(parsed.value.url, parsed.value.token);
    state.cpoToken = parsed.value.token;
    state.cpoRoles = parsed.value.roles;
    state.cpoCallsWith = `emsp-token-c-${randomUUID()}`;
    return send(reply, ourCredentials(state.cpoCallsWith));
  });

  app.put('/ocpi/emsp/2.2.1/locations/:cc/:pid/:location/:evse', async (request, reply) => refuse(reply, `unexpected EVSE PUT ${request.url}`));
  app.patch('/ocpi/emsp/2.2.1/locations/:cc/:pid/:location/:evse', async (request, reply) => {
    if (fault('location', reply)) return reply;
    const body = request.body as { status?: unknown; last_updated?: unknown };
    if (!(EVSE_STATUSES as readonly unknown[]).includes(body?.status) || typeof body.last_updated !== 'string' || !DATE_TIME.test(body.last_updated)) {
      return refuse(reply, `bad EVSE patch ${JSON.stringify(body)}`);
    }
    evsePatches.push({ path: request.url, body: body as { status: string; last_updated: string }, at: Date.now() });
    return send(reply);
  });

  app.put('/ocpi/emsp/2.2.1/sessions/:cc/:pid/:id', async (request, reply) => {
    if (fault('session', reply)) return reply;
    const parsed = parseSession(request.body);
    if (!parsed.ok) return refuse(reply, `session PUT: ${JSON.stringify(parsed.errors)}`);
    const { id } = request.params as { id: string };
    if (parsed.value.id !== id) return refuse(reply, 'session id differs from the URL');
    const created = !sessions.has(id);
    sessions.set(id, structuredClone(parsed.value));
    sessionEvents.push({ method: 'PUT', id, body: parsed.value as unknown as Record<string, unknown>, at: Date.now() });
    return send(reply, undefined, created ? 201 : 200);
  });

  app.patch('/ocpi/emsp/2.2.1/sessions/:cc/:pid/:id', async (request, reply) => {
    if (fault('session', reply)) return reply;
    const parsed = parseSessionPatch(request.body);
    if (!parsed.ok) return refuse(reply, `session PATCH: ${JSON.stringify(parsed.errors)}`);
    const { id } = request.params as { id: string };
    const existing = sessions.get(id);
    if (!existing) return reply.code(404).send(envelope(undefined, new Date(), OCPI_STATUS.clientError, 'unknown session'));
    const { charging_periods, ...rest } = parsed.value;
    const merged = { ...existing, ...rest, charging_periods: [...(existing.charging_periods ?? []), ...(charging_periods ?? [])] };
    const valid = parseSession(merged);
    if (!valid.ok) return refuse(reply, `session after PATCH: ${JSON.stringify(valid.errors)}`);
    sessions.set(id, merged);
    sessionEvents.push({ method: 'PATCH', id, body: parsed.value as unknown as Record<string, unknown>, at: Date.now() });
    return send(reply);
  });

  app.get('/ocpi/emsp/2.2.1/sessions/:cc/:pid/:id', async (request, reply) => {
    const found = sessions.get((request.params as { id: string }).id);
    return found ? send(reply, found) : reply.code(404).send(envelope(undefined, new Date(), OCPI_STATUS.clientError, 'unknown session'));
  });

  app.post('/ocpi/emsp/2.2.1/cdrs', async (request, reply) => {
    if (fault('cdr', reply)) return reply;
    const parsed = parseCdr(request.body);
    if (!parsed.ok) return refuse(reply, `CDR: ${JSON.stringify(parsed.errors)}`);
    if (!cdrs.some((c) => c.id === parsed.value.id)) cdrs.push(parsed.value);
    void reply.header('Location', `${versionUrl()}/cdrs/${parsed.value.id}`);
    return send(reply, undefined, 201);
  });

  app.post('/ocpi/emsp/2.2.1/commands/:command/:uid', async (request, reply) => {
    if (fault('command', reply)) return reply;
    const parsed = parseCommandResult(request.body);
    if (!parsed.ok) return refuse(reply, `CommandResult: ${JSON.stringify(parsed.errors)}`);
    const { uid } = request.params as { uid: string };
    commandResults.set(uid, [...(commandResults.get(uid) ?? []), parsed.value]);
    return send(reply);
  });

  async function discoverCpo(versionsUrl: string, token: string): Promise<void> {
    const versions = parseVersions((await ocpiData({ token }, { method: 'GET', url: versionsUrl })).data);
    assert.ok(versions.ok, 'the CPO versions are valid');
    const v221 = versions.value.find((v) => v.version === '2.2.1');
    assert.ok(v221, 'the CPO offers 2.2.1');
    const details = parseVersionDetails((await ocpiData({ token }, { method: 'GET', url: v221.url })).data);
    assert.ok(details.ok, 'the CPO version details are valid');
    state.cpoVersionsUrl = versionsUrl;
    state.cpoEndpoints = details.value.endpoints;
  }

  const listening = await app.listen({ port: 0, host: '127.0.0.1' });
  base = `${options.tls ? 'https' : 'http'}://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  void listening;

  const peer = {
    state,
    received,
    errors,
    sessions,
    sessionEvents,
    cdrs,
    commandResults,
    evsePatches,
    get versionsUrl() {
      return `${base}/ocpi/emsp/versions`;
    },
    /** Answers the next `count` messages of a kind with this HTTP status. */
    failNext(kind: FaultKind, count: number, status = 500) {
      faults.set(kind, { count, status });
    },

    /** We register with the CPO: its versions with its TOKEN_A, then POST our credentials. */
    async registerWith(cpoVersionsUrl: string, tokenA: string): Promise<Credentials> {
      await discoverCpo(cpoVersionsUrl, tokenA);
      const credentialsUrl = state.cpoEndpoints.find((e) => e.identifier === 'credentials')?.url;
      assert.ok(credentialsUrl);
      const ourToken = `emsp-token-b-${randomUUID()}`;
      state.cpoCallsWith = ourToken;
      const { data } = await ocpiData<Credentials>({ token: tokenA }, { method: 'POST', url: credentialsUrl, body: ourCredentials(ourToken) });
      const parsed = parseCredentials(data);
      assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
      state.cpoToken = parsed.value.token;
      state.cpoRoles = parsed.value.roles;
      return parsed.value;
    },

    endpoint(identifier: string): string {
      const url = state.cpoEndpoints.find((e) => e.identifier === identifier)?.url;
      assert.ok(url, `the CPO has a ${identifier} endpoint`);
      return url;
    },

    /** The routing headers of a call to a functional module of the CPO: from us, to `party`, else its first party. */
    routing(party?: { country_code: string; party_id: string }): Record<string, string> {
      const to = party ?? state.cpoRoles[0];
      assert.ok(to, 'registered with the CPO');
      return {
        'OCPI-from-country-code': EMSP_PARTY.country_code,
        'OCPI-from-party-id': EMSP_PARTY.party_id,
        'OCPI-to-country-code': to.country_code,
        'OCPI-to-party-id': to.party_id,
      };
    },

    /**
     * A call to the CPO with our token (or the given one), through src/ocpi-protocol/client.ts; with the routing
     * headers (to `to`, else the CPO's first party), except to versions and credentials (configuration modules are not routed).
     */
    async call(
      method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
      url: string,
      body?: unknown,
      token = state.cpoToken,
      timeoutMs = 5_000,
      to?: { country_code: string; party_id: string },
    ) {
      assert.ok(token, 'registered with the CPO');
      const configuration = /\/(versions|credentials|\d+\.\d+(\.\d+)?)\/?$/.test(new URL(url).pathname);
      // A STOP_SESSION goes to the party of the session (the network refuses it addressed to another party).
      const stopped = url.endsWith('/STOP_SESSION') ? sessions.get(String((body as { session_id?: unknown } | undefined)?.session_id)) : undefined;
      to ??= stopped ? { country_code: stopped.country_code, party_id: stopped.party_id } : undefined;
      return ocpiRequest(
        { token },
        {
          method,
          url,
          ...(body === undefined ? {} : { body }),
          ...(configuration ? {} : { headers: peer.routing(to) }),
          timeoutMs,
          retries: 0,
        },
      );
    },

    /** A response_url of ours, unique per command. */
    responseUrl(command: string): { url: string; uid: string } {
      const uid = randomUUID();
      return { url: `${versionUrl()}/commands/${command}/${uid}`, uid };
    },

    async close() {
      await app.close();
    },
  };
  return peer;
}

export type EmspPeer = Awaited<ReturnType<typeof startEmspPeer>>;

/** The data of an OCPI answer (which must have an envelope). */
export function dataOf<T>(reply: OcpiReply): T {
  assert.ok(reply.envelope, `HTTP ${reply.status} without an OCPI envelope`);
  return reply.envelope.data as T;
}

export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A Token as an eMSP sends it in START_SESSION. */
export function appToken(uid = randomUUID().slice(0, 36)) {
  return {
    ...EMSP_PARTY,
    uid,
    type: 'APP_USER',
    contract_id: `NL-TST-C${uid
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, 8)
      .toUpperCase()}`,
    issuer: 'Test eMSP',
    valid: true,
    whitelist: 'NEVER',
    last_updated: new Date().toISOString(),
  };
}
