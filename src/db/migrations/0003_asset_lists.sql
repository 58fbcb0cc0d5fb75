-- Asset lists stay index-served at a million assets per organization.
--
-- Row-level security policies are security barriers: a condition of the query that is not
-- leakproof may not run before the policy's own, so the planner will not use it as an
-- index condition. LIKE is not leakproof, so under the policy `q` could never use the
-- trigram index (assets_search) and fell back to reading every row of the organization.
-- Lists therefore read the organization's assets through this view instead: owned by the
-- migrating role (the table owner, to whom the policy does not apply), it applies the
-- same predicate as the policy, `org_id = current_org_id()`, as an ordinary condition
-- the planner may combine freely with the query's. A query that forgets its organization
-- still sees nothing, and every write still goes to the table, under the policy.
CREATE VIEW assets_in_org AS
  SELECT * FROM assets WHERE org_id = current_org_id();

GRANT SELECT ON assets_in_org TO tagtrail_app;

-- total_count: counting an organization's currently effective assets (optionally with
-- deleted ones, optionally by is_active) is an index-only scan of this narrow index
-- instead of a read of the whole table.
CREATE INDEX assets_liveness ON assets (org_id, valid_from) INCLUDE (valid_to, deleted_at, is_active);
