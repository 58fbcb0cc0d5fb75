import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type {
  FastifyError,
  FastifyHttpOptions,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import { ApiError } from '../errors.js';
import { envelope, sendError, statusOf, UNAVAILABLE_RETRY_AFTER_SECONDS } from './error-handler.js';
import type { RawCaller } from './plugins/public-surface.js';
import { genReqId } from './plugins/request-id.js';
import type { RateDecision } from './rate-limit/types.js';
import { isPublicPath, originForm } from './request-target.js';
import { STOP_GRACE_MS } from './stop-connections.js';

/**
 * How long a client may take and how much it may send before a route sees the request
 * (docs/operations.md "Connections"). A slow-loris client that trickles headers is cut off
 * after `headersTimeoutMs`; an idle keep-alive connection is closed after `keepAliveTimeoutMs`.
 */
export interface ConnectionLimits {
  /** The request line and headers must have arrived within this time of the request's start. */
  headersTimeoutMs: number;
  /** The whole request, body included, must have arrived within this time. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time without a request. */
  keepAliveTimeoutMs: number;
  /** Request line plus headers, in bytes; beyond it: 431 (or 414 when the request line alone is longer). */
  maxHeaderBytes: number;
  /** At the stop, how long requests in flight may go on before their connections are closed (./stop-connections.ts). */
  stopGraceMs: number;
  /** Connections one remote address holds at once; more are closed unanswered (./connection-gate.ts). */
  maxConnectionsPerAddress: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  // Above the 60 s idle timeout of common load balancers, so they never reuse a connection the server just closed.
  keepAliveTimeoutMs: 65_000,
  // Node's default is 16 KiB; a long session cookie and a long bearer token together must fit.
  maxHeaderBytes: 32 * 1024,
  stopGraceMs: STOP_GRACE_MS,
  maxConnectionsPerAddress: 1024,
};

/** After an error answer on a raw socket, how long its remaining input is read before the socket is destroyed. */
const LINGER_MS = 1_000;

const answered = new WeakSet<Socket>();

/**
 * The public rate limit as the raw answers need it (src/http/plugins/public-surface.ts):
 * for a routed request (Fastify's own errors), and for a caller known only by its
 * connection and what could be read of its request head.
 */
export interface PublicRateLimit {
  request(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  raw(caller: RawCaller, mode: 'peek' | 'take'): Promise<RateDecision | undefined>;
  /** TAGTRAIL_TRUST_PROXY: the client address is the last X-Forwarded-For entry, as for `request.ip`. */
  trustProxy: boolean;
}

/** The headers of the complete lines of a request head (after its request line), lower-cased, first value of each. */
function headFields(raw: Buffer): Map<string, string> {
  const fields = new Map<string, string>();
  const text = raw.toString('latin1');
  const lines = text.split('\r\n');
  // The last piece is not a whole line (or is empty).
  for (const line of lines.slice(1, -1)) {
    if (line === '') break;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim());
  }
  return fields;
}

/**
 * The client address a trusted proxy forwarded: the last X-Forwarded-For entry, the one the
 * proxy added, as Fastify's `request.ip` (trustProxy: 1 hop). Entries before it are what the
 * client sent, and a client must not choose its own address for the per-address limits.
 */
export const forwardedClient = (value: string | undefined): string | undefined =>
  value?.split(',').at(-1)?.trim() || undefined;

/** The caller of a request head, as `rateLimitPublic` would identify it. */
function rawCaller(raw: Buffer | undefined, socket: Socket, trustProxy: boolean): RawCaller {
  const fields = raw ? headFields(raw) : new Map<string, string>();
  const forwarded = trustProxy ? forwardedClient(fields.get('x-forwarded-for')) : undefined;
  return {
    authorization: fields.get('authorization'),
    xApiKey: fields.get('x-api-key'),
    address: forwarded || socket.remoteAddress || 'unknown',
  };
}

const rateLimitLines = (decision: RateDecision | undefined): string[] =>
  decision
    ? [
        `x-ratelimit-limit: ${decision.limit}`,
        `x-ratelimit-remaining: ${decision.remaining}`,
        `x-ratelimit-reset: ${decision.resetSeconds}`,
      ]
    : [];

/**
 * The reply of each request Fastify is working on, by its raw response: a request whose body
 * is cut short or never comes is answered by the client-error handler, which gets only the
 * socket, and should still carry that request's id, path and rate-limit headers.
 */
const inFlightReplies = new WeakMap<ServerResponse, FastifyReply>();

/** Headers of the in-flight reply the raw answer keeps (its rate-limit headers, and any other the hooks set). */
const OWN_HEADERS = new Set([
  'content-type',
  'content-length',
  'connection',
  'cache-control',
  'x-request-id',
]);

function keptHeaders(headers: Record<string, string | number | string[] | undefined>): string[] {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || OWN_HEADERS.has(name.toLowerCase())) continue;
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`);
  }
  return lines;
}

/**
 * The path of the request line at the start of `raw` (the bytes the parser was given when it
 * failed), and that line's length (all of `raw` when the line does not end in it).
 */
function requestTarget(raw: Buffer | undefined): { path: string | undefined; lineBytes: number } {
  if (!raw) return { path: undefined, lineBytes: 0 };
  // Any method token (a malformed one too), origin- or absolute-form, as the router reads it.
  const match = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20} ((?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?[^\s?]*)/.exec(
    raw.subarray(0, 4096).toString('latin1'),
  );
  const target = match?.[1] ? originForm(match[1]) : undefined;
  const read = target?.startsWith('/') ? target : undefined;
  const path = read && read.length > 256 ? `${read.slice(0, 256)}...` : read;
  const eol = raw.indexOf('\n');
  return { path, lineBytes: eol < 0 ? raw.length : eol };
}

/**
 * The bound on the whole request: never shorter than the headers' (a request timeout left at
 * its default follows a longer headers timeout, src/config.ts), so the 408 names the bound
 * that applies, not the setting's default.
 */
function wholeRequestMs(limits: ConnectionLimits): number {
  return Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs);
}

/** What Node's HTTP parser (and its timeouts) raise, as our categories. */
function fromClientError(
  err: NodeJS.ErrnoException,
  head: Buffer | undefined,
  limits: ConnectionLimits,
): ApiError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(
        'request_timeout',
        `The request did not arrive in time (headers within ${limits.headersTimeoutMs / 1000} s, the whole request within ${wholeRequestMs(limits) / 1000} s)`,
      );
    case 'HPE_HEADER_OVERFLOW': {
      const target = requestTarget(head);
      // The request line alone filled the limit: the URL is what is too long.
      return target.path !== undefined && target.lineBytes >= limits.maxHeaderBytes
        ? new ApiError('uri_too_long', `The request line must not exceed ${limits.maxHeaderBytes} bytes`)
        : new ApiError(
            'header_fields_too_large',
            `The request line and headers must not exceed ${limits.maxHeaderBytes} bytes`,
          );
    }
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError('payload_too_large', 'Chunk extensions are too large');
    case 'HPE_INVALID_EOF_STATE':
      return new ApiError('bad_request', 'The connection was closed before the request body was complete');
    default:
      return new ApiError('bad_request', 'Malformed HTTP request');
  }
}

/**
 * Answers what Node's HTTP server would answer by itself (400, 408, 413, 431) with the error
 * envelope and an x-request-id, written on the raw socket because no request exists yet. The
 * connection is half-closed and its remaining input read for a moment before it is destroyed,
 * so the client reads the answer instead of a reset.
 */
function clientErrorHandler(limits: ConnectionLimits, rateLimit: PublicRateLimit) {
  return function onClientError(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    answered.add(socket);
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      // Part of a response is on the wire already: nothing more can be said on this connection.
      socket.destroy();
      return;
    }
    // A request already routed (its body cut short or too slow) answers as itself.
    const reply = inFlight ? inFlightReplies.get(inFlight) : undefined;
    const rawPacket = (err as { rawPacket?: Buffer }).rawPacket;
    // What Node read of the head: the last chunk of a parse error (the whole head of most
    // requests), nothing for a headers timeout. Keeping every head's bytes would name the
    // path and key of those too, but takes sockets off Node's native read path: measured
    // 0.01 ms more CPU on every GET /assets/{id} (about 7% of the service's share).
    const head = reply ? undefined : rawPacket;
    const error = fromClientError(err, head ?? rawPacket, limits);
    const requestId = reply?.request.id ?? genReqId();
    const readPath = requestTarget(head).path;
    const instance = reply?.request.url.split('?')[0] ?? readPath ?? '/';
    // A request never parsed is not counted, but its answer reports the bucket it would have been counted in.
    // Of one of which nothing was read (a headers timeout: Node keeps no bytes for it), the
    // surface is unknown and the caller known by its address: it may be public, so it gets
    // the address's bucket.
    const decision =
      !reply && (readPath !== undefined ? isPublicPath(readPath) : head === undefined)
        ? rateLimit.raw(rawCaller(head, socket, rateLimit.trustProxy), 'peek')
        : Promise.resolve(undefined);
    void decision.then((peeked) => {
      if (socket.destroyed || !socket.writable) return;
      const body = JSON.stringify(envelope(error, instance, requestId));
      const status = statusOf(error.type);
      const lines = [
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
        'content-type: application/json; charset=utf-8',
        `content-length: ${Buffer.byteLength(body)}`,
        `x-request-id: ${requestId}`,
        ...(reply ? keptHeaders(reply.getHeaders()) : rateLimitLines(peeked)),
        'cache-control: no-store',
        'connection: close',
      ];
      this.log.info({ request_id: requestId, status, path: instance, code: err.code }, 'client error');
      socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
      socket.resume();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    });
  };
}

/**
 * Fastify's own answers before routing (a path whose percent-escapes do not decode, a path
 * segment over `maxParamLength`), in the envelope; under /api/ with the rate limit applied.
 */
function frameworkErrorHandler(
  rateLimit: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
) {
  return async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-request-id', request.id);
    let answer =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new ApiError('uri_too_long', 'A path segment of the request URL is too long')
        : error.code === 'FST_ERR_BAD_URL'
          ? new ApiError('bad_request', 'The request path is not valid: a percent-escape does not decode')
          : new ApiError('bad_request', 'Malformed request');
    if (isPublicPath(request.url.split('?')[0] ?? '')) {
      try {
        await rateLimit(request, reply);
      } catch (err) {
        if (err instanceof ApiError) answer = err;
      }
    }
    sendError(request, reply, answer);
  };
}

/** The Fastify server options that bound connections and put Node's and Fastify's own answers in the envelope. */
export function connectionOptions(
  limits: ConnectionLimits,
  rateLimit: PublicRateLimit,
): Partial<FastifyHttpOptions<Server>> {
  const requestTimeoutMs = wholeRequestMs(limits);
  return {
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: requestTimeoutMs,
    http: {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // Node checks the timeouts on this interval (default 30 s): a quarter of the bound, at most 1 s.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    clientErrorHandler: clientErrorHandler(limits, rateLimit),
    frameworkErrors: frameworkErrorHandler((request, reply) => rateLimit.request(request, reply)),
    // Our own 503 while closing (registerConnectionHandling), in the envelope.
    return503OnClosing: false,
  };
}

/**
 * Node's own 417 for an `Expect` header other than 100-continue, and the 503 of requests that
 * arrive on open connections while the server is closing, both in the envelope; and each
 * request's reply remembered for the client-error answer. Call after the request-id hook so
 * the 503 carries it.
 */
export function registerConnectionHandling(app: FastifyInstance, rateLimit: PublicRateLimit): void {
  app.addHook('onRequest', (_request, reply, done) => {
    inFlightReplies.set(reply.raw, reply);
    done();
  });
  app.server.on('checkExpectation', async (req: IncomingMessage, res: ServerResponse) => {
    const requestId = genReqId();
    const path = originForm(req.url ?? '/').split('?')[0] ?? '/';
    let error = new ApiError('expectation_failed', 'Only "Expect: 100-continue" is supported');
    const headers: Record<string, string | number> = {};
    if (isPublicPath(path)) {
      // A whole request, parsed: counted like any other on the public surface.
      const header = (name: string) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value[0] : value;
      };
      const forwarded = rateLimit.trustProxy ? forwardedClient(header('x-forwarded-for')) : undefined;
      const decision = await rateLimit.raw(
        {
          authorization: header('authorization'),
          xApiKey: header('x-api-key'),
          address: forwarded || req.socket.remoteAddress || 'unknown',
        },
        'take',
      );
      if (decision) {
        headers['x-ratelimit-limit'] = decision.limit;
        headers['x-ratelimit-remaining'] = decision.remaining;
        headers['x-ratelimit-reset'] = decision.resetSeconds;
        if (!decision.allowed) {
          error = new ApiError(
            'rate_limited',
            `Rate limit of ${decision.limit} requests exceeded; retry later`,
          );
          headers['retry-after'] = String(decision.retryAfterSeconds);
        }
      }
    }
    if (res.destroyed) return;
    const body = JSON.stringify(envelope(error, path, requestId));
    res.writeHead(statusOf(error.type), {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': requestId,
      ...headers,
      connection: 'close',
    });
    res.end(body);
  });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    // Another instance (or this one, restarted) takes the retry.
    done(
      new ApiError('service_unavailable', 'The server is shutting down; retry', undefined, {
        'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
      }),
    );
  });
}
