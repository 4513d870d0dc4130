// `charging-access sandbox cpo`: the sandbox CPO network as its own process,
// beside service instances started with CPO_SANDBOX=false, on the same
// database. It waits for the service's database, then for an instance at the
// address the service recorded there when it started (PUBLIC_BASE_URL, HOST or
// PORT given to this command win, as for `cpo invite`): the OCPI handshake
// calls the service back; both waits share one budget. It connects the network
// if no connection to it exists yet, and serves it until SIGINT/SIGTERM.
// Stopping a service instance does not stop it.
import { readFile } from 'node:fs/promises';
import { systemClock } from '../platform/clock.ts';
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db.ts';
import { serviceEmbeddedPostgresUrl } from '../platform/embedded-postgres.ts';
import { startSandboxNetwork, type WaitTry, waitForService, waitUntil } from '../sandbox-network.ts';
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

/** A session on the database at `databaseUrl` (never the embedded one started for it). */
type OpenSession = (databaseUrl: string) => Promise<{ db: Database; close(): Promise<void> }>;
type ServiceDatabase = Awaited<ReturnType<OpenSession>>;

/**
 * The service's database, once it can be reached. The embedded one (no DATABASE_URL) is the service's to start
 * and stop: this process only joins it, at its URL, while a service runs it (started by us, it would be stopped
 * under the service when we stop; a service that stops meanwhile makes the connection fail, and we wait on).
 * DATABASE_URL: connected once it answers.
 */
function openServiceDatabase(config: Config, openSession: OpenSession, timeoutMs: number): Promise<ServiceDatabase> {
  const tryOnce = async (): Promise<WaitTry<ServiceDatabase>> => {
    let why: string;
    try {
      const databaseUrl = config.databaseUrl ?? (await serviceEmbeddedPostgresUrl(config.dataDir));
      if (databaseUrl) return { value: await openSession(databaseUrl) };
      why = `no service runs the embedded PostgreSQL under ${config.dataDir} yet`;
    } catch (error) {
      why = (error as Error).message;
    }
    return { waiting: `waiting for the service's database (${why})`, gaveUp: `the service's database cannot be reached (${why}); start the service` };
  };
  return waitUntil(tryOnce, { timeoutMs, reportEveryMs: REPORT_EVERY_MS, log: line });
}

export async function runSandboxCpo(deps: {
  config: Config;
  openSession: OpenSession;
  ocpiOf: (session: { config: Config; db: Database }) => import('../modules/ocpi/service.ts').Ocpi;
}): Promise<void> {
  const { config } = deps;
  const deadline = Date.now() + SERVICE_WAIT_MS;
  const session = await openServiceDatabase(config, deps.openSession, SERVICE_WAIT_MS);
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
      // What is left of the budget the database's wait started.
      timeoutMs: Math.max(0, deadline - Date.now()),
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
