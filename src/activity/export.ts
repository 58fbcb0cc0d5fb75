import pg from 'pg';
import { APP_ROLE, type Database } from '../db/pool.js';
import { toWire } from '../http/timestamps.js';
import { type ActivityEntry, COLUMNS } from './repository.js';

/** Rows fetched from the cursor at a time: memory stays flat whatever the log's size. */
const BATCH = 1000;

/** An entry as GET /internal/activity returns it, and so as an export line carries it. */
export function activityView(e: ActivityEntry) {
  return {
    id: e.id,
    occurred_at: toWire(e.occurred_at),
    actor: { type: e.actor_type, id: e.actor_id, name: e.actor_name },
    entity_type: e.entity_type,
    entity_id: e.entity_id,
    action: e.action,
    record_type: e.record_type,
    record_id: e.record_id,
    before: e.before,
    after: e.after,
  };
}

/** An entry as an export line carries it: the shape GET /internal/activity returns. */
export function exportLine(e: ActivityEntry): string {
  return JSON.stringify(activityView(e));
}

/**
 * Writes the organization's activity, oldest first, from `since` (inclusive) on, as NDJSON
 * lines through `write` (awaited: a slow reader of the output slows the fetching). Reads
 * through a server-side cursor on a pg.Client of its own: the pool runs in pipeline mode,
 * which has no cursors. Returns the number of entries written.
 */
export async function exportActivity(
  db: Database,
  orgId: number,
  options: { since?: Date },
  write: (line: string) => Promise<void>,
): Promise<number> {
  if (!Number.isSafeInteger(orgId) || orgId < 1) throw new Error(`invalid organization id ${orgId}`);
  const client = new pg.Client(db.pool.options);
  await client.connect();
  let written = 0;
  try {
    // REPEATABLE READ: one snapshot for the whole export, however long it runs.
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(`SET LOCAL ROLE ${APP_ROLE}`);
    await client.query("SELECT set_config('tagtrail.org_id', $1, true)", [String(orgId)]);
    await client.query(
      `DECLARE activity_export NO SCROLL CURSOR FOR
         SELECT ${COLUMNS} FROM activity
          WHERE org_id = $1 AND ($2::timestamptz IS NULL OR occurred_at >= $2)
          ORDER BY occurred_at, id`,
      [orgId, options.since ?? null],
    );
    for (;;) {
      const { rows } = await client.query<ActivityEntry>(`FETCH ${BATCH} FROM activity_export`);
      for (const row of rows) {
        await write(`${exportLine(row)}\n`);
        written++;
      }
      if (rows.length < BATCH) break;
    }
    await client.query('COMMIT');
    return written;
  } finally {
    await client.end();
  }
}
