import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf, sessionOf } from '../../http/plugins/internal-auth.js';
import { DataEnvelope, Id } from '../../http/schemas/common.js';
import type { InternalServices } from '../../internal-services.js';
import {
  LocationCreateBody,
  LocationParams,
  LocationUpdateBody,
  RenameBody,
  RenameResponse,
} from '../schemas.js';
import type { LocationCreateInput, LocationUpdateInput } from '../service.js';

const PathStep = Type.Object({ id: Type.Integer(), external_key: Type.String(), name: Type.String() });

/** GET /internal/locations/{id}: the Location, plus what the details panel shows around it. */
const DetailsResponse = Type.Object({
  data: Type.Ref('Location'),
  descendant_count: Type.Integer({
    minimum: 0,
    description: 'Live descendants at any depth: what a rename reports as descendant_count_affected',
  }),
  path: Type.Array(PathStep, { description: 'Ancestors, root first' }),
});

const TagParams = Type.Object({ location_id: Id(), tag_id: Id() }, { additionalProperties: false });

/**
 * The web app's writes on locations. Each calls the service the public API calls (same
 * bodies, same rules, same error envelope and messages); only the authentication differs.
 */
export const locationWriteRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/locations/:location_id',
      { config: { role: 'viewer' }, schema: { params: LocationParams, response: { 200: DetailsResponse } } },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { location, descendants, path } = await s.locations.details(orgId, request.params.location_id);
        return { data: location, descendant_count: descendants, path };
      },
    );

    app.post(
      '/internal/locations',
      {
        config: { role: 'editor' },
        schema: { body: LocationCreateBody, response: { 201: DataEnvelope(Type.Ref('Location')) } },
      },
      async (request, reply) => {
        const location = await s.locations.create(callerOf(request), request.body as LocationCreateInput);
        return reply.code(201).send({ data: location });
      },
    );

    app.patch(
      '/internal/locations/:location_id',
      {
        config: { role: 'editor' },
        schema: {
          params: LocationParams,
          body: LocationUpdateBody,
          response: { 200: DataEnvelope(Type.Ref('Location')) },
        },
      },
      async (request) => {
        const body = request.body as LocationUpdateInput;
        return { data: await s.locations.update(callerOf(request), request.params.location_id, body) };
      },
    );

    app.delete(
      '/internal/locations/:location_id',
      { config: { role: 'editor' }, schema: { params: LocationParams } },
      async (request, reply) => {
        await s.locations.delete(callerOf(request), request.params.location_id);
        return reply.code(204).send();
      },
    );

    app.post(
      '/internal/locations/:location_id/rename',
      {
        config: { role: 'editor' },
        schema: { params: LocationParams, body: RenameBody, response: { 200: RenameResponse } },
      },
      async (request) => {
        const { location, descendants } = await s.locations.rename(
          callerOf(request),
          request.params.location_id,
          request.body.external_key,
        );
        return { data: location, descendant_count_affected: descendants };
      },
    );

    app.post(
      '/internal/locations/:location_id/tags',
      {
        config: { role: 'editor' },
        schema: {
          params: LocationParams,
          body: Type.Ref('TagRequest'),
          response: { 201: DataEnvelope(Type.Ref('Tag')) },
        },
      },
      async (request, reply) => {
        const owner = { kind: 'location' as const, id: request.params.location_id };
        const tag = await s.tags.attach(
          callerOf(request),
          owner,
          request.body as { tag_type: string; value: string },
        );
        return reply.code(201).send({ data: tag });
      },
    );

    app.delete(
      '/internal/locations/:location_id/tags/:tag_id',
      { config: { role: 'editor' }, schema: { params: TagParams } },
      async (request, reply) => {
        const { location_id, tag_id } = request.params;
        await s.tags.detach(callerOf(request), { kind: 'location', id: location_id }, tag_id);
        return reply.code(204).send();
      },
    );
  };
