-- Claims of the payments service. It never holds a transaction (or a
-- connection) while it waits for the payment processor: where it used to keep
-- a row locked across a processor call (placing, capturing or releasing a
-- hold; making a user's processor customer; any change of a user's
-- payment-method mirror), it now commits a claim here before the call and
-- deletes it after. Others wait for the claim to go, polling without a
-- connection, instead of waiting for a lock; a claim whose holder died lapses
-- at expires_at (the database's clock).
CREATE TABLE payment_claims (
  -- What is claimed: hold:<hold id>, or customer:<account>:<user id>.
  key text PRIMARY KEY,
  -- The holder's: only it deletes the claim, and writes under it only while it still holds it.
  token uuid NOT NULL,
  -- What for, e.g. capture or remove:<payment method id> (a method being removed is not used meanwhile).
  purpose text NOT NULL,
  expires_at timestamptz NOT NULL
);
