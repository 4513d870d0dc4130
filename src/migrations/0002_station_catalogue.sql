-- The station catalogue, stored the way CPOs send it (OCPI 2.2.1): one row per
-- Location (without its EVSEs), one per EVSE (with its connectors), one per Tariff.
-- The API's Station is a projection of these rows, held in memory per process.

-- Operator (CPO party) facts that OCPI Locations do not always carry.
CREATE TABLE cpo_parties (
  country_code text NOT NULL,
  party_id text NOT NULL,
  name text NOT NULL,
  phone text,
  website text,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (country_code, party_id)
);

CREATE TABLE ocpi_locations (
  country_code text NOT NULL,
  party_id text NOT NULL,
  id text NOT NULL,
  -- Stable API id of the station projected from this location.
  station_id uuid GENERATED ALWAYS AS (md5(country_code || '*' || party_id || '*' || id)::uuid) STORED,
  data jsonb NOT NULL,
  latitude double precision NOT NULL,
  longitude double precision NOT NULL,
  last_updated timestamptz NOT NULL,
  PRIMARY KEY (country_code, party_id, id)
);
CREATE UNIQUE INDEX ocpi_locations_station_id_key ON ocpi_locations (station_id);

CREATE TABLE ocpi_evses (
  country_code text NOT NULL,
  party_id text NOT NULL,
  location_id text NOT NULL,
  uid text NOT NULL,
  evse_id text,
  status text NOT NULL,
  data jsonb NOT NULL,
  last_updated timestamptz NOT NULL,
  PRIMARY KEY (country_code, party_id, location_id, uid),
  FOREIGN KEY (country_code, party_id, location_id) REFERENCES ocpi_locations (country_code, party_id, id) ON DELETE CASCADE
);
CREATE INDEX ocpi_evses_evse_id_idx ON ocpi_evses (evse_id);

CREATE TABLE ocpi_tariffs (
  country_code text NOT NULL,
  party_id text NOT NULL,
  id text NOT NULL,
  data jsonb NOT NULL,
  last_updated timestamptz NOT NULL,
  PRIMARY KEY (country_code, party_id, id)
);

-- CPO operators the operator of this service marks as partners.
CREATE TABLE partners (
  name text PRIMARY KEY,
  logo_url text NOT NULL,
  created_at timestamptz NOT NULL
);
