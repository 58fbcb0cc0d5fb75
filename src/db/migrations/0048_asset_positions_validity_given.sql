-- 0043's trigger looked up the asset's validity for every row proposed to asset_positions,
-- also the rows of ingest's upsert that only update (a query per moved or read asset).
-- Ingest now hands the validity over itself, read under the asset's row lock
-- (src/tracking/repository.ts, lockAssets and setCurrentLocations), so the trigger runs
-- only where a writer leaves it out (the late-read path's refresh, and any other insert).
DROP TRIGGER validity ON asset_positions;
CREATE TRIGGER validity BEFORE INSERT ON asset_positions
  FOR EACH ROW WHEN (NEW.valid_from IS NULL) EXECUTE FUNCTION asset_position_validity();
