import { type Static, Type } from '@sinclair/typebox';
import { ExternalKey, Id, Nullable, PageQuery } from '../http/schemas/common.js';
import {
  CommonReadFields,
  CreateFields,
  ReadOnlyEchoFields,
  ServerManagedOnCreate,
  TagEchoSchema,
  TimestampsRead,
  UpdateFields,
  ValidityIn,
} from '../master-data/fields.js';

/** Location (read shape), API-SPEC "Location (read shape)". No metadata, tree_path or depth. */
export const LocationSchema = Type.Object(
  {
    ...CommonReadFields,
    parent_id: Nullable(Type.Integer({ format: 'int64', description: 'null means root' })),
    parent_external_key: Nullable(
      Type.String({
        description:
          "The parent's external_key; kept even when the parent is soft-deleted (seen with include_deleted=true)",
      }),
    ),
    tags: Type.Array(Type.Ref('Tag')),
    ...TimestampsRead,
  },
  { $id: 'Location' },
);

export interface Tag {
  id: number;
  tag_type: string;
  value: string;
}

/** A location as the API shows it (timestamps in wire form). */
export interface Location {
  id: number;
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  parent_id: number | null;
  parent_external_key: string | null;
  tags: Tag[];
  valid_from: string;
  valid_to: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

const ParentIdField = () => Nullable(Id('Parent location id; null makes the location a root'));
const ParentKeyField = () => Nullable(ExternalKey());

export const LocationCreateBody = Type.Object(
  {
    ...CreateFields(),
    parent_id: Type.Optional(ParentIdField()),
    parent_external_key: Type.Optional(ParentKeyField()),
    tags: Type.Optional(Nullable(Type.Array(Type.Ref('TagRequest')))),
    ...ValidityIn(),
    ...ServerManagedOnCreate,
  },
  { additionalProperties: false },
);
export type LocationCreate = Static<typeof LocationCreateBody>;

/**
 * Merge-patch body. Besides the update fields it accepts the read shape's server-managed
 * fields as echoes, which are compared and dropped when they match (accept-if-matches).
 */
export const LocationUpdateBody = Type.Object(
  {
    ...UpdateFields(),
    parent_id: Type.Optional(ParentIdField()),
    parent_external_key: Type.Optional(ParentKeyField()),
    ...ValidityIn(),
    ...ReadOnlyEchoFields,
    external_key: Type.Optional(
      Type.String({ description: 'Echo only; change it with POST /api/v1/locations/{location_id}/rename' }),
    ),
    tags: Type.Optional(
      Nullable(
        Type.Array(TagEchoSchema, { description: 'Echo only; change tags through the tags sub-resource' }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type LocationUpdate = Static<typeof LocationUpdateBody>;

export const RenameBody = Type.Object({ external_key: ExternalKey() }, { additionalProperties: false });

export const LocationParams = Type.Object({ location_id: Id() }, { additionalProperties: false });

const NoControlChars = () =>
  Type.String({
    pattern: '^[^\\x00-\\x1F\\x7F]*$',
    'x-message': 'must not contain control characters',
    description:
      'Case-insensitive substring over name, external_key, description and active tag values; only the first value is used if repeated',
  });

export const LocationListQuery = Type.Object(
  {
    parent_id: Type.Optional(
      Type.Array(Id(), { description: 'Repeatable (any-of); exclusive with parent_external_key' }),
    ),
    parent_external_key: Type.Optional(
      Type.Array(ExternalKey(), { description: 'Repeatable (any-of); exclusive with parent_id' }),
    ),
    external_key: Type.Optional(Type.Array(ExternalKey(), { description: 'Repeatable, equality match' })),
    is_active: Type.Optional(Type.Boolean()),
    include_deleted: Type.Optional(Type.Boolean({ default: false })),
    q: Type.Optional(NoControlChars()),
    sort: Type.Optional(
      Type.String({
        description:
          'Comma-separated: external_key, name, created_at, each optionally prefixed -. Ties are broken by id, descending when the last key is descending. Default external_key,id',
      }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type LocationListQuery = Static<typeof LocationListQuery>;

/** Tree sub-resource lists: paging only (a `sort` gets the "not supported" message). */
export const TreeQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const RenameResponse = Type.Object({
  data: Type.Ref('Location'),
  descendant_count_affected: Type.Integer({
    minimum: 0,
    description: 'Live (not soft-deleted) descendants of the renamed location; they are not modified',
  }),
});
