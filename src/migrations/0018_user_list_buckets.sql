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

-- Adds `delta` to the buckets holding these live users' keys (client_ids[i], created_ats[i], ids[i]); users in
-- the head change nothing.
CREATE FUNCTION user_list_buckets_add(client_ids uuid[], created_ats timestamptz[], ids uuid[], delta integer) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  client uuid;
BEGIN
  -- The lock first, by a statement of its own: the buckets are read after it (a fresh snapshot per statement).
  FOR client IN SELECT DISTINCT c FROM unnest(client_ids) AS c ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock_shared(user_list_lock_key(client));
  END LOOP;
  UPDATE user_list_buckets b SET live = b.live + n.users * delta
    FROM (SELECT k.client_id, k.hi_created_at, k.hi_id, count(*) AS users
            FROM unnest(client_ids, created_ats, ids) AS x(client_id, created_at, id)
            CROSS JOIN LATERAL (SELECT client_id, hi_created_at, hi_id FROM user_list_buckets
                                 WHERE client_id = x.client_id AND (hi_created_at, hi_id) > (x.created_at, x.id)
                                 ORDER BY hi_created_at, hi_id LIMIT 1) k
           GROUP BY 1, 2, 3) n
   WHERE b.client_id = n.client_id AND b.hi_created_at = n.hi_created_at AND b.hi_id = n.hi_id;
END $$;

CREATE FUNCTION user_list_buckets_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM user_list_buckets_add(array_agg(client_id), array_agg(created_at), array_agg(id), 1) FROM new_users WHERE deleted_at IS NULL;
  RETURN NULL;
END $$;

CREATE FUNCTION user_list_buckets_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM user_list_buckets_add(array_agg(client_id), array_agg(created_at), array_agg(id), -1) FROM old_users WHERE deleted_at IS NULL;
  RETURN NULL;
END $$;

-- A soft delete (or a change of the key, which the service never makes): out of the old place, into the new one.
CREATE FUNCTION user_list_buckets_updated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.deleted_at IS NULL THEN
    PERFORM user_list_buckets_add(ARRAY[OLD.client_id], ARRAY[OLD.created_at], ARRAY[OLD.id], -1);
  END IF;
  IF NEW.deleted_at IS NULL THEN
    PERFORM user_list_buckets_add(ARRAY[NEW.client_id], ARRAY[NEW.created_at], ARRAY[NEW.id], 1);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION user_list_buckets_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM user_list_buckets;
  RETURN NULL;
END $$;

CREATE TRIGGER user_list_buckets_inserted AFTER INSERT ON users
  REFERENCING NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION user_list_buckets_inserted();
CREATE TRIGGER user_list_buckets_deleted AFTER DELETE ON users
  REFERENCING OLD TABLE AS old_users FOR EACH STATEMENT EXECUTE FUNCTION user_list_buckets_deleted();
CREATE TRIGGER user_list_buckets_updated AFTER UPDATE ON users FOR EACH ROW
  WHEN ((OLD.deleted_at IS NULL) IS DISTINCT FROM (NEW.deleted_at IS NULL)
        OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.id IS DISTINCT FROM NEW.id OR OLD.client_id IS DISTINCT FROM NEW.client_id)
  EXECUTE FUNCTION user_list_buckets_updated();
CREATE TRIGGER user_list_buckets_truncated AFTER TRUNCATE ON users FOR EACH STATEMENT EXECUTE FUNCTION user_list_buckets_truncated();

-- Cuts buckets of `size` users off the client's head (oldest first), leaving it fewer than `size` + 1 users; returns
-- how many it made. Waits at most lock_timeout for the client's changes in flight (then fails with 55P03: try later).
CREATE FUNCTION settle_user_list_buckets(client uuid, size integer) RETURNS integer
LANGUAGE plpgsql VOLATILE SET lock_timeout = '200ms' AS $$
DECLARE
  top_at timestamptz;
  top_id uuid;
  made integer;
BEGIN
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
  RETURN made;
END $$;
