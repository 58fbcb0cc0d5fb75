import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { ApiError } from '../errors.js';
import type { StreamEndReason } from './event-stream.js';
import { isEventStream } from './streamed-requests.js';

/**
 * What the HTTP server needs of the metrics (src/metrics/ implements it): one observation
 * per answered request, the event streams open and ended, and the exposition for
 * `GET /metrics`.
 */
export interface HttpMetrics {
  /** `route` is the route's pattern (`/api/v1/assets/:id`), never the URL, so series stay few. */
  observeRequest(request: { method: string; route: string; status: number; seconds: number }): void;
  /** An event stream opened (+1) or ended (-1). */
  streamsOpen(change: 1 | -1): void;
  /** An event stream that ended: how long it was open, and why it ended. */
  observeStreamEnd(stream: { route: string; reason: StreamEndReason; seconds: number }): void;
  /** The Prometheus text exposition of every series, and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

export interface MetricsEndpoint {
  metrics: HttpMetrics;
  /** TAGTRAIL_METRICS_TOKEN: the bearer token a scraper sends. Unset: /metrics is off (404). */
  token?: string;
}

export const METRICS_PATH = '/metrics';

/** The label of requests no route matched (404s of arbitrary URLs must not each make a series). */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * Every answered request, with its route pattern, status and time, into the metrics. Event
 * streams are observed when they end instead (src/http/event-stream.ts).
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: HttpMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    if (isEventStream(request)) return done();
    metrics.observeRequest({
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
    done();
  });
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Compares digests, so neither the token's length nor its content leaks through timing. */
function tokenMatches(header: string | undefined, expected: Buffer): boolean {
  const match = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

/**
 * `GET /metrics` for Prometheus (docs/metrics.md). It is an operator's endpoint, outside
 * /api/ (no API key, no rate limit, not in the OpenAPI document): with TAGTRAIL_METRICS_TOKEN
 * set, a scraper presents it as a bearer token (401 otherwise); unset, the endpoint is off
 * and answers 404, because series name readers' families, routes and volumes that are not
 * for whoever can reach the public port.
 */
export const metricsRoutes =
  (endpoint: MetricsEndpoint): FastifyPluginAsync =>
  async (app) => {
    const expected = endpoint.token === undefined ? undefined : digest(endpoint.token);
    app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
      if (!expected) {
        throw new ApiError('not_found', 'Metrics are off: set TAGTRAIL_METRICS_TOKEN to serve them');
      }
      if (!tokenMatches(request.headers.authorization, expected)) {
        throw new ApiError('unauthorized', 'A valid metrics bearer token is required', undefined, {
          'www-authenticate': 'Bearer realm="metrics"',
        });
      }
      const { contentType, body } = await endpoint.metrics.render();
      return reply.header('cache-control', 'no-store').type(contentType).send(body);
    });
  };
