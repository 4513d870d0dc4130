-- Two lookups of a charging session read every session before (a sequential scan, under FOR UPDATE):
-- - by a command it sent (commandResult: a CPO's command result names only the command id; twice per session):
--   1.6 ms mean at about 4,000 sessions in the charging benchmark, growing with the table (the 200 level after a
--   100 level paid 40% more PostgreSQL CPU per session than a 200 level on an empty database);
-- - by the token's user on an EVSE, for a CPO that echoes neither our reference nor a session id we know
--   (findByTokenAndEvse): only sessions still waiting for their first CPO report are indexed.
CREATE INDEX charging_sessions_start_command_idx ON charging_sessions (start_command_id) WHERE start_command_id IS NOT NULL;
CREATE INDEX charging_sessions_stop_command_idx ON charging_sessions (stop_command_id) WHERE stop_command_id IS NOT NULL;
CREATE INDEX charging_sessions_unlinked_idx ON charging_sessions (user_id, created_at DESC)
  WHERE start_command_id IS NOT NULL AND ocpi_session_id IS NULL AND cdr_id IS NULL;
