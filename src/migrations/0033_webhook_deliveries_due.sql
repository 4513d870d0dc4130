-- "Is any webhook delivery due?" (repository.ts claimDueDeliveries asks it
-- before it walks the enabled endpoints under the claim lock): one probe of
-- the deliveries due by time, whoever their endpoint. Without it a claim with
-- nothing due still probed every enabled endpoint (10,000 endpoints with
-- 100,000 retries scheduled later: 85 ms and 40,000 buffers per claim, each
-- poll of each process, under a lock every process shares). 0023 had dropped
-- the index this one restores.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
