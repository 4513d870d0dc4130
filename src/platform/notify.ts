// Notifications after commit, coalesced (issue 17). A NOTIFY sent inside a transaction is delivered at its commit,
// but PostgreSQL serialises the commits of notifying transactions (one lock on the notification queue), and ours
// hold the rows they changed (a session, a user, the invoice counter) while they wait for it: one NOTIFY per event
// or job cost the money path about 15% of its throughput. So a transaction opened by Database.transaction collects
// what it would notify, and once it has committed, this process sends it with whatever else committed meanwhile:
// at most one NOTIFY statement per COALESCE_MS per database, its channels' notes merged. That statement commits
// without waiting for its WAL flush. A notification is not data: a process that stops between a commit and the send
// (a crash, a kill) loses it, so every listener also catches up on a timer of its own (the job runners and webhook
// deliveries poll; live streams sweep, src/modules/events/streams.ts) and after a reconnect. Closing the database
// sends what is pending first (flushNotifications).
//
// A payload is a JSON array of the distinct notes the channel was given (a queue name, a session id), or the empty
// string when they would not fit PostgreSQL's 8,000-byte payload: "anything may have changed". readNotes reads
// both, and a listener treats undefined (a reconnect, an unreadable payload) as "anything" too.
import type pg from 'pg';
import { type Database, isDatabaseUnavailable, type Queryable } from './db.ts';

/** The most notes a payload lists; beyond, the payload says "anything" (session ids: about 40 bytes each). */
const MAX_NOTES = 150;
/** The least time between two NOTIFY statements of one database in this process. */
const COALESCE_MS = 20;
/** How soon a NOTIFY that failed (the database unavailable) is tried again, with what came meanwhile. */
const RETRY_MS = 1_000;
/** How long closing the database waits for the pending notifications to be sent. */
const FLUSH_WAIT_MS = 1_000;

type Notes = Map<string, Set<string>>;

function add(notes: Notes, channel: string, note: string): void {
  const set = notes.get(channel) ?? new Set<string>();
  set.add(note);
  notes.set(channel, set);
}

/** What the transactions on these connections (Database.transaction's clients) will notify once they commit. */
const pending = new WeakMap<Queryable, { database: Database; notes: Notes }>();

/** Database.transaction calls this once its BEGIN is done. */
export function transactionBegun(client: Queryable, database: Database): void {
  pending.set(client, { database, notes: new Map() });
}

/** Database.transaction calls this once its work has ended: committed (the notes are sent) or not (they are dropped). */
export function transactionEnded(client: Queryable, committed: boolean): void {
  const open = pending.get(client);
  pending.delete(client);
  if (!open || !committed || open.notes.size === 0) return;
  const sender = senderOf(open.database);
  for (const [channel, set] of open.notes) for (const note of set) add(sender.notes, channel, note);
  schedule(sender);
}

/**
 * Notifies `note` on `channel` once the transaction on `q` commits, coalesced with others. Answers false when `q` is
 * not a transaction opened by Database.transaction (the pool, or a connection of the caller's own): the caller then
 * notifies inside its own statement (`pg_notify(channel, json_build_array(note)::text)`), which PostgreSQL delivers
 * at that statement's commit.
 */
export function notifyAfterCommit(q: Queryable, channel: string, note: string): boolean {
  const open = pending.get(q);
  if (!open) return false;
  add(open.notes, channel, note);
  return true;
}

/** The notes of a payload, or undefined for "anything may have changed" (an empty or unreadable payload, a reconnect). */
export function readNotes(payload: string | undefined): string[] | undefined {
  if (!payload) return undefined;
  try {
    const notes: unknown = JSON.parse(payload);
    return Array.isArray(notes) && notes.every((n) => typeof n === 'string') ? notes : undefined;
  } catch {
    return undefined;
  }
}

interface Sender {
  database: Database;
  notes: Notes;
  timer: NodeJS.Timeout | undefined;
  /** The NOTIFY statement in flight. */
  sending: Promise<void> | undefined;
  lastSentAt: number;
}

const senders = new WeakMap<pg.Pool, Sender>();

function senderOf(database: Database): Sender {
  let sender = senders.get(database.pool);
  if (!sender) {
    sender = { database, notes: new Map(), timer: undefined, sending: undefined, lastSentAt: Number.NEGATIVE_INFINITY };
    senders.set(database.pool, sender);
  }
  return sender;
}

function schedule(sender: Sender, delayMs?: number): void {
  if (sender.sending || sender.timer) return; // the statement in flight, or the one due, takes these notes too
  const wait = delayMs ?? Math.max(0, sender.lastSentAt + COALESCE_MS - performance.now());
  sender.timer = setTimeout(() => void start(sender), wait);
  // Pending notes never keep a stopping process alive: listeners catch up on their own.
  sender.timer.unref();
}

function start(sender: Sender): Promise<void> {
  clearTimeout(sender.timer);
  sender.timer = undefined;
  if (sender.notes.size === 0) return Promise.resolve();
  sender.sending = send(sender).then((retry) => {
    sender.sending = undefined;
    if (sender.notes.size > 0) schedule(sender, retry ? RETRY_MS : undefined);
  });
  return sender.sending;
}

/** One NOTIFY statement with every note pending; whether it failed for want of the database (try again later). */
async function send(sender: Sender): Promise<boolean> {
  const notes = sender.notes;
  sender.notes = new Map();
  sender.lastSentAt = performance.now();
  const values: string[] = [];
  const calls: string[] = [];
  for (const [channel, set] of notes) {
    calls.push(`pg_notify($${values.length + 1}, $${values.length + 2})`);
    values.push(channel, set.size > MAX_NOTES ? '' : JSON.stringify([...set]));
  }
  try {
    await sender.database.query(`SELECT set_config('synchronous_commit', 'off', true), ${calls.join(', ')}`, values);
    return false;
  } catch (error) {
    // Told to the database's observer (a log line, the error metric) by the query itself. The database unreachable:
    // the notes are kept for another try, unless the pool was closed (nothing can send them then).
    const pool = sender.database.pool as pg.Pool & { ending?: boolean };
    const retry = !pool.ending && isDatabaseUnavailable(error);
    if (retry) for (const [channel, set] of notes) for (const note of set) add(sender.notes, channel, note);
    return retry;
  }
}

/**
 * Sends the notifications pending for this pool now (Database.close calls it before the pool ends): waits for the
 * statement in flight, then sends what came meanwhile, at most FLUSH_WAIT_MS in all (an unreachable database does
 * not hold a stop up; the listeners catch up on their own).
 */
export async function flushNotifications(pool: pg.Pool): Promise<void> {
  const sender = senders.get(pool);
  if (!sender) return;
  let timeout: NodeJS.Timeout | undefined;
  const flushed = (async () => {
    await sender.sending;
    if (sender.notes.size > 0) await start(sender);
  })();
  await Promise.race([flushed, new Promise((resolve) => (timeout = setTimeout(resolve, FLUSH_WAIT_MS)))]);
  clearTimeout(timeout);
}
