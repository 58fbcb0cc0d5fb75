-- now_ms() reads clock_timestamp(), which is volatile; declared STABLE, the planner
-- inlined it and evaluated it once per use, so "one instant" written as
-- `WITH clock AS (SELECT now_ms() AS now)` could differ by a millisecond between columns
-- (created_at vs a defaulted valid_from). A volatile CTE is evaluated once.
CREATE OR REPLACE FUNCTION now_ms() RETURNS timestamptz
  LANGUAGE sql VOLATILE
  AS $$ SELECT date_trunc('milliseconds', clock_timestamp()) $$;
