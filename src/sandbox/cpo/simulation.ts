// The charging simulation behind the Commands Receiver: START_SESSION and
// STOP_SESSION, the charge point's answers, and each session from PENDING to
// COMPLETED with its CDR.
//
// Time: every timestamp is the clock's (start_date_time, charging periods,
// end_date_time, last_updated), so none is ever in the future and a session's
// duration grows with real time. Only energy is accelerated: the car charges
// timeCompression times what its power gives in that time (a session that
// would take an hour fills in a minute at 60). Time-based tariff components
// (TIME, PARKING_TIME) bill the real seconds.
//
// Energy: power = min(EVSE connector power, the car's AC or DC limit), tapering
// linearly above 80 % state of charge (to 8 % of it near 100 %); the session
// ends when the car is full, on STOP_SESSION, or when a scenario says so.
// Simulation steps end at whole minutes and at the tariff's duration and
// energy thresholds; a new charging period starts whenever the applicable
// tariff elements change, and at every session update pushed to the eMSP.
//
// Where each part lives: simulation-context.ts (the options, the state kept
// between passes, a session's SimState), commands.ts (START_SESSION,
// STOP_SESSION, the charge point's answers, the new session),
// session-pass.ts (one pass over an open session: activate, progress,
// finish with the CDR), charging.ts (the cars, power and charging periods),
// session-messages.ts (what is pushed to the eMSP). This file only assembles.
import type { CommandResponse } from '../../ocpi-protocol/commands.ts';
import { completeStart, startSession, stopSession } from './commands.ts';
import { runSession } from './session-pass.ts';
import { evseKey, type SimState, type SimulationContext, type SimulationDeps } from './simulation-context.ts';
import type { Peer } from './store.ts';
import * as store from './store.ts';

export { connectorPowerKw } from './charging.ts';
export type { SimState, SimulationDeps, SimulationOptions } from './simulation-context.ts';

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

export function createSimulation(deps: SimulationDeps) {
  const { db, clock, log, options } = deps;
  const ctx: SimulationContext = {
    ...deps,
    random: seededRandom(options.seed),
    pending: [],
    occupied: new Set<string>(),
    dueAt: new Map<string, number>(),
  };
  const { occupied, dueAt } = ctx;
  const busy = new Set<string>();
  const tasks = new Set<Promise<unknown>>();
  let listing = false;

  function track(promise: Promise<unknown>): void {
    const guarded = promise.catch((error: Error) => log('error', 'sandbox simulation task failed', { err: error.message, stack: error.stack }));
    tasks.add(guarded);
    void guarded.finally(() => tasks.delete(guarded));
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
    startSession: (peer: Peer, body: unknown): Promise<CommandResponse | 'hang'> => startSession(ctx, peer, body),

    /** STOP_SESSION: the synchronous CommandResponse; the stop itself happens on the next pass after `commandDelayMs`. */
    stopSession: (peer: Peer, body: unknown): Promise<CommandResponse> => stopSession(ctx, peer, body),

    /** Starts what is due: charge point answers to starts, and a pass over every open session not already being worked on. */
    async tick(): Promise<void> {
      const nowMs = clock.now().getTime();
      const due = ctx.pending.filter((p) => p.dueAtMs <= nowMs);
      ctx.pending = ctx.pending.filter((p) => p.dueAtMs > nowMs);
      for (const p of due) track(completeStart(ctx, p));
      if (listing) return;
      listing = true;
      try {
        for (const id of await store.openSessionIds(db)) {
          if (busy.has(id) || (dueAt.get(id) ?? 0) > nowMs) continue;
          busy.add(id);
          track(runSession(ctx, id).finally(() => busy.delete(id)));
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
