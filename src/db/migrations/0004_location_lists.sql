-- Location lists stay index-served (the same reasoning as assets_in_org in 0003).
--
-- Row-level security policies are security barriers: a condition that is not leakproof,
-- such as LIKE for `q`, may not run before the policy's own, so under the policy the
-- trigram index (locations_search) could never serve `q`. The location list reads the
-- organization's rows through this view instead: owned by the migrating role (the table
-- owner, to whom the policy does not apply), it applies the policy's predicate,
-- `org_id = current_org_id()`, as an ordinary condition the planner may combine with the
-- query's. A query that forgets its organization still sees nothing, and every write
-- still goes to the table, under the policy.
CREATE VIEW locations_in_org AS
  SELECT * FROM locations WHERE org_id = current_org_id();

GRANT SELECT ON locations_in_org TO tagtrail_app;

-- total_count: counting an organization's currently effective locations (optionally with
-- deleted ones, optionally by is_active) is an index-only scan of this narrow index
-- instead of a read of every row of the organization (as assets_liveness in 0003).
CREATE INDEX locations_liveness ON locations (org_id, valid_from) INCLUDE (valid_to, deleted_at, is_active);
