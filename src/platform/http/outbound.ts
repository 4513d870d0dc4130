// Outbound HTTP(S) for every port that calls out (OCPI peers, webhook
// receivers): connections are kept alive and reused, and each trust setting
// has one TLS context built once. Passing `ca: [...rootCertificates, pinned]`
// on every request made Node build a new secure context (all ~140 root
// certificates parsed, ~10 ms of CPU) and a new connection for each call.
import { X509Certificate } from 'node:crypto';
import { type ClientRequest, Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createSecureContext, type PeerCertificate, rootCertificates } from 'node:tls';

/** Pool settings for every outbound agent. */
const POOL = {
  keepAlive: true,
  // Idle sockets are closed after this (a server's own Keep-Alive hint, when shorter, wins).
  timeout: 60_000,
  maxSockets: 64,
  maxFreeSockets: 32,
  // Reuse the most recently used socket: the least likely to have been closed by the server.
  scheduling: 'lifo' as const,
};

const plainAgent = new HttpAgent(POOL);
const publicTlsAgent = new HttpsAgent(POOL);
/** One agent per pinned certificate (by fingerprint); a handful at most (our own loopback service, the sandbox network). */
const pinnedAgents = new Map<string, HttpsAgent>();
/**
 * The agent of each PEM text seen, so that a call does not parse its certificate again (an X509Certificate per call
 * was 1.5% of the service's CPU at 100 concurrent sessions). Bounded: PEM texts come from configuration and peers'
 * records, but a text that varies (whitespace) must not grow this without end.
 */
const agentsByPem = new Map<string, HttpsAgent>();
const MAX_PEM_TEXTS = 256;

function pinnedAgent(pem: string): HttpsAgent {
  const known = agentsByPem.get(pem);
  if (known) return known;
  const agent = agentForCertificate(new X509Certificate(pem));
  if (agentsByPem.size >= MAX_PEM_TEXTS) agentsByPem.clear();
  agentsByPem.set(pem, agent);
  return agent;
}

function agentForCertificate(pinned: X509Certificate): HttpsAgent {
  const existing = pinnedAgents.get(pinned.fingerprint256);
  if (existing) return existing;
  const agent = new HttpsAgent({
    ...POOL,
    // The public roots and the pinned certificate, parsed once for every connection of this agent.
    secureContext: createSecureContext({ ca: [...rootCertificates, pinned.toString()] }),
    // Exactly this certificate, whatever the host name (a self-signed localhost certificate reached on 127.0.0.1).
    checkServerIdentity: (_host: string, cert: PeerCertificate) =>
      cert.fingerprint256 === pinned.fingerprint256 ? undefined : new Error('the peer presented another certificate'),
  });
  pinnedAgents.set(pinned.fingerprint256, agent);
  return agent;
}

/** The agent for a call to `url`: pooled and kept alive; with `pinnedCertificatePem`, only that certificate is accepted. */
export function outboundAgent(url: URL, pinnedCertificatePem?: string): HttpAgent | HttpsAgent {
  if (url.protocol !== 'https:') return plainAgent;
  return pinnedCertificatePem ? pinnedAgent(pinnedCertificatePem) : publicTlsAgent;
}

/**
 * A kept-alive socket reset as we reused it, before any answer: almost always
 * a server closing an idle connection just as we sent, so the request is sent
 * once more on a new connection whatever its method (Node's documented
 * pattern for `reusedSocket`). A server that took the request and then died
 * would see it twice: the agents honour a server's Keep-Alive hint, which
 * keeps that race rare, and what we send this way (OCPI calls, webhook
 * deliveries) is retried elsewhere already.
 */
export function isStaleConnection(request: ClientRequest, error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return request.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE');
}
