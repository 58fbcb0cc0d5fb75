import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/plugins/public-surface.js';
import { errorResponses, ListEnvelope } from '../../http/schemas/common.js';
import { listEnvelope } from '../../master-data/list-query.js';
import type { Page, PagedLocations } from '../repository-tree.js';
import { LocationParams, TreeQuery } from '../schemas.js';
import type { LocationService } from '../service.js';
import { ITEM_PATH, LIST_PATH, type LocationApp, READ, TAGS } from './common.js';

const ROWS =
  "Lists live rows only and, like every list, only the currently effective ones; the walk goes through rows outside their window, so such a row hides itself but not the rows beyond it. The location itself is found whatever its window; 404 when missing, soft-deleted or another organization's. Paged with limit and offset; `sort` is not supported (400).";

export interface TreeRouteSpec {
  suffix: 'ancestors' | 'children' | 'descendants';
  operationId: string;
  summary: string;
  order: string;
  list: (service: LocationService) => (orgId: number, id: number, page: Page) => Promise<PagedLocations>;
}

/** One tree sub-resource list: GET /api/v1/locations/{location_id}/<suffix>. */
export function treeRoute(app: LocationApp, locations: LocationService, spec: TreeRouteSpec): void {
  const list = spec.list(locations);
  app.get(
    `${ITEM_PATH}/${spec.suffix}`,
    {
      config: { scopes: READ, listPath: LIST_PATH, sortUnsupported: true },
      schema: {
        operationId: spec.operationId,
        tags: TAGS,
        summary: spec.summary,
        description: `${spec.order} ${ROWS}`,
        params: LocationParams,
        querystring: TreeQuery,
        response: { 200: ListEnvelope(Type.Ref('Location')), ...errorResponses() },
      },
    },
    async (request) => {
      const page = request.query;
      const { data, total } = await list(principalOf(request).orgId, request.params.location_id, page);
      return listEnvelope(data, page, total);
    },
  );
}
