-- A claimed push is leased while it travels (leased_until), apart from when it
-- is due (next_attempt_at). A newer body of the same object queued meanwhile
-- waits for that send to end instead of travelling beside it, so a CPO never
-- receives an older token after a newer one; a lease of a process that died
-- expires and the push comes due again.
ALTER TABLE ocpi_outbox ADD COLUMN leased_until timestamptz;
