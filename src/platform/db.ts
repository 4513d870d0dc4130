import pg from 'pg';
import { flushNotifications, transactionBegun, transactionEnded } from './notify.ts';

// Timestamps come back as Date; bigint counts (count(*)) as numbers: they stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

/**
 * A statement prepared once per connection under its name, then only bound and executed (no parse, analysis or
 * planning each time): for a hot statement whose plan does not depend on its values (after five runs PostgreSQL may
 * keep one generic plan for it). Names are global: one text per name.
 */
export interface NamedStatement {
  name: string;
  text: string;
}

/** What a repository needs: a pool or a client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(statement: string | NamedStatement, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export interface Database extends Queryable {
  readonly pool: pg.Pool;
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs `work` on one connection of its own (a cursor, an advisory lock). The
   * connection is watched while it is out, so a lost connection rejects the work
   * instead of crashing the process, and a connection that failed is closed, not reused.
   */
  withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** withClient for code that cannot be one callback (a generator): call `release` exactly once. */
  checkOut(): Promise<CheckedOutClient>;
  close(): Promise<void>;
}

// Failures that mean "the database cannot be reached right now" (restart, failover,
// terminated connection, too many connections), as opposed to a failing statement.
const UNAVAILABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '58030']);
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'connection timeout',
];

/** True when an error says the database is unreachable (answer 503 and retry), not that a statement failed. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const e = error as Error & { code?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && (UNAVAILABLE_NETWORK_CODES.has(e.code) || UNAVAILABLE_SQLSTATES.has(e.code) || e.code.startsWith('08'))) return true;
  // A server stopped cleanly removes its Unix socket file: connecting to it fails with ENOENT until it is back.
  if (e.code === 'ENOENT' && (e as { syscall?: unknown }).syscall === 'connect') return true;
  if (UNAVAILABLE_MESSAGES.some((m) => e.message.includes(m))) return true;
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable);
  return e.cause !== undefined && e.cause !== error && isDatabaseUnavailable(e.cause);
}

export interface CheckedOutClient {
  client: pg.PoolClient;
  /** Returns the connection to the pool, or closes it when it was lost or `discard` is true. */
  release(discard?: boolean): void;
}

/** Checks a client out of the pool with an 'error' listener attached while it is out (pg-pool removes its own). */
async function checkOut(pool: pg.Pool): Promise<CheckedOutClient> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost = error;
  };
  client.on('error', onError);
  return {
    client,
    release(discard = false) {
      client.off('error', onError);
      client.release(lost ?? (discard ? new Error('connection discarded') : undefined));
    },
  };
}

export interface DatabaseOptions {
  max?: number;
  applicationName?: string;
  /** Told of every failed query, transaction or connection (metrics); not of errors the caller's own work throws. */
  onError?: (error: Error) => void;
  /** Statements run often with values are prepared per connection (below); default true. */
  autoPrepare?: boolean;
  /** Told once, when the pool has named MAX_AUTO_PREPARED texts: texts seen from then on are planned on every run. */
  onAutoPrepareFull?: (names: number) => void;
}

// Statements prepared automatically (issue 17: planning took 14 s of PostgreSQL's 56 s of statement time on the
// money path, 169,151 plans for 290,405 statements). A statement text run with values for the AUTO_PREPARE_AFTER-th
// time on a pool gets a name; from then on each connection of the pool parses it once and afterwards only binds and
// executes it. PostgreSQL plans such a statement anew for its first five runs on a connection, then keeps one
// generic plan unless that one is estimated costlier than the plans it made for the values (plan_cache_mode auto:
// the rule of every prepared statement). Npgsql's auto-prepare works the same way; asyncpg prepares every statement.
//
// Bounded: at most MAX_AUTO_PREPARED names per pool. PostgreSQL keeps a prepared statement per connection until the
// connection ends, about 26 KB each (350 statements of the charging path, 7 runs each: 9 MB in one backend): a
// connection that ran every statement of the money path (~250) holds about 6.5 MB more, and the bound is
// MAX_AUTO_PREPARED x 26 KB (8 MB) per connection. Texts seen fewer times are forgotten beyond MAX_TEXTS_COUNTED. A
// text that embeds values instead of passing them (SQL built from literals) is run with no values, never prepared.
//
// A prepared statement can go stale on a connection: the schema changed under a running process (a `SELECT *`
// then answers 0A000 "cached plan must not change result type"), or pg closed it after failing to send a value
// (26000 "prepared statement does not exist" at its next run). The text then loses its name (a new one is given
// after AUTO_PREPARE_AFTER more runs) and the statement runs once more unnamed: outside a transaction it answers;
// inside one the transaction has failed anyway. DATABASE_AUTO_PREPARE=false turns it off (NamedStatement's names stay).
const AUTO_PREPARE_AFTER = 3;
export const MAX_AUTO_PREPARED = 300;
const MAX_TEXTS_COUNTED = 10_000;

interface AutoNames {
  names: Map<string, string>;
  timesSeen: Map<string, number>;
  given: number;
  /** Called when `names` first reaches MAX_AUTO_PREPARED (then cleared). */
  full?: ((names: number) => void) | undefined;
}

/** The name `text` runs under, once it has been run often enough; undefined before that and beyond the bound. */
function autoName(state: AutoNames, text: string): string | undefined {
  const name = state.names.get(text);
  if (name !== undefined || state.names.size >= MAX_AUTO_PREPARED) return name;
  const seen = (state.timesSeen.get(text) ?? 0) + 1;
  if (seen < AUTO_PREPARE_AFTER) {
    if (state.timesSeen.size >= MAX_TEXTS_COUNTED) state.timesSeen.clear();
    state.timesSeen.set(text, seen);
    return undefined;
  }
  state.timesSeen.delete(text);
  const named = `auto_${++state.given}`;
  state.names.set(text, named);
  if (state.names.size === MAX_AUTO_PREPARED && state.full) {
    // Once: a name forgotten (a stale statement) and given anew brings the count back to the bound.
    const full = state.full;
    state.full = undefined;
    full(state.names.size);
  }
  return named;
}

const isStalePrepared = (error: unknown) =>
  error instanceof pg.DatabaseError && (error.code === '26000' || (error.code === '0A000' && /cached plan/.test(error.message)));

/** A pg client class for one pool: it runs a statement text with values under its automatic name (above). */
function preparingClient(state: AutoNames): typeof pg.Client {
  return class PreparingClient extends pg.Client {
    // biome-ignore lint/suspicious/noExplicitAny: pg's query has many overloads; every call not rewritten goes through as it came
    override query(...args: any[]): any {
      const [config, values, callback] = args as [unknown, unknown, unknown];
      const query = super.query as (...passed: unknown[]) => Promise<pg.QueryResult>;
      const form = callback === undefined ? 'promise' : typeof callback === 'function' ? 'callback' : undefined;
      const name = typeof config === 'string' && Array.isArray(values) && form ? autoName(state, config) : undefined;
      if (!name) return query.apply(this, args);
      const forget = () => {
        if (state.names.get(config as string) === name) state.names.delete(config as string);
      };
      // The pool's own query (db.query, outside a transaction) calls with a callback (pg-pool).
      if (form === 'callback') {
        const done = callback as (error: Error | null, result?: pg.QueryResult) => void;
        return query.call(this, { name, text: config, values }, (error: Error | null, result?: pg.QueryResult) => {
          if (!error || !isStalePrepared(error)) return done(error, result);
          forget();
          query.call(this, config, values, done);
        });
      }
      return query.call(this, { name, text: config, values }).catch((error: unknown) => {
        if (!isStalePrepared(error)) throw error;
        forget();
        return query.call(this, config, values);
      });
    }
  };
}

/** A COMMIT that PostgreSQL answered with ROLLBACK: a statement of the transaction had failed (its error was caught). */
export class RolledBackAtCommit extends Error {
  readonly code = '25P02';
  constructor() {
    super('the transaction was rolled back at COMMIT: one of its statements had failed');
  }
}

export function createDatabase(connectionString: string, options: DatabaseOptions = {}): Database {
  const pool = new pg.Pool({
    ...(options.autoPrepare === false
      ? {}
      : { Client: preparingClient({ names: new Map(), timesSeen: new Map(), given: 0, full: options.onAutoPrepareFull }) }),
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'charging-access',
    connectionTimeoutMillis: 10_000,
  });
  // An idle client losing its connection (database restart) must not crash the process;
  // the pool drops it and the next query opens a new one.
  pool.on('error', (error) => options.onError?.(error));
  const database: Database = {
    pool,
    query: (text, values) => pool.query(text, values),
    async transaction(work) {
      const { client, release } = await checkOut(pool);
      let failure: unknown;
      try {
        await client.query('BEGIN');
        transactionBegun(client, self);
        const result = await work(client);
        // PostgreSQL answers a COMMIT of a transaction in which a statement failed with ROLLBACK, not an error: a
        // work function that caught that statement's error would otherwise be taken for committed.
        const commit = await client.query('COMMIT');
        if (commit.command === 'ROLLBACK') throw new RolledBackAtCommit();
        transactionEnded(client, true);
        return result;
      } catch (error) {
        failure = error;
        if (!isDatabaseUnavailable(error)) await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        transactionEnded(client, false);
        release(isDatabaseUnavailable(failure));
      }
    },
    async withClient(work) {
      const { client, release } = await checkOut(pool);
      let failure: unknown;
      try {
        return await work(client);
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        release(isDatabaseUnavailable(failure));
      }
    },
    checkOut: () => checkOut(pool),
    async close() {
      await flushNotifications(pool);
      await pool.end();
    },
  };
  // What this database's transactions notify is sent through it, so that a failure is observed like any other.
  const self = options.onError ? observed(database, options.onError) : database;
  return self;
}

/** A failure of the database itself (a statement PostgreSQL refused, a lost or refused connection), not of the caller's own work. */
function isDatabaseError(error: unknown): boolean {
  return error instanceof pg.DatabaseError || error instanceof RolledBackAtCommit || isDatabaseUnavailable(error);
}

/** The database with its failures told to `onError` (without one, queries stay the pool's own: no extra promise each). */
function observed(database: Database, onError: (error: Error) => void): Database {
  const watch = <T>(work: Promise<T>): Promise<T> =>
    work.catch((error: unknown) => {
      if (isDatabaseError(error)) onError(error as Error);
      throw error;
    });
  return {
    pool: database.pool,
    query: (text, values) => watch(database.query(text, values)),
    transaction: (work) => watch(database.transaction(work)),
    withClient: (work) => watch(database.withClient(work)),
    checkOut: () => watch(database.checkOut()),
    close: () => database.close(),
  };
}

/**
 * Runs `work` in `q` when it is a transaction already, or in a transaction of its own when `q` is the database
 * itself: writes that must commit together (a change and its event) are atomic whichever the caller passed.
 */
export function atomically<T>(db: Database, q: Queryable, work: (tx: Queryable) => Promise<T>): Promise<T> {
  return q === db ? db.transaction(work) : work(q);
}

/**
 * `column = $n` for one value, `column = ANY($n)` for several, with the parameter to pass. PostgreSQL cannot know how
 * many elements an array parameter holds when it plans a statement generically, so it plans `= ANY($n)` anew on every
 * run (its custom plans look cheaper); the hot callers (a session's poll) ask for one value.
 */
export function oneOrAny(column: string, param: number, values: readonly unknown[]): { condition: string; value: unknown } {
  return values.length === 1 ? { condition: `${column} = $${param}`, value: values[0] } : { condition: `${column} = ANY($${param})`, value: values };
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * LISTENs on a channel with a dedicated connection, reconnecting after errors
 * (with a short pause); `onNotify` also runs after a reconnect, since
 * notifications may have been missed meanwhile. `ready` settles once the
 * first LISTEN is in place: what commits from then on is heard.
 */
export function listen(
  db: Database,
  channel: string,
  onNotify: (payload: string | undefined) => void,
  onError?: (error: Error) => void,
): { stop(): Promise<void>; ready: Promise<void> } {
  let stopped = false;
  let listening: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    listening = resolve;
  });
  let client: pg.PoolClient | undefined;
  let retry: NodeJS.Timeout | undefined;
  let connecting: Promise<void> | undefined;
  const connect = async (reconnect: boolean) => {
    try {
      client = await db.pool.connect();
      // Stopped while the connection was being made (a start-up that failed at once): it goes back to the pool, or
      // the pool's end would wait for it forever.
      if (stopped) {
        client.release();
        client = undefined;
        return;
      }
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload);
      });
      client.on('error', (error) => {
        onError?.(error);
        client?.release(true);
        client = undefined;
        if (!stopped) retry = setTimeout(connectAgain, 1_000);
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      listening();
      if (reconnect) onNotify(undefined);
    } catch (error) {
      onError?.(error as Error);
      client?.release(true);
      client = undefined;
      if (!stopped) retry = setTimeout(connectAgain, 1_000);
    }
  };
  const connectAgain = () => {
    connecting = connect(true);
  };
  connecting = connect(false);
  return {
    ready,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await connecting;
      if (client) {
        await client.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
        client.release();
        client = undefined;
      }
    },
  };
}
