-- The public base URL the running service announced when it last started
-- (PUBLIC_BASE_URL, or https://<host>:<port> as it listens). Operator commands
-- that hand the address out (`cpo invite`, `cpo connect`, `cpo rotate`) read it,
-- so they need not repeat the service's PORT or PUBLIC_BASE_URL. One row.
CREATE TABLE service_address (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  public_base_url text NOT NULL,
  recorded_at timestamptz NOT NULL
);

-- A failed session's view says whether a later attempt took its hold over
-- (status transferred): looked up by adopted_hold_of, for each page of sessions.
CREATE INDEX charging_sessions_adopted_hold_idx ON charging_sessions (adopted_hold_of) WHERE adopted_hold_of IS NOT NULL;
