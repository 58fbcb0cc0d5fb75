import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf } from '../../http/plugins/public-surface.js';
import { DataEnvelope, errorResponses } from '../../http/schemas/common.js';
import { AssetCreateBody, METADATA_MAX_BYTES, METADATA_MAX_DEPTH } from '../schemas.js';
import type { AssetService } from '../service.js';
import { ASSETS_PATH, OPENAPI_TAG, WRITE } from './shared.js';

export const createAssetRoute =
  (assets: AssetService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      ASSETS_PATH,
      {
        config: WRITE,
        schema: {
          operationId: 'createAsset',
          tags: [OPENAPI_TAG],
          summary: 'Create an asset',
          description: [
            '201 Created with `Location: /api/v1/assets/{id}` and `data: <Asset>`.',
            'Without external_key the server assigns ASSET-NNNN, the lowest slot no live asset holds (slots of deleted or renamed assets are reused). A caller-supplied external_key held by a live asset is 409 conflict, as is a tag already attached elsewhere (for rfid and ble, in any spelling ingest takes for it).',
            'is_active defaults to true; valid_from defaults to the creation instant (created_at); valid_to must be later than valid_from (else invalid_value on valid_to).',
            `metadata: any JSON object up to ${METADATA_MAX_BYTES} bytes as UTF-8 JSON (else too_long, params.max_bytes) and ${METADATA_MAX_DEPTH} levels deep (else invalid_value, params.max_depth); stored as sent, key order may change.`,
            "location_id and location_external_key are scan data: sending either is 400 read_only, as is any server-managed field of the read shape (id, created_at, updated_at, deleted_at, a tag's id).",
          ].join('\n\n'),
          body: AssetCreateBody,
          response: { 201: DataEnvelope(Type.Ref('Asset')), ...errorResponses(409) },
        },
      },
      async (request, reply) => {
        const created = await assets.create(callerOf(request), request.body);
        return reply.code(201).header('location', `${ASSETS_PATH}/${created.id}`).send({ data: created });
      },
    );
  };
