-- Row-level security of the raw log, also for its partitions. Migration 0005 granted
-- SELECT and INSERT on each partition (raw_messages_default and every daily
-- raw_messages_YYYYMMDD) to the request role, beside the parent. A partitioned table's
-- policies apply to queries through the parent only: a statement naming a partition is
-- checked against the partition's own row security, which was off, so the request role
-- could read every organization's raw messages there. Nothing in the service names a
-- partition (ingest writes and the problems page read through raw_messages, whose
-- privileges alone PostgreSQL checks for rows routed to a partition; retention runs as the
-- owner), so the grants go, and new daily partitions are made without them. Each
-- partition also gets row-level security and the organization's policy, a second wall
-- should a grant ever come back.
DO $$
DECLARE
  part regclass;
BEGIN
  FOR part IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'raw_messages'::regclass LOOP
    EXECUTE format('REVOKE ALL ON %s FROM tagtrail_app', part);
    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', part);
    EXECUTE format(
      'CREATE POLICY org_isolation ON %s USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id())',
      part);
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION ensure_raw_partition(day date) RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  name text := 'raw_messages_' || to_char(day, 'YYYYMMDD');
BEGIN
  IF to_regclass(name) IS NULL THEN
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF raw_messages FOR VALUES FROM (%L) TO (%L)',
      name, day::timestamptz, (day + 1)::timestamptz);
    -- No grant to the request role: it reaches the rows through raw_messages, under its
    -- policy (migration 0067).
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
    EXECUTE format(
      'CREATE POLICY org_isolation ON %I USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id())',
      name);
  END IF;
END $$;
