import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asOrgRole, createTestDatabase, type TestDatabase } from '../helpers/database.js';

// A foreign key is checked as the table's owner, under no row-level security: naming the
// parent's id alone, it would take another organization's row as well as one's own. Every
// reference between two tables of organizations carries the org_id (migration 0068), so
// the database refuses a cross-organization reference whatever a write path passes.

let database: TestDatabase;
let foreignAsset: number;
let foreignLocation: number;
let ownAsset: number;
beforeAll(async () => {
  database = await createTestDatabase();
  const pool = database.db.pool;
  await pool.query(
    "INSERT INTO organizations (id, name) OVERRIDING SYSTEM VALUE VALUES (1, 'first'), (2, 'second')",
  );
  const asset = (org: number) =>
    pool.query<{ id: string }>(
      "INSERT INTO assets (org_id, external_key, name) VALUES ($1, 'PUMP-1', 'Pump') RETURNING id",
      [org],
    );
  ownAsset = Number((await asset(1)).rows[0]!.id);
  foreignAsset = Number((await asset(2)).rows[0]!.id);
  const { rows } = await pool.query<{ id: string }>(
    "INSERT INTO locations (org_id, external_key, name) VALUES (2, 'DOCK', 'Dock') RETURNING id",
  );
  foreignLocation = Number(rows[0]!.id);
});
afterAll(() => database?.drop());

/** Runs `sql` as the request role of organization 1; resolves to nothing when it is taken. */
const asFirstOrg = async (sql: string, values: unknown[]) => {
  await asOrgRole(database, 1, sql, values);
};

describe('foreign keys within an organization', () => {
  it('every reference between two tables with an org_id pairs the org_ids', async () => {
    const { rows } = await database.db.pool.query<{ name: string; paired: boolean }>(
      `WITH keys AS (
         SELECT c.conname, c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent,
                c.conkey, c.confkey,
                (SELECT attnum FROM pg_attribute WHERE attrelid = c.conrelid AND attname = 'org_id' AND NOT attisdropped) AS child_org,
                (SELECT attnum FROM pg_attribute WHERE attrelid = c.confrelid AND attname = 'org_id' AND NOT attisdropped) AS parent_org
           FROM pg_constraint c
           JOIN pg_namespace n ON n.oid = c.connamespace AND n.nspname = 'public'
          WHERE c.contype = 'f')
       SELECT child || ' -> ' || parent || ' (' || conname || ')' AS name,
              EXISTS (SELECT 1 FROM generate_subscripts(conkey, 1) i
                       WHERE conkey[i] = child_org AND confkey[i] = parent_org) AS paired
         FROM keys
        WHERE child_org IS NOT NULL AND parent_org IS NOT NULL
        ORDER BY 1`,
    );
    // The check must see the references it is about, or it proves nothing.
    expect(rows.map((r) => r.name)).toEqual(
      expect.arrayContaining([
        'tags -> assets (tags_asset_id_fkey)',
        'scan_points -> locations (scan_points_location_id_fkey)',
        'locations -> locations (locations_parent_id_fkey)',
        'web_sessions -> users (web_sessions_user_id_fkey)',
      ]),
    );
    expect(rows.filter((r) => !r.paired).map((r) => r.name)).toEqual([]);
  });

  it("refuses a tag on another organization's asset, and takes one on its own", async () => {
    const tag = "INSERT INTO tags (org_id, tag_type, value, asset_id) VALUES (1, 'rfid', 'E2001', $1)";
    await expect(asFirstOrg(tag, [foreignAsset])).rejects.toMatchObject({ code: '23503' });
    await expect(asFirstOrg(tag, [ownAsset])).resolves.toBeUndefined();
  });

  it("refuses a location under another organization's location", async () => {
    await expect(
      asFirstOrg(
        "INSERT INTO locations (org_id, external_key, name, parent_id) VALUES (1, 'BAY', 'Bay', $1)",
        [foreignLocation],
      ),
    ).rejects.toMatchObject({ code: '23503' });
  });

  it("refuses a position of another organization's asset", async () => {
    const { rows } = await database.db.pool.query<{ id: string }>(
      "INSERT INTO locations (org_id, external_key, name) VALUES (1, 'YARD', 'Yard') RETURNING id",
    );
    await expect(
      // valid_from given: its trigger would otherwise look the asset up under the policy, find
      // nothing, and refuse the row for a null before the key is checked.
      asFirstOrg(
        'INSERT INTO asset_positions (org_id, asset_id, location_id, last_seen_at, valid_from) VALUES (1, $1, $2, now(), now())',
        [foreignAsset, Number(rows[0]!.id)],
      ),
    ).rejects.toMatchObject({ code: '23503' });
  });
});
