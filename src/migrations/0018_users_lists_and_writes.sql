-- The users list (newest first, page-numbered, with `count`) without counting
-- or skipping every row: a client's live users, in list order, are cut into
-- buckets of known size, so the count is a sum over the buckets plus the few
-- users newer than the newest bucket (the "head"), and page N starts inside
-- one bucket, reached by an index range instead of an OFFSET over all the
-- users before it.
--
-- A bucket holds the client's live users whose key (created_at, id) lies in
-- [the next older bucket's hi, hi); the oldest bucket has no lower bound. Users
-- at or above the newest hi are the head: they are counted when read (an
-- index-only range, kept short by settle_user_list_buckets, which cuts full
-- buckets off the head). `live` is kept exact, in the same transaction as the
-- change, by the triggers below; a new user normally lands in the head and
-- touches no bucket row, so sign-ups of one client never queue behind a
-- counter row.
--
-- Writers of users (triggers) hold a shared advisory lock of the client until
-- they commit, and read the buckets after taking it; the settle takes it
-- exclusively, so it counts the head only once no change of that client is in
-- flight, and a change that waited for it sees the new buckets.
CREATE TABLE user_list_buckets (
  client_id uuid NOT NULL,
  hi_created_at timestamptz NOT NULL,
  hi_id uuid NOT NULL,
  live integer NOT NULL,
  PRIMARY KEY (client_id, hi_created_at, hi_id)
);

CREATE FUNCTION user_list_lock_key(client uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT hashtextextended('user_list_buckets:' || client::text, 0) $$;

-- Adds `delta` to the bucket holding this live user's key; a user in the head changes nothing.
CREATE FUNCTION user_list_bucket_add(client uuid, created timestamptz, user_id uuid, delta integer) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  top_at timestamptz;
  top_id uuid;
BEGIN
  -- The lock first, by a statement of its own: the buckets are read after it (a fresh snapshot per statement).
  PERFORM pg_advisory_xact_lock_shared(user_list_lock_key(client));
  SELECT hi_created_at, hi_id INTO top_at, top_id FROM user_list_buckets
   WHERE client_id = client ORDER BY hi_created_at DESC, hi_id DESC LIMIT 1;
  IF FOUND AND (created, user_id) < (top_at, top_id) THEN
    UPDATE user_list_buckets SET live = live + delta
     WHERE client_id = client
       AND (hi_created_at, hi_id) = (SELECT hi_created_at, hi_id FROM user_list_buckets
                                      WHERE client_id = client AND (hi_created_at, hi_id) > (created, user_id)
                                      ORDER BY hi_created_at, hi_id LIMIT 1);
  END IF;
END $$;

-- A user created, soft-deleted (or deleted), or with a new key (which the service never makes): out of the old
-- place, into the new one. A row trigger: cheaper for one user than a statement trigger's transition table, and
-- within a bulk insert the lock is already held.
CREATE FUNCTION user_list_buckets_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL THEN
    PERFORM user_list_bucket_add(OLD.client_id, OLD.created_at, OLD.id, -1);
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL THEN
    PERFORM user_list_bucket_add(NEW.client_id, NEW.created_at, NEW.id, 1);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION user_list_buckets_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM user_list_buckets;
  RETURN NULL;
END $$;

CREATE TRIGGER user_list_buckets_inserted AFTER INSERT ON users FOR EACH ROW EXECUTE FUNCTION user_list_buckets_changed();
CREATE TRIGGER user_list_buckets_deleted AFTER DELETE ON users FOR EACH ROW EXECUTE FUNCTION user_list_buckets_changed();
CREATE TRIGGER user_list_buckets_updated AFTER UPDATE ON users FOR EACH ROW
  WHEN ((OLD.deleted_at IS NULL) IS DISTINCT FROM (NEW.deleted_at IS NULL)
        OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.id IS DISTINCT FROM NEW.id OR OLD.client_id IS DISTINCT FROM NEW.client_id)
  EXECUTE FUNCTION user_list_buckets_changed();
CREATE TRIGGER user_list_buckets_truncated AFTER TRUNCATE ON users FOR EACH STATEMENT EXECUTE FUNCTION user_list_buckets_truncated();

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

-- An Idempotency-Key's first step in one round trip (src/platform/http/idempotency.ts), inside the request's
-- transaction: the stored answer if one newer than `fresh_after` exists (read without the lock: replays never wait
-- for one another); otherwise the key's transaction-scoped lock, 'busy' if a twin holds it, else the answer read
-- again after the lock (the twin may have committed in between; a fresh snapshot per statement) or 'claimed'.
CREATE FUNCTION idempotency_claim(client uuid, request_key text, fresh_after timestamptz)
RETURNS TABLE (state text, fingerprint text, response_status integer, response_body jsonb)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN QUERY SELECT 'stored', k.fingerprint, k.response_status, k.response_body FROM idempotency_keys k
    WHERE k.client_id = client AND k.key = request_key AND k.created_at > fresh_after;
  IF FOUND THEN RETURN; END IF;
  IF NOT pg_try_advisory_xact_lock(hashtextextended('idempotency:' || client::text || ':' || request_key, 0)) THEN
    RETURN QUERY SELECT 'busy', NULL::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  RETURN QUERY SELECT 'stored', k.fingerprint, k.response_status, k.response_body FROM idempotency_keys k
    WHERE k.client_id = client AND k.key = request_key AND k.created_at > fresh_after;
  IF FOUND THEN RETURN; END IF;
  RETURN QUERY SELECT 'claimed', NULL::text, NULL::integer, NULL::jsonb;
END $$;
