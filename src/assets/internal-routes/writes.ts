import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../http/plugins/internal-auth.js';
import { DataEnvelope, Id, NoContent } from '../../http/schemas/common.js';
import type { InternalServices } from '../../internal-services.js';
import { AssetCreateBody, AssetParams, AssetUpdateBody, RenameBody } from '../schemas.js';

const TagParams = Type.Object({ asset_id: Id(), tag_id: Id() }, { additionalProperties: false });
const TagBody = Type.Unsafe<{ tag_type: 'rfid' | 'ble' | 'barcode'; value: string }>(Type.Ref('TagRequest'));

/**
 * The web app's asset writes. Each route takes the public API's body schema and calls the
 * same service (src/assets/service.ts, src/tags/service.ts), so the rules, codes and
 * messages a person sees in the app are exactly the ones an integrator gets.
 */
export const assetWriteRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/internal/assets',
      {
        config: { role: 'editor' },
        schema: { body: AssetCreateBody, response: { 201: DataEnvelope(Type.Ref('Asset')) } },
      },
      async (request, reply) => {
        const created = await s.assets.create(callerOf(request), request.body);
        return reply.code(201).send({ data: created });
      },
    );

    app.patch(
      '/internal/assets/:asset_id',
      {
        config: { role: 'editor' },
        schema: {
          params: AssetParams,
          body: AssetUpdateBody,
          response: { 200: DataEnvelope(Type.Ref('Asset')) },
        },
      },
      async (request) => ({
        data: await s.assets.update(callerOf(request), request.params.asset_id, request.body),
      }),
    );

    app.delete(
      '/internal/assets/:asset_id',
      {
        config: { role: 'editor' },
        schema: { params: AssetParams, response: { 204: NoContent('Deleted') } },
      },
      async (request, reply) => {
        await s.assets.remove(callerOf(request), request.params.asset_id);
        return reply.code(204).send();
      },
    );

    app.post(
      '/internal/assets/:asset_id/rename',
      {
        config: { role: 'editor' },
        schema: {
          params: AssetParams,
          body: RenameBody,
          response: {
            200: Type.Object({ data: Type.Ref('Asset'), descendant_count_affected: Type.Integer() }),
          },
        },
      },
      async (request) => ({
        data: await s.assets.rename(callerOf(request), request.params.asset_id, request.body.external_key),
        descendant_count_affected: 0,
      }),
    );

    app.post(
      '/internal/assets/:asset_id/tags',
      {
        config: { role: 'editor' },
        schema: { params: AssetParams, body: TagBody, response: { 201: DataEnvelope(Type.Ref('Tag')) } },
      },
      async (request, reply) => {
        const owner = { kind: 'asset' as const, id: request.params.asset_id };
        const tag = await s.tags.attach(callerOf(request), owner, request.body);
        return reply.code(201).send({ data: tag });
      },
    );

    app.delete(
      '/internal/assets/:asset_id/tags/:tag_id',
      { config: { role: 'editor' }, schema: { params: TagParams, response: { 204: NoContent('Detached') } } },
      async (request, reply) => {
        const { asset_id, tag_id } = request.params;
        await s.tags.detach(callerOf(request), { kind: 'asset', id: asset_id }, tag_id);
        return reply.code(204).send();
      },
    );
  };
