-- A Stripe webhook endpoint receives only the event types it enables, as with
-- Stripe ('*': all of them). The service enables those it handles.
ALTER TABLE stripe_sandbox.webhook_endpoints ADD COLUMN enabled_events text[] NOT NULL DEFAULT '{*}';
