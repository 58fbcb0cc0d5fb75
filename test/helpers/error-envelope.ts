import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** `error.type` values of API-SPEC "Types and statuses" (plus 413 for the body limit, 503 for outages, and 408/414/417/431 answered before a route). */
export const ERROR_STATUS: Record<string, number> = {
  bad_request: 400,
  validation_error: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  '405': 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  request_timeout: 408,
  uri_too_long: 414,
  expectation_failed: 417,
  header_fields_too_large: 431,
};

/** `fields[].code` values of API-SPEC "Field error codes". */
export const FIELD_CODES = [
  'required',
  'invalid_value',
  'too_short',
  'too_long',
  'too_large',
  'unknown_field',
  'read_only',
  'invalid_context',
  'ambiguous_fields',
  'fk_not_found',
] as const;

export interface ErrorBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  request_id: string;
  fields?: { field: string; code: string; message: string; params: Record<string, unknown> }[];
}

/** The request path of an injected response, without its query string. */
function pathOf(res: LightMyRequestResponse): string {
  return (res.raw.req.url ?? '').split('?')[0]!;
}

/**
 * Headers every public-surface response carries, success or error: the request id and
 * the three rate-limit headers; and never a CORS header.
 */
export function expectSurfaceHeaders(res: LightMyRequestResponse): void {
  const h = res.headers;
  expect(h['x-request-id'], 'x-request-id header').toEqual(expect.any(String));
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(String(h[name] ?? ''), `${name} header`).toMatch(/^\d+$/);
  }
  const cors = Object.keys(h).filter((k) => k.toLowerCase().startsWith('access-control-'));
  expect(cors, 'CORS headers').toEqual([]);
}

/**
 * Asserts the error envelope of API-SPEC "Errors" on `res` (and the surface headers):
 * exactly {type,title,status,detail,instance,request_id[,fields]}, `status` equal to the
 * HTTP status, `instance` the path without the query, `request_id` the `x-request-id`
 * header, `fields` present iff the type is `validation_error`. Returns the error object.
 */
export function expectErrorEnvelope(
  res: LightMyRequestResponse,
  expected: { status?: number; type?: string; detail?: string | RegExp } = {},
): ErrorBody {
  expectSurfaceHeaders(res);
  const context = `${res.raw.req.method} ${res.raw.req.url} -> ${res.statusCode} ${res.body.slice(0, 500)}`;
  expect(res.statusCode, context).toBeGreaterThanOrEqual(400);
  if (expected.status !== undefined) expect(res.statusCode, context).toBe(expected.status);
  expect(String(res.headers['content-type']), context).toMatch(/^application\/json/);
  const body = res.json() as { error: ErrorBody };
  expect(Object.keys(body), context).toEqual(['error']);
  const error = body.error;
  const keys = ['type', 'title', 'status', 'detail', 'instance', 'request_id'];
  if (error.type === 'validation_error') keys.push('fields');
  expect(Object.keys(error).sort(), context).toEqual(keys.sort());
  expect(Object.keys(ERROR_STATUS), context).toContain(error.type);
  expect(ERROR_STATUS[error.type], context).toBe(res.statusCode);
  expect(error.status, context).toBe(res.statusCode);
  expect(error.title, context).toEqual(expect.any(String));
  expect(error.title.length, context).toBeGreaterThan(0);
  expect(error.detail, context).toEqual(expect.any(String));
  expect(error.detail.length, context).toBeGreaterThan(0);
  expect(error.instance, context).toBe(pathOf(res));
  expect(error.request_id, context).toBe(res.headers['x-request-id']);
  if (expected.type !== undefined) expect(error.type, context).toBe(expected.type);
  if (typeof expected.detail === 'string') expect(error.detail, context).toBe(expected.detail);
  else if (expected.detail) expect(error.detail, context).toMatch(expected.detail);
  if (error.type === 'validation_error') {
    const fields = error.fields!;
    expect(Array.isArray(fields) && fields.length > 0, context).toBe(true);
    for (const f of fields) {
      expect(Object.keys(f).sort(), context).toEqual(['code', 'field', 'message', 'params']);
      expect(f.field, context).toEqual(expect.any(String));
      expect(FIELD_CODES as readonly string[], context).toContain(f.code);
      expect(f.message, context).toEqual(expect.any(String));
      expect(f.params !== null && typeof f.params === 'object' && !Array.isArray(f.params), context).toBe(
        true,
      );
    }
    // API-SPEC Errors, Details 1.
    const more = fields.length - 1;
    const first = fields[0]!.message;
    expect(error.detail, context).toBe(more > 0 ? `${first} (and ${more} more validation errors)` : first);
  }
  return error;
}

/** A `validation_error` envelope; returns its `fields`. */
export function expectValidationError(res: LightMyRequestResponse): NonNullable<ErrorBody['fields']> {
  return expectErrorEnvelope(res, { status: 400, type: 'validation_error' }).fields!;
}
