// What the OCPI 2.1.1 tests share: a recording HTTP proxy put between the
// service and a 2.1.1 CPO (every request and answer that crosses it, headers
// and JSON bodies, as on the wire), and the 2.1.1 spec's field lists
// (scripts/ocpi-211-fields.ts) that every recorded 2.1.1 message is held to.
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export { problems211, SHAPES_211, type Shape211 } from '../scripts/ocpi-211-fields.ts';

export interface Exchange {
  method: string;
  path: string;
  requestHeaders: IncomingHttpHeaders;
  requestBody: unknown;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  responseBody: unknown;
}

const parse = (text: string): unknown => {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
};

/** A loopback proxy to `target()` (known later: a server's address once it listens) that records every exchange. */
export async function startRecordingProxy(target: () => string) {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const to = new URL(req.url ?? '/', target());
      const headers = { ...req.headers, host: to.host };
      const out = httpRequest(to, { method: req.method, headers }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          exchanges.push({
            method: req.method ?? 'GET',
            path: to.pathname,
            requestHeaders: req.headers,
            requestBody: parse(body.toString('utf8')),
            status: answer.statusCode ?? 0,
            responseHeaders: answer.headers,
            responseBody: parse(text),
          });
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(text);
        });
      });
      out.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type RecordingProxy = Awaited<ReturnType<typeof startRecordingProxy>>;

/** The OCPI data of a recorded envelope. */
export const dataOf = (body: unknown) => (body as { data?: unknown } | undefined)?.data;

export const ROUTING_HEADERS = ['ocpi-from-country-code', 'ocpi-from-party-id', 'ocpi-to-country-code', 'ocpi-to-party-id'] as const;
