// Command results: the CPO POSTs the result of a command to the response_url
// we gave with it; a stored result is told to other modules
// (events.commandResult) in the same transaction.
import { OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import { parseCommandResult } from '../../ocpi-protocol/validate.ts';
import { ok, type ReceiversContext } from './receiver-context.ts';
import * as repo from './repository.ts';

export async function commandResult(ctx: ReceiversContext, connection: repo.Connection, type: string, commandId: string, secret: string, body: unknown) {
  const result = ok(parseCommandResult(body), 'CommandResult');
  const outcome = await ctx.db.transaction(async (tx) => {
    const recorded = await repo.recordCommandResult(
      tx,
      { id: commandId, connection_id: connection.id, type, callback_secret: secret },
      result.message ? { result: result.result, message: JSON.stringify(result.message) } : { result: result.result },
      ctx.clock.now(),
    );
    if (recorded === 'stored') await ctx.events?.commandResult?.(tx, commandId, { result: result.result });
    return recorded;
  });
  if (outcome === 'unknown') throw new OcpiError(404, OCPI_STATUS.clientError, 'Unknown command');
}
