// `charging-access sandbox cpo`: the sandbox CPO network as its own process,
// beside service instances started with CPO_SANDBOX=false, on the same
// database. It waits for the service's database, then for an instance at the
// address the service recorded there when it started (PUBLIC_BASE_URL, HOST or
// PORT given to this command win, as for `cpo invite`): the OCPI handshake
// calls the service back. It connects the network if no connection to it
// exists yet, and serves it until SIGINT/SIGTERM. Stopping a service instance
// does not stop it.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../platform/clock.ts';
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db.ts';
import { embeddedPostgresOwner } from '../platform/embedded-postgres.ts';
import { startSandboxNetwork, waitForService } from '../sandbox-network.ts';
import { resolveServiceAddress } from './service-address.ts';

const SERVICE_WAIT_MS = 5 * 60_000;
const REPORT_EVERY_MS = 10_000;

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

type OpenSession = () => Promise<{ db: Database; close(): Promise<void> }>;

/**
 * The service's database, once it can be reached. The embedded one (no DATABASE_URL) is the service's to start
 * and stop: this process only joins it while a service runs it (started by us, it would be stopped under the
 * service when we stop). DATABASE_URL: connected once it answers.
 */
async function openServiceDatabase(config: Config, openSession: OpenSession): Promise<{ db: Database; close(): Promise<void> }> {
  const started = Date.now();
  let reported = started;
  for (;;) {
    let why: string;
    if (!config.databaseUrl && (await embeddedPostgresOwner(config.dataDir)) !== 'service') {
      why = `no service runs the embedded PostgreSQL under ${config.dataDir} yet`;
    } else {
      try {
        return await openSession();
      } catch (error) {
        why = (error as Error).message;
      }
    }
    if (Date.now() - started >= SERVICE_WAIT_MS) throw new Error(`the service's database cannot be reached (${why}); start the service`);
    if (Date.now() - reported >= REPORT_EVERY_MS) {
      reported = Date.now();
      line('info', `waiting for the service's database (${why})`);
    }
    await sleep(500);
  }
}

export async function runSandboxCpo(deps: {
  config: Config;
  openSession: OpenSession;
  ocpiOf: (session: { config: Config; db: Database }) => import('../modules/ocpi/service.ts').Ocpi;
}): Promise<void> {
  const { config } = deps;
  const session = await openServiceDatabase(config, deps.openSession);
  try {
    let waitingAt: string | undefined;
    const address = async () => {
      const { publicBaseUrl, from } = await resolveServiceAddress({ config, db: session.db });
      if (publicBaseUrl !== waitingAt) line('info', `waiting for a service instance at ${publicBaseUrl}/readyz (${from})`);
      waitingAt = publicBaseUrl;
      return publicBaseUrl;
    };
    const publicBaseUrl = await waitForService(address, {
      // Read at each try: a first start of the service generates its certificate while we wait.
      certificate: () => serviceCertificate(config).catch(() => undefined),
      timeoutMs: SERVICE_WAIT_MS,
      reportEveryMs: REPORT_EVERY_MS,
      log: line,
    });
    const pinnedCertificatePem = await serviceCertificate(config);
    // Our side of the handshake hands the CPO our versions URL: at the address the service answered on.
    const ocpi = deps.ocpiOf({ config: { ...config, publicBaseUrl }, db: session.db });
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
    }
  } finally {
    await session.close();
  }
}
