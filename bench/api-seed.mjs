/**
 * The database state of bench/api.mjs: the seeded organization's data, and the settling
 * before each side's load.
 */
import { readFile } from 'node:fs/promises';

const CHUNK = 100_000;

/** Assets (ids 1..n: seeded first), a location tree, tags, current locations and stays. */
export async function seed(pool, orgId, assets) {
  const seedSql = await readFile(new URL('./seed-assets.sql', import.meta.url), 'utf8');
  const root = (
    await pool.query(
      `INSERT INTO locations (org_id, external_key, name) VALUES ($1, 'SITE', 'Site') RETURNING id`,
      [orgId],
    )
  ).rows[0].id;
  const halls = await pool.query(
    `INSERT INTO locations (org_id, external_key, name, parent_id)
     SELECT $1, 'HALL-' || g, 'Hall ' || g, $2 FROM generate_series(1, 10) g RETURNING id`,
    [orgId, root],
  );
  await pool.query(
    `INSERT INTO locations (org_id, external_key, name, parent_id)
     SELECT $1, 'BAY-' || h.n || '-' || g, 'Bay ' || g, h.id
     FROM unnest($2::bigint[]) WITH ORDINALITY AS h(id, n), generate_series(1, 10) g`,
    [orgId, halls.rows.map((r) => r.id)],
  );
  const dock = halls.rows[0].id;
  for (let from = 1; from <= assets; from += CHUNK) {
    await pool.query(seedSql, [orgId, from, Math.min(from + CHUNK - 1, assets), dock]);
    process.stdout.write(`\rseeding assets: ${Math.min(from + CHUNK - 1, assets)} / ${assets}`);
  }
  // Every fifth asset has an RFID tag, as attached through the API (tag_values kept).
  await pool.query(
    `INSERT INTO tags (org_id, tag_type, value, asset_id)
     SELECT $1, 'rfid', 'E2801160' || lpad(to_hex(id::int), 16, '0'), id FROM assets WHERE org_id = $1 AND id % 5 = 0`,
    [orgId],
  );
  await pool.query(
    `UPDATE assets SET tag_values = 'E2801160' || lpad(to_hex(id::int), 16, '0') WHERE org_id = $1 AND id % 5 = 0`,
    [orgId],
  );
  // Every tenth asset has been scanned: three stays, the last at its current location.
  await pool.query(
    `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at)
     SELECT $1, a.id, l.id, now() - (4 - s) * interval '1 day', now() - (4 - s) * interval '1 day' + interval '1 hour'
     FROM assets a, generate_series(1, 3) s,
          LATERAL (SELECT id FROM locations WHERE org_id = $1 ORDER BY id OFFSET ((a.id + s) % 100) LIMIT 1) l
     WHERE a.org_id = $1 AND EXISTS (SELECT 1 FROM asset_positions p WHERE p.asset_id = a.id)`,
    [orgId],
  );
  await pool.query(
    `UPDATE asset_positions p SET last_seen_at = s.last_seen_at, location_id = s.location_id
     FROM stays s WHERE s.org_id = $1 AND s.asset_id = p.asset_id AND s.started_at > now() - interval '1 day 12 hours'`,
    [orgId],
  );
  await pool.query('VACUUM ANALYZE');
  // The seed's dirty pages are written now, not by a checkpoint spread over the first
  // cases' minutes, whose CPU (the checkpointer's, counted as PostgreSQL's) went to
  // whichever side ran then.
  await pool.query('CHECKPOINT');
  return { root };
}

/**
 * Before each side's load: what the writes of the loads before it left (dead row versions,
 * trigram index entries pending in the GIN lists, which every text search then reads
 * through, dirty pages) is cleaned up, and not charged to whichever side runs next. Without
 * it the mixed load run after the other cases cost 7.1 ms of CPU per request, against 3.9
 * run alone, and the baseline, always second, met more of it.
 */
export async function settle(pool) {
  await pool.query('VACUUM (ANALYZE)');
  await pool.query('CHECKPOINT');
}
