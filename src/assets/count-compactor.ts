import type { FastifyBaseLogger } from 'fastify';
import type { Database, Tx } from '../db/pool.js';
import { PeriodicPass } from '../periodic-pass.js';

/**
 * Folds the live-asset count's delta rows (migration 0054) into one row per organization
 * and is_active, for every organization that has more than one. Across organizations, like
 * the raw log's retention: a system transaction. Safe beside writers (their rows not yet
 * committed are not seen, so not folded) and beside another instance's pass (a row the
 * other deleted first is skipped, so nothing is counted twice). Returns the rows folded.
 */
export async function compactAssetCounts(tx: Tx): Promise<number> {
  const { rows } = await tx.query<{ folded: number }>(
    `WITH crowded AS (
       SELECT org_id, is_active FROM asset_count_deltas GROUP BY org_id, is_active HAVING count(*) > 1
     ), gone AS (
       DELETE FROM asset_count_deltas d USING crowded c
       WHERE d.org_id = c.org_id AND d.is_active = c.is_active
       RETURNING d.org_id, d.is_active, d.n
     ), kept AS (
       INSERT INTO asset_count_deltas (org_id, is_active, n)
       SELECT org_id, is_active, sum(n) FROM gone GROUP BY org_id, is_active HAVING sum(n) <> 0
     )
     SELECT count(*)::int AS folded FROM gone`,
  );
  return rows[0]!.folded;
}

/**
 * Keeps the delta rows few, at start and every minute: a list's total sums an
 * organization's rows, and every asset write statement adds one.
 */
export class AssetCountCompactor extends PeriodicPass {
  constructor(db: Database, logger: FastifyBaseLogger, intervalMs = 60_000) {
    super(async () => {
      try {
        const folded = await db.system(compactAssetCounts);
        if (folded > 0) logger.debug({ folded }, 'asset count rows folded');
      } catch (err) {
        // A database outage: the rows stay correct, only more of them; the next pass folds them.
        logger.warn({ err }, 'folding asset count rows failed; retried at the next pass');
      }
    }, intervalMs);
  }
}
