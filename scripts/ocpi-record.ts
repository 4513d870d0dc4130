// Preloaded into test processes when OCPI_RECORD_DIR is set (scripts/test.ts):
// every OCPI message our parsers accept is written there, for the CI-only check
// against the official OpenAPI (scripts/ocpi-official-check.ts).
import { setOcpiRecorder } from '../src/ocpi-protocol/validate.ts';

setOcpiRecorder(process.env.OCPI_RECORD_DIR);
