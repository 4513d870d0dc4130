// `charging-access sandbox cpo`: the sandbox CPO network as its own process,
// beside service instances started with CPO_SANDBOX=false, on the same
// database. It waits for an instance at PUBLIC_BASE_URL (the OCPI handshake
// calls the service back), connects the network if no connection to it exists
// yet, and serves it until SIGINT/SIGTERM. Stopping a service instance does not
// stop it.
import { readFile } from 'node:fs/promises';
import { systemClock } from '../platform/clock.ts';
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db.ts';
import { startSandboxNetwork, waitForService } from '../sandbox-network.ts';

const SERVICE_WAIT_MS = 5 * 60_000;

type Level = 'info' | 'warn' | 'error';

function line(level: Level, message: string, fields?: Record<string, unknown>): void {
  const text = `sandbox CPO network: ${message}${fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : ''}\n`;
  (level === 'info' ? process.stdout : process.stderr).write(text);
}

/**
 * The certificate the service presents when it terminates TLS itself with its
 * generated one; behind a proxy (TRUST_PROXY) the proxy's certificate is checked
 * against the system's trust store (and NODE_EXTRA_CA_CERTS).
 */
async function serviceCertificate(config: Config): Promise<string | undefined> {
  if (config.trustProxy) return undefined;
  try {
    return await readFile(config.tls.certFile, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the service's TLS certificate ${config.tls.certFile} (DATA_DIR or TLS_CERT_FILE): ${(error as Error).message}`);
  }
}

export async function runSandboxCpo(deps: {
  config: Config;
  openSession: () => Promise<{ db: Database; close(): Promise<void> }>;
  ocpiOf: (session: { config: Config; db: Database }) => import('../modules/ocpi/service.ts').Ocpi;
}): Promise<void> {
  const { config } = deps;
  line('info', `waiting for a service instance at ${config.publicBaseUrl}/readyz`);
  await waitForService(config.publicBaseUrl, {
    // Read at each try: a first start of the service generates its certificate while we wait.
    certificate: () => serviceCertificate(config).catch(() => undefined),
    timeoutMs: SERVICE_WAIT_MS,
    log: line,
  });
  const pinnedCertificatePem = await serviceCertificate(config);
  const session = await deps.openSession();
  const ocpi = deps.ocpiOf({ config, db: session.db });
  try {
    const network = await startSandboxNetwork({ db: session.db, clock: systemClock, config, ocpi, pinnedCertificatePem, log: line });
    line('info', `serving ${network.versionsUrl} (Ctrl-C stops it)`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    line('info', 'stopping');
    await network.close();
  } finally {
    await ocpi.stop();
    await session.close();
  }
}
