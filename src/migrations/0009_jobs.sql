-- Durable background jobs (src/platform/jobs.ts), shared by every service
-- process on this database: a job is claimed by one worker at a time under a
-- lease, retried with backoff when its handler fails, and resumed by another
-- worker when the one holding it dies. Times are the service clock's, never
-- the database's now().

CREATE TABLE jobs (
  id bigserial PRIMARY KEY,
  -- Which handler runs it.
  queue text NOT NULL CHECK (queue <> ''),
  -- Optional singleton key: at most one unfinished (queued or running) job per
  -- (queue, key); once that job is done or failed the key may be enqueued again.
  key text,
  payload jsonb NOT NULL,
  -- queued: waits for run_at; running: held by locked_by until locked_until
  -- (renewed while its handler runs); done; failed: gave up (kept for the operator).
  state text NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
  run_at timestamptz NOT NULL,
  -- Runs started so far (a run whose worker died counts).
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  max_attempts integer NOT NULL CHECK (max_attempts >= 1),
  locked_by text,
  locked_until timestamptz,
  -- The last failure's message (truncated, no stack).
  last_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  finished_at timestamptz,
  CHECK ((state = 'running') = (locked_until IS NOT NULL))
);

CREATE UNIQUE INDEX jobs_queue_key_unfinished ON jobs (queue, key) WHERE state IN ('queued', 'running');
-- Due jobs, oldest first (the claim).
CREATE INDEX jobs_due_idx ON jobs (run_at, id) WHERE state = 'queued';
-- Running jobs whose lease expired (their worker died).
CREATE INDEX jobs_lease_idx ON jobs (locked_until) WHERE state = 'running';
-- Finished jobs to purge.
CREATE INDEX jobs_done_idx ON jobs (finished_at) WHERE state = 'done';
