import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/plugins/public-surface.js';
import { errorResponses, ListEnvelope } from '../../http/schemas/common.js';
import { AssetListQuery } from '../schemas.js';
import type { AssetService } from '../service.js';
import { ASSETS_PATH, OPENAPI_TAG } from './shared.js';

export const listAssetsRoute =
  (assets: AssetService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      ASSETS_PATH,
      {
        config: { scopes: ['assets:read'] },
        schema: {
          operationId: 'listAssets',
          tags: [OPENAPI_TAG],
          summary: 'List assets',
          description: [
            'Only currently effective assets (valid_from <= now < valid_to) are listed, also when filtering by external_key; soft-deleted ones only with include_deleted=true.',
            'Repeat a filter parameter once per value; location_id and location_external_key are mutually exclusive (ambiguous_fields). location_external_key matches live, currently effective locations.',
            'q is a case-insensitive substring of external_key, name, description or an attached tag value; an empty q is no filter.',
            'Default order: external_key, then id. With sort, the requested keys then id; id descends when the last key does. Keys and names sort by byte value.',
            'Offset pagination is not snapshot-consistent: iterate until offset + len(data) >= total_count.',
          ].join('\n\n'),
          querystring: AssetListQuery,
          response: { 200: ListEnvelope(Type.Ref('Asset')), ...errorResponses() },
        },
      },
      async (request) => assets.list(principalOf(request).orgId, request.query),
    );
  };
