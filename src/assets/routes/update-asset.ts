import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../http/plugins/public-surface.js';
import { DataEnvelope, errorResponses } from '../../http/schemas/common.js';
import { AssetParams, AssetUpdateBody } from '../schemas.js';
import type { AssetService } from '../service.js';
import { ASSET_PATH, OPENAPI_TAG, WRITE } from './shared.js';

export const updateAssetRoute =
  (assets: AssetService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.patch(
      ASSET_PATH,
      {
        config: WRITE,
        schema: {
          operationId: 'updateAsset',
          tags: [OPENAPI_TAG],
          summary: 'Update an asset (JSON merge patch)',
          description: [
            'Content-Type: application/merge-patch+json. Only the fields sent change; null clears description or valid_to; {} is accepted. metadata is replaced whole. Every accepted PATCH advances updated_at, {} and verbatim echoes included.',
            'Any field of the read shape may be echoed: an equal value is dropped (datetimes compared by instant, tags as a set). A differing id, created_at, deleted_at, location_id or location_external_key is read_only; a differing updated_at is read_only naming the mismatch (lost-update detection; omit updated_at to opt out); a differing external_key is invalid_context (use POST /api/v1/assets/{asset_id}/rename with {"external_key": "<new key>"}); differing tags are invalid_context (use POST /api/v1/assets/{asset_id}/tags and DELETE /api/v1/assets/{asset_id}/tags/{tag_id}).',
            'null on valid_from, is_active or metadata is invalid_value; so is a valid_to not later than valid_from after the merge.',
          ].join('\n\n'),
          params: AssetParams,
          body: AssetUpdateBody,
          response: { 200: DataEnvelope(Type.Ref('Asset')), ...errorResponses() },
        },
      },
      async (request) => ({
        data: await assets.update(callerOf(request), request.params.asset_id, request.body),
      }),
    );
  };
