import { type Static, Type } from '@sinclair/typebox';
import { EXTERNAL_KEY_PATTERN, ExternalKey, Id, Nullable, PageQuery } from '../http/schemas/common.js';
import {
  CommonReadFields,
  CreateFields,
  ReadOnlyEchoFields,
  ServerManaged,
  ServerManagedOnCreate,
  TagEchoSchema,
  type TagRequestSchema,
  TimestampsRead,
  UpdateFields,
  ValidityIn,
} from '../master-data/fields.js';
import type { Tag } from '../tags/repository.js';

/** metadata limits (API-SPEC leaves them "not shown"; docs/master-data.md "Assets"). */
export const METADATA_MAX_BYTES = 65536;
export const METADATA_MAX_DEPTH = 10;

const MetadataField = () =>
  Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        `Free-form JSON object, stored opaquely and returned as sent (key order may change). ` +
        `At most ${METADATA_MAX_BYTES} bytes as serialized UTF-8 JSON (else too_long) and ` +
        `${METADATA_MAX_DEPTH} levels of nesting, the object itself being level 1 (else invalid_value). ` +
        'Strings and keys must not contain U+0000. null is rejected.',
    },
  );

/**
 * Asset (read shape), API-SPEC "Asset (read shape)". Left open (no additionalProperties:
 * false): v1 changes are additive, and a closed read schema would make generated clients
 * reject a field added later.
 */
export const AssetSchema = Type.Object(
  {
    ...CommonReadFields,
    metadata: Type.Object({}, { additionalProperties: true }),
    location_id: Nullable(
      Type.Integer({ format: 'int64', description: 'Scan-derived current location; read-only' }),
    ),
    location_external_key: Nullable(
      Type.String({ description: "The current location's external_key; scan-derived, read-only" }),
    ),
    tags: Type.Array(Type.Ref('Tag'), {
      description: 'Read-only here; changed through the tags sub-resource',
    }),
    ...TimestampsRead,
  },
  { $id: 'Asset' },
);

/** An asset as the API shows it (timestamps in wire form). */
export interface Asset {
  id: number;
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  metadata: Record<string, unknown>;
  location_id: number | null;
  location_external_key: string | null;
  tags: Tag[];
  valid_from: string;
  valid_to: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

type TagRequest = Static<typeof TagRequestSchema>;

/** Sent on create they are 400 read_only: an asset's location is scan data. */
const LOCATION_ON_CREATE = "is read-only: an asset's location is derived from scans";

export const AssetCreateBody = Type.Object(
  {
    ...CreateFields(),
    metadata: Type.Optional(MetadataField()),
    tags: Type.Optional(Nullable(Type.Array(Type.Unsafe<TagRequest>(Type.Ref('TagRequest'))))),
    ...ValidityIn(),
    location_id: ServerManaged(Nullable(Id()), LOCATION_ON_CREATE),
    location_external_key: ServerManaged(Nullable(Type.String()), LOCATION_ON_CREATE),
    ...ServerManagedOnCreate,
  },
  { additionalProperties: false },
);
export type AssetCreate = Static<typeof AssetCreateBody>;

/**
 * Merge-patch body. Besides the update fields it accepts every other field of the read
 * shape as an echo, compared with the current value and dropped when equal
 * (accept-if-matches, API-SPEC "PATCH asset rules" 4-6).
 */
export const AssetUpdateBody = Type.Object(
  {
    ...UpdateFields(),
    metadata: Type.Optional(MetadataField()),
    ...ValidityIn(),
    ...ReadOnlyEchoFields,
    location_id: Type.Optional(Nullable(Id())),
    location_external_key: Type.Optional(Nullable(Type.String())),
    external_key: Type.Optional(
      Type.String({ description: 'Echo only; change it with POST /api/v1/assets/{asset_id}/rename' }),
    ),
    tags: Type.Optional(
      Type.Array(TagEchoSchema, {
        description:
          'Echo only, compared as a set; change tags with POST /api/v1/assets/{asset_id}/tags and DELETE /api/v1/assets/{asset_id}/tags/{tag_id}',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AssetUpdate = Static<typeof AssetUpdateBody>;

export const RenameBody = Type.Object({ external_key: ExternalKey() }, { additionalProperties: false });

export const AssetParams = Type.Object({ asset_id: Id() }, { additionalProperties: false });

export const ASSET_SORT_FIELDS = ['external_key', 'name', 'created_at', 'updated_at'] as const;

const KeyFilter = (description: string) =>
  Type.Array(
    Type.String({
      pattern: EXTERNAL_KEY_PATTERN,
      'x-message': 'must contain only letters, digits and hyphens (repeat the parameter for several values)',
    }),
    { description },
  );

export const AssetListQuery = Type.Object(
  {
    location_id: Type.Optional(
      Type.Array(Id(), { description: 'Repeatable (any of); exclusive with location_external_key' }),
    ),
    location_external_key: Type.Optional(
      KeyFilter(
        'Repeatable (any of); exclusive with location_id. Matches live, currently effective locations',
      ),
    ),
    external_key: Type.Optional(KeyFilter('Repeatable, equality match')),
    is_active: Type.Optional(Type.Boolean({ description: 'Narrows to active or inactive assets' })),
    include_deleted: Type.Boolean({ default: false, description: 'Adds soft-deleted assets' }),
    q: Type.Optional(
      Type.String({
        pattern: '^[^\\x00-\\x1F\\x7F]*$',
        'x-message': 'must not contain control characters',
        description:
          'Case-insensitive substring of external_key, name, description or an attached tag value; empty means no filter; only the first value is honoured',
      }),
    ),
    sort: Type.Optional(
      Type.String({
        description:
          'Comma-separated: external_key, name, created_at, updated_at, each optionally prefixed -. Ties are broken by id, descending when the last key is descending',
      }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type AssetListParams = Static<typeof AssetListQuery>;
