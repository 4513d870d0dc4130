// Random EVSE status changes across the network, at a set rate: other drivers
// arrive and leave, chargers fail and are repaired. Each change goes to the
// eMSPs as a PATCH of the EVSE (push.ts). EVSEs with one of our sessions (or a
// start in progress) and scenario EVSEs are never picked.
import type { EvseStatus, OcpiEvse, OcpiLocation } from '../../ocpi-protocol/locations-tariffs.ts';
import type { Network } from './network.ts';

/** Plausible next statuses, with weights. PLANNED and REMOVED EVSEs stay as they are. */
const TRANSITIONS: Partial<Record<EvseStatus, readonly (readonly [EvseStatus, number])[]>> = {
  AVAILABLE: [
    ['CHARGING', 70],
    ['BLOCKED', 10],
    ['RESERVED', 5],
    ['OUTOFORDER', 8],
    ['INOPERATIVE', 4],
    ['UNKNOWN', 3],
  ],
  CHARGING: [
    ['AVAILABLE', 80],
    ['BLOCKED', 15],
    ['OUTOFORDER', 5],
  ],
  BLOCKED: [
    ['AVAILABLE', 80],
    ['CHARGING', 20],
  ],
  RESERVED: [
    ['CHARGING', 60],
    ['AVAILABLE', 40],
  ],
  OUTOFORDER: [
    ['AVAILABLE', 85],
    ['INOPERATIVE', 15],
  ],
  INOPERATIVE: [
    ['AVAILABLE', 85],
    ['OUTOFORDER', 15],
  ],
  UNKNOWN: [
    ['AVAILABLE', 90],
    ['OUTOFORDER', 10],
  ],
};

/** At most this many changes in one pass, however long the pause before it. */
const MAX_PER_PASS = 1000;

export function nextStatus(current: EvseStatus, random: () => number): EvseStatus | undefined {
  const options = TRANSITIONS[current];
  if (!options) return undefined;
  const total = options.reduce((sum, [, weight]) => sum + weight, 0);
  let pick = random() * total;
  for (const [status, weight] of options) {
    pick -= weight;
    if (pick < 0) return status;
  }
  return options[options.length - 1]?.[0];
}

export interface StatusChangesDeps {
  network: Network;
  /** Changes per second across the network; 0 turns them off. */
  perSecond: number;
  random: () => number;
  /** Whether this EVSE may change now (not held by a session; room to push). */
  mayChange: (location: OcpiLocation, evse: OcpiEvse) => boolean;
  apply: (location: OcpiLocation, evse: OcpiEvse, status: EvseStatus) => Promise<void>;
}

export function createStatusChanges(deps: StatusChangesDeps) {
  let lastMs: number | undefined;
  let budget = 0;
  return {
    /** Makes the changes due since the previous pass; returns how many were made. */
    async pass(nowMs: number): Promise<number> {
      if (deps.perSecond <= 0) return 0;
      if (lastMs === undefined || nowMs < lastMs) {
        lastMs = nowMs;
        return 0;
      }
      budget += ((nowMs - lastMs) / 1000) * deps.perSecond;
      lastMs = nowMs;
      const count = Math.min(Math.floor(budget), MAX_PER_PASS);
      budget -= Math.floor(budget);
      let made = 0;
      for (let i = 0; i < count; i++) {
        const ref = deps.network.randomEvse(deps.random);
        if (!ref || !deps.mayChange(ref.location, ref.evse)) continue;
        const next = nextStatus(deps.network.status(ref.location, ref.evse), deps.random);
        if (!next) continue;
        await deps.apply(ref.location, ref.evse, next);
        made++;
      }
      return made;
    },
  };
}
