import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AssetService } from '../service.js';
import { createAssetRoute } from './create-asset.js';
import { deleteAssetRoute } from './delete-asset.js';
import { getAssetRoute } from './get-asset.js';
import { listAssetsRoute } from './list-assets.js';
import { renameAssetRoute } from './rename-asset.js';
import { updateAssetRoute } from './update-asset.js';

/** Every route of the assets resource except history (tracking) and tags (src/tags). */
export const assetRoutes =
  (assets: AssetService): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const route of [
      listAssetsRoute,
      createAssetRoute,
      getAssetRoute,
      updateAssetRoute,
      deleteAssetRoute,
      renameAssetRoute,
    ]) {
      await app.register(route(assets));
    }
  };
