-- EVSEs keep the order in which the CPO lists them in its Location (stations
-- show them in that order). Rows stored before this column existed keep uid
-- order (position 0, then uid).
ALTER TABLE ocpi_evses ADD COLUMN position integer NOT NULL DEFAULT 0;
