import type { Tx } from '../db/pool.js';
import { tagsForOwners } from '../tags/repository.js';
import { nextAutoKeys } from './auto-keys.js';
import { type Kind, sameTags, type TagCell } from './columns.js';
import {
  checkTags,
  conflictOn,
  inBatches,
  type ParsedRow,
  type RowFieldError,
  type RowResult,
  type TagHolder,
  tagDiff,
  tagHolders,
  validation,
  writeTags,
} from './rows.js';
import { millis, schemaErrors, windowErrors } from './validate.js';

/**
 * The steps an import of assets and one of locations share (assets-import.ts and
 * locations-import.ts add what only their kind has: metadata, parents): reading the
 * organization's current rows once, deciding a row by the API's create/update rules,
 * listing what an update changes, inserting new rows (automatic keys last) and writing
 * the tag changes.
 */

type OwnerKind = 'asset' | 'location';
const OWNER: Record<Kind, OwnerKind> = { assets: 'asset', locations: 'location' };

/** The columns both kinds have, as stored. */
export interface BaseCurrent {
  id: number;
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  valid_from: Date;
  valid_to: Date | null;
}

/** A row's values after the write, for the columns both kinds have. */
export interface BaseValues {
  name: string;
  description: string | null;
  is_active: boolean;
  valid_from: number;
  valid_to: number | null;
}

export type TagPair = { tag_type: string; value: string };
export type CurrentTags = Map<number, ({ id: number } & TagPair)[]>;

/** What a row's body may set, as the API's bodies name it. */
export interface RowBody {
  name?: string;
  description?: string | null;
  is_active?: boolean;
  valid_from?: string;
  valid_to?: string | null;
  tags?: TagPair[];
  [other: string]: unknown;
}

/** The organization's state an import decides against, read once. */
export interface PlanState<C extends BaseCurrent> {
  now: number;
  /** Live rows the file names, by key. */
  current: Map<string, C>;
  currentTags: CurrentTags;
  holders: Map<string, TagHolder[]>;
  /** Row of each key already seen in the file, and of each tag pair claimed. */
  keyRow: Map<string, number>;
  claimed: Map<string, number>;
}

/**
 * Reads the live rows the file names (`columns` of them), their tags, and who holds the
 * file's tag pairs. With `lock` the rows are locked, so nothing changes under the import.
 */
export async function readState<C extends BaseCurrent>(
  tx: Tx,
  kind: Kind,
  orgId: number,
  rows: ParsedRow[],
  columns: string,
  lock: boolean,
): Promise<PlanState<C>> {
  const now = (await tx.query<{ now: Date }>('SELECT now_ms() AS now')).rows[0]!.now.getTime();
  const keys = [
    ...new Set(rows.map((r) => r.body.external_key).filter((k): k is string => typeof k === 'string')),
  ];
  const { rows: found } = await tx.query<C>(
    `SELECT ${columns} FROM ${kind} WHERE org_id = $1 AND deleted_at IS NULL AND external_key = ANY($2::text[])
     ${lock ? 'FOR UPDATE' : ''}`,
    [orgId, keys],
  );
  const fileTags = rows.flatMap((r) => (Array.isArray(r.body.tags) ? (r.body.tags as TagCell[]) : []));
  // One after the other, not pipelined together: a query's read timeout runs from when it
  // is sent, and each of these reads the whole file's worth of rows.
  const currentTags = await tagsForOwners(
    tx,
    orgId,
    OWNER[kind],
    found.map((c) => c.id),
  );
  const holders = await tagHolders(tx, orgId, fileTags);
  return {
    now,
    current: new Map(found.map((c) => [c.external_key, c])),
    currentTags,
    holders,
    keyRow: new Map(),
    claimed: new Map(),
  };
}

/** The values of the columns both kinds have: the file's, else the stored ones, else the create defaults. */
function baseValues(b: RowBody, existing: BaseCurrent | undefined, now: number): BaseValues {
  if (existing) {
    return {
      name: b.name ?? existing.name,
      description: b.description === undefined ? existing.description : b.description,
      is_active: b.is_active ?? existing.is_active,
      valid_from: b.valid_from === undefined ? existing.valid_from.getTime() : millis(b.valid_from),
      valid_to:
        b.valid_to === undefined
          ? (existing.valid_to?.getTime() ?? null)
          : b.valid_to === null
            ? null
            : millis(b.valid_to),
    };
  }
  return {
    name: b.name as string,
    description: b.description ?? null,
    is_active: b.is_active ?? true,
    valid_from: b.valid_from === undefined ? now : millis(b.valid_from),
    valid_to: b.valid_to == null ? null : millis(b.valid_to),
  };
}

/** A row the API's rules accept (so far: a later step may still refuse it). */
export interface Decided<C extends BaseCurrent> {
  result: RowResult;
  key: string | null;
  existing: C | undefined;
  body: RowBody;
  values: BaseValues;
}

/**
 * Decides one row as the API's create or update would (src/assets/service.ts,
 * src/locations/service.ts, the tags service): the file's own errors, the body schema,
 * `rules` of the kind (given the row's values after the write), the validity window, a key
 * a second time in the file, and the tag rules. Pushes the row's result to `results`;
 * null when the row is refused.
 */
export function decideRow<C extends BaseCurrent>(
  kind: Kind,
  r: ParsedRow,
  state: PlanState<C>,
  results: RowResult[],
  rules: (body: RowBody, values: BaseValues) => RowFieldError[] = () => [],
): Decided<C> | null {
  const key = typeof r.body.external_key === 'string' ? r.body.external_key : null;
  const result: RowResult = { row: r.row, external_key: key ?? r.key ?? null, outcome: 'refused' };
  results.push(result);
  if (r.errors.length > 0) {
    result.errors = validation(r.errors);
    return null;
  }
  const existing = key === null ? undefined : state.current.get(key);
  const schema = schemaErrors(kind, existing ? 'update' : 'create', r.body);
  if (schema.length > 0) {
    result.errors = validation(schema);
    return null;
  }
  const body = r.body as RowBody;
  const values = baseValues(body, existing, state.now);
  const refused = [...rules(body, values), ...windowErrors(values.valid_from, values.valid_to)];
  if (refused.length > 0) {
    result.errors = validation(refused);
    return null;
  }
  if (key !== null) {
    const earlier = state.keyRow.get(key);
    if (earlier !== undefined) {
      result.errors = conflictOn(
        'external_key',
        `external_key ${key} is also on row ${earlier}; a key may appear once per file`,
      );
      return null;
    }
    state.keyRow.set(key, r.row);
  }
  if (body.tags !== undefined) {
    const own = { kind: OWNER[kind], id: existing?.id ?? null };
    const clash = checkTags(body.tags, own, state.holders, state.claimed, r.row);
    if (clash) {
      result.errors = clash;
      return null;
    }
  }
  result.outcome = existing ? 'update' : 'create';
  return { result, key, existing, body, values };
}

/**
 * The columns an update changes, in the file's column order: the shared ones, with the
 * kind's own (`extra`, already compared) after `is_active`, and the tags last.
 */
export function changedColumns(
  values: BaseValues,
  e: BaseCurrent,
  tags: TagPair[] | undefined,
  currentTags: CurrentTags,
  extra: string[] = [],
): string[] {
  const changed: string[] = [];
  if (values.name !== e.name) changed.push('name');
  if (values.description !== e.description) changed.push('description');
  if (values.is_active !== e.is_active) changed.push('is_active');
  changed.push(...extra);
  if (values.valid_from !== e.valid_from.getTime()) changed.push('valid_from');
  if (values.valid_to !== (e.valid_to?.getTime() ?? null)) changed.push('valid_to');
  if (tags !== undefined && !sameTags(tags, currentTags.get(e.id) ?? [])) changed.push('tags');
  return changed;
}

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** What the apply steps need of a write. */
export interface BaseWrite {
  result: RowResult;
  id: number | null;
  key: string | null;
  tags?: TagPair[];
}

/**
 * Inserts the new rows: those with keys of their own in `levels` order (each level in
 * batches), then the keyless ones with the lowest free automatic keys, which are only
 * known once the others are in.
 */
export async function insertCreates<W extends BaseWrite>(
  tx: Tx,
  kind: Kind,
  orgId: number,
  levels: W[][],
  keyless: W[],
  insert: (slice: W[]) => Promise<void>,
  advance: (n: number) => void,
): Promise<void> {
  for (const level of levels) await inBatches(level ?? [], insert, advance);
  const autoKeys = await nextAutoKeys(tx, kind, orgId, keyless.length);
  keyless.forEach((w, i) => {
    w.key = autoKeys[i]!;
    w.result.external_key = w.key;
  });
  await inBatches(keyless, insert, advance);
}

/** Detaches the tags the written rows no longer list and attaches the new ones. */
export async function writeTagChanges(
  tx: Tx,
  kind: Kind,
  orgId: number,
  writes: BaseWrite[],
  currentTags: CurrentTags,
): Promise<void> {
  const detach: number[] = [];
  const attach: { owner: number; tag_type: string; value: string }[] = [];
  for (const w of writes) {
    if (w.tags === undefined || w.id === null) continue;
    const diff = tagDiff(currentTags.get(w.id) ?? [], w.tags);
    if (diff.detach.length === 0 && diff.attach.length === 0) continue;
    detach.push(...diff.detach);
    for (const t of diff.attach) attach.push({ owner: w.id, tag_type: t.tag_type, value: t.value });
  }
  await writeTags(tx, orgId, OWNER[kind], detach, attach);
}
