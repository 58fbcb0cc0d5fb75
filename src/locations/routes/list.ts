import { Type } from '@sinclair/typebox';
import { principalOf } from '../../http/plugins/public-surface.js';
import { errorResponses, ListEnvelope } from '../../http/schemas/common.js';
import { listEnvelope } from '../../master-data/list-query.js';
import { LocationListQuery } from '../schemas.js';
import type { LocationService } from '../service.js';
import { LIST_PATH, type LocationApp, READ, TAGS } from './common.js';

export function listLocationsRoute(app: LocationApp, locations: LocationService): void {
  app.get(
    LIST_PATH,
    {
      config: { scopes: READ },
      schema: {
        operationId: 'listLocations',
        tags: TAGS,
        summary: 'List locations',
        description: `Currently effective locations only (valid_from <= now < valid_to), also for external_key lookups; soft-deleted ones are added by include_deleted=true, and both is_active values are returned unless narrowed.

Default order external_key, then id. \`sort\` takes external_key, name and created_at, each optionally prefixed \`-\`; id breaks ties, in the direction of the last key (descending after a descending one). \`q\` matches name, external_key, description and active tag values, case-insensitively. parent_id and parent_external_key are exclusive (ambiguous_fields); each is repeatable (any-of). parent_external_key is a key lookup like external_key: it names live, currently effective parents (their children are listed, soft-deleted ones too with include_deleted=true).`,
        querystring: LocationListQuery,
        response: { 200: ListEnvelope(Type.Ref('Location')), ...errorResponses() },
      },
    },
    async (request) => {
      const query = request.query;
      const { data, total } = await locations.list(principalOf(request).orgId, query);
      return listEnvelope(data, query, total);
    },
  );
}
