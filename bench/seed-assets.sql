-- Assets of realistic width in one statement, shared by test/assets/list-plans.test.ts and
-- bench/list-assets.mjs. $1 organization, $2..$3 the range of numbers (keys FL-nnnnnnn),
-- $4 a location for every tenth asset (or null), placed in asset_positions (0042) without a sighting. Every 50th is soft-deleted, every 40th
-- expired, every 10th inactive; a third have a description; each has a few metadata
-- attributes, as synchronized master data would.
WITH created AS (
INSERT INTO assets (org_id, external_key, name, description, is_active, metadata,
                    valid_from, valid_to, created_at, updated_at, deleted_at)
SELECT $1::bigint,
       'FL-' || lpad(g::text, 7, '0'),
       'Forklift ' || substr(md5(g::text), 1, 12),
       CASE WHEN g % 3 = 0 THEN 'Bay ' || (g % 97) || ', serviced by ' || substr(md5((g * 7)::text), 1, 16) END,
       g % 10 <> 0,
       jsonb_build_object('serial', md5(g::text), 'vendor', 'Acme', 'model', 'FX-' || (g % 50), 'year', 2000 + g % 25),
       now() - interval '400 days',
       CASE WHEN g % 40 = 0 THEN now() - interval '1 day' END,
       timestamptz '2024-01-01' + g * interval '1 second',
       timestamptz '2024-06-01' + ((g::bigint * 7919) % $3::int) * interval '1 second',
       CASE WHEN g % 50 = 0 THEN now() - interval '2 days' END
FROM generate_series($2::int, $3::int) AS g
RETURNING id, org_id, external_key)
INSERT INTO asset_positions (asset_id, org_id, location_id)
SELECT id, org_id, $4::bigint FROM created
WHERE $4::bigint IS NOT NULL AND substr(external_key, 4)::int % 10 = 0;
