-- Digest claims keyed in time order (docs/ingest.md, "Redeliveries"). 0025 keyed a claim by
-- (reader, digest): the digest is random, so every claim went to a random leaf of a primary
-- key that holds a week of timed messages. Once that index is larger than memory each claim
-- is a random read, and after every checkpoint the first change to each leaf writes the
-- whole page to the WAL: measured after a CHECKPOINT with 4,000,000 claims in the table
-- (npm run bench:digests), 3.5 kB of WAL per claim (0.57 full-page images each) against
-- 330 bytes with the key below.
--
-- The key is now (reader, first_read_at, digest), first_read_at being the earliest reader
-- time among the message's reads. It is a function of the payload's bytes like the digest,
-- so a redelivery has the same key; and reads come in time order, so claims go to the right
-- edge of each reader's part of the index.
--
-- The claims made before this migration stay in message_digests_legacy, keyed as before,
-- until they expire (7 days): a message stored before an upgrade and delivered again after
-- it is still recognised. Only a message whose reads could have been claimed then is looked
-- up there: its reader times are trusted only up to the future skew bound past its receipt,
-- and no legacy claim was received after message_digests_legacy_bound.last_seen_at.

ALTER TABLE message_digests RENAME TO message_digests_legacy;
ALTER INDEX message_digests_pkey RENAME TO message_digests_legacy_pkey;
ALTER INDEX message_digests_seen RENAME TO message_digests_legacy_seen;
-- Nothing adds to it any more: the bound below holds only while that is so.
REVOKE INSERT ON message_digests_legacy FROM tagtrail_app;

CREATE TABLE message_digests_legacy_bound AS
  SELECT max(seen_at) AS last_seen_at FROM message_digests_legacy;
GRANT SELECT ON message_digests_legacy_bound TO tagtrail_app;

CREATE TABLE message_digests (
  reader_id bigint NOT NULL,
  -- The earliest reader time among the message's reads (all of them carry one).
  first_read_at timestamptz NOT NULL,
  -- First 16 bytes of the payload's SHA-256.
  digest bytea NOT NULL CHECK (octet_length(digest) = 16),
  org_id bigint NOT NULL,
  -- When the message was first received; rows past the window are deleted hourly.
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (reader_id, first_read_at, digest)
);
CREATE INDEX message_digests_seen ON message_digests USING brin (seen_at);

ALTER TABLE message_digests ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON message_digests
  USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT ON message_digests TO tagtrail_app;
