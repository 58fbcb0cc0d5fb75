/** Machine-readable categories of the public error envelope (API-SPEC "Types and statuses"). */
export type ErrorType =
  | 'bad_request'
  | 'validation_error'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | '405'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable'
  // What the HTTP server answers before a route is found (docs/api-decisions.md).
  | 'request_timeout'
  | 'uri_too_long'
  | 'expectation_failed'
  | 'header_fields_too_large';

/** `fields[].code` values (API-SPEC "Field error codes"). */
export type FieldCode =
  | 'required'
  | 'invalid_value'
  | 'too_short'
  | 'too_long'
  | 'too_large'
  | 'unknown_field'
  | 'read_only'
  | 'invalid_context'
  | 'ambiguous_fields'
  | 'fk_not_found';

export interface FieldError {
  field: string;
  code: FieldCode;
  message: string;
  params: Record<string, unknown>;
}

/**
 * The one error type services and HTTP plumbing throw. It names a category and field
 * codes only; src/http/error-handler.ts alone maps categories to statuses and the envelope.
 */
export class ApiError extends Error {
  constructor(
    readonly type: ErrorType,
    readonly detail: string,
    readonly fields?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }
}

export function validationError(fields: FieldError[]): ApiError {
  const first = fields[0];
  if (!first) throw new Error('validationError needs at least one field');
  const more = fields.length - 1;
  const detail = more > 0 ? `${first.message} (and ${more} more validation errors)` : first.message;
  return new ApiError('validation_error', detail, fields);
}

export function fieldError(
  field: string,
  code: FieldCode,
  message: string,
  params: Record<string, unknown> = {},
): ApiError {
  return validationError([{ field, code, message, params }]);
}

export const notFound = (what = 'resource') => new ApiError('not_found', `${what} not found`);
export const conflict = (detail: string) => new ApiError('conflict', detail);
export const badRequest = (detail: string) => new ApiError('bad_request', detail);
