import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../http/plugins/public-surface.js';
import { errorResponses } from '../../http/schemas/common.js';
import { AssetParams, RenameBody } from '../schemas.js';
import type { AssetService } from '../service.js';
import { ASSET_PATH, OPENAPI_TAG, WRITE } from './shared.js';

export const renameAssetRoute =
  (assets: AssetService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      `${ASSET_PATH}/rename`,
      {
        config: WRITE,
        schema: {
          operationId: 'renameAsset',
          tags: [OPENAPI_TAG],
          summary: "Change an asset's external_key",
          description:
            'A key held by another live asset is 409 conflict. Renaming to the current key is a no-op that leaves updated_at as it is. descendant_count_affected is always 0 for assets.',
          params: AssetParams,
          body: RenameBody,
          response: {
            200: Type.Object({
              data: Type.Ref('Asset'),
              descendant_count_affected: Type.Integer({ description: 'Always 0 for assets' }),
            }),
            ...errorResponses(409),
          },
        },
      },
      async (request) => ({
        data: await assets.rename(callerOf(request), request.params.asset_id, request.body.external_key),
        descendant_count_affected: 0,
      }),
    );
  };
