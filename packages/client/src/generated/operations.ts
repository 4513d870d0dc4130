// Generated from the Charging Access OpenAPI document by `npm run sdk:generate` (the operations table). Do not edit: the CI
// check (packages/client/test/generated.test.ts) fails when this file differs from what the API generates.

/** Writes that accept an Idempotency-Key: the SDK sends one on each (a retry repeats it) and may retry them. */
export const IDEMPOTENT_WRITES: ReadonlySet<string> = new Set([
  'POST /api/v1/users/',
  'PATCH /api/v1/users/{user_id}/',
  'DELETE /api/v1/users/{user_id}/',
  'PUT /api/v1/users/{user_id}/billing-details/',
  'PATCH /api/v1/users/{user_id}/charging-sessions/{session_id}/',
  'POST /api/v1/users/{user_id}/charging/start/',
  'POST /api/v1/users/{user_id}/charging/stop/{session_id}/',
  'DELETE /api/v1/users/{user_id}/payment-methods/{pm_id}/',
  'POST /api/v1/users/{user_id}/payment-methods/{pm_id}/default/',
  'POST /api/v1/webhook-endpoints/',
  'PATCH /api/v1/webhook-endpoints/{endpoint_id}/',
  'DELETE /api/v1/webhook-endpoints/{endpoint_id}/',
  'POST /api/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry/',
  'POST /api/v1/webhook-endpoints/{endpoint_id}/rotate-secret/',
  'POST /api/v1/webhook-endpoints/{endpoint_id}/test/',
]);
