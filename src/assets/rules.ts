import { type ApiError, type FieldError, fieldError, validationError } from '../errors.js';
import { parseRfc3339, toWire } from '../http/timestamps.js';
import { type ReadOnlyRule, readOnlyDiffer, staleUpdatedAt } from '../master-data/read-only.js';
import { type Asset, METADATA_MAX_BYTES, METADATA_MAX_DEPTH } from './schemas.js';

/**
 * Asset write rules beyond what the JSON schemas express: metadata limits, the range of
 * storable instants, the validity window, and PATCH's accept-if-matches fields.
 */

/** An unpaired UTF-16 surrogate: UTF-8 cannot carry it, so it would not be stored as sent. */
const LONE_SURROGATE = /\p{Cs}/u;

/** First instant PostgreSQL and RFC 3339 both write as a four-digit year, and the last. */
const MIN_INSTANT = -62135596800000; // 0001-01-01T00:00:00.000Z
const MAX_INSTANT = 253402300799999; // 9999-12-31T23:59:59.999Z

/** A schema-valid inbound timestamp as the wire form of its instant (sub-ms digits dropped). */
export function instantIn(field: string, text: string): string {
  const millis = parseRfc3339(text);
  if (millis === null) throw fieldError(field, 'invalid_value', `${field} must be an RFC 3339 timestamp`);
  if (millis < MIN_INSTANT || millis > MAX_INSTANT) {
    throw fieldError(
      field,
      'invalid_value',
      `${field} must lie between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z`,
    );
  }
  return toWire(millis);
}

/** `valid_to` <= `valid_from` (API-SPEC "Liveness axes"); both in wire form. */
export function windowError(validFrom: string | null): ApiError {
  return fieldError('valid_to', 'invalid_value', 'valid_to must be later than valid_from', {
    ...(validFrom ? { valid_from: validFrom } : {}),
  });
}

export function checkWindow(validFrom: string, validTo: string | null): void {
  if (validTo !== null && Date.parse(validTo) <= Date.parse(validFrom)) throw windowError(validFrom);
}

function metadataError(code: FieldError['code'], message: string, params: Record<string, unknown> = {}) {
  return fieldError('metadata', code, `metadata ${message}`, params);
}

/**
 * metadata: at most METADATA_MAX_DEPTH levels (the object itself is level 1), at most
 * METADATA_MAX_BYTES bytes as UTF-8 JSON, and only what jsonb stores as sent: no U+0000,
 * no unpaired surrogates, finite numbers. Depth is checked first and without recursion,
 * so serializing for the size cannot overflow the stack.
 */
export function checkMetadata(metadata: Record<string, unknown>): void {
  const stack: [unknown, number][] = [[metadata, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes('\u0000') || LONE_SURROGATE.test(node)) {
        throw metadataError('invalid_value', 'strings must not contain U+0000 or unpaired surrogates');
      }
    } else if (typeof node === 'number') {
      if (!Number.isFinite(node)) throw metadataError('invalid_value', 'numbers must be finite');
    } else if (node !== null && typeof node === 'object') {
      if (depth > METADATA_MAX_DEPTH) {
        throw metadataError('invalid_value', `must not nest deeper than ${METADATA_MAX_DEPTH} levels`, {
          max_depth: METADATA_MAX_DEPTH,
        });
      }
      if (Array.isArray(node)) {
        for (const child of node) stack.push([child, depth + 1]);
      } else {
        for (const [key, child] of Object.entries(node)) stack.push([key, depth + 1], [child, depth + 1]);
      }
    }
  }
  if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > METADATA_MAX_BYTES) {
    throw metadataError('too_long', `must be at most ${METADATA_MAX_BYTES} bytes as JSON`, {
      max_bytes: METADATA_MAX_BYTES,
    });
  }
}

/** Text fields must be well-formed Unicode, or the stored value would differ from the sent one. */
export function checkText(entries: [field: string, value: string | null | undefined][]): void {
  const errors: FieldError[] = [];
  for (const [field, value] of entries) {
    if (typeof value === 'string' && LONE_SURROGATE.test(value)) {
      errors.push({
        field,
        code: 'invalid_value',
        message: `${field} must not contain unpaired surrogates`,
        params: {},
      });
    }
  }
  if (errors.length > 0) throw validationError(errors);
}

/** POST asset rule: the location is scan data. */
export function rejectLocationOnCreate(body: object): void {
  const sent = ['location_id', 'location_external_key'].filter((f) => f in body);
  if (sent.length === 0) return;
  throw validationError(
    sent.map((field) => ({
      field,
      code: 'read_only',
      message: `${field} is read-only: an asset's location is derived from scans`,
      params: {},
    })),
  );
}

export const RENAME_OPERATION = 'POST /api/v1/assets/{asset_id}/rename';
export const TAG_OPERATIONS = [
  'POST /api/v1/assets/{asset_id}/tags',
  'DELETE /api/v1/assets/{asset_id}/tags/{tag_id}',
] as const;

/** PATCH asset rules 4-6: what a PATCH may echo, and the error when the echo differs. */
export function readOnlyRules(current: Asset): ReadOnlyRule[] {
  const readOnly = (field: keyof Asset, compare: ReadOnlyRule['compare']): ReadOnlyRule => ({
    field,
    compare,
    current: current[field],
    onDiffer: readOnlyDiffer(field),
  });
  return [
    readOnly('id', 'scalar'),
    readOnly('created_at', 'instant'),
    {
      field: 'updated_at',
      compare: 'instant',
      current: current.updated_at,
      onDiffer: staleUpdatedAt(current.updated_at),
    },
    readOnly('deleted_at', 'instant'),
    readOnly('location_id', 'scalar'),
    readOnly('location_external_key', 'scalar'),
    {
      field: 'external_key',
      compare: 'scalar',
      current: current.external_key,
      onDiffer: () => ({
        code: 'invalid_context',
        message: `external_key is not changed by PATCH; use ${RENAME_OPERATION} with the body {"external_key": "<new key>"}`,
        params: {
          operation: RENAME_OPERATION,
          path: `/api/v1/assets/${current.id}/rename`,
          body: { external_key: '<new key>' },
        },
      }),
    },
    {
      field: 'tags',
      compare: 'tags',
      current: current.tags,
      onDiffer: () => ({
        code: 'invalid_context',
        message: `tags are not changed by PATCH; attach with ${TAG_OPERATIONS[0]} and detach with ${TAG_OPERATIONS[1]}`,
        params: { operations: [...TAG_OPERATIONS] },
      }),
    },
  ];
}
