import { forgetKept, readKept, writeKept } from '../components/kept-input.js';
import { TAG_TYPES } from '../components/tag-capture.js';
import {
  type AssetFields,
  BLANK,
  comparable,
  type Editable,
  fieldsOf,
  type MetaRow,
  rowId,
  type TagRow,
} from './asset-fields.js';

/**
 * The asset form's kept input (components/kept-input.ts): what was typed survives a session
 * that ends mid-form, or a reload, in this tab. A new asset's form keeps under `asset.new`,
 * an edit under `asset.edit.<id>`, so what was typed for asset 7 never fills asset 8's form.
 *
 * An edit keeps the version its draft started from (its `updated_at` with it). Restored,
 * the draft is settled against the asset as it is now by useDraft's rules: a field changed
 * elsewhere meanwhile is a conflict the form shows, and saving is refused until the new
 * version is loaded, so a kept draft never silently overwrites newer data.
 */
export interface KeptAsset {
  /** The version an edit's draft started from; BLANK for a new asset. */
  base: Editable;
  fields: AssetFields;
  /** A new asset's external key and tags (an edit has neither). */
  key: string;
  tags: TagRow[];
}

const keyOf = (assetId: number | undefined) =>
  assetId === undefined ? 'asset.new' : `asset.edit.${assetId}`;

/** A new asset's form starts with one empty RFID tag row. */
export const firstTags = (): TagRow[] => [{ uid: rowId(), type: 'rfid', value: '' }];

const isString = (v: unknown): v is string => typeof v === 'string';
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function editableOf(v: unknown): Editable | undefined {
  if (!isObject(v)) return undefined;
  const { name, description, is_active, valid_from, valid_to, metadata, updated_at } = v;
  if (
    !isString(name) ||
    !(description === null || isString(description)) ||
    typeof is_active !== 'boolean' ||
    !isString(valid_from) ||
    !(valid_to === null || isString(valid_to)) ||
    !isObject(metadata) ||
    !isString(updated_at)
  )
    return undefined;
  return { name, description, is_active, valid_from, valid_to, metadata, updated_at };
}

// Rows get fresh ids: the counter starts over on a reload, and a kept id could meet a new one.
function fieldsFrom(v: unknown): AssetFields | undefined {
  if (!isObject(v) || !Array.isArray(v.meta)) return undefined;
  const { name, description, active, validFrom, validTo } = v;
  if (
    !isString(name) ||
    !isString(description) ||
    typeof active !== 'boolean' ||
    !isString(validFrom) ||
    !isString(validTo)
  )
    return undefined;
  const meta: MetaRow[] = [];
  for (const row of v.meta) {
    if (!isObject(row) || !isString(row.key) || !isString(row.value)) return undefined;
    meta.push({ uid: rowId(), key: row.key, value: row.value });
  }
  return { name, description, active, validFrom, validTo, meta };
}

function tagsFrom(v: unknown): TagRow[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const tags: TagRow[] = [];
  for (const row of v) {
    const type = isObject(row) ? TAG_TYPES.find((t) => t.id === row.type)?.id : undefined;
    if (!isObject(row) || type === undefined || !isString(row.value)) return undefined;
    tags.push({ uid: rowId(), type, value: row.value });
  }
  return tags;
}

/**
 * What is kept for the form of `assetId` (a new asset's when undefined); undefined when
 * nothing is, or what is stored is not a draft this form can read (an older app's).
 */
export function restoreKeptAsset(assetId: number | undefined): KeptAsset | undefined {
  const v = readKept(keyOf(assetId));
  if (!isObject(v)) return undefined;
  const base = assetId === undefined ? BLANK : editableOf(v.base);
  const fields = fieldsFrom(v.fields);
  const tags = assetId === undefined ? tagsFrom(v.tags) : [];
  if (!base || !fields || !tags || !isString(v.key)) return undefined;
  return { base, fields, key: assetId === undefined ? v.key : '', tags };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const tagsSay = (tags: TagRow[]) => tags.map((t) => [t.type, t.value]);

/**
 * Keeps the form's input while it differs from what the form opened with, and forgets it
 * when it does not (nothing typed, or an edit's new version loaded over the draft): an edit
 * form only opened is not reopened with a notice later.
 */
export function keepAsset(assetId: number | undefined, kept: KeptAsset): void {
  const creating = assetId === undefined;
  const typed =
    !same(comparable(kept.fields), comparable(fieldsOf(kept.base))) ||
    (creating && (kept.key !== '' || !same(tagsSay(kept.tags), [['rfid', '']])));
  if (!typed) {
    forgetKept(keyOf(assetId));
    return;
  }
  const b = kept.base;
  writeKept(keyOf(assetId), {
    // Only what the draft is compared with: the page's asset carries its tags and place too.
    base: creating
      ? undefined
      : {
          name: b.name,
          description: b.description,
          is_active: b.is_active,
          valid_from: b.valid_from,
          valid_to: b.valid_to,
          metadata: b.metadata,
          updated_at: b.updated_at,
        },
    // Row ids are not kept: restored rows get fresh ones.
    fields: { ...kept.fields, meta: kept.fields.meta.map(({ key, value }) => ({ key, value })) },
    key: kept.key,
    tags: kept.tags.map(({ type, value }) => ({ type, value })),
  });
}

/** Forgets the form's kept input: saved, or cancelled. */
export const forgetKeptAsset = (assetId: number | undefined) => forgetKept(keyOf(assetId));
