/**
 * A site upgraded from a build before migration 0064 may hold two spellings of one EPC on
 * two records (the old builds attached both). They stay attached, the later one marked
 * (shares_match_key); an export of those records must import back unchanged, as every
 * export does (docs/import-export.md), while another spelling of that EPC is still refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, migrateAround } from '../helpers/database.js';
import { codesOf } from './helpers.js';

const HEADER = 'external_key,name,tags\n';

describe('import after migration 0064 on tags that share a match key', () => {
  let t: TestApp;
  beforeAll(async () => {
    const database = await createTestDatabase({ migrate: false });
    const { pool } = database.db;
    await migrateAround(pool, '0064', async () => {
      await pool.query("INSERT INTO organizations (id, name) OVERRIDING SYSTEM VALUE VALUES (1, 'Org')");
      await pool.query(
        `INSERT INTO locations (id, org_id, external_key, name) OVERRIDING SYSTEM VALUE VALUES (1, 1, 'BIN', 'Bin')`,
      );
      await pool.query(
        `INSERT INTO assets (id, org_id, external_key, name) OVERRIDING SYSTEM VALUE
         SELECT g, 1, 'A' || g, 'Asset ' || g FROM generate_series(1, 4) g`,
      );
      // 1 and 2: one EPC two ways; 3 and the bin: another EPC two ways; 4: none.
      await pool.query(
        `INSERT INTO tags (org_id, asset_id, location_id, tag_type, value) VALUES
           (1, 1, NULL, 'rfid', 'e2801160aa'), (1, 2, NULL, 'rfid', 'E2:80:11:60:AA'),
           (1, NULL, 1, 'rfid', 'e2-80-11-60-cc'), (1, 3, NULL, 'rfid', 'E2801160CC')`,
      );
    });
    t = await buildTestApp({ database });
  });
  afterAll(() => t.close());

  const sheets = () => t.services.internal.spreadsheets;
  const importCsv = (kind: 'assets' | 'locations', csv: string, dryRun = false) =>
    sheets().import(cliCaller(1), kind, [Buffer.from(csv)], { dryRun });
  const exported = async (kind: 'assets' | 'locations') => {
    let out = '';
    const lines =
      kind === 'assets'
        ? sheets().exportAssets(1, { include_deleted: false })
        : sheets().exportLocations(1, {});
    for await (const line of lines) out += line;
    return out;
  };

  it('imports an export of both holders back unchanged', async () => {
    for (const kind of ['assets', 'locations'] as const) {
      const result = await importCsv(kind, await exported(kind));
      expect(result, kind).toMatchObject({ refused: 0, created: 0, changed: 0 });
    }
  });

  it('takes a row that keeps its own spelling and leaves the other holder alone', async () => {
    const result = await importCsv('assets', `${HEADER}A2,Renamed,rfid:E2:80:11:60:AA\n`);
    expect(result).toMatchObject({ refused: 0, changed: 1 });
    const { rows } = await t.database.db.pool.query(
      "SELECT asset_id, value FROM tags WHERE detached_at IS NULL AND value ILIKE '%aa' ORDER BY asset_id",
    );
    expect(rows.map((r) => `${r.asset_id}:${r.value}`)).toEqual(['1:e2801160aa', '2:E2:80:11:60:AA']);
  });

  it('still refuses another spelling of the EPC, on another record or respelled on a holder', async () => {
    const result = await importCsv(
      'assets',
      `${HEADER}A4,Four,rfid:E2-80-11-60-AA\nA2,Two,rfid:E2801160AA\nA5,Five,rfid:00e2801160cc\n`,
      true,
    );
    for (const row of [2, 3, 4]) expect(codesOf(result, row), `row ${row}`).toEqual([['tags', 'conflict']]);
  });
});
