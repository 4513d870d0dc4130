-- State of the built-in Stripe-compatible sandbox (src/sandbox/stripe), in its
-- own schema: nothing of the service reads these tables. Kept in PostgreSQL so
-- a restart of the service keeps the customers, payment methods and payment
-- intents its payment mirror points at, and so several instances share them.

CREATE SCHEMA stripe_sandbox;

-- The one sandbox account: its API keys and webhook signing secret.
CREATE TABLE stripe_sandbox.account (
  id smallint PRIMARY KEY CHECK (id = 1),
  secret_key text NOT NULL,
  publishable_key text NOT NULL,
  webhook_secret text NOT NULL,
  created_at timestamptz NOT NULL
);

-- Every API object (customer, setup_intent, payment_method, payment_intent,
-- charge) as its Stripe JSON, plus what the sandbox keeps to itself.
CREATE TABLE stripe_sandbox.objects (
  id text PRIMARY KEY,
  object text NOT NULL,
  customer text,
  created bigint NOT NULL,
  seq bigserial NOT NULL,
  -- Uncaptured payment intents: when the authorization lapses.
  expires_at timestamptz,
  data jsonb NOT NULL,
  internal jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX objects_list_idx ON stripe_sandbox.objects (object, customer, created DESC, seq DESC);
CREATE INDEX objects_expiry_idx ON stripe_sandbox.objects (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE stripe_sandbox.events (
  id text PRIMARY KEY,
  type text NOT NULL,
  created bigint NOT NULL,
  seq bigserial NOT NULL,
  data jsonb NOT NULL
);
CREATE INDEX events_list_idx ON stripe_sandbox.events (created DESC, seq DESC);

-- Idempotency-Key results, replayed for 24 hours.
CREATE TABLE stripe_sandbox.idempotency_keys (
  key text PRIMARY KEY,
  fingerprint text NOT NULL,
  status integer NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL
);

-- One row per event and webhook endpoint, retried with backoff until delivered.
CREATE TABLE stripe_sandbox.webhook_deliveries (
  event_id text NOT NULL REFERENCES stripe_sandbox.events (id),
  endpoint text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  failed_at timestamptz,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (event_id, endpoint)
);
CREATE INDEX webhook_deliveries_due_idx ON stripe_sandbox.webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
