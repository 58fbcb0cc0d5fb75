-- The raw log without its primary key (docs/ingest.md, "The raw log's size"). Nothing looks
-- a raw log row up by (received_at, id): the readers' problems page and an operator's
-- queries go by organization or reader and time (raw_messages_org), retention drops whole
-- daily partitions, and a row's id only orders the rows of one instant. Yet the key's
-- index took a place in every row's write and on disk: a sixth of the raw log at one read
-- per message (234 MiB per million reads with it, 197 without, on PostgreSQL 15) and 3%
-- at a hundred (12.0 MiB against 11.6), which issue 12 bounds at 11.8.
--
-- Only the default partition keeps an index on the instant: retention's hourly look-ups
-- and deletes there are by received_at alone, and the daily partitions are dropped whole.

ALTER TABLE raw_messages DROP CONSTRAINT raw_messages_pkey;
CREATE INDEX raw_messages_default_received ON raw_messages_default (received_at);
