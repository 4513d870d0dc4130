-- The CDR a session was billed from, by the CPO's key: the reconciliation
-- finds CDRs that no session is linked to (and one CDR bills one session).
CREATE UNIQUE INDEX charging_sessions_cdr_key ON charging_sessions (cdr_country_code, cdr_party_id, cdr_id) WHERE cdr_id IS NOT NULL;
