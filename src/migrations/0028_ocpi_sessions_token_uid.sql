-- OCPI 2.1.1 CDRs carry no session_id: the CDR is linked to the CPO's Session by its token, EVSE and start
-- (src/ocpi-protocol/v2_1_1/from-peer.ts, sessionIdOf211Cdr). The Sessions of one token are found by this index.
CREATE INDEX ocpi_sessions_token_uid_idx ON ocpi_sessions ((data -> 'cdr_token' ->> 'uid'));
