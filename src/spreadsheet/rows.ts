import type { Tx } from '../db/pool.js';
import type { FieldError } from '../errors.js';
import { matchKey } from '../tracking/resolve.js';
import type { TagCell } from './columns.js';

/** What an import does with one row. */
export type Outcome = 'create' | 'update' | 'unchanged' | 'refused';

/** Why a row was refused: the API's error type and, per field, its `fields[].code`. */
export interface RowError {
  type: 'validation_error' | 'conflict' | 'bad_request';
  field: string;
  code: string;
  message: string;
}

export interface RowResult {
  /** The row's number in the spreadsheet (the header is row 1). */
  row: number;
  external_key: string | null;
  outcome: Outcome;
  /** For `update`: the columns whose values change. */
  changed?: string[];
  errors?: RowError[];
}

/** A data row as read: its body for the API's rules, or why it could not be read. */
export interface ParsedRow {
  row: number;
  body: Record<string, unknown>;
  /** The key of a row refused before it had a body (its cell count, bytes or quoting), if readable. */
  key?: string;
  errors: RowFieldError[];
}

/**
 * A field error of the API, or of the file itself (`invalid_encoding`, `invalid_csv`).
 * `type` is the API's error type when it is not `validation_error`: a metadata cell the
 * API's body decoder would refuse is `bad_request` there.
 */
export type RowFieldError = Pick<FieldError, 'field' | 'message'> & {
  code: string;
  type?: RowError['type'];
  params?: FieldError['params'];
};

export interface Progress {
  phase: 'reading' | 'checking' | 'writing' | 'done';
  done: number;
  total: number;
}

export type ProgressFn = (p: Progress) => void;

export const BATCH = 5000;

export function validation(errors: RowFieldError[]): RowError[] {
  return errors.map((e) => ({
    type: e.type ?? 'validation_error',
    field: e.field,
    code: e.code,
    message: e.message,
  }));
}

export function conflictOn(field: string, message: string): RowError[] {
  return [{ type: 'conflict', field, code: 'conflict', message }];
}

/**
 * Runs `fn` over `items` in slices of BATCH, one after the other, reporting how many are
 * done. Not all sent at once: each statement's read timeout (src/db/pool.ts) runs from
 * when it is sent, so a statement queued behind many others would time out.
 */
export async function inBatches<T>(
  items: T[],
  fn: (slice: T[]) => Promise<void>,
  advance: (n: number) => void,
): Promise<void> {
  for (let i = 0; i < items.length; i += BATCH) {
    const slice = items.slice(i, i + BATCH);
    await fn(slice);
    advance(slice.length);
  }
}

/** A tag as spelled: what a record's tags are diffed by, so an import can respell one. */
const pairKey = (t: { tag_type?: string; value: string }) => `${t.tag_type}\u0000${t.value}`;

/**
 * A tag as the one tag it is: for RFID and BLE its match key (migration 0064), so two
 * spellings of one EPC conflict as the API's attach does (src/tags/service.ts).
 */
const tagKey = (t: { tag_type?: string; value: string }) =>
  t.tag_type === 'rfid' || t.tag_type === 'ble'
    ? `${t.tag_type}\u0000${matchKey(t.tag_type, t.value)}`
    : pairKey(t);

export interface TagHolder {
  asset_id: number | null;
  location_id: number | null;
  /** The spelling it holds. */
  value: string;
}

/**
 * Who holds each tag that the file names (by tagKey, whatever its spelling there), before
 * the import: every holder. A tag has one holder, except the spellings of
 * one EPC that were attached to several records before migration 0064 and stay so.
 */
export async function tagHolders(tx: Tx, orgId: number, tags: TagCell[]): Promise<Map<string, TagHolder[]>> {
  const holders = new Map<string, TagHolder[]>();
  if (tags.length === 0) return holders;
  const { rows } = await tx.query<TagHolder & { id: string; tag_type: string }>(
    `SELECT t.id, t.tag_type, t.value, t.asset_id, t.location_id
     FROM tags t JOIN unnest($2::text[], $3::text[]) AS u(tag_type, value)
       ON t.match_key = tag_match_key(u.tag_type, u.value) AND t.tag_type = u.tag_type
     WHERE t.org_id = $1 AND t.detached_at IS NULL`,
    [orgId, tags.map((t) => t.tag_type ?? ''), tags.map((t) => t.value)],
  );
  // A tag the file names twice (two rows, two spellings) comes back once per naming.
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    const holder = { asset_id: r.asset_id, location_id: r.location_id, value: r.value };
    const key = tagKey(r);
    const list = holders.get(key);
    if (list) list.push(holder);
    else holders.set(key, [holder]);
  }
  return holders;
}

/**
 * The tag rules of the API for one row's tags (src/tags/service.ts attachTags): a pair
 * twice in the row, a pair attached to another asset or location, and, in a file, a
 * pair that an earlier row already takes, are each a `conflict`. A pair held by the
 * row's own record is kept: as spelled there even when other records hold other
 * spellings of it from before migration 0064 (an export of such records imports back
 * unchanged), respelled only when no other record holds it. Returns the conflict, or
 * null after claiming the pairs.
 */
export function checkTags(
  tags: { tag_type: string; value: string }[],
  own: { kind: 'asset' | 'location'; id: number | null },
  holders: Map<string, TagHolder[]>,
  claimed: Map<string, number>,
  row: number,
): RowError[] | null {
  // Each pair's key is made once: a fresh string is hashed again on every Map lookup.
  const keys = tags.map(tagKey);
  const seen = new Map<string, string>();
  for (const [i, t] of tags.entries()) {
    const earlier = seen.get(keys[i]!);
    if (earlier === t.value)
      return conflictOn('tags', `tag ${t.tag_type}:${t.value} appears more than once in the row`);
    if (earlier !== undefined)
      return conflictOn(
        'tags',
        `tag ${t.tag_type}:${t.value} is the same tag as ${t.tag_type}:${earlier} in the row`,
      );
    seen.set(keys[i]!, t.value);
  }
  const isOwn = (h: TagHolder) =>
    own.id !== null && (own.kind === 'asset' ? h.asset_id : h.location_id) === own.id;
  const kept = new Set<string>();
  for (const [i, t] of tags.entries()) {
    const k = keys[i]!;
    const held = holders.get(k) ?? [];
    if (held.some((h) => isOwn(h) && h.value === t.value)) {
      kept.add(k);
      continue;
    }
    const holder = held.find((h) => !isOwn(h));
    if (holder) {
      const where = holder.asset_id !== null ? `asset ${holder.asset_id}` : `location ${holder.location_id}`;
      return conflictOn('tags', `tag ${t.tag_type}:${t.value} is already attached to ${where}`);
    }
    const other = claimed.get(k);
    if (other !== undefined) {
      return conflictOn('tags', `tag ${t.tag_type}:${t.value} is also on row ${other} of the file`);
    }
  }
  for (const k of keys) if (!kept.has(k)) claimed.set(k, row);
  return null;
}

/** Rows per outcome. */
export function countOutcomes(results: RowResult[]) {
  const counts = { created: 0, changed: 0, unchanged: 0, refused: 0 };
  for (const r of results) {
    if (r.outcome === 'create') counts.created++;
    else if (r.outcome === 'update') counts.changed++;
    else if (r.outcome === 'unchanged') counts.unchanged++;
    else counts.refused++;
  }
  return counts;
}

/** Tags to detach and attach for one record: ids no longer listed, pairs not yet held. */
export function tagDiff(
  current: { id: number; tag_type: string; value: string }[],
  wanted: { tag_type: string; value: string }[],
): { detach: number[]; attach: { tag_type: string; value: string }[] } {
  const want = new Set(wanted.map(pairKey));
  const have = new Set(current.map(pairKey));
  return {
    detach: current.filter((t) => !want.has(pairKey(t))).map((t) => t.id),
    attach: wanted.filter((t) => !have.has(pairKey(t))),
  };
}

/**
 * The owner's searchable tag values after the write, as refreshTagValues
 * (src/tags/repository.ts) computes them: live values in tag id order, chr(1)-separated.
 * Kept tags keep their ids; attached ones get new, larger ids in file order. Null when the
 * file does not set the tags (the stored value stays).
 */
export function tagValuesAfter(
  current: { id: number; tag_type: string; value: string }[],
  wanted: { tag_type: string; value: string }[] | undefined,
): string | null {
  if (wanted === undefined) return null;
  const { detach, attach } = tagDiff(current, wanted);
  const gone = new Set(detach);
  return [...current.filter((t) => !gone.has(t.id)), ...attach].map((t) => t.value).join('\u0001');
}

/** Detaches and attaches tags of many owners (their tag_values are written with the rows). */
export async function writeTags(
  tx: Tx,
  orgId: number,
  kind: 'asset' | 'location',
  detach: number[],
  attach: { owner: number; tag_type: string; value: string }[],
): Promise<void> {
  const column = kind === 'asset' ? 'asset_id' : 'location_id';
  const none = () => undefined;
  await inBatches(
    detach,
    async (slice) => {
      await tx.query(
        'UPDATE tags SET detached_at = now_ms() WHERE org_id = $1 AND id = ANY($2::bigint[]) AND detached_at IS NULL',
        [orgId, slice],
      );
    },
    none,
  );
  await inBatches(
    attach,
    async (slice) => {
      await tx.query(
        `INSERT INTO tags (org_id, ${column}, tag_type, value)
       SELECT $1, u.owner, u.tag_type, u.value
       FROM unnest($2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY AS u(owner, tag_type, value, n)
       ORDER BY u.n`,
        [orgId, slice.map((t) => t.owner), slice.map((t) => t.tag_type), slice.map((t) => t.value)],
      );
    },
    none,
  );
}
