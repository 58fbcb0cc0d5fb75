import type { Tx } from '../db/pool.js';

export type KeyedTable = 'assets' | 'locations';

const PREFIX: Record<KeyedTable, string> = { assets: 'ASSET', locations: 'LOC' };
const LOCK_CLASS: Record<KeyedTable, number> = { assets: 7101, locations: 7102 };

/**
 * Serialises creates and renames of one organization's keys of one kind until the
 * transaction ends, so "lowest unused slot" cannot hand the same key to two creates.
 */
export async function lockKeyspace(tx: Tx, table: KeyedTable, orgId: number): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS[table], orgId]);
}

/** Whether `key` has the form of an auto key (the slot expression of migration 0002). */
export function isAutoKeyForm(table: KeyedTable, key: string): boolean {
  return new RegExp(`^${PREFIX[table]}-([0-9]{4}|[1-9][0-9]{4,8})$`).test(key);
}

export function formatAutoKey(table: KeyedTable, slot: number): string {
  return `${PREFIX[table]}-${String(slot).padStart(4, '0')}`;
}

/**
 * The lowest slot no live row holds (`ASSET-NNNN` / `LOC-NNNN`); slots of deleted or
 * renamed rows are reused. Call after lockKeyspace in the same transaction.
 *
 * Every slot up to the organization's watermark is held (migration 0007 lowers it when a
 * slot is freed), so the search walks the slot index only from there to the first gap,
 * and then moves the watermark to the slot taken, unless a slot below was freed meanwhile.
 */
export async function nextAutoKey(tx: Tx, table: KeyedTable, orgId: number): Promise<string> {
  const { rows: marks } = await tx.query<{ dense_upto: number }>(
    `WITH created AS (
       INSERT INTO auto_key_watermarks (org_id, kind) VALUES ($1, $2)
       ON CONFLICT (org_id, kind) DO NOTHING RETURNING dense_upto)
     SELECT dense_upto FROM created
     UNION ALL SELECT dense_upto FROM auto_key_watermarks WHERE org_id = $1 AND kind = $2`,
    [orgId, table],
  );
  const mark = marks[0]!.dense_upto;
  // Slots above the watermark in order, numbered from it: the first slot that differs from
  // its number is a gap at that number; with none, the next slot is past the last one.
  // One ordered walk that stops at the gap, whatever the planner's statistics say.
  const live = `org_id = $1 AND deleted_at IS NULL AND auto_slot IS NOT NULL AND auto_slot > $3`;
  const { rows } = await tx.query<{ slot: number }>(
    `WITH found AS (
       SELECT coalesce(
         (SELECT s.expected FROM (
            SELECT auto_slot, $3 + row_number() OVER (ORDER BY auto_slot) AS expected
            FROM ${table} WHERE ${live}) s
          WHERE s.auto_slot <> s.expected LIMIT 1),
         (SELECT coalesce(max(auto_slot), $3) + 1 FROM ${table} WHERE ${live})
       )::integer AS slot),
     advanced AS (
       UPDATE auto_key_watermarks SET dense_upto = found.slot FROM found
       WHERE org_id = $1 AND kind = $2 AND dense_upto = $3)
     SELECT slot FROM found`,
    [orgId, table, mark],
  );
  return formatAutoKey(table, rows[0]!.slot);
}
