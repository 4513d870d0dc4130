-- 1. Every change to what authenticates an OCPI peer is announced to every
-- process on the database: each serving process caches the connection a
-- credentials token names (ocpi/connections.ts), and a handshake, a token
-- renewal or an unregistration made by another process (the CLI's `cpo
-- connect`, `cpo rotate`, `cpo disconnect`, or another instance) must be
-- honoured at once. The trigger fires in the changing transaction, so the
-- notification is delivered at its commit, whoever made the change (even by
-- hand in psql). A pull's bookkeeping (last_synced_at, updated_at) does not
-- change what a token authenticates and is not announced.
CREATE FUNCTION ocpi_connection_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ocpi_connections', coalesce(NEW.id, OLD.id)::text);
  RETURN NULL;
END;
$$;

CREATE TRIGGER ocpi_connection_inserted_or_deleted
  AFTER INSERT OR DELETE ON ocpi_connections
  FOR EACH ROW EXECUTE FUNCTION ocpi_connection_changed();

CREATE TRIGGER ocpi_connection_updated
  AFTER UPDATE ON ocpi_connections
  FOR EACH ROW
  WHEN ((OLD.name, OLD.status, OLD.incoming_token_sha256, OLD.incoming_token_kind, OLD.pending_token_sha256, OLD.outgoing_token, OLD.raw_tokens,
         OLD.versions_url, OLD.version, OLD.endpoints, OLD.roles, OLD.expected_party)
        IS DISTINCT FROM
        (NEW.name, NEW.status, NEW.incoming_token_sha256, NEW.incoming_token_kind, NEW.pending_token_sha256, NEW.outgoing_token, NEW.raw_tokens,
         NEW.versions_url, NEW.version, NEW.endpoints, NEW.roles, NEW.expected_party))
  EXECUTE FUNCTION ocpi_connection_changed();

-- 2. Bills held for the operator. A CDR in another currency than the
-- session's tariff and payment hold is never converted or guessed: the bill
-- is `held` (nothing captured, no invoice) with its reason, until the
-- operator releases it (`charging-access bills release`): billed in the
-- hold's currency at the session's own tariff (-> priced, then settled and
-- invoiced as any bill), or waived (-> `waived`: the hold is released,
-- nothing is charged, no invoice).
ALTER TABLE charging_bills DROP CONSTRAINT charging_bills_step_check;
ALTER TABLE charging_bills ADD CONSTRAINT charging_bills_step_check CHECK (step IN ('priced', 'settled', 'invoiced', 'not_billed', 'held', 'waived'));
-- Why the bill was held (for the operator), and since when.
ALTER TABLE charging_bills ADD COLUMN held_reason text;
ALTER TABLE charging_bills ADD COLUMN held_at timestamptz;
-- How the operator released it: 'tariff' (billed at the session's tariff) or 'waived'; and when.
ALTER TABLE charging_bills ADD COLUMN released_as text CHECK (released_as IN ('tariff', 'waived'));
ALTER TABLE charging_bills ADD COLUMN released_at timestamptz;
-- What `bills held` lists: few rows among many bills.
CREATE INDEX charging_bills_held_idx ON charging_bills (held_at) WHERE step = 'held';
