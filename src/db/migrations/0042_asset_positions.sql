-- An asset's current location and last sighting move off the assets row into a narrow
-- table of their own (docs/ingest.md "Throughput and storage").
--
-- Ingest rewrote them for every asset read, and the assets row is the worst place for a
-- hot write: wide, with stored generated columns and a dozen indexes (two trigram GIN
-- indexes among them), and last_seen_at indexed, so no update was ever HOT and each wrote
-- a new entry into every index. That update was a third to a half of the service's
-- database time under ingest. Here a sighting writes a row of four columns and its three
-- btree entries; the assets row is written only by master-data changes.
CREATE TABLE asset_positions (
  asset_id bigint PRIMARY KEY REFERENCES assets (id) ON DELETE CASCADE,
  org_id bigint NOT NULL REFERENCES organizations (id),
  location_id bigint NOT NULL REFERENCES locations (id),
  -- Null only for rows carried over from before ingest wrote both together.
  last_seen_at timestamptz
);
-- Assets placed at a location: list and report filters, a location's asset count, and
-- the "has assets" check of a location delete.
CREATE INDEX asset_positions_location ON asset_positions (org_id, location_id);
-- The report's default order (last sighting) and the not-seen sweeper's time window;
-- location_id included so counting and ordering by location need no heap visit.
CREATE INDEX asset_positions_seen ON asset_positions (org_id, last_seen_at, asset_id) INCLUDE (location_id);

INSERT INTO asset_positions (asset_id, org_id, location_id, last_seen_at)
SELECT id, org_id, location_id, last_seen_at FROM assets WHERE location_id IS NOT NULL;

ALTER TABLE asset_positions ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON asset_positions USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON asset_positions TO tagtrail_app;

-- The views read the columns being dropped; they are rebuilt below on the new table.
DROP VIEW assets_in_org;
DROP VIEW tracked_assets_in_org;
-- Dropping the columns drops their indexes (assets_location, assets_tracked) with them.
ALTER TABLE assets DROP COLUMN location_id, DROP COLUMN last_seen_at;

-- The report reads its assets' key, validity and deletion for every scanned asset when it
-- counts or orders by location: joined by id from this narrow index alone (index-only),
-- as assets_tracked served them before, instead of from the wide rows. Ingest no longer
-- writes assets rows, so the index costs only master-data writes.
CREATE INDEX assets_tracking ON assets (org_id, id) INCLUDE (external_key, valid_from, valid_to, deleted_at);

-- As in 0003: the organization's assets by a plain view predicate (the policy is a
-- security barrier that keeps LIKE off the trigram index). Lists join the position
-- themselves where they show it.
CREATE VIEW assets_in_org AS
  SELECT * FROM assets WHERE org_id = current_org_id();
GRANT SELECT ON assets_in_org TO tagtrail_app;

-- As in 0006: the organization's scanned assets for the report, now the positions with
-- their assets. Both predicates are the policy's, as ordinary conditions.
CREATE VIEW tracked_assets_in_org AS
  SELECT a.id, a.org_id, a.external_key, a.name, a.tag_values, p.location_id, p.last_seen_at,
         a.valid_from, a.valid_to, a.deleted_at
  FROM asset_positions p
  JOIN assets a ON a.id = p.asset_id
  WHERE p.org_id = current_org_id() AND a.org_id = current_org_id() AND p.last_seen_at IS NOT NULL;
GRANT SELECT ON tracked_assets_in_org TO tagtrail_app;
