// The Commands Receiver's rules: START_SESSION and STOP_SESSION answered at
// once (CommandResponse), the charge point's later answer to an accepted start
// (CommandResult), and the PENDING session it creates. A requested stop is
// carried out by the session's next pass (session-pass.ts).
import { randomUUID } from 'node:crypto';
import type { CommandResponse, CommandResponseType, CommandResultType } from '../../ocpi-protocol/commands.ts';
import type { Session } from '../../ocpi-protocol/sessions.ts';
import { invalidParameters, OCPI_STATUS, OcpiError } from '../../ocpi-protocol/transport.ts';
import { parseStartSession, parseStopSession } from '../../ocpi-protocol/validate.ts';
import { countryByAlpha3 } from '../../platform/european-countries.ts';
import { CARS, connectorPowerKw } from './charging.ts';
import { scenarioOf } from './scenarios.ts';
import { sessionMessages } from './session-messages.ts';
import { nextDueMs } from './session-pass.ts';
import { evseKey, iso, type PendingStart, type Resolved, type Row, round, type SimState, type SimulationContext, text } from './simulation-context.ts';
import type { Peer } from './store.ts';
import * as store from './store.ts';

const OCCUPIED_STATUSES = new Set(['CHARGING', 'BLOCKED', 'RESERVED']);

const response = ({ options }: SimulationContext, result: CommandResponseType, message?: string): CommandResponse => ({
  result,
  timeout: options.commandTimeoutSeconds,
  ...(message ? { message: text(message) } : {}),
});

/** START_SESSION: the synchronous CommandResponse, or 'hang' for an EVSE whose scenario never answers. */
export async function startSession(ctx: SimulationContext, peer: Peer, body: unknown): Promise<CommandResponse | 'hang'> {
  const { clock, network, options, occupied } = ctx;
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
  if (!evse) return response(ctx, 'REJECTED', 'no EVSE of this location is available');
  const connector = command.connector_id ? evse.connectors.find((c) => c.id === command.connector_id) : evse.connectors[0];
  if (!connector) throw new OcpiError(404, OCPI_STATUS.unknownLocation, `unknown connector ${command.connector_id} of EVSE ${evse.uid}`);
  const scenario = scenarioOf(evse.evse_id);
  if (scenario === 'TIMEOUT') return 'hang';
  if (scenario === 'REJECT') return response(ctx, 'REJECTED', 'the charge point rejected the start (scenario REJECT)');
  if (!evse.capabilities?.includes('REMOTE_START_STOP_CAPABLE')) return response(ctx, 'NOT_SUPPORTED', 'this EVSE cannot be started remotely');
  if (scenario === 'NORESULT') return response(ctx, 'ACCEPTED');
  const key = evseKey(location.id, evse.uid);
  const holds = !occupied.has(key);
  occupied.add(key);
  ctx.pending.push({
    dueAtMs: clock.now().getTime() + options.commandDelayMs,
    peerId: peer.id,
    command,
    locationId: location.id,
    evseUid: evse.uid,
    connectorId: connector.id,
    scenario,
    holds,
  });
  return response(ctx, 'ACCEPTED');
}

/** STOP_SESSION: the synchronous CommandResponse; the stop itself happens on the next pass after `commandDelayMs`. */
export async function stopSession(ctx: SimulationContext, peer: Peer, body: unknown): Promise<CommandResponse> {
  const { db, clock, options, dueAt } = ctx;
  const parsed = parseStopSession(body);
  if (!parsed.ok) throw invalidParameters(`invalid StopSession: ${parsed.errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`);
  const command = parsed.value;
  const found = await store.findSession<SimState>(db, command.session_id);
  if (!found || found.peerId !== peer.id) return response(ctx, 'UNKNOWN_SESSION', `unknown session ${command.session_id}`);
  if (found.scenario === 'STOPREJECT' && found.status !== 'COMPLETED')
    return response(ctx, 'REJECTED', 'the charge point rejected the stop (scenario STOPREJECT)');
  const accepted = await db.transaction(async (tx) => {
    const row = await store.lockOpenSession<SimState>(tx, command.session_id);
    if (!row) return false;
    row.sim.stop = row.sim.stop ?? { requestedAtMs: clock.now().getTime(), responseUrls: [] };
    row.sim.stop.responseUrls.push(command.response_url);
    await store.saveSession(tx, row);
    dueAt.set(row.id, nextDueMs(options, row));
    return true;
  });
  return accepted ? response(ctx, 'ACCEPTED') : response(ctx, 'REJECTED', 'the session is already completed');
}

/** The charge point's answer to an accepted START_SESSION, then (usually) the session. */
export async function completeStart(ctx: SimulationContext, p: PendingStart): Promise<void> {
  const { network, peers, push, occupied } = ctx;
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
    await push.postCommandResult(peer, ref.location, p.command.response_url, { result, ...(message ? { message: text(message) } : {}) });
    if (result !== 'ACCEPTED' || p.scenario === 'NOSTART') return;
    await createSession(ctx, peer, p, { ...ref, connector, tariff: undefined });
    p.holds = false; // the session holds the EVSE now
  } finally {
    if (p.holds) occupied.delete(key);
  }
}

/** Stores the new PENDING session with its Session PUT, due for activation after `activationDelayMs`. */
async function createSession(ctx: SimulationContext, peer: Peer, p: PendingStart, r: Resolved): Promise<void> {
  const { db, clock, dueAt } = ctx;
  const now = clock.now();
  const row = newSession(ctx, peer, p, r, now);
  await db.transaction(async (tx) => {
    await store.insertSession(tx, row, now);
    await store.enqueue(tx, sessionMessages(ctx, row, 'PUT', row.data, now), now);
  });
  dueAt.set(row.id, row.sim.activateAtMs);
  ctx.kickOutbox();
}

/** A new session's row: the Session as the eMSP sees it (PENDING), and the simulation's state with a random car. */
function newSession(ctx: SimulationContext, peer: Peer, p: PendingStart, r: Resolved, now: Date): Row {
  const { network, options, random } = ctx;
  const nowMs = now.getTime();
  const { location, evse, connector } = r;
  const tariff = network.tariffFor(location, connector, now);
  const drawn = CARS[Math.floor(random() * CARS.length)] as (typeof CARS)[number];
  const long = p.scenario === 'LONGCHARGE';
  const model = long ? (CARS.at(-1) as (typeof CARS)[number]) : drawn;
  const soc = long ? 0.1 : round(0.1 + random() * 0.4, 3);
  const sim: SimState = {
    compression: options.timeCompression,
    cursorMs: nowMs,
    activateAtMs: nowMs + options.activationDelayMs,
    nextPushAtMs: nowMs + options.activationDelayMs + options.sessionUpdateIntervalMs,
    car: { ...model, soc },
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
  return {
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
}
