-- Payments: the processor's customer per user, our mirror of each user's
-- payment methods (with our own default), holds (manual-capture payment
-- intents) and the processor webhook events already handled.
--
-- `account` names the processor account the ids belong to (stripe_sandbox,
-- stripe_test, stripe_live), so switching from the sandbox to real Stripe on
-- the same database never points at objects the new account does not have.

CREATE TABLE payment_customers (
  client_id uuid NOT NULL REFERENCES api_clients (id),
  user_id uuid NOT NULL REFERENCES users (id),
  account text NOT NULL,
  customer_id text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, account),
  UNIQUE (account, customer_id)
);

CREATE TABLE payment_methods (
  id text NOT NULL,
  account text NOT NULL,
  client_id uuid NOT NULL REFERENCES api_clients (id),
  user_id uuid NOT NULL,
  customer_id text NOT NULL,
  type text NOT NULL,
  card_brand text,
  card_last4 text,
  card_exp_month integer,
  card_exp_year integer,
  cardholder_name text,
  paypal_email text,
  is_default boolean NOT NULL DEFAULT false,
  -- When the processor created the method (attached to the user).
  created_at timestamptz NOT NULL,
  -- Mirror insertion order: breaks created_at ties (same second) for "newest".
  seq bigserial NOT NULL,
  mirrored_at timestamptz NOT NULL,
  PRIMARY KEY (account, id),
  FOREIGN KEY (user_id, account) REFERENCES payment_customers (user_id, account)
);
CREATE INDEX payment_methods_user_idx ON payment_methods (client_id, user_id, account, created_at DESC, seq DESC);
-- At most one default per user and account.
CREATE UNIQUE INDEX payment_methods_one_default ON payment_methods (user_id, account) WHERE is_default;

-- A hold is persisted (status pending) before the processor is asked, so a
-- crash in between is resumed with the same idempotency key, never doubled.
CREATE TABLE payment_holds (
  id uuid PRIMARY KEY,
  account text NOT NULL,
  client_id uuid NOT NULL REFERENCES api_clients (id),
  user_id uuid NOT NULL,
  payment_method_id text NOT NULL,
  -- What the hold is for (e.g. a charging session id); unique per account.
  reference text NOT NULL,
  idempotency_key text NOT NULL,
  payment_intent_id text,
  amount bigint NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  amount_capturable bigint NOT NULL DEFAULT 0,
  amount_captured bigint NOT NULL DEFAULT 0,
  status text NOT NULL CHECK (status IN ('pending', 'authorized', 'requires_action', 'processing', 'declined', 'captured', 'released', 'expired')),
  client_secret text,
  failure_code text,
  failure_message text,
  capture_before timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (account, reference),
  UNIQUE (account, idempotency_key)
);
CREATE UNIQUE INDEX payment_holds_intent_key ON payment_holds (account, payment_intent_id) WHERE payment_intent_id IS NOT NULL;
CREATE INDEX payment_holds_method_idx ON payment_holds (account, payment_method_id) WHERE status IN ('pending', 'authorized', 'requires_action', 'processing');

-- Processor webhook events already applied: a redelivery is dropped by id.
CREATE TABLE payment_webhook_events (
  account text NOT NULL,
  event_id text NOT NULL,
  type text NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (account, event_id)
);
CREATE INDEX payment_webhook_events_received_idx ON payment_webhook_events (received_at);
