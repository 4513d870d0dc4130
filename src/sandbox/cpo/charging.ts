// How a simulated session charges (the model is described in simulation.ts):
// the cars, the charging power and current, the simulation steps and the
// charging periods they add up to, and what the session costs so far. Pure
// functions of the session's row and its resolved EVSE and tariff.
import type { OcpiConnector } from '../../ocpi-protocol/locations-tariffs.ts';
import { type ChargingPeriod, SESSION_ONLY_DIMENSIONS } from '../../ocpi-protocol/sessions.ts';
import { type PricingContext, priceSession, pricingSignature, tariffThresholds } from '../../pricing/tariff-engine.ts';
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
export const cdrPeriods = (periods: readonly ChargingPeriod[]): ChargingPeriod[] =>
  periods.map((p) => ({ ...p, dimensions: p.dimensions.filter((d) => !sessionOnly.has(d.type)) }));

export const sumKwh = (periods: readonly ChargingPeriod[]) =>
  round(
    periods.reduce((sum, p) => sum + (p.dimensions.find((d) => d.type === 'ENERGY')?.volume ?? 0), 0),
    3,
  );

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

export function closeOpen(row: Row, r: Resolved): void {
  const open = row.sim.open;
  if (!open) return;
  row.sim.open = null;
  if (open.chargingMs <= 0) return;
  row.data.charging_periods = [...(row.data.charging_periods ?? []), periodOf(open, row.sim.car.soc * 100, r.tariff?.id)];
}

export function costs(row: Row, r: Resolved, endMs: number) {
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
export function advance(row: Row, r: Resolved, targetMs: number): EndReason | undefined {
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
