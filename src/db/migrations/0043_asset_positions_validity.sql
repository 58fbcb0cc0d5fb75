-- The report counts every scanned asset of the organization that is effective and not
-- deleted (each full page runs that count). After 0042_asset_positions that needed each
-- position's asset row for its validity and deletion: where a tenth of a million assets
-- were scanned, the planner hashed a scan of all the wide asset rows, seconds per request.
-- The position now carries copies of the three columns (kept by the triggers below: set
-- when the position is first written, rewritten when the asset's change, which is rare),
-- and the report's count reads them from the position: one index alone.
-- (Numbered 0042 too: it completes that migration, and 0043-0047 are taken.)
ALTER TABLE asset_positions
  ADD COLUMN valid_from timestamptz,
  ADD COLUMN valid_to timestamptz,
  ADD COLUMN deleted_at timestamptz;
UPDATE asset_positions p SET valid_from = a.valid_from, valid_to = a.valid_to, deleted_at = a.deleted_at
FROM assets a WHERE a.id = p.asset_id;
ALTER TABLE asset_positions ALTER COLUMN valid_from SET NOT NULL;

-- A new position copies its asset's (ingest's upsert fires this for every proposed row,
-- also those that update: a primary-key probe of the asset, no write to it).
CREATE FUNCTION asset_position_validity() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF NEW.valid_from IS NULL THEN
    SELECT a.valid_from, a.valid_to, a.deleted_at INTO NEW.valid_from, NEW.valid_to, NEW.deleted_at
    FROM assets a WHERE a.id = NEW.asset_id;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER validity BEFORE INSERT ON asset_positions
  FOR EACH ROW EXECUTE FUNCTION asset_position_validity();

-- An asset's change of validity or deletion reaches its position. Writers of the asset
-- hold its row lock, and ingest takes the asset's lock before the position's, so the
-- two orders agree.
CREATE FUNCTION asset_validity_to_position() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE asset_positions SET valid_from = NEW.valid_from, valid_to = NEW.valid_to, deleted_at = NEW.deleted_at
  WHERE asset_id = NEW.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER position_validity AFTER UPDATE OF valid_from, valid_to, deleted_at ON assets
  FOR EACH ROW
  WHEN (OLD.valid_from IS DISTINCT FROM NEW.valid_from OR OLD.valid_to IS DISTINCT FROM NEW.valid_to
        OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
  EXECUTE FUNCTION asset_validity_to_position();

-- The report's order and count read this index alone (index-only).
DROP INDEX asset_positions_seen;
CREATE INDEX asset_positions_seen ON asset_positions (org_id, last_seen_at, asset_id)
  INCLUDE (location_id, valid_from, valid_to, deleted_at);

-- The report's count when no filter names the asset's own columns (key, `q`): the
-- organization's scanned positions alone, by the policy's predicate as a plain condition
-- (as tracked_assets_in_org, 0006).
CREATE VIEW tracked_positions_in_org AS
  SELECT asset_id AS id, org_id, location_id, last_seen_at, valid_from, valid_to, deleted_at
  FROM asset_positions
  WHERE org_id = current_org_id() AND last_seen_at IS NOT NULL;
GRANT SELECT ON tracked_positions_in_org TO tagtrail_app;
