-- Client events (issue 19, part A): sessions carry a version, progress events
-- are throttled on the session row, and live streams learn how far the
-- client_events sequence is settled.

-- version: 1 at the insert, +1 at every UPDATE of the row (repository.ts), so
-- an event's session object says which state of the session it shows and a
-- receiver can discard stale ones. progress_event_at: when the session's last
-- charging_session.progress event was recorded; read and written under the
-- row's lock, so the throttle holds across processes.
ALTER TABLE charging_sessions
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN progress_event_at timestamptz;

-- A live stream reads a session's events by seq, but seq is drawn at the
-- insert and transactions commit in any order: seq 7 may commit after seq 8
-- was read and streamed, and a reader that only asks for "seq > 8" would never
-- see it. So a stream reads only up to a settled seq: one that no writer still
-- in flight can undercut.
--
-- client_events_horizon answers, in this order:
--   drawn    the highest seq drawn so far (the sequence keeps CACHE 1, so no
--            backend holds numbers it has not drawn yet);
--   writers  the transactions holding client_events' RowExclusiveLock now.
-- Every transaction that drew a seq <= drawn took that lock before drawing
-- it and holds it until it ends; so once none of `writers` holds it any more,
-- every event with seq <= drawn has committed (and is visible) or is gone
-- for good, and drawn is settled. watched_running counts the transactions of
-- an earlier answer (`watched`) that still hold the lock. Only writers of
-- client_events are waited for, not every transaction of the database (as
-- the snapshot's xmin would): a long unrelated transaction does not hold the
-- streams back.
CREATE FUNCTION client_events_horizon(watched text[], OUT drawn bigint, OUT writers text[], OUT watched_running integer)
LANGUAGE plpgsql AS $$
BEGIN
  SELECT CASE WHEN is_called THEN last_value ELSE 0 END INTO drawn FROM client_events_seq_seq;
  SELECT coalesce(array_agg(l.virtualtransaction), '{}'), count(*) FILTER (WHERE l.virtualtransaction = ANY (watched))
    INTO writers, watched_running
    FROM pg_locks l
   WHERE l.locktype = 'relation'
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.relation = 'client_events'::regclass
     AND l.mode = 'RowExclusiveLock'
     AND l.granted;
END
$$;
