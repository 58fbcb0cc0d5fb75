-- Tracking: readers and their scan points, the raw message log (time-partitioned, so
-- retention drops whole partitions), and asset history compacted into stays.

-- Readers report tag values in many spellings; matching ignores case, separators and
-- leading zeros for RFID EPCs and BLE identifiers. Barcodes match exactly.
ALTER TABLE tags ADD COLUMN match_key text GENERATED ALWAYS AS (
  CASE WHEN tag_type IN ('rfid', 'ble')
    THEN coalesce(nullif(ltrim(upper(regexp_replace(value, '[\s:-]', '', 'g')), '0'), ''), '0')
    ELSE value END
) STORED;
CREATE INDEX tags_match ON tags (org_id, match_key) WHERE detached_at IS NULL;

CREATE TABLE readers (
  id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 2147483647) PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  family text NOT NULL CHECK (family IN ('impinj-r700', 'zebra-fx', 'csl-cs463', 'generic-json')),
  identity text NOT NULL CHECK (length(identity) BETWEEN 1 AND 255),
  topic text NOT NULL CHECK (length(topic) BETWEEN 1 AND 512),
  -- sha256 of the webhook secret, for readers that push HTTP.
  webhook_secret_hash text,
  created_at timestamptz NOT NULL DEFAULT now_ms(),
  deleted_at timestamptz,
  last_message_at timestamptz,
  good_reads bigint NOT NULL DEFAULT 0,
  bad_reads bigint NOT NULL DEFAULT 0,
  unknown_reads bigint NOT NULL DEFAULT 0
);
-- Topics are global on a broker: one live reader per topic across organizations.
CREATE UNIQUE INDEX readers_topic_live ON readers (topic) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX readers_identity_live ON readers (org_id, identity) WHERE deleted_at IS NULL;

CREATE TABLE scan_points (
  id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 2147483647) PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  reader_id bigint NOT NULL REFERENCES readers (id),
  -- null: every antenna of the reader without a point of its own.
  antenna integer CHECK (antenna IS NULL OR antenna BETWEEN 0 AND 65535),
  location_id bigint NOT NULL REFERENCES locations (id),
  created_at timestamptz NOT NULL DEFAULT now_ms()
);
CREATE UNIQUE INDEX scan_points_antenna ON scan_points (reader_id, coalesce(antenna, -1));
CREATE INDEX scan_points_org ON scan_points (org_id, reader_id);

-- Every message as received, for audit and replay; kept for the retention period.
CREATE TABLE raw_messages (
  received_at timestamptz NOT NULL,
  id bigint GENERATED ALWAYS AS IDENTITY,
  org_id bigint NOT NULL,
  reader_id bigint,
  source text NOT NULL CHECK (source IN ('mqtt', 'webhook', 'handheld', 'import')),
  payload text NOT NULL,
  good_reads integer NOT NULL DEFAULT 0,
  bad_reads integer NOT NULL DEFAULT 0,
  unknown_reads integer NOT NULL DEFAULT 0,
  errors text[],
  PRIMARY KEY (received_at, id)
) PARTITION BY RANGE (received_at);
CREATE INDEX raw_messages_org ON raw_messages (org_id, received_at);

-- Creates the daily partition holding `day`; called ahead of time by the service.
CREATE FUNCTION ensure_raw_partition(day date) RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  name text := 'raw_messages_' || to_char(day, 'YYYYMMDD');
BEGIN
  IF to_regclass(name) IS NULL THEN
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF raw_messages FOR VALUES FROM (%L) TO (%L)',
      name, day::timestamptz, (day + 1)::timestamptz);
    EXECUTE format('GRANT SELECT, INSERT ON %I TO tagtrail_app', name);
  END IF;
END $$;
-- Anything outside the prepared days still lands somewhere.
CREATE TABLE raw_messages_default PARTITION OF raw_messages DEFAULT;

-- A stay: the asset arrived at started_at and was last seen there at last_seen_at.
CREATE TABLE stays (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint NOT NULL,
  asset_id bigint NOT NULL REFERENCES assets (id),
  location_id bigint NOT NULL REFERENCES locations (id),
  started_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  CHECK (last_seen_at >= started_at)
);
CREATE UNIQUE INDEX stays_asset_time ON stays (org_id, asset_id, started_at);

CREATE INDEX assets_last_seen ON assets (org_id, last_seen_at, id) WHERE last_seen_at IS NOT NULL;

ALTER TABLE readers ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON readers USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
ALTER TABLE scan_points ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON scan_points USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
ALTER TABLE raw_messages ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON raw_messages USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
ALTER TABLE stays ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON stays USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());

GRANT SELECT, INSERT, UPDATE, DELETE ON readers, scan_points, stays TO tagtrail_app;
GRANT SELECT, INSERT ON raw_messages, raw_messages_default TO tagtrail_app;

-- The report's `q` covers asset name, key and tag values but not the description.
CREATE INDEX assets_report_search ON assets USING gin (
  (lower((external_key || chr(1) || name || chr(1) || tag_values) COLLATE "und-x-icu")) gin_trgm_ops
);
