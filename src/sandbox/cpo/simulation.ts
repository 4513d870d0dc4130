// The charging simulation behind the Commands Receiver: START_SESSION and
// STOP_SESSION, the charge point's answers, and each session from PENDING to
// COMPLETED with its CDR.
//
// Time: every session runs on its own compressed clock, anchored at its
// creation: simulated = created + (now - created) x timeCompression. The
// timestamps inside a Session or CDR (start_date_time, charging periods,
// end_date_time) are simulated; last_updated is the clock's now.
//
// Energy: power = min(EVSE connector power, the car's AC or DC limit), tapering
// linearly above 80 % state of charge (to 8 % of it near 100 %); the session
// ends when the car is full, on STOP_SESSION, or when a scenario says so.
// Simulation steps end at whole minutes and at the tariff's duration and
// energy thresholds; a new charging period starts whenever the applicable
// tariff elements change, and at every session update pushed to the eMSP.
import { randomUUID } from 'node:crypto';
import type { Cdr } from '../../ocpi-protocol/cdrs.ts';
import type { CommandResponse, CommandResponseType, CommandResultType, StartSession } from '../../ocpi-protocol/commands.ts';
import type { EvseStatus, OcpiConnector, OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import { type ChargingPeriod, SESSION_ONLY_DIMENSIONS, type Session } from '../../ocpi-protocol/sessions.ts';
import { invalidParameters, OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import { parseStartSession, parseStopSession } from '../../ocpi-protocol/validate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Queryable } from '../../platform/db.ts';
import { countryByAlpha3 } from '../../platform/european-countries.ts';
import { type PricingContext, priceSession, pricingSignature, tariffThresholds } from '../../pricing/tariff-engine.ts';
import type { Network } from './network.ts';
import type { Log, Peers } from './peers.ts';
import { joinUrl, type Push } from './push.ts';
import { type Scenario, scenarioOf } from './scenarios.ts';
import type { OutboxMessage, Peer, SessionRow } from './store.ts';
import * as store from './store.ts';

export interface SimulationOptions {
  /** Simulated milliseconds per real millisecond while a session runs. */
  timeCompression: number;
  /** How long the charge point takes to answer a command (real ms). */
  commandDelayMs: number;
  /** From the session's creation (PENDING) to charging (ACTIVE), real ms. */
  activationDelayMs: number;
  /** How often a running session's progress is pushed (real ms). */
  sessionUpdateIntervalMs: number;
  /** CommandResponse.timeout, seconds. */
  commandTimeoutSeconds: number;
  /** Scenario LATECDR: real ms between the end of the session and its CDR. */
  lateCdrDelayMs: number;
  /** Scenario INTERRUPT: simulated seconds of charging before the car stops. */
  interruptAfterSeconds: number;
  /** Scenario NOUPDATES: simulated seconds of charging before the session ends by itself. */
  noUpdatesEndAfterSeconds: number;
  seed: number;
}

export interface SimulationDeps {
  db: Database;
  clock: Clock;
  network: Network;
  peers: Peers;
  push: Push;
  log: Log;
  /** Records an EVSE status change and pushes it to the eMSPs. */
  setEvseStatus: (location: OcpiLocation, evse: OcpiEvse, status: EvseStatus) => Promise<void>;
  /** Asks for the outbox to be delivered soon. */
  kickOutbox: () => void;
  options: SimulationOptions;
}

interface Car {
  model: string;
  capacityKwh: number;
  /** State of charge, 0..1. */
  soc: number;
  maxAcKw: number;
  maxDcKw: number;
}

interface OpenPeriod {
  startMs: number;
  energyKwh: number;
  chargingMs: number;
  maxKw: number;
  minKw: number;
  /** Current summed over the phases, A. */
  maxA: number;
  minA: number;
  signature: string;
}

/** The simulation's own state of a session (column `sim`). Times ending in Ms are epoch ms; "wall" ones are on the clock, the others simulated. */
export interface SimState {
  anchorMs: number;
  compression: number;
  /** Simulated time up to which the session has been simulated. */
  cursorMs: number;
  /** Wall time at which the session goes ACTIVE. */
  activateAtMs: number;
  /** Wall time of the next progress push. */
  nextPushAtMs: number;
  car: Car;
  powerType: string;
  evseKw: number;
  voltage: number;
  timeZone: string;
  tariff: { country_code: string; party_id: string; id: string } | null;
  /** Energy charged so far (unrounded). */
  kwh: number;
  open: OpenPeriod | null;
  /** How many of the session's charging periods have been pushed. */
  pushed: number;
  stop: { requestedAtMs: number; responseUrls: string[] } | null;
  /** Simulated seconds after which the session ends by itself (scenarios). */
  autoEndAfterS: number | null;
}

type Row = SessionRow<SimState>;
type EndReason = 'STOPPED' | 'FULL' | 'INTERRUPTED';

interface PendingStart {
  dueAtMs: number;
  peerId: string;
  command: StartSession;
  locationId: string;
  evseUid: string;
  connectorId: string;
  scenario: Scenario | undefined;
  /** Whether this start holds the EVSE (false: another start or session had it). */
  holds: boolean;
}

interface Resolved {
  location: OcpiLocation;
  evse: OcpiEvse;
  connector: OcpiConnector;
  tariff: OcpiTariff | undefined;
}

const CARS: readonly Omit<Car, 'soc'>[] = [
  { model: 'city car', capacityKwh: 42, maxAcKw: 7.4, maxDcKw: 50 },
  { model: 'compact', capacityKwh: 58, maxAcKw: 11, maxDcKw: 120 },
  { model: 'family SUV', capacityKwh: 77, maxAcKw: 11, maxDcKw: 175 },
  { model: 'saloon', capacityKwh: 100, maxAcKw: 22, maxDcKw: 250 },
];
const FULL_KWH = 0.0005;
const MAX_STEPS_PER_RUN = 200_000;
const OCCUPIED_STATUSES = new Set(['CHARGING', 'BLOCKED', 'RESERVED']);
const REMARKS: Record<EndReason, string> = {
  STOPPED: 'Session stopped on request.',
  FULL: 'The EV was fully charged.',
  INTERRUPTED: 'The EV stopped charging by itself.',
};

/** mulberry32: a small seeded generator for the car model and the initial charge. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const iso = (ms: number) => new Date(ms).toISOString();
const round = (value: number, decimals: number) => Number(value.toFixed(decimals));
const evseKey = (locationId: string, evseUid: string) => `${locationId}\u0000${evseUid}`;
const simAt = (sim: SimState, wallMs: number) => sim.anchorMs + (wallMs - sim.anchorMs) * sim.compression;
const text = (message: string) => [{ language: 'en', text: message }];

export function connectorPowerKw(connector: OcpiConnector): number {
  if (connector.max_electric_power && connector.max_electric_power > 0) return connector.max_electric_power / 1000;
  const phases = { AC_1_PHASE: 1, AC_2_PHASE: 2, AC_2_PHASE_SPLIT: 2, AC_3_PHASE: 3, DC: 1 }[connector.power_type] ?? 1;
  return (connector.max_voltage * connector.max_amperage * phases) / 1000;
}

/** The charging current summed over the phases: P / 230 V for AC (line to neutral), P / U for DC. */
const currentA = (sim: SimState, powerKw: number) => (powerKw * 1000) / (sim.powerType === 'DC' ? Math.max(1, sim.voltage) : 230);

function chargingPowerKw(sim: SimState): number {
  const limit = Math.min(sim.evseKw, sim.powerType === 'DC' ? sim.car.maxDcKw : sim.car.maxAcKw);
  const taper = sim.car.soc <= 0.8 ? 1 : Math.max(0.08, (1 - sim.car.soc) / 0.2);
  return limit * taper;
}

function periodOf(open: OpenPeriod, socPercent: number, tariffId: string | undefined): ChargingPeriod {
  return {
    start_date_time: iso(open.startMs),
    dimensions: [
      { type: 'ENERGY', volume: round(open.energyKwh, 3) },
      { type: 'TIME', volume: round(open.chargingMs / 3_600_000, 6) },
      { type: 'MAX_POWER', volume: round(open.maxKw, 2) },
      { type: 'MIN_POWER', volume: round(open.minKw, 2) },
      { type: 'MAX_CURRENT', volume: round(open.maxA, 1) },
      { type: 'MIN_CURRENT', volume: round(open.minA, 1) },
      { type: 'STATE_OF_CHARGE', volume: round(socPercent, 1) },
    ],
    ...(tariffId ? { tariff_id: tariffId } : {}),
  };
}

const sessionOnly = new Set<string>(SESSION_ONLY_DIMENSIONS);
const cdrPeriods = (periods: readonly ChargingPeriod[]): ChargingPeriod[] =>
  periods.map((p) => ({ ...p, dimensions: p.dimensions.filter((d) => !sessionOnly.has(d.type)) }));

const sumKwh = (periods: readonly ChargingPeriod[]) =>
  round(
    periods.reduce((sum, p) => sum + (p.dimensions.find((d) => d.type === 'ENERGY')?.volume ?? 0), 0),
    3,
  );

export function createSimulation(deps: SimulationDeps) {
  const { db, clock, network, peers, push, log, options } = deps;
  const random = seededRandom(options.seed);
  let pending: PendingStart[] = [];
  /** EVSEs held by a start in progress or an open session. */
  const occupied = new Set<string>();
  const busy = new Set<string>();
  /** When each open session needs its next pass (wall ms); a session not in it is due now (after a restart). */
  const dueAt = new Map<string, number>();
  const tasks = new Set<Promise<unknown>>();
  let listing = false;

  function track(promise: Promise<unknown>): void {
    const guarded = promise.catch((error: Error) => log('error', 'sandbox simulation task failed', { err: error.message, stack: error.stack }));
    tasks.add(guarded);
    void guarded.finally(() => tasks.delete(guarded));
  }

  const response = (result: CommandResponseType, message?: string): CommandResponse => ({
    result,
    timeout: options.commandTimeoutSeconds,
    ...(message ? { message: text(message) } : {}),
  });

  function resolve(locationId: string, evseUid: string, connectorId: string, tariffRef: SimState['tariff']): Resolved {
    const ref = network.evse(locationId, evseUid);
    const connector = ref?.evse.connectors.find((c) => c.id === connectorId);
    if (!ref || !connector) throw new Error(`session on an EVSE that is not in the network: ${locationId}/${evseUid}/${connectorId}`);
    const tariff = tariffRef ? network.tariff(tariffRef.country_code, tariffRef.party_id, tariffRef.id) : undefined;
    return { ...ref, connector, tariff };
  }

  function pricingContext(row: Row, atMs: number, powerKw: number): PricingContext {
    const startMs = Date.parse(row.data.start_date_time);
    return {
      at: new Date(atMs),
      timeZone: row.sim.timeZone,
      kwh: row.sim.kwh,
      durationS: (atMs - startMs) / 1000,
      powerKw,
      currentA: currentA(row.sim, powerKw),
    };
  }

  // -------------------------------------------------------------------------
  // Pushes of a session

  function sessionMessages(row: Row, method: 'PUT' | 'PATCH', body: unknown, now: Date): OutboxMessage[] {
    if (row.scenario === 'NOUPDATES') return [];
    const peer = peers.get(row.peerId);
    const base = peer && peers.endpoint(peer, 'sessions', 'RECEIVER');
    if (!peer || !base) return [];
    const message: OutboxMessage = {
      peerId: peer.id,
      orderingKey: row.id,
      kind: method === 'PUT' ? 'session_put' : 'session_patch',
      method,
      url: joinUrl(base, row.data.country_code, row.data.party_id, row.id),
      body,
      routing: push.routing(row.data, peer),
      dueAt: now,
    };
    return row.scenario === 'DUPLICATE' && method === 'PATCH' ? [message, { ...message }] : [message];
  }

  function cdrMessage(row: Row, cdr: Cdr, now: Date): OutboxMessage[] {
    const peer = peers.get(row.peerId);
    const url = peer && peers.endpoint(peer, 'cdrs', 'RECEIVER');
    if (!peer || !url) return [];
    const due = row.scenario === 'LATECDR' ? new Date(now.getTime() + options.lateCdrDelayMs) : now;
    return [{ peerId: peer.id, orderingKey: row.id, kind: 'cdr', method: 'POST', url, body: cdr, routing: push.routing(cdr, peer), dueAt: due }];
  }

  // -------------------------------------------------------------------------
  // Simulating one session

  function closeOpen(row: Row, r: Resolved): void {
    const open = row.sim.open;
    if (!open) return;
    row.sim.open = null;
    if (open.chargingMs <= 0) return;
    row.data.charging_periods = [...(row.data.charging_periods ?? []), periodOf(open, row.sim.car.soc * 100, r.tariff?.id)];
  }

  function costs(row: Row, r: Resolved, endMs: number) {
    return priceSession({
      tariff: r.tariff,
      currency: row.data.currency,
      timeZone: row.sim.timeZone,
      start: new Date(row.data.start_date_time),
      end: new Date(endMs),
      periods: row.data.charging_periods ?? [],
    });
  }

  /** Charges up to simulated time `targetMs`; says why the session ended, if it did. */
  function advance(row: Row, r: Resolved, targetMs: number): EndReason | undefined {
    const sim = row.sim;
    const startMs = Date.parse(row.data.start_date_time);
    const thresholds = r.tariff ? tariffThresholds(r.tariff) : { durationsS: [], kwh: [] };
    const autoEndMs = sim.autoEndAfterS === null ? Number.POSITIVE_INFINITY : startMs + sim.autoEndAfterS * 1000;
    for (let steps = 0; sim.cursorMs < targetMs && steps < MAX_STEPS_PER_RUN; steps++) {
      if (sim.cursorMs >= autoEndMs) return 'INTERRUPTED';
      const remainingKwh = sim.car.capacityKwh * (1 - sim.car.soc);
      if (remainingKwh <= FULL_KWH) return 'FULL';
      const powerKw = chargingPowerKw(sim);
      let end = Math.min(targetMs, autoEndMs, (Math.floor(sim.cursorMs / 60_000) + 1) * 60_000);
      const nextDuration = thresholds.durationsS.map((d) => startMs + d * 1000).find((at) => at > sim.cursorMs);
      if (nextDuration !== undefined) end = Math.min(end, nextDuration);
      const nextKwh = thresholds.kwh.find((k) => k > sim.kwh);
      if (nextKwh !== undefined) end = Math.min(end, sim.cursorMs + Math.ceil(((nextKwh - sim.kwh) / powerKw) * 3_600_000));
      end = Math.max(sim.cursorMs + 1, Math.min(end, sim.cursorMs + Math.ceil((remainingKwh / powerKw) * 3_600_000)));
      const dt = end - sim.cursorMs;
      const energy = Math.min(remainingKwh, (powerKw * dt) / 3_600_000);
      const signature = r.tariff ? pricingSignature(r.tariff, pricingContext(row, sim.cursorMs, powerKw), true) : '';
      if (sim.open && sim.open.signature !== signature) closeOpen(row, r);
      const amps = currentA(sim, powerKw);
      const open = sim.open ?? { startMs: sim.cursorMs, energyKwh: 0, chargingMs: 0, maxKw: powerKw, minKw: powerKw, maxA: amps, minA: amps, signature };
      open.energyKwh += energy;
      open.chargingMs += dt;
      open.maxKw = Math.max(open.maxKw, powerKw);
      open.minKw = Math.min(open.minKw, powerKw);
      open.maxA = Math.max(open.maxA, amps);
      open.minA = Math.min(open.minA, amps);
      sim.open = open;
      sim.kwh += energy;
      sim.car.soc = Math.min(1, sim.car.soc + energy / sim.car.capacityKwh);
      sim.cursorMs = end;
    }
    if (sim.cursorMs >= autoEndMs) return 'INTERRUPTED';
    if (sim.car.capacityKwh * (1 - sim.car.soc) <= FULL_KWH) return 'FULL';
    return undefined;
  }

  function activate(row: Row, nowMs: number, out: OutboxMessage[]): void {
    const startMs = simAt(row.sim, row.sim.activateAtMs);
    row.status = 'ACTIVE';
    row.sim.cursorMs = startMs;
    row.sim.nextPushAtMs = nowMs + options.sessionUpdateIntervalMs;
    if (row.scenario === 'INTERRUPT') row.sim.autoEndAfterS = options.interruptAfterSeconds;
    if (row.scenario === 'NOUPDATES') row.sim.autoEndAfterS = options.noUpdatesEndAfterSeconds;
    Object.assign(row.data, { status: 'ACTIVE', start_date_time: iso(startMs), last_updated: iso(nowMs) });
    out.push(
      ...sessionMessages(row, 'PATCH', { status: 'ACTIVE', start_date_time: row.data.start_date_time, last_updated: row.data.last_updated }, new Date(nowMs)),
    );
  }

  function progress(row: Row, r: Resolved, nowMs: number, out: OutboxMessage[]): void {
    closeOpen(row, r);
    const periods = row.data.charging_periods ?? [];
    const fresh = periods.slice(row.sim.pushed);
    row.sim.pushed = periods.length;
    Object.assign(row.data, { kwh: sumKwh(periods), total_cost: costs(row, r, row.sim.cursorMs).total_cost, last_updated: iso(nowMs) });
    const body = {
      kwh: row.data.kwh,
      ...(fresh.length ? { charging_periods: fresh } : {}),
      total_cost: row.data.total_cost,
      last_updated: row.data.last_updated,
    };
    out.push(...sessionMessages(row, 'PATCH', body, new Date(nowMs)));
  }

  async function finish(tx: Queryable, row: Row, r: Resolved, reason: EndReason, endMs: number, nowMs: number, out: OutboxMessage[]): Promise<void> {
    closeOpen(row, r);
    const start = row.data.start_date_time;
    const periods = row.data.charging_periods?.length
      ? row.data.charging_periods
      : [{ start_date_time: start, dimensions: [{ type: 'ENERGY' as const, volume: 0 }], ...(r.tariff ? { tariff_id: r.tariff.id } : {}) }];
    row.data.charging_periods = periods;
    const fresh = periods.slice(row.sim.pushed);
    row.sim.pushed = periods.length;
    const end = Math.max(endMs, Date.parse(start));
    const priced = priceSession({
      tariff: r.tariff,
      currency: row.data.currency,
      timeZone: row.sim.timeZone,
      start: new Date(start),
      end: new Date(end),
      periods: cdrPeriods(periods),
    });
    row.status = 'COMPLETED';
    Object.assign(row.data, {
      status: 'COMPLETED',
      end_date_time: iso(end),
      kwh: priced.total_energy,
      total_cost: priced.total_cost,
      last_updated: iso(nowMs),
    });
    out.push(
      ...sessionMessages(
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
    const { location, evse, connector } = r;
    const cdr: Cdr = {
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
    await store.insertCdr(tx, row.peerId, cdr);
    out.push(...cdrMessage(row, cdr, new Date(nowMs)));
  }

  /** When a session needs its next pass (wall ms): activation, the next progress push, or a requested stop. */
  function nextDueMs(row: Row): number {
    const regular = row.status === 'PENDING' ? row.sim.activateAtMs : row.sim.nextPushAtMs;
    return row.sim.stop ? Math.min(regular, row.sim.stop.requestedAtMs + options.commandDelayMs) : regular;
  }

  /** A session whose EVSE is gone from the network (restarted with other `locations`/`seed`) is declared INVALID. */
  function invalidate(row: Row, nowMs: number, out: OutboxMessage[]): void {
    log('warn', 'a session refers to an EVSE that is not in the network any more; declared INVALID', { session: row.id, evse: row.evseUid });
    row.status = 'INVALID';
    Object.assign(row.data, { status: 'INVALID', last_updated: iso(nowMs) });
    out.push(...sessionMessages(row, 'PATCH', { status: 'INVALID', last_updated: row.data.last_updated }, new Date(nowMs)));
  }

  /** One pass over an open session: post a due stop result, then activate, charge, push progress, or finish. */
  async function runSession(id: string): Promise<void> {
    const before = await store.findSession<SimState>(db, id);
    if (!before || (before.status !== 'PENDING' && before.status !== 'ACTIVE')) return;
    const stopAtMs = before.sim.stop ? before.sim.stop.requestedAtMs + options.commandDelayMs : undefined;
    const stopDue = stopAtMs !== undefined && clock.now().getTime() >= stopAtMs;
    if (stopDue) {
      const peer = peers.get(before.peerId);
      for (const url of before.sim.stop?.responseUrls ?? []) if (peer) await push.postCommandResult(peer, url, { result: 'ACCEPTED' });
    }
    const outcome = await db.transaction(async (tx) => {
      const row = await store.lockOpenSession<SimState>(tx, id);
      if (!row) return undefined;
      const nowMs = clock.now().getTime();
      const out: OutboxMessage[] = [];
      let status: EvseStatus | undefined;
      let r: Resolved | undefined;
      try {
        r = resolve(row.locationId, row.evseUid, row.data.connector_id, row.sim.tariff);
      } catch {
        invalidate(row, nowMs, out);
      }
      const stopEndMs = stopDue && stopAtMs !== undefined ? simAt(row.sim, stopAtMs) : undefined;
      if (r && row.status === 'PENDING' && nowMs >= row.sim.activateAtMs && !(stopAtMs !== undefined && stopDue && stopAtMs < row.sim.activateAtMs)) {
        activate(row, nowMs, out);
        status = 'CHARGING';
      }
      if (r && row.status === 'ACTIVE') {
        const ended = advance(row, r, stopEndMs ?? simAt(row.sim, nowMs));
        if (ended) await finish(tx, row, r, ended, row.sim.cursorMs, nowMs, out);
        else if (stopEndMs !== undefined) await finish(tx, row, r, 'STOPPED', Math.max(stopEndMs, row.sim.cursorMs), nowMs, out);
        else if (nowMs >= row.sim.nextPushAtMs) {
          progress(row, r, nowMs, out);
          row.sim.nextPushAtMs = Math.max(row.sim.nextPushAtMs + options.sessionUpdateIntervalMs, nowMs + 1);
        }
      } else if (r && stopEndMs !== undefined) {
        await finish(tx, row, r, 'STOPPED', stopEndMs, nowMs, out);
      }
      if (row.status === 'COMPLETED') status = 'AVAILABLE';
      row.lastUpdated = new Date(row.data.last_updated);
      await store.saveSession(tx, row);
      await store.enqueue(tx, out, new Date(nowMs));
      return { row, status, r, messages: out.length };
    });
    if (!outcome) return;
    const open = outcome.row.status === 'PENDING' || outcome.row.status === 'ACTIVE';
    if (open) dueAt.set(id, nextDueMs(outcome.row));
    else {
      dueAt.delete(id);
      occupied.delete(evseKey(before.locationId, before.evseUid));
    }
    if (outcome.messages > 0) deps.kickOutbox();
    if (outcome.status && outcome.r) await deps.setEvseStatus(outcome.r.location, outcome.r.evse, outcome.status);
  }

  // -------------------------------------------------------------------------
  // Starting a session

  async function createSession(peer: Peer, p: PendingStart, r: Resolved): Promise<void> {
    const now = clock.now();
    const nowMs = now.getTime();
    const { location, evse, connector } = r;
    const tariff = network.tariffFor(location, connector, now);
    const model = CARS[Math.floor(random() * CARS.length)] as (typeof CARS)[number];
    const sim: SimState = {
      anchorMs: nowMs,
      compression: options.timeCompression,
      cursorMs: nowMs,
      activateAtMs: nowMs + options.activationDelayMs,
      nextPushAtMs: nowMs + options.activationDelayMs + options.sessionUpdateIntervalMs,
      car: { ...model, soc: round(0.1 + random() * 0.4, 3) },
      powerType: connector.power_type,
      evseKw: connectorPowerKw(connector),
      voltage: connector.max_voltage,
      timeZone: location.time_zone,
      tariff: tariff ? { country_code: tariff.country_code, party_id: tariff.party_id, id: tariff.id } : null,
      kwh: 0,
      open: null,
      pushed: 0,
      stop: null,
      autoEndAfterS: null,
    };
    const { token } = p.command;
    const data: Session = {
      country_code: location.country_code,
      party_id: location.party_id,
      id: randomUUID(),
      start_date_time: iso(nowMs),
      kwh: 0,
      cdr_token: { country_code: token.country_code, party_id: token.party_id, uid: token.uid, type: token.type, contract_id: token.contract_id },
      auth_method: 'COMMAND',
      ...(p.command.authorization_reference ? { authorization_reference: p.command.authorization_reference } : {}),
      location_id: location.id,
      evse_uid: evse.uid,
      connector_id: connector.id,
      currency: tariff?.currency ?? countryByAlpha3(location.country)?.currency ?? 'EUR',
      status: 'PENDING',
      last_updated: iso(nowMs),
    };
    const row: Row = {
      id: data.id,
      peerId: peer.id,
      locationId: location.id,
      evseUid: evse.uid,
      status: 'PENDING',
      scenario: p.scenario ?? null,
      data,
      sim,
      lastUpdated: now,
    };
    await db.transaction(async (tx) => {
      await store.insertSession(tx, row, now);
      await store.enqueue(tx, sessionMessages(row, 'PUT', data, now), now);
    });
    dueAt.set(row.id, sim.activateAtMs);
    deps.kickOutbox();
  }

  /** The charge point's answer to an accepted START_SESSION, then (usually) the session. */
  async function completeStart(p: PendingStart): Promise<void> {
    const key = evseKey(p.locationId, p.evseUid);
    try {
      const peer = peers.get(p.peerId);
      const ref = network.evse(p.locationId, p.evseUid);
      const connector = ref?.evse.connectors.find((c) => c.id === p.connectorId);
      if (!peer || !ref || !connector) return;
      const status = network.status(ref.location, ref.evse);
      let result: CommandResultType = 'ACCEPTED';
      if (!p.holds || OCCUPIED_STATUSES.has(status)) result = 'EVSE_OCCUPIED';
      else if (status !== 'AVAILABLE') result = 'EVSE_INOPERATIVE';
      const message = result === 'ACCEPTED' ? undefined : `the EVSE is ${status.toLowerCase()}`;
      await push.postCommandResult(peer, p.command.response_url, { result, ...(message ? { message: text(message) } : {}) });
      if (result !== 'ACCEPTED' || p.scenario === 'NOSTART') return;
      await createSession(peer, p, { ...ref, connector, tariff: undefined });
      p.holds = false; // the session holds the EVSE now
    } finally {
      if (p.holds) occupied.delete(key);
    }
  }

  return {
    /** Loads the EVSEs held by open sessions (after a restart). */
    async init(): Promise<void> {
      for (const id of await store.openSessionIds(db)) {
        const row = await store.findSession<SimState>(db, id);
        if (row) occupied.add(evseKey(row.locationId, row.evseUid));
      }
    },

    isOccupied: (locationId: string, evseUid: string) => occupied.has(evseKey(locationId, evseUid)),

    /** START_SESSION: the synchronous CommandResponse, or 'hang' for an EVSE whose scenario never answers. */
    async startSession(peer: Peer, body: unknown): Promise<CommandResponse | 'hang'> {
      const parsed = parseStartSession(body);
      if (!parsed.ok) throw invalidParameters(`invalid StartSession: ${parsed.errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`);
      const command = parsed.value;
      const location = network.location(command.location_id);
      if (!location) throw new OcpiError(404, OCPI_STATUS.unknownLocation, `unknown location ${command.location_id}`);
      const evses = location.evses ?? [];
      const evse = command.evse_uid
        ? evses.find((e) => e.uid === command.evse_uid)
        : evses.find((e) => !scenarioOf(e.evse_id) && network.status(location, e) === 'AVAILABLE' && !occupied.has(evseKey(location.id, e.uid)));
      if (command.evse_uid && !evse) throw new OcpiError(404, OCPI_STATUS.unknownLocation, `unknown EVSE ${command.evse_uid} at location ${location.id}`);
      if (!evse) return response('REJECTED', 'no EVSE of this location is available');
      const connector = command.connector_id ? evse.connectors.find((c) => c.id === command.connector_id) : evse.connectors[0];
      if (!connector) throw new OcpiError(404, OCPI_STATUS.unknownLocation, `unknown connector ${command.connector_id} of EVSE ${evse.uid}`);
      const scenario = scenarioOf(evse.evse_id);
      if (scenario === 'TIMEOUT') return 'hang';
      if (scenario === 'REJECT') return response('REJECTED', 'the charge point rejected the start (scenario REJECT)');
      if (!evse.capabilities?.includes('REMOTE_START_STOP_CAPABLE')) return response('NOT_SUPPORTED', 'this EVSE cannot be started remotely');
      if (scenario === 'NORESULT') return response('ACCEPTED');
      const key = evseKey(location.id, evse.uid);
      const holds = !occupied.has(key);
      occupied.add(key);
      pending.push({
        dueAtMs: clock.now().getTime() + options.commandDelayMs,
        peerId: peer.id,
        command,
        locationId: location.id,
        evseUid: evse.uid,
        connectorId: connector.id,
        scenario,
        holds,
      });
      return response('ACCEPTED');
    },

    /** STOP_SESSION: the synchronous CommandResponse; the stop itself happens on the next pass after `commandDelayMs`. */
    async stopSession(peer: Peer, body: unknown): Promise<CommandResponse> {
      const parsed = parseStopSession(body);
      if (!parsed.ok) throw invalidParameters(`invalid StopSession: ${parsed.errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`);
      const command = parsed.value;
      const found = await store.findSession<SimState>(db, command.session_id);
      if (!found || found.peerId !== peer.id) return response('UNKNOWN_SESSION', `unknown session ${command.session_id}`);
      if (found.scenario === 'STOPREJECT' && found.status !== 'COMPLETED')
        return response('REJECTED', 'the charge point rejected the stop (scenario STOPREJECT)');
      const accepted = await db.transaction(async (tx) => {
        const row = await store.lockOpenSession<SimState>(tx, command.session_id);
        if (!row) return false;
        row.sim.stop = row.sim.stop ?? { requestedAtMs: clock.now().getTime(), responseUrls: [] };
        row.sim.stop.responseUrls.push(command.response_url);
        await store.saveSession(tx, row);
        dueAt.set(row.id, nextDueMs(row));
        return true;
      });
      return accepted ? response('ACCEPTED') : response('REJECTED', 'the session is already completed');
    },

    /** Starts what is due: charge point answers to starts, and a pass over every open session not already being worked on. */
    async tick(): Promise<void> {
      const nowMs = clock.now().getTime();
      const due = pending.filter((p) => p.dueAtMs <= nowMs);
      pending = pending.filter((p) => p.dueAtMs > nowMs);
      for (const p of due) track(completeStart(p));
      if (listing) return;
      listing = true;
      try {
        for (const id of await store.openSessionIds(db)) {
          if (busy.has(id) || (dueAt.get(id) ?? 0) > nowMs) continue;
          busy.add(id);
          track(runSession(id).finally(() => busy.delete(id)));
        }
      } finally {
        listing = false;
      }
    },

    /** Settles when every task started so far has finished. */
    async idle(): Promise<void> {
      while (tasks.size > 0) await Promise.allSettled([...tasks]);
    },
  };
}

export type Simulation = ReturnType<typeof createSimulation>;
