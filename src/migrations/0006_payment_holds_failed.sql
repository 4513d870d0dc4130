-- A hold that stayed pending (the service crashed before the processor's
-- answer was recorded) is swept: resumed with its idempotency key, or looked
-- up at the processor by its metadata; when the processor never made it, the
-- hold ends as `failed` (final, like declined, captured, released, expired).

ALTER TABLE payment_holds DROP CONSTRAINT payment_holds_status_check;
ALTER TABLE payment_holds ADD CONSTRAINT payment_holds_status_check
  CHECK (status IN ('pending', 'authorized', 'requires_action', 'processing', 'declined', 'captured', 'released', 'expired', 'failed'));

-- The sweep reads the pending ones, oldest first.
CREATE INDEX payment_holds_pending_idx ON payment_holds (account, created_at) WHERE status = 'pending';
