// The sandbox CPO network: a charge point operator platform that speaks OCPI
// 2.2.1 over HTTP to an eMSP exactly like a real operator. It owns the
// generated Europe-wide dataset (several CPO parties), serves Locations,
// Tariffs, Sessions and CDRs as a Sender, takes Commands and Tokens as a
// Receiver, simulates charging, and pushes EVSE statuses, Sessions and CDRs.
// Its state is in PostgreSQL (schema cpo_sandbox). It knows nothing of the
// eMSP it talks to. README.md: routes, scenario EVSEs, timing.

import type { AddressInfo } from 'node:net';
import type { ConnectionStatus } from '../../ocpi-protocol/hub-client-info.ts';
import { EVSE_STATUSES, type EvseStatus, type OcpiEvse, type OcpiLocation } from '../../ocpi-protocol/locations-tariffs.ts';
import type { PartyRef } from '../../ocpi-protocol/transport.ts';
import { backgroundFailures } from '../../platform/background.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { createBackgroundWork, sharedPass } from './background-work.ts';
import { createNetwork, type Network } from './network.ts';
import { createPeers, type Log, type RegisterWithOptions } from './peers.ts';
import { createPush, type Push } from './push.ts';
import { createQuirks, type Quirk } from './quirks.ts';
import { configurationRoutes } from './routes-configuration.ts';
import { moduleRoutes, type PageLimits } from './routes-modules.ts';
import { BASE_PATH, createServer } from './server.ts';
import { createSimulation, type SimulationOptions, seededRandom } from './simulation.ts';
import { createStatusChanges } from './status-changes.ts';
import * as store from './store.ts';
import { createTopology, type Topology } from './topology.ts';
import { PERSONALITIES, type Personality, wireFor } from './wire.ts';

export type { RegisterWithOptions, Registration } from './peers.ts';
export { parseQuirks, QUIRKS, type Quirk, quirkPicks } from './quirks.ts';
export { SCENARIOS, type Scenario, scenarioEvseId, scenarioLocationId, scenarioOf } from './scenarios.ts';
export type { OutboxRecord, Peer } from './store.ts';
export { DEFAULT_HUB_PARTY, TOPOLOGIES, type Topology } from './topology.ts';

export const CPO_SANDBOX_DEFAULTS = {
  timeCompression: 60,
  statusChangesPerSecond: 1,
  scenarioParties: 1,
  tickMs: 100,
  commandDelayMs: 300,
  activationDelayMs: 700,
  sessionUpdateIntervalMs: 2_000,
  commandTimeoutSeconds: 30,
  lateCdrDelayMs: 30_000,
  interruptAfterSeconds: 300,
  noUpdatesEndAfterSeconds: 600,
  hangMs: 60_000,
  requestTimeoutMs: 10_000,
  retryBaseMs: 1_000,
  giveUpAfterMs: 24 * 3_600_000,
  maxStatusPushesInFlight: 64,
  pageLimits: { locations: 500, tariffs: 500, sessions: 100, cdrs: 100 } satisfies PageLimits,
} as const;

export interface CpoSandboxOptions {
  db: Database;
  clock: Clock;
  /** Size of the generated dataset (locations), and its seed: same values, same network. */
  locations: number;
  seed: number;
  /** How much faster than its power a car charges (60: a minute's energy per second); timestamps stay on the clock. */
  timeCompression?: number;
  /** Random EVSE status changes per second across the network, pushed to the eMSPs; 0 turns them off. */
  statusChangesPerSecond?: number;
  /** How many parties (the generator's first) get a scenario location. */
  scenarioParties?: number;
  /** Period of the background passes (simulation, status changes, outbox), ms. */
  tickMs?: number;
  /** Time the charge point takes to answer a command, ms. */
  commandDelayMs?: number;
  /** From session creation (PENDING) to ACTIVE, ms. */
  activationDelayMs?: number;
  /** Period of the Session PATCHes while charging, ms. */
  sessionUpdateIntervalMs?: number;
  /** CommandResponse.timeout, seconds. */
  commandTimeoutSeconds?: number;
  /** Scenario LATECDR: delay of the CDR, ms. */
  lateCdrDelayMs?: number;
  /** Scenario INTERRUPT: the car stops after this many seconds' worth of charging (on the clock: divided by timeCompression). */
  interruptAfterSeconds?: number;
  /** Scenario NOUPDATES: the session ends by itself after this many seconds' worth of charging (divided by timeCompression). */
  noUpdatesEndAfterSeconds?: number;
  /** Scenario TIMEOUT: how long the START_SESSION request is held before its connection is dropped, ms. */
  hangMs?: number;
  /** Outbound calls: per-attempt timeout, first retry delay (doubling), give-up age of a push. */
  requestTimeoutMs?: number;
  retryBaseMs?: number;
  giveUpAfterMs?: number;
  /** Largest page of each Sender interface. */
  pageLimits?: Partial<PageLimits>;
  /** Base URL advertised to peers (scheme://host:port) instead of the listening address. */
  publicUrl?: string;
  /**
   * The OCPI version the network speaks (its personality, wire.ts): '2.2.1' (default), or '2.1.1': it offers only
   * 2.1.1 in its versions, registers and handshakes in 2.1.1, serves and pushes 2.1.1 objects, takes 2.1.1 commands
   * and tokens, sends raw tokens and no routing headers; and, as 2.1.1 credentials name one party, it runs one
   * party (the generator's first).
   */
  ocpiVersion?: Personality;
  /** How many of the generator's parties the network hosts (its first ones; default all; a 2.1.1 network: 1). */
  parties?: number;
  /**
   * How the network presents its parties (topology.ts): 'platform' (default), one platform whose credentials list each
   * party as a CPO role; or 'hub', a roaming hub in front of its parties: its credentials name only the hub (role HUB),
   * it reports its parties through HubClientInfo (pushes ClientInfo, serves the list), relays what they send with their
   * party in OCPI-from, forwards commands to the party named in OCPI-to (only while CONNECTED) and relays Broadcast Pushes.
   */
  topology?: Topology;
  /** The hub's own party (topology 'hub'); default DE*HUB. */
  hubParty?: PartyRef;
  /** Serve HTTPS with this certificate instead of plain HTTP. */
  tls?: { cert: string; key: string };
  /** Imperfect data to send, as real CPOs do (quirks.ts; CPO_SANDBOX_QUIRKS): none by default. */
  quirks?: readonly Quirk[];
  log?: Log;
}

function personalityOf(options: CpoSandboxOptions): Personality {
  const version = options.ocpiVersion ?? '2.2.1';
  if (!(PERSONALITIES as readonly string[]).includes(version)) throw new RangeError(`ocpiVersion must be one of ${PERSONALITIES.join(', ')}`);
  return version;
}

/** The network's dataset; a 2.1.1 network runs one party (2.1.1 credentials name one), a platform or hub `parties` when given. */
function networkOptions(options: CpoSandboxOptions, personality: Personality) {
  const scenarioParties = options.scenarioParties ?? CPO_SANDBOX_DEFAULTS.scenarioParties;
  if (options.parties !== undefined && (!Number.isInteger(options.parties) || options.parties < 1)) throw new RangeError('parties must be a positive integer');
  if (personality === '2.1.1' && (options.parties ?? 1) !== 1) throw new RangeError('an OCPI 2.1.1 network runs one party (2.1.1 credentials name one)');
  if (options.topology === 'hub' && personality === '2.1.1') throw new RangeError('OCPI 2.1.1 has no hubs');
  const parties = personality === '2.1.1' ? 1 : options.parties;
  return { locations: options.locations, seed: options.seed, scenarioParties, ...(parties === undefined ? {} : { parties }) };
}

function positive(name: string, value: number, allowZero = false): number {
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0))
    throw new RangeError(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} number`);
  return value;
}

/** The settings checked before anything is built (the others are checked where they are used). */
function commonSettings(options: CpoSandboxOptions) {
  const d = CPO_SANDBOX_DEFAULTS;
  const timeCompression = positive('timeCompression', options.timeCompression ?? d.timeCompression);
  const statusChangesPerSecond = positive('statusChangesPerSecond', options.statusChangesPerSecond ?? d.statusChangesPerSecond, true);
  const tickMs = positive('tickMs', options.tickMs ?? d.tickMs);
  const requestTimeoutMs = positive('requestTimeoutMs', options.requestTimeoutMs ?? d.requestTimeoutMs);
  const commandTimeoutSeconds = Math.round(positive('commandTimeoutSeconds', options.commandTimeoutSeconds ?? d.commandTimeoutSeconds));
  const pageLimits: PageLimits = { ...d.pageLimits, ...options.pageLimits };
  for (const [name, value] of Object.entries(pageLimits)) positive(`pageLimits.${name}`, value);
  return { timeCompression, statusChangesPerSecond, tickMs, requestTimeoutMs, commandTimeoutSeconds, pageLimits };
}

function simulationOptions(options: CpoSandboxOptions, settings: ReturnType<typeof commonSettings>): SimulationOptions {
  const d = CPO_SANDBOX_DEFAULTS;
  return {
    timeCompression: settings.timeCompression,
    commandDelayMs: positive('commandDelayMs', options.commandDelayMs ?? d.commandDelayMs, true),
    activationDelayMs: positive('activationDelayMs', options.activationDelayMs ?? d.activationDelayMs, true),
    sessionUpdateIntervalMs: positive('sessionUpdateIntervalMs', options.sessionUpdateIntervalMs ?? d.sessionUpdateIntervalMs),
    commandTimeoutSeconds: settings.commandTimeoutSeconds,
    lateCdrDelayMs: positive('lateCdrDelayMs', options.lateCdrDelayMs ?? d.lateCdrDelayMs, true),
    interruptAfterSeconds: positive('interruptAfterSeconds', options.interruptAfterSeconds ?? d.interruptAfterSeconds),
    noUpdatesEndAfterSeconds: positive('noUpdatesEndAfterSeconds', options.noUpdatesEndAfterSeconds ?? d.noUpdatesEndAfterSeconds),
    seed: options.seed,
  };
}

/** Our base URL: `publicUrl` when given, else the listening address (known once listening). */
function sandboxAddress(publicUrl: string | undefined) {
  let baseUrl = publicUrl?.replace(/\/+$/, '');
  const base = () => {
    if (!baseUrl) throw new Error('the CPO sandbox is not listening yet');
    return baseUrl;
  };
  return {
    base,
    versionsUrl: () => `${base()}${BASE_PATH}/versions`,
    /** Records the listening address as our base URL, unless `publicUrl` was given. */
    listening(url: () => string): void {
      baseUrl ??= url();
    },
  };
}

/** Records an EVSE status change (in the network and the database) and pushes it to the eMSPs. */
async function recordEvseStatus(
  { db, clock, network, push }: { db: Database; clock: Clock; network: Network; push: Push },
  location: OcpiLocation,
  evse: OcpiEvse,
  status: EvseStatus,
): Promise<void> {
  const change = { location_id: location.id, evse_uid: evse.uid, status, last_updated: clock.now() };
  network.applyStatus(change);
  await store.saveEvseStatus(db, change);
  push.pushEvseStatus(location, network.viewEvse(location, evse));
}

/** How long after a registration a hub pushes its ClientInfo (the eMSP may still be storing our credentials). */
const CLIENT_INFO_DELAY_MS = 200;

/**
 * The network's face to eMSPs: how it presents its parties (topology.ts), its peers (credentials, registration) and its
 * outbound pushes. A hub pushes its ClientInfo to every eMSP that registers with it or that it registers with.
 */
async function createFace(
  options: CpoSandboxOptions,
  deps: { network: Network; log: Log; versionsUrl: () => string; requestTimeoutMs: number; personality: Personality; quirks: ReturnType<typeof createQuirks> },
) {
  const { db, clock } = options;
  const d = CPO_SANDBOX_DEFAULTS;
  const { network, log } = deps;
  const topology = createTopology({
    kind: options.topology ?? 'platform',
    clock,
    parties: network.parties,
    ...(options.hubParty ? { hubParty: options.hubParty } : {}),
  });
  let push: Push | undefined;
  const peers = createPeers({
    db,
    clock,
    network,
    log,
    versionsUrl: deps.versionsUrl,
    requestTimeoutMs: deps.requestTimeoutMs,
    wire: wireFor(deps.personality, network),
    topology,
    // After the eMSP's own bookkeeping of the handshake (it may still be storing our credentials when we answer it).
    onRegistered: (peer) => {
      if (topology.hub) setTimeout(() => void push?.pushClientInfo(topology.clientInfos(), peer), CLIENT_INFO_DELAY_MS).unref();
    },
  });
  await peers.refresh();
  push = createPush({
    db,
    clock,
    peers,
    log,
    requestTimeoutMs: deps.requestTimeoutMs,
    retryBaseMs: positive('retryBaseMs', options.retryBaseMs ?? d.retryBaseMs),
    giveUpAfterMs: positive('giveUpAfterMs', options.giveUpAfterMs ?? d.giveUpAfterMs),
    maxStatusPushesInFlight: d.maxStatusPushesInFlight,
    quirks: deps.quirks,
  });
  return { topology, peers, push };
}

export async function createCpoSandbox(options: CpoSandboxOptions) {
  const { db, clock } = options;
  const log: Log = options.log ?? (() => {});
  const outboxFailed = backgroundFailures(log, 'sandbox CPO outbox delivery failed');
  const simulationFailed = backgroundFailures(log, 'sandbox CPO simulation pass failed');
  const d = CPO_SANDBOX_DEFAULTS;
  const settings = commonSettings(options);
  const { tickMs, requestTimeoutMs, commandTimeoutSeconds, pageLimits } = settings;

  const personality = personalityOf(options);
  const network = createNetwork(networkOptions(options, personality));
  const quirks = createQuirks(options.quirks ?? []);
  for (const o of await store.loadEvseStatuses(db)) network.applyStatus(o);

  const address = sandboxAddress(options.publicUrl);
  const { base, versionsUrl } = address;

  const { topology, peers, push } = await createFace(options, { network, log, versionsUrl, requestTimeoutMs, personality, quirks });

  const setEvseStatus = (location: OcpiLocation, evse: OcpiEvse, status: EvseStatus) => recordEvseStatus({ db, clock, network, push }, location, evse, status);

  const background = createBackgroundWork(tickMs, () => push.deliverDue(), outboxFailed);

  const simulation = createSimulation({
    db,
    clock,
    network,
    peers,
    push,
    log,
    setEvseStatus,
    kickOutbox: background.kickOutbox,
    quirks,
    options: simulationOptions(options, settings),
  });
  await simulation.init();

  const statusChanges = createStatusChanges({
    network,
    perSecond: settings.statusChangesPerSecond,
    random: seededRandom(options.seed ^ 0x5bd1e995),
    mayChange: (location, evse) => !simulation.isOccupied(location.id, evse.uid) && push.hasStatusRoom(),
    apply: setEvseStatus,
  });

  /** One simulation pass: due command answers, open sessions, status changes. Overlapping calls share a pass. */
  const simulationPass = sharedPass(async () => {
    await simulation.tick();
    await statusChanges.pass(clock.now().getTime());
  }, simulationFailed);

  const serverDeps = { clock, peers, log, tls: options.tls, hangMs: positive('hangMs', options.hangMs ?? d.hangMs), addressable: topology.addressable };
  const server = createServer(serverDeps, (app, http) => {
    configurationRoutes({ clock, peers, baseUrl: base, topology })(app);
    moduleRoutes({ db, clock, network, simulation, pageLimits, commandTimeoutSeconds, baseUrl: base, quirks, wire: peers.wire, topology })(app, http);
  });

  return {
    /** The CPO parties of the network (each is a CPO role in our credentials). */
    parties: network.parties,
    /** The parties that have a scenario location. */
    scenarioParties: network.scenarioParties,
    /** 'platform' or 'hub' (topology.ts), and the hub's own party. */
    topology: topology.kind,
    hubParty: topology.hub,
    /** The network: locations, EVSEs and tariffs as served. */
    network,
    version: personality,

    get versionsUrl(): string {
      return versionsUrl();
    },

    /** Starts serving; resolves to our versions URL (what an eMSP needs, with a TOKEN_A, to register). */
    async listen(listenOptions: { port: number; host?: string }): Promise<string> {
      const host = listenOptions.host ?? '127.0.0.1';
      await server.app.listen({ port: listenOptions.port, host });
      const { port } = server.app.server.address() as AddressInfo;
      address.listening(() => `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`);
      return versionsUrl();
    },

    /** A registration token (CREDENTIALS_TOKEN_A) for one eMSP. */
    issueTokenA: (tokenOptions?: { pinnedCertificatePem?: string }) => peers.issueTokenA(tokenOptions),

    /** Registers with an eMSP (its versions URL and TOKEN_A), choosing OCPI 2.2.1. Call after listen(). */
    registerWith: (registerOptions: RegisterWithOptions) => peers.registerWith(registerOptions),

    /** Sets an EVSE's status by hand (an operator's console): stored, pushed to every registered eMSP. */
    async setEvseStatus(locationId: string, evseUid: string, status: EvseStatus): Promise<void> {
      const ref = network.evse(locationId, evseUid);
      if (!ref) throw new Error(`no EVSE ${evseUid} at location ${locationId}`);
      if (!(EVSE_STATUSES as readonly string[]).includes(status)) throw new RangeError(`unknown EVSE status ${status}`);
      await setEvseStatus(ref.location, ref.evse, status);
    },

    /** Every OCPI connection, whatever its state. */
    listPeers: () => peers.list(),

    /** A hub: sets a party's connection status and pushes its ClientInfo to every registered eMSP (awaited). */
    async setClientStatus(party: PartyRef, status: ConnectionStatus): Promise<void> {
      await push.pushClientInfo([topology.setStatus(party, status)]);
    },

    /** Which of our parties (CC*PID) received the token of this uid (pushed to that party, or relayed by the hub). */
    tokenReceivers: (uid: string) => store.tokenReceivers(db, uid),

    /** The outbox (session pushes and CDR posts), oldest first; of one session when given. */
    outbox: (sessionId?: string) => store.listOutbox(db, sessionId),

    /** Runs the simulation, status changes and outbox delivery every `tickMs` (the outbox also at once after a change). */
    startBackgroundWork: (): void => background.start(simulationPass.run),

    /** One pass of everything due, awaited (tests with a manual clock). */
    async runDueWork(): Promise<void> {
      await simulationPass.run();
      await simulation.idle();
      await background.deliverOutbox();
      await push.idle();
    },

    async close(): Promise<void> {
      background.stop();
      await server.close();
      await simulationPass.running();
      await simulation.idle();
      await background.outboxRunning();
      await push.idle();
    },
  };
}

export type CpoSandbox = Awaited<ReturnType<typeof createCpoSandbox>>;
