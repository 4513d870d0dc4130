-- The users list's settle (migration 0018) waits for a client's sign-ups in flight as long as its caller says,
-- instead of a fixed 50 ms: the page read gives it 50 ms, a test that must see it wait gives it longer.
DROP FUNCTION settle_user_list_buckets(uuid, integer);

-- Cuts buckets of `size` users off the client's head (oldest first), leaving it fewer than `size` + 1 users; returns
-- how many it made. Waits at most `wait_ms` for the client's changes in flight (then fails with 55P03: try later).
CREATE FUNCTION settle_user_list_buckets(client uuid, size integer, wait_ms integer) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  top_at timestamptz;
  top_id uuid;
  made integer;
  previous_timeout text := current_setting('lock_timeout');
BEGIN
  PERFORM set_config('lock_timeout', wait_ms || 'ms', true);
  PERFORM pg_advisory_xact_lock(user_list_lock_key(client));
  SELECT hi_created_at, hi_id INTO top_at, top_id FROM user_list_buckets
   WHERE client_id = client ORDER BY hi_created_at DESC, hi_id DESC LIMIT 1;
  -- Head user n (1-based, oldest first) ends bucket ceil(n / size); user size * k + 1 is the k-th new hi.
  INSERT INTO user_list_buckets (client_id, hi_created_at, hi_id, live)
  SELECT client, h.created_at, h.id, size
    FROM (SELECT u.created_at, u.id, row_number() OVER (ORDER BY u.created_at, u.id) AS n
            FROM users u
           WHERE u.client_id = client AND u.deleted_at IS NULL
             AND (u.created_at, u.id) >= (coalesce(top_at, '-infinity'), coalesce(top_id, '00000000-0000-0000-0000-000000000000'))) h
   WHERE h.n > 1 AND (h.n - 1) % size = 0;
  GET DIAGNOSTICS made = ROW_COUNT;
  PERFORM set_config('lock_timeout', previous_timeout, true);
  RETURN made;
END $$;
