-- Ingest writes a stay for every move of an asset, and each row's foreign keys were
-- checked by a query of their own: the asset's row and the location's row key-share
-- locked, the location's through a multixact, since the four lanes share-lock the same
-- few locations at once. With the moving population that was the larger half of the
-- stays INSERT's time, under the asset locks the lanes wait on (docs/ingest.md, step 3).
-- The same goes for the position's location, checked on every move.
--
-- What the keys guarded is kept by the writers: stays and positions are written only by
-- ingest (src/tracking/sightings.ts), which holds the asset's row lock after finding it
-- live (lockAssets) and a share lock on each location after finding it live
-- (lockLocations), so a row never names an asset or location that is not there; assets
-- and locations are only ever soft-deleted. The position keeps its asset key (and its
-- ON DELETE CASCADE): it is checked only when the position is first written.
ALTER TABLE stays DROP CONSTRAINT stays_asset_id_fkey, DROP CONSTRAINT stays_location_id_fkey;
ALTER TABLE asset_positions DROP CONSTRAINT asset_positions_location_id_fkey;
