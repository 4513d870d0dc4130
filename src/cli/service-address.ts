// The address that `cpo` commands hand out (our OCPI versions URL): an explicit
// PUBLIC_BASE_URL (or HOST/PORT) given to the command wins; else the address the
// running service recorded at its last start; else the defaults, said on stderr.
import { findRecordedServiceAddress } from '../platform/service-address.ts';
import type { Session } from './session.ts';

export interface ServiceAddress {
  publicBaseUrl: string;
  from: 'PUBLIC_BASE_URL' | 'HOST/PORT' | 'recorded by the service' | 'default';
}

/** The address, without a word: given to the command, else recorded by the service, else the default. */
export async function resolveServiceAddress(session: Pick<Session, 'config' | 'db'>): Promise<ServiceAddress> {
  const { config } = session;
  if (config.publicBaseUrlFrom !== 'default') return { publicBaseUrl: config.publicBaseUrl, from: config.publicBaseUrlFrom };
  const recorded = await findRecordedServiceAddress(session.db);
  if (recorded) return { publicBaseUrl: recorded.publicBaseUrl, from: 'recorded by the service' };
  return { publicBaseUrl: config.publicBaseUrl, from: 'default' };
}

/** The address a `cpo` command hands out; a default (nothing recorded, nothing given) is said on stderr. */
export async function serviceAddress(session: Pick<Session, 'config' | 'db'>): Promise<ServiceAddress> {
  const resolved = await resolveServiceAddress(session);
  if (resolved.from !== 'default') return resolved;
  const { config } = session;
  process.stderr.write(
    `note: the service has not recorded its address in this database yet (it does at start) and PUBLIC_BASE_URL is not set: ` +
      `using the default ${config.publicBaseUrl}; set PUBLIC_BASE_URL to hand out another address\n`,
  );
  return { publicBaseUrl: config.publicBaseUrl, from: 'default' };
}
