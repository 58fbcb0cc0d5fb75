import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/plugins/public-surface.js';
import { DataEnvelope, errorResponses } from '../../http/schemas/common.js';
import type { OrganizationService } from '../service.js';

export const OrganizationSchema = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    api_key_id: Type.String({ format: 'uuid', description: "Equals the key's `sub` claim" }),
  },
  { $id: 'Organization' },
);

export const getOrgMeRoute =
  (orgs: OrganizationService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/api/v1/orgs/me',
      {
        config: { scopes: [] },
        schema: {
          operationId: 'getOrganization',
          tags: ['organization'],
          summary: 'The organization and key making the request',
          description: 'Only API keys are accepted; web session tokens get 401. No query parameters.',
          response: { 200: DataEnvelope(Type.Ref('Organization')), ...errorResponses() },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const org = await orgs.get(principal.orgId);
        return {
          data: {
            id: org.id,
            name: org.name,
            scopes: [...principal.scopes].sort(),
            api_key_id: principal.keyId,
          },
        };
      },
    );
  };
