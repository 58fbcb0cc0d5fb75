import type { Database } from '../db/pool.js';
import { PeriodicPass } from '../periodic-pass.js';

const DAY_MS = 24 * 3600_000;

export interface EventsSweepResult {
  deliveries: number;
  events: number;
}

/** Where the sweep reports; the service log in the running service. */
export interface RetentionLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/**
 * Deletes, across organizations, what is older than `days` days: first the deliveries that
 * are finished (delivered, or failed after their day of retries) and those still pending
 * for an endpoint that was removed (never sent; removal deletes them since migration 0061,
 * so only an older instance's removal during an upgrade leaves any), then the dispatched events no
 * delivery names any more. An event with a delivery still pending (its receiver down, its
 * endpoint disabled for now) stays, however old, and so does an event not yet dispatched.
 * Each batch is its own short transaction, so a first sweep over a long backlog holds no
 * lock for long and a concurrent sweep of another instance only repeats the work.
 */
export async function sweepEvents(
  db: Database,
  days: number,
  now = Date.now(),
  batch = 5_000,
): Promise<EventsSweepResult> {
  const cutoff = new Date(now - days * DAY_MS);
  let deliveries = 0;
  // Ids as an array (= ANY): the batch's rows are found through the primary key whatever
  // the table's size, never by a hash join over the whole table.
  for (;;) {
    // The state is checked again on the row itself: a delivery sent again meanwhile is
    // pending and stays (the delete re-reads a row changed under it).
    const n = await db.system(async (tx) => {
      const res = await tx.query(
        `DELETE FROM webhook_deliveries WHERE state <> 'pending' AND id = ANY(ARRAY(
           SELECT id FROM webhook_deliveries
           WHERE state <> 'pending' AND greatest(created_at, last_attempt_at) < $1 LIMIT $2))`,
        [cutoff, batch],
      );
      return res.rowCount ?? 0;
    });
    deliveries += n;
    if (n < batch) break;
  }
  for (;;) {
    const n = await db.system(async (tx) => {
      const res = await tx.query(
        `DELETE FROM webhook_deliveries WHERE id = ANY(ARRAY(
           SELECT d.id FROM webhook_endpoints w JOIN webhook_deliveries d ON d.endpoint_id = w.id
           WHERE w.deleted_at IS NOT NULL AND d.state = 'pending' AND d.created_at < $1 LIMIT $2))`,
        [cutoff, batch],
      );
      return res.rowCount ?? 0;
    });
    deliveries += n;
    if (n < batch) break;
  }
  return { deliveries, events: await sweepDispatchedEvents(db, cutoff, batch) };
}

/**
 * Events in id order, which is the order they were written in (created_at never
 * changes): the scan stops at the first batch that reaches the cutoff, so it reads the
 * expired events and the few old ones kept (pending deliveries), not the whole table.
 */
async function sweepDispatchedEvents(db: Database, cutoff: Date, batch: number): Promise<number> {
  let total = 0;
  let after = 0;
  for (;;) {
    const step = await db.system(async (tx) => {
      const { rows } = await tx.query<{ deleted: number; last: string | null; old: number; scanned: number }>(
        `WITH scan AS MATERIALIZED (
           SELECT id, created_at FROM events WHERE id > $1 ORDER BY id LIMIT $2
         ), gone AS (
           DELETE FROM events e
           WHERE e.id = ANY(ARRAY(SELECT id FROM scan WHERE created_at < $3))
             AND e.created_at < $3
             AND NOT EXISTS (SELECT 1 FROM event_queue q WHERE q.id = e.id)
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
           RETURNING e.id
         )
         SELECT (SELECT count(*)::int FROM gone) AS deleted,
                (SELECT max(id) FROM scan) AS last,
                (SELECT count(*)::int FROM scan WHERE created_at < $3) AS old,
                (SELECT count(*)::int FROM scan) AS scanned`,
        [after, batch, cutoff],
      );
      return rows[0]!;
    });
    total += step.deleted;
    if (step.scanned < batch || step.old < step.scanned || step.last === null) return total;
    after = Number(step.last);
  }
}

/**
 * Applies TAGTRAIL_EVENTS_RETENTION_DAYS at start and then hourly while the service
 * runs, as the raw log's and the activity log's retention do (src/ingest/retention.ts,
 * src/activity/sweeper.ts).
 */
export class EventsRetention extends PeriodicPass {
  constructor(db: Database, retentionDays: number, logger: RetentionLogger, intervalMs = 3600_000) {
    super(
      (now) =>
        sweepEvents(db, retentionDays, now)
          .then(({ deliveries, events }) => {
            if (deliveries > 0 || events > 0) {
              logger.info(
                { deliveries, events, retentionDays },
                'expired events and webhook deliveries removed',
              );
            }
          })
          .catch((err: unknown) => {
            logger.warn({ err }, 'removing expired events failed; retried at the next run');
          }),
      intervalMs,
    );
  }
}
