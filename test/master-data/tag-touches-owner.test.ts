/**
 * The tags sub-resource (API-SPEC Assets and Locations, "Tag sub-resource bodies") writes
 * its owner: attach and detach advance the asset's or location's `updated_at` ("advanced on
 * every accepted write"), so a PATCH carrying the `updated_at` read before the tag change
 * is refused as stale (PATCH asset rule 6). A sync that moves tags and then patches the
 * same records meets exactly that; the OpenAPI document of the four tag operations says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { expectValidationError } from '../helpers/error-envelope.js';

let t: TestApp;
let headers: Record<string, string>;
beforeAll(async () => {
  t = await buildTestApp();
  headers = bearer((await (await t.createOrg()).key()).token);
});
afterAll(async () => {
  await t.close();
});

const send = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: {
      ...headers,
      ...(body === undefined
        ? {}
        : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });

describe.each([
  ['asset', '/api/v1/assets'],
  ['location', '/api/v1/locations'],
])('tags of a %s', (kind, base) => {
  it('attach and detach advance the owner’s updated_at; a PATCH with the earlier one is stale', async () => {
    const owner = (await send('POST', base, { name: `${kind} owner` })).json().data;
    const attached = await send('POST', `${base}/${owner.id}/tags`, {
      tag_type: 'barcode',
      value: `TT-${kind}`,
    });
    expect(attached.statusCode).toBe(201);
    const afterAttach = (await send('GET', `${base}/${owner.id}`)).json().data;
    expect(afterAttach.updated_at > owner.updated_at).toBe(true);
    const stale = await send('PATCH', `${base}/${owner.id}`, {
      name: 'renamed',
      updated_at: owner.updated_at,
    });
    expect(expectValidationError(stale).map((e) => [e.field, e.code])).toEqual([['updated_at', 'read_only']]);

    const tagId = attached.json().data.id;
    expect((await send('DELETE', `${base}/${owner.id}/tags/${tagId}`)).statusCode).toBe(204);
    const afterDetach = (await send('GET', `${base}/${owner.id}`)).json().data;
    expect(afterDetach.updated_at > afterAttach.updated_at).toBe(true);
    const fresh = await send('PATCH', `${base}/${owner.id}`, {
      name: 'renamed',
      updated_at: afterDetach.updated_at,
    });
    expect(fresh.statusCode).toBe(200);
  });

  it('the OpenAPI document of attach and detach says the owner’s updated_at advances', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const param = kind === 'asset' ? 'asset_id' : 'location_id';
    for (const op of [
      doc.paths[`${base}/{${param}}/tags`].post,
      doc.paths[`${base}/{${param}}/tags/{tag_id}`].delete,
    ]) {
      expect(op.description).toContain(`Advances the ${kind}'s updated_at`);
    }
  });
});
