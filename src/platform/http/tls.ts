// HTTPS serving: the certificate (generated for localhost on first start unless
// TLS_CERT_FILE/TLS_KEY_FILE are given), the TLS policy, and one listener that
// answers both TLS and plain HTTP on the same port so a plain request gets a
// readable 403 https_required instead of a TLS handshake failure.
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import path from 'node:path';
import selfsigned from 'selfsigned';

/** TLS 1.2+ with forward-secret AEAD suites only (Mozilla "intermediate"); TLS 1.3 suites are Node's defaults. */
export const TLS_POLICY = {
  minVersion: 'TLSv1.2' as const,
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
};

export interface TlsMaterial {
  cert: string;
  key: string;
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** Reads the configured certificate, generating a self-signed localhost one first when it is ours to make. */
export async function ensureCertificate(tls: { certFile: string; keyFile: string; generated: boolean }): Promise<TlsMaterial & { created: boolean }> {
  let created = false;
  if (tls.generated && !(await exists(tls.certFile))) {
    const notBeforeDate = new Date();
    const notAfterDate = new Date(notBeforeDate.getTime() + 825 * 86_400_000);
    const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate,
      notAfterDate,
      extensions: [
        // Self-signed and used as its own trust anchor (curl --cacert), so it is also a CA.
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    } as Parameters<typeof selfsigned.generate>[1]);
    await mkdir(path.dirname(tls.certFile), { recursive: true });
    await writeFile(tls.keyFile, pems.private, { mode: 0o600 });
    await writeFile(tls.certFile, pems.cert, { mode: 0o644 });
    created = true;
  }
  try {
    return { cert: await readFile(tls.certFile, 'utf8'), key: await readFile(tls.keyFile, 'utf8'), created };
  } catch (error) {
    const variable = tls.generated ? 'DATA_DIR' : 'TLS_CERT_FILE/TLS_KEY_FILE';
    throw new Error(`cannot read the TLS certificate or key (${variable}): ${(error as Error).message}`);
  }
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** How long a connection may take at each stage; see Config.connections. */
export interface ConnectionTimeouts {
  /** From accepting a connection to its first byte (a silent connection is closed). */
  firstByteMs: number;
  /** From the start of a request to the end of its headers. */
  headersMs: number;
  /** From the start of a request to the end of its body. */
  requestMs: number;
  /** An idle kept-alive connection is closed after this; longer than common client pools' idle time (60 s). */
  keepAliveMs: number;
}

/** Node's HTTP server options for those limits (the silent-connection check runs every second, not every 30 s). */
function httpServerOptions(timeouts: ConnectionTimeouts) {
  return {
    headersTimeout: timeouts.headersMs,
    requestTimeout: Math.max(timeouts.requestMs, timeouts.headersMs),
    keepAliveTimeout: timeouts.keepAliveMs,
    connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
  };
}

/**
 * Takes over `server`'s connections until their first byte: a connection
 * silent for `firstByteMs` is closed (Node's own checks start with a request),
 * then `route` gets the socket with its first byte still unread. Returns a
 * function that closes the connections still silent (shutdown).
 */
function routeByFirstByte(server: HttpServer | HttpsServer, firstByteMs: number, route: (socket: Socket, firstByte: number) => void): () => void {
  const silent = new Map<Socket, NodeJS.Timeout>();
  const dispatch = (socket: Socket) => {
    if (socket.destroyed) return;
    const first = socket.read(1) as Buffer | null;
    if (first === null) {
      socket.once('readable', () => dispatch(socket));
      return;
    }
    clearTimeout(silent.get(socket));
    silent.delete(socket);
    socket.unshift(first);
    route(socket, first[0] as number);
  };
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    socket.on('error', () => socket.destroy()); // a client resetting before its first byte
    const timer = setTimeout(() => socket.destroy(), firstByteMs);
    timer.unref();
    silent.set(socket, timer);
    socket.once('close', () => {
      clearTimeout(timer);
      silent.delete(socket);
    });
    dispatch(socket);
  });
  return () => {
    for (const [socket, timer] of silent) {
      clearTimeout(timer);
      socket.destroy();
    }
    silent.clear();
  };
}

/** Makes the server's closeIdleConnections/closeAllConnections also close `others` and the silent connections. */
function closeTogether(server: HttpServer | HttpsServer, others: HttpServer[], closeSilent: () => void): void {
  const closeIdle = server.closeIdleConnections.bind(server);
  const closeAll = server.closeAllConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const other of others) other.closeIdleConnections();
    closeSilent();
  };
  server.closeAllConnections = () => {
    closeAll();
    for (const other of others) other.closeAllConnections();
    closeSilent();
  };
}

/** A plain HTTP server (behind a TLS-terminating proxy) with the same connection limits. */
export function createPlainServer(timeouts: ConnectionTimeouts, handler: Handler): HttpServer {
  const server = createHttpServer(httpServerOptions(timeouts), handler);
  const httpListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  const closeSilent = routeByFirstByte(server, timeouts.firstByteMs, (socket) => {
    for (const listener of httpListeners) listener.call(server, socket);
  });
  closeTogether(server, [], closeSilent);
  return server;
}

/**
 * An HTTPS server whose port also understands plain HTTP: the first byte of a
 * connection tells a TLS ClientHello (0x16) from an HTTP request line. Plain
 * requests reach the same handler unencrypted; the app decides (403
 * https_required, or allowed on loopback in development). Both protocols get
 * the same connection limits; a connection silent for `firstByteMs` is closed.
 */
export function createDualProtocolServer(material: TlsMaterial, handler: Handler, timeouts: ConnectionTimeouts): HttpsServer {
  const server = createHttpsServer({ ...material, ...TLS_POLICY, ...httpServerOptions(timeouts), handshakeTimeout: timeouts.firstByteMs }, handler);
  const plain = createHttpServer(httpServerOptions(timeouts), handler);
  const tlsListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  const closeSilent = routeByFirstByte(server, timeouts.firstByteMs, (socket, firstByte) => {
    if (firstByte === 0x16) {
      for (const listener of tlsListeners) listener.call(server, socket);
    } else {
      plain.emit('connection', socket);
    }
  });
  // Plain connections live in the plain server's bookkeeping: close them with the https server's.
  closeTogether(server, [plain], closeSilent);
  // Node checks header and request timeouts from a timer that a server starts when it listens; the plain
  // server never listens itself (it gets its sockets from this one), so it follows this one's start and end.
  server.on('listening', () => plain.emit('listening'));
  server.on('close', () => plain.close());
  return server;
}
