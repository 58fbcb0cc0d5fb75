-- A row of the raw log may hold several messages of one reader (docs/ingest.md, "The raw
-- log and its retention"). A row per message cost a small message more than its payload:
-- one read per message took about 190 bytes of the table per message (PostgreSQL
-- compresses a value only in a row past about 2 kB), and its insert was 29% of
-- PostgreSQL's statement time for one-read messages. Messages of one reader stored by the
-- same transaction without a bad read, an unknown tag or an error now share a row: their
-- payloads one after another in `payload`, and per message its length in bytes, its
-- receipt in milliseconds after the row's `received_at`, and its good reads. A message
-- with a problem keeps a row of its own, as the readers' problems page reads them.
--
-- raw_log shows the raw log a message a row, whichever way it was stored: `id` is its
-- row's, `message` its place in the row (1 for a row of its own), `row_received_at` its
-- row's `received_at`, the earliest receipt in the row. A filter on that one reaches the
-- table's partitions and index; one on a message's own `received_at` cannot.
ALTER TABLE raw_messages
  ADD COLUMN message_bytes integer[],
  ADD COLUMN message_received_ms integer[],
  ADD COLUMN message_good integer[];

CREATE VIEW raw_log WITH (security_invoker = true) AS
  SELECT received_at, org_id, reader_id, source, payload, good_reads, bad_reads, unknown_reads, errors,
    id, 1::bigint AS message, received_at AS row_received_at
  FROM raw_messages
  WHERE message_bytes IS NULL
  UNION ALL
  SELECT r.received_at + m.after_ms * interval '1 millisecond', r.org_id, r.reader_id, r.source,
    convert_from(substring(b.bytes FROM m.start::int FOR m.len), 'UTF8'), m.good, 0, 0, NULL,
    r.id, m.i, r.received_at
  FROM raw_messages r
  -- Once a row (OFFSET 0 keeps it from being inlined into every message's substring).
  CROSS JOIN LATERAL (SELECT convert_to(r.payload, 'UTF8') AS bytes OFFSET 0) b
  CROSS JOIN LATERAL (
    SELECT u.len, u.after_ms, u.good, u.i,
      1 + coalesce(sum(u.len) OVER (ORDER BY u.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS start
    FROM unnest(r.message_bytes, r.message_received_ms, r.message_good) WITH ORDINALITY AS u(len, after_ms, good, i)
  ) m
  WHERE r.message_bytes IS NOT NULL;

GRANT SELECT ON raw_log TO tagtrail_app;
