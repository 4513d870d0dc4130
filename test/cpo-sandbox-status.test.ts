// The sandbox CPO's live network: random EVSE status changes pushed at the
// configured rate (and reflected in the Locations Sender), a restart that
// keeps statuses, registrations and running sessions, and the default timing
// (a start is ACTIVE within 2 s, the CDR comes within a few seconds of a stop).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { OcpiEvse, OcpiLocation } from '../src/ocpi-protocol/locations-tariffs.ts';
import type { Session } from '../src/ocpi-protocol/sessions.ts';
import { manualClock, systemClock } from '../src/platform/clock.ts';
import type { Database } from '../src/platform/db.ts';
import { localTime } from '../src/pricing/local-time.ts';
import { priceSession } from '../src/pricing/tariff-engine.ts';
import { type CpoSandbox, createCpoSandbox, scenarioLocationId } from '../src/sandbox/cpo/index.ts';
import { appToken, dataOf, type EmspPeer, startEmspPeer, waitFor } from './cpo-sandbox-support.ts';
import { createTestDatabase } from './helpers.ts';

let db: Database;
let drop: () => Promise<void>;
let cpo: CpoSandbox;
let emsp: EmspPeer;
let port: number;

const FAST = { tickMs: 20, commandDelayMs: 20, activationDelayMs: 80, sessionUpdateIntervalMs: 120, retryBaseMs: 40 };

before(async () => {
  ({ db, drop } = await createTestDatabase());
  cpo = await createCpoSandbox({ db, clock: systemClock, locations: 300, seed: 3, timeCompression: 120, statusChangesPerSecond: 50, ...FAST });
  await cpo.listen({ port: 0 });
  port = Number(new URL(cpo.versionsUrl).port);
  emsp = await startEmspPeer();
  await emsp.registerWith(cpo.versionsUrl, await cpo.issueTokenA());
  cpo.startBackgroundWork();
});

after(async () => {
  await cpo?.close();
  await emsp?.close();
  await drop?.();
});

async function evse(locationId: string, evseUid: string): Promise<OcpiEvse> {
  const reply = await emsp.call('GET', `${emsp.endpoint('locations')}/${locationId}/${evseUid}`);
  return dataOf<OcpiEvse>(reply);
}

async function startOn(evseUid: string, reference: string): Promise<void> {
  const location = scenarioLocationId(cpo.parties[0] as (typeof cpo.parties)[number]);
  const { url } = emsp.responseUrl('START_SESSION');
  const reply = await emsp.call('POST', `${emsp.endpoint('commands')}/START_SESSION`, {
    response_url: url,
    token: appToken(),
    location_id: location,
    evse_uid: `${location}-${evseUid}`,
    authorization_reference: reference,
  });
  assert.equal(dataOf<{ result: string }>(reply).result, 'ACCEPTED');
}

const byReference = (reference: string, status: Session['status']) =>
  [...emsp.sessions.values()].find((s) => s.authorization_reference === reference && s.status === status);

async function stop(sessionId: string): Promise<void> {
  const { url } = emsp.responseUrl('STOP_SESSION');
  const reply = await emsp.call('POST', `${emsp.endpoint('commands')}/STOP_SESSION`, { response_url: url, session_id: sessionId });
  assert.equal(dataOf<{ result: string }>(reply).result, 'ACCEPTED');
}

test('random EVSE status changes are pushed at the configured rate, as plausible transitions, and the Locations Sender follows', async () => {
  const from = emsp.evsePatches.length;
  const startedAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const pushes = emsp.evsePatches.slice(from);
  const seconds = (Date.now() - startedAt) / 1000;
  assert.ok(pushes.length >= 30 * seconds && pushes.length <= 70 * seconds, `${pushes.length} pushes in ${seconds} s`);
  assert.deepEqual(emsp.errors, []);
  // Each pushed status is what the Sender interface now shows (unless changed again), with last_updated following.
  const latest = new Map<string, { status: string; last_updated: string }>();
  for (const p of emsp.evsePatches) latest.set(p.path, p.body);
  let checked = 0;
  for (const [path, body] of [...latest].slice(-10)) {
    const [locationId, evseUid] = path.split('/').slice(-2) as [string, string];
    const served = await evse(locationId, evseUid);
    if (served.last_updated !== body.last_updated) continue; // changed again meanwhile
    assert.equal(served.status, body.status);
    const location = dataOf<OcpiLocation>(await emsp.call('GET', `${emsp.endpoint('locations')}/${locationId}`));
    assert.ok(Date.parse(location.last_updated) >= Date.parse(body.last_updated));
    checked++;
  }
  assert.ok(checked > 0);
  for (const p of pushes) assert.notEqual(p.body.status, 'PLANNED');
  const routing = emsp.received.find((r) => r.method === 'PATCH' && r.path.includes('/locations/'));
  assert.ok(routing?.headers['ocpi-from-party-id']);
  assert.equal(routing?.headers['ocpi-to-party-id'], 'TST');
});

test('an operator sets an EVSE status by hand: stored, served and pushed', async () => {
  const location = scenarioLocationId(cpo.parties[0] as (typeof cpo.parties)[number]);
  const uid = `${location}-NORMAL`;
  await cpo.setEvseStatus(location, uid, 'OUTOFORDER');
  const pushed = await waitFor('the push', () => emsp.evsePatches.find((p) => p.path.endsWith(`/${location}/${uid}`) && p.body.status === 'OUTOFORDER'));
  const served = await evse(location, uid);
  assert.equal(served.status, 'OUTOFORDER');
  assert.equal(served.last_updated, pushed.body.last_updated);
  await cpo.setEvseStatus(location, uid, 'AVAILABLE');
  assert.equal((await evse(location, uid)).status, 'AVAILABLE');
  await assert.rejects(cpo.setEvseStatus(location, 'nope', 'AVAILABLE'));
  await assert.rejects(cpo.setEvseStatus(location, uid, 'BROKEN' as 'AVAILABLE'));
});

test('a restart keeps EVSE statuses, the registration and running sessions; the default timing holds', async () => {
  await startOn('NORMAL', 'restart-1');
  const active = await waitFor('ACTIVE', () => byReference('restart-1', 'ACTIVE'));
  const latest = emsp.evsePatches.at(-1);
  assert.ok(latest);
  await cpo.close();
  const [locationId, evseUid] = latest.path.split('/').slice(-2) as [string, string];

  // Default settings from here on (no random changes, to keep the statuses still).
  cpo = await createCpoSandbox({ db, clock: systemClock, locations: 300, seed: 3, statusChangesPerSecond: 0 });
  await cpo.listen({ port });
  assert.ok(cpo.versionsUrl.includes(`:${port}/`));
  cpo.startBackgroundWork();
  const served = await evse(locationId, evseUid);
  assert.equal(served.status, latest.body.status);
  assert.equal(served.last_updated, latest.body.last_updated);

  // The session goes on: new progress, then stop and CDR.
  const patches = () => emsp.sessionEvents.filter((e) => e.id === active.id && e.method === 'PATCH').length;
  const before = patches();
  await waitFor('progress after the restart', () => patches() > before, 5_000);
  await stop(active.id);
  await waitFor('the CDR after the restart', () => emsp.cdrs.find((c) => c.session_id === active.id), 5_000);

  // Default timing: ACTIVE within 2 s of the start, CDR within 3 s of the stop.
  const startedAt = Date.now();
  await startOn('NORMAL', 'timing-1');
  const session = await waitFor('ACTIVE', () => byReference('timing-1', 'ACTIVE'), 3_000);
  assert.ok(Date.now() - startedAt < 2_000, `ACTIVE after ${Date.now() - startedAt} ms`);
  await waitFor('a progress update', () => (emsp.sessions.get(session.id)?.charging_periods?.length ?? 0) > 0, 4_000);
  const stoppedAt = Date.now();
  await stop(session.id);
  const cdr = await waitFor('the CDR', () => emsp.cdrs.find((c) => c.session_id === session.id), 4_000);
  assert.ok(Date.now() - stoppedAt < 3_000, `CDR after ${Date.now() - stoppedAt} ms`);
  assert.ok(cdr.total_energy > 0);
  assert.deepEqual(emsp.errors, []);
});

const clock = manualClock(new Date('2026-03-02T08:00:00.000Z'));

test('with a manual clock every step and timestamp follows it: nothing ahead of the clock, the energy accelerated, the time real', async () => {
  await cpo.close();
  cpo = await createCpoSandbox({
    db,
    clock,
    locations: 300,
    seed: 3,
    statusChangesPerSecond: 0,
    timeCompression: 60,
    commandDelayMs: 300,
    activationDelayMs: 1_000,
    sessionUpdateIntervalMs: 2_000,
  });
  await cpo.listen({ port });
  const t0 = clock.now().getTime();
  /** Every timestamp of a Session or CDR (its own, its periods'), none after the clock's now. */
  const notAhead = (
    what: string,
    o: { start_date_time: string; end_date_time?: string; last_updated: string; charging_periods?: { start_date_time: string }[] },
  ) => {
    const stamps = [o.start_date_time, o.end_date_time, o.last_updated, ...(o.charging_periods ?? []).map((p) => p.start_date_time)];
    for (const stamp of stamps)
      if (stamp) assert.ok(Date.parse(stamp) <= clock.now().getTime(), `${what}: ${stamp} is after the clock's ${clock.now().toISOString()}`);
  };
  await startOn('NORMAL', 'manual-1');
  await cpo.runDueWork();
  assert.equal(byReference('manual-1', 'PENDING'), undefined, 'nothing before the charge point answers');
  clock.advance(300);
  await cpo.runDueWork();
  const pending = await waitFor('PENDING', () => byReference('manual-1', 'PENDING'));
  assert.equal(pending.start_date_time, new Date(t0 + 300).toISOString());
  notAhead('PENDING', pending);
  clock.advance(1_000);
  await cpo.runDueWork();
  const active = await waitFor('ACTIVE', () => byReference('manual-1', 'ACTIVE'));
  const startMs = t0 + 300 + 1_000;
  assert.equal(active.start_date_time, new Date(startMs).toISOString(), 'the start is when the session went ACTIVE, on the clock');
  assert.equal(active.last_updated, new Date(t0 + 1_300).toISOString());
  notAhead('ACTIVE', active);
  clock.advance(2_000);
  await cpo.runDueWork();
  const progressed = emsp.sessions.get(active.id) as Session;
  notAhead('progress', progressed);
  const periods = progressed.charging_periods ?? [];
  assert.equal(periods.length, 1, 'one charging period per progress push (the scenario tariff never changes element)');
  assert.equal(periods[0]?.start_date_time, new Date(startMs).toISOString());
  const volume = (type: string) => periods.reduce((sum, p) => sum + (p.dimensions.find((d) => d.type === type)?.volume ?? 0), 0);
  assert.ok(Math.abs(volume('TIME') - 2 / 3600) < 1e-6, `two seconds of charging time, as the clock ran: ${volume('TIME')} h`);
  // The scenario EVSE's 50 kW for 2 s, accelerated 60 times: two minutes' worth of energy (whole Wh), at 50 kW as measured.
  assert.equal(volume('ENERGY'), Math.floor((50 * 120 * 1000) / 3600) / 1000, 'the energy of 2 minutes at 50 kW');
  assert.equal(periods[0]?.dimensions.find((d) => d.type === 'MAX_POWER')?.volume, 50);
  await stop(active.id);
  clock.advance(300);
  await cpo.runDueWork();
  const cdr = await waitFor('the CDR', () => emsp.cdrs.find((c) => c.session_id === active.id));
  notAhead('CDR', cdr);
  notAhead('COMPLETED', emsp.sessions.get(active.id) as Session);
  assert.equal(cdr.start_date_time, new Date(startMs).toISOString());
  assert.equal(cdr.end_date_time, new Date(startMs + 2_300).toISOString(), 'ended when the stop was carried out, on the clock');
  assert.equal(cdr.total_time, Number((2_300 / 3_600_000).toFixed(6)));
  assert.equal(cdr.last_updated, clock.now().toISOString());
});

test('a session across 22:00 local starts a new charging period at 22:00 sharp, priced by the night element', async () => {
  const network = cpo.network;
  let target: { location: OcpiLocation; evse: OcpiEvse } | undefined;
  for (let i = 1; i <= 300 && !target; i++) {
    const location = network.location(`LOC-${String(i).padStart(7, '0')}`) as OcpiLocation;
    for (const e of location.evses ?? []) {
      const tariff = network.tariffFor(location, e.connectors[0] as OcpiEvse['connectors'][number], new Date());
      const night = tariff?.elements.some((el) => el.restrictions?.start_time === '22:00');
      if (night && network.status(location, e) === 'AVAILABLE' && e.capabilities?.includes('REMOTE_START_STOP_CAPABLE')) target = { location, evse: e };
    }
  }
  assert.ok(target, 'a generated EVSE under a tariff with a night price');
  // 21:59:40 local on 2026-03-03, whatever the location's time zone: time runs as the clock does, so the session
  // crosses 22:00 twenty seconds later (with twenty minutes' worth of energy at 60x: no car is full by then).
  const guess = Date.parse('2026-03-03T21:59:40Z');
  const local = localTime(new Date(guess), target.location.time_zone);
  clock.set(new Date(guess - (local.seconds - (21 * 3600 + 59 * 60 + 40)) * 1000));
  const { url } = emsp.responseUrl('START_SESSION');
  await emsp.call(
    'POST',
    `${emsp.endpoint('commands')}/START_SESSION`,
    { response_url: url, token: appToken(), location_id: target.location.id, evse_uid: target.evse.uid, authorization_reference: 'night-1' },
    undefined,
    undefined,
    // Addressed to the location's party (OCPI-to): the network refuses a command for another party's location.
    { country_code: target.location.country_code, party_id: target.location.party_id },
  );
  clock.advance(300);
  await cpo.runDueWork();
  clock.advance(1_000);
  await cpo.runDueWork();
  const active = await waitFor('ACTIVE', () => byReference('night-1', 'ACTIVE'));
  clock.advance(20_000); // 21:59:41.3 to 22:00:01.3
  await cpo.runDueWork();
  await stop(active.id);
  clock.advance(300);
  await cpo.runDueWork();
  const cdr = await waitFor('the CDR', () => emsp.cdrs.find((c) => c.session_id === active.id));
  const starts = cdr.charging_periods.map((p) => localTime(new Date(p.start_date_time), target.location.time_zone).seconds);
  const boundary = starts.indexOf(22 * 3600);
  assert.ok(boundary > 0, `a period starts at 22:00: ${cdr.charging_periods.map((p) => p.start_date_time).join(', ')}`);
  const recomputed = priceSession({
    tariff: cdr.tariffs?.[0],
    currency: cdr.currency,
    timeZone: target.location.time_zone,
    start: new Date(cdr.start_date_time),
    end: new Date(cdr.end_date_time),
    periods: cdr.charging_periods,
  });
  assert.deepEqual(recomputed.total_cost, cdr.total_cost);
  const tariff = cdr.tariffs?.[0];
  const nightPrice = tariff?.elements[0]?.price_components[0]?.price as number;
  const dayPrice = tariff?.elements.find((e) => !e.restrictions)?.price_components.find((c) => c.type === 'ENERGY')?.price as number;
  const kwh = (periods: typeof cdr.charging_periods) => periods.reduce((sum, p) => sum + (p.dimensions.find((d) => d.type === 'ENERGY')?.volume ?? 0), 0);
  const expectedEnergy = kwh(cdr.charging_periods.slice(0, boundary)) * dayPrice + kwh(cdr.charging_periods.slice(boundary)) * nightPrice;
  assert.ok(Math.abs((cdr.total_energy_cost?.excl_vat ?? 0) - expectedEnergy) < 0.01);
});
