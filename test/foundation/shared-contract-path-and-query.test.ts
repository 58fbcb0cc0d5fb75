/**
 * The shared HTTP contract's checks on path ids and query keys (API-SPEC Errors and Limits),
 * on every route in `app.publicRoutes`, so a route added later is covered without touching this
 * file.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { PublicRoute } from '../../src/http/plugins/methods.js';
import { expectValidationError } from '../helpers/error-envelope.js';
import {
  callRoute,
  concreteUrl,
  contractApps,
  expectStoppedAtQuery,
  MAX_ID,
  paramsOf,
  type RouteChange,
  UNKNOWN_QUERY,
} from './route-contract-requests.js';

const { real, targets } = await contractApps();
/** Routes the list rule 6 check ran on. */
const ruled: string[] = [];

type Parameter = { name: string; in: string; schema?: { type?: string; items?: { type?: string } } };
type Doc = { paths: Record<string, Record<string, { parameters?: Parameter[] }>> };

/** Paging and ordering are list parameters, not filters (list rule 6 names the filters). */
const NOT_FILTERS = ['limit', 'offset', 'sort'];

/**
 * List rule 6 as the document describes the lists: every query filter of `GET /api/v1/<collection>`
 * (read from the served OpenAPI document) on every other route of that collection.
 */
function listFiltersOf(
  doc: Doc,
  route: PublicRoute,
): { listPath: string; filters: [string, string][] } | null {
  const listPath = /^\/api\/v1\/[a-z-]+/.exec(route.url)?.[0];
  if (!listPath || (route.url === listPath && route.method === 'GET')) return null;
  const list = doc.paths[listPath]?.get;
  if (!list) return null;
  const filters = (list.parameters ?? [])
    .filter((p) => p.in === 'query' && !NOT_FILTERS.includes(p.name))
    .map((p): [string, string] => {
      const type = p.schema?.type === 'array' ? p.schema.items?.type : p.schema?.type;
      return [p.name, type === 'integer' ? '1' : type === 'boolean' ? 'true' : 'A-1'];
    });
  return filters.length > 0 ? { listPath, filters } : null;
}

for (const { name, t, routes } of targets) {
  describe(name, () => {
    let fullKey: string;
    beforeAll(async () => {
      fullKey = (await (await t.createOrg()).key()).token;
    });
    const call = (route: PublicRoute, change?: RouteChange) => callRoute(t, fullKey, route, change);

    for (const route of routes) {
      describe(`${route.method} ${route.url}`, () => {
        it('unknown query key: 400 validation_error unknown_field', async () => {
          expectStoppedAtQuery(await call(route, { query: UNKNOWN_QUERY }));
        });

        it.each([['__proto__=1'], ['__proto__=a&__proto__=b'], ['constructor=1'], ['toString=x']])(
          'a key naming a member of Object.prototype (%s): 400 unknown_field on that key',
          async (query) => {
            const fields = expectValidationError(await call(route, { query }));
            expect(fields[0]).toMatchObject({ field: query.split('=')[0], code: 'unknown_field' });
          },
        );

        const rule = listFiltersOf(t.app.swagger() as Doc, route);
        if (rule) {
          ruled.push(`${route.method} ${route.url}`);
          it(`list rule 6: each filter of GET ${rule.listPath} is invalid_context naming it`, async () => {
            for (const [filter, value] of rule.filters) {
              const fields = expectValidationError(await call(route, { query: `${filter}=${value}` }));
              expect(fields, `${route.method} ${route.url}?${filter}`).toEqual([
                {
                  field: filter,
                  code: 'invalid_context',
                  message: expect.stringContaining(`GET ${rule.listPath}`),
                  params: { list_endpoint: `GET ${rule.listPath}` },
                },
              ]);
            }
          });
        }

        for (const param of paramsOf(route.url)) {
          it.each([['2147483648'], ['99999999999999999999']])(
            `path ${param}=%s: 400 too_large, params.max ${MAX_ID}`,
            async (value) => {
              const fields = expectValidationError(
                await call(route, { url: concreteUrl(route.url, { [param]: value }) }),
              );
              expect(fields).toEqual([
                { field: param, code: 'too_large', message: expect.any(String), params: { max: MAX_ID } },
              ]);
            },
          );

          it.each([['abc'], ['0'], ['-1'], ['1.5'], ['1e3'], ['%201']])(
            `path ${param}=%s: 400 invalid_value`,
            async (value) => {
              const fields = expectValidationError(
                await call(route, { url: concreteUrl(route.url, { [param]: value }) }),
              );
              expect(fields).toEqual([
                {
                  field: param,
                  code: 'invalid_value',
                  message: expect.any(String),
                  params: expect.any(Object),
                },
              ]);
            },
          );

          it(`path ${param}=${MAX_ID} is accepted by validation`, async () => {
            expectStoppedAtQuery(
              await call(route, {
                url: concreteUrl(route.url, { [param]: String(MAX_ID) }),
                query: UNKNOWN_QUERY,
              }),
            );
          });
        }
      });
    }
  });
}

it('list rule 6 is checked on every write route of both collections, the collection POST included', () => {
  expect(real.app.publicRoutes.length).toBeGreaterThan(0);
  for (const route of [
    'POST /api/v1/assets',
    'PATCH /api/v1/assets/:asset_id',
    'DELETE /api/v1/assets/:asset_id',
    'POST /api/v1/assets/:asset_id/rename',
    'POST /api/v1/assets/:asset_id/tags',
    'POST /api/v1/locations',
    'PATCH /api/v1/locations/:location_id',
    'DELETE /api/v1/locations/:location_id',
    'POST /api/v1/locations/:location_id/rename',
    'DELETE /api/v1/locations/:location_id/tags/:tag_id',
  ]) {
    expect(ruled).toContain(route);
  }
});
