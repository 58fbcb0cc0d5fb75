-- When each web session was last used (to the minute: src/accounts/session-service.ts), so
-- that a person's sign-ins past the cap end their least recently used sessions rather than
-- a session in use. Existing sessions count as used now.
ALTER TABLE web_sessions ADD COLUMN last_used_at timestamptz NOT NULL DEFAULT now();
