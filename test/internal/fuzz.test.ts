import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InternalRoute } from '../../src/http/plugins/methods.js';
import { bodyFor, parametersOf, pathValue, queryFor, type Schema } from '../helpers/openapi-arbitraries.js';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  freshAddress,
  type InternalTestApp,
  insertAsset,
  insertLocation,
  uniqueEmail,
} from './helpers.js';

/**
 * Every /internal/ route (the web app's API, as exposed to the network as the public one),
 * fed requests generated from its registered schemas (test/helpers/openapi-arbitraries.ts)
 * in an organization of its own, seeded with a record of each kind, by a signed-in admin
 * (or signed out, for the routes that are), another organization's ids among the ones
 * sent. Whatever comes in: never a 500, an error is the envelope, and nothing of the other
 * organization is shown or changed. The routes come from `app.internalRouteList`, so a new one is fuzzed
 * without touching this file.
 */

/** Generated requests per route; more with TAGTRAIL_FUZZ_RUNS. */
const RUNS = Number(process.env.TAGTRAIL_FUZZ_RUNS ?? 30);

/** A stream that never ends (server-sent events): its answer is checked elsewhere. */
const SKIPPED = new Set(['GET /internal/live']);

let t: InternalTestApp;
const answered = { success: 0, error: 0 };

/** Another organization's records: their ids are sent too, and must never be read or changed. */
const FOREIGN = 'FOREIGN-';
const foreign: Record<string, number[]> = {};
let foreignOrg: number;
const foreignRows = () =>
  t.database.db.pool
    .query(
      `SELECT 'asset' AS kind, id, external_key, name, updated_at, deleted_at FROM assets WHERE org_id = $1
       UNION ALL SELECT 'location', id, external_key, name, updated_at, deleted_at FROM locations WHERE org_id = $1
       UNION ALL SELECT 'tag', id, value, tag_type, created_at, detached_at FROM tags WHERE org_id = $1
       ORDER BY 1, 2`,
      [foreignOrg],
    )
    .then((r) => r.rows);
let foreignBefore: unknown[];

beforeAll(async () => {
  t = await buildInternalApp();
  const { id } = await t.newOrg('Other');
  foreignOrg = id;
  const site = await insertLocation(t, id, { external_key: `${FOREIGN}SITE`, name: `${FOREIGN}Site` });
  const asset = await insertAsset(t, id, {
    external_key: `${FOREIGN}PAL-1`,
    name: `${FOREIGN}Pallet`,
    tag: 'E20000000000000000000F01',
  });
  foreign.location_id = [site];
  foreign.asset_id = [asset];
  const { rows } = await t.database.db.pool.query<{ id: number }>('SELECT id FROM tags WHERE org_id = $1', [
    id,
  ]);
  foreign.tag_id = rows.map((r) => r.id);
  foreignBefore = await foreignRows();
}, 60_000);
afterAll(async () => {
  await t?.close();
});

/** An organization with one record of each kind the routes' path parameters name. */
async function seededOrg(): Promise<{ admin: Browser; ids: Record<string, number[]> }> {
  const { id: orgId, browser: admin } = await t.newOrg();
  const created = async (url: string, body: unknown) => {
    const res = await admin.post(url, body);
    expect(res.statusCode, `${url} ${res.body}`).toBe(201);
    return res.json().data as { id: number };
  };
  const root = await insertLocation(t, orgId, { external_key: 'SITE', name: 'Site' });
  const dock = await insertLocation(t, orgId, { external_key: 'DOCK', name: 'Dock', parent_id: root });
  const asset = await insertAsset(t, orgId, {
    external_key: 'PAL-1',
    name: 'Pallet',
    tag: 'E20000000000000000000001',
  });
  const { rows: tags } = await t.database.db.pool.query<{ id: number }>(
    'SELECT id FROM tags WHERE org_id = $1',
    [orgId],
  );
  const reader = await created('/internal/readers', {
    name: 'Dock door',
    family: 'impinj-r700',
    identity: `SN-${orgId}`,
    topic: `site/${orgId}/dock`,
    webhook: false,
  });
  const point = await created(`/internal/readers/${reader.id}/scan-points`, {
    antenna: 1,
    location_id: dock,
  });
  const webhook = await created('/internal/webhooks', {
    url: 'https://hooks.example.com/tagtrail',
    event_types: ['asset.moved'],
  });
  const invitation = await created('/internal/invitations', {
    email: uniqueEmail('invited'),
    role: 'viewer',
  });
  const key = await created('/internal/keys', { name: 'sync', scopes: ['assets:read'], expires_at: null });
  const ids: Record<string, number[]> = {
    location_id: [root, dock],
    asset_id: [asset],
    tag_id: tags.map((r) => r.id),
    reader_id: [reader.id],
    scan_point_id: [point.id],
    webhook_id: [webhook.id],
    delivery_id: [1],
    invitation_id: [invitation.id],
    key_id: [key.id],
    user_id: [admin.userId],
  };
  for (const [name, values] of Object.entries(foreign)) ids[name] = [...(ids[name] ?? []), ...values];
  return { admin, ids };
}

function check(route: InternalRoute, url: string, res: LightMyRequestResponse, payload?: string) {
  answered[res.statusCode >= 400 ? 'error' : 'success'] += 1;
  const context = `${route.method} ${url} ${payload?.slice(0, 300) ?? ''} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
  expect(res.statusCode, context).toBeLessThan(500);
  if (res.statusCode >= 400) expectInternalError(res, { status: res.statusCode });
  // Another organization's ids are sent too: nothing of its records ever comes back.
  else expect(res.body.includes(FOREIGN), context).toBe(false);
}

describe('the /internal/ routes, fuzzed', () => {
  it('answer every generated request without a 500', { timeout: 600_000 }, async () => {
    const routes = t.app.internalRouteList.filter((r) => !SKIPPED.has(`${r.method} ${r.url}`));
    expect(routes.length).toBeGreaterThan(60);
    for (const route of routes) {
      const { admin, ids } = await seededOrg();
      const generation = { resolve: (s: Schema) => s, ids: Object.values(ids).flat() };
      const schema = route.schema as { params?: Schema; querystring?: Schema; body?: Schema };
      const pathNames = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
      const pathArb = fc.tuple(...pathNames.map((name) => pathValue(ids[name] ?? [1])));
      const contentType = route.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
      const bodyArb = schema.body
        ? bodyFor(schema.body, generation).map((v) => JSON.stringify(v))
        : fc.constant(undefined);
      await fc.assert(
        fc.asyncProperty(
          pathArb,
          queryFor(parametersOf(schema.querystring), generation),
          bodyArb,
          async (values, query, payload) => {
            let i = 0;
            const url = route.url.replace(/:[A-Za-z0-9_]+/g, () => values[i++]!) + query;
            const options = {
              method: route.method as 'POST',
              url,
              remoteAddress: freshAddress(),
              ...(payload === undefined ? {} : { payload, headers: { 'content-type': contentType } }),
            };
            const res = route.signedOut ? await t.app.inject(options) : await admin.request(options);
            check(route, url, res, payload);
          },
        ),
        { numRuns: RUNS },
      );
    }
    expect(answered.success).toBeGreaterThanOrEqual(40);
    // Nor was any of them changed or deleted.
    expect(await foreignRows()).toEqual(foreignBefore);
    expect(answered.error).toBeGreaterThanOrEqual(routes.length * 5);
  });
});
