-- Client events (issue 19): what happened to a client's objects, written in the
-- same transaction as the change that causes it (an outbox), then delivered to
-- the client's webhook endpoints and streamed to its apps (Server-Sent Events).

-- One row per event. seq orders events in commit-independent insertion order;
-- a session's events are read by (session_id, seq). body is the event exactly
-- as delivered: {id, type, created_at, data: {object}, user_id}.
CREATE TABLE client_events (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  client_id uuid NOT NULL,
  user_id uuid,
  type text NOT NULL,
  -- For charging_session.* events: the session (the live stream reads by it).
  session_id uuid,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX client_events_session ON client_events (session_id, seq) WHERE session_id IS NOT NULL;

-- A client's webhook endpoints. events: event types, or {'*'} for all.
CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  client_id uuid NOT NULL REFERENCES api_clients (id),
  url text NOT NULL,
  events text[] NOT NULL CHECK (cardinality(events) > 0),
  description text,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_client ON webhook_endpoints (client_id, created_at, id);

-- One row per (endpoint, event): the event's delivery to that endpoint, created
-- with the event (fan-out in the same transaction). Due while next_attempt_at is
-- set; delivered_at once a 2xx came back.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  client_id uuid NOT NULL,
  event_seq bigint NOT NULL REFERENCES client_events (seq),
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  last_status integer,
  last_error text,
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL,
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at, id);
