-- The asset-location report stays index-served at large organizations.
--
-- Row-level security policies are security barriers: a condition that is not leakproof,
-- such as LIKE for the report's `q`, may not run before the policy's own, so under the
-- policy the trigram index (assets_report_search, 0005) could never serve `q`. The report
-- reads the organization's scanned assets through this view instead: owned by the
-- migrating role (the table owner, to whom the policy does not apply), it applies the
-- policy's predicate, `org_id = current_org_id()`, as an ordinary condition the planner
-- may combine with the query's. A query that forgets its organization still sees nothing.
CREATE VIEW tracked_assets_in_org AS
  SELECT id, org_id, external_key, name, tag_values, location_id, last_seen_at, valid_from, valid_to, deleted_at
  FROM assets
  WHERE org_id = current_org_id() AND last_seen_at IS NOT NULL;

GRANT SELECT ON tracked_assets_in_org TO tagtrail_app;

-- Every column the report reads from an asset, in the index that orders it by last
-- sighting (it replaces assets_last_seen of 0005): the total count and the sort by
-- location key, which must visit all of an organization's scanned assets, then read
-- this index alone (an index-only scan) instead of the whole table.
DROP INDEX assets_last_seen;
CREATE INDEX assets_tracked ON assets (org_id, last_seen_at, id)
  INCLUDE (external_key, location_id, valid_from, valid_to, deleted_at)
  WHERE last_seen_at IS NOT NULL;
