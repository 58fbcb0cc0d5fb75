import { checkMetadata } from '../assets/rules.js';
import type { Tx } from '../db/pool.js';
import { lockKeyspace } from '../master-data/auto-key.js';
import { tagsForOwners } from '../tags/repository.js';
import { nextAutoKeys } from './auto-keys.js';
import { sameJson, sameTags, type TagCell } from './columns.js';
import {
  checkTags,
  conflictOn,
  inBatches,
  type ParsedRow,
  type RowError,
  type RowResult,
  tagDiff,
  tagHolders,
  tagValuesAfter,
  validation,
  writeTags,
} from './rows.js';
import { fieldsOf, millis, schemaErrors, windowErrors } from './validate.js';

interface Current {
  id: number;
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  metadata: Record<string, unknown>;
  valid_from: Date;
  valid_to: Date | null;
}

interface Values {
  name: string;
  description: string | null;
  is_active: boolean;
  metadata: Record<string, unknown>;
  valid_from: number;
  valid_to: number | null;
}

/** One accepted row's write: the full new values, and its tags when the file sets them. */
interface Write {
  result: RowResult;
  id: number | null;
  key: string | null;
  values: Values;
  tags?: { tag_type: string; value: string }[];
}

export interface AssetPlan {
  results: RowResult[];
  writes: Write[];
  currentTags: Map<number, { id: number; tag_type: string; value: string }[]>;
}

/**
 * Decides per row what the API would do (src/assets/service.ts create and update, and
 * the tags service), reading the organization's current state once. With `lock` the
 * keyspace and the matched rows are locked, so nothing changes under the import before
 * it commits.
 */
export async function planAssets(
  tx: Tx,
  orgId: number,
  rows: ParsedRow[],
  lock: boolean,
): Promise<AssetPlan> {
  if (lock) await lockKeyspace(tx, 'assets', orgId);
  const now = (await tx.query<{ now: Date }>('SELECT now_ms() AS now')).rows[0]!.now.getTime();
  const keys = [
    ...new Set(rows.map((r) => r.body.external_key).filter((k): k is string => typeof k === 'string')),
  ];
  const { rows: found } = await tx.query<Current>(
    `SELECT id, external_key, name, description, is_active, metadata, valid_from, valid_to
     FROM assets WHERE org_id = $1 AND deleted_at IS NULL AND external_key = ANY($2::text[])
     ${lock ? 'FOR UPDATE' : ''}`,
    [orgId, keys],
  );
  const current = new Map(found.map((c) => [c.external_key, c]));
  const currentTags = await tagsForOwners(
    tx,
    orgId,
    'asset',
    found.map((c) => c.id),
  );
  const fileTags = rows.flatMap((r) => (Array.isArray(r.body.tags) ? (r.body.tags as TagCell[]) : []));
  const holders = await tagHolders(tx, orgId, fileTags);

  const results: RowResult[] = [];
  const writes: Write[] = [];
  const keyRow = new Map<string, number>();
  const claimed = new Map<string, number>();
  for (const r of rows) {
    const key = typeof r.body.external_key === 'string' ? r.body.external_key : null;
    const result: RowResult = { row: r.row, external_key: key, outcome: 'refused' };
    results.push(result);
    const refuse = (errors: RowError[]) => {
      result.errors = errors;
    };
    if (r.errors.length > 0) {
      refuse(validation(r.errors));
      continue;
    }
    const existing = key === null ? undefined : current.get(key);
    const schema = schemaErrors('assets', existing ? 'update' : 'create', r.body);
    if (schema.length > 0) {
      refuse(validation(schema));
      continue;
    }
    const b = r.body as {
      name?: string;
      description?: string | null;
      is_active?: boolean;
      metadata?: Record<string, unknown>;
      valid_from?: string;
      valid_to?: string | null;
      tags?: { tag_type: string; value: string }[];
    };
    const values: Values = existing
      ? {
          name: b.name ?? existing.name,
          description: b.description === undefined ? existing.description : b.description,
          is_active: b.is_active ?? existing.is_active,
          metadata: b.metadata ?? existing.metadata,
          valid_from: b.valid_from === undefined ? existing.valid_from.getTime() : millis(b.valid_from),
          valid_to:
            b.valid_to === undefined
              ? (existing.valid_to?.getTime() ?? null)
              : b.valid_to === null
                ? null
                : millis(b.valid_to),
        }
      : {
          name: b.name as string,
          description: b.description ?? null,
          is_active: b.is_active ?? true,
          metadata: b.metadata ?? {},
          valid_from: b.valid_from === undefined ? now : millis(b.valid_from),
          valid_to: b.valid_to == null ? null : millis(b.valid_to),
        };
    const rules = [];
    if (b.metadata !== undefined) {
      try {
        checkMetadata(b.metadata);
      } catch (err) {
        rules.push(...fieldsOf(err));
      }
    }
    rules.push(...windowErrors(values.valid_from, values.valid_to));
    if (rules.length > 0) {
      refuse(validation(rules));
      continue;
    }
    if (key !== null) {
      const earlier = keyRow.get(key);
      if (earlier !== undefined) {
        refuse(
          conflictOn(
            'external_key',
            `external_key ${key} is also on row ${earlier}; a key may appear once per file`,
          ),
        );
        continue;
      }
      keyRow.set(key, r.row);
    }
    if (b.tags !== undefined) {
      const clash = checkTags(b.tags, { kind: 'asset', id: existing?.id ?? null }, holders, claimed, r.row);
      if (clash) {
        refuse(clash);
        continue;
      }
    }
    if (!existing) {
      result.outcome = 'create';
      writes.push({ result, id: null, key, values, tags: b.tags });
      continue;
    }
    const changed: string[] = [];
    if (values.name !== existing.name) changed.push('name');
    if (values.description !== existing.description) changed.push('description');
    if (values.is_active !== existing.is_active) changed.push('is_active');
    if (!sameJson(values.metadata, existing.metadata)) changed.push('metadata');
    if (values.valid_from !== existing.valid_from.getTime()) changed.push('valid_from');
    if (values.valid_to !== (existing.valid_to?.getTime() ?? null)) changed.push('valid_to');
    if (b.tags !== undefined && !sameTags(b.tags, currentTags.get(existing.id) ?? [])) changed.push('tags');
    result.outcome = changed.length > 0 ? 'update' : 'unchanged';
    if (changed.length > 0) {
      result.changed = changed;
      writes.push({ result, id: existing.id, key, values, tags: b.tags });
    }
  }
  return { results, writes, currentTags };
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

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
  const keyless = creates.filter((w) => w.key === null);
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
  await inBatches(
    creates.filter((w) => w.key !== null),
    insert,
    advance,
  );
  const autoKeys = await nextAutoKeys(tx, 'assets', orgId, keyless.length);
  keyless.forEach((w, i) => {
    w.key = autoKeys[i]!;
    w.result.external_key = w.key;
  });
  await inBatches(keyless, insert, advance);

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

  const detach: number[] = [];
  const attach: { owner: number; tag_type: string; value: string }[] = [];
  for (const w of plan.writes) {
    if (w.tags === undefined || w.id === null) continue;
    const diff = tagDiff(plan.currentTags.get(w.id) ?? [], w.tags);
    if (diff.detach.length === 0 && diff.attach.length === 0) continue;
    detach.push(...diff.detach);
    for (const t of diff.attach) attach.push({ owner: w.id, tag_type: t.tag_type, value: t.value });
  }
  await writeTags(tx, orgId, 'asset', detach, attach);
}
