// Outbound OCPI calls of the sandbox CPO (src/ocpi-protocol/client.ts does the HTTP):
// - Session PUT/PATCH and CDR POST through the outbox (store.ts): retried with
//   backoff until the eMSP accepts them or the give-up time passes (at most
//   10 minutes for session updates, so a CDR never waits longer behind them),
//   in order per session. A PATCH the eMSP answers 404 (it missed the PUT) is sent as
//   a PUT of the whole current Session instead (transport_and_format: "If the
//   object doesn't exist, the client should do a PUT").
// - EVSE status PATCHes to every registered eMSP, CommandResults to a
//   command's response_url, and a hub's ClientInfo: sent at once, a few
//   retries, never stored (OCPI advises against queueing them; a missed status
//   is reconciled by GET).

import type { Cdr } from '../../ocpi-protocol/cdrs.ts';
import { type OcpiReply, ocpiRequest } from '../../ocpi-protocol/client.ts';
import type { CommandResult } from '../../ocpi-protocol/commands.ts';
import type { ClientInfo } from '../../ocpi-protocol/hub-client-info.ts';
import type { OcpiEvse, OcpiLocation } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Session } from '../../ocpi-protocol/sessions.ts';
import { type PartyRef, routingHeaders } from '../../ocpi-protocol/transport.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import type { Log, Peers } from './peers.ts';
import type { Quirks } from './quirks.ts';
import type { OutboxEntry, Peer } from './store.ts';
import * as store from './store.ts';

export interface PushDeps {
  db: Database;
  clock: Clock;
  peers: Peers;
  log: Log;
  requestTimeoutMs: number;
  /** First retry delay; doubles per attempt up to 5 minutes. */
  retryBaseMs: number;
  giveUpAfterMs: number;
  /** EVSE status PATCHes in flight at most; random changes wait for room. */
  maxStatusPushesInFlight: number;
  /** Imperfect data to send (CPO_SANDBOX_QUIRKS); none by default. */
  quirks?: Quirks;
}

const LEASE_MS = 120_000;
/** A session update not accepted within this time is stale (the eMSP can GET /sessions): it is given up, so the CDR behind it can go. */
const SESSION_GIVE_UP_MS = 600_000;
const MAX_RETRY_DELAY_MS = 300_000;

export const segment = (value: string) => encodeURIComponent(value);
export const joinUrl = (base: string, ...segments: string[]) => `${base.replace(/\/+$/, '')}/${segments.map(segment).join('/')}`;

const accepted = (reply: OcpiReply) => {
  const code = reply.envelope?.status_code;
  return reply.status >= 200 && reply.status < 300 && code !== undefined && code >= 1000 && code < 2000;
};

/** Refusals that a retry cannot fix: the eMSP found the message itself wrong. */
const permanent = (reply: OcpiReply) =>
  (reply.status >= 400 && reply.status < 500 && ![401, 404, 408, 409, 425, 429].includes(reply.status)) ||
  (reply.status >= 200 && reply.status < 300 && (reply.envelope?.status_code ?? 0) >= 2000 && (reply.envelope?.status_code ?? 0) < 3000);

function describe(reply: OcpiReply): string {
  const e = reply.envelope;
  return `HTTP ${reply.status}${e ? ` OCPI ${e.status_code}${e.status_message ? ` (${e.status_message.slice(0, 200)})` : ''}` : ' without an OCPI envelope'}`;
}

/** The OCPI-from/-to headers of a message from one of our parties to a peer (only OCPI-from when the peer has no role). */
function routing(peers: Peers, from: PartyRef, peer: Peer): Record<string, string> {
  // An OCPI 2.1.1 network sends none (2.1.1 has no message routing).
  if (!peers.wire.routing) return {};
  const to = peers.party(peer);
  return to ? routingHeaders(from, to) : { 'OCPI-from-country-code': from.country_code, 'OCPI-from-party-id': from.party_id };
}

async function patchEvse(deps: PushDeps, peer: Peer, location: OcpiLocation, evse: OcpiEvse): Promise<void> {
  const { peers, log } = deps;
  const base = peers.endpoint(peer, 'locations', 'RECEIVER');
  if (!base) return;
  try {
    const reply = await ocpiRequest(peers.auth(peer), {
      method: 'PATCH',
      url: joinUrl(base, location.country_code, location.party_id, location.id, evse.uid),
      module: 'locations',
      body: { status: deps.quirks ? deps.quirks.status(evse.status) : evse.status, last_updated: evse.last_updated },
      headers: routing(peers, location, peer),
      timeoutMs: deps.requestTimeoutMs,
      retries: 1,
    });
    if (!accepted(reply)) log('warn', 'EVSE status push refused', { peer: peer.id, evse: evse.uid, answer: describe(reply) });
  } catch (error) {
    log('warn', 'EVSE status push failed', { peer: peer.id, evse: evse.uid, err: (error as Error).message });
  }
}

/**
 * A hub's ClientInfo of one of its parties, PUT to an eMSP's hubclientinfo Receiver (a configuration module: no routing
 * headers). Sent at once with a retry, not stored: the eMSP can GET the list when unsure (mod_hub_client_info).
 */
async function putClientInfo({ peers, log, requestTimeoutMs }: PushDeps, peer: Peer, info: ClientInfo): Promise<void> {
  const base = peers.endpoint(peer, 'hubclientinfo', 'RECEIVER');
  if (!base) return;
  try {
    const reply = await ocpiRequest(peers.auth(peer), {
      method: 'PUT',
      url: joinUrl(base, info.country_code, info.party_id),
      module: 'hubclientinfo',
      body: info,
      timeoutMs: requestTimeoutMs,
      retries: 1,
    });
    if (!accepted(reply))
      log('warn', 'the eMSP refused a ClientInfo', { peer: peer.id, party: `${info.country_code}*${info.party_id}`, answer: describe(reply) });
  } catch (error) {
    log('warn', 'could not push a ClientInfo', { peer: peer.id, party: `${info.country_code}*${info.party_id}`, err: (error as Error).message });
  }
}

/**
 * POSTs a CommandResult to the command's response_url, from the party of the EVSE or session the command was about
 * to the eMSP's party: the result goes to the eMSP's commands module, a functional module (routing headers).
 */
async function postCommandResult({ peers, log, requestTimeoutMs }: PushDeps, peer: Peer, from: PartyRef, url: string, result: CommandResult): Promise<boolean> {
  try {
    // Short and few: a session waits for its command result to go out.
    const reply = await ocpiRequest(peers.auth(peer), {
      method: 'POST',
      url,
      module: 'commands',
      body: peers.wire.commandResult(result),
      headers: routing(peers, from, peer),
      timeoutMs: Math.min(requestTimeoutMs, 5_000),
      retries: 1,
    });
    if (!accepted(reply)) log('warn', 'the eMSP refused a command result', { peer: peer.id, url, answer: describe(reply) });
    return accepted(reply);
  } catch (error) {
    log('warn', 'could not post a command result', { peer: peer.id, url, err: (error as Error).message });
    return false;
  }
}

/** Sends one outbox message; a Session PATCH answered 404 is sent again as a PUT of the whole current Session. */
/** An outbox message's body (a 2.2.1 Session, Session PATCH or CDR) in the version the network speaks. */
function wireBody(peers: Peers, entry: OutboxEntry): unknown {
  if (entry.kind === 'cdr') return peers.wire.cdr(entry.body as Cdr);
  if (entry.kind === 'session_put') return peers.wire.session(entry.body as Session);
  return peers.wire.sessionPatch(entry.body as Record<string, unknown>);
}

async function send({ db, peers, requestTimeoutMs }: PushDeps, peer: Peer, entry: OutboxEntry): Promise<OcpiReply> {
  const module = entry.kind === 'cdr' ? 'cdrs' : 'sessions';
  let reply = await ocpiRequest(peers.auth(peer), {
    method: entry.method,
    url: entry.url,
    module,
    body: wireBody(peers, entry),
    headers: entry.routing,
    timeoutMs: requestTimeoutMs,
    retries: 0,
  });
  if (entry.kind === 'session_patch' && reply.status === 404) {
    const session = await store.findSession(db, entry.orderingKey);
    if (session) {
      reply = await ocpiRequest(peers.auth(peer), {
        method: 'PUT',
        url: entry.url,
        module,
        body: peers.wire.session(session.data as Session),
        headers: entry.routing,
        timeoutMs: requestTimeoutMs,
        retries: 0,
      });
    }
  }
  return reply;
}

/** One attempt at an outbox message, recorded: delivered, to be retried (with backoff), or given up. */
async function deliver(deps: PushDeps, entry: OutboxEntry): Promise<'delivered' | 'retry' | 'failed'> {
  const { db, clock, peers, log } = deps;
  const peer = peers.get(entry.peerId);
  const now = clock.now();
  if (!peer) {
    await store.recordOutcome(db, entry.id, {
      delivered: false,
      failed: true,
      status: null,
      error: 'the peer is not registered',
      nextAttemptAt: null,
      at: now,
    });
    return 'failed';
  }
  let status: number | null = null;
  let error: string | null = null;
  let location: string | null = null;
  let ok = false;
  let giveUpNow = false;
  try {
    const reply = await send(deps, peer, entry);
    status = reply.status;
    ok = accepted(reply);
    if (!ok) {
      error = describe(reply);
      giveUpNow = permanent(reply);
    }
    const header = reply.headers.location;
    location = typeof header === 'string' ? header : null;
  } catch (e) {
    error = (e as Error).message;
  }
  const at = clock.now();
  const maxAgeMs = entry.kind === 'cdr' ? deps.giveUpAfterMs : Math.min(deps.giveUpAfterMs, SESSION_GIVE_UP_MS);
  const giveUp = !ok && (giveUpNow || at.getTime() - entry.createdAt.getTime() >= maxAgeMs);
  const delay = Math.min(MAX_RETRY_DELAY_MS, deps.retryBaseMs * 2 ** Math.max(0, entry.attempts - 1)) * (0.75 + Math.random() * 0.5);
  await store.recordOutcome(db, entry.id, {
    delivered: ok,
    failed: giveUp,
    status,
    error,
    nextAttemptAt: ok || giveUp ? null : new Date(at.getTime() + delay),
    location,
    at,
  });
  if (!ok)
    log(giveUp ? 'error' : 'warn', giveUp ? 'gave up a push to the eMSP' : 'push to the eMSP failed, will retry', {
      kind: entry.kind,
      key: entry.orderingKey,
      attempts: entry.attempts,
      error,
    });
  return ok ? 'delivered' : giveUp ? 'failed' : 'retry';
}

/** Sends every due outbox message (oldest of each session first); returns how many were accepted. */
async function deliverDue(deps: PushDeps): Promise<number> {
  const { db, clock } = deps;
  let delivered = 0;
  for (;;) {
    const now = clock.now();
    const due = await store.claimDue(db, now, new Date(now.getTime() + LEASE_MS), 20);
    if (due.length === 0) return delivered;
    const outcomes = await Promise.all(due.map((entry) => deliver(deps, entry)));
    delivered += outcomes.filter((o) => o === 'delivered').length;
    // Failed ones are due again only later; delivered ones let the next message of their session go.
    if (outcomes.every((o) => o === 'retry')) return delivered;
  }
}

export function createPush(deps: PushDeps) {
  const { peers } = deps;
  let statusInFlight = 0;
  const tasks = new Set<Promise<unknown>>();

  function track<T>(promise: Promise<T>): Promise<T> {
    tasks.add(promise);
    void promise.finally(() => tasks.delete(promise)).catch(() => {});
    return promise;
  }

  return {
    routing: (from: PartyRef, peer: Peer): Record<string, string> => routing(peers, from, peer),
    track,
    /** Settles when every push started so far has finished. */
    async idle(): Promise<void> {
      while (tasks.size > 0) await Promise.allSettled([...tasks]);
    },

    /** Whether a random status change may be pushed now. */
    hasStatusRoom: () => statusInFlight < deps.maxStatusPushesInFlight,

    /** PATCHes the EVSE's status to every registered eMSP with a Locations Receiver. */
    pushEvseStatus(location: OcpiLocation, evse: OcpiEvse): void {
      for (const peer of peers.registered()) {
        statusInFlight++;
        void track(patchEvse(deps, peer, location, evse).finally(() => statusInFlight--));
      }
    },

    /** A hub's ClientInfo, PUT to one eMSP (or every registered one): awaited. */
    async pushClientInfo(infos: readonly ClientInfo[], peer?: Peer): Promise<void> {
      const to = peer ? [peer] : peers.registered();
      await track(Promise.all(to.flatMap((p) => infos.map((info) => putClientInfo(deps, p, info)))));
    },

    /** POSTs a CommandResult to the command's response_url, from `from` (the party the command was about). */
    postCommandResult: (peer: Peer, from: PartyRef, url: string, result: CommandResult): Promise<boolean> => postCommandResult(deps, peer, from, url, result),

    /** Sends every due outbox message (oldest of each session first); returns how many were accepted. */
    deliverDue: (): Promise<number> => deliverDue(deps),
  };
}

export type Push = ReturnType<typeof createPush>;
