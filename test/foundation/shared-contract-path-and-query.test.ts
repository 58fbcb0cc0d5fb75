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

const { targets } = await contractApps();

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
