// How a simulated session charges (the model is described in simulation.ts):
// the cars, the charging power and current, the meter steps and the charging
// periods they add up to, and what the session costs so far (billing.ts, the
// sandbox CPO's own billing, booked step by step). Pure functions of the
// session's row and its resolved EVSE and tariff.
//
// Time is the clock's, never ahead of it: a step of `ms` milliseconds is `ms`
// of charging time (TIME, PARKING_TIME, timestamps). Only the energy is
// accelerated: the car takes `compression` times what its power would charge
// in that time (power and current are reported as the car draws them).
import Big from 'big.js';
import type { OcpiConnector } from '../../ocpi-protocol/locations-tariffs.ts';
import { type ChargingPeriod, SESSION_ONLY_DIMENSIONS } from '../../ocpi-protocol/sessions.ts';
import { type Active, activeElements, activeKey, type Charges, charges, type Ledger, newLedger, record, thresholds } from './billing.ts';
import { type Car, type EndReason, iso, type OpenPeriod, type Resolved, type Row, round, type SimState } from './simulation-context.ts';

export const CARS: readonly Omit<Car, 'soc'>[] = [
  { model: 'city car', capacityKwh: 42, maxAcKw: 7.4, maxDcKw: 50 },
  { model: 'compact', capacityKwh: 58, maxAcKw: 11, maxDcKw: 120 },
  { model: 'family SUV', capacityKwh: 77, maxAcKw: 11, maxDcKw: 175 },
  { model: 'saloon', capacityKwh: 100, maxAcKw: 22, maxDcKw: 250 },
];
const FULL_KWH = 0.0005;
const MAX_STEPS_PER_RUN = 200_000;

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

/**
 * The meter's register: whole Wh charged in the session. Charging periods report ENERGY from it and billing books
 * it, so the periods' volumes add up to exactly what was billed (the epsilon absorbs the float sum's error).
 */
export const registerWh = (kwh: number) => Math.floor(kwh * 1000 + 1e-6);

/** Milliseconds as hours, to 6 decimals rounded half up exactly (a float's toFixed rounds 0.1512275 down). */
export const hoursOf = (ms: number) => Number(new Big(ms).div(3_600_000).round(6, Big.roundHalfUp).toFixed(6));

function periodOf(open: OpenPeriod, sim: SimState, tariffId: string | undefined): ChargingPeriod {
  const energy = open.startWh === undefined ? round(open.energyKwh, 3) : (registerWh(sim.kwh) - open.startWh) / 1000;
  const hours = hoursOf(open.chargingMs);
  const dimensions: ChargingPeriod['dimensions'] = open.idle
    ? [
        { type: 'ENERGY', volume: energy },
        { type: 'PARKING_TIME', volume: hours },
      ]
    : [
        { type: 'ENERGY', volume: energy },
        { type: 'TIME', volume: hours },
        { type: 'MAX_POWER', volume: round(open.maxKw, 2) },
        { type: 'MIN_POWER', volume: round(open.minKw, 2) },
        { type: 'MAX_CURRENT', volume: round(open.maxA, 1) },
        { type: 'MIN_CURRENT', volume: round(open.minA, 1) },
      ];
  dimensions.push({ type: 'STATE_OF_CHARGE', volume: round(sim.car.soc * 100, 1) });
  return { start_date_time: iso(open.startMs), dimensions, ...(tariffId ? { tariff_id: tariffId } : {}) };
}

const sessionOnly = new Set<string>(SESSION_ONLY_DIMENSIONS);
export const cdrPeriods = (periods: readonly ChargingPeriod[]): ChargingPeriod[] =>
  periods.map((p) => ({ ...p, dimensions: p.dimensions.filter((d) => !sessionOnly.has(d.type)) }));

export function closeOpen(row: Row, r: Resolved): void {
  const open = row.sim.open;
  if (!open) return;
  row.sim.open = null;
  if (open.chargingMs <= 0) return;
  row.data.charging_periods = [...(row.data.charging_periods ?? []), periodOf(open, row.sim, r.tariff?.id)];
}

/** The session's ledger (billing.ts), started with its first booking. */
export function ledgerOf(sim: SimState): Ledger {
  sim.ledger ??= newLedger();
  return sim.ledger;
}

/** Energy charged so far, kWh: the register. */
export const chargedKwh = (sim: SimState) => registerWh(sim.kwh) / 1000;

/** What the session costs so far (or in all, once it ended): the sandbox CPO's own billing of its ledger. */
export function costs(row: Row, r: Resolved): Charges {
  return charges(r.tariff, row.sim.ledger ?? newLedger(), row.data.currency);
}

interface Step {
  ms: number;
  /** Power drawn during the step, kW (0: idle), and the energy it charges. */
  powerKw: number;
  energyKwh: number;
}

/**
 * One meter step from the cursor: measures (power to 0.01 kW, current to 0.1 A), books the step under the
 * elements active at its start, and adds it to the open charging period, closing that one first when the active
 * elements (or charging/idle) changed.
 */
function meterStep(row: Row, r: Resolved, step: Step): void {
  const sim = row.sim;
  const charging = step.powerKw > 0;
  const powerKw = round(step.powerKw, 2);
  const amps = charging ? round(currentA(sim, step.powerKw), 1) : 0;
  const before = registerWh(sim.kwh);
  const measure = {
    atMs: sim.cursorMs,
    sinceStartMs: sim.cursorMs - Date.parse(row.data.start_date_time),
    registerWh: before,
    powerKw,
    currentA: amps,
    charging,
  };
  const active: Active | undefined = r.tariff ? activeElements(r.tariff, sim.timeZone, measure) : undefined;
  const signature = active ? activeKey(active) : charging ? 'C' : 'I';
  if (sim.open && sim.open.signature !== signature) closeOpen(row, r);
  sim.kwh += step.energyKwh;
  sim.car.soc = Math.min(1, sim.car.soc + step.energyKwh / sim.car.capacityKwh);
  if (active) record(ledgerOf(sim), active, { wh: registerWh(sim.kwh) - before, ms: step.ms });
  const open = sim.open ?? {
    startMs: sim.cursorMs,
    startWh: before,
    energyKwh: 0,
    chargingMs: 0,
    idle: !charging,
    maxKw: powerKw,
    minKw: powerKw,
    maxA: amps,
    minA: amps,
    signature,
  };
  open.energyKwh += step.energyKwh;
  open.chargingMs += step.ms;
  open.maxKw = Math.max(open.maxKw, powerKw);
  open.minKw = Math.min(open.minKw, powerKw);
  open.maxA = Math.max(open.maxA, amps);
  open.minA = Math.min(open.minA, amps);
  sim.open = open;
  sim.cursorMs += step.ms;
}

/** The end of a step from the cursor: the next whole minute (time-of-day bounds), `limitMs`, or a duration bound. */
function stepEnd(sim: SimState, startMs: number, limitMs: number, sinceStartMs: readonly number[]): number {
  let end = Math.min(limitMs, (Math.floor(sim.cursorMs / 60_000) + 1) * 60_000);
  const nextDuration = sinceStartMs.map((d) => startMs + d).find((at) => at > sim.cursorMs);
  if (nextDuration !== undefined) end = Math.min(end, nextDuration);
  return end;
}

/** The energy accelerated, never the clock: kW drawn for `ms` on the clock charges `compression` times kW x ms. */
const kwhIn = (sim: SimState, powerKw: number, ms: number) => (powerKw * ms * sim.compression) / 3_600_000;
/** The clock time (ms) in which `kwh` is charged at `powerKw`, accelerated; rounded up. */
const msFor = (sim: SimState, powerKw: number, kwh: number) => Math.ceil((kwh * 3_600_000) / (powerKw * sim.compression));

/**
 * When a scenario's car stops by itself (clock ms): after as much charging as `autoEndAfterS` seconds at its
 * real power would give, i.e. `autoEndAfterS / compression` seconds on the clock.
 */
function autoEndMs(sim: SimState, startMs: number): number {
  return sim.autoEndAfterS === null ? Number.POSITIVE_INFINITY : startMs + Math.round((sim.autoEndAfterS * 1000) / sim.compression);
}

/** Charges up to clock time `targetMs` (never beyond it: no timestamp of the session runs ahead); says why the session ended, if it did. */
export function advance(row: Row, r: Resolved, targetMs: number): EndReason | undefined {
  const sim = row.sim;
  const startMs = Date.parse(row.data.start_date_time);
  const bounds = thresholds(r.tariff);
  const autoEnd = autoEndMs(sim, startMs);
  // A step charges at most a minute's worth of energy, as the power curve (tapering above 80 %) was measured before.
  const curveStepMs = Math.max(1, Math.floor(60_000 / sim.compression));
  for (let steps = 0; sim.cursorMs < targetMs && steps < MAX_STEPS_PER_RUN; steps++) {
    if (sim.cursorMs >= autoEnd) return 'INTERRUPTED';
    const remainingKwh = sim.car.capacityKwh * (1 - sim.car.soc);
    if (remainingKwh <= FULL_KWH) return 'FULL';
    const powerKw = chargingPowerKw(sim);
    let end = Math.min(stepEnd(sim, startMs, Math.min(targetMs, autoEnd), bounds.sinceStartMs), sim.cursorMs + curveStepMs);
    // A kWh bound: end the step once the register reaches it.
    const nextWh = bounds.wh.find((wh) => wh > registerWh(sim.kwh));
    if (nextWh !== undefined) end = Math.min(end, sim.cursorMs + msFor(sim, powerKw, (nextWh - sim.kwh * 1000) / 1000));
    end = Math.max(sim.cursorMs + 1, Math.min(end, sim.cursorMs + msFor(sim, powerKw, remainingKwh)));
    const ms = end - sim.cursorMs;
    meterStep(row, r, { ms, powerKw, energyKwh: Math.min(remainingKwh, kwhIn(sim, powerKw, ms)) });
  }
  if (sim.cursorMs >= autoEnd) return 'INTERRUPTED';
  if (sim.car.capacityKwh * (1 - sim.car.soc) <= FULL_KWH) return 'FULL';
  return undefined;
}

/**
 * The EV stays connected without charging until clock time `untilMs` (PARKING_TIME), in steps that end at
 * whole minutes and duration bounds like charging's. The simulation does not use it yet (its EVs leave when they
 * stop charging); test/cpo-cdr-pricing.property.test.ts bills parking through it.
 */
export function idle(row: Row, r: Resolved, untilMs: number): void {
  const startMs = Date.parse(row.data.start_date_time);
  const bounds = thresholds(r.tariff);
  for (let steps = 0; row.sim.cursorMs < untilMs && steps < MAX_STEPS_PER_RUN; steps++) {
    meterStep(row, r, { ms: stepEnd(row.sim, startMs, untilMs, bounds.sinceStartMs) - row.sim.cursorMs, powerKw: 0, energyKwh: 0 });
  }
}
