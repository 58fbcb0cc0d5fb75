-- Organizations, users, API keys, web sessions and the deployment's signing key.
-- Organization data is guarded twice: every query filters on org_id, and row-level
-- security hides other organizations' rows from the restricted role the service uses
-- inside each request's transaction (see src/db/pool.ts).

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tagtrail_app') THEN
    BEGIN
      CREATE ROLE tagtrail_app NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL; -- created meanwhile by a migration of another database on this server
    END;
  END IF;
  IF NOT pg_has_role(current_user, 'tagtrail_app', 'MEMBER') THEN
    EXECUTE format('GRANT tagtrail_app TO %I', current_user);
  END IF;
END
$$;

CREATE FUNCTION current_org_id() RETURNS bigint
  LANGUAGE sql STABLE
  AS $$ SELECT nullif(current_setting('tagtrail.org_id', true), '')::bigint $$;

CREATE TABLE organizations (
  id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 2147483647) PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 2147483647) PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  email text NOT NULL,
  password_hash text,
  role text NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  password_changed_at timestamptz
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_org_idx ON users (org_id);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  scopes text[] NOT NULL,
  environment text NOT NULL CHECK (environment IN ('production', 'preview')),
  created_by_user_id bigint REFERENCES users (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_keys_org_idx ON api_keys (org_id, created_at);

CREATE TABLE web_sessions (
  id uuid PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  user_id bigint NOT NULL REFERENCES users (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX web_sessions_user_idx ON web_sessions (org_id, user_id);

-- The deployment's token signing key; kept in the database so every instance and the CLI
-- sign and verify with the same key without sharing a file system.
CREATE TABLE signing_keys (
  id text PRIMARY KEY,
  algorithm text NOT NULL,
  private_jwk jsonb NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE organizations ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON organizations USING (id = current_org_id()) WITH CHECK (id = current_org_id());
ALTER TABLE users ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON users USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON api_keys USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
ALTER TABLE web_sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON web_sessions USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());

GRANT USAGE ON SCHEMA public TO tagtrail_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON organizations, users, api_keys, web_sessions TO tagtrail_app;
-- Tables added by later migrations grant themselves; the signing key stays out of reach.
