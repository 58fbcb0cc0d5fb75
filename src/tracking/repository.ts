import { int8Array, textArray, timestampArray } from '../db/binary-arrays.js';
import type { Tx } from '../db/pool.js';
import type { StayRange } from './late-reads.js';
import { placeRead, type Stay } from './stays.js';

/** An instant column as epoch milliseconds: parsed as a number, not as a date string per row. */
export const epochMs = (column: string): string => `floor(extract(epoch FROM ${column}) * 1000)::bigint`;

/** A stay's columns as StayRow reads them, of the stays table (or alias) `t`. */
const stayColumns = (t: string): string =>
  `${t}.id, ${t}.location_id, ${epochMs(`${t}.started_at`)} AS started_ms, ${epochMs(`${t}.last_seen_at`)} AS last_seen_ms, ${t}.started_at::text AS started_key`;

interface StayRow {
  id: number;
  location_id: number;
  started_ms: number;
  last_seen_ms: number;
  started_key: string;
}

const toStay = (r: StayRow): Stay => ({
  id: r.id,
  locationId: r.location_id,
  startedAt: r.started_ms,
  lastSeenAt: r.last_seen_ms,
  key: r.started_key,
});

/** A stored stay by its key (migration 0056): its asset and its start as the server printed it. */
export interface StayKey {
  assetId: number;
  key: string;
}

/** The key of a stay of `assetId` that `changes` name by id, among the stays loaded for it. */
export function keyOf(stays: readonly Stay[], assetId: number, id: number): StayKey {
  const key = stays.find((s) => s.id === id)?.key;
  if (key === undefined) throw new Error(`stay ${id} of asset ${assetId} was not loaded with its key`);
  return { assetId, key };
}

/** The stays a read at `at` can touch: the two latest starting at or before it, the first after. */
async function stayWindow(tx: Tx, orgId: number, assetId: number, at: Date): Promise<Stay[]> {
  const { rows } = await tx.query<StayRow>(
    `(SELECT ${stayColumns('stays')} FROM stays
       WHERE org_id = $1 AND asset_id = $2 AND started_at <= $3 ORDER BY started_at DESC LIMIT 2)
     UNION ALL
     (SELECT ${stayColumns('stays')} FROM stays
       WHERE org_id = $1 AND asset_id = $2 AND started_at > $3 ORDER BY started_at LIMIT 1)`,
    [orgId, assetId, at],
  );
  return rows.map(toStay).sort((a, b) => a.startedAt - b.startedAt);
}

/**
 * Places one sighting of an asset in its history. The caller holds the asset's row lock
 * (lockAssets) so concurrent ingest of the same asset cannot interleave.
 */
export async function recordSighting(
  tx: Tx,
  orgId: number,
  assetId: number,
  locationId: number,
  at: number,
): Promise<void> {
  const window = await stayWindow(tx, orgId, assetId, new Date(at));
  const changes = placeRead({ locationId, at }, window);
  for (const c of changes) {
    if (c.op === 'delete') {
      const { key } = keyOf(window, assetId, c.id);
      await tx.query(
        'DELETE FROM stays WHERE org_id = $1 AND asset_id = $2 AND started_at = $3::timestamptz',
        [orgId, assetId, key],
      );
    } else if (c.op === 'update') {
      const { key } = keyOf(window, assetId, c.id);
      await tx.query(
        `UPDATE stays SET started_at = $4, last_seen_at = $5
         WHERE org_id = $1 AND asset_id = $2 AND started_at = $3::timestamptz`,
        [orgId, assetId, key, new Date(c.startedAt), new Date(c.lastSeenAt)],
      );
    } else {
      await tx.query(
        'INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at) VALUES ($1, $2, $3, $4, $5)',
        [orgId, assetId, c.locationId, new Date(c.startedAt), new Date(c.lastSeenAt)],
      );
    }
  }
}

/** An asset's latest stay: where it is now and since when it was last seen there. */
export interface NewestStay {
  id: number;
  locationId: number;
  lastSeenAt: number;
  /** Its start as the server printed it: with the asset, the row's key. */
  key: string;
}

/** An asset's validity window, as the server printed it (sent back as it came). */
export interface AssetValidity {
  validFrom: string;
  validTo: string | null;
}

/** What lockAssets found under the locks. */
export interface LockedAssets {
  /** The live assets, each with its newest stay (null before the first sighting). */
  newest: Map<number, NewestStay | null>;
  /** Their validity, which their positions copy (migration 0043; setCurrentLocations). */
  validity: Map<number, AssetValidity>;
}

/**
 * `columns` of the newest stay of each asset `v.asset_id` of `assets` (organization $1),
 * as `s`: one descent of the (org, asset, started_at) index per asset. (A DISTINCT ON over
 * the assets' stays read and sorted each asset's whole history, all of it on every batch:
 * 86 ms for a dozen assets of 10,000 stays each, against 0.2 ms for this.)
 */
export const newestStays = (assets: string, columns: string): string => `${assets}
  CROSS JOIN LATERAL (
    SELECT ${columns} FROM stays
    WHERE org_id = $1 AND asset_id = v.asset_id ORDER BY started_at DESC LIMIT 1
  ) s`;

/** The newest stay of each asset of $2 (newestStays), for lockAssets. */
export const NEWEST_STAYS = `SELECT v.asset_id, s.id, s.location_id, s.last_seen_ms, s.started_key
  FROM ${newestStays('unnest($2::bigint[]) AS v(asset_id)', `id, location_id, ${epochMs('last_seen_at')} AS last_seen_ms, started_at::text AS started_key`)}`;

/**
 * Locks the assets' rows in id order (no deadlocks between batches); returns the live
 * ones with their newest stay and their validity. The stays are read by a second
 * statement, sent with the first without waiting for it (one round trip): the server runs
 * it once the locks are held, and in READ COMMITTED it then sees what a batch that held a
 * lock before us committed (a join in the locking statement would not). The validity
 * comes with the lock: the locked row is the latest, and no one changes it while we hold it.
 */
export async function lockAssets(tx: Tx, orgId: number, assetIds: number[]): Promise<LockedAssets> {
  const out: LockedAssets = { newest: new Map(), validity: new Map() };
  if (assetIds.length === 0) return out;
  const ids = int8Array(assetIds);
  // As text: handed back to PostgreSQL as it came, never parsed here.
  const locking = tx.query<{ id: number; valid_from: string; valid_to: string | null }>(
    `SELECT id, valid_from::text, valid_to::text FROM assets
     WHERE org_id = $1 AND id = ANY($2::bigint[]) AND deleted_at IS NULL
     ORDER BY id FOR UPDATE`,
    [orgId, ids],
  );
  const newest = tx.query<{
    asset_id: number;
    id: number;
    location_id: number;
    last_seen_ms: number;
    started_key: string;
  }>(NEWEST_STAYS, [orgId, ids]);
  // Fails too when the lock did; the lock's error is the one to report.
  newest.catch(() => undefined);
  for (const r of (await locking).rows) {
    out.newest.set(r.id, null);
    out.validity.set(r.id, { validFrom: r.valid_from, validTo: r.valid_to });
  }
  // A deleted asset's stays are read as well (the list was sent before the locks answered).
  for (const r of (await newest).rows) {
    if (out.newest.has(r.asset_id))
      out.newest.set(r.asset_id, {
        id: r.id,
        locationId: r.location_id,
        lastSeenAt: r.last_seen_ms,
        key: r.started_key,
      });
  }
  return out;
}

/**
 * The statements that change stays by key: $1 the organization, $2 asset ids and $3 the
 * stays' starts as printed (StayKey, text read back as the timestamp it was printed from),
 * then the new values. Each key's stay is found by its own probe of the primary key (a
 * LATERAL subquery, run once per key) and then changed by its row address, so the plan
 * is linear in the batch whatever the planner believes of the table: joined as a plain
 * `UPDATE … FROM unnest(…)`, a site whose stays came after the last ANALYZE had them
 * estimated at a row or two, and the planner compared every stay of the organization with
 * every key (test/ingest/batch-plans.test.ts, test/tracking/long-history-plans.test.ts).
 * The keys are read as timestamps in a subquery kept apart (OFFSET 0): the cast is not
 * leak-proof, and under row-level security PostgreSQL will not use a condition calling it
 * as an index condition. Rows are addressed within the transaction that holds their
 * assets' locks (lockAssets), so no one moves them in between.
 */
const byKey = (columns: string[], types: string) => {
  const listed = columns.map((c) => `, ${c}`).join('');
  return `(SELECT p.tid${columns.map((c) => `, k.${c}`).join('')}
    FROM (SELECT asset_id, started_key::timestamptz AS started_at${listed}
      FROM unnest($2::bigint[], $3::text[]${types}) AS u(asset_id, started_key${listed}) OFFSET 0) k
    CROSS JOIN LATERAL (SELECT ctid AS tid FROM stays
      WHERE org_id = $1 AND asset_id = k.asset_id AND started_at = k.started_at LIMIT 1) p) v`;
};
export const EXTEND_STAYS = `UPDATE stays s SET last_seen_at = v.last_seen_at
  FROM ${byKey(['last_seen_at'], ', $4::timestamptz[]')}
  WHERE s.ctid = v.tid`;
export const DELETE_STAYS = `DELETE FROM stays s USING ${byKey([], '')}
  WHERE s.ctid = v.tid`;
export const MOVE_STAYS = `UPDATE stays s SET started_at = v.new_started_at, last_seen_at = v.last_seen_at
  FROM ${byKey(['new_started_at', 'last_seen_at'], ', $4::timestamptz[], $5::timestamptz[]')}
  WHERE s.ctid = v.tid`;

/** Moves the last sighting of stays (by key) later, in one statement. */
export async function extendStays(
  tx: Tx,
  orgId: number,
  changes: Array<StayKey & { lastSeenAt: number }>,
): Promise<void> {
  if (changes.length === 0) return;
  await tx.query(EXTEND_STAYS, [
    orgId,
    int8Array(changes.map((c) => c.assetId)),
    textArray(changes.map((c) => c.key)),
    timestampArray(changes.map((c) => c.lastSeenAt)),
  ]);
}

/** Inserts new stays of any number of assets in one statement. */
export async function appendStays(
  tx: Tx,
  orgId: number,
  stays: Array<{ assetId: number; locationId: number; startedAt: number; lastSeenAt: number }>,
): Promise<void> {
  if (stays.length === 0) return;
  await tx.query(
    `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at)
     SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[], $5::timestamptz[])`,
    [
      orgId,
      int8Array(stays.map((s) => s.assetId)),
      int8Array(stays.map((s) => s.locationId)),
      timestampArray(stays.map((s) => s.startedAt)),
      timestampArray(stays.map((s) => s.lastSeenAt)),
    ],
  );
}

/** Share-locks the live locations among `ids` (in id order) and returns them. */
export async function lockLocations(tx: Tx, orgId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await tx.query<{ id: number }>(
    `SELECT id FROM locations WHERE org_id = $1 AND id = ANY($2::bigint[]) AND deleted_at IS NULL
     ORDER BY id FOR SHARE`,
    [orgId, int8Array(ids)],
  );
  return new Set(rows.map((r) => r.id));
}

/** The statement of loadStayRanges: $1 the organization, $2-$4 asset ids and their reads' first and last instants, $5 the most stays per asset plus one. */
export const STAY_RANGES = `SELECT v.asset_id, b.from_at = '-infinity' AS open_before, b.to_at = 'infinity' AS open_after, ${stayColumns('s')}
  FROM unnest($2::bigint[], $3::timestamptz[], $4::timestamptz[]) AS v(asset_id, lo, hi)
  CROSS JOIN LATERAL (
    SELECT coalesce((SELECT started_at FROM stays WHERE org_id = $1 AND asset_id = v.asset_id AND started_at <= v.lo
            ORDER BY started_at DESC OFFSET 1 LIMIT 1), '-infinity') AS from_at,
           coalesce((SELECT started_at FROM stays WHERE org_id = $1 AND asset_id = v.asset_id AND started_at > v.hi
            ORDER BY started_at LIMIT 1), 'infinity') AS to_at
    OFFSET 0
  ) b
  CROSS JOIN LATERAL (
    SELECT id, location_id, started_at, last_seen_at FROM stays
    WHERE org_id = $1 AND asset_id = v.asset_id AND started_at >= b.from_at AND started_at <= b.to_at
    ORDER BY started_at LIMIT $5
  ) s`;

/**
 * For each asset, the stays its late reads between `from` and `to` can touch (StayRange):
 * from the second-latest stay starting at or before `from` through the first starting
 * after `to`, in one statement for every asset. An asset with more than `limit` stays in
 * that range is left out (its reads go read by read: the range is held in memory). The
 * range's ends are whole values of `b` (coalesced there, and OFFSET 0 keeps the planner
 * from folding the coalesce() back into the scan's condition): under row-level security
 * PostgreSQL does not trust a COALESCE as an index condition (it is not known leak-proof),
 * so the scan read and filtered each asset's whole history.
 */
export async function loadStayRanges(
  tx: Tx,
  orgId: number,
  ranges: Array<{ assetId: number; from: number; to: number }>,
  limit: number,
): Promise<Map<number, StayRange>> {
  const out = new Map<number, StayRange>();
  if (ranges.length === 0) return out;
  const { rows } = await tx.query<StayRow & { asset_id: number; open_before: boolean; open_after: boolean }>(
    STAY_RANGES,
    [
      orgId,
      int8Array(ranges.map((r) => r.assetId)),
      timestampArray(ranges.map((r) => r.from)),
      timestampArray(ranges.map((r) => r.to)),
      limit + 1,
    ],
  );
  const counts = new Map<number, number>();
  for (const r of rows) {
    counts.set(r.asset_id, (counts.get(r.asset_id) ?? 0) + 1);
    let range = out.get(r.asset_id);
    if (!range) {
      range = { stays: [], completeBefore: r.open_before, completeAfter: r.open_after };
      out.set(r.asset_id, range);
    }
    range.stays.push(toStay(r));
  }
  for (const [assetId, n] of counts) if (n > limit) out.delete(assetId);
  // An asset without any stay has an empty range, complete both ways.
  for (const r of ranges) {
    if (!counts.has(r.assetId)) out.set(r.assetId, { stays: [], completeBefore: true, completeAfter: true });
  }
  return out;
}

/** Applies in-memory placements (planLateReads) of any number of assets: deletes, updates, inserts. */
export async function writeStayChanges(
  tx: Tx,
  orgId: number,
  changes: {
    deletes: StayKey[];
    updates: Array<StayKey & { startedAt: number; lastSeenAt: number }>;
    inserts: Array<{ assetId: number; locationId: number; startedAt: number; lastSeenAt: number }>;
  },
): Promise<void> {
  // Deletes first, so the (asset, started_at) key never sees two rows at once.
  if (changes.deletes.length > 0) {
    await tx.query(DELETE_STAYS, [
      orgId,
      int8Array(changes.deletes.map((d) => d.assetId)),
      textArray(changes.deletes.map((d) => d.key)),
    ]);
  }
  if (changes.updates.length > 0) {
    await tx.query(MOVE_STAYS, [
      orgId,
      int8Array(changes.updates.map((u) => u.assetId)),
      textArray(changes.updates.map((u) => u.key)),
      timestampArray(changes.updates.map((u) => u.startedAt)),
      timestampArray(changes.updates.map((u) => u.lastSeenAt)),
    ]);
  }
  await appendStays(tx, orgId, changes.inserts);
}
