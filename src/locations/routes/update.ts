import { Type } from '@sinclair/typebox';
import { callerOf } from '../../http/plugins/public-surface.js';
import { DataEnvelope, errorResponses } from '../../http/schemas/common.js';
import { LocationParams, LocationUpdateBody } from '../schemas.js';
import type { LocationService, LocationUpdateInput } from '../service.js';
import { detailConfig, ITEM_PATH, type LocationApp, TAGS, WRITE } from './common.js';

export function updateLocationRoute(app: LocationApp, locations: LocationService): void {
  app.patch(
    ITEM_PATH,
    {
      config: detailConfig(WRITE),
      schema: {
        operationId: 'updateLocation',
        tags: TAGS,
        summary: 'Update a location (JSON merge patch)',
        description: `Content-Type application/merge-patch+json. Only fields present change; null clears description and valid_to (null on valid_from or is_active is invalid_value); \`{}\` is accepted. Every accepted PATCH strictly advances updated_at; a rejected one does not.

Read-only fields may be echoed: a value equal to the current one is dropped (datetimes compared by instant, tags as a set). A differing id, created_at, updated_at (stale: the message names the mismatch) or deleted_at is read_only; a differing external_key is invalid_context (use POST /api/v1/locations/{location_id}/rename), differing tags are invalid_context (use the tags sub-resource).

parent_id or parent_external_key re-parent; null detaches to root; both naming the same parent are one operation. A parent that is the location itself or one of its descendants is 409 conflict naming the cycle. valid_to must stay later than valid_from after merging (invalid_value on valid_to).`,
        params: LocationParams,
        body: LocationUpdateBody,
        response: { 200: DataEnvelope(Type.Ref('Location')), ...errorResponses(409) },
      },
    },
    async (request) => ({
      data: await locations.update(
        callerOf(request),
        request.params.location_id,
        request.body as LocationUpdateInput,
      ),
    }),
  );
}
