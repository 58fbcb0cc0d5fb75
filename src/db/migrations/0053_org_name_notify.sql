-- The key cache (src/keys/key-cache.ts) holds each key with its organization's name, so
-- that GET /orgs/me answers from the authenticated key without reading the organization
-- again (docs/performance.md, step 16). A change of the name, or the organization's
-- removal, drops every cached key on every instance through the same channel and barrier
-- that make a revocation immediate. Renames are rare: dropping all is simpler than finding
-- the organization's keys.
CREATE TRIGGER organization_name_changed
  AFTER UPDATE OF name OR DELETE ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION api_key_changed();
