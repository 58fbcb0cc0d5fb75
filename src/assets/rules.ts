import { type FieldError, fieldError, validationError } from '../errors.js';
import { inexactLiteral } from '../json-checks.js';
import { type ReadOnlyRule, readOnlyDiffer, staleUpdatedAt } from '../master-data/read-only.js';
import { type Asset, METADATA_MAX_BYTES, METADATA_MAX_DEPTH } from './schemas.js';

/**
 * Asset write rules beyond what the JSON schemas express: metadata limits, the location
 * on create, and PATCH's accept-if-matches fields. Rules shared with locations (instants,
 * the validity window) are in src/master-data/write-rules.ts.
 */

function metadataError(code: FieldError['code'], message: string, params: Record<string, unknown> = {}) {
  return fieldError('metadata', code, `metadata ${message}`, params);
}

/**
 * metadata: at most METADATA_MAX_DEPTH levels (the object itself is level 1), at most
 * METADATA_MAX_BYTES bytes as UTF-8 JSON, and only what jsonb stores as sent: no U+0000
 * (in keys or values), finite numbers, and each number as it was sent (JSON.parse rounds one past a
 * double's precision, noted by the body's decoder). Depth is checked first and without recursion,
 * so serializing for the size cannot overflow the stack.
 */
export function checkMetadata(metadata: Record<string, unknown>): void {
  const stack: [unknown, number][] = [[metadata, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes('\u0000')) throw metadataError('invalid_value', 'strings must not contain U+0000');
    } else if (typeof node === 'number') {
      if (!Number.isFinite(node)) throw metadataError('invalid_value', 'numbers must be finite');
    } else if (node !== null && typeof node === 'object') {
      if (depth > METADATA_MAX_DEPTH) {
        throw metadataError('invalid_value', `must not nest deeper than ${METADATA_MAX_DEPTH} levels`, {
          max_depth: METADATA_MAX_DEPTH,
        });
      }
      const entries: [string, unknown][] = Array.isArray(node)
        ? node.map((child, i) => [String(i), child])
        : Object.entries(node);
      for (const [key, child] of entries) {
        const literal =
          typeof child === 'number' && Number.isFinite(child) ? inexactLiteral(node, key) : undefined;
        if (literal !== undefined) {
          throw metadataError(
            'invalid_value',
            `number ${literal} cannot be stored exactly (a 64-bit float holds 15 to 17 significant digits); send it as a string`,
          );
        }
        if (!Array.isArray(node)) stack.push([key, depth + 1]);
        stack.push([child, depth + 1]);
      }
    }
  }
  if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > METADATA_MAX_BYTES) {
    throw metadataError('too_long', `must be at most ${METADATA_MAX_BYTES} bytes as JSON`, {
      max_bytes: METADATA_MAX_BYTES,
    });
  }
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

/**
 * The fields readOnlyRules compares: a PATCH that sends none of them (nor a validity
 * bound) is not checked against the current values (rules.test.ts keeps the two in step).
 */
export const READ_ONLY_FIELDS: readonly (keyof Asset)[] = [
  'id',
  'created_at',
  'updated_at',
  'deleted_at',
  'location_id',
  'location_external_key',
  'external_key',
  'tags',
];

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
