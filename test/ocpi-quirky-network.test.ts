// The service against a quirky sandbox CPO network over real HTTP (every quirk
// of src/sandbox/cpo/quirks.ts on): the handshake and a full pull across many
// pages, the catalogue holding the normalized objects, the unusable ones left
// out alone (the rest of their pages taken) and reported by `cpo quality`
// (run as its own process, text and --json), status pushes in lower case, and
// a charging session whose Session and CDR come with "" ids, extra fields,
// 4-decimal coordinates and VAT fractions.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { tokenOf } from '../src/modules/ocpi/tokens.ts';
import { findUserForToken } from '../src/modules/users/repository.ts';
import type { OcpiLocation, OcpiTariff } from '../src/ocpi-protocol/locations-tariffs.ts';
import { parseCdr, parseLocation, parseTariff } from '../src/ocpi-protocol/validate.ts';
import { systemClock } from '../src/platform/clock.ts';
import { type CpoSandbox, createCpoSandbox, QUIRKS, quirkPicks, scenarioEvseId, scenarioLocationId } from '../src/sandbox/cpo/index.ts';
import { FAST_CPO_TIMINGS } from './charging-support.ts';
import { setupTestApp, type TestContext, testConfig } from './helpers.ts';

const exec = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const LOCATIONS = 80;

let ctx: TestContext;
let cpo: CpoSandbox;
let dataDir: string;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The CLI in its own process, on the test's database. */
async function cli(...args: string[]) {
  const { rows } = await ctx.db.query<{ name: string }>('SELECT current_database() AS name');
  const url = new URL(process.env.CA_TEST_ADMIN_URL as string);
  url.pathname = `/${rows[0]?.name}`;
  return exec(process.execPath, [path.join(root, 'bin/charging-access.js'), ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url.toString(), DATA_DIR: dataDir, NODE_ENV: 'development' },
  });
}

/** Everything the network holds, as it would serve it without quirks. */
function networkLocations(): OcpiLocation[] {
  return cpo.network.locationPage({ offset: 0, limit: 100_000 }).items;
}
const networkTariffs = (): OcpiTariff[] => cpo.network.tariffPage({ offset: 0, limit: 100_000 }).items;

before(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-quirky-'));
  ctx = await setupTestApp({ listen: 0, env: { OCPI_PAGE_LIMIT: '10', OCPI_REQUEST_TIMEOUT_MS: '3000' } });
  cpo = await createCpoSandbox({
    db: ctx.db,
    clock: systemClock,
    locations: LOCATIONS,
    seed: 11,
    ...FAST_CPO_TIMINGS,
    pageLimits: { locations: 15, tariffs: 15 },
    quirks: [...QUIRKS],
  });
  await cpo.listen({ port: 0 });
});
after(async () => {
  await cpo?.close();
  await ctx?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('CPO_SANDBOX_QUIRKS', () => {
  it('names the quirks of the network the service starts: a list, or all; an unknown name stops start-up', () => {
    assert.deepEqual(testConfig({ CPO_SANDBOX_QUIRKS: ' 24h, no-timezone ,24h' }).ocpi.cpoSandbox.quirks, ['24h', 'no-timezone']);
    assert.deepEqual(testConfig({ CPO_SANDBOX_QUIRKS: 'all' }).ocpi.cpoSandbox.quirks, [...QUIRKS]);
    assert.deepEqual(testConfig().ocpi.cpoSandbox.quirks, []);
    assert.throws(() => testConfig({ CPO_SANDBOX_QUIRKS: 'coordinates,bogus' }), /CPO_SANDBOX_QUIRKS: unknown sandbox quirk "bogus"/);
  });
});

describe('a CPO network that sends imperfect data', () => {
  it('handshakes, and the full pull keeps every usable object, normalized, and leaves out only the unusable ones', async () => {
    const connection = await ctx.ocpi.connections.connect({ versionsUrl: cpo.versionsUrl, token: await cpo.issueTokenA(), name: 'quirky' });
    assert.equal(connection.status, 'connected');
    const counts = await ctx.ocpi.sync.syncConnection(connection, { full: true });
    assert.deepEqual(counts.failed, [], 'no module fails because of one object');

    const locations = networkLocations();
    const withoutCoordinates = locations.filter((l) => quirkPicks.locationWithoutCoordinates(l.id));
    const unknownDimension = networkTariffs().filter((t) => quirkPicks.tariffWithUnknownDimension(t.id));
    assert.ok(withoutCoordinates.length >= 3 && unknownDimension.length >= 1, 'the quirks touch several objects, on several pages');
    assert.equal(counts.locations, locations.length - withoutCoordinates.length, 'every other location of their pages was taken');
    assert.equal(counts.tariffs, networkTariffs().length - unknownDimension.length);
    assert.equal(counts.skipped, withoutCoordinates.length + unknownDimension.length);

    for (const sent of locations) {
      const got = await ctx.ingestion.findLocation({ country_code: sent.country_code, party_id: sent.party_id, id: sent.id });
      if (quirkPicks.locationWithoutCoordinates(sent.id)) {
        assert.equal(got, undefined, `${sent.id} has no coordinates: left out`);
        continue;
      }
      assert.ok(got, sent.id);
      assert.ok(parseLocation(got).ok, `${sent.id} is stored strictly 2.2.1`);
      // 4 decimals sent, 5 stored: the same place, written as 2.2.1 wants.
      assert.equal(Number(got.coordinates.latitude), Number(Number(sent.coordinates.latitude).toFixed(4)));
      assert.match(got.coordinates.latitude, /^-?\d{1,2}\.\d{5}$/);
      assert.equal(got.time_zone, sent.time_zone, `${sent.id}: the time zone derived from the coordinates is the network's own`);
      for (const hours of got.opening_times?.regular_hours ?? []) assert.equal(hours.period_end, '23:59');
      const evses = (sent.evses ?? []).slice(quirkPicks.evseWithoutUid(sent.id) ? 1 : 0);
      assert.deepEqual(
        (got.evses ?? []).map((e) => e.uid),
        evses.map((e) => e.uid),
        `${sent.id}: only an EVSE without uid is left out`,
      );
      for (const evse of got.evses ?? []) {
        const original = sent.evses?.find((e) => e.uid === evse.uid);
        const scenario = sent.id.startsWith('SCN-');
        assert.equal(evse.status, !scenario && quirkPicks.evseWithUnknownStatus(evse.uid) ? 'UNKNOWN' : original?.status, evse.uid);
        assert.equal('physical_reference' in evse, false, 'an empty physical_reference is absent');
      }
    }
    const tariffs = await ctx.db.query<{ id: string; data: OcpiTariff }>('SELECT id, data FROM ocpi_tariffs');
    for (const row of tariffs.rows) {
      const sent = networkTariffs().find((t) => t.id === row.id && t.party_id === row.data.party_id);
      assert.ok(sent && parseTariff(row.data).ok);
      assert.deepEqual(
        row.data.elements.map((e) => e.price_components.map((c) => c.vat)),
        sent.elements.map((e) => e.price_components.map((c) => c.vat)),
        `${row.id}: VAT fractions sent, the network's percentages stored`,
      );
    }
  });

  it('cpo quality shows the counts by rule and the latest examples, as text and as JSON', async () => {
    const text = (await cli('cpo', 'quality', 'quirky')).stdout;
    assert.match(text, /^quirky: \d+ refused, \d+ normalized/);
    assert.match(text, /\nREFUSED +locations +no-coordinates +x\d+ /);
    assert.match(text, /\nnormalized +locations +coordinates-precision +x\d+ /);
    assert.match(text, /\n {4}[A-Z]{2}\*[A-Z0-9]{3}\*LOC-\d+ \/coordinates: absent\n/);
    const json = JSON.parse((await cli('cpo', 'quality', 'quirky', '--json')).stdout) as {
      name: string;
      rules: { module: string; rule: string; kind: string; count: number; says: string; examples: { object_id: string; part?: string; detail?: string }[] }[];
    };
    assert.equal(json.name, 'quirky');
    const rule = (module: string, name: string) => json.rules.find((r) => r.module === module && r.rule === name);
    const locations = networkLocations();
    const noCoordinates = rule('locations', 'no-coordinates');
    assert.equal(noCoordinates?.kind, 'rejected');
    assert.equal(noCoordinates?.count, locations.filter((l) => quirkPicks.locationWithoutCoordinates(l.id)).length);
    for (const example of noCoordinates?.examples ?? []) {
      const id = example.object_id.split('*')[2] as string;
      assert.ok(quirkPicks.locationWithoutCoordinates(id), example.object_id);
    }
    assert.equal(rule('locations', 'no-evse-uid')?.kind, 'rejected');
    assert.equal(rule('tariffs', 'unknown-enum-refused')?.count, networkTariffs().filter((t) => quirkPicks.tariffWithUnknownDimension(t.id)).length);
    assert.equal(rule('locations', 'time-zone-derived')?.count, locations.length - (noCoordinates?.count ?? 0));
    for (const name of ['coordinates-precision', 'period-end-24h', 'empty-string-as-absent', 'unknown-status', 'enum-case', 'unknown-enum-kept']) {
      assert.ok((rule('locations', name)?.count ?? 0) > 0, name);
    }
    assert.ok((rule('tariffs', 'vat-fraction')?.count ?? 0) > 0);
    assert.match(rule('tariffs', 'vat-fraction')?.examples[0]?.detail ?? '', /^0\.\d+ -> \d+(\.\d+)?$/);
    assert.ok((rule('locations', 'coordinates-precision')?.examples.length ?? 0) <= 5);
    const unknownCli = await cli('cpo', 'quality', 'nobody').catch((error: { code: number; stderr: string }) => error);
    assert.equal((unknownCli as { code: number }).code, 1);
    assert.match((unknownCli as { stderr: string }).stderr, /no CPO connection named nobody/);
  });

  it('takes EVSE status pushes in lower case', async () => {
    const usable = networkLocations().filter(
      (l) => !l.id.startsWith('SCN-') && !quirkPicks.locationWithoutCoordinates(l.id) && !quirkPicks.evseWithoutUid(l.id),
    );
    const [location, evse] =
      usable.flatMap((l) => (l.evses ?? []).filter((e) => !quirkPicks.evseWithUnknownStatus(e.uid)).map((e) => [l, e] as const))[0] ?? [];
    assert.ok(location && evse);
    cpo.startBackgroundWork();
    await cpo.setEvseStatus(location.id, evse.uid, 'OUTOFORDER');
    await until('OUTOFORDER', async () =>
      (await ctx.db.query('SELECT status FROM ocpi_evses WHERE uid = $1', [evse.uid])).rows[0]?.status === 'OUTOFORDER' ? true : undefined,
    );
  });

  it('charges: the Session and CDR, with "" meter ids, extra fields, 4-decimal coordinates and VAT fractions, are stored strictly 2.2.1', async () => {
    const client = await ctx.newClient();
    const created = await ctx.call('POST', '/api/v1/users/', { token: client.token, body: { email: 'quirky@example.com' } });
    const user = await findUserForToken(ctx.db, created.body.id);
    const party = cpo.scenarioParties[0];
    assert.ok(user && party);
    const location = cpo.network.location(scenarioLocationId(party));
    const evse = location?.evses?.find((e) => e.evse_id === scenarioEvseId(party, 'NORMAL'));
    assert.ok(evse);
    const reference = randomUUID();
    const start = await ctx.ocpi.commands.startSession({
      country_code: party.country_code,
      party_id: party.party_id,
      location_id: scenarioLocationId(party),
      evse_uid: evse.uid,
      token: tokenOf({ countryCode: 'DE', partyId: 'CAX', businessName: 'Charging Access' }, user),
      authorization_reference: reference,
    });
    assert.equal(start.outcome, 'accepted', JSON.stringify(start));
    const session = await until('an ACTIVE session', async () => {
      const row = (
        await ctx.db.query<{ id: string; status: string; data: Record<string, unknown> }>(
          'SELECT id, status, data FROM ocpi_sessions WHERE authorization_reference = $1',
          [reference],
        )
      ).rows[0];
      return row?.status === 'ACTIVE' ? row : undefined;
    });
    assert.equal('meter_id' in session.data, false, 'an empty meter_id is absent');
    const stop = await ctx.ocpi.commands.stopSession({ country_code: party.country_code, party_id: party.party_id, session_id: session.id });
    assert.equal(stop.outcome, 'accepted');
    const cdr = await until(
      'the CDR',
      async () => (await ctx.db.query<{ data: Record<string, unknown> }>('SELECT data FROM ocpi_cdrs WHERE session_id = $1', [session.id])).rows[0],
    );
    assert.ok(parseCdr(cdr.data).ok);
    const where = cdr.data.cdr_location as { coordinates: { latitude: string } };
    assert.match(where.coordinates.latitude, /^-?\d{1,2}\.\d{5}$/);
    const tariffs = (cdr.data.tariffs ?? []) as OcpiTariff[];
    for (const t of tariffs)
      for (const e of t.elements) for (const c of e.price_components) assert.ok(c.vat === undefined || c.vat >= 1, `VAT ${c.vat} is a percentage`);
    const quality = JSON.parse((await cli('cpo', 'quality', 'quirky', '--json')).stdout) as { rules: { module: string; rule: string }[] };
    assert.ok(quality.rules.some((r) => r.module === 'sessions' && r.rule === 'empty-string-as-absent'));
    assert.ok(quality.rules.some((r) => r.module === 'cdrs' && r.rule === 'coordinates-precision'));
  });
});
