-- Every instance keeps the API key records it has authenticated in memory
-- (src/keys/key-cache.ts) instead of reading the key on every request. A change that
-- matters to authentication (revocation above all, or the key's removal) is announced on
-- the channel tagtrail_api_keys with the key's id, '*' for all, when the changing
-- transaction commits, so that each instance drops its copy at once. `last_used_at`
-- (written once a minute per key) announces nothing.
CREATE FUNCTION api_key_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('tagtrail_api_keys', '*');
  ELSE
    PERFORM pg_notify('tagtrail_api_keys', OLD.id::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER api_key_changed
  AFTER UPDATE OF id, org_id, scopes, environment, expires_at, revoked_at OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_key_changed();
CREATE TRIGGER api_keys_truncated
  AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_key_changed();
