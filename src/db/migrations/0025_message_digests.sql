-- Exactly-once effect of reader messages (docs/ingest.md, "Redeliveries"). MQTT delivers at
-- least once: a message committed whose PUBACK was lost (a crash, a reconnect, a shared
-- subscription member killed) comes again with the same bytes. A payload whose reads all
-- carry the reader's own (trusted) times is the same observation when its bytes repeat from
-- the same reader, so its digest is claimed in the transaction that stores its effects; a
-- second claim finds the row and the message is skipped.
--
-- Keyed by reader alone: reader ids are unique across organizations, and a shorter key keeps
-- the index small (one row per timed message). org_id is there for row-level security.
-- Not partitioned like raw_messages: a unique index there would have to include the day the
-- message arrived, and a redelivery may arrive on another day.
CREATE TABLE message_digests (
  reader_id bigint NOT NULL,
  -- First 16 bytes of the payload's SHA-256.
  digest bytea NOT NULL CHECK (octet_length(digest) = 16),
  org_id bigint NOT NULL,
  -- When the message was first received; rows past the window are deleted hourly.
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (reader_id, digest)
);
-- Rows arrive in time order, so a BRIN index finds the expired ones at almost no write cost.
CREATE INDEX message_digests_seen ON message_digests USING brin (seen_at);

ALTER TABLE message_digests ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON message_digests
  USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT ON message_digests TO tagtrail_app;
