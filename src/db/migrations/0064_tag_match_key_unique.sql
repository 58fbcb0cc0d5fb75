-- An RFID or BLE tag is one tag however its value is spelled: ingest finds the tag a reader
-- saw by its match key (0005: case, separators and leading zeros ignored), so two live
-- tags of one type with one match key made a read land on whichever the lookup returned,
-- another asset's maybe. tags_value_live compares the spelling only; this makes the match
-- key unique among live RFID and BLE tags of a type, so another spelling of a live tag is
-- the unique violation the services answer 409 (docs/api-decisions.md, "A tag is one tag
-- however it is spelled"). The services look first and name the holder; the index settles
-- two attaches at once (the second waits for the first to commit, then fails).
--
-- Where such pairs exist already, which of them is right is the organization's to say:
-- the earliest of each stays in the index, the later ones are marked and left out of it
-- (ingest takes the earliest, src/tracking/resolve.ts), and the services refuse another
-- spelling of any of them all the same.
ALTER TABLE tags ADD COLUMN shares_match_key boolean NOT NULL DEFAULT false;

UPDATE tags t SET shares_match_key = true
  FROM (SELECT id, row_number() OVER (PARTITION BY org_id, tag_type, match_key ORDER BY id) AS n
          FROM tags WHERE detached_at IS NULL AND tag_type IN ('rfid', 'ble')) d
 WHERE t.id = d.id AND d.n > 1;

CREATE UNIQUE INDEX tags_match_key_live ON tags (org_id, tag_type, match_key)
  WHERE detached_at IS NULL AND tag_type IN ('rfid', 'ble') AND NOT shares_match_key;

-- The generated column's expression, for a value not stored yet (the services' checks).
CREATE FUNCTION tag_match_key(tag_type text, value text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN tag_type IN ('rfid', 'ble')
    THEN coalesce(nullif(ltrim(upper(regexp_replace(value, '[\s:-]', '', 'g')), '0'), ''), '0')
    ELSE value END;

-- The mark is bookkeeping, not something a person changed: the activity log leaves it out
-- of a tag's values, as it leaves org_id (0044's triggers for tags, restated with it).
DROP TRIGGER activity ON tags;
DROP TRIGGER activity_created ON tags;
CREATE TRIGGER activity AFTER DELETE OR UPDATE OF tag_type, value, asset_id, location_id, detached_at ON tags
  FOR EACH ROW EXECUTE FUNCTION record_activity('tag', 'detached_at', 'org_id,shares_match_key', '');
CREATE TRIGGER activity_created AFTER INSERT ON tags REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_activity_inserts('tag', 'org_id,shares_match_key', '');
