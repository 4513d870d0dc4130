// Commands we send to CPOs (mod_commands, we are the Sender): START_SESSION
// and STOP_SESSION. Each command is stored before it is sent; its response_url
// names the command and carries a secret only that CPO learns, so the
// asynchronous result can be matched and cannot be forged by another peer.
// Outcomes are values: accepted, rejected (with the CPO's reason), or
// unreachable (no answer; the CPO may still have acted on it).
import { randomBytes, randomUUID } from 'node:crypto';
import { OcpiTransportError, ocpiRequest } from '../../ocpi-protocol/client.ts';
import { commandResponseFrom211, OCPI_2_1_1 } from '../../ocpi-protocol/v2_1_1/from-peer.ts';
import { startSessionTo211, stopSessionTo211 } from '../../ocpi-protocol/v2_1_1/to-peer.ts';
import { OCPI_2_2, startSessionTo22 } from '../../ocpi-protocol/v2_2/adapter.ts';
import { parseCommandResponse } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { type Connections, endpointOf } from './connections.ts';
import { versionOf } from './peer-versions.ts';
import * as repo from './repository.ts';
import type { OcpiToken } from './tokens.ts';

export type CommandOutcome =
  | { outcome: 'accepted'; commandId: string; timeoutSeconds: number }
  | { outcome: 'rejected'; commandId: string; result: string; message?: string }
  | { outcome: 'unreachable'; commandId: string; reason: string };

export interface StartSessionRequest {
  country_code: string;
  party_id: string;
  location_id: string;
  evse_uid: string;
  connector_id?: string;
  token: OcpiToken;
  authorization_reference: string;
  /** The caller's id for the command (recorded before it is sent, so its result can be matched); new when absent. */
  command_id?: string;
}

export interface StopSessionRequest {
  country_code: string;
  party_id: string;
  session_id: string;
  command_id?: string;
}

/** A command as a CPO of `version` takes it: 2.1.1's shapes (v2_1_1/to-peer.ts), 2.2's START_SESSION without connector_id (v2_2/adapter.ts). */
function commandIn(version: string, type: 'START_SESSION' | 'STOP_SESSION', request: Record<string, unknown>): Record<string, unknown> {
  if (version === OCPI_2_2) return type === 'START_SESSION' ? startSessionTo22(request) : request;
  if (version !== OCPI_2_1_1) return request;
  return type === 'START_SESSION'
    ? startSessionTo211(request as unknown as Parameters<typeof startSessionTo211>[0])
    : stopSessionTo211(request as unknown as Parameters<typeof stopSessionTo211>[0]);
}

export function createCommands(deps: { db: Database; clock: Clock; connections: Connections; ocpiBaseUrl: string; timeoutMs: number }) {
  const { db, clock } = deps;

  const connectionFor = (countryCode: string, partyId: string) => repo.findConnectedCpoOfParty(db, countryCode, partyId);

  /** The connection and commands URL a command to `party` goes to, or why none can be sent. */
  async function routeTo(party: { country_code: string; party_id: string }) {
    const connection = await connectionFor(party.country_code, party.party_id);
    const url = connection ? endpointOf(connection, 'commands', 'RECEIVER') : undefined;
    if (!connection || !url) return { unreachable: `no connected CPO for party ${party.country_code}*${party.party_id} with a commands endpoint` };
    // Behind a hub, a party the hub does not report CONNECTED cannot be reached (mod_hub_client_info: "No requests can
    // be sent"): nothing is sent, the start or stop fails as unreachable.
    if (connection.hub_status !== null && connection.hub_status !== 'CONNECTED') {
      return {
        unreachable: `the hub ${connection.name} reports ${party.country_code}*${party.party_id} ${connection.hub_status}: no requests can be sent to it`,
      };
    }
    return { connection, url };
  }

  async function send(
    type: 'START_SESSION' | 'STOP_SESSION',
    party: { country_code: string; party_id: string },
    body: Record<string, unknown>,
    commandId: string = randomUUID(),
  ): Promise<CommandOutcome> {
    const route = await routeTo(party);
    if (route.unreachable !== undefined) return { outcome: 'unreachable', commandId, reason: route.unreachable };
    const { connection, url } = route;
    const secret = randomBytes(18).toString('base64url');
    // A 2.1.1 or 2.2 CPO gets the command in its version's shape and posts its result to our interface of that version.
    const version = versionOf(connection);
    const built = { ...body, response_url: `${deps.ocpiBaseUrl}/${version}/commands/${type}/${commandId}/${secret}` };
    const request = commandIn(version, type, built);
    const v211 = version === OCPI_2_1_1;
    await repo.insertCommand(db, { id: commandId, connection_id: connection.id, type, callback_secret: secret, request }, clock.now());
    try {
      // Commands are not retried blindly: a lost answer may hide an accepted start.
      const reply = await ocpiRequest(deps.connections.peerAuth(connection), {
        method: 'POST',
        url: `${url.replace(/\/+$/, '')}/${type}`,
        module: 'commands',
        body: request,
        // To the party of the location or session the command is about.
        headers: deps.connections.routingTo(connection, party),
        timeoutMs: deps.timeoutMs,
        retries: 0,
      });
      // 2.1.1 answers carry no timeout: 0, our own start deadline decides how long the result is waited for.
      const parsed = v211 ? commandResponseFrom211(reply.envelope?.data, 0) : parseCommandResponse(reply.envelope?.data);
      const code = reply.envelope?.status_code;
      if (reply.status >= 200 && reply.status < 300 && code !== undefined && code >= 1000 && code < 2000 && parsed.ok) {
        const response = parsed.value;
        if (response.result === 'ACCEPTED') {
          await repo.recordCommandResponse(db, commandId, 'accepted', response, clock.now());
          return { outcome: 'accepted', commandId, timeoutSeconds: response.timeout };
        }
        await repo.recordCommandResponse(db, commandId, 'rejected', response, clock.now());
        const message = response.message?.[0]?.text;
        return { outcome: 'rejected', commandId, result: response.result, ...(message ? { message } : {}) };
      }
      // An OCPI error (2003 unknown location, ...) is a refusal; anything unreadable is a failure.
      if (code !== undefined && code >= 2000 && code < 3000) {
        await repo.recordCommandResponse(db, commandId, 'rejected', reply.envelope, clock.now());
        return {
          outcome: 'rejected',
          commandId,
          result: `OCPI_${code}`,
          ...(reply.envelope?.status_message ? { message: reply.envelope.status_message } : {}),
        };
      }
      await repo.recordCommandResponse(db, commandId, 'failed', reply.envelope ?? { http_status: reply.status }, clock.now());
      return { outcome: 'unreachable', commandId, reason: `the CPO answered HTTP ${reply.status}${code === undefined ? '' : ` with OCPI ${code}`}` };
    } catch (error) {
      const reason = error instanceof OcpiTransportError ? error.message : 'unexpected error';
      await repo.recordCommandResponse(db, commandId, 'failed', { error: reason }, clock.now());
      return { outcome: 'unreachable', commandId, reason };
    }
  }

  return {
    connectionFor,
    /** Why no command can be sent to `party` right now (no connection, a hub reporting it not CONNECTED), or undefined. */
    unreachable: async (party: { country_code: string; party_id: string }): Promise<string | undefined> => {
      return (await routeTo(party)).unreachable;
    },
    startSession: (request: StartSessionRequest) =>
      send(
        'START_SESSION',
        request,
        {
          token: request.token,
          location_id: request.location_id,
          evse_uid: request.evse_uid,
          ...(request.connector_id ? { connector_id: request.connector_id } : {}),
          authorization_reference: request.authorization_reference,
        },
        request.command_id,
      ),
    stopSession: (request: StopSessionRequest) => send('STOP_SESSION', request, { session_id: request.session_id }, request.command_id),
    find: (commandId: string) => repo.findCommand(db, commandId),
  };
}

export type Commands = ReturnType<typeof createCommands>;
