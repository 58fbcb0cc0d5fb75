-- Organizations with several people (docs/web-app.md "Roles and members").
-- Roles become admin / editor / viewer. 'member' was never handed out (sign-up and the
-- operator command make admins), so any such row gets the least privilege.
ALTER TABLE users DROP CONSTRAINT users_role_check;
UPDATE users SET role = 'viewer' WHERE role = 'member';
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('admin', 'editor', 'viewer'));

-- A removed member keeps their row, so what refers to them (the keys they minted, the
-- activity log) still names them; the email is free again for a new account or invitation.
ALTER TABLE users ADD COLUMN removed_at timestamptz;
DROP INDEX users_email_key;
CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE removed_at IS NULL;

-- Invitations: a single-use link per row. Only the SHA-256 of the token is kept (the token
-- is 32 random bytes, so a plain hash is enough: nothing to guess); resending replaces it.
CREATE TABLE invitations (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  role text NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
  token_hash bytea NOT NULL UNIQUE,
  invited_by_user_id bigint REFERENCES users (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  accepted_user_id bigint REFERENCES users (id),
  revoked_at timestamptz
);
CREATE INDEX invitations_org_idx ON invitations (org_id, created_at);
-- One open invitation per address and organization: inviting again is a resend.
CREATE UNIQUE INDEX invitations_open_email_key ON invitations (org_id, lower(email))
  WHERE accepted_at IS NULL AND revoked_at IS NULL;

ALTER TABLE invitations ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON invitations USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON invitations TO tagtrail_app;
