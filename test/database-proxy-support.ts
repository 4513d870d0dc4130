// A TCP proxy in front of the test's PostgreSQL, for faults of real connections: a pool made on `url` reaches the
// database through it.
//   cut()        the database is unreachable for that pool: its connections are ended, and new ones are closed as
//                they arrive, until restore(). cut({ spareListeners: true }) leaves the connections that sent a
//                LISTEN alone: notifications keep arriving while every query fails.
//   stallListens()  a LISTEN statement is held (not passed on, nor anything after it on its connection) until
//                restore(): the database never answers it meanwhile, while every other statement is answered.
import { connect, createServer, type Socket } from 'node:net';

export interface DatabaseProxy {
  /** The test database's URL, through the proxy. */
  url: string;
  /** Connections closed as they arrived while cut. */
  readonly refused: number;
  cut(options?: { spareListeners?: boolean }): void;
  stallListens(): void;
  restore(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  /** The client sent a LISTEN on this connection. */
  listens: boolean;
  /** What the client sent while its connection was stalled, passed on at restore(). */
  held: Buffer[] | undefined;
}

/** A simple query message carries its text as is: 'Q', its length, then 'LISTEN "channel"'. */
const isListen = (chunk: Buffer) => chunk.includes('LISTEN "');

export async function startDatabaseProxy(databaseUrl: string): Promise<DatabaseProxy> {
  const target = new URL(databaseUrl);
  const pairs = new Set<Pair>();
  const state = { cut: false, stallListens: false, refused: 0 };
  const end = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream.destroy();
  };
  const server = createServer((client) => {
    if (state.cut) {
      state.refused++;
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const pair: Pair = { client, upstream, listens: false, held: undefined };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (isListen(chunk)) {
        pair.listens = true;
        if (state.stallListens) pair.held ??= [];
      }
      if (pair.held) pair.held.push(chunk);
      else upstream.write(chunk);
    });
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
    get refused() {
      return state.refused;
    },
    cut(options = {}) {
      state.cut = true;
      for (const pair of [...pairs]) if (!(options.spareListeners && pair.listens)) end(pair);
    },
    stallListens() {
      state.stallListens = true;
    },
    restore() {
      state.cut = false;
      state.stallListens = false;
      for (const pair of pairs) {
        const held = pair.held;
        pair.held = undefined;
        for (const chunk of held ?? []) pair.upstream.write(chunk);
      }
    },
    async close() {
      for (const pair of [...pairs]) end(pair);
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
