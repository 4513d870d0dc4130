-- The Stripe sandbox's webhook endpoints, shared by every process on this
-- database: an event created by one process is delivered by whichever process
-- claims it, to the endpoint as it was registered (URL, pinned certificate,
-- extra headers), not as one process remembers it. Registering a URL again
-- updates its row.
CREATE TABLE stripe_sandbox.webhook_endpoints (
  url text PRIMARY KEY,
  -- PEM of the certificate the endpoint must present (a service's own self-signed one).
  pinned_certificate_pem text,
  -- Extra request headers, e.g. {"x-forwarded-proto": "https"} behind a TLS-terminating proxy.
  headers jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
