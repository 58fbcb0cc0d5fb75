import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, badRequest } from '../../errors.js';
import { noRoute } from '../error-handler.js';
import { decodeJsonBytes } from '../json-body.js';
import { methodNotAllowed } from './methods.js';
import { emptySegment } from './strict-inputs.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * An upload route: its body is one of these media types, handed to the handler as the
     * raw request stream (not read into memory, not JSON); the route bounds its size.
     */
    streamedBody?: readonly string[];
  }
}

const JSON_TYPE = 'application/json';
const MERGE_PATCH_TYPE = 'application/merge-patch+json';

function mediaType(header: string | undefined): string | undefined {
  return header?.split(';')[0]?.trim().toLowerCase();
}

/** The 415 rules of API-SPEC Errors, decided on the header before any body is read. */
export function contentTypeError(method: string, header: string | undefined): ApiError | null {
  const type = mediaType(header);
  if (type === 'multipart/form-data')
    return new ApiError('unsupported_media_type', 'multipart/form-data is not accepted');
  if (method === 'POST' && type !== JSON_TYPE) {
    return new ApiError('unsupported_media_type', `POST requires Content-Type: ${JSON_TYPE}`);
  }
  if (method === 'PATCH' && type !== MERGE_PATCH_TYPE) {
    return new ApiError('unsupported_media_type', `PATCH requires Content-Type: ${MERGE_PATCH_TYPE}`);
  }
  return null;
}

/**
 * RFC 9110 8.4: a body in a content coding the server does not decode is 415, with
 * Accept-Encoding naming what it takes. The service decodes none: a gzip body was read as
 * its compressed bytes (400, not UTF-8), and a plain one labelled gzip was taken as it came.
 */
export function contentEncodingError(header: string | undefined): ApiError | null {
  const codings = (header ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return null;
  return new ApiError(
    'unsupported_media_type',
    `Content-Encoding ${codings.join(', ')} is not accepted; send the body uncompressed`,
    undefined,
    { 'accept-encoding': 'identity' },
  );
}

const carriesBody = (req: FastifyRequest) =>
  req.method === 'POST' || req.method === 'PATCH' || req.method === 'PUT';

const sendsBody = (req: FastifyRequest) =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** An undeclared method (405) or an unknown path (404) is answered as such, whatever the body. */
const answeredWithoutBody = (req: FastifyRequest) =>
  req.routeOptions.url === undefined || req.routeOptions.config.methodNotAllowed === true;

/**
 * JSON bodies only. Bodies of other methods (DELETE is not checked) are read and ignored.
 * A POST or PATCH body must be a JSON object.
 */
export function registerBodyParsing(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parseJson = (req: FastifyRequest, bytes: Buffer) => {
    if (!carriesBody(req) || answeredWithoutBody(req)) return undefined;
    const value = decodeJsonBytes(bytes);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw badRequest('Request body must be a JSON object');
    }
    return value;
  };
  for (const type of [JSON_TYPE, MERGE_PATCH_TYPE]) {
    app.addContentTypeParser(type, { parseAs: 'buffer' }, (req, body, done) => {
      try {
        done(null, parseJson(req, body as Buffer));
      } catch (err) {
        done(err as Error, undefined);
      }
    });
  }
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => done(null, undefined));
  // Uploads (text/csv): the stream itself for a route that takes it; elsewhere read and
  // dropped like any other body (the preParsing hook below has refused it where it matters).
  app.addContentTypeParser('text/csv', (req, payload, done) => {
    if (req.routeOptions.config.streamedBody?.includes('text/csv')) {
      done(null, payload);
      return;
    }
    payload.on('error', (err) => done(err, undefined));
    payload.on('end', () => done(null, undefined));
    payload.resume();
  });

  app.addHook('preParsing', async (request) => {
    if (answeredWithoutBody(request)) {
      // Answered here, before the body: read first, a body over the limit was 413 and a
      // Content-Type Fastify cannot parse 415, where the path's answer is 405 (or 404).
      if (request.method === 'GET' || request.method === 'HEAD') return;
      if (request.routeOptions.url === undefined) throw noRoute(request);
      throw emptySegment(request) ?? methodNotAllowed(request);
    }
    const streamed = request.routeOptions.config.streamedBody;
    if (streamed) {
      const type = mediaType(request.headers['content-type']);
      if (type !== undefined && streamed.includes(type)) return;
      throw new ApiError(
        'unsupported_media_type',
        `this upload requires Content-Type: ${streamed.join(' or ')}`,
      );
    }
    const onApi = request.url.startsWith('/api/');
    if (request.url.startsWith('/internal/')) {
      // The web app's back end: a body, or a route that takes one, must be JSON (a
      // cross-site form cannot send that type); a POST without either (sign-out) need not.
      if (!request.routeOptions.schema?.body && !sendsBody(request)) return;
    } else if (!onApi) return;
    const error =
      contentTypeError(request.method, request.headers['content-type']) ??
      (carriesBody(request) ? contentEncodingError(request.headers['content-encoding']) : null);
    if (error) throw error;
    // API-SPEC 415 rules: "DELETE is not checked". Its body is read and dropped whatever its
    // type, but Fastify refuses (415) a Content-Type it cannot parse (`garbage`, `text`)
    // before any parser runs; the type it sees is replaced (the raw header stays as sent).
    if (request.method === 'DELETE' && onApi && request.headers['content-type'] !== undefined) {
      request.headers = { 'content-type': 'application/octet-stream' };
    }
  });
  // A POST or PATCH that names JSON but sends no bytes never reaches the parser.
  app.addHook('preValidation', (request, _reply, done) => {
    if (carriesBody(request) && request.body === undefined && request.routeOptions.schema?.body) {
      return done(badRequest('Request body must be a JSON object'));
    }
    done();
  });
}
