-- Rate limits (contract.md "Limits").
-- A client's own limit in requests per minute: NULL follows the service's
-- default (RATE_LIMIT_PER_MINUTE), 0 means unlimited.
ALTER TABLE api_clients ADD COLUMN rate_limit_per_minute integer CHECK (rate_limit_per_minute >= 0);

-- What every process has taken of a subject's limit in one fixed one-minute
-- window ("client:<id>", "ocpi:<connection id>"). Processes take allowances
-- in chunks (never past the limit), so this counts allowances handed out,
-- not requests served. Unlogged: the counts matter for a minute only, so they
-- need no WAL; after a crash or a failover the table starts empty, which
-- admits at most one extra window's worth. Old windows are purged by the
-- service (see src/platform/rate-limit/limiter.ts).
CREATE UNLOGGED TABLE rate_limit_windows (
  window_start timestamptz NOT NULL,
  subject text NOT NULL,
  taken bigint NOT NULL,
  last_grant bigint NOT NULL,
  PRIMARY KEY (window_start, subject)
);
