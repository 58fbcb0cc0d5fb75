/**
 * The assets resource as an integrator uses it: TypeScript types generated from the
 * served description with openapi-typescript, an openapi-fetch client that type-checks
 * against them, run against a listening server: create, patch, list, rename, delete.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostics as format, servedClientHooks, typeCheck } from '../helpers/generated-client.js';

const CLIENT = `import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Asset = components['schemas']['Asset'];

function fail(step: string, response: Response, error: { error: { type: string; detail: string } }): never {
  throw new Error(\`\${step}: \${response.status} \${error.error.type} \${error.error.detail}\`);
}

export async function roundTrip(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });

  const created = await client.POST('/api/v1/assets', {
    body: {
      name: 'Client pump',
      metadata: { serial: 'C-1', dims: [1, 2] },
      tags: [{ tag_type: 'rfid', value: 'CLIENT-TAG-1' }],
      valid_from: '2024-01-01T00:00:00+01:00',
    },
  });
  if (created.error) fail('create', created.response, created.error);
  const asset: Asset = created.data.data;
  const location: string | null = created.response.headers.get('location');

  const patched = await client.PATCH('/api/v1/assets/{asset_id}', {
    params: { path: { asset_id: asset.id } },
    headers: { 'content-type': 'application/merge-patch+json' },
    body: { description: 'patched by the client', updated_at: asset.updated_at, tags: asset.tags },
  });
  if (patched.error) fail('patch', patched.response, patched.error);

  const stale = await client.PATCH('/api/v1/assets/{asset_id}', {
    params: { path: { asset_id: asset.id } },
    headers: { 'content-type': 'application/merge-patch+json' },
    body: { is_active: false, updated_at: asset.updated_at },
  });
  const staleCodes = stale.error?.error.fields?.map((f) => \`\${f.field}:\${f.code}\`) ?? [];

  const listed = await client.GET('/api/v1/assets', {
    params: { query: { q: 'client pump', external_key: [asset.external_key, 'NOPE'], sort: '-updated_at', limit: 10 } },
  });
  if (listed.error) fail('list', listed.response, listed.error);
  const total: number = listed.data.total_count;

  const renamed = await client.POST('/api/v1/assets/{asset_id}/rename', {
    params: { path: { asset_id: asset.id } },
    body: { external_key: 'CLIENT-PUMP-1' },
  });
  if (renamed.error) fail('rename', renamed.response, renamed.error);
  const affected: number = renamed.data.descendant_count_affected;

  const deleted = await client.DELETE('/api/v1/assets/{asset_id}', { params: { path: { asset_id: asset.id } } });
  const gone = await client.GET('/api/v1/assets/{asset_id}', { params: { path: { asset_id: asset.id } } });

  return {
    status: created.response.status,
    location: location === \`/api/v1/assets/\${asset.id}\`,
    validFrom: asset.valid_from,
    tags: asset.tags.map((t) => t.value),
    description: patched.data.data.description,
    staleCodes,
    listed: listed.data.data.map((a) => a.id === asset.id),
    total,
    renamed: renamed.data.data.external_key,
    affected,
    deleted: deleted.response.status,
    gone: gone.error?.error.type,
  };
}
`;

/** Misuses the generated types must reject; each file is one mistake. */
const WRONG: Record<string, string> = {
  'unknown-field.ts': `const values: string = data.data.tag_values;`,
  'null-is-active.ts': `await client.POST('/api/v1/assets', { body: { name: 'x', is_active: null } });`,
  'missing-name.ts': `await client.POST('/api/v1/assets', { body: { description: 'x' } });`,
};
const wrongFile = (body: string) => `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' });
const { data, error } = await client.GET('/api/v1/assets/{asset_id}', { params: { path: { asset_id: 1 } } });
if (error) throw new Error(error.error.type);
${body}
export {};
`;

describe('an openapi-fetch client of the assets resource', () => {
  const wrong = Object.fromEntries(Object.entries(WRONG).map(([name, body]) => [name, wrongFile(body)]));
  const served = servedClientHooks('assets-client', { 'client.ts': CLIENT, ...wrong });

  it('type-checks against the generated types with no diagnostics', () => {
    const diagnostics = typeCheck([join(served.dir, 'schema.ts'), join(served.dir, 'client.ts')]);
    expect(diagnostics, format(diagnostics)).toHaveLength(0);
  });

  it('rejects wrong usage, so the check above can fail', () => {
    const diagnostics = typeCheck(Object.keys(WRONG).map((name) => join(served.dir, name)));
    for (const name of Object.keys(WRONG)) {
      const own = diagnostics.filter((d) => d.file?.fileName === join(served.dir, name));
      expect(
        own.length,
        `${name} should not compile; all diagnostics:\n${format(diagnostics)}`,
      ).toBeGreaterThan(0);
    }
  });

  it('creates, patches, lists, renames and deletes an asset against the server', async () => {
    const org = await served.t.createOrg('Client Co');
    const key = await org.key(['assets:read', 'assets:write']);
    const client = await import(/* @vite-ignore */ pathToFileURL(join(served.dir, 'client.ts')).href);
    await expect(client.roundTrip(served.baseUrl, key.token)).resolves.toEqual({
      status: 201,
      location: true,
      validFrom: '2023-12-31T23:00:00.000Z',
      tags: ['CLIENT-TAG-1'],
      description: 'patched by the client',
      staleCodes: ['updated_at:read_only'],
      listed: [true],
      total: 1,
      renamed: 'CLIENT-PUMP-1',
      affected: 0,
      deleted: 204,
      gone: 'not_found',
    });
  });
});
