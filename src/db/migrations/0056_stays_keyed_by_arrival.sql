-- A stay is one asset's arrival somewhere: (org_id, asset_id, started_at), unique since
-- 0005_tracking, is now its primary key, and the surrogate id loses its index. Ingest finds
-- and changes stays by that key already held (the newest stay, the stays around a late
-- read), so the id's index only cost one more index entry per move (docs/ingest.md,
-- "Stays keyed by their arrival"). The id column stays: ingest's placing logic tells the
-- stays it loaded apart by it.
ALTER TABLE stays DROP CONSTRAINT stays_pkey;
ALTER TABLE stays ADD CONSTRAINT stays_pkey PRIMARY KEY USING INDEX stays_asset_time;
