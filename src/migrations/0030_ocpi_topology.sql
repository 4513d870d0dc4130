-- OCPI topology: raw-token peers, platforms hosting several parties, and hubs.

-- How the peer presents its credentials token to us, as last seen: unencoded
-- ('raw', an OCPI 2.1.1/2.2 habit) or Base64-encoded (2.2.1). Both are accepted
-- from every connection; this records which one the peer uses (cpo list/show).
-- raw_tokens (0007) stays how we present ours to the peer.
ALTER TABLE ocpi_connections ADD COLUMN incoming_token_form text CHECK (incoming_token_form IN ('raw', 'base64'));

-- How our users' Token pushes reach a platform that hosts several CPO parties:
-- 'each-party', one push addressed (OCPI-to) to each of its CPO parties, or
-- 'once', one push addressed to its first CPO party (a platform that keeps one
-- token store for all its parties). A hub always gets one Broadcast Push.
-- Connections made before this migration keep what they had ('once'); new
-- ones address each party.
ALTER TABLE ocpi_connections ADD COLUMN token_push text NOT NULL DEFAULT 'once' CHECK (token_push IN ('each-party', 'once'));
ALTER TABLE ocpi_connections ALTER COLUMN token_push SET DEFAULT 'each-party';

-- The parties a connection speaks for come from its credentials roles
-- ('credentials') or, behind a hub, from the hub's ClientInfo
-- ('hubclientinfo', mod_hub_client_info: "A Hub SHALL report connected parties
-- via the HubClientInfo module"), with the hub's word on each: its
-- ConnectionStatus and when the hub last changed it. A credentials handshake
-- replaces only its own rows; a party registered directly takes precedence
-- over the same party reported by a hub.
ALTER TABLE ocpi_connection_parties
  ADD COLUMN source text NOT NULL DEFAULT 'credentials' CHECK (source IN ('credentials', 'hubclientinfo')),
  ADD COLUMN hub_status text CHECK (hub_status IN ('CONNECTED', 'OFFLINE', 'PLANNED', 'SUSPENDED')),
  ADD COLUMN hub_updated timestamptz,
  ADD CONSTRAINT ocpi_connection_parties_hub_status CHECK ((source = 'hubclientinfo') = (hub_status IS NOT NULL));

-- The sandbox CPO network: which of its parties a pushed token reached (the
-- OCPI-to party of the push; every connected party for a hub's Broadcast Push).
ALTER TABLE cpo_sandbox.tokens ADD COLUMN received_by text[] NOT NULL DEFAULT '{}';
