/**
 * Migration 0064 on a database that already holds two spellings of one live tag: it
 * applies (the unique index leaves the later ones out, marked), the earliest of each pair
 * stays the one held to the rule, and the activity log does not record the mark.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, migrateAround, type TestDatabase } from '../helpers/database.js';

describe('migration 0064 on tags that share a match key', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
  });

  it('marks all but the earliest live tag of each type and match key, and then refuses another', async () => {
    database = await createTestDatabase({ migrate: false });
    const { pool } = database.db;
    await migrateAround(pool, '0064', async () => {
      await pool.query("INSERT INTO organizations (id, name) OVERRIDING SYSTEM VALUE VALUES (1, 'Org')");
      await pool.query(
        `INSERT INTO locations (id, org_id, external_key, name) OVERRIDING SYSTEM VALUE
         SELECT g, 1, 'L' || g, 'L' || g FROM generate_series(1, 6) g`,
      );
      // 1-3: one EPC three ways; 4: a detached spelling; 5: the same value as BLE; 6: a barcode twin.
      await pool.query(
        `INSERT INTO tags (id, org_id, location_id, tag_type, value, detached_at) OVERRIDING SYSTEM VALUE VALUES
           (1, 1, 1, 'rfid', 'E280AA', NULL), (2, 1, 2, 'rfid', 'e2:80:aa', NULL), (3, 1, 3, 'rfid', '00E280AA', NULL),
           (4, 1, 4, 'rfid', 'e280aa', now()), (5, 1, 5, 'ble', 'e280aa', NULL), (6, 1, 6, 'barcode', 'e280aa', NULL)`,
      );
    });
    const { rows } = await pool.query<{ id: string; shares_match_key: boolean }>(
      'SELECT id, shares_match_key FROM tags ORDER BY id',
    );
    expect(rows.map((r) => `${r.id}${r.shares_match_key ? ' shared' : ''}`)).toEqual([
      '1',
      '2 shared',
      '3 shared',
      '4',
      '5',
      '6',
    ]);
    const another = pool.query(
      "INSERT INTO tags (id, org_id, location_id, tag_type, value) OVERRIDING SYSTEM VALUE VALUES (8, 1, 4, 'rfid', 'E2-80-AA')",
    );
    await expect(another).rejects.toMatchObject({ code: '23505', constraint: 'tags_match_key_live' });
    await pool.query(
      "INSERT INTO tags (id, org_id, location_id, tag_type, value) OVERRIDING SYSTEM VALUE VALUES (7, 1, 4, 'rfid', 'F00D')",
    );
    await pool.query('UPDATE tags SET detached_at = now() WHERE id = 7');
    const entries = await pool.query<{ action: string; keys: string[] }>(
      `SELECT action, ARRAY(SELECT jsonb_object_keys(after) ORDER BY 1) AS keys FROM activity
       WHERE entity_type = 'tag' AND entity_id = '7' ORDER BY id`,
    );
    expect(entries.rows.map((r) => r.action)).toEqual(['created', 'deleted']);
    for (const r of entries.rows) expect(r.keys).not.toContain('shares_match_key');
    expect(entries.rows[0]!.keys).toContain('value');
  });
});
