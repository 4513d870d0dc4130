-- What a bill leaves uncollected because the card processor cannot take it:
-- a remainder below the processor's minimum charge (e.g. 0.30 EUR when Stripe
-- takes at least 0.50) that no hold covers. Charging it would be refused on
-- every retry, and a debt of it could not be paid either (a payment of it is
-- refused just the same), so it is waived: the invoice still states the full
-- amount of the service and says what was not collected. Minor units.
ALTER TABLE charging_bills ADD COLUMN waived bigint NOT NULL DEFAULT 0 CHECK (waived >= 0);

-- Real-time token authorization asks by user id alone (a CPO knows no client):
-- NO_CREDIT while the user has an unpaid debt.
CREATE INDEX charging_debts_unpaid_user_idx ON charging_debts (user_id) WHERE status = 'unpaid';

-- The operator's name as the catalogue had it at the start, for the invoice
-- (which named only the CPO's party id before).
ALTER TABLE charging_sessions ADD COLUMN operator_name text;
