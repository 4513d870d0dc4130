// What every rule of the charging simulation is given: its dependencies and
// settings, and the state createSimulation (simulation.ts) keeps between
// passes, as one explicit object. The rules (commands.ts, session-pass.ts,
// charging.ts, session-messages.ts) take it as their first argument instead of
// closing over it.
import type { StartSession } from '../../ocpi-protocol/commands.ts';
import type { EvseStatus, OcpiConnector, OcpiEvse, OcpiLocation, OcpiTariff } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import type { Ledger } from './billing.ts';
import type { Network } from './network.ts';
import type { Log, Peers } from './peers.ts';
import type { Push } from './push.ts';
import type { Quirks } from './quirks.ts';
import type { Scenario } from './scenarios.ts';
import type { SessionRow } from './store.ts';

export interface SimulationOptions {
  /** How much faster than its power allows a car charges: energy per clock millisecond (never the clock itself). */
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
  /** Scenario INTERRUPT: seconds' worth of charging (at the car's power) before the car stops. */
  interruptAfterSeconds: number;
  /** Scenario NOUPDATES: seconds' worth of charging before the session ends by itself. */
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
  /** Imperfect data to send (CPO_SANDBOX_QUIRKS); none by default. */
  quirks?: Quirks;
  options: SimulationOptions;
}

export interface SimulationContext extends SimulationDeps {
  /** Picks the car model and the initial charge of each new session (seeded). */
  random: () => number;
  /** Accepted starts waiting for the charge point's answer. */
  pending: PendingStart[];
  /** EVSEs held by a start in progress or an open session. */
  occupied: Set<string>;
  /** When each open session needs its next pass (wall ms); a session not in it is due now (after a restart). */
  dueAt: Map<string, number>;
}

export interface Car {
  model: string;
  capacityKwh: number;
  /** State of charge, 0..1. */
  soc: number;
  maxAcKw: number;
  maxDcKw: number;
}

export interface OpenPeriod {
  startMs: number;
  /** The meter register (whole Wh) when the period started; absent in periods opened before it was kept. */
  startWh?: number;
  energyKwh: number;
  /** The period's length (charging, or idle when `idle`). */
  chargingMs: number;
  /** The EV is connected but not charging (PARKING_TIME). */
  idle?: boolean;
  maxKw: number;
  minKw: number;
  /** Current summed over the phases, A. */
  maxA: number;
  minA: number;
  signature: string;
}

/**
 * The simulation's own state of a session (column `sim`). Times ending in Ms are epoch ms on the clock: no
 * timestamp runs ahead of it. Only energy is accelerated, by `compression`.
 */
export interface SimState {
  /** Energy per clock millisecond, as a multiple of what the car's power gives. */
  compression: number;
  /** Time up to which the session has been simulated (at most the clock's now). */
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
  /** What the session used so far, per tariff component (billing.ts); absent until its first meter step. */
  ledger?: Ledger;
  /** How many of the session's charging periods have been pushed. */
  pushed: number;
  stop: { requestedAtMs: number; responseUrls: string[] } | null;
  /** The session ends by itself after as much charging as this many seconds at the car's power give (scenarios; on the clock: divided by `compression`). */
  autoEndAfterS: number | null;
}

export type Row = SessionRow<SimState>;
export type EndReason = 'STOPPED' | 'FULL' | 'INTERRUPTED';

export interface PendingStart {
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

export interface Resolved {
  location: OcpiLocation;
  evse: OcpiEvse;
  connector: OcpiConnector;
  tariff: OcpiTariff | undefined;
}

export const iso = (ms: number) => new Date(ms).toISOString();
export const round = (value: number, decimals: number) => Number(value.toFixed(decimals));
export const evseKey = (locationId: string, evseUid: string) => `${locationId}\u0000${evseUid}`;
export const text = (message: string) => [{ language: 'en', text: message }];
