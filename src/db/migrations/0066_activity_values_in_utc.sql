-- The activity log's values are the rows as jsonb, and jsonb writes a timestamptz in the
-- session's time zone: a database set to another zone (ALTER DATABASE ... SET timezone,
-- or a connection's own) logged `2026-03-08T13:00:15.123+05:30` where a UTC one logs
-- `2026-03-08T07:30:15.123+00:00`, so the same record's entries read differently with the
-- setting, and the web app showed the database's zone beside times in the browser's. The
-- functions that build the values run in UTC whatever the session's zone, as a UTC
-- database always wrote them.
ALTER FUNCTION record_activity() SET TimeZone = 'UTC';
ALTER FUNCTION record_activity_inserts() SET TimeZone = 'UTC';
ALTER FUNCTION record_two_factor_activity() SET TimeZone = 'UTC';
