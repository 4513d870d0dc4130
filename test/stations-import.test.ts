// `stations import FILE`: OCPI Locations and Tariffs from a JSON array or NDJSON, through the ingestion path.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { importOcpiFile } from '../src/modules/stations/loader.ts';
import { streamCatalogue } from '../src/modules/stations/repository.ts';
import { setupTestApp, type TestContext } from './helpers.ts';
import { ocpiLocation, ocpiTariff } from './stations-fixtures.ts';

let t: TestContext;
let dir: string;

before(async () => {
  t = await setupTestApp();
  dir = await mkdtemp(path.join(os.tmpdir(), 'charging-access-import-'));
});
after(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

const count = async (table: string) => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n;

test('a JSON array of tariffs and locations is stored and counted', async () => {
  const file = path.join(dir, 'array.json');
  await writeFile(file, JSON.stringify([ocpiTariff('AC', 0.39), ocpiLocation({ id: 'J1', lat: 52.5, lon: 13.4, evses: [{ tariff: 'AC' }] })]));
  assert.deepEqual(await importOcpiFile(t.ingestion, file), { locations: 1, tariffs: 1 });
  await t.catalogue.reload();
  const { token } = await t.newClient();
  const res = await t.call('GET', '/api/v1/stations/details/?id=DE*ABC*EJ11&type=evse_id', { token });
  assert.equal(res.status, 200);
  assert.equal(res.body.price_groups[0].is_fallback, false);
});

test('NDJSON with blank lines, in batches', async () => {
  const file = path.join(dir, 'lines.ndjson');
  const lines = Array.from({ length: 1_205 }, (_, k) => JSON.stringify(ocpiLocation({ id: `N${k}`, lat: 48 + k / 10_000, lon: 11 })));
  await writeFile(file, `${lines.slice(0, 600).join('\n')}\n\n${lines.slice(600).join('\n')}\n`);
  const progress: number[] = [];
  assert.deepEqual(await importOcpiFile(t.ingestion, file, (done) => progress.push(done)), { locations: 1_205, tariffs: 0 });
  assert.deepEqual(progress, [1_000, 1_205]);
  assert.equal(await count("ocpi_locations WHERE id LIKE 'N%'"), 1_205);
});

test('a line that is not JSON names the file and line; an invalid object names its id and field', async () => {
  const bad = path.join(dir, 'bad.ndjson');
  await writeFile(bad, `${JSON.stringify(ocpiLocation({ id: 'B1', lat: 1, lon: 1 }))}\n{oops\n`);
  await assert.rejects(importOcpiFile(t.ingestion, bad), /bad\.ndjson:2: not valid JSON/);
  const invalid = path.join(dir, 'invalid.json');
  await writeFile(invalid, JSON.stringify([{ ...ocpiLocation({ id: 'B2', lat: 1, lon: 1 }), time_zone: 42 }]));
  await assert.rejects(importOcpiFile(t.ingestion, invalid), /invalid OCPI Location B2: \/time_zone/);
  assert.equal(await count("ocpi_locations WHERE id IN ('B1', 'B2')"), 0, 'a batch with a bad object stores nothing');
  const empty = path.join(dir, 'empty.json');
  await writeFile(empty, '  [ ]');
  assert.deepEqual(await importOcpiFile(t.ingestion, empty), { locations: 0, tariffs: 0 });
});

test('the catalogue is read as every location with its EVSEs in order, whatever the batch size', async () => {
  // A few locations with several EVSEs (in the CPO's order, not the uids'), some without any.
  const batch = Array.from({ length: 40 }, (_, k) =>
    ocpiLocation({
      id: `S${String(k).padStart(2, '0')}`,
      lat: 50 + k / 1_000,
      lon: 8,
      evses: k % 5 === 4 ? [] : Array.from({ length: 1 + (k % 4) }, () => ({})),
    }),
  );
  for (const location of batch) location.evses?.reverse();
  await t.ingestion.ingest({ locations: batch });
  const read = async (size: number) => {
    const out: string[] = [];
    for await (const b of streamCatalogue(t.db, size)) {
      for (const [k, l] of b.locations.entries()) out.push(`${l.country_code}*${l.party_id}*${l.id}: ${b.evses[k]?.map((e) => e.uid).join(',')}`);
    }
    return out;
  };
  const whole = await read(100_000);
  const { rows } = await t.db.query<{ line: string }>(
    `SELECT l.country_code || '*' || l.party_id || '*' || l.id || ': ' || coalesce(string_agg(e.uid, ',' ORDER BY e.position, e.uid), '') AS line
       FROM ocpi_locations l LEFT JOIN ocpi_evses e ON e.country_code = l.country_code AND e.party_id = l.party_id AND e.location_id = l.id
      GROUP BY l.country_code, l.party_id, l.id ORDER BY l.country_code, l.party_id, l.id`,
  );
  assert.deepEqual(
    whole,
    rows.map((r) => r.line),
  );
  assert.ok(
    whole.some((line) => line.endsWith(': ')) && whole.some((line) => line.split(',').length >= 4),
    'locations without EVSEs and with several are read',
  );
  for (const size of [1, 3, 250]) assert.deepEqual(await read(size), whole, `batches of ${size}`);
  // Stopping early gives the connection back (the pool would run dry otherwise).
  for (let k = 0; k < t.db.pool.options.max + 2; k++) for await (const _ of streamCatalogue(t.db, 2)) break;
  assert.deepEqual(await read(7), whole);
});
