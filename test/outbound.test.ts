// Outbound HTTPS (src/platform/http/outbound.ts) as the OCPI client and the
// Stripe sandbox's webhook sender use it: calls to a peer with a pinned
// self-signed certificate share kept-alive connections (one TLS handshake, not
// one per call: each used to cost a new secure context, ~10 ms of CPU), a
// different certificate is refused, and a kept-alive connection that the peer
// closes as it is reused is replaced without failing the call.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ocpiRequest } from '../src/ocpi-protocol/client.ts';
import { outboundAgent } from '../src/platform/http/outbound.ts';
import { ensureCertificate, type TlsMaterial } from '../src/platform/http/tls.ts';
import { postWebhook } from '../src/sandbox/stripe/webhooks.ts';

async function certificate(dir: string, name: string): Promise<TlsMaterial> {
  return ensureCertificate({ certFile: path.join(dir, `${name}.pem`), keyFile: path.join(dir, `${name}.key`), generated: true });
}

describe('outbound HTTPS to a peer with a pinned certificate', () => {
  let dir: string;
  let material: TlsMaterial;
  let other: TlsMaterial;
  let server: Server;
  let url: string;
  let handshakes = 0;
  let requests = 0;
  /** When set, the server drops the connection of the next request that arrives on a kept-alive connection, unanswered. */
  let dropNextReuse = false;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'outbound-'));
    material = await certificate(dir, 'peer');
    other = await certificate(dir, 'other');
    const served = new WeakMap<Socket, number>();
    server = createServer({ ...material, keepAliveTimeout: 72_000 }, (req, res) => {
      const socket = req.socket;
      const before = served.get(socket) ?? 0;
      served.set(socket, before + 1);
      if (dropNextReuse && before > 0) {
        dropNextReuse = false;
        socket.destroy();
        return;
      }
      requests++;
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"status_code":1000,"timestamp":"2026-11-24T00:00:00Z"}'));
    });
    server.on('secureConnection', () => handshakes++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('50 OCPI calls and 50 webhook deliveries, one after another, share one TLS connection', async () => {
    const start = handshakes;
    for (let i = 0; i < 50; i++) {
      const reply = await ocpiRequest({ token: 't', pinnedCertificatePem: material.cert }, { method: 'GET', url: `${url}/ocpi/versions`, retries: 0 });
      assert.equal(reply.status, 200);
      const delivery = await postWebhook({ url: `${url}/webhooks/stripe`, pinnedCertificatePem: material.cert }, '{}', 't=1,v1=x');
      assert.deepEqual(delivery, { status: 200, error: null });
    }
    assert.equal(handshakes - start, 1, `${handshakes - start} TLS handshakes for 100 calls`);
  });

  it('one agent per certificate, whichever text of its PEM a call passes; another certificate has its own', () => {
    const target = new URL(url);
    const agent = outboundAgent(target, material.cert);
    assert.equal(outboundAgent(target, material.cert), agent, 'the same text');
    assert.equal(outboundAgent(target, material.cert.replaceAll('\n', '\r\n')), agent, 'the same certificate in another text');
    assert.notEqual(outboundAgent(target, other.cert), agent);
    assert.throws(() => outboundAgent(target, 'not a certificate'));
  });

  it('a peer presenting another certificate than the pinned one is refused', async () => {
    await assert.rejects(
      ocpiRequest({ token: 't', pinnedCertificatePem: other.cert }, { method: 'GET', url: `${url}/ocpi/versions`, retries: 0 }),
      /another certificate|self-signed|certificate/,
    );
    const delivery = await postWebhook({ url: `${url}/webhooks/stripe`, pinnedCertificatePem: other.cert }, '{}', 't=1,v1=x');
    assert.equal(delivery.status, null);
    assert.match(String(delivery.error), /certificate/);
  });

  it('a kept-alive connection the peer closes as it is reused: the call goes through on a new connection', async () => {
    const auth = { token: 't', pinnedCertificatePem: material.cert };
    await ocpiRequest(auth, { method: 'GET', url: `${url}/ocpi/versions`, retries: 0 });
    const served = requests;
    dropNextReuse = true;
    // POST: no retries of its own; only the stale connection is replaced.
    const reply = await ocpiRequest(auth, { method: 'POST', url: `${url}/ocpi/2.2.1/commands/START_SESSION`, body: {}, retries: 0 });
    assert.equal(reply.status, 200);
    assert.equal(requests - served, 1, 'answered once');
    assert.equal(dropNextReuse, false, 'the peer did drop the reused connection');

    await postWebhook({ url: `${url}/webhooks/stripe`, pinnedCertificatePem: material.cert }, '{}', 't=1,v1=x');
    dropNextReuse = true;
    assert.deepEqual(await postWebhook({ url: `${url}/webhooks/stripe`, pinnedCertificatePem: material.cert }, '{}', 't=1,v1=x'), { status: 200, error: null });
  });
});
