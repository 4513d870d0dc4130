// What the tolerant OCPI reader (src/ocpi-protocol/reader/) costs a pull: a
// generated catalogue serialized as a CPO's pages would be, parsed, then read
// in place as sync.ts reads it, against the strict parse alone (what a pull
// did before) and the JSON.parse of the pages, in the same run; then the same
// Locations as a network with every quirk sends them (src/sandbox/cpo/quirks.ts).
//
//   node bench/ocpi-reader.ts [--locations 20000] [--runs 3]
import { parseArgs } from 'node:util';
import { generateCatalogue } from '../src/dataset/generator.ts';
import { parseOcpiLocation } from '../src/modules/stations/ingest.ts';
import { readLocation } from '../src/ocpi-protocol/reader/location.ts';
import { readTariff } from '../src/ocpi-protocol/reader/tariff.ts';
import { QUIRKS } from '../src/sandbox/cpo/quirk-names.ts';
import { createQuirks } from '../src/sandbox/cpo/quirks.ts';

const { values } = parseArgs({ options: { locations: { type: 'string', default: '20000' }, runs: { type: 'string', default: '3' } } });
const count = Number(values.locations);
const runs = Number(values.runs);

const catalogue = generateCatalogue({ locations: count, seed: 1, now: new Date('2026-01-01T00:00:00Z') });
const locations = [...catalogue.locations()].flat();
const quirks = createQuirks([...QUIRKS]);
const clean = JSON.stringify(locations);
const quirky = JSON.stringify(locations.map((l) => quirks.location(l)));
const tariffs = JSON.stringify(catalogue.tariffs);
const evses = locations.reduce((n, l) => n + (l.evses?.length ?? 0), 0);

const timed = (work: () => unknown): number => {
  const started = performance.now();
  work();
  return performance.now() - started;
};
const us = (ms: number, n: number) => `${((ms * 1000) / n).toFixed(1)} µs`;

process.stdout.write(`${locations.length} locations (${evses} EVSEs), ${catalogue.tariffs.length} tariffs; best of ${runs} runs\n`);
const best = { parse: Infinity, strict: Infinity, reader: Infinity, quirky: Infinity, tariffs: Infinity };
let taken = 0;
for (let run = 0; run < runs; run++) {
  best.parse = Math.min(
    best.parse,
    timed(() => JSON.parse(clean)),
  );
  const forStrict = JSON.parse(clean) as unknown[];
  best.strict = Math.min(
    best.strict,
    timed(() => forStrict.map((l) => parseOcpiLocation(l))),
  );
  const forReader = JSON.parse(clean) as unknown[];
  best.reader = Math.min(
    best.reader,
    timed(() => forReader.map((l) => readLocation(l, { inPlace: true }))),
  );
  const forQuirky = JSON.parse(quirky) as unknown[];
  best.quirky = Math.min(
    best.quirky,
    timed(() => {
      taken = forQuirky.filter((l) => readLocation(l, { inPlace: true }).ok).length;
    }),
  );
  const forTariffs = JSON.parse(tariffs) as unknown[];
  best.tariffs = Math.min(
    best.tariffs,
    timed(() => forTariffs.map((t) => readTariff(t, { inPlace: true }))),
  );
}
const n = locations.length;
process.stdout.write(`JSON.parse of the pages     ${best.parse.toFixed(0)} ms  ${us(best.parse, n)} per location\n`);
process.stdout.write(`strict parse (before)       ${best.strict.toFixed(0)} ms  ${us(best.strict, n)} per location\n`);
process.stdout.write(
  `tolerant reader, clean data ${best.reader.toFixed(0)} ms  ${us(best.reader, n)} per location  (${(best.reader / best.parse).toFixed(2)} x JSON.parse)\n`,
);
process.stdout.write(`tolerant reader, all quirks ${best.quirky.toFixed(0)} ms  ${us(best.quirky, n)} per location  (${taken} of ${n} taken)\n`);
process.stdout.write(`tolerant reader, tariffs    ${best.tariffs.toFixed(0)} ms  ${us(best.tariffs, catalogue.tariffs.length)} per tariff\n`);
