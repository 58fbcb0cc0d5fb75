import type { Tx } from '../db/pool.js';
import { lockTree } from '../locations/repository.js';
import { lockKeyspace } from '../master-data/auto-key.js';
import {
  type BaseCurrent,
  type BaseValues,
  type BaseWrite,
  type CurrentTags,
  changedColumns,
  decideRow,
  insertCreates,
  iso,
  readState,
  writeTagChanges,
} from './pipeline.js';
import {
  conflictOn,
  inBatches,
  type ParsedRow,
  type RowError,
  type RowResult,
  tagValuesAfter,
} from './rows.js';

interface Current extends BaseCurrent {
  parent_id: number | null;
}

interface Write extends BaseWrite {
  values: BaseValues;
  /** undefined: the parent is not touched; null: a root; else the parent's key. */
  parent: string | null | undefined;
  existing?: Current;
}

export interface LocationPlan {
  results: RowResult[];
  writes: Write[];
  currentTags: CurrentTags;
  /** Live locations before the import: key → id. */
  ids: Map<string, number>;
}

const COLUMNS = 'id, external_key, name, description, is_active, parent_id, valid_from, valid_to';

const refuse = (w: Write, errors: RowError[]) => {
  w.result.outcome = 'refused';
  w.result.errors = errors;
  delete w.result.changed;
};

/**
 * Parent references resolve to a live location or to another accepted row of the file,
 * in any row order; a refused row takes its children with it (`fk_not_found`, as the
 * API answers for a parent that does not exist). Then no move may close a cycle
 * (`conflict`, naming it, as src/locations/parent.ts assertNoCycle). Refusing rows can
 * orphan others, so both run until nothing changes.
 */
function settleParents(accepted: Write[], ids: Map<string, number>, dbParent: Map<string, string | null>) {
  for (;;) {
    let refused = false;
    const byKey = new Map<string, Write>();
    for (const w of accepted) if (w.key !== null && w.result.outcome !== 'refused') byKey.set(w.key, w);
    for (const w of accepted) {
      if (w.result.outcome === 'refused' || typeof w.parent !== 'string') continue;
      if (ids.has(w.parent) || byKey.has(w.parent)) continue;
      refuse(w, [
        {
          type: 'validation_error',
          field: 'parent_external_key',
          code: 'fk_not_found',
          message: `parent_external_key ${JSON.stringify(w.parent)} does not name an existing location`,
        },
      ]);
      refused = true;
    }
    if (refused) continue;

    const parentOf = (key: string): string | null => {
      const w = byKey.get(key);
      if (w && w.parent !== undefined) return w.parent;
      return dbParent.get(key) ?? null;
    };
    const state = new Map<string, 'walking' | 'done'>();
    for (const start of accepted) {
      if (start.result.outcome === 'refused' || start.key === null || typeof start.parent !== 'string')
        continue;
      const path: string[] = [];
      let at: string | null = start.key;
      while (at !== null && state.get(at) !== 'done') {
        if (state.get(at) === 'walking') {
          const cycle = path.slice(path.indexOf(at));
          for (const key of cycle) {
            const w = byKey.get(key);
            if (!w || w.parent === undefined || w.result.outcome === 'refused') continue;
            // From the new parent up to the moved location, as the API names a cycle.
            const from = cycle.indexOf(key);
            const up = [...cycle.slice(from + 1), ...cycle.slice(0, from + 1)];
            const chain = (up.length === 1 ? [key, key] : up).join(' → ');
            refuse(
              w,
              conflictOn(
                'parent_external_key',
                `moving ${key} under ${w.parent} would create a cycle: ${chain}`,
              ),
            );
          }
          refused = true;
          break;
        }
        state.set(at, 'walking');
        path.push(at);
        at = parentOf(at);
      }
      for (const key of path) state.set(key, 'done');
    }
    if (!refused) return;
  }
}

/** As planAssets, for locations (src/locations/service.ts create and update). */
export async function planLocations(
  tx: Tx,
  orgId: number,
  rows: ParsedRow[],
  lock: boolean,
): Promise<LocationPlan> {
  if (lock) {
    await lockKeyspace(tx, 'locations', orgId, { heldThroughFlush: true });
    await lockTree(tx, orgId, { heldThroughFlush: true });
  }
  // The whole tree's keys and parents: a parent may be any live location, and moves are
  // checked for cycles against it.
  const { rows: live } = await tx.query<{ id: number; external_key: string; parent_id: number | null }>(
    'SELECT id, external_key, parent_id FROM locations WHERE org_id = $1 AND deleted_at IS NULL',
    [orgId],
  );
  const ids = new Map(live.map((l) => [l.external_key, l.id]));
  const keyOf = new Map(live.map((l) => [l.id, l.external_key]));
  const dbParent = new Map(
    live.map((l) => [l.external_key, l.parent_id === null ? null : (keyOf.get(l.parent_id) ?? null)]),
  );
  const state = await readState<Current>(tx, 'locations', orgId, rows, COLUMNS, lock);
  const results: RowResult[] = [];
  const accepted: Write[] = [];
  for (const r of rows) {
    const row = decideRow('locations', r, state, results);
    if (!row) continue;
    accepted.push({
      result: row.result,
      id: row.existing?.id ?? null,
      key: row.key,
      values: row.values,
      parent: row.body.parent_external_key as string | null | undefined,
      tags: row.body.tags,
      existing: row.existing,
    });
  }
  settleParents(accepted, ids, dbParent);

  const writes: Write[] = [];
  for (const w of accepted) {
    if (w.result.outcome === 'refused') continue;
    const e = w.existing;
    if (!e) {
      writes.push(w);
      continue;
    }
    const moved = w.parent !== undefined && w.parent !== dbParent.get(e.external_key);
    const changed = changedColumns(
      w.values,
      e,
      w.tags,
      state.currentTags,
      moved ? ['parent_external_key'] : [],
    );
    if (changed.length === 0) w.result.outcome = 'unchanged';
    else {
      w.result.changed = changed;
      writes.push(w);
    }
  }
  return { results, writes, currentTags: state.currentTags, ids };
}

/** Writes an accepted plan set-based, in batches; `advance` counts written rows. */
export async function applyLocations(
  tx: Tx,
  orgId: number,
  plan: LocationPlan,
  advance: (n: number) => void,
) {
  const creates = plan.writes.filter((w) => w.result.outcome === 'create');
  const keyless = creates.filter((w) => w.key === null);
  const ids = new Map(plan.ids);
  const insert = async (slice: Write[]) => {
    const { rows } = await tx.query<{ id: number; external_key: string }>(
      `INSERT INTO locations
         (org_id, external_key, name, description, is_active, valid_from, valid_to, tag_values, parent_id)
       SELECT $1, u.k, u.n, u.d, u.a, u.vf::timestamptz, u.vt::timestamptz, u.tv, u.p
       FROM unnest($2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::text[], $8::text[], $9::bigint[])
         AS u(k, n, d, a, vf, vt, tv, p)
       RETURNING id, external_key`,
      [
        orgId,
        slice.map((w) => w.key),
        slice.map((w) => w.values.name),
        slice.map((w) => w.values.description),
        slice.map((w) => w.values.is_active),
        slice.map((w) => iso(w.values.valid_from)),
        slice.map((w) => iso(w.values.valid_to)),
        slice.map((w) => tagValuesAfter([], w.tags) ?? ''),
        slice.map((w) => (typeof w.parent === 'string' ? ids.get(w.parent) : null)),
      ],
    );
    for (const row of rows) ids.set(row.external_key, row.id);
    for (const w of slice) w.id = ids.get(w.key as string) ?? null;
  };
  // Parents before children, so every new row is inserted with its parent's id: by depth
  // among the new rows (cycles were refused, so every walk up ends).
  const keyed = creates.filter((w) => w.key !== null);
  const byKey = new Map(keyed.map((w) => [w.key as string, w]));
  const depth = new Map<Write, number>();
  const newParent = (w: Write) =>
    typeof w.parent === 'string' && !plan.ids.has(w.parent) ? byKey.get(w.parent) : undefined;
  for (const w of keyed) {
    const chain: Write[] = [];
    let at: Write | undefined = w;
    while (at && !depth.has(at)) {
      chain.push(at);
      at = newParent(at);
    }
    let d = at ? depth.get(at)! + 1 : 0;
    for (let i = chain.length - 1; i >= 0; i--) depth.set(chain[i]!, d++);
  }
  const levels: Write[][] = [];
  for (const w of keyed) {
    const d = depth.get(w)!;
    levels[d] ??= [];
    levels[d].push(w);
  }
  await insertCreates(tx, 'locations', orgId, levels, keyless, insert, advance);

  const updates = plan.writes.filter((w) => w.result.outcome === 'update');
  await inBatches(
    updates,
    async (slice) => {
      await tx.query(
        `UPDATE locations l SET name = u.n, description = u.d, is_active = u.a,
           parent_id = CASE WHEN u.move THEN u.parent ELSE l.parent_id END,
           valid_from = u.vf::timestamptz, valid_to = u.vt::timestamptz,
           tag_values = coalesce(u.tv, l.tag_values),
           updated_at = greatest(now_ms(), l.updated_at + interval '1 millisecond')
         FROM unnest($2::bigint[], $3::text[], $4::text[], $5::boolean[], $6::boolean[], $7::bigint[], $8::text[], $9::text[], $10::text[])
           AS u(id, n, d, a, move, parent, vf, vt, tv)
         WHERE l.org_id = $1 AND l.id = u.id`,
        [
          orgId,
          slice.map((w) => w.id),
          slice.map((w) => w.values.name),
          slice.map((w) => w.values.description),
          slice.map((w) => w.values.is_active),
          slice.map((w) => w.parent !== undefined),
          slice.map((w) => (typeof w.parent === 'string' ? ids.get(w.parent) : null)),
          slice.map((w) => iso(w.values.valid_from)),
          slice.map((w) => iso(w.values.valid_to)),
          slice.map((w) => tagValuesAfter(plan.currentTags.get(w.id as number) ?? [], w.tags)),
        ],
      );
    },
    advance,
  );

  await writeTagChanges(tx, 'locations', orgId, plan.writes, plan.currentTags);
}
