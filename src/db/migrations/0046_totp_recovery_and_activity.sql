-- Two-factor recovery codes, and two-factor sign-in in the activity log (docs/web-app.md
-- "Accounts").
--
-- Recovery codes: ten single-use codes made at enrolment (and on request), each 80 random
-- bits, stored only as their SHA-256 (hex). At that entropy a plain hash cannot be reversed
-- by guessing, so no slow hash is needed. Using one removes its hash from the array in one
-- UPDATE whose WHERE names the hash, so two sign-ins racing with the same code cannot both
-- succeed (the second re-checks the row after the first commits and finds it gone).
ALTER TABLE user_totp
  ADD COLUMN recovery_code_hashes text[] NOT NULL DEFAULT '{}',
  ADD COLUMN recovery_codes_generated_at timestamptz,
  ADD COLUMN recovery_code_used_at timestamptz;

-- The activity entries of a person's two-factor sign-in: `two_factor`, with the person's
-- user id as entity and record (so it sits with the person's other entries). Written by a
-- trigger like every other entry, so no path that turns it on or off can skip its entry.
-- Only what is safe to show is recorded: whether it is on and since when, how many
-- recovery codes are left, when they were made and last used. Never the secret, a code,
-- or a code's hash. A pending enrolment (not in force) and each sign-in's accepted time
-- step are no activity.
--   created: enrolment confirmed (with its ten recovery codes)
--   updated: recovery codes regenerated, or one used to sign in
--   deleted: turned off by the person, or reset by an administrator (the actor tells which)
CREATE FUNCTION two_factor_values(r user_totp) RETURNS jsonb
  LANGUAGE sql STABLE
  AS $$
    SELECT jsonb_build_object(
      'user_id', r.user_id,
      'enabled_at', r.enabled_at,
      'recovery_codes_left', cardinality(r.recovery_code_hashes),
      'recovery_codes_generated_at', r.recovery_codes_generated_at,
      'recovery_code_used_at', r.recovery_code_used_at)
  $$;

CREATE FUNCTION record_two_factor_activity() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  actor jsonb := nullif(current_setting('tagtrail.actor', true), '')::jsonb;
  was_on boolean := TG_OP <> 'INSERT' AND OLD.enabled_at IS NOT NULL;
  is_on boolean := TG_OP <> 'DELETE' AND NEW.enabled_at IS NOT NULL;
  old_v jsonb;
  new_v jsonb;
  act text;
  org bigint;
  uid text;
BEGIN
  IF NOT was_on AND NOT is_on THEN RETURN NULL; END IF;
  IF was_on THEN old_v := two_factor_values(OLD); END IF;
  IF is_on THEN new_v := two_factor_values(NEW); END IF;
  IF was_on AND is_on AND old_v = new_v THEN RETURN NULL; END IF;
  act := CASE WHEN NOT was_on THEN 'created' WHEN NOT is_on THEN 'deleted' ELSE 'updated' END;
  IF TG_OP = 'DELETE' THEN
    org := OLD.org_id;
    uid := OLD.user_id::text;
  ELSE
    org := NEW.org_id;
    uid := NEW.user_id::text;
  END IF;
  INSERT INTO activity (org_id, actor_type, actor_id, actor_name, entity_type, entity_id, action,
                        record_type, record_id, before, after)
  VALUES (org, coalesce(actor->>'type', 'system'), actor->>'id', actor->>'name', 'two_factor', uid, act,
          'user', uid, old_v, new_v);
  RETURN NULL;
END
$$;

-- last_step is left out of the watched columns: a sign-in with a code never runs this.
CREATE TRIGGER activity AFTER INSERT OR DELETE
  OR UPDATE OF enabled_at, recovery_code_hashes, recovery_codes_generated_at, recovery_code_used_at
  ON user_totp FOR EACH ROW
  EXECUTE FUNCTION record_two_factor_activity();

-- The organization's "require two-factor sign-in" switch is recorded with its name.
DROP TRIGGER activity ON organizations;
CREATE TRIGGER activity AFTER UPDATE OF name, require_totp
  ON organizations FOR EACH ROW
  EXECUTE FUNCTION record_activity('organization', '', '', '');
