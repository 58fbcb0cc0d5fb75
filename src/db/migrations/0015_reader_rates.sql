-- Per-reader health (docs/metrics.md, "Per-reader health"): reads and errors per minute,
-- kept as two one-minute buckets on the reader's row, which every stored message already
-- updates (its counters), so the rate costs no extra row lock nor write and is the same
-- for every instance. rate_minute is the start of the latest bucket (rate_reads,
-- rate_errors); rate_prev_* hold the minute before it.
ALTER TABLE readers
  ADD COLUMN rate_minute timestamptz,
  ADD COLUMN rate_reads integer NOT NULL DEFAULT 0,
  ADD COLUMN rate_errors integer NOT NULL DEFAULT 0,
  ADD COLUMN rate_prev_reads integer NOT NULL DEFAULT 0,
  ADD COLUMN rate_prev_errors integer NOT NULL DEFAULT 0,
  -- The receipt time of the latest message with refused (bad) reads.
  ADD COLUMN last_error_at timestamptz;
