// What CPOs push to us (the Receiver interfaces): Locations, EVSEs and
// Connectors (PUT/PATCH), Tariffs (PUT/DELETE), Sessions (PUT/PATCH with
// charging periods appended), CDRs (POST, immutable) and command results.
// Every object is validated; ids in the URL must match the body; a connection
// may only send objects of the parties it registered.
// The factory only assembles; each Receiver lives in its own file:
//   receiver-context.ts          what every Receiver is given, and the checks they share
//   locations-receiver.ts        Locations, EVSEs and Connectors
//   tariffs-receiver.ts          Tariffs
//   sessions-receiver.ts         Sessions
//   cdrs-receiver.ts             CDRs
//   command-results-receiver.ts  command results
import { getCdr, postCdr } from './cdrs-receiver.ts';
import { commandResult } from './command-results-receiver.ts';
import { getLocation, patchLocation, putLocation } from './locations-receiver.ts';
import type { PartyPath, ReceiversContext } from './receiver-context.ts';
import type * as repo from './repository.ts';
import { getSession, patchSession, putSession } from './sessions-receiver.ts';
import { deleteTariff, getTariff, putTariff } from './tariffs-receiver.ts';

export type { OcpiEvents, PartyPath } from './receiver-context.ts';

export function createReceivers(ctx: ReceiversContext) {
  return {
    // Locations
    getLocation: (connection: repo.Connection, party: PartyPath, locationId: string, evseUid?: string, connectorId?: string) =>
      getLocation(ctx, connection, party, locationId, evseUid, connectorId),
    putLocation: (
      connection: repo.Connection,
      party: PartyPath,
      locationId: string,
      evseUid: string | undefined,
      connectorId: string | undefined,
      body: unknown,
    ) => putLocation(ctx, connection, party, locationId, evseUid, connectorId, body),
    patchLocation: (
      connection: repo.Connection,
      party: PartyPath,
      locationId: string,
      evseUid: string | undefined,
      connectorId: string | undefined,
      body: unknown,
    ) => patchLocation(ctx, connection, party, locationId, evseUid, connectorId, body),

    // Tariffs
    getTariff: (connection: repo.Connection, party: PartyPath, tariffId: string) => getTariff(ctx, connection, party, tariffId),
    putTariff: (connection: repo.Connection, party: PartyPath, tariffId: string, body: unknown) => putTariff(ctx, connection, party, tariffId, body),
    deleteTariff: (connection: repo.Connection, party: PartyPath, tariffId: string) => deleteTariff(ctx, connection, party, tariffId),

    // Sessions
    getSession: (connection: repo.Connection, party: PartyPath, sessionId: string) => getSession(ctx, connection, party, sessionId),
    putSession: (connection: repo.Connection, party: PartyPath, sessionId: string, body: unknown) => putSession(ctx, connection, party, sessionId, body),
    patchSession: (connection: repo.Connection, party: PartyPath, sessionId: string, body: unknown) => patchSession(ctx, connection, party, sessionId, body),

    // CDRs
    postCdr: (connection: repo.Connection, body: unknown) => postCdr(ctx, connection, body),
    getCdr: (connection: repo.Connection, party: PartyPath, cdrId: string) => getCdr(ctx, connection, party, cdrId),

    // Command results (POST to the response_url we gave with a command)
    commandResult: (connection: repo.Connection, type: string, commandId: string, secret: string, body: unknown) =>
      commandResult(ctx, connection, type, commandId, secret, body),
  };
}

export type Receivers = ReturnType<typeof createReceivers>;
