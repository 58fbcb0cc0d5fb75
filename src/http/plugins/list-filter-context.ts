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
    /** Query names this route declares itself (filled in at registration). */
    ownQuery?: ReadonlySet<string>;
  }
}

/**
 * Paging and ordering are list parameters but not filters: rule 6 names the filters only,
 * so these stay `unknown_field` on endpoints that do not declare them (Errors, Details 5).
 */
const NOT_FILTERS = new Set(['limit', 'offset', 'sort']);

type QuerySchema = { properties?: Record<string, unknown> } | undefined;

const queryNames = (schema: unknown): string[] => Object.keys((schema as QuerySchema)?.properties ?? {});

/**
 * The filters of a list are exactly the query parameters its GET route declares, minus
 * paging and ordering; they are read from the list route's own schema, so a filter added
 * to a list is out of context on its detail and write endpoints without touching this file.
 */
export function registerListFilterContext(app: FastifyInstance): void {
  const listQuery = new Map<string, string[]>();
  const filtersOf = new Map<string, string[]>();
  const filtersFor = (listPath: string): string[] => {
    let filters = filtersOf.get(listPath);
    if (filters === undefined) {
      filters = (listQuery.get(listPath) ?? []).filter((name) => !NOT_FILTERS.has(name));
      filtersOf.set(listPath, filters);
    }
    return filters;
  };

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) listQuery.set(route.url, queryNames(route.schema?.querystring));
    if (route.config?.listPath !== undefined) {
      route.config = { ...route.config, ownQuery: new Set(queryNames(route.schema?.querystring)) };
    }
  });

  app.addHook('preValidation', (request, _reply, done) => {
    const { listPath, sortUnsupported, ownQuery } = request.routeOptions.config;
    if (listPath === undefined && !sortUnsupported) return done();
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
      for (const name of filtersFor(listPath)) {
        if (!(name in query) || ownQuery?.has(name)) continue;
        errors.push({
          field: name,
          code: 'invalid_context',
          message: `${name} is a list filter and is not accepted here; use it on GET ${listPath}`,
          params: { list_endpoint: `GET ${listPath}` },
        });
      }
    }
    done(errors.length > 0 ? validationError(errors) : undefined);
  });
}
