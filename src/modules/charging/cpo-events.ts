// What the CPO tells us about our sessions, applied inside the transaction that stores the message: the
// asynchronous result of a command, Session updates, and the CDR that completes a session.
import Big from 'big.js';
import type { CDR } from '../../ocpi-protocol/cdrs.ts';
import type { Session as OcpiSession } from '../../ocpi-protocol/sessions.ts';
import type { Queryable } from '../../platform/db.ts';
import { estimateCost } from '../../pricing/session-prices.ts';
import { type ChargingContext, UUID } from './context.ts';
import { CHARGING_QUEUES, cancelStartDeadline, fail, queueForSession, queueRelease } from './jobs.ts';
import * as repo from './repository.ts';
import { progressDue, recordProgressEvent } from './session-events.ts';
import { changeStatus, FAILURES, nextStatus, type SessionEvent } from './state.ts';

/** How a CPO message names its session when it names neither our id nor a session id we know. */
interface SeenAt {
  tokenUid: string;
  tokenType: string;
  locationId: string;
  evseUid: string | undefined;
  start: string;
}

/**
 * The session a CPO message is about (locked): ours by authorization_reference (our id), else by the CPO's session
 * id, else (a CPO that echoes neither, about a session it never reported) the token's user on that EVSE.
 */
async function sessionOf(
  tx: Queryable,
  message: { country_code: string; party_id: string; authorization_reference?: string; session_id?: string; id?: string },
  seen?: SeenAt,
): Promise<repo.SessionRow | undefined> {
  const country_code = message.country_code.toUpperCase();
  const party_id = message.party_id.toUpperCase();
  const ref = message.authorization_reference;
  if (ref && UUID.test(ref)) {
    const row = await repo.findSession(tx, ref.toLowerCase(), { forUpdate: true });
    if (row && row.country_code === country_code && row.party_id === party_id) return row;
  }
  const sessionId = message.session_id ?? message.id;
  const known = sessionId ? await repo.findByOcpiSession(tx, { country_code, party_id, id: sessionId }, { forUpdate: true }) : undefined;
  if (known || !seen || seen.tokenType !== 'APP_USER' || !UUID.test(seen.tokenUid) || !seen.evseUid) return known;
  // Started by us moments before the CPO's clock says the session started (clocks differ: 5 minutes' grace).
  const startedBy = new Date(new Date(seen.start).getTime() + 5 * 60_000);
  if (Number.isNaN(startedBy.getTime())) return undefined;
  return repo.findByTokenAndEvse(
    tx,
    { user_id: seen.tokenUid.toLowerCase(), country_code, party_id, location_id: seen.locationId, evse_uid: seen.evseUid, startedBy },
    { forUpdate: true },
  );
}

/** Which transition a Session report makes of an unfinished session's status (none: only its progress is written). */
function eventOf(ocpi: OcpiSession, row: repo.SessionRow): SessionEvent | undefined {
  if (ocpi.status === 'INVALID') return 'invalidReported';
  if (ocpi.status === 'COMPLETED') return 'endReported';
  if (ocpi.status === 'ACTIVE' && row.status === 'pending') return 'chargingReported';
  return undefined;
}

export async function sessionChanged(ctx: ChargingContext, tx: Queryable, ocpi: OcpiSession): Promise<void> {
  const row = await sessionOf(tx, ocpi, {
    tokenUid: ocpi.cdr_token.uid,
    tokenType: ocpi.cdr_token.type,
    locationId: ocpi.location_id,
    evseUid: ocpi.evse_uid,
    start: ocpi.start_date_time,
  });
  if (!row) return;
  const now = ctx.clock.now();
  if (row.status === 'failed' || row.status === 'completed') {
    // A session we gave up on is running after all: stop it (its CDR is still billed).
    if (row.status === 'failed' && (ocpi.status === 'ACTIVE' || ocpi.status === 'PENDING' || ocpi.status === 'RESERVATION')) {
      if (!row.ocpi_session_id) await repo.updateSession(tx, row.id, { ocpi_session_id: ocpi.id }, now);
      await queueForSession(ctx, tx, CHARGING_QUEUES.stopAtCpo, row.id);
      ctx.log?.warn({ session_id: row.id, ocpi_session_id: ocpi.id }, 'the CPO runs a session we had given up on: stopping it');
    }
    return;
  }
  const changes: repo.SessionChanges = {
    ocpi_session_id: row.ocpi_session_id ?? ocpi.id,
    start_time: new Date(ocpi.start_date_time),
    reported_at: new Date(ocpi.last_updated),
    consumed_energy: new Big(String(ocpi.kwh)).toFixed(3),
  };
  try {
    changes.estimated_cost = estimateCost(row, ocpi, now);
  } catch (error) {
    ctx.log?.warn({ session_id: row.id, err: error }, 'estimating the session cost failed');
  }
  if (ocpi.end_date_time) changes.end_time = new Date(ocpi.end_date_time);
  // The CPO reported the session: the start deadline has done its part.
  if (!row.ocpi_session_id) await cancelStartDeadline(tx, row.id);
  const event = eventOf(ocpi, row);
  // What the session delivered or cost changed and its status stays (a status change has its own event): a
  // progress event, unless one was recorded less than progressIntervalMs ago (the row is locked: every process
  // sees the same progress_event_at).
  const keepsStatus = event === undefined || nextStatus(row.status, event) === row.status;
  const progress = keepsStatus && progressDue(row, changes, now, ctx.config.progressIntervalMs);
  if (progress) changes.progress_event_at = now;
  let written: repo.SessionRow | undefined;
  if (event === 'invalidReported') {
    written = await changeStatus(ctx, tx, row.id, event, { ...changes, start_step: 'ended', failure_reason: FAILURES.invalid });
    await queueRelease(ctx, tx, row.id);
  } else if (event) {
    written = await changeStatus(ctx, tx, row.id, event, changes);
  } else {
    written = await repo.updateSession(tx, row.id, changes, now);
  }
  if (progress && written) await recordProgressEvent(ctx, tx, written);
}

export async function commandResult(ctx: ChargingContext, tx: Queryable, commandId: string, result: { result: string }): Promise<void> {
  const row = await repo.findByStartCommand(tx, commandId, { forUpdate: true });
  if (!row || result.result === 'ACCEPTED') return;
  if (row.start_command_id === commandId) {
    // The charge point could not start; a session the CPO already reported stays to be settled by its messages.
    if (row.status === 'pending' && !row.ocpi_session_id) {
      await fail(ctx, tx, row.id, `${FAILURES.startFailed}: ${result.result.toLowerCase()}`);
      ctx.log?.info({ session_id: row.id, result: result.result }, 'the charge point did not start the session');
    }
    return;
  }
  if (row.stop_command_id === commandId && row.status === 'stopping') {
    await changeStatus(ctx, tx, row.id, 'stopRefused', { stop_requested_at: null });
    ctx.log?.warn({ session_id: row.id, result: result.result }, 'the charge point did not stop the session; it is active again');
  }
}

/** Links the CDR to its session and completes it, queuing its bill; false when it is for no session of ours (or another CDR got there first). */
export async function cdrReceived(ctx: ChargingContext, tx: Queryable, cdr: CDR, options: { quiet?: boolean } = {}): Promise<boolean> {
  const row = await sessionOf(tx, cdr, {
    tokenUid: cdr.cdr_token.uid,
    tokenType: cdr.cdr_token.type,
    locationId: cdr.cdr_location.id,
    evseUid: cdr.cdr_location.evse_uid,
    start: cdr.start_date_time,
  });
  if (!row) {
    if (!options.quiet) ctx.log?.warn({ cdr_id: cdr.id, party: `${cdr.country_code}*${cdr.party_id}` }, 'a CDR for no session of ours; kept, not billed');
    return false;
  }
  if (row.cdr_id !== null) {
    if (row.cdr_id !== cdr.id) ctx.log?.warn({ session_id: row.id, cdr_id: cdr.id, first_cdr_id: row.cdr_id }, 'a second CDR for a session; not billed again');
    return row.cdr_id === cdr.id;
  }
  await changeStatus(ctx, tx, row.id, 'cdrReceived', {
    start_step: 'ended',
    ocpi_session_id: row.ocpi_session_id ?? cdr.session_id ?? null,
    start_time: row.start_time ?? new Date(cdr.start_date_time),
    end_time: new Date(cdr.end_date_time),
    consumed_energy: new Big(String(cdr.total_energy)).toFixed(3),
    cdr_country_code: cdr.country_code.toUpperCase(),
    cdr_party_id: cdr.party_id.toUpperCase(),
    cdr_id: cdr.id,
  });
  await queueForSession(ctx, tx, CHARGING_QUEUES.bill, row.id, { maxAttempts: 50 });
  ctx.crash('cdr:applied');
  return true;
}
