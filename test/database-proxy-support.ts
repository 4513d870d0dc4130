// A TCP proxy in front of the test's PostgreSQL, for faults of real connections: a pool made on `url` reaches the
// database through it, and cut() makes the database unreachable for that pool (its connections are ended, new ones
// are closed as they arrive) until restore(). cut({ spareListeners: true }) leaves the connections that sent a LISTEN
// alone: notifications keep arriving while every query fails.
import { connect, createServer, type Socket } from 'node:net';

export interface DatabaseProxy {
  /** The test database's URL, through the proxy. */
  url: string;
  cut(options?: { spareListeners?: boolean }): void;
  restore(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  /** The client sent a LISTEN on this connection. */
  listens: boolean;
}

export async function startDatabaseProxy(databaseUrl: string): Promise<DatabaseProxy> {
  const target = new URL(databaseUrl);
  const pairs = new Set<Pair>();
  let cut = false;
  const end = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream.destroy();
  };
  const server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const pair: Pair = { client, upstream, listens: false };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      // A simple query message carries its text as is: 'Q', length, 'LISTEN "channel"'.
      if (!pair.listens && chunk.includes('LISTEN "')) pair.listens = true;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    for (const socket of [client, upstream]) {
      socket.on('error', () => end(pair));
      socket.on('close', () => end(pair));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.toString(),
    cut(options = {}) {
      cut = true;
      for (const pair of [...pairs]) if (!(options.spareListeners && pair.listens)) end(pair);
    },
    restore() {
      cut = false;
    },
    async close() {
      for (const pair of [...pairs]) end(pair);
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
