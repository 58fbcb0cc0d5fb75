-- Optional two-factor sign-in with time-based one-time codes (RFC 6238; docs/web-app.md
-- "Accounts"). The base32 secret must be kept in the clear to verify codes, so it lives in
-- its own table, outside the users row the activity triggers record (0039 re-creates those
-- triggers after this file runs, so a secret column on users would reach the activity log
-- whenever a user row is deleted). last_step is the newest time step accepted, so a code
-- cannot be used twice within its window.
CREATE TABLE user_totp (
  org_id bigint NOT NULL REFERENCES organizations (id),
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  enabled_at timestamptz,
  last_step bigint,
  PRIMARY KEY (org_id, user_id)
);

ALTER TABLE user_totp ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON user_totp USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON user_totp TO tagtrail_app;

-- An administrator may require every member to sign in with a code; members without one
-- are sent to set it up after signing in.
ALTER TABLE organizations ADD COLUMN require_totp boolean NOT NULL DEFAULT false;
