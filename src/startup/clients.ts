// The API clients: the service that authenticates them (with the operator
// token-signing key, generated on a first start), and the demo client that a
// first start creates with DEMO_CLIENT, whose token file the ready banner shows.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readyBanner } from '../banner.ts';
import { type ClientsService, createClientsService } from '../modules/clients/service.ts';
import { loadSigningKeys } from '../platform/auth/keys.ts';
import type { Database } from '../platform/db.ts';
import type { TlsMaterial } from '../platform/http/tls.ts';
import type { StartupContext } from './context.ts';

export async function startClients({ config, log, clock }: StartupContext, db: Database): Promise<ClientsService> {
  const keys = await loadSigningKeys(config.jwt, { create: true });
  if (keys.created) log.info({ file: config.jwt.privateKeyFile }, `generated the operator token-signing key (${config.jwt.algorithm})`);
  return createClientsService({
    db,
    clock,
    jwt: config.jwt,
    keys,
    cacheTtlMs: config.authCacheTtlMs,
    acceptUnregisteredTokens: config.jwt.jwksUrl !== undefined,
  });
}

/** The demo client's token from its file, or undefined when there is none. */
export async function readDemoToken(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** With DEMO_CLIENT, creates the demo client unless its token file has a token already. */
export async function ensureDemoClient({ config, log }: StartupContext, clients: ClientsService, demoTokenFile: string): Promise<void> {
  if (config.demoClient && !(await readDemoToken(demoTokenFile))) {
    const demo = await clients.createClient('demo');
    await writeFile(demoTokenFile, `${demo.token}\n`, { mode: 0o600 });
    log.info({ client_id: demo.clientId, file: demoTokenFile }, 'created the demo API client; its token is in the file');
  }
}

/** With the demo client's token at hand, the ready banner on stdout: where the service answers, and a curl line that works as printed. */
export async function printReadyBanner(
  { config }: StartupContext,
  { tls, demoTokenFile, paymentsSandbox }: { tls: TlsMaterial | undefined; demoTokenFile: string; paymentsSandbox: boolean },
): Promise<void> {
  const shown = (file: string) => (path.relative(process.cwd(), file).startsWith('..') ? file : path.relative(process.cwd(), file));
  if (config.demoClient && (await readDemoToken(demoTokenFile))) {
    process.stdout.write(
      readyBanner({
        trustProxy: config.trustProxy,
        publicBaseUrl: config.publicBaseUrl,
        host: config.host,
        port: config.port,
        caCertFile: tls && config.tls.generated ? shown(config.tls.certFile) : undefined,
        demoTokenFile: shown(demoTokenFile),
        paymentsSandbox,
        playground: config.mode !== 'production',
      }),
    );
  }
}
