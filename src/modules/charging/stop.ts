// The user's stop: STOP_SESSION to the CPO (its command id recorded first, so its asynchronous result finds the
// session); stopping once the CPO accepted. The CPO's Session and CDR then complete it (cpo-events.ts).
import { randomUUID } from 'node:crypto';
import { AppError } from '../../platform/errors.ts';
import type { ChargingContext } from './context.ts';
import * as repo from './repository.ts';
import { changeStatus } from './state.ts';
import { requireSession } from './views.ts';

export async function stop(ctx: ChargingContext, clientId: string, userId: string, sessionId: string): Promise<void> {
  const { db, clock } = ctx;
  const row = await requireSession(ctx, db, clientId, userId, sessionId);
  if (row.status === 'completed' || row.status === 'failed') throw new AppError('already_stopped', `The session is already ${row.status}.`);
  if (row.status === 'stopping') return;
  if (!row.ocpi_session_id) {
    throw new AppError('conflict', 'The operator has not reported the session yet, so it cannot be stopped yet; retry in a few seconds.', {
      headers: { 'Retry-After': '2' },
    });
  }
  const commandId = randomUUID();
  await repo.updateSession(db, row.id, { stop_command_id: commandId, stop_requested_at: clock.now() }, clock.now(), ['pending', 'active']);
  const outcome = await ctx.commands.stopSession({
    country_code: row.country_code,
    party_id: row.party_id,
    session_id: row.ocpi_session_id,
    command_id: commandId,
  });
  if (outcome.outcome === 'accepted') {
    ctx.crash('stop:command-accepted');
    await changeStatus(ctx, db, row.id, 'stopAccepted');
    return;
  }
  ctx.log?.warn({ session_id: row.id, outcome: outcome.outcome }, 'STOP_SESSION not accepted');
  throw new AppError(
    'charging_provider_error',
    outcome.outcome === 'rejected'
      ? `The operator refused to stop charging (${outcome.result}${outcome.message ? `: ${outcome.message}` : ''}).`
      : 'The operator could not be reached; try again shortly.',
  );
}
