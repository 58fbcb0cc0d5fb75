import type { Database } from '../db/pool.js';
import { type ActivityEntry, type ActivityFilter, listActivity, listActors } from './repository.js';

const DAY_MS = 24 * 3600_000;

/** The activity log (migration 0035 writes it): reading it, and its retention. */
export class ActivityService {
  constructor(private readonly db: Database) {}

  list(
    orgId: number,
    filter: ActivityFilter,
    page: { limit: number; offset: number },
  ): Promise<{ rows: ActivityEntry[]; total: number }> {
    return this.db.readWithOrg(orgId, (tx) => listActivity(tx, orgId, filter, page));
  }

  actors(orgId: number) {
    return this.db.readWithOrg(orgId, (tx) => listActors(tx, orgId));
  }

  /**
   * Deletes every organization's entries older than `days` days; returns how many. In
   * slices, so a first sweep over a long backlog holds no lock for long.
   */
  async sweep(days: number, now = Date.now()): Promise<number> {
    const cutoff = new Date(now - days * DAY_MS);
    let total = 0;
    for (;;) {
      const deleted = await this.db.system(async (tx) => {
        const res = await tx.query(
          `DELETE FROM activity WHERE id IN (
             SELECT id FROM activity WHERE occurred_at < $1 LIMIT 10000)`,
          [cutoff],
        );
        return res.rowCount ?? 0;
      });
      total += deleted;
      if (deleted < 10000) return total;
    }
  }
}
