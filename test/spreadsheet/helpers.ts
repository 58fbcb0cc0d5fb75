import { cliCaller } from '../../src/caller.js';
import type { Kind } from '../../src/spreadsheet/columns.js';
import type { ImportOptions, ImportResult } from '../../src/spreadsheet/service.js';
import { bearer, buildTestApp, type TestApp, type TestOrg } from '../helpers/app.js';

export interface SheetFixture {
  t: TestApp;
  org: TestOrg;
  token: string;
  /** Imports CSV text (or bytes) into the fixture's organization, or another. */
  importCsv(kind: Kind, csv: string | Buffer, options?: ImportOptions, orgId?: number): Promise<ImportResult>;
  exportCsv(kind: Kind, filters?: Record<string, unknown>, orgId?: number): Promise<string>;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in the tests
  api(method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown): Promise<{ status: number; json: any }>;
}

export async function sheetFixture(): Promise<SheetFixture> {
  const t = await buildTestApp();
  const org = await t.createOrg();
  const { token } = await org.key();
  const sheets = t.services.internal.spreadsheets;
  return {
    t,
    org,
    token,
    importCsv: (kind, csv, options, orgId = org.id) =>
      sheets.import(cliCaller(orgId), kind, [typeof csv === 'string' ? Buffer.from(csv) : csv], options),
    async exportCsv(kind, filters = {}, orgId = org.id) {
      const lines =
        kind === 'assets'
          ? sheets.exportAssets(orgId, { include_deleted: false, ...filters })
          : sheets.exportLocations(orgId, filters);
      let out = '';
      for await (const line of lines) out += line;
      return out;
    },
    async api(method, url, body) {
      const res = await t.app.inject({
        method,
        url,
        headers: {
          ...bearer(token),
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          ...(method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {}),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return { status: res.statusCode, json: res.json() };
    },
  };
}

/** The field codes a refused row carries, as [field, code] pairs. */
export function codesOf(result: ImportResult, row: number): [string, string][] {
  const r = result.results.find((x) => x.row === row);
  return (r?.errors ?? []).map((e) => [e.field, e.code]);
}

let n = 0;
export const uniq = (prefix: string) => `${prefix}-${process.pid}-${++n}`;
