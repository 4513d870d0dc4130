// The sandbox CPO network started and connected to the service over OCPI: the
// same steps whether it runs inside a service process (CPO_SANDBOX=true, the
// default) or as its own process (`charging-access sandbox cpo`) beside service
// instances started with CPO_SANDBOX=false. Its state is in PostgreSQL, so the
// connection made once (by either) is found again by its versions URL.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Ocpi } from './modules/ocpi/service.ts';
import type { Clock } from './platform/clock.ts';
import type { Config } from './platform/config.ts';
import type { Database } from './platform/db.ts';
import { listening } from './platform/lifecycle.ts';
import { type CpoSandbox, createCpoSandbox } from './sandbox/cpo/index.ts';

/**
 * Connections the sandboxes' work gets. Inside a service process the built-in sandboxes share a pool of this size of
 * their own (their work neither waits for the service's connections nor holds them); `charging-access sandbox cpo`
 * opens one of this size for the network (a CLI session's pool of 2 made the network the slowest stage under load).
 */
export const SANDBOX_POOL_SIZE = 10;

type Log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface SandboxNetworkDeps {
  db: Database;
  clock: Clock;
  config: Pick<Config, 'ocpi' | 'stationsDefaultLocations' | 'stationsSeed'>;
  /** The service's OCPI module: our side of the credentials handshake. */
  ocpi: Ocpi;
  /** The certificate the service presents (its self-signed one), which the network's calls to us must accept. */
  pinnedCertificatePem: string | undefined;
  log: Log;
}

/**
 * Starts the network on CPO_SANDBOX_PORT and, when no connection to its versions
 * URL exists yet, connects it (the CPO calls the service back, so the service
 * must be answering) and pulls its catalogue. On failure it closes what it started.
 */
export async function startSandboxNetwork(deps: SandboxNetworkDeps): Promise<CpoSandbox> {
  const { config, ocpi, log } = deps;
  const sandboxConfig = config.ocpi.cpoSandbox;
  const network = await createCpoSandbox({
    db: deps.db,
    clock: deps.clock,
    locations: config.stationsDefaultLocations,
    seed: config.stationsSeed,
    timeCompression: sandboxConfig.timeCompression,
    statusChangesPerSecond: sandboxConfig.statusChangesPerSecond,
    quirks: sandboxConfig.quirks,
    ocpiVersion: sandboxConfig.ocpiVersion,
    topology: sandboxConfig.topology,
    ...(sandboxConfig.parties > 0 ? { parties: sandboxConfig.parties } : {}),
    log,
  });
  try {
    const versionsUrl = await listening('the sandbox CPO network', 'CPO_SANDBOX_PORT', () => network.listen({ port: sandboxConfig.port }));
    const connected = (await ocpi.connections.list()).find((c) => c.status === 'connected' && c.versions_url === versionsUrl);
    if (!connected) {
      const started = performance.now();
      log('info', 'connecting the sandbox CPO network over OCPI', { versions_url: versionsUrl });
      const token = await network.issueTokenA(deps.pinnedCertificatePem ? { pinnedCertificatePem: deps.pinnedCertificatePem } : {});
      // The network with all of the generator's parties keeps one token store for them all: a token is pushed to it once.
      const tokenPush = sandboxConfig.parties > 0 ? 'each-party' : 'once';
      const connection = await ocpi.connections.connect({ versionsUrl, token, name: 'sandbox', tokenPush });
      const pulled = await ocpi.sync.syncConnection(connection, { full: true });
      log('info', 'sandbox CPO network connected; its catalogue pulled over OCPI', {
        connection: connection.name,
        ...pulled,
        ms: Math.round(performance.now() - started),
      });
    }
    network.startBackgroundWork();
    return network;
  } catch (error) {
    await network.close().catch(() => {});
    throw error;
  }
}

/** GET `url` once: its status, or the reason there was none. */
function probe(url: string, pinnedCertificatePem: string | undefined, timeoutMs: number): Promise<{ status: number } | { error: string }> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const onResponse = (res: import('node:http').IncomingMessage) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    };
    const options = { method: 'GET', timeout: timeoutMs, ...(pinnedCertificatePem ? { ca: [pinnedCertificatePem] } : {}) };
    const req = target.protocol === 'https:' ? httpsRequest(target, options, onResponse) : httpRequest(target, options, onResponse);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) => resolve({ error: error.message }));
    req.end();
  });
}

/** One try of a wait: what was waited for, or what is reported while waiting and the error if the wait gives up now. */
export type WaitTry<T> = { value: T } | { waiting: string; gaveUp: string };

/**
 * Tries `attempt` every 500 ms until it gives a value; logs its `waiting` (info) every `reportEveryMs`, and throws
 * its `gaveUp` once a try fails after `timeoutMs` (a wait given 0 ms tries once).
 */
export async function waitUntil<T>(attempt: () => Promise<WaitTry<T>>, options: { timeoutMs: number; reportEveryMs: number; log: Log }): Promise<T> {
  const started = Date.now();
  let reported = started;
  for (;;) {
    const tried = await attempt();
    if ('value' in tried) return tried.value;
    if (Date.now() - started >= options.timeoutMs) throw new Error(tried.gaveUp);
    if (Date.now() - reported >= options.reportEveryMs) {
      reported = Date.now();
      options.log('info', tried.waiting);
    }
    await sleep(500);
  }
}

/**
 * Waits until a service instance answers `<address>/readyz` with 200 (the network's handshake calls the service
 * back), reporting every `reportEveryMs`, and says which address answered. `address` is asked again at every try
 * (the service records its address when it starts: a new start may move it). `certificate` is the one to accept
 * on an https URL (undefined: the system's trust store). Throws after `timeoutMs`.
 */
export function waitForService(
  address: () => Promise<string>,
  options: { certificate: () => Promise<string | undefined>; timeoutMs: number; reportEveryMs?: number; log: Log },
): Promise<string> {
  const tryOnce = async (): Promise<WaitTry<string>> => {
    const publicBaseUrl = await address();
    const url = `${publicBaseUrl}/readyz`;
    const answer = await probe(url, await options.certificate(), 5_000);
    if ('status' in answer && answer.status === 200) return { value: publicBaseUrl };
    const why = 'status' in answer ? `status ${answer.status}` : answer.error;
    return {
      waiting: `waiting for a service instance at ${url} (${why})`,
      gaveUp: `no service instance answered ${url} within ${Math.round(options.timeoutMs / 1000)} s (last: ${why}); start one, or check PUBLIC_BASE_URL`,
    };
  };
  return waitUntil(tryOnce, { timeoutMs: options.timeoutMs, reportEveryMs: options.reportEveryMs ?? 10_000, log: options.log });
}
