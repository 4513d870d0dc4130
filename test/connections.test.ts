// Connection limits of the service's own listeners (src/platform/http/tls.ts),
// on real sockets: a connection that sends nothing, one that trickles its
// headers, one that finishes its TLS handshake and goes quiet, the keep-alive
// timeout announced to clients, and a shutdown that ends idle and silent
// connections at once. Both the HTTPS port (which also answers plain HTTP) and
// the plain server used behind a TLS-terminating proxy.
import assert from 'node:assert/strict';
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import selfsigned from 'selfsigned';
import { type ConnectionTimeouts, createDualProtocolServer, createPlainServer } from '../src/platform/http/tls.ts';

const timeouts: ConnectionTimeouts = { firstByteMs: 300, headersMs: 1_000, requestMs: 2_000, keepAliveMs: 1_500 };

const handler = (_req: unknown, res: import('node:http').ServerResponse) => {
  res.setHeader('content-type', 'text/plain');
  res.end('ok');
};

/** Resolves with how long the connection stayed open and what the server sent before closing it. */
function whenClosed(socket: Socket, opened: number): Promise<{ ms: number; received: string }> {
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  return new Promise((resolve) => socket.on('close', () => resolve({ ms: Date.now() - opened, received })));
}

async function listen(server: HttpServer | HttpsServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

for (const kind of ['https port (TLS and plain)', 'plain server behind a proxy'] as const) {
  describe(kind, () => {
    let server: HttpServer | HttpsServer;
    let port: number;

    before(async () => {
      if (kind === 'plain server behind a proxy') {
        server = createPlainServer(timeouts, handler);
      } else {
        const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'ec', curve: 'P-256' } as Parameters<
          typeof selfsigned.generate
        >[1]);
        server = createDualProtocolServer({ cert: pems.cert, key: pems.private }, handler, timeouts);
      }
      port = await listen(server);
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    test('a connection that sends nothing is closed after the first-byte timeout', async () => {
      const opened = Date.now();
      const socket = connect(port, '127.0.0.1');
      const { ms, received } = await whenClosed(socket, opened);
      assert.equal(received, '');
      assert.ok(ms >= 250 && ms < 1_000, `closed after ${ms} ms`);
    });

    test('headers trickled a byte at a time are cut off at the headers timeout with 408', async () => {
      const opened = Date.now();
      const socket = connect(port, '127.0.0.1');
      const closed = whenClosed(socket, opened);
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
      const trickle = setInterval(() => socket.write('X-Slow: 1\r\n'), 100);
      const { ms, received } = await closed;
      clearInterval(trickle);
      assert.match(received, /^HTTP\/1\.1 408 /);
      assert.ok(ms >= 900 && ms < 3_500, `closed after ${ms} ms`);
    });

    test('an answer announces the keep-alive timeout, and an idle kept-alive connection is closed after it', async () => {
      const opened = Date.now();
      const socket = connect(port, '127.0.0.1');
      const closed = whenClosed(socket, opened);
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      const { ms, received } = await closed;
      assert.match(received, /^HTTP\/1\.1 200 /);
      assert.match(received, /Keep-Alive: timeout=1\r\n/);
      assert.ok(ms >= 1_300 && ms < 4_000, `closed after ${ms} ms`);
    });

    test('closing idle connections (a shutdown) also ends the connections that have not sent anything yet', async () => {
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const opened = Date.now();
      const closed = whenClosed(socket, opened);
      server.closeIdleConnections();
      const { ms } = await closed;
      assert.ok(ms < 200, `closed after ${ms} ms`);
    });

    if (kind === 'https port (TLS and plain)') {
      test('a TLS connection quiet after its handshake is closed at the headers timeout', async () => {
        const opened = Date.now();
        const socket = tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false });
        let handshake = 0;
        socket.once('secureConnect', () => {
          handshake = Date.now() - opened;
        });
        const { ms } = await whenClosed(socket as unknown as Socket, opened);
        assert.ok(handshake > 0, 'the handshake completed');
        assert.ok(ms >= 900 && ms < 3_500, `closed after ${ms} ms`);
      });

      test('a TLS ClientHello that never completes is closed at the first-byte timeout (handshake timeout)', async () => {
        const opened = Date.now();
        const socket = connect(port, '127.0.0.1');
        const closed = whenClosed(socket, opened);
        socket.write(Buffer.from([0x16, 0x03, 0x01])); // the start of a TLS record, then nothing
        const { ms } = await closed;
        assert.ok(ms >= 250 && ms < 1_500, `closed after ${ms} ms`);
      });
    }
  });
}
