import type { Database } from '../db/pool.js';

/** What waits for the dispatcher (src/events/dispatcher.ts): the queue of migration 0055. */
export interface EventBacklog {
  /** Events committed and not yet dispatched. */
  queued: number;
  /** Age of the oldest of them, in seconds; 0 when none waits. */
  oldestSeconds: number;
}

/**
 * The dispatcher's backlog, for /metrics: a dispatcher that falls behind (or stopped)
 * delays every webhook and live view, which ingest's own series do not show. Index
 * lookups and a count of the narrow queue, which is short unless something is wrong.
 */
export async function eventBacklog(db: Database): Promise<EventBacklog> {
  return db.system(async (tx) => {
    const { rows } = await tx.query<{ queued: number; oldest: number }>(
      `SELECT (SELECT count(*) FROM event_queue)::int AS queued,
              coalesce(extract(epoch FROM clock_timestamp() - (
                SELECT created_at FROM events WHERE id = (SELECT min(id) FROM event_queue)
              )), 0)::float8 AS oldest`,
    );
    const row = rows[0]!;
    return { queued: row.queued, oldestSeconds: Math.max(0, row.oldest) };
  });
}
