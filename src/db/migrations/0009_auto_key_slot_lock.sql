-- A slot freed by a delete or rename lowers the watermark, but a create running at the
-- same time could still see the slot taken (the delete not yet committed), scan past it
-- and raise the watermark over it, so the slot was skipped for good. The trigger now
-- takes the same per-organization keyspace lock that creates hold while they assign a
-- key (src/master-data/auto-key.ts: 7101 assets, 7102 locations), so the two serialise.
CREATE OR REPLACE FUNCTION auto_key_slot_freed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'DELETE' OR NEW.deleted_at IS NOT NULL OR NEW.auto_slot IS DISTINCT FROM OLD.auto_slot THEN
    PERFORM pg_advisory_xact_lock(CASE TG_TABLE_NAME WHEN 'assets' THEN 7101 ELSE 7102 END, OLD.org_id::integer);
    UPDATE auto_key_watermarks SET dense_upto = OLD.auto_slot - 1
     WHERE org_id = OLD.org_id AND kind = TG_TABLE_NAME AND dense_upto >= OLD.auto_slot;
  END IF;
  RETURN NULL;
END
$$;
