// HTTPS serving: the certificate (generated for localhost on first start unless
// TLS_CERT_FILE/TLS_KEY_FILE are given), the TLS policy, and one listener that
// answers both TLS and plain HTTP on the same port so a plain request gets a
// readable 403 https_required instead of a TLS handshake failure.
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
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

/**
 * An HTTPS server whose port also understands plain HTTP: the first byte of a
 * connection tells a TLS ClientHello (0x16) from an HTTP request line. Plain
 * requests reach the same handler unencrypted; the app decides (403
 * https_required, or allowed on loopback in development).
 */
export function createDualProtocolServer(material: TlsMaterial, handler: Handler): HttpsServer {
  const server = createHttpsServer({ ...material, ...TLS_POLICY }, handler);
  const plain = createHttpServer(handler);
  const tlsListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const dispatch = (socket: Socket) => {
    const first = socket.read(1) as Buffer | null;
    if (first === null) {
      socket.once('readable', () => dispatch(socket));
      return;
    }
    socket.unshift(first);
    if (first[0] === 0x16) {
      for (const listener of tlsListeners) listener.call(server, socket);
    } else {
      plain.emit('connection', socket);
    }
  };
  server.on('connection', (socket: Socket) => {
    socket.on('error', () => socket.destroy()); // a client resetting before its first byte
    dispatch(socket);
  });
  // Plain connections live in the plain server's bookkeeping: close them with the https server's.
  const closeIdle = server.closeIdleConnections.bind(server);
  const closeAll = server.closeAllConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    plain.closeIdleConnections();
  };
  server.closeAllConnections = () => {
    closeAll();
    plain.closeAllConnections();
  };
  return server;
}
