// The parties behind a hub (mod_hub_client_info; we are a Receiver): the hub
// pushes each party's ClientInfo (PUT .../hubclientinfo/{country_code}/{party_id})
// and may read it back (GET); we also pull its list when it offers the Sender
// interface (sync.ts). Each party is stored as one the hub's connection speaks
// for (ocpi_connection_parties, source 'hubclientinfo') with its status: objects
// of a party the hub reports are accepted over the hub, and commands go to a
// party only while the hub says it is CONNECTED (commands.ts). A hub "SHALL
// report connected parties via the HubClientInfo module", not as roles.
// Only a hub's connection may push ClientInfo.
import { invalidParameters, OCPI_STATUS, OcpiError, type PartyRef } from '../../ocpi-protocol/transport.ts';
import { type ClientInfo, parseClientInfo } from '../../ocpi-protocol/validate.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { isHub } from './connections-context.ts';
import { checkMatches, ok, requireObject } from './receiver-context.ts';
import * as repo from './repository.ts';

export interface HubClientsDeps {
  db: Database;
  log?: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;
}

function requireHub(connection: repo.Connection): void {
  if (!isHub(connection)) throw invalidParameters('hubclientinfo: only a hub sends ClientInfo, and this connection is not a hub (no HUB role)');
}

/** Stores one ClientInfo of the hub's; true when the party was new to this connection. */
export async function storeClientInfo(deps: HubClientsDeps, db: Queryable, connection: repo.Connection, info: ClientInfo): Promise<boolean> {
  const outcome = await repo.upsertHubClient(db, connection.id, info);
  if (outcome === 'ignored') {
    deps.log?.('info', 'a hub reported a party that is already reached another way, or an older ClientInfo; kept what we had', {
      connection: connection.name,
      party: `${info.country_code}*${info.party_id}`,
      role: info.role,
    });
  }
  return outcome === 'created';
}

/** PUT: a hub pushes a party's ClientInfo. Answers 201 (a party new to us) or 200. */
async function putClientInfo(deps: HubClientsDeps, connection: repo.Connection, party: PartyRef, body: unknown): Promise<boolean> {
  requireHub(connection);
  const object = requireObject(body);
  checkMatches(object, 'country_code', party.country_code);
  checkMatches(object, 'party_id', party.party_id);
  const info = ok(parseClientInfo(object), 'ClientInfo');
  return storeClientInfo(deps, deps.db, connection, info);
}

/** GET: the ClientInfo of a party as we hold it from this hub (404 when the hub never reported it). */
async function getClientInfo(deps: HubClientsDeps, connection: repo.Connection, party: PartyRef): Promise<ClientInfo> {
  requireHub(connection);
  const [info] = await repo.findHubClient(deps.db, connection.id, party.country_code, party.party_id);
  if (!info) throw new OcpiError(404, OCPI_STATUS.clientError, `No ClientInfo of ${party.country_code.toUpperCase()}*${party.party_id.toUpperCase()}`);
  return info as ClientInfo;
}

export function createHubClients(deps: HubClientsDeps) {
  return {
    put: (connection: repo.Connection, party: PartyRef, body: unknown) => putClientInfo(deps, connection, party, body),
    get: (connection: repo.Connection, party: PartyRef) => getClientInfo(deps, connection, party),
  };
}

export type HubClients = ReturnType<typeof createHubClients>;
