import { callerOf } from '../../http/plugins/public-surface.js';
import { errorResponses, NoContent } from '../../http/schemas/common.js';
import { LocationParams } from '../schemas.js';
import type { LocationService } from '../service.js';
import { detailConfig, ITEM_PATH, type LocationApp, TAGS, WRITE } from './common.js';

export function deleteLocationRoute(app: LocationApp, locations: LocationService): void {
  app.delete(
    ITEM_PATH,
    {
      config: detailConfig(WRITE),
      schema: {
        operationId: 'deleteLocation',
        tags: TAGS,
        summary: 'Soft-delete a location',
        description:
          '204; 404 when missing or already deleted. 409 conflict while it has live child locations or live assets placed directly at it: nothing cascades. Its tags are released (their values can be attached elsewhere at once) and its external_key is free for reuse. Soft-deleted locations cannot be restored in v1.',
        params: LocationParams,
        response: { 204: NoContent('Deleted'), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      await locations.delete(callerOf(request), request.params.location_id);
      return reply.code(204).send();
    },
  );
}
