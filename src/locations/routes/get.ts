import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/plugins/public-surface.js';
import { DataEnvelope, errorResponses } from '../../http/schemas/common.js';
import { LocationParams } from '../schemas.js';
import type { LocationService } from '../service.js';
import { detailConfig, ITEM_PATH, type LocationApp, READ, TAGS } from './common.js';

export function getLocationRoute(app: LocationApp, locations: LocationService): void {
  app.get(
    ITEM_PATH,
    {
      config: detailConfig(READ),
      schema: {
        operationId: 'getLocation',
        tags: TAGS,
        summary: 'Get a location',
        description:
          "Found whatever its validity window (the temporal filter applies to lists only); 404 when missing, soft-deleted or another organization's. Soft-deleted locations cannot be restored in v1.",
        params: LocationParams,
        response: { 200: DataEnvelope(Type.Ref('Location')), ...errorResponses() },
      },
    },
    async (request) => ({
      data: await locations.get(principalOf(request).orgId, request.params.location_id),
    }),
  );
}
