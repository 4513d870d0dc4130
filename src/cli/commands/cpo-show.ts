// What `charging-access cpo list` and `cpo show NAME` say of a connection
// (never its tokens): status, negotiated OCPI version, how the credentials
// token travels each way (raw or Base64), whether it is a platform of one or
// more CPO parties or a hub, how our Token pushes are addressed to it, and its
// parties (behind a hub: each with the hub's ClientInfo status).
import { sendsRawToken } from '../../modules/ocpi/connections-context.ts';
import type { Connection, ConnectionParty, PeerRole } from '../../modules/ocpi/repository.ts';
import type { CommandLine } from '../command-line.ts';
import { print } from '../output.ts';
import { ocpiOf, type Session } from '../session.ts';

const code = (p: { country_code: string; party_id: string }) => `${p.country_code.toUpperCase()}*${p.party_id.toUpperCase()}`;

/**
 * What every `cpo` command says a connection is: its name, the party it stands for (its first CPO role; without one,
 * `otherwise`), its status, the OCPI version negotiated in its handshake and the versions URL.
 */
export function identityOf(c: Connection, otherwise: PeerRole | undefined) {
  const party = c.roles.find((r) => r.role === 'CPO') ?? otherwise;
  return {
    name: c.name,
    country_code: party?.country_code ?? null,
    party_id: party?.party_id ?? null,
    status: c.status,
    version: c.version,
    versions_url: c.versions_url,
  };
}

/** A connection as `cpo list` and `cpo show` give it (a hub's: the hub's party). */
export function connectionView(c: Connection, parties: readonly ConnectionParty[]) {
  const hub = c.roles.find((r) => r.role === 'HUB');
  return {
    ...identityOf(c, hub),
    /** 'hub' (credentials with the HUB role: its parties come from its ClientInfo) or 'platform' (one or more CPO parties). */
    topology: hub ? 'hub' : 'platform',
    /** How we present our token to it, and how it presents its token to us (null: not seen yet). */
    token_we_send: sendsRawToken(c) ? 'raw' : 'base64',
    token_it_sends: c.incoming_token_form,
    /** How a user's token is pushed: to each CPO party, once (to its first party), or as one Broadcast Push to a hub. */
    token_push: hub ? 'broadcast' : c.token_push,
    parties: parties.map((p) => ({
      country_code: p.country_code,
      party_id: p.party_id,
      role: p.role,
      source: p.source,
      hub_status: p.hub_status,
      hub_updated: p.hub_updated?.toISOString() ?? null,
    })),
  };
}

type View = ReturnType<typeof connectionView>;

function summary(v: View): string {
  const cpos = v.parties.filter((p) => p.role === 'CPO');
  const connected = cpos.filter((p) => p.hub_status === 'CONNECTED').length;
  const shape =
    v.topology === 'hub'
      ? `hub, ${cpos.length} CPO part${cpos.length === 1 ? 'y' : 'ies'} behind it (${connected} connected)`
      : `${cpos.length} CPO part${cpos.length === 1 ? 'y' : 'ies'}`;
  return `${shape}  token: we send ${v.token_we_send}, it sends ${v.token_it_sends ?? '-'}  token pushes: ${v.token_push}`;
}

const line = (v: View) =>
  `${v.name}  ${v.status}  ${v.country_code ?? '-'}*${v.party_id ?? '-'}  OCPI ${v.version ?? '-'}  ${v.versions_url ?? ''}  ${summary(v)}`;

export async function cpoList(session: Session, { json }: CommandLine): Promise<void> {
  const { connections } = ocpiOf(session);
  const list = await Promise.all((await connections.list()).map(async (c) => connectionView(c, await connections.parties(c))));
  print(json, list, list.length === 0 ? 'no CPO connections' : list.map(line).join('\n'));
}

export async function cpoShow(session: Session, { arg, json }: CommandLine): Promise<void> {
  const { connections } = ocpiOf(session);
  const connection = await connections.findByName(arg as string);
  if (!connection) throw new Error(`no CPO connection named ${arg}`);
  const view = {
    ...connectionView(connection, await connections.parties(connection)),
    endpoints: connection.endpoints,
    last_synced_at: connection.last_synced_at?.toISOString() ?? null,
  };
  const text = [
    line(view),
    `endpoints: ${view.endpoints.map((e) => `${e.identifier} (${e.role})`).join(', ') || '-'}`,
    `last synced: ${view.last_synced_at ?? 'never'}`,
    'parties:',
    ...view.parties.map(
      (p) => `  ${code(p)}  ${p.role}${p.source === 'hubclientinfo' ? `  behind the hub: ${p.hub_status} (since ${p.hub_updated})` : '  (credentials)'}`,
    ),
  ].join('\n');
  print(json, view, text);
}
