// The sandbox CPO network (CPO_SANDBOX), started within the service process.
import type { Ocpi } from '../modules/ocpi/service.ts';
import type { Database } from '../platform/db.ts';
import type { TlsMaterial } from '../platform/http/tls.ts';
import { startSandboxNetwork } from '../sandbox-network.ts';
import type { StartupContext } from './context.ts';

/** Starts the network and connects it to the service if need be; returns its versions URL. */
export async function startCpoSandbox(
  { config, log, clock, stops }: StartupContext,
  { db, ocpi, tls }: { db: Database; ocpi: Ocpi; tls: TlsMaterial | undefined },
): Promise<string> {
  // The sandbox CPO network: its own loopback port, connected to us by the OCPI credentials handshake
  // (the same path as `cpo connect`), so the default catalogue arrives over OCPI.
  const cpoLog = log.child({ component: 'cpo-sandbox' });
  const network = await startSandboxNetwork({
    db,
    clock,
    config,
    ocpi,
    pinnedCertificatePem: tls?.cert,
    log: (level, message, fields) => cpoLog[level](fields ?? {}, message),
  });
  stops.add('sandbox CPO network', () => network.close());
  return network.versionsUrl;
}
