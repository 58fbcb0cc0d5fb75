-- The dispatcher marked each event dispatched with an UPDATE of the event row. That
-- update is never done in place (dispatched_at is in events_undispatched's predicate), so
-- every event was written twice, payload and all, with new entries in each of its indexes:
-- on a moving population (one asset.moved per read) about a third of PostgreSQL's time
-- per read went to the event insert and that second copy (docs/ingest.md). The undispatched
-- events are now the rows of a narrow queue: a statement trigger adds the ids each insert
-- into events wrote (one statement per batch, whatever its size), and the dispatcher
-- deletes what it takes, in the transaction that fans them out. An event row is written
-- once and never changed.
CREATE TABLE event_queue (id bigint PRIMARY KEY);

-- No row-level security and no org_id: the queue holds nothing but event ids. The app role
-- (whose transactions write events) may only insert into it: it can neither read nor
-- remove an id, and an id it adds again is dispatched again at most, which creates no
-- second delivery (webhook_deliveries is unique on endpoint and event) and tells the
-- event's own organization's live views to refetch.
GRANT INSERT ON event_queue TO tagtrail_app;

INSERT INTO event_queue SELECT id FROM events WHERE dispatched_at IS NULL;
DROP INDEX events_undispatched;
ALTER TABLE events DROP COLUMN dispatched_at;

CREATE FUNCTION events_queued() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  INSERT INTO event_queue (id) SELECT id FROM new_events;
  RETURN NULL;
END
$$;

CREATE TRIGGER events_queued AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION events_queued();
