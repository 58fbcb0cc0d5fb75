-- Password reset links an administrator issues for a member who forgot their password
-- (docs/web-app.md "Accounts"). Single use, with an expiry; only the SHA-256 of the token
-- (32 random bytes) is kept. Issuing one for a user ends the previous unused one.
CREATE TABLE password_resets (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  user_id bigint NOT NULL REFERENCES users (id),
  token_hash bytea NOT NULL UNIQUE,
  issued_by_user_id bigint REFERENCES users (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX password_resets_user ON password_resets (org_id, user_id);

ALTER TABLE password_resets ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON password_resets USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON password_resets TO tagtrail_app;

CREATE TRIGGER activity AFTER INSERT OR UPDATE OF used_at, revoked_at
  ON password_resets FOR EACH ROW
  EXECUTE FUNCTION record_activity('password_reset', 'revoked_at', 'org_id,created_at', 'token_hash');
