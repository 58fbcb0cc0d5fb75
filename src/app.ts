import type { FastifyPluginAsync } from 'fastify';
import { accountRoutes } from './accounts/internal-routes/account.js';
import { authRoutes } from './accounts/internal-routes/auth.js';
import { sessionRoutes } from './accounts/internal-routes/session.js';
import { totpRoutes } from './accounts/internal-routes/totp.js';
import { getOrgMeRoute, OrganizationSchema } from './accounts/routes/get-org-me.js';
import type { OrganizationService } from './accounts/service.js';
import { activityRoutes } from './activity/internal-routes/activity.js';
import { assetViewRoutes } from './assets/internal-routes/views.js';
import { assetWriteRoutes } from './assets/internal-routes/writes.js';
import { assetRoutes } from './assets/routes/index.js';
import { AssetSchema } from './assets/schemas.js';
import type { AssetService } from './assets/service.js';
import { liveRoutes } from './events/internal-routes/live.js';
import { webhookRoutes } from './events/internal-routes/webhooks.js';
import { eventSchemaRoute } from './events/routes/event-schema.js';
import { databaseReadiness, type ReadinessCheck } from './http/health.js';
import type { HttpMetrics } from './http/metrics.js';
import type { RateLimitStore } from './http/rate-limit/types.js';
import { type App, createHttpServer, type ServerOptions } from './http/server.js';
import { brokerRoutes } from './ingest/internal-routes/broker.js';
import { handheldRoutes } from './ingest/internal-routes/handheld.js';
import { readerProblemRoutes } from './ingest/internal-routes/reader-problems.js';
import { readerRoutes } from './ingest/internal-routes/readers.js';
import type { ReaderService } from './ingest/readers-service.js';
import { readerWebhookRoutes } from './ingest/routes/webhook.js';
import type { IngestService } from './ingest/service.js';
import type { InternalServices } from './internal-services.js';
import type { ApiKeyAuthenticator } from './keys/authenticate.js';
import { keyRoutes } from './keys/internal-routes/keys.js';
import { locationViewRoutes } from './locations/internal-routes/views.js';
import { locationWriteRoutes } from './locations/internal-routes/writes.js';
import { LocationSchema, locationRoutes } from './locations/routes/index.js';
import type { LocationService } from './locations/service.js';
import { TagRequestSchema, TagSchema } from './master-data/fields.js';
import { invitationRoutes } from './members/internal-routes/invitations.js';
import { memberRoutes } from './members/internal-routes/members.js';
import { spreadsheetRoutes } from './spreadsheet/internal-routes/import-export.js';
import { tagRoutes } from './tags/routes/tag-routes.js';
import type { TagService } from './tags/service.js';
import { reportRoutes } from './tracking/internal-routes/report.js';
import { trackingRoutes } from './tracking/routes/index.js';
import { HistoryRowSchema, ReportRowSchema } from './tracking/schemas.js';
import type { TrackingService } from './tracking/service.js';

export type { App };

export interface AppServices {
  organizations: OrganizationService;
  authenticator: ApiKeyAuthenticator;
  rateLimit: RateLimitStore;
  /** Reader webhook messages per reader (TAGTRAIL_WEBHOOK_RATE_LIMIT per minute). */
  webhookRateLimit: RateLimitStore;
  /** /internal/ requests per web session (TAGTRAIL_SESSION_RATE_LIMIT per minute). */
  sessionRateLimit: RateLimitStore;
  tags: TagService;
  assets: AssetService;
  tracking: TrackingService;
  locations: LocationService;
  internal: InternalServices;
  readers: ReaderService;
  ingest: IngestService;
  metrics: { http: HttpMetrics };
}

export interface AppOptions
  extends Pick<ServerOptions, 'bodyLimit' | 'logger' | 'connection' | 'tls' | 'lameDuck'> {
  /** Further route plugins (tests), registered after the domain routes and before the 405 answers. */
  routes?: FastifyPluginAsync[];
  /** What /readyz checks (the runtime adds the MQTT broker); default: the database. */
  readiness?: ReadinessCheck[];
  /** TAGTRAIL_METRICS_TOKEN: the bearer token of GET /metrics; unset, that endpoint is off. */
  metricsToken?: string;
}

/** Every /internal/ route: the web app's back end (docs/web-app.md). */
const internalRoutes = (s: InternalServices): FastifyPluginAsync[] =>
  [
    authRoutes,
    sessionRoutes,
    keyRoutes,
    memberRoutes,
    invitationRoutes,
    readerRoutes,
    readerProblemRoutes,
    brokerRoutes,
    handheldRoutes,
    locationViewRoutes,
    locationWriteRoutes,
    assetViewRoutes,
    assetWriteRoutes,
    reportRoutes,
    spreadsheetRoutes,
    webhookRoutes,
    liveRoutes,
    activityRoutes,
    accountRoutes,
    totpRoutes,
  ].map((routes) => routes(s));

/**
 * The composition root of the HTTP service: the domains' routes and shared schemas wired
 * onto the infrastructure of src/http/ (which itself knows no domain).
 */
export function buildServer(services: AppServices, options: AppOptions): Promise<App> {
  return createHttpServer(
    {
      authenticator: services.authenticator,
      rateLimit: services.rateLimit,
      sessions: services.internal.sessions,
      sessionRateLimit: services.sessionRateLimit,
      trustProxy: services.internal.trustProxy,
      secureCookies: services.internal.publicAddress.configuredHttps,
    },
    {
      bodyLimit: options.bodyLimit,
      logger: options.logger,
      connection: options.connection,
      tls: options.tls,
      lameDuck: options.lameDuck,
      schemas: [
        OrganizationSchema,
        TagSchema,
        TagRequestSchema,
        AssetSchema,
        HistoryRowSchema,
        ReportRowSchema,
        LocationSchema,
      ],
      routes: [
        getOrgMeRoute,
        assetRoutes(services.assets),
        tagRoutes('asset', services.tags),
        tagRoutes('location', services.tags),
        locationRoutes(services.locations),
        trackingRoutes(services.tracking),
        ...internalRoutes(services.internal),
        readerWebhookRoutes(services.readers, services.ingest, services.webhookRateLimit),
        eventSchemaRoute,
        ...(options.routes ?? []),
      ],
      readiness: options.readiness ?? [databaseReadiness(services.internal.db)],
      metrics: { metrics: services.metrics.http, token: options.metricsToken },
    },
  );
}
