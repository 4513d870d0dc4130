-- Webhook delivery (issue 19): endpoints get their signing secrets and their
-- failure state, deliveries a lease for the process sending them, and every
-- attempt is kept for the delivery log.

-- The signing secret (raw bytes; the API shows it once as whsec_<base64>). It is
-- needed again to sign, so it is kept like the other secrets the service uses
-- (service_secrets, OCPI tokens) and never logged. A rotated-out secret keeps
-- signing beside the new one until previous_secret_expires_at. Rows written
-- without one (tests that insert endpoints directly) get 32 random bytes from
-- two random UUIDs' digest; the API always sets its own.
ALTER TABLE webhook_endpoints
  ADD COLUMN secret bytea NOT NULL DEFAULT sha256((gen_random_uuid()::text || gen_random_uuid()::text)::bytea),
  ADD COLUMN previous_secret bytea,
  ADD COLUMN previous_secret_expires_at timestamptz,
  -- Disabled by the service (410 Gone, or failing for 3 days): why and when. Cleared when re-enabled.
  ADD COLUMN disabled_reason text,
  ADD COLUMN disabled_at timestamptz,
  -- Start of the current run of failed attempts (none since the last 2xx); null while it succeeds.
  ADD COLUMN failing_since timestamptz;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_previous_secret CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL));

-- A delivery being sent is leased to one process (lease_token) until
-- leased_until; a process killed mid-delivery leaves the lease to expire, and
-- the next claim sends it again (same webhook-id). attempts counts attempts
-- started, last_attempt_at is when the last one started.
ALTER TABLE webhook_deliveries
  ADD COLUMN leased_until timestamptz,
  ADD COLUMN lease_token uuid,
  ADD COLUMN last_attempt_at timestamptz;

-- Claims go endpoint by endpoint: its due deliveries, and its deliveries in flight (the per-endpoint bound).
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX webhook_deliveries_endpoint_leased ON webhook_deliveries (endpoint_id, leased_until) WHERE leased_until IS NOT NULL;
-- Superseded by webhook_deliveries_endpoint_due.
DROP INDEX webhook_deliveries_due;

-- One row per attempt: opened when the attempt starts, closed with its outcome
-- (the HTTP status, or a short error). An attempt whose process died is closed
-- as interrupted when the delivery is claimed again.
CREATE TABLE webhook_delivery_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  status_code integer,
  error text,
  duration_ms integer,
  PRIMARY KEY (delivery_id, attempt)
);
