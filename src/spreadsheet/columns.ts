import type { FieldError } from '../errors.js';
import {
  allStringsWellFormed,
  hasIntegerBeyondInt64,
  INTEGER_BEYOND_INT64,
  noteInexactNumbers,
  UNPAIRED_SURROGATE,
} from '../json-checks.js';
import { unescapeFormula } from './csv.js';
import type { RowFieldError } from './rows.js';

/**
 * The spreadsheet form of assets and locations (docs/import-export.md): one column per
 * field of the API's create body, named as the API names it, one row per record.
 *
 * A column left out of the header is not touched on existing rows. In a column that is
 * there, an empty cell means: null for the nullable fields (description, valid_to,
 * parent_external_key: a root location), no tags for `tags`, and "not given" for the
 * others (the create default, or unchanged on an existing row; for external_key, an
 * automatically assigned key).
 */

export type Kind = 'assets' | 'locations';

export const COLUMNS: Record<Kind, readonly string[]> = {
  assets: ['external_key', 'name', 'description', 'is_active', 'metadata', 'tags', 'valid_from', 'valid_to'],
  locations: [
    'external_key',
    'name',
    'description',
    'is_active',
    'parent_external_key',
    'tags',
    'valid_from',
    'valid_to',
  ],
};

/** Fields of the read shape that an import cannot set, and what the API would answer. */
const READ_ONLY: Record<Kind, Record<string, FieldError['code']>> = {
  assets: {
    id: 'read_only',
    created_at: 'read_only',
    updated_at: 'read_only',
    deleted_at: 'read_only',
    location_id: 'read_only',
    location_external_key: 'read_only',
  },
  locations: {
    id: 'read_only',
    created_at: 'read_only',
    updated_at: 'read_only',
    deleted_at: 'read_only',
    parent_id: 'invalid_context',
    metadata: 'unknown_field',
  },
};

/** Column positions of a header row, or the header's problems (the whole file is refused). */
export function readHeader(kind: Kind, header: string[]): { columns: string[] } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const columns = header.map((h) => h.trim());
  const seen = new Set<string>();
  for (const name of columns) {
    if (seen.has(name)) {
      errors.push({
        field: name,
        code: 'ambiguous_fields',
        message: `column ${name} appears more than once in the header`,
        params: {},
      });
    }
    seen.add(name);
    if (COLUMNS[kind].includes(name)) continue;
    const code = READ_ONLY[kind][name];
    const message =
      code === 'read_only'
        ? `${name} is server-managed and cannot be imported; remove the column`
        : code === 'invalid_context'
          ? `${name} is not an import column; name parents by parent_external_key`
          : `${name} is not a known column; the columns are ${COLUMNS[kind].join(', ')}`;
    errors.push({ field: name || '(empty)', code: code ?? 'unknown_field', message, params: {} });
  }
  return errors.length > 0 ? { errors } : { columns };
}

export interface TagCell {
  tag_type?: string;
  value: string;
}

/**
 * `rfid:VALUE;barcode:VALUE`. In a value, `\;` is a semicolon and `\\` a backslash; any
 * other backslash is itself. The type ends at the first colon (types have none);
 * whitespace before a type is ignored, so `rfid:A; barcode:B` reads as typed. An item
 * without a colon has no type (the API's `required` on tag_type).
 */
export function parseTags(cell: string): TagCell[] {
  const items: string[] = [];
  let current = '';
  for (let i = 0; i < cell.length; i++) {
    const c = cell[i];
    if (c === '\\' && (cell[i + 1] === ';' || cell[i + 1] === '\\')) {
      current += c + cell[i + 1];
      i++;
    } else if (c === ';') {
      items.push(current);
      current = '';
    } else current += c;
  }
  items.push(current);
  const tags: TagCell[] = [];
  for (const item of items) {
    if (item === '') continue;
    const colon = item.indexOf(':');
    const unescaped = (s: string) => s.replace(/\\([;\\])/g, '$1');
    if (colon < 0) tags.push({ value: unescaped(item) });
    else tags.push({ tag_type: item.slice(0, colon).trimStart(), value: unescaped(item.slice(colon + 1)) });
  }
  return tags;
}

export function formatTags(tags: { tag_type: string; value: string }[]): string {
  return tags.map((t) => `${t.tag_type}:${t.value.replace(/([;\\])/g, '\\$1')}`).join(';');
}

/** The columns an export writes through escapeFormula (src/spreadsheet/csv.ts), which an import undoes. */
const FREE_TEXT = new Set(['external_key', 'name', 'description', 'parent_external_key']);

/** A row as the API's body: what each cell means (see the module comment). */
export function rowBody(
  columns: string[],
  cells: string[],
): { body: Record<string, unknown>; errors: RowFieldError[] } {
  const body: Record<string, unknown> = {};
  const errors: RowFieldError[] = [];
  columns.forEach((column, i) => {
    const cell = FREE_TEXT.has(column) ? unescapeFormula(cells[i] ?? '') : (cells[i] ?? '');
    // PostgreSQL cannot store U+0000, and the check reads the organization's rows by the
    // file's keys and tags before it validates a row: kept out of the body, the cell
    // refuses its row alone instead of failing the whole import in the database.
    if (cell.includes('\u0000')) {
      errors.push({
        field: column,
        code: 'invalid_value',
        message: `${column} must not contain U+0000`,
        params: {},
      });
      return;
    }
    switch (column) {
      case 'description':
      case 'valid_to':
      case 'parent_external_key':
        body[column] = cell === '' ? null : cell;
        break;
      case 'tags':
        body.tags = parseTags(cell);
        break;
      case 'is_active': {
        const v = cell.trim().toLowerCase();
        if (v === '') break;
        body.is_active = v === 'true' ? true : v === 'false' ? false : cell;
        break;
      }
      case 'metadata': {
        if (cell === '') break;
        const read = metadataCell(cell);
        if ('error' in read) errors.push(read.error);
        else body.metadata = read.value;
        break;
      }
      default:
        if (cell !== '') body[column] = cell;
    }
  });
  return { body, errors };
}

/**
 * A metadata cell's JSON, decoded as the API decodes a body (src/http/json-body.ts): what
 * JSON.parse lets through but would not be stored as sent (a lone surrogate, which jsonb
 * refuses and which once failed the whole import in the database; an integer beyond int64,
 * which the parse rounds) refuses the row with the API's error type and wording.
 */
function metadataCell(cell: string): { value: unknown } | { error: RowFieldError } {
  let value: unknown;
  try {
    value = JSON.parse(cell);
  } catch {
    return {
      error: {
        field: 'metadata',
        code: 'invalid_value',
        message: 'metadata must be a JSON object, such as {"color": "red"}',
        params: { expected_type: 'object', received_type: 'string' },
      },
    };
  }
  const problem = !allStringsWellFormed(value)
    ? UNPAIRED_SURROGATE
    : hasIntegerBeyondInt64(cell)
      ? INTEGER_BEYOND_INT64
      : null;
  if (problem === null) {
    noteInexactNumbers(cell, value);
    return { value };
  }
  return {
    error: { type: 'bad_request', field: 'metadata', code: 'invalid_value', message: `metadata ${problem}` },
  };
}

/** The number of cells a row should have; a different count is a refused row. */
export function cellCountError(columns: string[], cells: string[]): FieldError | null {
  if (cells.length === columns.length) return null;
  return {
    field: '(row)',
    code: 'invalid_value',
    message: `the row has ${cells.length} cells but the header has ${columns.length} columns`,
    params: { expected: columns.length, received: cells.length },
  };
}

/** Same JSON value (object key order ignored), as jsonb compares. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) =>
      Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/** Tag lists as sets of (type, value). */
export function sameTags(a: { tag_type: string; value: string }[], b: { tag_type: string; value: string }[]) {
  if (a.length !== b.length) return false;
  const set = new Set(a.map((t) => `${t.tag_type}\u0000${t.value}`));
  return b.every((t) => set.has(`${t.tag_type}\u0000${t.value}`));
}
