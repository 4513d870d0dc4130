// The station catalogue: a generated one loaded on a first start (without the
// sandbox CPO network), and the in-memory catalogue every process serves,
// following the changes any process makes.
import { type Catalogue, createCatalogue } from '../modules/stations/catalogue.ts';
import type { Ingestion } from '../modules/stations/ingest.ts';
import { loadGeneratedCatalogue } from '../modules/stations/loader.ts';
import { CATALOGUE_CHANNEL, countLocations } from '../modules/stations/repository.ts';
import { type Database, listen } from '../platform/db.ts';
import type { Metrics } from '../platform/metrics.ts';
import { CATALOGUE_PART, type Readiness } from '../platform/readiness.ts';
import type { StartupContext } from './context.ts';

export async function loadFirstCatalogue({ config, log }: StartupContext, db: Database, ingestion: Ingestion): Promise<void> {
  // Without the sandbox CPO network (which delivers the default catalogue over OCPI), a first start loads it directly.
  if (!config.ocpi.cpoSandbox.enabled && config.stationsDefaultLocations > 0 && (await countLocations(db)) === 0) {
    const started = performance.now();
    log.info({ locations: config.stationsDefaultLocations, seed: config.stationsSeed }, 'first start: loading a generated station catalogue');
    const loaded = await loadGeneratedCatalogue(ingestion, { locations: config.stationsDefaultLocations, seed: config.stationsSeed });
    log.info({ locations: loaded.locations, tariffs: loaded.tariffs, ms: Math.round(performance.now() - started) }, 'generated station catalogue loaded');
    if (loaded.vacuumError) log.warn({ error: loaded.vacuumError }, 'vacuuming the station tables after the load failed (the load stands)');
  }
}

/** The catalogue (not loaded yet: ready once start-up says so), and its listener for changes. */
export function startCatalogue(
  { config, log, clock, stops }: StartupContext,
  { db, metrics, readiness }: { db: Database; metrics: Metrics | undefined; readiness: Readiness },
): Catalogue {
  const catalogue = createCatalogue({
    db,
    clock,
    pricing: config.pricing,
    log: (message, fields) => log.info(fields ?? {}, message),
    metrics,
    ready: () => readiness.isReady(CATALOGUE_PART),
  });
  metrics?.watch({ catalogue: () => ({ stations: catalogue.size, evses: catalogue.evseCount }) });
  // Every process follows catalogue changes made by any other (OCPI pushes, imports from the CLI). A reload
  // (after a reconnect, say) keeps serving the previous snapshot until the new one is built.
  const listener = listen(
    db,
    CATALOGUE_CHANNEL,
    (payload) => {
      catalogue
        .onChange(payload)
        .catch((error: Error) => log.warn({ reason: error.message }, 'updating the station catalogue failed; the previous one is served'));
    },
    (error) => log.warn({ reason: error.message }, 'catalogue change listener lost its connection; reconnecting'),
  );
  stops.add('catalogue change listener', () => listener.stop());
  return catalogue;
}
