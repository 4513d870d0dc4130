// The API's OpenAPI document as the service serves it at /api/v1/openapi.json, made in-process: the app is built as
// the tests build it (src/app.ts with payments and OCPI, so every client route is there), on a database it never
// connects to (building the document reads nothing from it) and with fixed settings, so that the document depends
// only on the code. No network, no files. Then the part a client uses: the paths under /api/v1 (the OCPI interface
// is for operators, not client apps).
import { buildApp } from '../../../src/app.ts';
import { createStripeProcessor } from '../../../src/modules/payments/stripe-processor.ts';
import { createCatalogue } from '../../../src/modules/stations/catalogue.ts';
import { manualClock } from '../../../src/platform/clock.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { createDatabase } from '../../../src/platform/db.ts';

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is arbitrary JSON
export type OpenApiDocument = Record<string, any>;

/** The document the service serves, with its default settings. */
export async function serviceDocument(): Promise<OpenApiDocument> {
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '/nonexistent-sdk-generate', LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'https://localhost:8443' });
  const db = createDatabase('postgres://sdk-generate@127.0.0.1:1/none');
  const clock = manualClock(new Date(0));
  // A processor that is never called: payment routes exist only with one.
  const processor = createStripeProcessor({
    secretKey: 'sk_test_unused',
    publishableKey: 'pk_test_unused',
    webhookSecret: 'whsec_unused',
    apiBase: 'http://127.0.0.1:1',
    sandbox: true,
  });
  const app = await buildApp({
    config,
    db,
    clock,
    authenticate: async () => {
      throw new Error('not served: the app is built only for its document');
    },
    catalogue: createCatalogue({ db, clock }),
    payments: { processor },
    ocpi: {},
    logger: false,
  });
  try {
    await app.ready();
    return structuredClone(app.swagger()) as OpenApiDocument;
  } finally {
    await app.close();
    await db.close();
  }
}

const CLIENT_PATH_PREFIX = '/api/v1/';

/** The client API's part of the document: its paths under /api/v1, everything else as it is. */
export function clientDocument(document: OpenApiDocument): OpenApiDocument {
  const paths = Object.fromEntries(Object.entries(document.paths ?? {}).filter(([path]) => path.startsWith(CLIENT_PATH_PREFIX)));
  return { ...document, paths };
}
