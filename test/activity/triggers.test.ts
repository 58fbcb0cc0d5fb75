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
});
