-- Events and their deliveries are kept 30 days (housekeeping purges older ones
-- once every delivery of the event is finished). The purge and the foreign key
-- from deliveries look deliveries up by event.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);
CREATE INDEX client_events_created ON client_events (created_at);
