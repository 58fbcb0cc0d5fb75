import { type TSchema, type TUnsafe, Type } from '@sinclair/typebox';

/** Largest surrogate id of v1 (API-SPEC Conventions). */
export const MAX_ID = 2147483647;

/** OpenAPI 3.0 style nullable (`nullable: true`), which Ajv understands too. */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<T['static'] | null> {
  return Type.Unsafe<T['static'] | null>({ ...schema, nullable: true });
}

export const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: MAX_ID, format: 'int64', ...(description ? { description } : {}) });

export const EXTERNAL_KEY_PATTERN = '^[A-Za-z0-9-]+$';

export const ExternalKey = () =>
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: EXTERNAL_KEY_PATTERN,
    'x-message': 'must contain only letters, digits and hyphens',
  });

/** Inbound timestamp: RFC 3339 with 0-9 fractional digits; the two sentinels refused. */
export const TimestampIn = () => Type.String({ format: 'date-time', 'x-not-sentinel': true });

/** Outbound timestamp: always `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export const TimestampOut = () => Type.String({ format: 'date-time', pattern: '\\.\\d{3}Z$' });

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size, 1..200' }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_ID, default: 0, description: 'Rows to skip' }),
};

export const FieldErrorSchema = Type.Object({
  field: Type.String(),
  code: Type.String({ description: 'Open set; tolerate unknown codes' }),
  message: Type.String(),
  params: Type.Object({}, { additionalProperties: true }),
});

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      type: Type.String(),
      title: Type.String(),
      status: Type.Integer(),
      detail: Type.String(),
      instance: Type.String(),
      request_id: Type.String(),
      fields: Type.Optional(Type.Array(FieldErrorSchema)),
    }),
  },
  { $id: 'ErrorEnvelope' },
);

export const DataEnvelope = <T extends TSchema>(data: T) => Type.Object({ data });

export const ListEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    limit: Type.Integer(),
    offset: Type.Integer(),
    total_count: Type.Integer(),
  });

/**
 * Error responses every public operation may return, for the OpenAPI document: besides the
 * spec's, what the connection's limits answer for any request (docs/api-decisions.md,
 * "What the server answers before a route"): 408 a request too slow to arrive, 413 a body over the limit,
 * 414 a request line or path segment too long, 417 an unsupported Expect, 431 headers
 * too large.
 */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(
    [400, 401, 403, 404, 405, 408, 413, 414, 415, 417, 429, 431, 500, 503, ...statuses].map((s) => [
      s,
      Type.Ref('ErrorEnvelope'),
    ]),
  );

/** An empty 204 response; @fastify/swagger documents `type: 'null'` as no content. */
export const NoContent = (description: string) => Type.Unsafe<undefined>({ type: 'null', description });
