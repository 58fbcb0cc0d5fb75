import type { Database, Tx } from '../db/pool.js';
import { lockSubjectHeads, unqueueHeads } from './deliveries-repository.js';

/** The live views' channel: one message per organization per dispatch (src/events/live-hub.ts). */
export const LIVE_CHANNEL = 'tagtrail_events';

/** What changed in one organization, as the live views hear it. */
export interface LiveChange {
  org_id: number;
  types: string[];
  asset_ids: number[];
  location_ids: number[];
  /** More assets changed than are listed: a view should simply reload what it shows. */
  truncated: boolean;
}

// NOTIFY payloads are limited to 8000 bytes.
export const MAX_LISTED_IDS = 300;

const DISPATCH_LOCK = "hashtext('tagtrail.events.dispatch')";

/**
 * Waits for a dispatch in progress to commit and keeps the next one from starting until
 * this transaction ends: for a change the dispatcher must not work on a stale view of
 * (removing an endpoint, whose deliveries it may be creating).
 */
export async function lockDispatch(tx: Tx): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(${DISPATCH_LOCK})`);
}

/**
 * Moves a batch of new events on: one webhook delivery for every endpoint that wants each
 * event, taken off the queue of undispatched events, and tells the live views what
 * changed. One
 * dispatcher at a time (a transaction-scoped advisory lock), taking events in id order:
 * one subject's events are numbered in commit order, so its deliveries are created in
 * order too. Returns the number of events dispatched (0: nothing to do, or another
 * instance is dispatching).
 */
export async function dispatchEvents(db: Database, limit = 2000): Promise<number> {
  return db.system(async (tx) => {
    const lock = await tx.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(${DISPATCH_LOCK}) AS ok`);
    if (!lock.rows[0]?.ok) return 0;
    await lockSubjectHeads(tx, 'exclusive');
    // The queue's rows are the undispatched events (migration 0055); taking them off it is
    // what marks them dispatched, when this transaction commits.
    const { rows } = await tx.query<{ ids: string[] | null }>(
      `WITH taken AS (
         DELETE FROM event_queue WHERE id IN (SELECT id FROM event_queue ORDER BY id LIMIT $1) RETURNING id
       )
       SELECT array_agg(id ORDER BY id) AS ids FROM taken`,
      [limit],
    );
    const ids = rows[0]?.ids ?? [];
    if (ids.length === 0) return 0;
    // Endpoints filtered to a subtree match an event concerning any location under their root.
    // The same read of the batch tells the live views what changed, except the moves: their
    // writer told them when it committed (recordMoves).
    const changes = await tx.query<LiveChange>(
      `WITH RECURSIVE batch AS MATERIALIZED (SELECT * FROM events WHERE id = ANY($1::bigint[])),
       wanted AS (
         SELECT w.id, w.org_id, w.location_id, w.event_types FROM webhook_endpoints w
         WHERE w.org_id IN (SELECT DISTINCT org_id FROM batch) AND w.deleted_at IS NULL AND w.disabled_at IS NULL
       ),
       subtree(endpoint_id, org_id, location_id) AS (
         SELECT id, org_id, location_id FROM wanted WHERE location_id IS NOT NULL
         UNION ALL
         SELECT s.endpoint_id, s.org_id, l.id FROM subtree s
         JOIN locations l ON l.org_id = s.org_id AND l.parent_id = s.location_id
       ),
       -- A delivery behind a pending one of its subject (its head) is not due before the head:
       -- otherwise, behind a head waiting for its retry (up to an hour), every new event of
       -- the subject would be due and blocked, and each claim would read them all again
       -- (markFailed holds back the ones that exist when the head fails, the same way).
       delivered AS (
         INSERT INTO webhook_deliveries (org_id, endpoint_id, event_id, subject, next_attempt_at, queued)
         SELECT e.org_id, w.id, e.id, e.subject,
                greatest(now_ms(), (
                  SELECT p.next_attempt_at FROM webhook_deliveries p
                  WHERE p.endpoint_id = w.id AND p.subject = e.subject AND p.state = 'pending'
                  ORDER BY p.event_id LIMIT 1)),
                -- Queued behind a pending delivery of its subject, or an earlier one of this
                -- batch (the heads are put right below, whatever the conflicts skipped).
                row_number() OVER (PARTITION BY w.id, e.subject ORDER BY e.id) > 1
                  OR EXISTS (SELECT 1 FROM webhook_deliveries p
                             WHERE p.endpoint_id = w.id AND p.subject = e.subject AND p.state = 'pending')
         FROM batch e
         JOIN wanted w ON w.org_id = e.org_id AND e.type = ANY(w.event_types)
         WHERE w.location_id IS NULL
            OR EXISTS (SELECT 1 FROM subtree s WHERE s.endpoint_id = w.id AND s.location_id = ANY(e.location_ids))
         ORDER BY e.id, w.id
         ON CONFLICT (endpoint_id, event_id) DO NOTHING
       )
       SELECT org_id, array_agg(DISTINCT type) AS types,
              (array_agg(DISTINCT split_part(subject, ':', 2)::bigint)
                 FILTER (WHERE subject LIKE 'asset:%'))[1:${MAX_LISTED_IDS}] AS asset_ids,
              (array_agg(DISTINCT l))[1:${MAX_LISTED_IDS}] AS location_ids,
              count(DISTINCT subject) > ${MAX_LISTED_IDS} AS truncated
       FROM batch LEFT JOIN LATERAL unnest(location_ids) AS l ON true
       WHERE type NOT IN ('asset.moved', 'asset.first_seen') GROUP BY org_id`,
      [ids],
    );
    const queued = await tx.query<{ endpointId: number; subject: string }>(
      `SELECT DISTINCT endpoint_id AS "endpointId", subject FROM webhook_deliveries
       WHERE event_id = ANY($1::bigint[]) AND state = 'pending' AND queued`,
      [ids],
    );
    await unqueueHeads(tx, queued.rows);
    for (const c of changes.rows) {
      const message: LiveChange = {
        org_id: Number(c.org_id),
        types: c.types,
        asset_ids: (c.asset_ids ?? []).map(Number),
        location_ids: (c.location_ids ?? []).filter((l) => l !== null).map(Number),
        truncated: c.truncated,
      };
      // Delivered to listeners when this transaction commits, with the deliveries.
      await tx.query('SELECT pg_notify($1, $2)', [LIVE_CHANNEL, JSON.stringify(message)]);
    }
    return ids.length;
  });
}
