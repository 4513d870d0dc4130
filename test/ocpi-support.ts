// An OCPI peer registered straight in the database (no handshake over HTTP):
// for tests that need a CPO's credentials token to call our OCPI interface.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as repo from '../src/modules/ocpi/repository.ts';
import type { Ocpi } from '../src/modules/ocpi/service.ts';
import type { Clock } from '../src/platform/clock.ts';
import type { Database } from '../src/platform/db.ts';

export interface PeerOptions {
  name: string;
  /** The CPO parties the connection holds (default DE/ABC). */
  parties?: { country_code: string; party_id: string }[];
  /** A hub instead: its credentials name this one HUB role and no CPO party (those come in its ClientInfo). */
  hub?: { country_code: string; party_id: string };
  versionsUrl?: string;
  endpoints?: repo.Endpoint[];
  rawTokens?: boolean;
}

/** Registers a connected CPO peer and returns the token it calls us with (unencoded). */
export async function registerPeer(ocpi: Ocpi, deps: { db: Database; clock: Clock }, options: PeerOptions): Promise<string> {
  const { name } = options;
  const invite = await ocpi.connections.invite({ name, ...(options.rawTokens ? { rawTokens: true } : {}) });
  const connection = await ocpi.connections.findByName(invite.name);
  assert.ok(connection);
  const incoming = randomBytes(16).toString('hex');
  await repo.storeCredentials(
    deps.db,
    connection.id,
    {
      incoming_token: incoming,
      outgoing_token: 'unused',
      versions_url: options.versionsUrl ?? 'http://127.0.0.1:9/versions',
      version: '2.2.1',
      endpoints: options.endpoints ?? [],
      roles: options.hub
        ? [{ role: 'HUB', ...options.hub, business_details: { name: `${name} hub` } }]
        : (options.parties ?? [{ country_code: 'DE', party_id: 'ABC' }]).map((p) => ({
            role: 'CPO',
            ...p,
            business_details: { name: `${name} operator` },
          })),
    },
    deps.clock.now(),
  );
  ocpi.connections.forgetCachedTokens();
  return incoming;
}

/** The Authorization header of an OCPI 2.2.1 call with `token` (Base64-encoded). */
export const ocpiAuthorization = (token: string) => ({ authorization: `Token ${Buffer.from(token, 'utf8').toString('base64')}` });
