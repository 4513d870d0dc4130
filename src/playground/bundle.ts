// The playground's browser assets, bundled from npm packages when first asked for, in the service process.
//
// Why at run time, in development only: the playground is off in production, so production never needs the bundler;
// a fresh clone's `npm install && npm start` serves it with no build step to remember (the rest of the service runs
// its TypeScript as it is too); and esbuild bundles the page, Leaflet and the SDK in well under a second, once per
// process. esbuild, Leaflet, topojson-client and world-atlas are development dependencies, imported here only when a
// bundle is asked for; an install without them (npm ci --omit=dev) gets a plain answer saying so.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { AppError } from '../platform/errors.ts';

interface PlaygroundAsset {
  body: Buffer;
  type: string;
}

/** index.html, app.js (the page's code with Leaflet and the SDK), app.css (Leaflet's and ours), their source maps, countries.json (the base map). */
export type PlaygroundAssets = ReadonlyMap<string, PlaygroundAsset>;

const WEB = path.join(import.meta.dirname, 'web');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};

function missingDependencies(what: string): AppError {
  return new AppError(
    'service_unavailable',
    `The playground cannot be built here: ${what} is not installed. It needs the development dependencies (npm install, not npm ci --omit=dev).`,
  );
}

async function build(): Promise<PlaygroundAssets> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    throw missingDependencies('esbuild');
  }
  const result = await esbuild
    .build({
      entryPoints: { app: path.join(WEB, 'main.ts') },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      sourcemap: 'linked',
      outdir: '/playground',
      write: false,
      logLevel: 'silent',
      // Leaflet's stylesheet names a few small images (its layer-switcher icons): inlined, so nothing else is fetched.
      loader: { '.png': 'dataurl' },
      // Licence notices (Leaflet's BSD-2-Clause, topojson-client's ISC) stay in the bundle.
      legalComments: 'eof',
    })
    .catch((error: Error) => {
      if (/Could not resolve/.test(error.message)) throw missingDependencies('a package the page imports (leaflet, topojson-client)');
      throw error;
    });
  const assets = new Map<string, PlaygroundAsset>();
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    assets.set(name, { body: Buffer.from(file.contents), type: TYPES[path.extname(name)] ?? 'application/octet-stream' });
  }
  // Country outlines (Natural Earth 1:50m, public domain, as TopoJSON from the world-atlas package): the page's only
  // background, drawn by Leaflet as vectors; no map tiles from anywhere.
  let countries: Buffer;
  try {
    countries = await readFile(createRequire(import.meta.url).resolve('world-atlas/countries-50m.json'));
  } catch {
    throw missingDependencies('world-atlas');
  }
  assets.set('countries.json', { body: countries, type: TYPES['.json'] as string });
  assets.set('index.html', { body: await readFile(path.join(WEB, 'index.html')), type: 'text/html; charset=utf-8' });
  return assets;
}

/** The assets, built on the first call and kept for the life of the process (a failed build is tried again on the next call). */
export function playgroundAssets(): () => Promise<PlaygroundAssets> {
  let built: Promise<PlaygroundAssets> | undefined;
  return () => {
    built ??= build().catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };
}
