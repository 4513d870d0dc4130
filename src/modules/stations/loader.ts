// Bulk loading of the catalogue through the ingestion path: a generated
// dataset, or a file of OCPI Locations and Tariffs (JSON array or NDJSON).
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { generateCatalogue } from '../../dataset/generator.ts';
import type { Ingestion } from './ingest.ts';

export type Progress = (done: number, total: number | undefined) => void;

/** What a bulk load stored, and why vacuuming after it failed if it did (the load stands). */
export interface BulkLoadResult {
  locations: number;
  tariffs: number;
  vacuumError?: string;
}

const BATCH = 1_000;

export async function loadGeneratedCatalogue(
  ingestion: Ingestion,
  options: { locations: number; seed: number },
  onProgress?: Progress,
): Promise<BulkLoadResult> {
  const generated = generateCatalogue(options);
  const parties = generated.parties.map((p) => ({ country_code: p.country_code, party_id: p.party_id, name: p.name, phone: p.phone, website: p.website }));
  const { tariffs } = await ingestion.ingest({ parties, tariffs: generated.tariffs }, { notify: false });
  let locations = 0;
  for (const batch of generated.locations()) {
    locations += (await ingestion.ingest({ locations: batch }, { notify: false })).locations;
    onProgress?.(locations, options.locations);
  }
  return { locations, tariffs, ...(await ingestion.finishBulkLoad()) };
}

/** Tells a Tariff (it has elements) from a Location (it has coordinates). */
function kindOf(value: unknown): 'tariff' | 'location' {
  const object = value as Record<string, unknown> | null;
  if (object && typeof object === 'object' && 'elements' in object) return 'tariff';
  return 'location';
}

async function* objectsOf(file: string): AsyncGenerator<unknown> {
  const handle = await open(file, 'r');
  const { buffer } = await handle.read({ buffer: Buffer.alloc(64), position: 0 });
  await handle.close();
  if (buffer.toString('utf8').trimStart().startsWith('[')) {
    const text = await readFile(file, 'utf8');
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) throw new Error(`${file}: expected a JSON array of OCPI objects`);
    yield* parsed;
    return;
  }
  let lineNumber = 0;
  for await (const line of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY })) {
    lineNumber++;
    if (line.trim() === '') continue;
    try {
      yield JSON.parse(line) as unknown;
    } catch {
      throw new Error(`${file}:${lineNumber}: not valid JSON`);
    }
  }
}

/**
 * Imports OCPI Locations and Tariffs from a file. Tariffs are stored before the
 * locations of the same batch; every object is validated, an invalid one stops
 * the import with its id and the failing fields (batches already stored stay).
 */
export async function importOcpiFile(ingestion: Ingestion, file: string, onProgress?: Progress): Promise<BulkLoadResult> {
  let locations: unknown[] = [];
  let tariffs: unknown[] = [];
  const total = { locations: 0, tariffs: 0 };
  const flush = async () => {
    const counts = await ingestion.ingest({ locations, tariffs }, { notify: false });
    total.locations += counts.locations;
    total.tariffs += counts.tariffs;
    locations = [];
    tariffs = [];
    onProgress?.(total.locations + total.tariffs, undefined);
  };
  for await (const object of objectsOf(file)) {
    (kindOf(object) === 'tariff' ? tariffs : locations).push(object);
    if (locations.length + tariffs.length >= BATCH) await flush();
  }
  await flush();
  return { ...total, ...(await ingestion.finishBulkLoad()) };
}
