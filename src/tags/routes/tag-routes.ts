import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../http/plugins/public-surface.js';
import { DataEnvelope, errorResponses, Id, NoContent } from '../../http/schemas/common.js';
import type { OwnerKind } from '../repository.js';
import type { TagService } from '../service.js';

/** A tag change is a write of its owner: a PATCH built on the updated_at read before it is stale. */
const OWNER_TOUCHED = (kind: string) =>
  `Advances the ${kind}'s updated_at, as every accepted write does: a PATCH carrying the updated_at read before this is refused as stale (read_only); use the one the ${kind} has now.`;

const RESOURCE: Record<
  OwnerKind,
  { plural: string; param: string; scope: string; tag: string; aKind: string }
> = {
  asset: { plural: 'assets', param: 'asset_id', scope: 'assets:write', tag: 'assets', aKind: 'an asset' },
  location: {
    plural: 'locations',
    param: 'location_id',
    scope: 'locations:write',
    tag: 'locations',
    aKind: 'a location',
  },
};

/** POST and DELETE of the tags sub-resource, for assets or for locations. */
export const tagRoutes =
  (kind: OwnerKind, tags: TagService): FastifyPluginAsyncTypebox =>
  async (app) => {
    const r = RESOURCE[kind];
    const base = `/api/v1/${r.plural}/:${r.param}/tags`;
    const Params = Type.Object({ [r.param]: Id() }, { additionalProperties: false });
    const TagParams = Type.Object({ [r.param]: Id(), tag_id: Id() }, { additionalProperties: false });
    const title = kind === 'asset' ? 'Asset' : 'Location';

    app.post(
      base,
      {
        config: { scopes: [r.scope], listPath: `/api/v1/${r.plural}` },
        schema: {
          operationId: `attach${title}Tag`,
          tags: [r.tag],
          summary: `Attach a tag to ${r.aKind}`,
          description:
            '(tag_type, value) is unique within the organization across assets and locations: a duplicate is 409. ' +
            'For rfid and ble, values that differ only in case, separators (space, colon, hyphen) or leading zeros are one tag, as ingest matches them. ' +
            OWNER_TOUCHED(kind),
          params: Params,
          body: Type.Ref('TagRequest'),
          response: { 201: DataEnvelope(Type.Ref('Tag')), ...errorResponses(409) },
        },
      },
      async (request, reply) => {
        const ownerId = (request.params as Record<string, number>)[r.param]!;
        const body = request.body as { tag_type: string; value: string };
        const tag = await tags.attach(callerOf(request), { kind, id: ownerId }, body);
        return reply
          .code(201)
          .header('location', `/api/v1/${r.plural}/${ownerId}/tags/${tag.id}`)
          .send({ data: tag });
      },
    );

    app.delete(
      `${base}/:tag_id`,
      {
        config: { scopes: [r.scope], listPath: `/api/v1/${r.plural}` },
        schema: {
          operationId: `detach${title}Tag`,
          tags: [r.tag],
          summary: `Detach a tag from ${r.aKind}`,
          description: `204 the first time; 404 when repeated, unattached or another organization's. ${OWNER_TOUCHED(kind)}`,
          params: TagParams,
          response: { 204: NoContent('Detached'), ...errorResponses() },
        },
      },
      async (request, reply) => {
        const params = request.params as Record<string, number>;
        await tags.detach(callerOf(request), { kind, id: params[r.param]! }, params.tag_id!);
        return reply.code(204).send();
      },
    );
  };
