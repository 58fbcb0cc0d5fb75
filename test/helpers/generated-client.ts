import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';

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
