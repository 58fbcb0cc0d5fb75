import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll } from 'vitest';
import { buildTestApp, type TestApp } from './app.js';

/**
 * What an integrator does with the description: generate TypeScript types from it with
 * openapi-typescript and type-check client code against them, as a strict NodeNext
 * project would. Shared by the tests that hold the document to that.
 */
export const REPO = resolve(import.meta.dirname, '../..');

/**
 * A new directory (inside the repository, gitignored, so imports resolve from its
 * node_modules) holding `schema.ts` generated from `doc` and the given files.
 */
export async function writeGeneratedClient(
  doc: OpenAPI3,
  prefix: string,
  files: Record<string, string>,
): Promise<string> {
  await mkdir(join(REPO, '.tmp'), { recursive: true });
  const dir = await mkdtemp(join(REPO, '.tmp', `${prefix}-`));
  await writeFile(join(dir, 'schema.ts'), astToString(await openapiTS(doc)));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

/** Type-checks the files the way a strict NodeNext project would. */
export function typeCheck(files: string[]): readonly ts.Diagnostic[] {
  const program = ts.createProgram(files, {
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    typeRoots: [join(REPO, 'node_modules/@types')],
    paths: { 'openapi-fetch': [join(REPO, 'node_modules/openapi-fetch')] },
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program);
}

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => REPO,
  getNewLine: () => '\n',
};

export const formatDiagnostics = (diagnostics: readonly ts.Diagnostic[]) =>
  ts.formatDiagnostics(diagnostics, formatHost);

export interface ServedClient {
  t: TestApp;
  /** Directory holding schema.ts (generated from the served description) and `files`. */
  dir: string;
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * A test app listening on a free port, with a client generated from the description it
 * serves, written beside the given files.
 */
export async function servedClient(prefix: string, files: Record<string, string>): Promise<ServedClient> {
  const t = await buildTestApp();
  const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as OpenAPI3;
  const dir = await writeGeneratedClient(doc, prefix, files);
  return {
    t,
    dir,
    baseUrl,
    async close() {
      await rm(dir, { recursive: true, force: true });
      await t.close();
    },
  };
}

/**
 * servedClient for a describe block: built before its tests, closed after them (vitest
 * hooks registered here). Its fields are filled in by beforeAll, so read them in the tests.
 */
export function servedClientHooks(prefix: string, files: Record<string, string>): ServedClient {
  const served = {} as ServedClient;
  let built: ServedClient | undefined;
  beforeAll(async () => {
    built = await servedClient(prefix, files);
    Object.assign(served, built);
  });
  afterAll(() => built?.close());
  return served;
}
