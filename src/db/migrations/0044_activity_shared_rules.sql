-- The activity log's SQL in one place (no change in what it records). 0035 wrote every
-- entry from a row trigger; 0039 moved creates to a statement trigger and repeated the
-- rules (which org, which record page, values without secrets and left-out columns), and
-- both repeated each table's trigger DDL. Here both functions use the same helpers, the
-- row function loses its INSERT branch, and the triggers come from one list, so adding a
-- table or a watched column is one line.
--
-- 0039 left one table out: password_resets (0036) still logged its creates through the
-- row trigger's INSERT branch. It joins the list, so its creates go through the statement
-- trigger like every other table's, with the same entry (a created record has no earlier
-- entry to merge with), and the INSERT branch is dead everywhere.

-- Unchanged from 0039; restated so every rule the two functions share is in this file.
CREATE OR REPLACE FUNCTION activity_values(j jsonb, dropped text[], secrets text[]) RETURNS jsonb
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

-- The organization a record belongs to (an organization is its own). SQL functions, so
-- the planner inlines them into the statement trigger's INSERT ... SELECT.
CREATE FUNCTION activity_org(entity text, j jsonb) RETURNS bigint
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT (CASE WHEN entity = 'organization' THEN j->>'id' ELSE j->>'org_id' END)::bigint $$;

-- The record whose page shows the entry: the entity itself, or the asset or location a
-- tag is on, or the reader a scan point belongs to.
CREATE FUNCTION activity_record_type(entity text, j jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$
  SELECT CASE WHEN entity = 'tag' THEN CASE WHEN j->>'asset_id' IS NOT NULL THEN 'asset' ELSE 'location' END
              WHEN entity = 'scan_point' THEN 'reader'
              ELSE entity END
$$;

CREATE FUNCTION activity_record_id(entity text, j jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$
  SELECT CASE WHEN entity = 'tag' THEN coalesce(j->>'asset_id', j->>'location_id')
              WHEN entity = 'scan_point' THEN j->>'reader_id'
              ELSE j->>'id' END
$$;

-- Who is writing: the caller the services put into the transaction (src/db/pool.ts), or
-- null for a write without one (ingest, maintenance), recorded as `system`.
CREATE FUNCTION activity_actor() RETURNS jsonb
  LANGUAGE sql STABLE
  AS $$ SELECT nullif(current_setting('tagtrail.actor', true), '')::jsonb $$;

-- Updates and deletes, row by row. Arguments: entity type; the tombstone column whose
-- setting means "deleted" ('' for none); columns left out of the values (comma-separated);
-- secret columns, whose values become a short fingerprint so a rotation shows without the
-- secret's hash.
CREATE OR REPLACE FUNCTION record_activity() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  entity text := TG_ARGV[0];
  tombstone text := nullif(TG_ARGV[1], '');
  dropped text[] := string_to_array(TG_ARGV[2], ',');
  secrets text[] := string_to_array(TG_ARGV[3], ',');
  actor jsonb := activity_actor();
  -- The rows as stored: org, record and tombstone are read from them, not from the values
  -- logged (which leave org_id out). `raw` is the newest: NEW, or OLD for a delete.
  old_raw jsonb := to_jsonb(OLD);
  raw jsonb := old_raw;
  old_row jsonb := activity_values(old_raw, dropped, secrets);
  new_row jsonb;
  act text := 'updated';
  prev record;
BEGIN
  IF TG_OP = 'DELETE' THEN
    act := 'deleted';
  ELSE
    raw := to_jsonb(NEW);
    new_row := activity_values(raw, dropped, secrets);
    IF tombstone IS NOT NULL AND old_raw->>tombstone IS NULL AND raw->>tombstone IS NOT NULL THEN
      act := 'deleted';
    END IF;
  END IF;
  -- An update that changed nothing recorded (the same values written again) is no activity.
  IF act = 'updated' AND old_row = new_row THEN RETURN NULL; END IF;

  SELECT a.id, a.xact, a.action, a.before INTO prev FROM activity a
    WHERE a.org_id = activity_org(entity, raw) AND a.entity_type = entity AND a.entity_id = raw->>'id'
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
  VALUES (activity_org(entity, raw), coalesce(actor->>'type', 'system'), actor->>'id', actor->>'name',
          entity, raw->>'id', act, activity_record_type(entity, raw), activity_record_id(entity, raw),
          old_row, new_row);
  RETURN NULL;
END
$$;

-- Creates, once per statement from its transition table: an import of 100,000 assets
-- writes their entries in a few INSERT ... SELECTs. A created record never merges with an
-- earlier entry of its transaction (ids are never reused), so no lookup. Arguments:
-- entity type; columns left out; secret columns.
CREATE OR REPLACE FUNCTION record_activity_inserts() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  entity text := TG_ARGV[0];
  dropped text[] := string_to_array(TG_ARGV[1], ',');
  secrets text[] := string_to_array(TG_ARGV[2], ',');
  actor jsonb := activity_actor();
BEGIN
  INSERT INTO activity (org_id, actor_type, actor_id, actor_name, entity_type, entity_id, action,
                        record_type, record_id, before, after)
  SELECT activity_org(entity, r.j), coalesce(actor->>'type', 'system'), actor->>'id', actor->>'name',
         entity, r.j->>'id', 'created', activity_record_type(entity, r.j), activity_record_id(entity, r.j),
         NULL, activity_values(r.j, dropped, secrets)
  FROM (SELECT to_jsonb(n) AS j FROM new_rows n) r
  -- In the order the records were created.
  ORDER BY length(r.j->>'id'), r.j->>'id';
  RETURN NULL;
END
$$;

-- The logged tables. `watched`: the columns whose update is activity; scan-derived ones
-- (an asset's location, a reader's counters, a key's last use) are left out, so the
-- ingest path never runs the trigger. `deletes`: whether a DELETE is recorded (an
-- organization is never deleted; a password reset's deletion never was).
-- test/activity/triggers.test.ts checks the result.
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT * FROM (VALUES
      ('assets', 'asset', true, 'deleted_at',
       '{external_key,name,description,is_active,metadata,valid_from,valid_to,deleted_at}'::text[],
       'org_id,tag_values,search_text,auto_slot,location_id,last_seen_at,created_at,updated_at', ''),
      ('locations', 'location', true, 'deleted_at',
       '{external_key,name,description,is_active,parent_id,valid_from,valid_to,deleted_at}',
       'org_id,tag_values,search_text,auto_slot,created_at,updated_at', ''),
      ('tags', 'tag', true, 'detached_at',
       '{tag_type,value,asset_id,location_id,detached_at}',
       'org_id', ''),
      ('api_keys', 'api_key', true, 'revoked_at',
       '{name,scopes,environment,expires_at,revoked_at}',
       'org_id,last_used_at', ''),
      ('readers', 'reader', true, 'deleted_at',
       '{name,family,identity,topic,webhook_secret_hash,mqtt_password_hash,deleted_at}',
       'org_id,last_message_at,good_reads,bad_reads,unknown_reads', 'webhook_secret_hash,mqtt_password_hash'),
      ('scan_points', 'scan_point', true, '',
       '{antenna,location_id}',
       'org_id', ''),
      ('users', 'user', true, 'removed_at',
       '{email,role,password_hash,removed_at}',
       'org_id,created_at', 'password_hash'),
      ('invitations', 'invitation', true, 'revoked_at',
       '{email,role,token_hash,expires_at,accepted_at,revoked_at}',
       'org_id,created_at', 'token_hash'),
      ('password_resets', 'password_reset', false, 'revoked_at',
       '{used_at,revoked_at}',
       'org_id,created_at', 'token_hash'),
      ('organizations', 'organization', false, '',
       '{name}',
       '', '')
    ) AS v (tbl, entity, deletes, tombstone, watched, dropped, secrets)
  LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS activity ON %I', t.tbl);
    EXECUTE format('DROP TRIGGER IF EXISTS activity_created ON %I', t.tbl);
    EXECUTE format(
      'CREATE TRIGGER activity AFTER %s UPDATE OF %s ON %I FOR EACH ROW '
      'EXECUTE FUNCTION record_activity(%L, %L, %L, %L)',
      CASE WHEN t.deletes THEN 'DELETE OR' ELSE '' END,
      (SELECT string_agg(quote_ident(c), ', ') FROM unnest(t.watched) AS c),
      t.tbl, t.entity, t.tombstone, t.dropped, t.secrets);
    EXECUTE format(
      'CREATE TRIGGER activity_created AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows '
      'FOR EACH STATEMENT EXECUTE FUNCTION record_activity_inserts(%L, %L, %L)',
      t.tbl, t.entity, t.dropped, t.secrets);
  END LOOP;
END
$$;
