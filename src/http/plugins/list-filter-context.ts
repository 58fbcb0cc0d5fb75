import type { FastifyInstance } from 'fastify';
import { type FieldError, validationError } from '../../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * On detail and write endpoints: the list endpoint their list filters belong to.
     * Those filters then get `invalid_context` naming it (API-SPEC list rule 6).
     */
    listPath?: string;
    /** Tree lists take no `sort`: say so instead of calling it unknown. */
    sortUnsupported?: boolean;
  }
}

/** Query names that filter lists; on any other endpoint they are out of context. */
export const LIST_FILTERS = [
  'include_deleted',
  'is_active',
  'external_key',
  'q',
  'location_id',
  'location_external_key',
  'parent_id',
  'parent_external_key',
  'asset_id',
  'asset_external_key',
] as const;

export function registerListFilterContext(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const { listPath, sortUnsupported } = request.routeOptions.config;
    if (listPath === undefined && !sortUnsupported) return;
    const query = request.query as Record<string, unknown>;
    const errors: FieldError[] = [];
    if (sortUnsupported && 'sort' in query) {
      errors.push({
        field: 'sort',
        code: 'invalid_context',
        message: 'sorting is not supported on this endpoint',
        params: {},
      });
    }
    if (listPath !== undefined) {
      for (const name of LIST_FILTERS) {
        if (!(name in query)) continue;
        errors.push({
          field: name,
          code: 'invalid_context',
          message: `${name} is a list filter and is not accepted here; use it on GET ${listPath}`,
          params: { list_endpoint: `GET ${listPath}` },
        });
      }
    }
    if (errors.length > 0) throw validationError(errors);
  });
}
