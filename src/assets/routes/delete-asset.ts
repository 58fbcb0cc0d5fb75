import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/plugins/public-surface.js';
import { errorResponses, NoContent } from '../../http/schemas/common.js';
import { AssetParams } from '../schemas.js';
import type { AssetService } from '../service.js';
import { ASSET_PATH, OPENAPI_TAG, WRITE } from './shared.js';

export const deleteAssetRoute =
  (assets: AssetService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.delete(
      ASSET_PATH,
      {
        config: WRITE,
        schema: {
          operationId: 'deleteAsset',
          tags: [OPENAPI_TAG],
          summary: 'Soft-delete an asset',
          description:
            '204; 404 when missing or already deleted. The external_key is reusable at once, and the tags are detached, so they can be attached elsewhere at once (a deleted asset shows tags: []). A deleted asset cannot be restored in v1: create a new one.',
          params: AssetParams,
          response: { 204: NoContent('Deleted'), ...errorResponses() },
        },
      },
      async (request, reply) => {
        await assets.remove(callerOf(request), request.params.asset_id);
        return reply.code(204).send();
      },
    );
  };
