import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isTransientConflict } from '../db/transient-conflict.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { ApiError, badRequest, type ErrorType, validationError } from '../errors.js';
import { counted, FAILURE_LOG_INTERVAL_MS, LogThrottle } from '../log-throttle.js';
import { onPublicApi } from './request-target.js';
import { type HttpPart, inSeries, mapAjvErrors } from './validation/ajv-errors.js';

const STATUS: Record<ErrorType, number> = {
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

const TITLES: Record<ErrorType, string> = {
  bad_request: 'Bad Request',
  validation_error: 'Validation Error',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  not_found: 'Not Found',
  '405': 'Method Not Allowed',
  conflict: 'Conflict',
  payload_too_large: 'Payload Too Large',
  unsupported_media_type: 'Unsupported Media Type',
  rate_limited: 'Too Many Requests',
  internal_error: 'Internal Server Error',
  service_unavailable: 'Service Unavailable',
  request_timeout: 'Request Timeout',
  uri_too_long: 'URI Too Long',
  expectation_failed: 'Expectation Failed',
  header_fields_too_large: 'Request Header Fields Too Large',
};

export const statusOf = (type: ErrorType): number => STATUS[type];

/** The `{ error: {...} }` body of API-SPEC "Errors"; also written on raw sockets (client-errors.ts). */
export function envelope(
  error: ApiError,
  instance: string,
  requestId: string,
): { error: Record<string, unknown> } {
  const body: Record<string, unknown> = {
    type: error.type,
    title: TITLES[error.type],
    status: STATUS[error.type],
    detail: error.detail,
    instance,
    request_id: requestId,
  };
  if (error.type === 'validation_error') body.fields = error.fields ?? [];
  return { error: body };
}

/** The generic detail of every 500: nothing of the cause reaches the caller. */
export const INTERNAL_DETAIL = 'An internal error occurred. Quote the request_id when contacting support.';

/** Errors Fastify raises itself, by its codes, as our categories. */
function fromFastify(error: FastifyError, bodyLimit: number, publicApi: boolean): ApiError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('unsupported_media_type', 'Unsupported Content-Type');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', `Request body must not exceed ${bodyLimit} bytes`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('bad_request', 'Request body must be a JSON object');
    default:
      break;
  }
  if (error.validation) {
    const part = (error.validationContext ?? 'body') as HttpPart;
    const fields = mapAjvErrors(error.validation as never, part);
    // The public API reports a body that fails to decode by that failure alone (API-SPEC
    // Errors, Details 2); the web app's forms are shown every field's error at once.
    if (fields.length > 0) return validationError(part === 'body' && publicApi ? inSeries(fields) : fields);
  }
  if (error instanceof SyntaxError || error.statusCode === 400)
    return new ApiError('bad_request', 'Malformed request');
  return null;
}

/** Seconds a client is told to wait when the database is unavailable (docs/operations.md). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** A database outage: 503 with Retry-After, never a 500 (docs/api-decisions.md). */
export const serviceUnavailable = () =>
  new ApiError(
    'service_unavailable',
    `The service is temporarily unavailable; retry in ${UNAVAILABLE_RETRY_AFTER_SECONDS} seconds`,
    undefined,
    { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
  );

export function toApiError(error: unknown, bodyLimit: number, publicApi = false): ApiError | null {
  if (error instanceof ApiError) return error;
  // A transaction still aborted by deadlocks after its attempts (src/db/transaction.ts):
  // the moment, not the request, was wrong.
  if (isDatabaseUnavailable(error) || isTransientConflict(error)) return serviceUnavailable();
  return fromFastify(error as FastifyError, bodyLimit, publicApi);
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply
    .code(STATUS[error.type])
    .type('application/json; charset=utf-8')
    .send(envelope(error, request.url.split('?')[0] ?? '/', request.id));
}

/**
 * The cause of the 503s of an outage is logged once a second per kind of cause: every
 * request still has its access log line, but the same cause once per request doubled the
 * log while the database was down, and on a full disk the log was written to the disk that
 * was full.
 */
export const OUTAGE_CAUSE_LOG_INTERVAL_MS = FAILURE_LOG_INTERVAL_MS;

/** The error's code or its cause's (a refused connection, SQLSTATE 53100 of a full disk). */
function causeCode(error: unknown): string {
  for (let e = error, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return '';
}

export function registerErrorHandler(
  app: FastifyInstance,
  bodyLimit: number,
  /** Answers a browser's page load of an unknown address itself (the web app's 404 page); false: not one. */
  notFoundPage?: (request: FastifyRequest, reply: FastifyReply) => boolean,
): void {
  const causes = new LogThrottle(OUTAGE_CAUSE_LOG_INTERVAL_MS);
  app.setErrorHandler((error, request, reply) => {
    // The client went away before its body arrived whole (reading it failed with "aborted",
    // ECONNRESET): the request, not the database, is what failed, and no answer reaches it.
    if (request.raw.readableAborted && !(error instanceof ApiError)) {
      request.log.info(
        { err: (error as Error).message },
        'client closed the connection before its body arrived',
      );
      return sendError(request, reply, badRequest('The request body did not arrive whole'));
    }
    const mapped = toApiError(error, bodyLimit, onPublicApi(request));
    if (mapped?.type === 'service_unavailable' && !(error instanceof ApiError)) {
      const why = isTransientConflict(error) ? 'transaction aborted by deadlocks' : 'database unavailable';
      causes.maybe(`${why}:${causeCode(error)}`, (suppressed) =>
        request.log.warn({ err: (error as Error).message, ...counted(suppressed) }, `${why}; answered 503`),
      );
    }
    if (mapped) return sendError(request, reply, mapped);
    request.log.error({ err: error }, 'unhandled error');
    return sendError(request, reply, new ApiError('internal_error', INTERNAL_DETAIL));
  });
  app.setNotFoundHandler((request, reply) => {
    if (notFoundPage?.(request, reply)) return reply;
    return sendError(request, reply, noRoute(request));
  });
}

/** The 404 of a path no route matches. */
export function noRoute(request: FastifyRequest): ApiError {
  return new ApiError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`);
}
