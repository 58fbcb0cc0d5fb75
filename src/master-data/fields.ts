import { type TSchema, Type } from '@sinclair/typebox';
import { ExternalKey, Id, Nullable, TimestampIn, TimestampOut } from '../http/schemas/common.js';

/**
 * Field schemas shared by assets and locations (API-SPEC Conventions).
 *
 * The spec writes the name pattern as `^\S(?:[^\x00-\x1F\x7F]*\S)?$`, whose `\S` would let
 * the first and last character be a control character (a lone NUL, which PostgreSQL cannot
 * even store, or a trailing DEL). The rule it states is "no control characters, no leading
 * or trailing whitespace", so the ends exclude control characters too.
 */
export const NameField = () =>
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[^\\s\\x00-\\x1F\\x7F](?:[^\\x00-\\x1F\\x7F]*[^\\s\\x00-\\x1F\\x7F])?$',
    'x-message': 'must be a single line with no control characters and no leading or trailing whitespace',
  });

export const DescriptionField = () =>
  Nullable(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      pattern: '^[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F]*$',
      'x-message': 'must not contain control characters other than tab, newline and carriage return',
    }),
  );

export const TAG_TYPES = ['rfid', 'ble', 'barcode'] as const;

/** On write `tag_type` is required; null counts as missing (API-SPEC Tag). */
export const TagRequestSchema = Type.Object(
  {
    tag_type: Type.Unsafe<(typeof TAG_TYPES)[number]>({
      type: 'string',
      enum: [...TAG_TYPES],
      'x-null-code': 'required',
    }),
    value: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F]*$',
      'x-message': 'must not contain control characters other than tab, newline and carriage return',
    }),
    id: ServerManaged(Id(), 'is the tag record id, which the server assigns; leave it out'),
  },
  { additionalProperties: false, $id: 'TagRequest' },
);

/** Read direction: `tag_type` is an open set; clients pass unknown values through. */
export const TagSchema = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    tag_type: Type.String({ description: 'rfid, ble, barcode; open set on read' }),
    value: Type.String(),
  },
  { $id: 'Tag' },
);

/** A tag as it may be echoed back in a PATCH body (compared, never applied). */
export const TagEchoSchema = Type.Object(
  { id: Type.Optional(Id()), tag_type: Type.String(), value: Type.String() },
  { additionalProperties: false },
);

export const ValidFromIn = () => TimestampIn();
export const ValidToIn = () => Nullable(TimestampIn());

/** The fields a create body of an asset or a location starts with, in this order. */
export const CreateFields = () => ({
  name: NameField(),
  external_key: Type.Optional(ExternalKey()),
  description: Type.Optional(DescriptionField()),
  is_active: Type.Optional(Type.Boolean({ description: 'Defaults to true; null is rejected' })),
});

/** The fields a merge-patch body of an asset or a location starts with, in this order. */
export const UpdateFields = () => ({
  name: Type.Optional(NameField()),
  description: Type.Optional(DescriptionField()),
  is_active: Type.Optional(Type.Boolean({ description: 'null is rejected' })),
});

/** The validity window as a create or patch body sends it. */
export const ValidityIn = () => ({
  valid_from: Type.Optional(ValidFromIn()),
  valid_to: Type.Optional(ValidToIn()),
});

/**
 * A read-shape field the server sets, in a body that creates (API-SPEC field codes: on the
 * read schema, so not unknown_field; read_only): checked for its type first, so an id past
 * the int32 ceiling is too_large as everywhere (Conventions), then refused.
 */
export function ServerManaged<T extends TSchema>(schema: T, message?: string) {
  return Type.Optional(
    Type.Unsafe<unknown>({
      ...schema,
      readOnly: true,
      'x-server-managed': true,
      ...(message ? { 'x-message': message } : {}),
    }),
  );
}

/** The server-managed fields of the read shape, refused on create (ServerManaged). */
export const ServerManagedOnCreate = {
  id: ServerManaged(Id()),
  created_at: ServerManaged(TimestampIn()),
  updated_at: ServerManaged(TimestampIn()),
  deleted_at: ServerManaged(Nullable(TimestampIn())),
};

/** Read-only fields accepted on PATCH when they match (accept-if-matches). */
export const ReadOnlyEchoFields = {
  id: Type.Optional(Id()),
  created_at: Type.Optional(TimestampIn()),
  updated_at: Type.Optional(TimestampIn()),
  deleted_at: Type.Optional(Nullable(TimestampIn())),
};

export const CommonReadFields = {
  id: Type.Integer({ format: 'int64' }),
  external_key: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  is_active: Type.Boolean(),
};

export const TimestampsRead = {
  valid_from: TimestampOut(),
  valid_to: Nullable(TimestampOut()),
  created_at: TimestampOut(),
  updated_at: TimestampOut(),
  deleted_at: Nullable(TimestampOut()),
};

export { ExternalKey };
