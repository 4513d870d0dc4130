// `charging-access stations ...`: bulk loads of the station catalogue (a generated one, or an OCPI file).
import { createIngestion } from '../../modules/stations/ingest.ts';
import { importOcpiFile, loadGeneratedCatalogue } from '../../modules/stations/loader.ts';
import { systemClock } from '../../platform/clock.ts';
import type { CommandLine } from '../command-line.ts';
import { print, progress } from '../output.ts';
import type { Session } from '../session.ts';

/** The warning a bulk load's human output ends with when vacuuming the tables after it failed (the load stands). */
function vacuumWarning(loaded: { vacuumError?: string }): string {
  return loaded.vacuumError ? `\nwarning: vacuuming the station tables afterwards failed (${loaded.vacuumError}); the load stands` : '';
}

export async function stationsGenerate(session: Session, { json, locations, seed }: CommandLine): Promise<void> {
  const started = performance.now();
  const loaded = await loadGeneratedCatalogue(
    createIngestion({ db: session.db, clock: systemClock }),
    { locations: locations as number, seed },
    progress('locations'),
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  print(json, loaded, `loaded ${loaded.locations} locations and ${loaded.tariffs} tariffs in ${seconds} s${vacuumWarning(loaded)}`);
}

export async function stationsImport(session: Session, { arg, json }: CommandLine): Promise<void> {
  const loaded = await importOcpiFile(createIngestion({ db: session.db, clock: systemClock }), arg as string, progress('objects'));
  print(json, loaded, `imported ${loaded.locations} locations and ${loaded.tariffs} tariffs${vacuumWarning(loaded)}`);
}
