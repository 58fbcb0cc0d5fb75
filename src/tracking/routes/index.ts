import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TrackingService } from '../service.js';
import { getAssetHistoryRoute } from './get-asset-history.js';
import { getAssetLocationReportRoute } from './get-asset-location-report.js';

export const trackingRoutes =
  (tracking: TrackingService): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(getAssetHistoryRoute(tracking));
    await app.register(getAssetLocationReportRoute(tracking));
  };
