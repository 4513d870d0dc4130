-- Charging sessions (the charging module) and what they cost (the invoicing
-- module): bills, debts, invoices and gapless invoice numbers.

-- One row per start attempt. status is what clients see (contract.md):
-- pending -> active -> stopping -> completed, or failed. start_step is where
-- the start saga stands; each step is written before the next one begins,
-- so a crash resumes or compensates from the last written step.
CREATE TABLE charging_sessions (
  id uuid PRIMARY KEY,
  client_id uuid NOT NULL,
  user_id uuid NOT NULL,
  payment_method_id text NOT NULL,
  -- As clients name them.
  evse_id text NOT NULL,
  station_id text NOT NULL,
  -- Where the EVSE is at its CPO (OCPI).
  country_code text NOT NULL,
  party_id text NOT NULL,
  location_id text NOT NULL,
  evse_uid text NOT NULL,
  connector_id text,
  status text NOT NULL CHECK (status IN ('pending', 'active', 'stopping', 'completed', 'failed')),
  -- holding: checks passed, the hold is being placed; held: the hold is authorized; commanding: START_SESSION is on its way;
  -- accepted: the CPO accepted it (the start answered 201); ended: failed or completed.
  start_step text NOT NULL CHECK (start_step IN ('holding', 'held', 'commanding', 'accepted', 'ended')),
  failure_reason text,
  -- The hold this session uses: normally its own (session:<id>); an authenticated hold of an earlier attempt may be adopted.
  hold_reference text NOT NULL,
  -- The hold of an earlier attempt that this one took over (that attempt then has nothing to release).
  adopted_hold_of uuid,
  -- Minor units, in currency.
  pre_authorization_amount bigint NOT NULL CHECK (pre_authorization_amount > 0),
  currency text NOT NULL,
  -- What prices the session: the OCPI tariff in force at the start (our fallback tariff when the CPO sent none),
  -- the location's time zone and the operator's starting fee {price, vat} (decimal strings) or null.
  tariff jsonb NOT NULL,
  tariff_is_fallback boolean NOT NULL,
  time_zone text NOT NULL,
  starting_fee jsonb,
  -- Shown to clients, as it was at the start.
  station_info jsonb NOT NULL,
  is_partner boolean NOT NULL,
  logo_url text,
  user_facing_session_prices jsonb NOT NULL,
  start_command_id uuid,
  stop_command_id uuid,
  -- The CPO's session id, once it reported one.
  ocpi_session_id text,
  start_time timestamptz,
  end_time timestamptz,
  -- The CPO's last_updated of its latest Session report (its clock: durations of running sessions are measured to it).
  reported_at timestamptz,
  consumed_energy numeric(12, 3) NOT NULL DEFAULT 0,
  -- Minor units, incl. VAT and the starting fee, from the tariff and the charging periods so far.
  estimated_cost bigint,
  rates smallint CHECK (rates BETWEEN 1 AND 5),
  accepted_at timestamptz,
  -- When the CPO must have reported the session by (start timeout).
  start_deadline timestamptz,
  stop_requested_at timestamptz,
  -- The CDR that completed it.
  cdr_country_code text,
  cdr_party_id text,
  cdr_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- One unfinished session per user and EVSE: concurrent starts insert one row, the others are refused.
CREATE UNIQUE INDEX charging_sessions_one_unfinished ON charging_sessions (user_id, evse_id) WHERE status IN ('pending', 'active', 'stopping');
CREATE INDEX charging_sessions_user_idx ON charging_sessions (client_id, user_id, created_at DESC, id DESC);
CREATE INDEX charging_sessions_ocpi_idx ON charging_sessions (country_code, party_id, ocpi_session_id) WHERE ocpi_session_id IS NOT NULL;
CREATE INDEX charging_sessions_unfinished_idx ON charging_sessions (updated_at) WHERE status IN ('pending', 'active', 'stopping');

-- What a completed session costs, and how it was paid. One per session; the
-- steps move forward only: priced -> settled (captured / charged / debt) -> invoiced.
CREATE TABLE charging_bills (
  session_id uuid PRIMARY KEY REFERENCES charging_sessions (id),
  client_id uuid NOT NULL,
  user_id uuid NOT NULL,
  step text NOT NULL CHECK (step IN ('priced', 'settled', 'invoiced', 'not_billed')),
  currency text NOT NULL,
  -- [{component, description, quantity, unit, unit_price, net, vat_rate, vat, gross}], amounts as decimal strings.
  lines jsonb NOT NULL,
  -- Minor units.
  net bigint NOT NULL,
  vat bigint NOT NULL,
  gross bigint NOT NULL,
  -- The CPO's total and ours (decimal strings incl. VAT), and whether they differ by more than one cent.
  cdr_total text,
  engine_total text NOT NULL,
  price_mismatch boolean NOT NULL,
  price_source text NOT NULL CHECK (price_source IN ('engine', 'cdr')),
  captured bigint NOT NULL DEFAULT 0,
  charged bigint NOT NULL DEFAULT 0,
  charge_payment_intent_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Final charges that failed: the user pays them with the processor's SDK (payment_intent_client_secret).
CREATE TABLE charging_debts (
  session_id uuid PRIMARY KEY REFERENCES charging_sessions (id),
  client_id uuid NOT NULL,
  user_id uuid NOT NULL,
  payment_method_id text NOT NULL,
  payment_intent_id text NOT NULL UNIQUE,
  client_secret text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  status text NOT NULL CHECK (status IN ('unpaid', 'paid')),
  created_at timestamptz NOT NULL,
  paid_at timestamptz
);
CREATE INDEX charging_debts_user_idx ON charging_debts (client_id, user_id, created_at DESC) WHERE status = 'unpaid';

-- Invoice numbers per issuer, without gaps: the next number is taken in the
-- transaction that inserts the invoice, so a rolled-back invoice takes none.
CREATE TABLE invoice_counters (
  issuer text PRIMARY KEY,
  last_number bigint NOT NULL
);

CREATE TABLE invoices (
  id uuid PRIMARY KEY,
  issuer text NOT NULL,
  number bigint NOT NULL,
  number_text text NOT NULL,
  client_id uuid NOT NULL,
  user_id uuid NOT NULL,
  session_id uuid NOT NULL UNIQUE REFERENCES charging_sessions (id),
  currency text NOT NULL,
  net bigint NOT NULL,
  vat bigint NOT NULL,
  gross bigint NOT NULL,
  refunded boolean NOT NULL DEFAULT false,
  -- Everything printed on the PDF, as issued; the PDF is rendered from it.
  document jsonb NOT NULL,
  issued_at timestamptz NOT NULL,
  UNIQUE (issuer, number)
);
CREATE INDEX invoices_user_idx ON invoices (client_id, user_id, issued_at DESC, id DESC);

-- Secrets the service generates once and every process shares (e.g. the invoice link key).
CREATE TABLE service_secrets (
  name text PRIMARY KEY,
  value bytea NOT NULL,
  created_at timestamptz NOT NULL
);
