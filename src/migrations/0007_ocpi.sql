-- OCPI 2.2.1 connections to charge point operators, and what they send us
-- besides the catalogue: sessions, CDRs and the results of our commands.

-- One row per peer platform. Credentials tokens the peer presents to us are
-- stored as SHA-256 digests only (a peer that asks for its credentials already
-- holds the token it asked with); the token we present to the peer is needed
-- in clear to call it.
CREATE TABLE ocpi_connections (
  id uuid PRIMARY KEY,
  name text NOT NULL UNIQUE,
  -- invited: we issued a TOKEN_A and wait for the peer to register;
  -- connected: credentials exchanged; disconnected: unregistered (rows kept).
  status text NOT NULL CHECK (status IN ('invited', 'connected', 'disconnected')),
  -- Digest of the token the peer uses to call us (its TOKEN_A while invited).
  incoming_token_sha256 bytea UNIQUE,
  incoming_token_kind text NOT NULL CHECK (incoming_token_kind IN ('A', 'C')),
  -- While we renew our token (PUT to the peer), the new one works too: the peer checks it during the PUT.
  pending_token_sha256 bytea UNIQUE,
  -- The token we present to the peer (null while invited).
  outgoing_token text,
  -- Accept and send unencoded tokens (OCPI 2.1.1/2.2 peers).
  raw_tokens boolean NOT NULL DEFAULT false,
  versions_url text,
  version text,
  -- The peer's endpoints of that version: [{identifier, role, url}].
  endpoints jsonb NOT NULL DEFAULT '[]',
  -- The peer's CredentialsRoles: [{role, country_code, party_id, business_details}].
  roles jsonb NOT NULL DEFAULT '[]',
  -- Party the operator expects (cpo connect --party CC*PID); the handshake fails without it.
  expected_party text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  last_synced_at timestamptz
);

-- Which connection speaks for which party: objects of a party arrive only over its connection.
CREATE TABLE ocpi_connection_parties (
  connection_id uuid NOT NULL REFERENCES ocpi_connections (id) ON DELETE CASCADE,
  country_code text NOT NULL,
  party_id text NOT NULL,
  role text NOT NULL,
  PRIMARY KEY (country_code, party_id, role)
);
CREATE INDEX ocpi_connection_parties_connection_idx ON ocpi_connection_parties (connection_id);

-- Sessions as the CPO sends them (PUT, then PATCHes that append charging periods).
CREATE TABLE ocpi_sessions (
  country_code text NOT NULL,
  party_id text NOT NULL,
  id text NOT NULL,
  connection_id uuid NOT NULL REFERENCES ocpi_connections (id),
  status text NOT NULL,
  authorization_reference text,
  data jsonb NOT NULL,
  last_updated timestamptz NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (country_code, party_id, id)
);
CREATE INDEX ocpi_sessions_authorization_reference_idx ON ocpi_sessions (authorization_reference) WHERE authorization_reference IS NOT NULL;

-- CDRs are immutable: a second POST of the same id is acknowledged and ignored.
CREATE TABLE ocpi_cdrs (
  country_code text NOT NULL,
  party_id text NOT NULL,
  id text NOT NULL,
  connection_id uuid NOT NULL REFERENCES ocpi_connections (id),
  session_id text,
  authorization_reference text,
  credit boolean NOT NULL DEFAULT false,
  data jsonb NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (country_code, party_id, id)
);
CREATE INDEX ocpi_cdrs_session_idx ON ocpi_cdrs (country_code, party_id, session_id);
CREATE INDEX ocpi_cdrs_received_idx ON ocpi_cdrs (received_at);

-- Commands we send to CPOs. The response_url carries the command id and a
-- random secret, so only the CPO we sent it to can post the result.
CREATE TABLE ocpi_commands (
  id uuid PRIMARY KEY,
  connection_id uuid NOT NULL REFERENCES ocpi_connections (id),
  type text NOT NULL,
  callback_secret_sha256 bytea NOT NULL,
  request jsonb NOT NULL,
  -- sending -> accepted | rejected | failed (no answer) -> result received
  status text NOT NULL CHECK (status IN ('sending', 'accepted', 'rejected', 'failed')),
  response jsonb,
  result text,
  result_message text,
  created_at timestamptz NOT NULL,
  responded_at timestamptz,
  result_at timestamptz
);

-- Pushes to CPOs (tokens) that must not be lost: retried with backoff until accepted.
CREATE TABLE ocpi_outbox (
  id bigserial PRIMARY KEY,
  connection_id uuid NOT NULL REFERENCES ocpi_connections (id) ON DELETE CASCADE,
  module text NOT NULL,
  method text NOT NULL,
  -- Path below the peer's endpoint of that module.
  path text NOT NULL,
  body jsonb,
  -- Only the newest push of an object is worth sending.
  dedupe_key text,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  last_error text,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX ocpi_outbox_dedupe_key ON ocpi_outbox (connection_id, dedupe_key) WHERE dedupe_key IS NOT NULL;
CREATE INDEX ocpi_outbox_due_idx ON ocpi_outbox (next_attempt_at);
