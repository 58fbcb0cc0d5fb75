import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import { ListEnvelope } from '../../http/schemas/common.js';
import { SearchPageQuery } from '../../http/schemas/internal.js';
import type { InternalServices } from '../../internal-services.js';

/** The asset-location report, as the public API serves it, with `q`. */
export const reportRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/report',
      {
        schema: {
          querystring: SearchPageQuery,
          response: { 200: ListEnvelope(Type.Ref('AssetLocationReportRow')) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { q, limit, offset } = request.query;
        return s.tracking.report(orgId, { limit, offset, q });
      },
    );
  };
