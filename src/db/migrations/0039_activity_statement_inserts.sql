-- Creates are recorded once per statement, from the statement's transition table, instead
-- of once per row: an import that creates 100,000 assets in twenty statements writes their
-- entries in twenty INSERT ... SELECTs, not 100,000 trigger calls each with a lookup. The
-- entries are the same as the row trigger wrote (0035): a created record never merges with
-- an earlier entry of its transaction, since ids are never reused, so an insert needs no
-- lookup. Updates and deletes keep the row trigger, which merges a record's changes within
-- one transaction into one entry.

-- A record's values as the log keeps them: secrets as a short fingerprint, and without the
-- columns left out (the same rules as record_activity()).
CREATE FUNCTION activity_values(j jsonb, dropped text[], secrets text[]) RETURNS jsonb
  LANGUAGE plpgsql IMMUTABLE
  AS $$
DECLARE
  secret text;
BEGIN
  FOREACH secret IN ARRAY coalesce(secrets, '{}') LOOP
    IF j->>secret IS NOT NULL THEN
      j := jsonb_set(j, ARRAY[secret], to_jsonb(left(md5(j->>secret), 8)));
    END IF;
  END LOOP;
  RETURN j - coalesce(dropped, '{}');
END
$$;

-- Arguments: entity type; columns left out (comma-separated); secret columns.
CREATE FUNCTION record_activity_inserts() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  entity text := TG_ARGV[0];
  dropped text[] := string_to_array(TG_ARGV[1], ',');
  secrets text[] := string_to_array(TG_ARGV[2], ',');
  actor jsonb := nullif(current_setting('tagtrail.actor', true), '')::jsonb;
BEGIN
  INSERT INTO activity (org_id, actor_type, actor_id, actor_name, entity_type, entity_id, action,
                        record_type, record_id, before, after)
  SELECT CASE WHEN entity = 'organization' THEN (r.j->>'id')::bigint ELSE (r.j->>'org_id')::bigint END,
         coalesce(actor->>'type', 'system'), actor->>'id', actor->>'name', entity, r.j->>'id', 'created',
         CASE WHEN entity = 'tag' THEN CASE WHEN r.j->>'asset_id' IS NOT NULL THEN 'asset' ELSE 'location' END
              WHEN entity = 'scan_point' THEN 'reader'
              ELSE entity END,
         CASE WHEN entity = 'tag' THEN coalesce(r.j->>'asset_id', r.j->>'location_id')
              WHEN entity = 'scan_point' THEN r.j->>'reader_id'
              ELSE r.j->>'id' END,
         NULL, activity_values(r.j, dropped, secrets)
  FROM (SELECT to_jsonb(n) AS j FROM new_rows n) r
  -- In the order the records were created, as the row trigger wrote them.
  ORDER BY length(r.j->>'id'), r.j->>'id';
  RETURN NULL;
END
$$;

DROP TRIGGER activity ON assets;
CREATE TRIGGER activity AFTER DELETE OR UPDATE OF external_key, name, description, is_active, metadata, valid_from, valid_to, deleted_at
  ON assets FOR EACH ROW
  EXECUTE FUNCTION record_activity('asset', 'deleted_at', 'org_id,tag_values,search_text,auto_slot,location_id,last_seen_at,created_at,updated_at', '');
CREATE TRIGGER activity_created AFTER INSERT ON assets
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION record_activity_inserts('asset', 'org_id,tag_values,search_text,auto_slot,location_id,last_seen_at,created_at,updated_at', '');

DROP TRIGGER activity ON locations;
CREATE TRIGGER activity AFTER DELETE OR UPDATE OF external_key, name, description, is_active, parent_id, valid_from, valid_to, deleted_at
  ON locations FOR EACH ROW
  EXECUTE FUNCTION record_activity('location', 'deleted_at', 'org_id,tag_values,search_text,auto_slot,created_at,updated_at', '');
CREATE TRIGGER activity_created AFTER INSERT ON locations
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION record_activity_inserts('location', 'org_id,tag_values,search_text,auto_slot,created_at,updated_at', '');

DROP TRIGGER activity ON tags;
CREATE TRIGGER activity AFTER DELETE OR UPDATE OF tag_type, value, asset_id, location_id, detached_at
  ON tags FOR EACH ROW
  EXECUTE FUNCTION record_activity('tag', 'detached_at', 'org_id', '');
CREATE TRIGGER activity_created AFTER INSERT ON tags
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION record_activity_inserts('tag', 'org_id', '');

DROP TRIGGER activity ON api_keys;
CREATE TRIGGER activity AFTER DELETE OR UPDATE OF name, scopes, environment, expires_at, revoked_at
  ON api_keys FOR EACH ROW
  EXECUTE FUNCTION record_activity('api_key', 'revoked_at', 'org_id,last_used_at', '');
CREATE TRIGGER activity_created AFTER INSERT ON api_keys
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION record_activity_inserts('api_key', 'org_id,last_used_at', '');

DROP TRIGGER activity ON readers;
CREATE TRIGGER activity AFTER DELETE OR UPDATE OF name, family, identity, topic, webhook_secret_hash, mqtt_password_hash, deleted_at
  ON readers FOR EACH ROW
  EXECUTE FUNCTION record_activity('reader', 'deleted_at', 'org_id,last_message_at,good_reads,bad_reads,unknown_reads', 'webhook_secret_hash,mqtt_password_hash');
CREATE TRIGGER activity_created AFTER INSERT ON readers
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION record_activity_inserts('reader', 'org_id,last_message_at,good_reads,bad_reads,unknown_reads', 'webhook_secret_hash,mqtt_password_hash');

DROP TRIGGER activity ON scan_points;
CREATE TRIGGER activity AFTER DELETE OR UPDATE OF antenna, location_id
  ON scan_points FOR EACH ROW
  EXECUTE FUNCTION record_activity('scan_point', '', 'org_id', '');
CREATE TRIGGER activity_created AFTER INSERT ON scan_points
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION record_activity_inserts('scan_point', 'org_id', '');

DROP TRIGGER activity ON users;
CREATE TRIGGER activity AFTER DELETE OR UPDATE OF email, role, password_hash, removed_at
  ON users FOR EACH ROW
  EXECUTE FUNCTION record_activity('user', 'removed_at', 'org_id,created_at', 'password_hash');
CREATE TRIGGER activity_created AFTER INSERT ON users
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION record_activity_inserts('user', 'org_id,created_at', 'password_hash');

DROP TRIGGER activity ON invitations;
CREATE TRIGGER activity AFTER DELETE OR UPDATE OF email, role, token_hash, expires_at, accepted_at, revoked_at
  ON invitations FOR EACH ROW
  EXECUTE FUNCTION record_activity('invitation', 'revoked_at', 'org_id,created_at', 'token_hash');
CREATE TRIGGER activity_created AFTER INSERT ON invitations
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION record_activity_inserts('invitation', 'org_id,created_at', 'token_hash');

DROP TRIGGER activity ON organizations;
CREATE TRIGGER activity AFTER UPDATE OF name
  ON organizations FOR EACH ROW
  EXECUTE FUNCTION record_activity('organization', '', '', '');
CREATE TRIGGER activity_created AFTER INSERT ON organizations
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION record_activity_inserts('organization', '', '');
