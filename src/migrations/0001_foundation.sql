-- API clients (tenants) and the tokens the operator issued to them.
CREATE TABLE api_clients (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  disabled_at timestamptz
);

CREATE TABLE api_tokens (
  jti text PRIMARY KEY,
  client_id uuid NOT NULL REFERENCES api_clients (id),
  issued_at timestamptz NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_tokens_client_idx ON api_tokens (client_id);

-- End users, owned by one API client each. Deletion is soft: rows are kept.
CREATE TABLE users (
  id uuid PRIMARY KEY,
  client_id uuid NOT NULL REFERENCES api_clients (id),
  email text,
  locale text NOT NULL,
  external_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);
-- Newest first, per client, for the paginated list.
CREATE INDEX users_client_created_idx ON users (client_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
-- external_id is unique among a client's live users.
CREATE UNIQUE INDEX users_client_external_id_key ON users (client_id, external_id) WHERE deleted_at IS NULL AND external_id IS NOT NULL;

CREATE TABLE billing_details (
  user_id uuid PRIMARY KEY REFERENCES users (id),
  client_id uuid NOT NULL REFERENCES api_clients (id),
  account_type text NOT NULL CHECK (account_type IN ('personal', 'business')),
  first_name text,
  last_name text,
  company_name text,
  vat_number text,
  tax_id text,
  line1 text,
  postal_code text,
  city text,
  country text,
  updated_at timestamptz NOT NULL
);

-- Idempotency-Key records. A row is written in the same transaction as the
-- effect it guards, so a stored answer always matches a committed effect.
CREATE TABLE idempotency_keys (
  client_id uuid NOT NULL REFERENCES api_clients (id),
  key text NOT NULL,
  fingerprint text NOT NULL,
  response_status integer NOT NULL,
  response_body jsonb,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
