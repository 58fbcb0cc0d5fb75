import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { PublicAuthenticator, SessionAuthenticator } from '../auth-types.js';
import type { TlsPair } from '../tls/tls-files.js';
import { limitConnectionsPerAddress } from './connection-gate.js';
import {
  type ConnectionLimits,
  connectionOptions,
  DEFAULT_CONNECTION_LIMITS,
  registerConnectionHandling,
} from './connections.js';
import { type LameDuck, registerDrain } from './drain.js';
import { registerErrorHandler } from './error-handler.js';
import { registerEventStreams } from './event-stream.js';
import { healthRoutes, type ReadinessCheck } from './health.js';
import { withRedaction } from './log-redaction.js';
import { type MetricsEndpoint, metricsRoutes, registerRequestMetrics } from './metrics.js';
import { registerOpenApi } from './openapi.js';
import { registerBodyParsing } from './plugins/content-type.js';
import { registerInternalAuth } from './plugins/internal-auth.js';
import { registerListFilterContext } from './plugins/list-filter-context.js';
import { acceptAllMethods, registerMethodNotAllowed, trackRoutes } from './plugins/methods.js';
import { registerNulFreeInputs } from './plugins/nul-free-inputs.js';
import {
  type RawCaller,
  rateLimitPublic,
  rawRateLimitPublic,
  registerPublicSurface,
} from './plugins/public-surface.js';
import { genReqId, registerRequestId } from './plugins/request-id.js';
import { registerStrictInputs } from './plugins/strict-inputs.js';
import type { RateLimitStore } from './rate-limit/types.js';
import { originForm } from './request-target.js';
import { ErrorEnvelope } from './schemas/common.js';
import { closeConnectionsAtStop } from './stop-connections.js';
import { httpsOptions, registerStrictTransportSecurity } from './tls.js';
import { createAjv } from './validation/ajv.js';
import { loadWebApp, notFoundPage, registerWebBuildHeader, webAppRoutes } from './web-static.js';

/** What the shared contract needs from the domains: the ports they implement. */
export interface HttpDependencies {
  /** API keys of the public surface (/api/). */
  authenticator: PublicAuthenticator;
  rateLimit: RateLimitStore;
  /** Web sessions of /internal/. */
  sessions: SessionAuthenticator;
  /** Requests per web session on /internal/, a bucket store of its own. */
  sessionRateLimit: RateLimitStore;
  /** TAGTRAIL_TRUST_PROXY: take the client address and protocol from X-Forwarded-* headers. */
  trustProxy: boolean;
  /**
   * Every cookie Secure, whatever the request's protocol: people reach the service over
   * https (TAGTRAIL_PUBLIC_URL), through a proxy whose X-Forwarded-Proto is not trusted.
   */
  secureCookies: boolean;
}

export interface ServerOptions {
  bodyLimit: number;
  logger?: FastifyServerOptions['logger'];
  /** Shared schemas referenced by `$ref` from route schemas (and listed in the OpenAPI components). */
  schemas: TSchema[];
  /** The route plugins, registered after the shared contract and before the 405 answers. */
  routes: FastifyPluginAsync[];
  /** What /readyz checks. */
  readiness: ReadinessCheck[];
  /** Connection bounds; DEFAULT_CONNECTION_LIMITS for what is not given. */
  connection?: Partial<ConnectionLimits>;
  /** Request metrics and `GET /metrics` (docs/metrics.md); without it neither exists. */
  metrics?: MetricsEndpoint;
  /** HTTPS with this certificate and key (TAGTRAIL_TLS_CERT/KEY); plain HTTP without it. */
  tls?: TlsPair;
  /** The drain before a stop: /readyz 503 and `Connection: close` once it begins (src/http/drain.ts). */
  lameDuck?: LameDuck;
}

export type App = FastifyInstance;

/**
 * Assembles the HTTP server: the shared contract (request ids, rate limit, auth, 415/405,
 * strict inputs, the error envelope) first, then the routes the composition root hands in
 * (src/app.ts), then the web app, then the 405 answers for every path, computed from the
 * routes that were registered.
 */
export async function createHttpServer(deps: HttpDependencies, options: ServerOptions): Promise<App> {
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connection };
  const publicRateLimit = {
    request: (request: FastifyRequest, reply: FastifyReply) => rateLimitPublic(deps, request, reply),
    raw: (caller: RawCaller, mode: 'peek' | 'take') => rawRateLimitPublic(deps, caller, mode),
    trustProxy: deps.trustProxy,
  };
  const connection = connectionOptions(limits, publicRateLimit);
  const tls = options.tls && { https: httpsOptions(options.tls, connection.http, limits.headersTimeoutMs) };
  // Typed as the plain server: an https.Server is one to every hook and route.
  const app = Fastify({
    ...connection,
    ...(tls as object),
    // Secrets in a URL's query, in headers or in fields are masked (src/http/log-redaction.ts).
    logger: withRedaction(options.logger),
    genReqId,
    // One line per request, written by our onResponse hook with the fields we want.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: options.bodyLimit,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 500 },
    // One spelling of the path for the router and every hook (src/http/request-target.ts).
    rewriteUrl: (req) => originForm(req.url ?? '/'),
    // The peer (the proxy) only: the entry it added, the last of X-Forwarded-For, is the
    // client's address (`true` would take the first, which the client writes itself).
    trustProxy: deps.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const ajv = createAjv();
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema));
  for (const schema of [ErrorEnvelope, ...options.schemas]) {
    app.addSchema(schema);
    ajv.addSchema(schema);
  }

  acceptAllMethods(app);
  const routesByUrl = trackRoutes(app);
  const web = loadWebApp();
  registerErrorHandler(app, options.bodyLimit, notFoundPage(web));
  registerRequestId(app);
  // Early, so the hooks after it that refuse a request (the session's among them) leave it set.
  registerWebBuildHeader(app, web.build);
  if (options.tls) registerStrictTransportSecurity(app);
  if (options.metrics) registerRequestMetrics(app, options.metrics.metrics);
  registerEventStreams(app, options.metrics?.metrics);
  registerConnectionHandling(app, publicRateLimit);
  if (!deps.trustProxy) limitConnectionsPerAddress(app.server, limits.maxConnectionsPerAddress);
  closeConnectionsAtStop(app, limits.stopGraceMs);
  if (options.lameDuck) registerDrain(app, options.lameDuck);
  registerStrictInputs(app);
  registerBodyParsing(app);
  registerNulFreeInputs(app);
  registerListFilterContext(app);
  registerPublicSurface(app, deps);
  // The session hook on the root instance, so it sees every /internal/ route registered after it.
  registerInternalAuth(app, deps);
  await registerOpenApi(app);

  for (const plugin of options.routes) await app.register(plugin);
  await app.register(healthRoutes(options.readiness, options.lameDuck));
  if (options.metrics) await app.register(metricsRoutes(options.metrics));
  await app.register(webAppRoutes({ web }));

  await app.register(async (root) => registerMethodNotAllowed(root, routesByUrl));
  return app;
}
