import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The activity log is written by triggers (migrations 0035, 0039, 0044): a logged table
 * that lost its trigger would silently stop recording. Each table here must keep a row
 * trigger for its updates (and deletes) and a statement trigger for its creates, both
 * enabled, with the entity type the log names it by.
 */
const LOGGED: Array<{ table: string; entity: string; deletes: boolean }> = [
  { table: 'assets', entity: 'asset', deletes: true },
  { table: 'locations', entity: 'location', deletes: true },
  { table: 'tags', entity: 'tag', deletes: true },
  { table: 'api_keys', entity: 'api_key', deletes: true },
  { table: 'readers', entity: 'reader', deletes: true },
  { table: 'scan_points', entity: 'scan_point', deletes: true },
  { table: 'users', entity: 'user', deletes: true },
  { table: 'invitations', entity: 'invitation', deletes: true },
  { table: 'password_resets', entity: 'password_reset', deletes: false },
  { table: 'organizations', entity: 'organization', deletes: false },
];

interface TriggerRow {
  table: string;
  name: string;
  fn: string;
  enabled: string;
  def: string;
}

describe('activity triggers', () => {
  let database: TestDatabase;
  let triggers: TriggerRow[];

  beforeAll(async () => {
    database = await createTestDatabase();
    const { rows } = await database.db.pool.query<TriggerRow>(
      `SELECT c.relname AS table, t.tgname AS name, p.proname AS fn, t.tgenabled AS enabled,
              pg_get_triggerdef(t.oid) AS def
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
       WHERE NOT t.tgisinternal AND p.proname IN ('record_activity', 'record_activity_inserts')`,
    );
    triggers = rows;
  });
  afterAll(() => database?.drop());

  it.each(LOGGED)('$table records its updates (and deletes) row by row', ({ table, entity, deletes }) => {
    const row = triggers.filter((t) => t.table === table && t.fn === 'record_activity');
    expect(row, `${table} has no record_activity() trigger`).toHaveLength(1);
    const [trigger] = row;
    expect(trigger?.name).toBe('activity');
    // 'O': fires in the ordinary (origin) replication role, i.e. enabled.
    expect(trigger?.enabled).toBe('O');
    const events = deletes ? 'AFTER DELETE OR UPDATE OF ' : 'AFTER UPDATE OF ';
    expect(trigger?.def).toContain(events);
    expect(trigger?.def).toContain('FOR EACH ROW');
    expect(trigger?.def).toContain(`record_activity('${entity}'`);
  });

  it.each(LOGGED)('$table records its creates once per statement', ({ table, entity }) => {
    const stmt = triggers.filter((t) => t.table === table && t.fn === 'record_activity_inserts');
    expect(stmt, `${table} has no record_activity_inserts() trigger`).toHaveLength(1);
    const [trigger] = stmt;
    expect(trigger?.name).toBe('activity_created');
    expect(trigger?.enabled).toBe('O');
    expect(trigger?.def).toContain('AFTER INSERT');
    expect(trigger?.def).toContain('REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT');
    expect(trigger?.def).toContain(`record_activity_inserts('${entity}'`);
  });

  it('no other table has an activity trigger (a new one is added to this list on purpose)', () => {
    const tables = new Set(triggers.map((t) => t.table));
    expect([...tables].sort()).toEqual(LOGGED.map((l) => l.table).sort());
  });

  it("logs timestamps in UTC whatever the session's time zone", async () => {
    const logged = async (zone: string) => {
      const client = await database.db.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`SET LOCAL TimeZone = '${zone}'`);
        const org = await client.query<{ id: number }>(
          "INSERT INTO organizations (name) VALUES ('Zones') RETURNING id",
        );
        const asset = await client.query<{ id: number }>(
          `INSERT INTO assets (org_id, external_key, name, valid_from)
           VALUES ($1, 'Z-1', 'Zoned', '2026-03-08T07:30:15.123Z') RETURNING id`,
          [org.rows[0]!.id],
        );
        await client.query("UPDATE assets SET valid_to = '2026-11-01T05:30:00Z' WHERE id = $1", [
          asset.rows[0]!.id,
        ]);
        // One entry: a record created and changed in one transaction is logged as created.
        const { rows } = await client.query<{ from: string; to: string }>(
          `SELECT after->>'valid_from' AS from, after->>'valid_to' AS to FROM activity
           WHERE entity_type = 'asset' AND entity_id = $1::text AND action = 'created'`,
          [asset.rows[0]!.id],
        );
        return rows[0];
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    };
    const utc = { from: '2026-03-08T07:30:15.123+00:00', to: '2026-11-01T05:30:00+00:00' };
    expect(await logged('UTC')).toEqual(utc);
    expect(await logged('Asia/Kolkata')).toEqual(utc);
    expect(await logged('America/New_York')).toEqual(utc);
  });
});
