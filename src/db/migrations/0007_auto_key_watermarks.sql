-- Auto keys (ASSET-NNNN, LOC-NNNN) take the lowest slot no live row holds. Finding the
-- first gap in an organization's slots is a walk of its slot index, so without help each
-- create would walk every slot below the gap: linear per create, a second or more at a
-- million auto-keyed rows, and quadratic when the planner's statistics are stale.
--
-- The watermark records, per organization and table, a slot up to which every slot is
-- known to be held by a live row. A create walks only from there to the first gap and
-- moves the watermark to the slot it takes (src/master-data/auto-key.ts); freeing a slot
-- at or below the watermark (soft delete, rename, delete) lowers it, by trigger, so no
-- code path can forget to. Over any run of creates the walks add up to the slots they
-- pass, once.
CREATE TABLE auto_key_watermarks (
  org_id bigint NOT NULL REFERENCES organizations (id),
  kind text NOT NULL CHECK (kind IN ('assets', 'locations')),
  dense_upto integer NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, kind)
);

ALTER TABLE auto_key_watermarks ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON auto_key_watermarks
  USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT, UPDATE ON auto_key_watermarks TO tagtrail_app;

CREATE FUNCTION auto_key_slot_freed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'DELETE' OR NEW.deleted_at IS NOT NULL OR NEW.auto_slot IS DISTINCT FROM OLD.auto_slot THEN
    UPDATE auto_key_watermarks SET dense_upto = OLD.auto_slot - 1
     WHERE org_id = OLD.org_id AND kind = TG_TABLE_NAME AND dense_upto >= OLD.auto_slot;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER assets_auto_slot_freed
  AFTER UPDATE OF external_key, deleted_at OR DELETE ON assets
  FOR EACH ROW WHEN (OLD.auto_slot IS NOT NULL AND OLD.deleted_at IS NULL)
  EXECUTE FUNCTION auto_key_slot_freed();

CREATE TRIGGER locations_auto_slot_freed
  AFTER UPDATE OF external_key, deleted_at OR DELETE ON locations
  FOR EACH ROW WHEN (OLD.auto_slot IS NOT NULL AND OLD.deleted_at IS NULL)
  EXECUTE FUNCTION auto_key_slot_freed();
