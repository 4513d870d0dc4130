-- EVSEs keep the order in which the CPO lists them in its Location (stations
-- show them in that order). Rows stored before this column existed keep uid
-- order (position 0, then uid).
ALTER TABLE ocpi_evses ADD COLUMN position integer NOT NULL DEFAULT 0;

-- What the in-memory catalogue prices an EVSE from, written with the EVSE so
-- loading the catalogue reads a short text instead of taking the connectors
-- apart: a JSON array with one
-- [standard, power_type, max_voltage, max_amperage, max_electric_power, tariff_ids]
-- per connector.
ALTER TABLE ocpi_evses ADD COLUMN connectors_key text;
UPDATE ocpi_evses e
   SET connectors_key = (SELECT jsonb_agg(jsonb_build_array(c->'standard', c->'power_type', c->'max_voltage', c->'max_amperage',
                                                            c->'max_electric_power', c->'tariff_ids') ORDER BY n)
                           FROM jsonb_array_elements(e.data->'connectors') WITH ORDINALITY AS x(c, n))::text;
ALTER TABLE ocpi_evses ALTER COLUMN connectors_key SET NOT NULL;
