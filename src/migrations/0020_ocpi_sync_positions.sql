-- Where each pull of a CPO's Sender interface stands, per module: the next
-- pull asks for what changed since (date_from). A module whose pull failed
-- keeps its position, so the others move on without it and it catches up
-- at the next pull. ocpi_connections.last_synced_at stays: the time of the
-- last pull in which every module succeeded.
CREATE TABLE ocpi_sync_positions (
  connection_id uuid NOT NULL REFERENCES ocpi_connections (id) ON DELETE CASCADE,
  -- tariffs, locations, sessions, cdrs
  module text NOT NULL,
  -- When the last successful pull of this module started (objects changed from then on are pulled next time).
  synced_at timestamptz NOT NULL,
  PRIMARY KEY (connection_id, module)
);

-- Connections pulled before: every module stands where the whole pull stood.
INSERT INTO ocpi_sync_positions (connection_id, module, synced_at)
SELECT c.id, m.module, c.last_synced_at
  FROM ocpi_connections c CROSS JOIN (VALUES ('tariffs'), ('locations'), ('sessions'), ('cdrs')) AS m (module)
 WHERE c.last_synced_at IS NOT NULL;
