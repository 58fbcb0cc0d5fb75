import { Type } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { AssetCreateBody, AssetListQuery, AssetUpdateBody } from '../assets/schemas.js';
import { ApiError, type FieldError } from '../errors.js';
import { parseRfc3339 } from '../http/timestamps.js';
import { createAjv } from '../http/validation/ajv.js';
import { mapAjvErrors } from '../http/validation/ajv-errors.js';
import { LocationCreateBody, LocationListQuery, LocationUpdateBody } from '../locations/schemas.js';
import { TagRequestSchema } from '../master-data/fields.js';
import { windowError } from '../master-data/write-rules.js';
import type { Kind } from './columns.js';

/**
 * The API's own body schemas and validator (the same Ajv setup and error mapping as the
 * routes), so a refused row carries exactly the field codes the API would answer.
 * Tags are checked on their own with the API's TagRequest schema: they are a create
 * field only, and an import also sets them on existing rows.
 */
function compile() {
  const ajv = createAjv();
  ajv.addSchema(TagRequestSchema);
  const withoutTags = (
    schema:
      | typeof AssetCreateBody
      | typeof LocationCreateBody
      | typeof AssetUpdateBody
      | typeof LocationUpdateBody,
  ) => {
    const { tags: _tags, ...properties } = schema.properties as Record<string, unknown>;
    return { ...schema, properties };
  };
  return {
    assets: {
      create: ajv.compile(withoutTags(AssetCreateBody)),
      update: ajv.compile(withoutTags(AssetUpdateBody)),
    },
    locations: {
      create: ajv.compile(withoutTags(LocationCreateBody)),
      update: ajv.compile(withoutTags(LocationUpdateBody)),
    },
    tags: ajv.compile(Type.Object({ tags: Type.Array(Type.Ref('TagRequest')) })),
  };
}

let compiled: ReturnType<typeof compile> | undefined;

function run(validate: ValidateFunction, value: unknown): FieldError[] {
  return validate(value) ? [] : mapAjvErrors(validate.errors ?? [], 'body');
}

/** Schema errors of a row's body as a create or an update. */
export function schemaErrors(
  kind: Kind,
  mode: 'create' | 'update',
  body: Record<string, unknown>,
): FieldError[] {
  compiled ??= compile();
  const { tags, ...rest } = body;
  const errors = run(compiled[kind][mode], rest);
  if (tags !== undefined) errors.push(...run(compiled.tags, { tags }));
  return errors;
}

/** The field errors of an ApiError thrown by a shared rule (checkMetadata and the like). */
export function fieldsOf(err: unknown): FieldError[] {
  if (err instanceof ApiError && err.fields) return err.fields;
  throw err;
}

/** API-SPEC "Liveness axes": valid_to must be later than valid_from (both epoch ms). */
export function windowErrors(validFrom: number, validTo: number | null): FieldError[] {
  if (validTo === null || validTo > validFrom) return [];
  return fieldsOf(windowError(new Date(validFrom).toISOString()));
}

/** Epoch ms of a schema-valid timestamp. */
export function millis(text: string): number {
  const ms = parseRfc3339(text);
  if (ms === null) throw new Error(`not a timestamp after validation: ${text}`);
  return ms;
}

let listQueries: { assets: ValidateFunction; locations: ValidateFunction } | undefined;

/**
 * An export's filters checked as the list endpoints check their query (the same schema),
 * so the CLI and the web app refuse what GET /api/v1/assets or /locations would.
 */
export function listQueryErrors(kind: Kind, query: Record<string, unknown>): FieldError[] {
  if (!listQueries) {
    const ajv = createAjv();
    listQueries = { assets: ajv.compile(AssetListQuery), locations: ajv.compile(LocationListQuery) };
  }
  const validate = listQueries[kind];
  return validate(query) ? [] : mapAjvErrors(validate.errors ?? [], 'querystring');
}
