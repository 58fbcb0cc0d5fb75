-- total_count of an asset list without filters (or with is_active only) at a million
-- assets was an index-only scan of every live row: 180-300 ms of PostgreSQL CPU per full
-- page (docs/master-data.md "Figures"). The live assets are now counted as they change,
-- into delta rows: each statement that inserts, updates or deletes assets adds one row per
-- (organization, is_active) whose live count it moved. Writers only ever insert, so
-- concurrent writers of one organization never wait on a shared counter row; a periodic
-- pass (src/assets/count-compactor.ts) folds each organization's rows into one. A reader
-- sums the rows its snapshot sees, which is exact for that snapshot, and subtracts the
-- live assets outside their validity window now (future-dated or expired: index range
-- scans, and what is not effective is the exception).
CREATE TABLE asset_count_deltas (
  org_id bigint NOT NULL,
  is_active boolean NOT NULL,
  n bigint NOT NULL
);
CREATE INDEX asset_count_deltas_org ON asset_count_deltas (org_id, is_active) INCLUDE (n);

ALTER TABLE asset_count_deltas ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON asset_count_deltas
  USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
-- Inserted by the triggers below in the writer's own role; deleted only by the compactor
-- (a system transaction).
GRANT SELECT, INSERT ON asset_count_deltas TO tagtrail_app;

-- The expired side of the subtraction (the future-dated side is assets_liveness).
CREATE INDEX assets_expiry ON assets (org_id, valid_to) INCLUDE (deleted_at, is_active)
  WHERE valid_to IS NOT NULL;

CREATE FUNCTION asset_counts_inserted() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  INSERT INTO asset_count_deltas (org_id, is_active, n)
  SELECT org_id, is_active, count(*) FROM new_rows WHERE deleted_at IS NULL GROUP BY org_id, is_active;
  RETURN NULL;
END
$$;

CREATE FUNCTION asset_counts_updated() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  -- Most updates (a PATCH of the name) move no count: nothing is inserted for them.
  INSERT INTO asset_count_deltas (org_id, is_active, n)
  SELECT org_id, is_active, sum(n) FROM (
    SELECT org_id, is_active, -1 AS n FROM old_rows WHERE deleted_at IS NULL
    UNION ALL
    SELECT org_id, is_active, 1 AS n FROM new_rows WHERE deleted_at IS NULL
  ) moved
  GROUP BY org_id, is_active
  HAVING sum(n) <> 0;
  RETURN NULL;
END
$$;

CREATE FUNCTION asset_counts_deleted() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  INSERT INTO asset_count_deltas (org_id, is_active, n)
  SELECT org_id, is_active, -count(*) FROM old_rows WHERE deleted_at IS NULL GROUP BY org_id, is_active;
  RETURN NULL;
END
$$;

CREATE FUNCTION asset_counts_truncated() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  TRUNCATE asset_count_deltas;
  RETURN NULL;
END
$$;

CREATE TRIGGER asset_counts_inserted AFTER INSERT ON assets
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION asset_counts_inserted();
CREATE TRIGGER asset_counts_updated AFTER UPDATE ON assets
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION asset_counts_updated();
CREATE TRIGGER asset_counts_deleted AFTER DELETE ON assets
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION asset_counts_deleted();
CREATE TRIGGER asset_counts_truncated AFTER TRUNCATE ON assets
  FOR EACH STATEMENT EXECUTE FUNCTION asset_counts_truncated();

INSERT INTO asset_count_deltas (org_id, is_active, n)
SELECT org_id, is_active, count(*) FROM assets WHERE deleted_at IS NULL GROUP BY org_id, is_active;
