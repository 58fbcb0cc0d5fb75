import { checkMetadata } from '../assets/rules.js';
import type { Tx } from '../db/pool.js';
import { isAutoKeyForm, lockKeyspace } from '../master-data/auto-key.js';
import { sameJson } from './columns.js';
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
import { inBatches, type ParsedRow, type RowResult, tagValuesAfter } from './rows.js';
import { fieldsOf } from './validate.js';

interface Current extends BaseCurrent {
  metadata: Record<string, unknown>;
}

interface Values extends BaseValues {
  metadata: Record<string, unknown>;
}

/** One accepted row's write: the full new values, and its tags when the file sets them. */
interface Write extends BaseWrite {
  values: Values;
}

export interface AssetPlan {
  results: RowResult[];
  writes: Write[];
  currentTags: CurrentTags;
}

const COLUMNS = 'id, external_key, name, description, is_active, metadata, valid_from, valid_to';

/** The API's metadata rules (src/assets/rules.ts), for a row that sets metadata. */
function metadataErrors(metadata: unknown) {
  if (metadata === undefined) return [];
  try {
    checkMetadata(metadata as Record<string, unknown>);
    return [];
  } catch (err) {
    return fieldsOf(err);
  }
}

/**
 * Whether the file can take a slot of the automatic keys (`ASSET-NNNN`): a row without a
 * key (given the lowest free slot) or with a key of that form. Only then does the import
 * need the keyspace lock, as the API's creates take it only then (src/assets/service.ts):
 * any other key is the unique index's business. Held for the whole import, the lock made
 * every keyless create of the organization wait for it, past the 25 s statement timeout
 * (a 503) during a long one.
 */
function takesAutoSlots(rows: ParsedRow[]): boolean {
  return rows.some((r) => {
    if (r.errors.length > 0) return false;
    const key = r.body.external_key;
    return key === undefined || (typeof key === 'string' && isAutoKeyForm('assets', key));
  });
}

/**
 * Decides per row what the API would do (src/assets/service.ts create and update, and
 * the tags service), reading the organization's current state once. With `lock` the
 * matched rows are locked, so nothing changes under them before the import commits, and
 * the keyspace when the file can take automatic keys (takesAutoSlots).
 */
export async function planAssets(
  tx: Tx,
  orgId: number,
  rows: ParsedRow[],
  lock: boolean,
): Promise<AssetPlan> {
  if (lock && takesAutoSlots(rows)) await lockKeyspace(tx, 'assets', orgId, { heldThroughFlush: true });
  const state = await readState<Current>(tx, 'assets', orgId, rows, COLUMNS, lock);
  const results: RowResult[] = [];
  const writes: Write[] = [];
  for (const r of rows) {
    const row = decideRow('assets', r, state, results, (b) => metadataErrors(b.metadata));
    if (!row) continue;
    const { result, key, existing, body } = row;
    const metadata = (body.metadata as Record<string, unknown> | undefined) ?? existing?.metadata ?? {};
    const values: Values = { ...row.values, metadata };
    if (!existing) {
      writes.push({ result, id: null, key, values, tags: body.tags });
      continue;
    }
    const extra = sameJson(metadata, existing.metadata) ? [] : ['metadata'];
    const changed = changedColumns(values, existing, body.tags, state.currentTags, extra);
    if (changed.length === 0) result.outcome = 'unchanged';
    else {
      result.changed = changed;
      writes.push({ result, id: existing.id, key, values, tags: body.tags });
    }
  }
  return { results, writes, currentTags: state.currentTags };
}

function columnsOf(writes: Write[]) {
  return [
    writes.map((w) => w.values.name),
    writes.map((w) => w.values.description),
    writes.map((w) => w.values.is_active),
    writes.map((w) => JSON.stringify(w.values.metadata)),
    writes.map((w) => iso(w.values.valid_from)),
    writes.map((w) => iso(w.values.valid_to)),
  ];
}

/** Writes an accepted plan set-based, in batches; `advance` counts written rows. */
export async function applyAssets(tx: Tx, orgId: number, plan: AssetPlan, advance: (n: number) => void) {
  const creates = plan.writes.filter((w) => w.result.outcome === 'create');
  const insert = async (slice: Write[]) => {
    const { rows } = await tx.query<{ id: number; external_key: string }>(
      `INSERT INTO assets (org_id, external_key, name, description, is_active, metadata, valid_from, valid_to, tag_values)
       SELECT $1, u.k, u.n, u.d, u.a, u.m::jsonb, u.vf::timestamptz, u.vt::timestamptz, u.tv
       FROM unnest($2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::text[], $8::text[], $9::text[])
         AS u(k, n, d, a, m, vf, vt, tv)
       RETURNING id, external_key`,
      [
        orgId,
        slice.map((w) => w.key),
        ...columnsOf(slice),
        slice.map((w) => tagValuesAfter([], w.tags) ?? ''),
      ],
    );
    const ids = new Map(rows.map((row) => [row.external_key, row.id]));
    for (const w of slice) w.id = ids.get(w.key as string) ?? null;
  };
  const keyed = creates.filter((w) => w.key !== null);
  const keyless = creates.filter((w) => w.key === null);
  await insertCreates(tx, 'assets', orgId, [keyed], keyless, insert, advance);

  const updates = plan.writes.filter((w) => w.result.outcome === 'update');
  await inBatches(
    updates,
    async (slice) => {
      await tx.query(
        `UPDATE assets a SET name = u.n, description = u.d, is_active = u.a, metadata = u.m::jsonb,
           valid_from = u.vf::timestamptz, valid_to = u.vt::timestamptz,
           tag_values = coalesce(u.tv, a.tag_values),
           updated_at = greatest(now_ms(), a.updated_at + interval '1 millisecond')
         FROM unnest($2::bigint[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::text[], $8::text[], $9::text[])
           AS u(id, n, d, a, m, vf, vt, tv)
         WHERE a.org_id = $1 AND a.id = u.id`,
        [
          orgId,
          slice.map((w) => w.id),
          ...columnsOf(slice),
          slice.map((w) => tagValuesAfter(plan.currentTags.get(w.id as number) ?? [], w.tags)),
        ],
      );
    },
    advance,
  );
  await writeTagChanges(tx, 'assets', orgId, plan.writes, plan.currentTags);
}
