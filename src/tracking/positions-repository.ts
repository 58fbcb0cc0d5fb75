/**
 * asset_positions (migration 0042): each asset's current location and last sighting, a copy
 * of its newest stay that ingest keeps up to date beside the stays it writes.
 */
import { int8Array, textArray, timestampArray } from '../db/binary-arrays.js';
import type { Tx } from '../db/pool.js';
import { type AssetValidity, epochMs, newestStays } from './repository.js';

/**
 * Whether a last sighting lands behind the asset.not_seen sweeper's watermark, already
 * older than the sweeps so far covered: its quiet stay is for the next sweep to report
 * (migration 0065, src/events/not-seen.ts). An uncorrelated subquery: read once per statement.
 */
const QUIET_LATE = (lastSeenAt: string) =>
  `coalesce(${lastSeenAt} < (SELECT swept_until FROM not_seen_sweeps), false)`;

/**
 * A position's update: only when the location or the last sighting changes, and the mark of
 * a late sighting follows the sighting, so a move alone never marks a stay reported before.
 */
const ON_CONFLICT_POSITION = `ON CONFLICT (asset_id) DO UPDATE SET location_id = excluded.location_id,
       last_seen_at = excluded.last_seen_at,
       quiet_late = CASE WHEN p.last_seen_at IS DISTINCT FROM excluded.last_seen_at
                         THEN excluded.quiet_late ELSE p.quiet_late END
       WHERE p.location_id IS DISTINCT FROM excluded.location_id OR p.last_seen_at IS DISTINCT FROM excluded.last_seen_at`;

/**
 * Puts known current locations and last sightings in asset_positions (migration 0042), in
 * one statement: the narrow table, not the assets row, takes this write of every read. The
 * asset's validity goes with each row (lockAssets read it under the lock), so 0043's
 * trigger, which would look it up for every proposed row (also those that update), does
 * not fire (migration 0048); an update leaves the position's copy to that trigger's twin.
 */
export async function setCurrentLocations(
  tx: Tx,
  orgId: number,
  rows: Array<{ assetId: number; locationId: number; lastSeenAt: number; validity: AssetValidity }>,
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO asset_positions AS p (org_id, asset_id, location_id, last_seen_at, valid_from, valid_to, quiet_late)
     SELECT $1, v.asset_id, v.location_id, v.last_seen_at, v.valid_from::timestamptz, v.valid_to::timestamptz,
       ${QUIET_LATE('v.last_seen_at')}
     FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[], $5::text[], $6::text[])
       AS v(asset_id, location_id, last_seen_at, valid_from, valid_to)
     ${ON_CONFLICT_POSITION}`,
    [
      orgId,
      int8Array(rows.map((r) => r.assetId)),
      int8Array(rows.map((r) => r.locationId)),
      timestampArray(rows.map((r) => r.lastSeenAt)),
      textArray(rows.map((r) => r.validity.validFrom)),
      textArray(rows.map((r) => r.validity.validTo)),
    ],
  );
}

/**
 * The statement of refreshCurrentLocation: $1 the organization, $2 the asset ids. It answers
 * every asset's newest stay (`changed` false) and then the ids whose position it changed
 * (`changed` true), and the caller matches the two. Joining them here would join two CTE
 * scans, and ingest's transactions plan without hash and merge joins (KEYED_BATCHES): a
 * nested loop compared every asset with every changed one, 990,000 comparisons and 134 of
 * the statement's 180 ms for 1,354 assets (docs/ingest-history.md, "Refreshing positions after late
 * reads").
 */
export const REFRESH_POSITIONS = `WITH s AS (
    SELECT v.asset_id, s.location_id, s.started_at, s.last_seen_at
    FROM ${newestStays('(SELECT DISTINCT unnest($2::bigint[])) AS v(asset_id)', 'location_id, started_at, last_seen_at')}
  ), changed AS (
    INSERT INTO asset_positions AS p (org_id, asset_id, location_id, last_seen_at, quiet_late)
    SELECT $1, asset_id, location_id, last_seen_at, ${QUIET_LATE('last_seen_at')} FROM s
    ${ON_CONFLICT_POSITION}
    RETURNING p.asset_id
  )
  SELECT asset_id, location_id, ${epochMs('started_at')} AS started_ms, false AS changed FROM s
  UNION ALL
  SELECT asset_id, NULL, NULL, true FROM changed`;

/**
 * Copies the newest stay into asset_positions: the asset's current location and last
 * sighting. Returns the rows it changed, with the newest stay's location and arrival.
 */
export async function refreshCurrentLocation(
  tx: Tx,
  orgId: number,
  assetIds: number[],
): Promise<Array<{ assetId: number; locationId: number; startedAt: number }>> {
  if (assetIds.length === 0) return [];
  // The arrival is not a column of the position; it is read back from the same stays.
  const { rows } = await tx.query<{
    asset_id: number;
    location_id: number | null;
    started_ms: number | null;
    changed: boolean;
  }>(REFRESH_POSITIONS, [orgId, int8Array(assetIds)]);
  const changed = new Set(rows.filter((r) => r.changed).map((r) => r.asset_id));
  return rows
    .filter((r) => !r.changed && changed.has(r.asset_id))
    .map((r) => ({ assetId: r.asset_id, locationId: r.location_id!, startedAt: r.started_ms! }));
}
