-- EVSE status changes stored and announced by one function call: a batch of
-- changes costs one round trip and one statement instead of BEGIN, a lock, an
-- update and COMMIT (four round trips, two statements planned on every call),
-- and PL/pgSQL keeps the statements' plans for the connection.
--
-- changes: a JSON array of {i, country_code, party_id, location_id, uid,
-- status, last_updated, stamp} with at most one entry per EVSE (`stamp` is
-- last_updated as the CPO wrote it, kept in the stored object). Returns the `i`
-- of every change stored (an unknown EVSE or a change older than the stored
-- status is not). Stored changes are announced on `channel` packed as
-- {"kind":"evse_statuses","changes":[...]}, a new notification whenever the
-- running size of the changes' JSON reaches `pack_bytes` (PostgreSQL's payload
-- limit is 8000 bytes).
CREATE FUNCTION apply_evse_statuses(changes jsonb, channel text, pack_bytes integer) RETURNS SETOF integer
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- The parent locations are locked first, in key order, by a statement of
  -- their own: a location being rewritten (an OCPI PUT, a pull) replaces its
  -- EVSE rows, and only a statement begun after that rewrite commits sees the
  -- new rows (a volatile function takes a fresh snapshot per statement), so a
  -- status change waits for the rewrite instead of being lost in it.
  PERFORM 1
     FROM ocpi_locations l
     JOIN (SELECT DISTINCT country_code, party_id, location_id
             FROM jsonb_to_recordset(changes) AS x(country_code text, party_id text, location_id text)) x
       ON l.country_code = x.country_code AND l.party_id = x.party_id AND l.id = x.location_id
    ORDER BY l.country_code, l.party_id, l.id
      FOR UPDATE OF l;
  RETURN QUERY
    WITH written AS (
      UPDATE ocpi_evses e
         SET status = x.status,
             data = jsonb_set(jsonb_set(e.data, '{status}', to_jsonb(x.status)), '{last_updated}', to_jsonb(x.stamp)),
             last_updated = x.last_updated
        FROM jsonb_to_recordset(changes)
          AS x(i integer, country_code text, party_id text, location_id text, uid text, status text, last_updated timestamptz, stamp text)
       WHERE e.country_code = x.country_code AND e.party_id = x.party_id AND e.location_id = x.location_id AND e.uid = x.uid
         AND e.last_updated <= x.last_updated
      RETURNING x.i, x.country_code, x.party_id, x.location_id, x.uid, x.status, x.stamp, x.last_updated
    ),
    -- The parent's last_updated follows its EVSE (mod_locations), so an older
    -- PUT of the whole location cannot undo the change.
    parents AS (
      UPDATE ocpi_locations l SET last_updated = greatest(l.last_updated, w.last_updated)
        FROM (SELECT country_code, party_id, location_id, max(last_updated) AS last_updated FROM written GROUP BY 1, 2, 3) w
       WHERE l.country_code = w.country_code AND l.party_id = w.party_id AND l.id = w.location_id
    ),
    announced AS (
      SELECT pg_notify(channel, '{"kind":"evse_statuses","changes":[' || string_agg(change, ',' ORDER BY p.i) || ']}')
        FROM (SELECT c.i, c.change, (sum(octet_length(c.change) + 1) OVER (ORDER BY c.i)) / pack_bytes AS pack
                FROM (SELECT w.i, json_build_object('country_code', w.country_code, 'party_id', w.party_id, 'location_id', w.location_id,
                                                    'uid', w.uid, 'status', w.status, 'last_updated', w.stamp)::text AS change
                        FROM written w) c) p
       GROUP BY p.pack
    )
    -- A plain SELECT in WITH runs only when read: the always-true condition
    -- makes the announcements happen.
    SELECT w.i FROM written w WHERE (SELECT count(*) FROM announced) >= 0;
END
$$;
