import type { Tx } from '../db/pool.js';
import { preparedQuery } from '../db/prepared.js';

/**
 * The advisory lock (class, organization) that orders an organization's writers of moves
 * against the webhook changes that could start wanting them: shared by every transaction
 * that records moves, exclusive for creating or updating an endpoint.
 */
const MOVES_LOCK_CLASS = 7120;

/** Which of the move events some endpoint of the organization receives. */
export interface MovesWanted {
  firstSeen: boolean;
  moved: boolean;
}

/**
 * asset.moved and asset.first_seen are written only for an organization with an enabled
 * endpoint of that type: every read of a moving population is one, and storing, queueing
 * and dispatching them was more than half of PostgreSQL's work per read with nobody to
 * send them to (docs/ingest.md). The live views hear of moves from their writer
 * (outbox.ts, announceMoves), not from stored events.
 *
 * The shared lock is taken in a statement before the check, so the check's snapshot
 * starts once the lock is held: an endpoint created or enabled (holding the lock
 * exclusively, lockMoveSubscriptions) either committed before and is seen, or waits for
 * this transaction to end. An endpoint receives the moves of every transaction that
 * commits after its own change did. Both statements are sent at once (the pool
 * pipelines); only the check's answer is awaited.
 */
export function movesWanted(tx: Tx, orgId: number): Promise<MovesWanted> {
  const locked = tx.query(
    preparedQuery('SELECT pg_advisory_xact_lock_shared($1, $2)', [MOVES_LOCK_CLASS, orgId]),
  );
  locked.catch(() => undefined);
  const checked = tx.query<{ first_seen: boolean; moved: boolean }>(
    preparedQuery(
      `SELECT coalesce(bool_or('asset.first_seen' = ANY(event_types)), false) AS first_seen,
              coalesce(bool_or('asset.moved' = ANY(event_types)), false) AS moved
       FROM webhook_endpoints WHERE org_id = $1 AND deleted_at IS NULL AND disabled_at IS NULL`,
      [orgId],
    ),
  );
  return Promise.all([locked, checked]).then(([, { rows }]) => ({
    firstSeen: rows[0]?.first_seen ?? false,
    moved: rows[0]?.moved ?? false,
  }));
}

/**
 * Taken by a transaction that creates or changes an endpoint before it writes: it waits
 * for the organization's transactions recording moves under the old subscriptions, and
 * those after it see the new ones.
 */
export async function lockMoveSubscriptions(tx: Tx, orgId: number): Promise<void> {
  await tx.query(preparedQuery('SELECT pg_advisory_xact_lock($1, $2)', [MOVES_LOCK_CLASS, orgId]));
}
