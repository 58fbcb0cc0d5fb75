import type { Asset, TagType } from '../api.js';
import { roundedNumber } from '../json-numbers.js';

/**
 * What the asset form edits, as its inputs hold it, and the conversions between that and
 * the API's asset (local times, metadata rows).
 */

/** Rows carry an id of their own, so removing one keeps the others' inputs in place. */
let rowIds = 0;
export const rowId = () => ++rowIds;

export interface MetaRow {
  uid: number;
  key: string;
  value: string;
}

export interface TagRow {
  uid: number;
  type: TagType;
  value: string;
}

/** `2026-01-02T03:04:05` in the browser's zone, what a datetime-local input holds. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A datetime-local value as an instant; undefined when it is not one. */
export function fromLocalInput(text: string): string | undefined {
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

const metaRowsOf = (metadata: Record<string, unknown>): MetaRow[] =>
  Object.entries(metadata).map(([key, value]) => ({ uid: rowId(), key, value: JSON.stringify(value) }));

/** Rows into the metadata object, or the problem of each row that cannot be read. */
export function metadataOf(rows: MetaRow[]): {
  metadata: Record<string, unknown>;
  problems: Map<number, string>;
} {
  const metadata: Record<string, unknown> = {};
  const problems = new Map<number, string>();
  for (const [i, row] of rows.entries()) {
    if (row.key === '' && row.value.trim() === '') continue;
    if (row.key === '') problems.set(i, 'Give the value a key.');
    else if (Object.hasOwn(metadata, row.key)) problems.set(i, `The key “${row.key}” is used twice.`);
    else {
      try {
        metadata[row.key] = JSON.parse(row.value);
        const rounded = roundedNumber(row.value);
        if (rounded !== undefined)
          problems.set(
            i,
            `The number ${rounded} has more digits than can be stored exactly: write it in quotes.`,
          );
      } catch {
        problems.set(
          i,
          'Not a JSON value: write text in quotes ("red"), numbers, true, false, null, [..] or {..}.',
        );
      }
    }
  }
  return { metadata, problems };
}

/** What the form edits of an asset, as its inputs hold it (the draft of useDraft). */
export interface AssetFields {
  name: string;
  description: string;
  active: boolean;
  validFrom: string;
  validTo: string;
  meta: MetaRow[];
}

export type Editable = Pick<
  Asset,
  'name' | 'description' | 'is_active' | 'valid_from' | 'valid_to' | 'metadata'
> & {
  updated_at: string;
};

/** A new asset's form starts from this. */
export const BLANK: Editable = {
  name: '',
  description: null,
  is_active: true,
  valid_from: '',
  valid_to: null,
  metadata: {},
  updated_at: '',
};

export const fieldsOf = (a: Editable): AssetFields => ({
  name: a.name,
  description: a.description ?? '',
  active: a.is_active,
  validFrom: toLocalInput(a.valid_from),
  validTo: toLocalInput(a.valid_to),
  meta: metaRowsOf(a.metadata),
});

/** Rows compare by what they say, not by their ids. */
export const comparable = (d: AssetFields) => ({ ...d, meta: d.meta.map((r) => [r.key, r.value]) });

export const FIELD_LABELS: Record<keyof AssetFields, string> = {
  name: 'name',
  description: 'description',
  active: 'active',
  validFrom: 'valid from',
  validTo: 'valid until',
  meta: 'metadata',
};
