// Live session streams (Server-Sent Events): every open stream of this process is fed from one LISTEN connection
// on EVENTS_CHANNEL, fanned out here in memory, never a database connection per stream.
//
// A stream knows the last seq it wrote (`last`) and the seq it must reach (`target`: everything drawn so far, read
// at the first round after a NOTIFY named its session, after it opened, and after the LISTEN connection came back,
// since notifications may have been missed). A round (one at a time, for every stream of the process) then reads each waiting stream's
// session: `client_events WHERE session_id = $1 AND seq > last AND seq <= settled ORDER BY seq`.
//
// `settled` is why nothing is missed or repeated although seq is drawn at the insert and transactions commit in any
// order: an event with seq 7 may commit after seq 8 was committed, notified and read. A stream that had written 8
// and then asked for "seq > 8" would never see 7. So a round reads only up to a seq no writer in flight can
// undercut (client_events_horizon, migration 0022): the highest seq drawn once every transaction that was writing
// client_events when it was read has ended. While such writers are in flight, the round looks again after
// SETTLE_POLL_MS (their commits notify too; an abort does not). We chose this over the snapshot's xmin, which waits
// for every transaction of the database (a long unrelated one would hold every stream back), and over re-reading a
// window of recent seqs, which would deliver 8 before 7 and lose 7 for a client that resumes after 8.
//
// A stream holds at most about MAX_BUFFERED_BYTES that its client has not read: once that much waits, nothing more
// is written to it until the client has read it (the stream's 'drain'; the rounds go on for the other streams), so a
// replay or a burst larger than that reaches a client that keeps up at its own pace. A client that leaves it unread
// for a whole heartbeat interval (two heartbeats find the stream full) is cut off: a clean end, and it resumes with
// Last-Event-ID.
//
// A notification can be lost without a reconnect: a process that commits events sends their NOTIFY after the
// commit (src/platform/notify.ts), so one stopped in between never sends it. So while streams are open, a sweep every
// SWEEP_MS (at most the heartbeat interval) asks which of their sessions have events settled since the last sweep
// (one range read of client_events' primary key) and those streams catch up as if notified.
import { PassThrough } from 'node:stream';
import { type Database, listen } from '../../platform/db.ts';
import { AppError, serviceUnavailable } from '../../platform/errors.ts';
import { readNotes } from '../../platform/notify.ts';
import { EVENTS_CHANNEL } from './outbox.ts';
import * as repo from './repository.ts';

interface SessionStreamsDeps {
  db: Database;
  /** A comment line on every open stream this often (SSE_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** Open streams per API client in this process (SSE_MAX_STREAMS_PER_CLIENT); 429 beyond. */
  maxPerClient: number;
  log?: (level: 'warn' | 'error', message: string, fields?: object) => void;
}

interface OpenRequest {
  clientId: string;
  sessionId: string;
  /** Events with a seq above this one are sent (0: all; the Last-Event-ID a client resumes from). */
  after: number;
  /** Asked at each heartbeat: false (the token was revoked, the client disabled) ends the stream. */
  stillAllowed?: () => Promise<boolean>;
}

interface Stream {
  clientId: string;
  sessionId: string;
  out: PassThrough;
  last: number;
  target: number;
  /** Notified, opened or reconnected since the last round read the horizon: its target becomes "all drawn". */
  catchingUp: boolean;
  /** More than MAX_BUFFERED_BYTES waits for the client: nothing is written until it has read it ('drain'). */
  full: boolean;
  /** Heartbeats in a row that found the stream full; the second cuts it off. */
  fullBeats: number;
  heartbeat: NodeJS.Timeout | undefined;
}

/** How soon a round looks again while writers of client_events are in flight. */
const SETTLE_POLL_MS = 20;
/** How soon a round is tried again after the database failed it. */
const RETRY_MS = 1_000;
/** Events read per query (a replay of a long session reads in pages). */
const PAGE = 500;
/** What a stream holds for its client at most (about: an event is written whole) before it waits for the client to read. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** How long opening a stream waits for the LISTEN connection of the process. */
const LISTEN_WAIT_MS = 5_000;
/** How often the open streams look for events whose notification never came (at most the heartbeat interval). */
const SWEEP_MS = 5_000;

/** The streams of this process and what feeds them: the state every function below is given. */
interface Hub {
  deps: SessionStreamsDeps;
  bySession: Map<string, Set<Stream>>;
  perClient: Map<string, number>;
  listener: ReturnType<typeof listen> | undefined;
  closed: boolean;
  /** Every event with seq <= settled has committed or never will. */
  settled: number;
  /** A drawn seq that becomes settled once its writers (in flight when it was read) have ended. */
  candidate: { drawn: number; writers: string[] } | undefined;
  /** Rounds run one at a time; `again` asks for another as soon as the current one ends. */
  running: boolean;
  again: boolean;
  timer: NodeJS.Timeout | undefined;
  /** Events with seq <= swept were committed when a round looked (undefined: no stream open to look for). */
  swept: number | undefined;
  /** The next round sweeps (set every SWEEP_MS while streams are open). */
  sweepDue: boolean;
  sweeper: NodeJS.Timeout | undefined;
}

const streamsOf = (hub: Hub) => [...hub.bySession.values()].flatMap((set) => [...set]);

function schedule(hub: Hub, delayMs = 0): void {
  if (hub.closed) return;
  if (hub.running) {
    hub.again = true;
    return;
  }
  if (hub.timer && delayMs > 0) return; // a round is already due as soon or sooner
  clearTimeout(hub.timer);
  hub.timer = setTimeout(() => {
    hub.timer = undefined;
    void round(hub);
  }, delayMs);
}

/**
 * A NOTIFY of EVENTS_CHANNEL: the sessions whose events committed, or undefined (any: the LISTEN connection came
 * back, or a payload that lists too many). Their streams catch up: each reads up to what was drawn at the next round.
 */
function onNotify(hub: Hub, payload: string | undefined): void {
  const sessions = readNotes(payload);
  if (sessions) {
    for (const sessionId of sessions) for (const stream of hub.bySession.get(sessionId) ?? []) stream.catchingUp = true;
  } else {
    for (const stream of streamsOf(hub)) stream.catchingUp = true;
  }
  schedule(hub);
}

/** Moves the horizon on; answers the highest seq drawn at this reading. */
async function advance(hub: Hub): Promise<number> {
  const h = await repo.horizon(hub.deps.db, hub.candidate?.writers ?? []);
  if (hub.candidate && h.watchedRunning === 0) {
    hub.settled = Math.max(hub.settled, hub.candidate.drawn);
    hub.candidate = undefined;
  }
  if (!hub.candidate) {
    if (h.writers.length === 0) hub.settled = Math.max(hub.settled, h.drawn);
    else hub.candidate = { drawn: h.drawn, writers: h.writers };
  }
  return h.drawn;
}

const ended = (stream: Stream) => stream.out.destroyed || stream.out.writableEnded;

/** Writes the event unless the stream has it, has ended or is full; whether the stream can take more. */
function write(hub: Hub, stream: Stream, event: repo.StreamedEvent): boolean {
  if (stream.full || ended(stream)) return false;
  if (event.seq <= stream.last) return true;
  stream.out.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${event.body}\n\n`);
  stream.last = event.seq;
  if (stream.out.writableLength <= MAX_BUFFERED_BYTES) return true;
  stream.full = true;
  stream.out.once('drain', () => {
    stream.full = false;
    stream.fullBeats = 0;
    schedule(hub);
  });
  return false;
}

/** Writes the session's settled events each of its waiting streams has not written yet, as far as each can take. */
async function feed(hub: Hub, sessionId: string, streams: Stream[]): Promise<void> {
  const { settled } = hub;
  let waiting = streams.filter((s) => !s.full && s.last < Math.min(s.target, settled));
  if (waiting.length === 0) return;
  const clientId = (waiting[0] as Stream).clientId;
  let after = Math.min(...waiting.map((s) => s.last));
  for (;;) {
    const events = await repo.sessionEvents(hub.deps.db, clientId, sessionId, { after, upTo: settled }, PAGE);
    waiting = waiting.filter((stream) => events.every((event) => write(hub, stream, event)));
    if (events.length < PAGE || waiting.length === 0) break;
    after = (events.at(-1) as repo.StreamedEvent).seq;
  }
  // Every event of the session up to `settled` is written now, to each stream that could take them all.
  for (const stream of waiting) stream.last = Math.max(stream.last, settled);
}

/**
 * The streams whose sessions have events settled since the last sweep catch up to `settled`. The first round with
 * streams open only notes where it stands: those streams were opened catching up to at least that far.
 */
async function sweep(hub: Hub): Promise<void> {
  const { settled, swept } = hub;
  if (swept !== undefined && settled > swept) {
    for (const sessionId of await repo.sessionsWithEvents(hub.deps.db, { after: swept, upTo: settled })) {
      for (const stream of hub.bySession.get(sessionId) ?? []) stream.target = Math.max(stream.target, settled);
    }
  }
  // Unless the last stream closed meanwhile (then the next one to open starts afresh).
  if (hub.bySession.size > 0) hub.swept = settled;
}

/** One round for every stream of the process: the horizon, then each waiting stream's session read up to it. */
async function round(hub: Hub): Promise<void> {
  hub.running = true;
  hub.again = false;
  try {
    const catching = streamsOf(hub).filter((s) => s.catchingUp);
    const sweeping = hub.sweepDue || hub.swept === undefined;
    if (hub.bySession.size > 0 && (sweeping || streamsOf(hub).some((s) => s.catchingUp || s.target > s.last))) {
      const drawn = await advance(hub);
      for (const stream of catching) {
        stream.catchingUp = false;
        stream.target = Math.max(stream.target, drawn);
      }
      if (sweeping) {
        hub.sweepDue = false; // a sweep asked for while this one reads is another one
        await sweep(hub).catch((error: unknown) => {
          hub.sweepDue = true;
          throw error;
        });
      }
      for (const [sessionId, streams] of hub.bySession) await feed(hub, sessionId, [...streams]);
    }
    // Another round for streams still behind; a full one waits for its client to read (its drain schedules one).
    if (streamsOf(hub).some((s) => !s.full && s.target > s.last)) hub.again = true;
  } catch (error) {
    hub.deps.log?.('warn', 'live streams could not read events; retrying', { reason: (error as Error).message });
    hub.running = false;
    schedule(hub, RETRY_MS);
    return;
  }
  hub.running = false;
  if (hub.again) schedule(hub, hub.candidate ? SETTLE_POLL_MS : 0);
}

function remove(hub: Hub, stream: Stream): void {
  clearInterval(stream.heartbeat);
  const set = hub.bySession.get(stream.sessionId);
  if (!set?.delete(stream)) return;
  if (set.size === 0) hub.bySession.delete(stream.sessionId);
  if (hub.bySession.size === 0) {
    clearInterval(hub.sweeper);
    hub.sweeper = undefined;
    hub.swept = undefined;
  }
  const left = (hub.perClient.get(stream.clientId) ?? 1) - 1;
  if (left > 0) hub.perClient.set(stream.clientId, left);
  else hub.perClient.delete(stream.clientId);
}

/** The process's one LISTEN connection, made at the first stream; throws 503 when it cannot be had in time. */
async function listening(hub: Hub): Promise<void> {
  hub.listener ??= listen(
    hub.deps.db,
    EVENTS_CHANNEL,
    (payload) => onNotify(hub, payload),
    (error) => hub.deps.log?.('warn', 'live streams lost their LISTEN connection; reconnecting', { reason: error.message }),
  );
  let timeout: NodeJS.Timeout | undefined;
  const ready = await Promise.race([
    hub.listener.ready.then(() => true),
    new Promise<false>((resolve) => {
      timeout = setTimeout(() => resolve(false), LISTEN_WAIT_MS);
    }),
  ]);
  clearTimeout(timeout);
  if (!ready) throw serviceUnavailable('Live streams cannot be opened right now; retry shortly.');
}

function heartbeat(hub: Hub, stream: Stream, stillAllowed: OpenRequest['stillAllowed']): NodeJS.Timeout {
  const { out } = stream;
  const timer = setInterval(() => {
    if (out.writableEnded) return;
    // Full at two heartbeats in a row: its client has read nothing for a whole interval. Cut off (it resumes).
    stream.fullBeats = stream.full ? stream.fullBeats + 1 : 0;
    if (stream.fullBeats >= 2) {
      out.end();
      return;
    }
    out.write(': keep-alive\n\n');
    stillAllowed?.()
      .then((allowed) => {
        if (!allowed) out.end();
      })
      .catch(() => {});
  }, hub.deps.heartbeatMs);
  timer.unref();
  return timer;
}

/**
 * A new stream of the session's events after `after`: its replay follows at once, then each event as it commits,
 * and a heartbeat comment every heartbeatMs. 429 beyond the client's open streams; 503 while the process stops.
 */
async function open(hub: Hub, request: OpenRequest): Promise<PassThrough> {
  const stopping = () => serviceUnavailable('The service is stopping; reconnect shortly.');
  if (hub.closed) throw stopping();
  if ((hub.perClient.get(request.clientId) ?? 0) >= hub.deps.maxPerClient) {
    throw new AppError('rate_limited', `This client may keep ${hub.deps.maxPerClient} live streams open at once on this instance; close one first.`, {
      headers: { 'Retry-After': '5' },
    });
  }
  // LISTEN first: whatever commits after the round below read the horizon is notified.
  await listening(hub);
  if (hub.closed) throw stopping();
  const out = new PassThrough();
  const stream: Stream = {
    clientId: request.clientId,
    sessionId: request.sessionId,
    out,
    last: request.after,
    target: request.after,
    catchingUp: true,
    full: false,
    fullBeats: 0,
    heartbeat: undefined,
  };
  stream.heartbeat = heartbeat(hub, stream, request.stillAllowed);
  hub.perClient.set(request.clientId, (hub.perClient.get(request.clientId) ?? 0) + 1);
  const set = hub.bySession.get(request.sessionId) ?? new Set<Stream>();
  set.add(stream);
  hub.bySession.set(request.sessionId, set);
  out.on('close', () => remove(hub, stream));
  hub.sweeper ??= setInterval(
    () => {
      hub.sweepDue = true;
      schedule(hub);
    },
    Math.min(SWEEP_MS, hub.deps.heartbeatMs),
  ).unref();
  // The answer's headers and a first line go out at once: the client knows the stream is open.
  out.write(': connected\n\n');
  schedule(hub);
  return out;
}

/** Ends every stream cleanly (the answers complete, so the server can close) and releases the LISTEN connection. */
async function close(hub: Hub): Promise<void> {
  hub.closed = true;
  clearTimeout(hub.timer);
  clearInterval(hub.sweeper);
  for (const stream of streamsOf(hub)) {
    stream.out.end();
    remove(hub, stream);
  }
  const listener = hub.listener;
  hub.listener = undefined;
  await listener?.stop();
}

export function createSessionStreams(deps: SessionStreamsDeps) {
  const hub: Hub = {
    deps,
    bySession: new Map(),
    perClient: new Map(),
    listener: undefined,
    closed: false,
    settled: 0,
    candidate: undefined,
    running: false,
    again: false,
    timer: undefined,
    swept: undefined,
    sweepDue: false,
    sweeper: undefined,
  };
  return {
    open: (request: OpenRequest) => open(hub, request),
    close: () => close(hub),
  };
}

export type SessionStreams = ReturnType<typeof createSessionStreams>;
