// JSON Schema validation for tests that hold answers and bodies against the OpenAPI document: Ajv with the
// formats the document uses (uuid, date-time, uri, ...).
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';

// ajv-formats is CommonJS: its function is the default export under Node's ESM loader.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (ajv: Ajv) => Ajv;

/** An Ajv that reports every error and knows the document's formats (not strict: the document carries OpenAPI keywords). */
export function schemaValidator(): Ajv {
  return addFormats(new Ajv({ strict: false, allErrors: true }));
}
