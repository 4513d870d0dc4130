// One pass over an open session, as the simulation's tick starts it: the
// result of a due STOP_SESSION, then the session's next transition (PENDING
// to ACTIVE, charging and progress pushes, COMPLETED with its CDR, or INVALID
// when its EVSE is gone), saved with its outbox messages in one transaction.
import { randomUUID } from 'node:crypto';
import type { Cdr } from '../../ocpi-protocol/cdrs.ts';
import type { EvseStatus } from '../../ocpi-protocol/locations-tariffs.ts';
import type { ChargingPeriod } from '../../ocpi-protocol/sessions.ts';
import type { Queryable } from '../../platform/db.ts';
import { activeElements, type Charges, record } from './billing.ts';
import { advance, cdrPeriods, chargedKwh, closeOpen, costs, hoursOf, ledgerOf } from './charging.ts';
import { cdrMessage, sessionMessages } from './session-messages.ts';
import { type EndReason, evseKey, iso, type Resolved, type Row, type SimState, type SimulationContext, type SimulationOptions } from './simulation-context.ts';
import type { OutboxMessage } from './store.ts';
import * as store from './store.ts';

/** A completed session's costs and quantities, as its CDR states them. */
type Totals = Charges & { total_energy: number; total_time: number; total_parking_time: number };

const REMARKS: Record<EndReason, string> = {
  STOPPED: 'Session stopped on request.',
  FULL: 'The EV was fully charged.',
  INTERRUPTED: 'The EV stopped charging by itself.',
};

function resolve({ network }: SimulationContext, locationId: string, evseUid: string, connectorId: string, tariffRef: SimState['tariff']): Resolved {
  const ref = network.evse(locationId, evseUid);
  const connector = ref?.evse.connectors.find((c) => c.id === connectorId);
  if (!ref || !connector) throw new Error(`session on an EVSE that is not in the network: ${locationId}/${evseUid}/${connectorId}`);
  const tariff = tariffRef ? network.tariff(tariffRef.country_code, tariffRef.party_id, tariffRef.id) : undefined;
  return { ...ref, connector, tariff };
}

function activate(ctx: SimulationContext, row: Row, nowMs: number, out: OutboxMessage[]): void {
  const { options } = ctx;
  const startMs = row.sim.activateAtMs;
  row.status = 'ACTIVE';
  row.sim.cursorMs = startMs;
  row.sim.nextPushAtMs = nowMs + options.sessionUpdateIntervalMs;
  if (row.scenario === 'INTERRUPT') row.sim.autoEndAfterS = options.interruptAfterSeconds;
  if (row.scenario === 'NOUPDATES') row.sim.autoEndAfterS = options.noUpdatesEndAfterSeconds;
  Object.assign(row.data, { status: 'ACTIVE', start_date_time: iso(startMs), last_updated: iso(nowMs) });
  out.push(
    ...sessionMessages(
      ctx,
      row,
      'PATCH',
      { status: 'ACTIVE', start_date_time: row.data.start_date_time, last_updated: row.data.last_updated },
      new Date(nowMs),
    ),
  );
}

function progress(ctx: SimulationContext, row: Row, r: Resolved, nowMs: number, out: OutboxMessage[]): void {
  closeOpen(row, r);
  const periods = row.data.charging_periods ?? [];
  const fresh = periods.slice(row.sim.pushed);
  row.sim.pushed = periods.length;
  Object.assign(row.data, { kwh: chargedKwh(row.sim), total_cost: costs(row, r).total_cost, last_updated: iso(nowMs) });
  const body = {
    kwh: row.data.kwh,
    ...(fresh.length ? { charging_periods: fresh } : {}),
    total_cost: row.data.total_cost,
    last_updated: row.data.last_updated,
  };
  out.push(...sessionMessages(ctx, row, 'PATCH', body, new Date(nowMs)));
}

/**
 * A session that never charged (stopped while PENDING) still gets one charging period, empty: no energy, no
 * charging and no parking time; a FLAT fee active at its start is booked, as for any session.
 */
function emptyPeriod(row: Row, r: Resolved): ChargingPeriod {
  const start = row.data.start_date_time;
  if (r.tariff) {
    const measure = { atMs: Date.parse(start), sinceStartMs: 0, registerWh: 0, powerKw: 0, currentA: 0, charging: false };
    record(ledgerOf(row.sim), activeElements(r.tariff, row.sim.timeZone, measure), { wh: 0, ms: 0 });
  }
  const dimensions: ChargingPeriod['dimensions'] = [
    { type: 'ENERGY', volume: 0 },
    { type: 'TIME', volume: 0 },
    { type: 'PARKING_TIME', volume: 0 },
  ];
  return { start_date_time: start, dimensions, ...(r.tariff ? { tariff_id: r.tariff.id } : {}) };
}

/** Hours the EV was connected without charging: the idle periods (PARKING_TIME without TIME), by their timestamps. */
function parkingHours(periods: readonly ChargingPeriod[], endMs: number): number {
  let ms = 0;
  periods.forEach((p, i) => {
    const next = periods[i + 1];
    const idle = p.dimensions.some((d) => d.type === 'PARKING_TIME') && !p.dimensions.some((d) => d.type === 'TIME');
    if (idle) ms += (next ? Date.parse(next.start_date_time) : endMs) - Date.parse(p.start_date_time);
  });
  return hoursOf(ms);
}

/**
 * Completes a session (pure): closes its open period and builds its CDR, priced by the sandbox's own billing
 * (billing.ts). The row becomes COMPLETED; `fresh` are the periods not pushed yet. finish stores and sends them.
 */
export function completeSession(row: Row, r: Resolved, reason: EndReason, endMs: number, nowMs: number): { cdr: Cdr; fresh: ChargingPeriod[] } {
  closeOpen(row, r);
  const start = row.data.start_date_time;
  const periods = row.data.charging_periods?.length ? row.data.charging_periods : [emptyPeriod(row, r)];
  row.data.charging_periods = periods;
  const fresh = periods.slice(row.sim.pushed);
  row.sim.pushed = periods.length;
  const end = Math.max(endMs, Date.parse(start));
  const priced: Totals = {
    ...costs(row, r),
    total_energy: chargedKwh(row.sim),
    total_time: hoursOf(end - Date.parse(start)),
    total_parking_time: parkingHours(periods, end),
  };
  row.status = 'COMPLETED';
  Object.assign(row.data, {
    status: 'COMPLETED',
    end_date_time: iso(end),
    kwh: priced.total_energy,
    total_cost: priced.total_cost,
    last_updated: iso(nowMs),
  });
  return { cdr: completedCdr(row, r, { start, end, periods, priced, reason, nowMs }), fresh };
}

async function finish(
  ctx: SimulationContext,
  tx: Queryable,
  row: Row,
  r: Resolved,
  reason: EndReason,
  endMs: number,
  nowMs: number,
  out: OutboxMessage[],
): Promise<void> {
  const { cdr, fresh } = completeSession(row, r, reason, endMs, nowMs);
  out.push(
    ...sessionMessages(
      ctx,
      row,
      'PATCH',
      {
        status: 'COMPLETED',
        end_date_time: row.data.end_date_time,
        kwh: row.data.kwh,
        ...(fresh.length ? { charging_periods: fresh } : {}),
        total_cost: row.data.total_cost,
        last_updated: row.data.last_updated,
      },
      new Date(nowMs),
    ),
  );
  await store.insertCdr(tx, row.peerId, cdr);
  out.push(...cdrMessage(ctx, row, cdr, new Date(nowMs)));
}

/** The CDR of a session that has just completed: its periods without the Session-only dimensions, priced. */
function completedCdr(
  row: Row,
  r: Resolved,
  ended: { start: string; end: number; periods: readonly ChargingPeriod[]; priced: Totals; reason: EndReason; nowMs: number },
): Cdr {
  const { start, end, periods, priced, reason, nowMs } = ended;
  const { location, evse, connector } = r;
  return {
    country_code: row.data.country_code,
    party_id: row.data.party_id,
    id: randomUUID(),
    start_date_time: start,
    end_date_time: iso(end),
    session_id: row.id,
    cdr_token: row.data.cdr_token,
    auth_method: row.data.auth_method,
    ...(row.data.authorization_reference ? { authorization_reference: row.data.authorization_reference } : {}),
    cdr_location: {
      id: location.id,
      ...(location.name ? { name: location.name } : {}),
      address: location.address,
      city: location.city,
      ...(location.postal_code ? { postal_code: location.postal_code } : {}),
      ...(location.state ? { state: location.state } : {}),
      country: location.country,
      coordinates: location.coordinates,
      evse_uid: evse.uid,
      evse_id: evse.evse_id ?? evse.uid,
      connector_id: connector.id,
      connector_standard: connector.standard as Cdr['cdr_location']['connector_standard'],
      connector_format: connector.format as Cdr['cdr_location']['connector_format'],
      connector_power_type: connector.power_type as Cdr['cdr_location']['connector_power_type'],
    },
    currency: row.data.currency,
    ...(r.tariff ? { tariffs: [r.tariff] } : {}),
    charging_periods: cdrPeriods(periods),
    total_cost: priced.total_cost,
    ...(priced.total_fixed_cost ? { total_fixed_cost: priced.total_fixed_cost } : {}),
    total_energy: priced.total_energy,
    ...(priced.total_energy_cost ? { total_energy_cost: priced.total_energy_cost } : {}),
    total_time: priced.total_time,
    ...(priced.total_time_cost ? { total_time_cost: priced.total_time_cost } : {}),
    total_parking_time: priced.total_parking_time,
    ...(priced.total_parking_cost ? { total_parking_cost: priced.total_parking_cost } : {}),
    remark: REMARKS[reason],
    last_updated: iso(nowMs),
  };
}

/** When a session needs its next pass (wall ms): activation, the next progress push, or a requested stop. */
export function nextDueMs(options: SimulationOptions, row: Row): number {
  const regular = row.status === 'PENDING' ? row.sim.activateAtMs : row.sim.nextPushAtMs;
  return row.sim.stop ? Math.min(regular, row.sim.stop.requestedAtMs + options.commandDelayMs) : regular;
}

/** A session whose EVSE is gone from the network (restarted with other `locations`/`seed`) is declared INVALID. */
function invalidate(ctx: SimulationContext, row: Row, nowMs: number, out: OutboxMessage[]): void {
  ctx.log('warn', 'a session refers to an EVSE that is not in the network any more; declared INVALID', { session: row.id, evse: row.evseUid });
  row.status = 'INVALID';
  Object.assign(row.data, { status: 'INVALID', last_updated: iso(nowMs) });
  out.push(...sessionMessages(ctx, row, 'PATCH', { status: 'INVALID', last_updated: row.data.last_updated }, new Date(nowMs)));
}

/** One pass over an open session: post a due stop result, then activate, charge, push progress, or finish. */
export async function runSession(ctx: SimulationContext, id: string): Promise<void> {
  const { db, clock, peers, push, options, dueAt, occupied } = ctx;
  const before = await store.findSession<SimState>(db, id);
  if (!before || (before.status !== 'PENDING' && before.status !== 'ACTIVE')) return;
  const stopAtMs = before.sim.stop ? before.sim.stop.requestedAtMs + options.commandDelayMs : undefined;
  const stopDue = stopAtMs !== undefined && clock.now().getTime() >= stopAtMs;
  if (stopDue) {
    const peer = peers.get(before.peerId);
    for (const url of before.sim.stop?.responseUrls ?? []) if (peer) await push.postCommandResult(peer, before.data, url, { result: 'ACCEPTED' });
  }
  const outcome = await db.transaction(async (tx) => {
    const row = await store.lockOpenSession<SimState>(tx, id);
    if (!row) return undefined;
    const nowMs = clock.now().getTime();
    const out: OutboxMessage[] = [];
    let status: EvseStatus | undefined;
    let r: Resolved | undefined;
    try {
      r = resolve(ctx, row.locationId, row.evseUid, row.data.connector_id, row.sim.tariff);
    } catch {
      invalidate(ctx, row, nowMs, out);
    }
    const stopEndMs = stopDue ? stopAtMs : undefined;
    if (r && row.status === 'PENDING' && nowMs >= row.sim.activateAtMs && !(stopAtMs !== undefined && stopDue && stopAtMs < row.sim.activateAtMs)) {
      activate(ctx, row, nowMs, out);
      status = 'CHARGING';
    }
    if (r && row.status === 'ACTIVE') {
      const ended = advance(row, r, stopEndMs ?? nowMs);
      if (ended) await finish(ctx, tx, row, r, ended, row.sim.cursorMs, nowMs, out);
      else if (stopEndMs !== undefined) await finish(ctx, tx, row, r, 'STOPPED', Math.max(stopEndMs, row.sim.cursorMs), nowMs, out);
      else if (nowMs >= row.sim.nextPushAtMs) {
        progress(ctx, row, r, nowMs, out);
        row.sim.nextPushAtMs = Math.max(row.sim.nextPushAtMs + options.sessionUpdateIntervalMs, nowMs + 1);
      }
    } else if (r && stopEndMs !== undefined) {
      await finish(ctx, tx, row, r, 'STOPPED', stopEndMs, nowMs, out);
    }
    if (row.status === 'COMPLETED') status = 'AVAILABLE';
    row.lastUpdated = new Date(row.data.last_updated);
    await store.saveSession(tx, row);
    await store.enqueue(tx, out, new Date(nowMs));
    return { row, status, r, messages: out.length };
  });
  if (!outcome) return;
  const open = outcome.row.status === 'PENDING' || outcome.row.status === 'ACTIVE';
  if (open) dueAt.set(id, nextDueMs(options, outcome.row));
  else {
    dueAt.delete(id);
    occupied.delete(evseKey(before.locationId, before.evseUid));
  }
  if (outcome.messages > 0) ctx.kickOutbox();
  if (outcome.status && outcome.r) await ctx.setEvseStatus(outcome.r.location, outcome.r.evse, outcome.status);
}
