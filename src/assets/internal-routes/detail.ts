import { Type } from '@sinclair/typebox';
import type { Tx } from '../../db/pool.js';
import { Nullable, TimestampOut } from '../../http/schemas/common.js';
import { toWireOrNull } from '../../http/timestamps.js';

/** One step of a location's path from its root down to itself. */
export const PathStepSchema = Type.Object({
  id: Type.Integer(),
  external_key: Type.String(),
  name: Type.String(),
});

/**
 * What the asset page shows beyond the public Asset: the current location named and placed
 * in its tree, when the asset arrived there (the start of its newest stay) and when it was
 * last seen anywhere.
 */
export const AssetWhereaboutsSchema = Type.Object({
  location_name: Nullable(Type.String()),
  location_path: Type.Array(PathStepSchema),
  located_since: Nullable(TimestampOut()),
  last_seen_at: Nullable(TimestampOut()),
});

interface WhereaboutsRow {
  location_id: number | null;
  location_name: string | null;
  located_since: Date | null;
  last_seen_at: Date | null;
}

/** Depth cap of the path walk: a guard, the tree has no cycles (moves refuse them). */
const MAX_DEPTH = 64;

export async function assetWhereabouts(tx: Tx, orgId: number, assetId: number) {
  const { rows } = await tx.query<WhereaboutsRow>(
    `SELECT p.location_id, l.name AS location_name, p.last_seen_at,
       (SELECT s.started_at FROM stays s WHERE s.org_id = $1 AND s.asset_id = $2
         ORDER BY s.started_at DESC LIMIT 1) AS located_since
     FROM asset_positions p LEFT JOIN locations l ON l.org_id = p.org_id AND l.id = p.location_id
     WHERE p.org_id = $1 AND p.asset_id = $2`,
    [orgId, assetId],
  );
  const row = rows[0];
  let path: { id: number; external_key: string; name: string }[] = [];
  if (row?.location_id) {
    const walked = await tx.query<{ id: number; external_key: string; name: string }>(
      `WITH RECURSIVE up AS (
         SELECT id, parent_id, external_key, name, 0 AS depth FROM locations WHERE org_id = $1 AND id = $2
         UNION ALL
         SELECT l.id, l.parent_id, l.external_key, l.name, up.depth + 1
         FROM locations l JOIN up ON l.org_id = $1 AND l.id = up.parent_id WHERE up.depth < $3
       ) SELECT id, external_key, name FROM up ORDER BY depth DESC`,
      [orgId, row.location_id, MAX_DEPTH],
    );
    path = walked.rows;
  }
  return {
    location_name: row?.location_name ?? null,
    location_path: path,
    located_since: toWireOrNull(row?.located_since ?? null),
    last_seen_at: toWireOrNull(row?.last_seen_at ?? null),
  };
}

/** Names of locations by id (retired ones too: history still names them). */
export async function locationNames(tx: Tx, orgId: number, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await tx.query<{ id: number; name: string }>(
    'SELECT id, name FROM locations WHERE org_id = $1 AND id = ANY($2::bigint[])',
    [orgId, [...new Set(ids)]],
  );
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** The arrival of the newest stay: the history row that is still going on. */
export async function currentStayStart(tx: Tx, orgId: number, assetId: number): Promise<string | null> {
  const { rows } = await tx.query<{ started_at: Date }>(
    'SELECT started_at FROM stays WHERE org_id = $1 AND asset_id = $2 ORDER BY started_at DESC LIMIT 1',
    [orgId, assetId],
  );
  return toWireOrNull(rows[0]?.started_at ?? null);
}
