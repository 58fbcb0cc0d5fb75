import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/plugins/public-surface.js';
import { DataEnvelope, errorResponses } from '../../http/schemas/common.js';

export const OrganizationSchema = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    api_key_id: Type.String({ format: 'uuid', description: "Equals the key's `sub` claim" }),
  },
  { $id: 'Organization' },
);

/**
 * Answered from the authenticated key: its record carries the organization's name, held
 * current on every instance as the key itself is (migration 0053), so there is no query.
 */
export const getOrgMeRoute: FastifyPluginAsyncTypebox = async (app) => {
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
      return {
        data: {
          id: principal.orgId,
          name: principal.orgName,
          scopes: [...principal.scopes].sort(),
          api_key_id: principal.keyId,
        },
      };
    },
  );
};
