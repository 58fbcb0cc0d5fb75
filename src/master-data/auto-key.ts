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

export function formatAutoKey(table: KeyedTable, slot: number): string {
  return `${PREFIX[table]}-${String(slot).padStart(4, '0')}`;
}

/**
 * The lowest slot no live row holds (`ASSET-NNNN` / `LOC-NNNN`); slots of deleted or
 * renamed rows are reused. Call after lockKeyspace in the same transaction.
 */
export async function nextAutoKey(tx: Tx, table: KeyedTable, orgId: number): Promise<string> {
  const { rows } = await tx.query<{ slot: number }>(
    `SELECT CASE
       WHEN NOT EXISTS (SELECT 1 FROM ${table} WHERE org_id = $1 AND deleted_at IS NULL AND auto_slot = 1) THEN 1
       ELSE (SELECT min(a.auto_slot) + 1 FROM ${table} a
             WHERE a.org_id = $1 AND a.deleted_at IS NULL AND a.auto_slot IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM ${table} b
                               WHERE b.org_id = $1 AND b.deleted_at IS NULL AND b.auto_slot = a.auto_slot + 1))
     END AS slot`,
    [orgId],
  );
  return formatAutoKey(table, rows[0]!.slot);
}
