// OCPI 2.2.1 HubClientInfo module (mod_hub_client_info.asciidoc): the
// connection status of the parties behind a hub, which the hub pushes to the
// parties connected to it (we are a Receiver) and lists on its Sender
// interface. A configuration module: not routed. Written from the spec's tables.
import { type Static, Type } from 'typebox';
import { Role } from './credentials.ts';
import { CountryCode, DateTime, PartyId } from './types.ts';

/**
 * ConnectionStatus: CONNECTED (requests can be sent), OFFLINE (no requests can be sent; do not queue pushes),
 * PLANNED (no requests yet), SUSPENDED (no requests; the party will not connect anymore).
 */
export const CONNECTION_STATUSES = ['CONNECTED', 'OFFLINE', 'PLANNED', 'SUSPENDED'] as const;
export const ConnectionStatus = Type.Enum(CONNECTION_STATUSES);
export type ConnectionStatus = Static<typeof ConnectionStatus>;

export const ClientInfo = Type.Object({
  party_id: PartyId,
  country_code: CountryCode,
  role: Role,
  status: ConnectionStatus,
  last_updated: DateTime,
});
export type ClientInfo = Static<typeof ClientInfo>;
