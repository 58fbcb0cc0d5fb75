import { Type } from '@sinclair/typebox';
import { callerOf } from '../../http/plugins/public-surface.js';
import { DataEnvelope, errorResponses } from '../../http/schemas/common.js';
import { LocationCreateBody } from '../schemas.js';
import type { LocationCreateInput, LocationService } from '../service.js';
import { detailConfig, LIST_PATH, type LocationApp, TAGS, WRITE } from './common.js';

export function createLocationRoute(app: LocationApp, locations: LocationService): void {
  app.post(
    LIST_PATH,
    {
      config: detailConfig(WRITE),
      schema: {
        operationId: 'createLocation',
        tags: TAGS,
        summary: 'Create a location',
        description: `Answers 201 Created with \`Location: /api/v1/locations/{id}\` and \`data: <Location>\`.

Without external_key the server assigns \`LOC-NNNN\`, the lowest slot no live location holds (slots of deleted or renamed locations are reused); a supplied key held by a live location is 409. is_active defaults to true and valid_from to the creation instant; valid_to must be later than valid_from. parent_id or parent_external_key (or both naming the same location) place it under a live location of the organization, whatever that parent's validity window; an unknown parent is fk_not_found, two different parents are ambiguous_fields. Locations have no metadata: sending it is unknown_field; the read shape's server-managed fields (id, created_at, updated_at, deleted_at, a tag's id) are read_only. Tags given here are attached in the same transaction; a (tag_type, value) already in use is 409.`,
        body: LocationCreateBody,
        response: { 201: DataEnvelope(Type.Ref('Location')), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const location = await locations.create(callerOf(request), request.body as LocationCreateInput);
      return reply.code(201).header('location', `${LIST_PATH}/${location.id}`).send({ data: location });
    },
  );
}
