// What we send to a CPO's credentials endpoint, on the operator's command:
// `cpo connect` registers with a CPO (POST, with the TOKEN_A it gave us),
// `cpo rotate` sends it new credentials (PUT), `cpo disconnect` unregisters
// (DELETE, best effort).
import { randomUUID } from 'node:crypto';
import { type OcpiPeerAuth, ocpiData } from '../../ocpi-protocol/client.ts';
import { OCPI_2_1_1 } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import {
  type ConnectionsContext,
  checkRoles,
  nameFromRoles,
  newCredentialsToken,
  observer,
  ourCredentialsIn,
  parseCredentialsIn,
  peerAuth,
  uniqueName,
} from './connections-context.ts';
import { ConnectionError, describe, endpointOf, fetchPeerVersionEitherForm, OCPI_VERSION } from './peer-versions.ts';
import * as repo from './repository.ts';

/**
 * `cpo connect`: we register with a CPO that gave us its versions URL and a
 * TOKEN_A. Our TOKEN_B is stored before the POST (the CPO fetches our
 * endpoints with it during the POST); its TOKEN_C is what we use afterwards.
 */
export async function connect(
  ctx: ConnectionsContext,
  options: { versionsUrl: string; token: string; party?: string; name?: string; rawTokens?: boolean; tokenPush?: repo.TokenPush },
): Promise<repo.Connection> {
  const { db, clock } = ctx;
  if (options.party && !/^[A-Za-z]{2}\*[A-Za-z0-9]{3}$/.test(options.party)) throw new ConnectionError('--party must look like DE*ABC');
  // The connection is named after the handshake: until then its calls count under the name asked for, else the peer's host.
  const auth: OcpiPeerAuth = {
    token: options.token,
    rawToken: options.rawTokens ?? false,
    ...observer(ctx, options.name ?? new URL(options.versionsUrl).host),
  };
  const peer = await fetchPeerVersionEitherForm(auth, options.versionsUrl, ctx.timeoutMs);
  // OCPI 2.1.1 sends tokens unencoded: a 2.1.1 peer is a raw-token connection.
  const rawTokens = auth.rawToken === true || peer.version === OCPI_2_1_1;
  const credentialsUrl = endpointOf(peer, 'credentials', 'RECEIVER') ?? endpointOf(peer, 'credentials', 'SENDER');
  if (!credentialsUrl) throw new ConnectionError('the peer lists no credentials endpoint');
  if (!peer.endpoints.some((e) => e.identifier === 'locations')) {
    throw new ConnectionError('the peer lists no locations endpoint; a CPO without locations is of no use to us');
  }
  const tokenB = newCredentialsToken();
  const id = randomUUID();
  await repo.insertConnection(
    db,
    {
      id,
      name: await uniqueName(ctx, `connecting-${id.slice(0, 8)}`),
      status: 'invited',
      incoming_token: tokenB,
      incoming_token_kind: 'A',
      raw_tokens: rawTokens,
      expected_party: options.party?.toUpperCase() ?? null,
      versions_url: options.versionsUrl,
      ...(options.tokenPush ? { token_push: options.tokenPush } : {}),
    },
    clock.now(),
  );
  try {
    const { data } = await ocpiData<unknown>(
      { ...auth, rawToken: rawTokens },
      {
        method: 'POST',
        url: credentialsUrl,
        module: 'credentials',
        body: ourCredentialsIn(ctx, tokenB, peer.version),
        timeoutMs: ctx.timeoutMs * 3,
      },
    );
    const credentials = parseCredentialsIn(peer.version, data);
    if (!credentials.ok) throw new ConnectionError(`the peer answered credentials that are not valid OCPI: ${describe(credentials.errors)}`);
    const roles = credentials.value.roles as repo.PeerRole[];
    checkRoles(roles, options.party ?? null);
    // The peer may have moved its versions (its credentials url); our endpoints are those of the version we chose.
    const name = await uniqueName(ctx, options.name ?? nameFromRoles(roles), id);
    await db.transaction(async (tx) => {
      await repo.storeCredentials(
        tx,
        id,
        {
          name,
          incoming_token: tokenB,
          outgoing_token: credentials.value.token,
          versions_url: credentials.value.url,
          version: peer.version,
          endpoints: peer.endpoints,
          roles,
        },
        clock.now(),
        // The operator connects this CPO: its parties move here from an older connection.
        { takeOver: true },
      );
    });
    ctx.cache.clear();
    await ctx.onRoles?.(roles);
    return (await repo.findConnection(db, id)) as repo.Connection;
  } catch (error) {
    await repo.markDisconnected(db, id, clock.now());
    ctx.cache.clear();
    throw error;
  }
}

/** `cpo disconnect NAME`: unregister at the CPO (best effort) and stop using the connection. */
export async function disconnect(ctx: ConnectionsContext, name: string): Promise<{ peerInformed: boolean; error?: string }> {
  const { db, clock } = ctx;
  const connection = await repo.findConnectionByName(db, name);
  if (!connection || connection.status === 'disconnected') throw new ConnectionError(`no connection named ${name}`);
  let peerInformed = false;
  let error: string | undefined;
  const url = endpointOf(connection, 'credentials', 'RECEIVER') ?? endpointOf(connection, 'credentials', 'SENDER');
  if (connection.status === 'connected' && url && connection.outgoing_token) {
    try {
      await ocpiData(peerAuth(ctx, connection), { method: 'DELETE', url, module: 'credentials', timeoutMs: ctx.timeoutMs, retries: 1 });
      peerInformed = true;
    } catch (e) {
      error = (e as Error).message;
    }
  }
  await repo.markDisconnected(db, connection.id, clock.now());
  ctx.cache.clear();
  return error === undefined ? { peerInformed } : { peerInformed, error };
}

/** Rotates both tokens of a connection (PUT of new credentials to the CPO). */
export async function rotate(ctx: ConnectionsContext, name: string): Promise<void> {
  const { db, clock } = ctx;
  const connection = await repo.findConnectionByName(db, name);
  if (connection?.status !== 'connected') throw new ConnectionError(`no connected connection named ${name}`);
  const url = endpointOf(connection, 'credentials', 'RECEIVER') ?? endpointOf(connection, 'credentials', 'SENDER');
  if (!url) throw new ConnectionError('the peer lists no credentials endpoint');
  const tokenB = newCredentialsToken();
  // Both tokens work while the PUT is in flight: the peer checks the new one by fetching our versions with it.
  await repo.setPendingToken(db, connection.id, tokenB);
  ctx.cache.clear();
  let data: unknown;
  try {
    ({ data } = await ocpiData<unknown>(peerAuth(ctx, connection), {
      method: 'PUT',
      url,
      module: 'credentials',
      body: ourCredentialsIn(ctx, tokenB, connection.version),
      timeoutMs: ctx.timeoutMs * 3,
      retries: 0,
    }));
  } catch (error) {
    await repo.setPendingToken(db, connection.id, null);
    ctx.cache.clear();
    throw error;
  }
  const credentials = parseCredentialsIn(connection.version, data);
  if (!credentials.ok) throw new ConnectionError(`the peer answered credentials that are not valid OCPI: ${describe(credentials.errors)}`);
  await db.transaction((tx) =>
    repo.storeCredentials(
      tx,
      connection.id,
      {
        incoming_token: tokenB,
        outgoing_token: credentials.value.token,
        versions_url: credentials.value.url,
        version: connection.version ?? OCPI_VERSION,
        endpoints: connection.endpoints,
        roles: credentials.value.roles as repo.PeerRole[],
      },
      clock.now(),
    ),
  );
  ctx.cache.clear();
}
