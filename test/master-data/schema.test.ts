import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('master-data schema', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.drop());

  it('derives auto-key slots and the lowercased search text', async () => {
    const org = await t.db.pool.query<{ id: number }>(
      "INSERT INTO organizations (name) VALUES ('x') RETURNING id",
    );
    const orgId = org.rows[0]!.id;
    const { rows } = await t.db.pool.query(
      `INSERT INTO assets (org_id, external_key, name, description) VALUES
        ($1, 'ASSET-0007', 'Émile Pump', 'Ünïcode'), ($1, 'ASSET-00007', 'b', null), ($1, 'ASSET-12345', 'c', null)
       RETURNING external_key, auto_slot, search_text`,
      [orgId],
    );
    expect(rows.map((r) => r.auto_slot)).toEqual([7, null, 12345]);
    expect(rows[0].search_text).toBe('asset-0007\u0001émile pump\u0001ünïcode\u0001');
  });

  it('now_ms() in a one-use CTE is one instant for every column that reads it', async () => {
    const { rows } = await t.db.pool.query(
      `WITH clock AS (SELECT now_ms() AS now)
       SELECT clock.now AS a, pg_sleep(0.005)::text AS pause, clock.now AS b FROM clock`,
    );
    expect(rows[0].a.getTime()).toBe(rows[0].b.getTime());
  });
});
