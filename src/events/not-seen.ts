import type { Database } from '../db/pool.js';

/**
 * asset.not_seen: an asset whose last sighting is older than the threshold, reported once
 * per quiet stay. Each sweep covers the sightings that crossed the threshold since the
 * previous one ([watermark, now - threshold)); the watermark moves in the transaction
 * that writes the events, so a crash repeats a sweep whole or not at all. An asset seen
 * again has a newer last sighting and is reported again when that one grows old. A
 * sighting that arrived after its window was swept (a reader delivering days late, an
 * import) was marked quiet_late by ingest (src/tracking/positions-repository.ts) and is
 * reported by the next sweep, which clears the mark.
 */
export async function sweepNotSeen(db: Database, thresholdMs: number, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - thresholdMs);
  return db.system(async (tx) => {
    // The first sweep starts at the threshold: assets quiet since before the service
    // started its sweeps are not all reported at once.
    await tx.query(
      'INSERT INTO not_seen_sweeps (swept_until) VALUES ($1) ON CONFLICT (singleton) DO NOTHING',
      [cutoff],
    );
    const { rows } = await tx.query<{ swept_until: Date }>(
      'SELECT swept_until FROM not_seen_sweeps FOR UPDATE',
    );
    const from = rows[0]!.swept_until;
    if (from >= cutoff) return 0;
    // FOR UPDATE: an asset being read right now waits for us or is re-checked after its
    // write, so it is not reported as quiet at the instant it is seen; its row lock also
    // orders this event among the asset's others. The position is locked too: a re-check
    // after a wait reads the newest version of the locked rows only, and the sighting is
    // written to the position (migration 0042).
    const inserted = await tx.query(
      `WITH due AS (
         SELECT a.id, a.org_id, a.external_key, a.name, p.location_id, p.last_seen_at
         FROM asset_positions p JOIN assets a ON a.org_id = p.org_id AND a.id = p.asset_id
         WHERE p.org_id IN (SELECT id FROM organizations) AND p.last_seen_at >= $1 AND p.last_seen_at < $2
           AND NOT p.quiet_late AND a.deleted_at IS NULL
         ORDER BY p.last_seen_at, a.id
         FOR UPDATE OF a, p
       ), late AS (
         SELECT a.id, a.org_id, a.external_key, a.name, p.location_id, p.last_seen_at, a.deleted_at
         FROM asset_positions p JOIN assets a ON a.org_id = p.org_id AND a.id = p.asset_id
         WHERE p.org_id IN (SELECT id FROM organizations) AND p.quiet_late
         ORDER BY p.last_seen_at, a.id
         FOR UPDATE OF a, p
       ), cleared AS (
         -- Only the rows locked above: a mark set after this statement's snapshot waits for the next sweep.
         UPDATE asset_positions p SET quiet_late = false FROM late
         WHERE p.org_id = late.org_id AND p.asset_id = late.id
       ), reported AS (
         SELECT id, org_id, external_key, name, location_id, last_seen_at FROM due
         UNION ALL
         SELECT id, org_id, external_key, name, location_id, last_seen_at FROM late WHERE deleted_at IS NULL
       )
       INSERT INTO events (org_id, type, occurred_at, subject, location_ids, payload)
       SELECT d.org_id, 'asset.not_seen', d.last_seen_at + make_interval(secs => $3::float8 / 1000),
              'asset:' || d.id, ARRAY[d.location_id],
              jsonb_build_object(
                'asset_id', d.id, 'asset_external_key', d.external_key, 'asset_name', d.name,
                'location_id', d.location_id, 'location_external_key', l.external_key,
                'last_seen_at', to_char(d.last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'not_seen_seconds', $3::bigint / 1000)
       FROM reported d JOIN locations l ON l.org_id = d.org_id AND l.id = d.location_id
       ORDER BY d.last_seen_at, d.id`,
      [from, cutoff, thresholdMs],
    );
    await tx.query('UPDATE not_seen_sweeps SET swept_until = $1', [cutoff]);
    return inserted.rowCount ?? 0;
  });
}
