-- State of the sandbox CPO network (src/sandbox/cpo), in its own schema:
-- nothing of the service reads these tables. The charging network itself is
-- regenerated from (locations, seed) at start; what lives here is what must
-- survive a restart: the OCPI connections, sessions, CDRs and their delivery,
-- the tokens eMSPs pushed, and the EVSE statuses that changed.

CREATE SCHEMA cpo_sandbox;

-- One row per OCPI connection with an eMSP platform. token_a: the
-- registration token we issued (until the peer registers with it);
-- our_token: the token the peer calls us with; their_token: the token we call
-- the peer with.
CREATE TABLE cpo_sandbox.peers (
  id text PRIMARY KEY,
  status text NOT NULL CHECK (status IN ('PENDING', 'REGISTERING', 'REGISTERED', 'UNREGISTERED')),
  token_a text UNIQUE,
  our_token text UNIQUE,
  their_token text,
  their_versions_url text,
  version text,
  endpoints jsonb NOT NULL DEFAULT '[]',
  roles jsonb NOT NULL DEFAULT '[]',
  pinned_certificate text,
  raw_token boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Charging sessions: `data` is the OCPI Session as last built (with every
-- closed charging period), `sim` the simulation's own state (car, open
-- period, stop request, push schedule).
CREATE TABLE cpo_sandbox.sessions (
  id text PRIMARY KEY,
  seq bigserial NOT NULL,
  peer_id text NOT NULL REFERENCES cpo_sandbox.peers (id),
  location_id text NOT NULL,
  evse_uid text NOT NULL,
  status text NOT NULL,
  scenario text,
  data jsonb NOT NULL,
  sim jsonb NOT NULL,
  last_updated timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX sessions_open_idx ON cpo_sandbox.sessions (status) WHERE status IN ('PENDING', 'ACTIVE');
CREATE INDEX sessions_list_idx ON cpo_sandbox.sessions (peer_id, seq);
CREATE INDEX sessions_evse_idx ON cpo_sandbox.sessions (location_id, evse_uid) WHERE status IN ('PENDING', 'ACTIVE');

CREATE TABLE cpo_sandbox.cdrs (
  id text PRIMARY KEY,
  seq bigserial NOT NULL,
  peer_id text NOT NULL REFERENCES cpo_sandbox.peers (id),
  session_id text NOT NULL UNIQUE REFERENCES cpo_sandbox.sessions (id),
  data jsonb NOT NULL,
  last_updated timestamptz NOT NULL
);
CREATE INDEX cdrs_list_idx ON cpo_sandbox.cdrs (peer_id, seq);

-- Session pushes and CDR posts to the eMSP, retried with backoff until
-- accepted (or given up). Within one ordering key (a session) only the oldest
-- undelivered message is sent, so updates arrive in order.
CREATE TABLE cpo_sandbox.outbox (
  id bigserial PRIMARY KEY,
  peer_id text NOT NULL REFERENCES cpo_sandbox.peers (id),
  ordering_key text NOT NULL,
  kind text NOT NULL,
  method text NOT NULL,
  url text NOT NULL,
  body jsonb NOT NULL,
  routing jsonb NOT NULL DEFAULT '{}',
  due_at timestamptz NOT NULL,
  lease_until timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  delivered_at timestamptz,
  failed_at timestamptz,
  last_status integer,
  last_error text,
  reply_location text,
  created_at timestamptz NOT NULL
);
CREATE INDEX outbox_pending_idx ON cpo_sandbox.outbox (ordering_key, id) WHERE delivered_at IS NULL AND failed_at IS NULL;

-- Tokens the eMSP pushed (Tokens Receiver interface).
CREATE TABLE cpo_sandbox.tokens (
  peer_id text NOT NULL REFERENCES cpo_sandbox.peers (id),
  country_code text NOT NULL,
  party_id text NOT NULL,
  uid text NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  last_updated timestamptz NOT NULL,
  PRIMARY KEY (peer_id, country_code, party_id, uid, type)
);

-- EVSE statuses that differ from the generated dataset's, with when they changed.
CREATE TABLE cpo_sandbox.evse_status (
  location_id text NOT NULL,
  evse_uid text NOT NULL,
  status text NOT NULL,
  last_updated timestamptz NOT NULL,
  PRIMARY KEY (location_id, evse_uid)
);
