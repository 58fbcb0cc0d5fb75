import type { Tx } from '../db/pool.js';
import { preparedQuery } from '../db/prepared.js';
import { type LockOptions, takeXactLock } from '../db/xact-lock.js';

export type KeyedTable = 'assets' | 'locations';

const PREFIX: Record<KeyedTable, string> = { assets: 'ASSET', locations: 'LOC' };
/** The advisory lock classes of lockKeyspace (migration 0009's trigger takes the same). */
export const KEYSPACE_LOCK_CLASS: Record<KeyedTable, number> = { assets: 7101, locations: 7102 };

/**
 * Serialises creates and renames of one organization's keys of one kind until the
 * transaction commits, so "lowest unused slot" cannot hand the same key to two creates.
 * The COMMIT releases it before its WAL flush, which the transaction's end waits for
 * instead (releaseBeforeFlush, src/db/commit.ts): the organization's writes queue on the
 * lock for each other's work, not for one fsync each.
 */
export async function lockKeyspace(
  tx: Tx,
  table: KeyedTable,
  orgId: number,
  options: LockOptions = {},
): Promise<void> {
  await takeXactLock(tx, KEYSPACE_LOCK_CLASS[table], orgId, options);
}

/** Whether `key` has the form of an auto key (the slot expression of migration 0002). */
export function isAutoKeyForm(table: KeyedTable, key: string): boolean {
  return new RegExp(`^${PREFIX[table]}-([0-9]{4}|[1-9][0-9]{4,8})$`).test(key);
}

export function formatAutoKey(table: KeyedTable, slot: number): string {
  return `${PREFIX[table]}-${String(slot).padStart(4, '0')}`;
}

/**
 * The lowest slot no live row holds (`ASSET-NNNN` / `LOC-NNNN`), with the watermark moved
 * to it (slotChoice); slots of deleted or renamed rows are reused. Call after lockKeyspace
 * in the same transaction.
 */
export async function nextAutoKey(tx: Tx, table: KeyedTable, orgId: number): Promise<string> {
  const { rows } = await tx.query<{ slot: number }>(
    preparedQuery(`WITH ${slotChoice(table)} SELECT slot FROM found`, [orgId, table]),
  );
  return formatAutoKey(table, rows[0]!.slot);
}

/**
 * nextAutoKey's choice and the setting of row `id`'s key to it, with the watermark moved,
 * in one statement, so that it can be sent behind lockKeyspace without waiting for the
 * lock (its snapshot is taken when it starts, once the lock is granted, so it sees every
 * create that held the lock before) and the COMMIT behind it: the lock is then held for
 * the server's work alone. Returns the key.
 */
export async function assignAutoKey(tx: Tx, table: KeyedTable, orgId: number, id: number): Promise<string> {
  const { rows } = await tx.query<{ key: string }>(
    preparedQuery(
      `WITH ${slotChoice(table)},
     keyed AS (
       UPDATE ${table} SET external_key = ${CHOSEN_KEY} FROM found WHERE org_id = $1 AND id = $4
       RETURNING external_key)
     SELECT external_key AS key FROM keyed`,
      [orgId, table, autoKeyPrefix(table), id],
    ),
  );
  if (!rows[0]) throw new Error(`${table} ${id} vanished before its key was assigned`);
  return rows[0].key;
}

/**
 * The rows holding an auto-key slot, for a statement whose $1 is the organization: the
 * predicate of the slot index (assets_auto_slot, locations_auto_slot), so every search of
 * slots is served by it.
 */
export const HELD_SLOTS = 'org_id = $1 AND deleted_at IS NULL AND auto_slot IS NOT NULL';

/**
 * The CTEs `mark`, `found` (one row: the chosen `slot`) and `advanced` (the watermark
 * moved) of the lowest free slot, for a statement whose $1 is the organization and $2 the
 * table; CHOSEN_KEY is the key, read from `found`, for a statement whose $3 is the table's
 * prefix (autoKeyPrefix).
 *
 * Every slot up to the organization's watermark is held (migration 0007 lowers it when a
 * slot is freed), so the slot just above it is the answer unless a live row holds it: one
 * probe of the slot index, the usual case. Only when it is held (by a key given by hand,
 * or after a freed slot below was refilled) are the slots above the watermark walked in
 * order to the first gap (or past the last one: there is one, the slot just above), once:
 * the watermark then moves to the slot taken, unless a slot below was freed meanwhile.
 *
 * The probe is by equality because the walk's lower bound, read by this statement, is
 * unknown when it is planned: PostgreSQL counts on a third of the slot index, and with
 * statistics older than the organization's auto keys it read the whole table, twice,
 * under the keyspace lock, for every create (test/master-data/auto-key-plan.test.ts). An
 * uncorrelated subquery is run when its value is first needed, so the walk's never runs
 * when the probe finds the slot free.
 */
export function slotChoice(table: KeyedTable): string {
  const above = `${HELD_SLOTS} AND auto_slot > (SELECT m FROM mark)`;
  return `mark AS MATERIALIZED (
       SELECT coalesce((SELECT dense_upto FROM auto_key_watermarks WHERE org_id = $1 AND kind = $2), 0) AS m),
     found AS MATERIALIZED (
       SELECT (CASE
         WHEN (SELECT true FROM ${table} WHERE ${HELD_SLOTS} AND auto_slot = (SELECT m FROM mark) + 1 LIMIT 1) IS NULL
           THEN (SELECT m FROM mark) + 1
         ELSE coalesce(
           (SELECT s.expected FROM (
              SELECT auto_slot, (SELECT m FROM mark) + row_number() OVER (ORDER BY auto_slot) AS expected
              FROM ${table} WHERE ${above}) s
            WHERE s.auto_slot <> s.expected LIMIT 1),
           (SELECT max(auto_slot) + 1 FROM ${table} WHERE ${above}))
       END)::integer AS slot),
     advanced AS (
       INSERT INTO auto_key_watermarks AS w (org_id, kind, dense_upto) SELECT $1, $2, slot FROM found
       ON CONFLICT (org_id, kind) DO UPDATE SET dense_upto = excluded.dense_upto
       WHERE w.dense_upto = (SELECT m FROM mark))`;
}

export const CHOSEN_KEY = `$3 || CASE WHEN found.slot < 10000
         THEN lpad(found.slot::text, 4, '0') ELSE found.slot::text END`;

export function autoKeyPrefix(table: KeyedTable): string {
  return `${PREFIX[table]}-`;
}
