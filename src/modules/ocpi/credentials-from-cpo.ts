// What a CPO sends to our credentials endpoint: it registers (POST) with the
// TOKEN_A that `cpo invite` issued, updates its credentials (PUT) and
// unregisters (DELETE). Registering and updating are the same exchange: the
// peer's versions are read with its token, and our credentials answered with a
// new TOKEN_C. A registration also queues the first pull of the CPO's data.
import { randomUUID } from 'node:crypto';
import { type OcpiPeerAuth, OcpiTransportError } from '../../ocpi-protocol/client.ts';
import { invalidParameters, OCPI_STATUS, OcpiError, ocpiLayerError } from '../../ocpi-protocol/transport.ts';
import { OCPI_2_1_1 } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import {
  type ConnectionsContext,
  checkRoles,
  nameFromRoles,
  newCredentialsToken,
  observer,
  ourCredentialsIn,
  parseCredentialsIn,
  uniqueName,
} from './connections-context.ts';
import { queueFirstPull } from './first-pull.ts';
import { ConnectionError, describe, fetchPeerVersion, fetchPeerVersionEitherForm, OCPI_VERSION, type PeerVersion } from './peer-versions.ts';
import * as repo from './repository.ts';

/** `cpo invite`: a TOKEN_A for a CPO that will register with us. */
export async function invite(
  ctx: ConnectionsContext,
  options: { name?: string; rawTokens?: boolean; tokenPush?: repo.TokenPush } = {},
): Promise<{ token: string; versions_url: string; name: string }> {
  const token = newCredentialsToken();
  const name = await uniqueName(ctx, options.name ?? `invited-${randomUUID().slice(0, 8)}`);
  await repo.insertConnection(
    ctx.db,
    {
      id: randomUUID(),
      name,
      status: 'invited',
      incoming_token: token,
      incoming_token_kind: 'A',
      raw_tokens: options.rawTokens ?? false,
      expected_party: null,
      ...(options.tokenPush ? { token_push: options.tokenPush } : {}),
    },
    ctx.clock.now(),
  );
  return { token, versions_url: ctx.versionsUrl, name };
}

/** How a credentials request came: whether its token was unencoded, and the version whose credentials endpoint it called (default 2.2.1). */
export interface CredentialsCall {
  rawTokenUsed: boolean;
  version?: string;
}

/** POST credentials: a CPO holding our TOKEN_A registers. Answers our credentials with a new TOKEN_C. */
export async function register(ctx: ConnectionsContext, connection: repo.Connection, body: unknown, options: CredentialsCall) {
  if (connection.incoming_token_kind !== 'A') throw new OcpiError(405, OCPI_STATUS.clientError, 'Already registered; use PUT to update the credentials');
  return exchange(ctx, connection, body, options);
}

/** PUT credentials: a registered CPO sends new credentials (new token, moved endpoints). */
export async function update(ctx: ConnectionsContext, connection: repo.Connection, body: unknown, options: CredentialsCall) {
  if (connection.incoming_token_kind !== 'C') throw new OcpiError(405, OCPI_STATUS.clientError, 'Not registered yet; use POST to register');
  return exchange(ctx, connection, body, options);
}

/** DELETE credentials: the CPO unregisters; both sides stop talking. */
export async function unregister(ctx: ConnectionsContext, connection: repo.Connection): Promise<void> {
  if (connection.incoming_token_kind !== 'C') throw new OcpiError(405, OCPI_STATUS.clientError, 'Not registered');
  await repo.markDisconnected(ctx.db, connection.id, ctx.clock.now());
  ctx.cache.clear();
}

async function exchange(ctx: ConnectionsContext, connection: repo.Connection, body: unknown, call: CredentialsCall) {
  const { db, clock } = ctx;
  // The peer chose the version by calling its credentials endpoint: its credentials are in that version's shape, ours too.
  const version = call.version ?? OCPI_VERSION;
  const credentials = parseCredentialsIn(version, body);
  if (!credentials.ok) throw invalidParameters(`credentials: ${describe(credentials.errors)}`);
  const roles = credentials.value.roles as repo.PeerRole[];
  checkRoles(roles, connection.expected_party);
  // A peer that sent its TOKEN_A unencoded is an OCPI 2.1.1/2.2 implementation, as is every 2.1.1 peer: we answer it in
  // kind, unless its versions endpoint refuses that form and takes the other (fetchPeerVersionEitherForm).
  const auth: OcpiPeerAuth = { token: credentials.value.token, rawToken: connection.raw_tokens || call.rawTokenUsed, ...observer(ctx, connection.name) };
  let peer: PeerVersion;
  try {
    peer =
      version === OCPI_2_1_1
        ? await fetchPeerVersion({ ...auth, rawToken: true }, credentials.value.url, ctx.timeoutMs, version)
        : await fetchPeerVersionEitherForm(auth, credentials.value.url, ctx.timeoutMs, version);
  } catch (error) {
    if (error instanceof OcpiError) throw error;
    const reason = error instanceof OcpiTransportError || error instanceof ConnectionError ? error.message : 'unexpected error';
    throw ocpiLayerError(OCPI_STATUS.unableToUseClientApi, `cannot use your API: ${reason}`);
  }
  const rawTokens = version === OCPI_2_1_1 || auth.rawToken === true;
  const tokenC = newCredentialsToken();
  const name = connection.name.startsWith('invited-') ? await uniqueName(ctx, nameFromRoles(roles), connection.id) : connection.name;
  await db
    .transaction(async (tx) => {
      const locked = await repo.findConnection(tx, connection.id, { forUpdate: true });
      if (!locked || locked.status === 'disconnected' || locked.incoming_token_kind !== connection.incoming_token_kind) {
        throw new OcpiError(405, OCPI_STATUS.clientError, 'The registration changed meanwhile; start again');
      }
      if (rawTokens !== connection.raw_tokens) await repo.setRawTokens(tx, connection.id, rawTokens);
      await repo.storeCredentials(
        tx,
        connection.id,
        {
          name,
          incoming_token: tokenC,
          outgoing_token: credentials.value.token,
          versions_url: credentials.value.url,
          version: peer.version,
          endpoints: peer.endpoints,
          roles,
        },
        clock.now(),
      );
      // A CPO that registers: its data is pulled right after the handshake, in the background (first-pull.ts).
      if (connection.incoming_token_kind === 'A') await queueFirstPull(tx, connection.id, clock.now());
    })
    .catch((error: unknown) => {
      if (error instanceof repo.PartyTakenError) throw ocpiLayerError(OCPI_STATUS.clientError, `roles: ${error.message}`);
      throw error;
    });
  ctx.cache.clear();
  await ctx.onRoles?.(roles);
  return ourCredentialsIn(ctx, tokenC, version);
}
