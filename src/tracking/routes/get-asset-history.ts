import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/plugins/public-surface.js';
import { errorResponses, Id, ListEnvelope } from '../../http/schemas/common.js';
import { HistoryQuery } from '../schemas.js';
import type { TrackingService } from '../service.js';

export const getAssetHistoryRoute =
  (tracking: TrackingService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/api/v1/assets/:asset_id/history',
      {
        config: { scopes: ['tracking:read'], listPath: '/api/v1/assets' },
        schema: {
          operationId: 'getAssetHistory',
          tags: ['tracking'],
          summary: "An asset's location history",
          description: `One row per stay: arrival at a location (event_observed_at) and how long the asset stayed.
duration_seconds runs to the next arrival; for the current stay, to the last sighting so far.
\`from\` and \`to\` bound event_observed_at, both inclusive, either optional.
Default sort: -event_observed_at (newest first). The asset is found even after its validity window; 404 once soft-deleted.`,
          params: Type.Object({ asset_id: Id() }, { additionalProperties: false }),
          querystring: HistoryQuery,
          response: { 200: ListEnvelope(Type.Ref('AssetHistoryRow')), ...errorResponses() },
        },
      },
      async (request) => tracking.history(principalOf(request).orgId, request.params.asset_id, request.query),
    );
  };
