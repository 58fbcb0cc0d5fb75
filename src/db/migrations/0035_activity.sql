-- The activity log (docs/web-app.md, "Activity log"): who changed which record, when, and
-- its values before and after. Entries are written by row triggers, so they are part of
-- the writing transaction (a rolled-back write leaves none) and no write path can forget
-- them: the services' write methods put the caller into the transaction's setting
-- `tagtrail.actor` (src/db/pool.ts, withOrg with a Caller); a write without it (ingest,
-- maintenance) is recorded as `system`.
--
-- Each trigger names the columns it watches (UPDATE OF …): scan-derived columns (an
-- asset's location, a reader's counters, a key's last use) are left out, so the ingest
-- path never runs the trigger at all.

CREATE TABLE activity (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  occurred_at timestamptz NOT NULL DEFAULT now_ms(),
  -- The writing transaction: the changes one service call makes to one record (an
  -- asset's insert, its tags, its assigned key) become one entry.
  xact xid8 NOT NULL DEFAULT pg_current_xact_id(),
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'cli', 'system')),
  actor_id text,
  actor_name text,
  entity_type text NOT NULL,
  entity_id text NOT NULL,
  action text NOT NULL CHECK (action IN ('created', 'updated', 'deleted')),
  -- The record whose page shows the entry: the entity itself, or the asset or location a
  -- tag is on, or the reader a scan point belongs to.
  record_type text NOT NULL,
  record_id text NOT NULL,
  before jsonb,
  after jsonb
);
CREATE INDEX activity_org_time ON activity (org_id, occurred_at, id);
-- The retention sweep, across organizations.
CREATE INDEX activity_time ON activity (occurred_at);
CREATE INDEX activity_entity ON activity (org_id, entity_type, entity_id, id);
CREATE INDEX activity_record ON activity (org_id, record_type, record_id, id);

ALTER TABLE activity ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON activity USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON activity TO tagtrail_app;

-- Arguments: entity type; the tombstone column whose setting means "deleted" ('' for
-- none); columns left out of the values (comma-separated); secret columns, whose values
-- are replaced by a short fingerprint so a rotation shows without the secret's hash.
CREATE FUNCTION record_activity() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  entity text := TG_ARGV[0];
  tombstone text := nullif(TG_ARGV[1], '');
  dropped text[] := string_to_array(TG_ARGV[2], ',');
  secrets text[] := string_to_array(TG_ARGV[3], ',');
  actor jsonb := nullif(current_setting('tagtrail.actor', true), '')::jsonb;
  old_row jsonb;
  new_row jsonb;
  any_row jsonb;
  act text;
  org bigint;
  ent_id text;
  rec_type text;
  rec_id text;
  secret text;
  prev record;
BEGIN
  IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
  IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
  any_row := coalesce(new_row, old_row);
  org := CASE WHEN entity = 'organization' THEN any_row->>'id' ELSE any_row->>'org_id' END;
  ent_id := any_row->>'id';

  IF TG_OP = 'INSERT' THEN
    act := 'created';
  ELSIF TG_OP = 'DELETE' THEN
    act := 'deleted';
  ELSIF tombstone IS NOT NULL AND old_row->>tombstone IS NULL AND new_row->>tombstone IS NOT NULL THEN
    act := 'deleted';
  ELSE
    act := 'updated';
  END IF;

  FOREACH secret IN ARRAY coalesce(secrets, '{}') LOOP
    IF old_row->>secret IS NOT NULL THEN
      old_row := jsonb_set(old_row, ARRAY[secret], to_jsonb(left(md5(old_row->>secret), 8)));
    END IF;
    IF new_row->>secret IS NOT NULL THEN
      new_row := jsonb_set(new_row, ARRAY[secret], to_jsonb(left(md5(new_row->>secret), 8)));
    END IF;
  END LOOP;
  old_row := old_row - coalesce(dropped, '{}');
  new_row := new_row - coalesce(dropped, '{}');
  -- An update that changed nothing recorded (the same values written again) is no activity.
  IF act = 'updated' AND old_row = new_row THEN RETURN NULL; END IF;

  IF entity = 'tag' THEN
    rec_type := CASE WHEN any_row->>'asset_id' IS NOT NULL THEN 'asset' ELSE 'location' END;
    rec_id := coalesce(any_row->>'asset_id', any_row->>'location_id');
  ELSIF entity = 'scan_point' THEN
    rec_type := 'reader';
    rec_id := any_row->>'reader_id';
  ELSE
    rec_type := entity;
    rec_id := ent_id;
  END IF;

  SELECT a.id, a.xact, a.action, a.before INTO prev FROM activity a
    WHERE a.org_id = org AND a.entity_type = entity AND a.entity_id = ent_id
    ORDER BY a.id DESC LIMIT 1;
  IF FOUND AND prev.xact = pg_current_xact_id() THEN
    -- A further change to the same record in the same transaction: one entry, from the
    -- values before the first change to those after the last.
    IF prev.action = 'updated' AND act = 'updated' AND prev.before = new_row THEN
      DELETE FROM activity WHERE id = prev.id;
    ELSE
      UPDATE activity SET after = new_row,
        action = CASE WHEN act = 'deleted' THEN 'deleted' ELSE prev.action END
        WHERE id = prev.id;
    END IF;
    RETURN NULL;
  END IF;

  INSERT INTO activity (org_id, actor_type, actor_id, actor_name, entity_type, entity_id, action,
                        record_type, record_id, before, after)
  VALUES (org, coalesce(actor->>'type', 'system'), actor->>'id', actor->>'name', entity, ent_id, act,
          rec_type, rec_id, old_row, new_row);
  RETURN NULL;
END
$$;

CREATE TRIGGER activity AFTER INSERT OR DELETE
  OR UPDATE OF external_key, name, description, is_active, metadata, valid_from, valid_to, deleted_at
  ON assets FOR EACH ROW
  EXECUTE FUNCTION record_activity('asset', 'deleted_at',
    'org_id,tag_values,search_text,auto_slot,location_id,last_seen_at,created_at,updated_at', '');

CREATE TRIGGER activity AFTER INSERT OR DELETE
  OR UPDATE OF external_key, name, description, is_active, parent_id, valid_from, valid_to, deleted_at
  ON locations FOR EACH ROW
  EXECUTE FUNCTION record_activity('location', 'deleted_at',
    'org_id,tag_values,search_text,auto_slot,created_at,updated_at', '');

CREATE TRIGGER activity AFTER INSERT OR DELETE
  OR UPDATE OF tag_type, value, asset_id, location_id, detached_at
  ON tags FOR EACH ROW
  EXECUTE FUNCTION record_activity('tag', 'detached_at', 'org_id', '');

CREATE TRIGGER activity AFTER INSERT OR DELETE
  OR UPDATE OF name, scopes, environment, expires_at, revoked_at
  ON api_keys FOR EACH ROW
  EXECUTE FUNCTION record_activity('api_key', 'revoked_at', 'org_id,last_used_at', '');

CREATE TRIGGER activity AFTER INSERT OR DELETE
  OR UPDATE OF name, family, identity, topic, webhook_secret_hash, mqtt_password_hash, deleted_at
  ON readers FOR EACH ROW
  EXECUTE FUNCTION record_activity('reader', 'deleted_at',
    'org_id,last_message_at,good_reads,bad_reads,unknown_reads', 'webhook_secret_hash,mqtt_password_hash');

CREATE TRIGGER activity AFTER INSERT OR DELETE OR UPDATE OF antenna, location_id
  ON scan_points FOR EACH ROW
  EXECUTE FUNCTION record_activity('scan_point', '', 'org_id', '');

CREATE TRIGGER activity AFTER INSERT OR DELETE OR UPDATE OF email, role, password_hash, removed_at
  ON users FOR EACH ROW
  EXECUTE FUNCTION record_activity('user', 'removed_at', 'org_id,created_at', 'password_hash');

CREATE TRIGGER activity AFTER INSERT OR DELETE
  OR UPDATE OF email, role, token_hash, expires_at, accepted_at, revoked_at
  ON invitations FOR EACH ROW
  EXECUTE FUNCTION record_activity('invitation', 'revoked_at', 'org_id,created_at', 'token_hash');

CREATE TRIGGER activity AFTER INSERT OR UPDATE OF name
  ON organizations FOR EACH ROW
  EXECUTE FUNCTION record_activity('organization', '', '', '');
