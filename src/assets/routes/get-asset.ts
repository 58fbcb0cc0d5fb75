import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/plugins/public-surface.js';
import { DataEnvelope, errorResponses } from '../../http/schemas/common.js';
import { AssetParams } from '../schemas.js';
import type { AssetService } from '../service.js';
import { ASSET_PATH, OPENAPI_TAG, READ_ONE } from './shared.js';

export const getAssetRoute =
  (assets: AssetService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      ASSET_PATH,
      {
        config: READ_ONE,
        schema: {
          operationId: 'getAsset',
          tags: [OPENAPI_TAG],
          summary: 'Get an asset',
          description:
            "Found whatever its validity window. 404 when missing, soft-deleted (a deleted asset cannot be restored in v1) or another organization's.",
          params: AssetParams,
          response: { 200: DataEnvelope(Type.Ref('Asset')), ...errorResponses() },
        },
      },
      async (request) => ({ data: await assets.get(principalOf(request).orgId, request.params.asset_id) }),
    );
  };
