import { callerOf } from '../../http/plugins/public-surface.js';
import { errorResponses } from '../../http/schemas/common.js';
import { LocationParams, RenameBody, RenameResponse } from '../schemas.js';
import type { LocationService } from '../service.js';
import { detailConfig, ITEM_PATH, type LocationApp, TAGS, WRITE } from './common.js';

export function renameLocationRoute(app: LocationApp, locations: LocationService): void {
  app.post(
    `${ITEM_PATH}/rename`,
    {
      config: detailConfig(WRITE),
      schema: {
        operationId: 'renameLocation',
        tags: TAGS,
        summary: "Change a location's external_key",
        description:
          "Changes only this location's external_key; descendants are not modified. descendant_count_affected is the number of its live (not soft-deleted) descendants at any depth. Renaming to the current value is a no-op that keeps updated_at; a key held by another live location is 409 conflict.",
        params: LocationParams,
        body: RenameBody,
        response: { 200: RenameResponse, ...errorResponses(409) },
      },
    },
    async (request) => {
      const { location, descendants } = await locations.rename(
        callerOf(request),
        request.params.location_id,
        request.body.external_key,
      );
      return { data: location, descendant_count_affected: descendants };
    },
  );
}
