import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { getOrgMeRoute, OrganizationSchema } from '../accounts/routes/get-org-me.js';
import type { OrganizationService } from '../accounts/service.js';
import { assetRoutes } from '../assets/routes/index.js';
import { AssetSchema } from '../assets/schemas.js';
import type { AssetService } from '../assets/service.js';
import type { ReaderService } from '../ingest/readers-service.js';
import { readerWebhookRoutes } from '../ingest/routes/webhook.js';
import type { IngestService } from '../ingest/service.js';
import type { InternalServices } from '../internal-services.js';
import type { ApiKeyAuthenticator } from '../keys/authenticate.js';
import { LocationSchema, locationRoutes } from '../locations/routes/index.js';
import type { LocationService } from '../locations/service.js';
import { TagRequestSchema, TagSchema } from '../master-data/fields.js';
import { tagRoutes } from '../tags/routes/tag-routes.js';
import type { TagService } from '../tags/service.js';
import { trackingRoutes } from '../tracking/routes/index.js';
import { HistoryRowSchema, ReportRowSchema } from '../tracking/schemas.js';
import type { TrackingService } from '../tracking/service.js';
import { registerErrorHandler } from './error-handler.js';
import { databaseReadiness, healthRoutes, type ReadinessCheck } from './health.js';
import { internalRoutes, registerInternalSurface } from './internal-routes.js';
import { registerOpenApi } from './openapi.js';
import { registerBodyParsing } from './plugins/content-type.js';
import { registerListFilterContext } from './plugins/list-filter-context.js';
import { registerMethodNotAllowed, trackRoutes } from './plugins/methods.js';
import { registerPublicSurface } from './plugins/public-surface.js';
import { genReqId, registerRequestId } from './plugins/request-id.js';
import { registerStrictInputs } from './plugins/strict-inputs.js';
import type { RateLimitStore } from './rate-limit/types.js';
import { ErrorEnvelope } from './schemas/common.js';
import { createAjv } from './validation/ajv.js';
import { webAppRoutes } from './web-static.js';

export interface AppServices {
  organizations: OrganizationService;
  authenticator: ApiKeyAuthenticator;
  rateLimit: RateLimitStore;
  tags: TagService;
  assets: AssetService;
  tracking: TrackingService;
  locations: LocationService;
  internal: InternalServices;
  readers: ReaderService;
  ingest: IngestService;
}

export interface ServerOptions {
  bodyLimit: number;
  logger?: FastifyServerOptions['logger'];
  /** Further route plugins, registered after the built-in ones and before the 405 answers. */
  routes?: FastifyPluginAsync[];
  /** What /readyz checks (the runtime adds the MQTT broker); default: the database. */
  readiness?: ReadinessCheck[];
}

export type App = FastifyInstance;

/**
 * Assembles the HTTP server: the shared contract (request ids, rate limit, auth, 415/405,
 * strict inputs, the error envelope) first, then the resource routes, then the 405
 * answers for every path, computed from the routes that were registered.
 */
export async function buildServer(services: AppServices, options: ServerOptions): Promise<App> {
  const app = Fastify({
    logger: options.logger ?? false,
    genReqId,
    // One line per request, written by our onResponse hook with the fields we want.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: options.bodyLimit,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 500 },
    trustProxy: services.internal.trustProxy,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const ajv = createAjv();
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema));
  for (const schema of [
    ErrorEnvelope,
    OrganizationSchema,
    TagSchema,
    TagRequestSchema,
    AssetSchema,
    HistoryRowSchema,
    ReportRowSchema,
    LocationSchema,
  ]) {
    app.addSchema(schema);
    ajv.addSchema(schema);
  }

  const routesByUrl = trackRoutes(app);
  registerErrorHandler(app, options.bodyLimit);
  registerRequestId(app);
  registerStrictInputs(app);
  registerBodyParsing(app);
  registerListFilterContext(app);
  registerPublicSurface(app, services);
  registerInternalSurface(app, services.internal);
  await registerOpenApi(app);

  await app.register(getOrgMeRoute(services.organizations));
  await app.register(assetRoutes(services.assets));
  await app.register(tagRoutes('asset', services.tags));
  await app.register(tagRoutes('location', services.tags));
  await app.register(locationRoutes(services.locations));
  await app.register(trackingRoutes(services.tracking));
  await app.register(internalRoutes(services.internal));
  await app.register(readerWebhookRoutes(services.readers, services.ingest));
  await app.register(healthRoutes(options.readiness ?? [databaseReadiness(services.internal.db)]));
  for (const plugin of options.routes ?? []) await app.register(plugin);
  await app.register(webAppRoutes());

  await app.register(async (root) => registerMethodNotAllowed(root, routesByUrl));
  return app;
}
