import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/ingest/limiter.js';
import {
  dropExpiredRaw,
  ensureRawPartitions,
  partitionDay,
  RawRetention,
} from '../../src/ingest/retention.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const DAY = 24 * 3600_000;
const NOW = Date.parse('2031-03-15T10:30:00Z');

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.pool.query("INSERT INTO organizations (name) VALUES ('retention')");
});
afterAll(() => database?.drop());

const partitions = async () => {
  const { rows } = await database.db.pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'raw_messages'::regclass ORDER BY 1`,
  );
  return rows.map((r) => r.name);
};
const insertRaw = (at: number, payload: string) =>
  database.db.pool.query(
    `INSERT INTO raw_messages (received_at, org_id, source, payload) VALUES ($1, 1, 'import', $2)`,
    [new Date(at), payload],
  );
const where = async (payload: string) => {
  const { rows } = await database.db.pool.query<{ part: string }>(
    'SELECT tableoid::regclass::text AS part FROM raw_messages WHERE payload = $1',
    [payload],
  );
  return rows.map((r) => r.part);
};

describe('raw log retention', () => {
  it('reads the day out of partition names', () => {
    expect(partitionDay('raw_messages_20310315')).toBe(Date.parse('2031-03-15T00:00:00Z'));
    expect(partitionDay('raw_messages_20310230')).toBeNull();
    expect(partitionDay('raw_messages_default')).toBeNull();
    expect(partitionDay('raw_messages_2031031')).toBeNull();
  });

  it("creates today's and the next two days' partitions ahead, in UTC days, once", async () => {
    expect(await ensureRawPartitions(database.db, NOW)).toEqual([
      'raw_messages_20310315',
      'raw_messages_20310316',
      'raw_messages_20310317',
    ]);
    expect(await ensureRawPartitions(database.db, NOW)).toEqual([]);
    await insertRaw(Date.parse('2031-03-15T00:00:00Z'), 'midnight');
    await insertRaw(Date.parse('2031-03-17T23:59:59.999Z'), 'last-ms');
    expect(await where('midnight')).toEqual(['raw_messages_20310315']);
    expect(await where('last-ms')).toEqual(['raw_messages_20310317']);
    // The application role can write to the new partitions through the parent.
    await database.db.withOrg(1, (tx) =>
      tx.query(
        `INSERT INTO raw_messages (received_at, org_id, source, payload) VALUES ($1, 1, 'import', 'app')`,
        [new Date(NOW)],
      ),
    );
    expect(await where('app')).toEqual(['raw_messages_20310315']);
  });

  it('moves rows that landed in the default partition into the day created for them', async () => {
    const later = NOW + 10 * DAY;
    await insertRaw(later, 'stray');
    expect(await where('stray')).toEqual(['raw_messages_default']);
    expect(await ensureRawPartitions(database.db, later, 0)).toEqual(['raw_messages_20310325']);
    expect(await where('stray')).toEqual(['raw_messages_20310325']);
  });

  it('drops whole partitions past the retention and expired rows of the default one', async () => {
    // A partition 8 days old, one just inside the retention, and stray rows in the default partition.
    await ensureRawPartitions(database.db, NOW - 8 * DAY, 0);
    await ensureRawPartitions(database.db, NOW - 6 * DAY, 0);
    await insertRaw(NOW - 8 * DAY, 'eight-days');
    await insertRaw(NOW - 6 * DAY, 'six-days');
    await insertRaw(NOW - 100 * DAY, 'ancient');
    await insertRaw(NOW - 5 * DAY, 'recent-default');
    expect(await where('ancient')).toEqual(['raw_messages_default']);

    const result = await dropExpiredRaw(database.db, 7, NOW);
    expect(result).toEqual({ dropped: ['raw_messages_20310307'], deletedRows: 1 });
    expect(await where('eight-days')).toEqual([]);
    expect(await where('ancient')).toEqual([]);
    expect(await where('six-days')).toEqual(['raw_messages_20310309']);
    expect(await where('recent-default')).toEqual(['raw_messages_default']);
    expect(await partitions()).not.toContain('raw_messages_20310307');
    expect(await partitions()).toContain('raw_messages_20310315');
  });

  it('keeps one index per daily partition, and the default partition one on the instant', async () => {
    // Migration 0058: the primary key's index on every row was a sixth of the raw log at one
    // read per message; the default partition, looked up and cleaned by time, keeps its own.
    await ensureRawPartitions(database.db, NOW, 0);
    const indexes = async (table: string) => {
      const { rows } = await database.db.pool.query<{ def: string }>(
        'SELECT indexdef AS def FROM pg_indexes WHERE tablename = $1 ORDER BY indexname',
        [table],
      );
      return rows.map((r) => r.def.replace(/^.* USING /, ''));
    };
    expect(await indexes('raw_messages_20310315')).toEqual(['btree (org_id, received_at)']);
    expect(await indexes('raw_messages_default')).toEqual([
      'btree (org_id, received_at)',
      'btree (received_at)',
    ]);
  });

  it('runs both at start and keeps going when a pass fails', async () => {
    const errors: unknown[] = [];
    const retention = new RawRetention(database.db, {
      retentionDays: 1,
      logger: { ...silentLogger, error: (obj) => errors.push(obj) },
      intervalMs: 60_000,
    });
    await retention.start();
    await retention.stop();
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    expect(await partitions()).toContain(`raw_messages_${today}`);
    // Everything from 2031 is in the future: nothing of it is expired.
    expect(await partitions()).toContain('raw_messages_20310315');
    expect(errors).toEqual([]);
  });
});
