import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostics as format, servedClientHooks, typeCheck } from '../helpers/generated-client.js';

/**
 * What an integrator does with the description: generate TypeScript types from it with
 * openapi-typescript, type-check a small openapi-fetch client against them, and run it.
 * Generation covers every documented path, so later routes are held to it too.
 */

/** The client as an integrator would write it; must compile cleanly and run. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Organization = components['schemas']['Organization'];

export async function lookupOrganization(baseUrl: string, token: string): Promise<Organization> {
  const client = createClient<paths>({ baseUrl });
  const { data, error, response } = await client.GET('/api/v1/orgs/me', {
    headers: { authorization: \`Bearer \${token}\` },
  });
  if (error) throw new Error(\`\${response.status} \${error.error.type}: \${error.error.detail}\`);
  const keyId: string = data.data.api_key_id;
  const id: number = data.data.id;
  const scopes: string[] = data.data.scopes;
  return { id, name: data.data.name, scopes, api_key_id: keyId };
}

export async function lookupError(baseUrl: string): Promise<string | undefined> {
  const client = createClient<paths>({ baseUrl });
  const { error } = await client.GET('/api/v1/orgs/me');
  const type: string | undefined = error?.error.type;
  const fields = error?.error.fields?.map((f) => f.code);
  return fields ? \`\${type} \${fields.join()}\` : type;
}
`;

/** Misuses the generated types must reject; each file is one mistake. */
const WRONG: Record<string, string> = {
  'unknown-field.ts': `const keyId: string = data.data.api_key_uuid;`,
  'wrong-type.ts': `const keyId: number = data.data.api_key_id;`,
  'unknown-path.ts': `await client.GET('/api/v1/orgs/you');`,
  'unchecked-error.ts': `const keyId: string = (await client.GET('/api/v1/orgs/me')).data.data.api_key_id;`,
};
const wrongFile = (body: string) => `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' });
const { data, error } = await client.GET('/api/v1/orgs/me');
if (error) throw new Error(error.error.type);
${body}
export {};
`;

describe('a generated openapi-fetch client', () => {
  const wrong = Object.fromEntries(Object.entries(WRONG).map(([name, body]) => [name, wrongFile(body)]));
  const served = servedClientHooks('openapi-client', { 'client.ts': CLIENT, ...wrong });

  it('type-checks against the generated types with no diagnostics', () => {
    const diagnostics = typeCheck([join(served.dir, 'schema.ts'), join(served.dir, 'client.ts')]);
    expect(diagnostics, format(diagnostics)).toHaveLength(0);
  });

  it('rejects wrong usage, so the check above can fail', () => {
    const diagnostics = typeCheck(Object.keys(WRONG).map((name) => join(served.dir, name)));
    for (const name of Object.keys(WRONG)) {
      const own = diagnostics.filter((d) => d.file?.fileName === join(served.dir, name));
      expect(own.length, `${name} should not compile; all diagnostics:\n${format(diagnostics)}`).toBe(1);
    }
    const messages = format(diagnostics);
    expect(messages).toContain("Property 'api_key_uuid' does not exist");
    expect(messages).toContain("Object is possibly 'undefined'");
  });

  it('runs against the server and reads the organization', async () => {
    const org = await served.t.createOrg('Client Co');
    const key = await org.key(['assets:read']);
    const client = await import(/* @vite-ignore */ pathToFileURL(join(served.dir, 'client.ts')).href);
    await expect(client.lookupOrganization(served.baseUrl, key.token)).resolves.toEqual({
      id: org.id,
      name: 'Client Co',
      scopes: ['assets:read'],
      api_key_id: key.id,
    });
    await expect(client.lookupError(served.baseUrl)).resolves.toBe('unauthorized');
  });
});
