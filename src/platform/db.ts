import pg from 'pg';

// Timestamps come back as Date; bigint counts (count(*)) as numbers: they stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

/** What a repository needs: a pool or a client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export interface Database extends Queryable {
  readonly pool: pg.Pool;
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function createDatabase(connectionString: string, options: { max?: number; applicationName?: string } = {}): Database {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'charging-access',
    connectionTimeoutMillis: 10_000,
  });
  // An idle client losing its connection (database restart) must not crash the process;
  // the pool drops it and the next query opens a new one.
  pool.on('error', () => {});
  return {
    pool,
    query: (text, values) => pool.query(text, values),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * LISTENs on a channel with a dedicated connection, reconnecting after errors
 * (with a short pause); `onNotify` also runs after a reconnect, since
 * notifications may have been missed meanwhile.
 */
export function listen(
  db: Database,
  channel: string,
  onNotify: (payload: string | undefined) => void,
  onError?: (error: Error) => void,
): { stop(): Promise<void> } {
  let stopped = false;
  let client: pg.PoolClient | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (reconnect: boolean) => {
    try {
      client = await db.pool.connect();
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload);
      });
      client.on('error', (error) => {
        onError?.(error);
        client?.release(true);
        client = undefined;
        if (!stopped) retry = setTimeout(() => void connect(true), 1_000);
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      if (reconnect) onNotify(undefined);
    } catch (error) {
      onError?.(error as Error);
      client?.release(true);
      client = undefined;
      if (!stopped) retry = setTimeout(() => void connect(true), 1_000);
    }
  };
  void connect(false);
  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      if (client) {
        await client.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
        client.release();
        client = undefined;
      }
    },
  };
}
