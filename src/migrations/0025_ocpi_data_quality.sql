-- What the tolerant OCPI reader made of each connection's objects
-- (src/ocpi-protocol/reader/rules.ts): per module and rule, how often it
-- normalized or refused something, and the latest few examples with the ids
-- of the objects. Bounded whatever a CPO sends: one count row per
-- (connection, module, rule), and at most 5 example rows each, overwritten in
-- turn (slot = count modulo 5). No object is stored, only its id, the path of
-- the value and a short detail.
CREATE TABLE ocpi_quality_counts (
  connection_id uuid NOT NULL REFERENCES ocpi_connections (id) ON DELETE CASCADE,
  -- locations, tariffs, sessions, cdrs
  module text NOT NULL CHECK (module IN ('locations', 'tariffs', 'sessions', 'cdrs')),
  rule text NOT NULL CHECK (rule ~ '^[a-z0-9-]{1,40}$'),
  -- normalized: the object was taken, changed as the rule says; rejected: it (or the part named) was left out.
  kind text NOT NULL CHECK (kind IN ('normalized', 'rejected')),
  count bigint NOT NULL CHECK (count > 0),
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (connection_id, module, rule)
);

CREATE TABLE ocpi_quality_examples (
  connection_id uuid NOT NULL,
  module text NOT NULL,
  rule text NOT NULL,
  slot smallint NOT NULL CHECK (slot >= 0 AND slot < 5),
  -- Which application of the rule this was (1 = the first ever): orders the examples, newest first.
  seq bigint NOT NULL,
  -- The object's id (country_code*party_id*id), and the part of it when the finding is about an EVSE or connector.
  object_id text NOT NULL CHECK (length(object_id) <= 120),
  part text CHECK (length(part) <= 80),
  path text NOT NULL CHECK (length(path) <= 160),
  detail text CHECK (length(detail) <= 200),
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (connection_id, module, rule, slot),
  FOREIGN KEY (connection_id, module, rule) REFERENCES ocpi_quality_counts (connection_id, module, rule) ON DELETE CASCADE
);
