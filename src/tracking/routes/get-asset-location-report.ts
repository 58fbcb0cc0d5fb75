import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/plugins/public-surface.js';
import { errorResponses, ListEnvelope } from '../../http/schemas/common.js';
import { ReportQuery } from '../schemas.js';
import type { TrackingService } from '../service.js';

export const getAssetLocationReportRoute =
  (tracking: TrackingService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/api/v1/reports/asset-locations',
      {
        config: { scopes: ['tracking:read'] },
        schema: {
          operationId: 'getAssetLocationReport',
          tags: ['tracking'],
          summary: 'Where every scanned asset is now',
          description: `One row per asset that has been scanned. The asset pair (asset_id | asset_external_key) and the
location pair (location_id | location_external_key) are each exclusive and intersect. Assets outside their validity
window are excluded; a location outside its window, or soft-deleted, shows as null. q matches asset name, asset
external_key and active tag values, case-insensitively. A location filter matches only a location that is shown.
Default sort: -asset_last_seen; ties go by asset id. Sorting by location_external_key puts null locations last
ascending and first descending.`,
          querystring: ReportQuery,
          response: { 200: ListEnvelope(Type.Ref('AssetLocationReportRow')), ...errorResponses() },
        },
      },
      async (request) => tracking.report(principalOf(request).orgId, request.query),
    );
  };
