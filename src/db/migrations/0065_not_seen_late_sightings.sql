-- asset.not_seen for sightings that arrive late. The sweeper reports the positions whose
-- last sighting falls in [swept_until, now - threshold); a sighting delivered after its
-- window was swept (a store-and-forward reader up to the 7-day skew bound, an import, a
-- late handheld upload) landed behind the watermark and its quiet stay was never reported.
-- Ingest marks such a position when it writes it, and the next sweep reports the marked
-- ones and clears the mark (src/events/not-seen.ts). Few positions are ever marked, so the
-- partial index stays small and an ordinary position write adds no entry to it.
ALTER TABLE asset_positions ADD COLUMN quiet_late boolean NOT NULL DEFAULT false;
CREATE INDEX asset_positions_quiet_late ON asset_positions (org_id, asset_id) WHERE quiet_late;
GRANT SELECT ON not_seen_sweeps TO tagtrail_app;
