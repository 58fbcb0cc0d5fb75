-- Locations, assets and tags (API-SPEC "Resources and their fields").
-- Timestamps are stored truncated to the millisecond, the precision of the wire, so a
-- value a client echoes back compares equal to the stored one.
-- Keys and names sort byte-wise (COLLATE "C") so every server orders lists alike.
-- `q` matches a lowercased copy of the searchable text (ICU lowercasing, so non-ASCII
-- letters fold too) through a trigram index; chr(1) separates the fields so a match
-- cannot span two of them (control characters are refused in `q`).

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE FUNCTION now_ms() RETURNS timestamptz
  LANGUAGE sql STABLE
  AS $$ SELECT date_trunc('milliseconds', clock_timestamp()) $$;

-- Slot number of an auto-assigned key (`PREFIX-NNNN`, at least four digits, no extra
-- leading zeros), or null for any other key.
CREATE FUNCTION auto_key_slot(key text, prefix text) RETURNS integer
  LANGUAGE sql IMMUTABLE STRICT
  AS $$
    SELECT CASE WHEN key ~ ('^' || prefix || '-([0-9]{4}|[1-9][0-9]{4,8})$')
      THEN substring(key FROM length(prefix) + 2)::integer END
  $$;

CREATE TABLE locations (
  id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 2147483647) PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  external_key text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  description text,
  is_active boolean NOT NULL DEFAULT true,
  parent_id bigint REFERENCES locations (id),
  valid_from timestamptz NOT NULL DEFAULT now_ms(),
  valid_to timestamptz,
  created_at timestamptz NOT NULL DEFAULT now_ms(),
  updated_at timestamptz NOT NULL DEFAULT now_ms(),
  deleted_at timestamptz,
  -- Active tag values, kept by the tag repository, so `q` needs no join.
  tag_values text NOT NULL DEFAULT '',
  auto_slot integer GENERATED ALWAYS AS (auto_key_slot(external_key, 'LOC')) STORED,
  search_text text GENERATED ALWAYS AS (
    lower((external_key || chr(1) || name || chr(1) || coalesce(description, '') || chr(1) || tag_values) COLLATE "und-x-icu")
  ) STORED,
  CONSTRAINT locations_window CHECK (valid_to IS NULL OR valid_to > valid_from),
  CONSTRAINT locations_not_own_parent CHECK (parent_id IS DISTINCT FROM id)
);
CREATE UNIQUE INDEX locations_external_key_live ON locations (org_id, external_key) WHERE deleted_at IS NULL;
CREATE INDEX locations_external_key_sort ON locations (org_id, external_key, id);
CREATE INDEX locations_name_sort ON locations (org_id, name, id);
CREATE INDEX locations_created_sort ON locations (org_id, created_at, id);
CREATE INDEX locations_parent ON locations (org_id, parent_id, name, id);
CREATE INDEX locations_auto_slot ON locations (org_id, auto_slot) WHERE deleted_at IS NULL AND auto_slot IS NOT NULL;
CREATE INDEX locations_search ON locations USING gin (search_text gin_trgm_ops);

CREATE TABLE assets (
  id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 2147483647) PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  external_key text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  description text,
  is_active boolean NOT NULL DEFAULT true,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Scan-derived: where the asset is now and when it was last seen (tracking).
  location_id bigint REFERENCES locations (id),
  last_seen_at timestamptz,
  valid_from timestamptz NOT NULL DEFAULT now_ms(),
  valid_to timestamptz,
  created_at timestamptz NOT NULL DEFAULT now_ms(),
  updated_at timestamptz NOT NULL DEFAULT now_ms(),
  deleted_at timestamptz,
  tag_values text NOT NULL DEFAULT '',
  auto_slot integer GENERATED ALWAYS AS (auto_key_slot(external_key, 'ASSET')) STORED,
  search_text text GENERATED ALWAYS AS (
    lower((external_key || chr(1) || name || chr(1) || coalesce(description, '') || chr(1) || tag_values) COLLATE "und-x-icu")
  ) STORED,
  CONSTRAINT assets_window CHECK (valid_to IS NULL OR valid_to > valid_from)
);
CREATE UNIQUE INDEX assets_external_key_live ON assets (org_id, external_key) WHERE deleted_at IS NULL;
CREATE INDEX assets_external_key_sort ON assets (org_id, external_key, id);
CREATE INDEX assets_name_sort ON assets (org_id, name, id);
CREATE INDEX assets_created_sort ON assets (org_id, created_at, id);
CREATE INDEX assets_updated_sort ON assets (org_id, updated_at, id);
CREATE INDEX assets_location ON assets (org_id, location_id) WHERE location_id IS NOT NULL;
CREATE INDEX assets_auto_slot ON assets (org_id, auto_slot) WHERE deleted_at IS NULL AND auto_slot IS NOT NULL;
CREATE INDEX assets_search ON assets USING gin (search_text gin_trgm_ops);

-- A tag belongs to exactly one asset or one location. Detaching (or deleting the owner)
-- sets detached_at, which frees the (tag_type, value) pair for reuse at once.
CREATE TABLE tags (
  id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 2147483647) PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  tag_type text NOT NULL,
  value text NOT NULL,
  asset_id bigint REFERENCES assets (id),
  location_id bigint REFERENCES locations (id),
  created_at timestamptz NOT NULL DEFAULT now_ms(),
  detached_at timestamptz,
  CONSTRAINT tags_one_owner CHECK ((asset_id IS NULL) <> (location_id IS NULL))
);
CREATE UNIQUE INDEX tags_value_live ON tags (org_id, tag_type, value) WHERE detached_at IS NULL;
CREATE INDEX tags_asset ON tags (org_id, asset_id) WHERE asset_id IS NOT NULL AND detached_at IS NULL;
CREATE INDEX tags_location ON tags (org_id, location_id) WHERE location_id IS NOT NULL AND detached_at IS NULL;

ALTER TABLE locations ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON locations USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
ALTER TABLE assets ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON assets USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
ALTER TABLE tags ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON tags USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());

GRANT SELECT, INSERT, UPDATE, DELETE ON locations, assets, tags TO tagtrail_app;
