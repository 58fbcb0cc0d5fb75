-- Outbound events (docs/events.md): an outbox written in the same transaction as the
-- change that causes it, so an event exists exactly when its change committed.
--
-- The writer pays one insert per event and nothing else: no foreign keys, no trigger,
-- no NOTIFY (a NOTIFY serialises every committing transaction on one lock). The
-- dispatcher (one at a time, src/events/dispatcher.ts) picks undispatched rows through a
-- small partial index, fans them out to the webhook endpoints that want them and marks
-- them dispatched.
CREATE TABLE events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint NOT NULL,
  type text NOT NULL,
  occurred_at timestamptz NOT NULL,
  -- What a receiver gets in order ('asset:12', 'location:3', 'tag:7'): events of one
  -- subject are written in commit order, since every writer holds the subject's row lock.
  subject text NOT NULL,
  -- The locations the event concerns (an asset's old and new place, a location itself),
  -- for endpoints that only want a subtree.
  location_ids bigint[] NOT NULL DEFAULT '{}',
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now_ms(),
  dispatched_at timestamptz
);
CREATE INDEX events_undispatched ON events (id) WHERE dispatched_at IS NULL;
CREATE INDEX events_org ON events (org_id, id);

ALTER TABLE events ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON events USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT ON events TO tagtrail_app;

-- asset.not_seen: the sweeper reports the assets whose last sighting fell into
-- [swept_until, now - threshold) since its previous run; its watermark moves in the same
-- transaction as the events it wrote, so each quiet stay is reported once.
CREATE TABLE not_seen_sweeps (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  swept_until timestamptz NOT NULL
);
