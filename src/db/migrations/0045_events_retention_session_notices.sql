-- Events retention (src/events/retention.ts, TAGTRAIL_EVENTS_RETENTION_DAYS) and the
-- notice that ends a signed-out session's live stream (src/events/live-hub.ts).

-- An event may go once no delivery names it: without this index every such check, and
-- the foreign key's own check on each deleted event, would read the whole deliveries table.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- Finished deliveries (delivered, or failed after a day of retries) by when they finished,
-- so the hourly sweep reads only what it deletes. A redelivery makes a finished delivery
-- pending again and moves created_at: the later of the two times counts.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (greatest(created_at, last_attempt_at))
  WHERE state <> 'pending';

-- A session that ends (sign-out, a password change or reset, the member's removal) is
-- announced on tagtrail_sessions with its organization and user when the ending
-- transaction commits, so every instance ends that session's live streams at once
-- (a stream is one request that never ends by itself: it is not re-authenticated).
-- Per user rather than per session: one payload whatever the number of sessions ended;
-- each stream of the user checks its own session again.
CREATE FUNCTION web_sessions_ended() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT DISTINCT n.org_id, n.user_id FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE o.revoked_at IS NULL AND n.revoked_at IS NOT NULL
  LOOP
    PERFORM pg_notify('tagtrail_sessions', json_build_object('org_id', r.org_id, 'user_id', r.user_id)::text);
  END LOOP;
  RETURN NULL;
END
$$;

CREATE TRIGGER web_sessions_ended AFTER UPDATE ON web_sessions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION web_sessions_ended();
