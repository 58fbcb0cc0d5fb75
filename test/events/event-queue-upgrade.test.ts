/**
 * Migration 0055 on a database that already has events: the ones not yet dispatched are
 * queued, the dispatched ones are not, and events written after it are queued by the trigger.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, migrateAround, type TestDatabase } from '../helpers/database.js';

describe('migration 0055 (the event queue) on existing events', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
  });

  it('queues the undispatched events only, then every new one', async () => {
    database = await createTestDatabase({ migrate: false });
    const { pool } = database.db;
    const insert = async (dispatched: boolean) =>
      Number(
        (
          await pool.query<{ id: string }>(
            `INSERT INTO events (org_id, type, occurred_at, subject, payload, dispatched_at)
             VALUES (1, 'asset.moved', now(), 'asset:1', '{}', $1) RETURNING id`,
            [dispatched ? new Date() : null],
          )
        ).rows[0]!.id,
      );
    const waiting: number[] = [];
    await migrateAround(pool, '0055', async () => {
      await insert(true);
      waiting.push(await insert(false));
      await insert(true);
      waiting.push(await insert(false));
    });
    const queued = async () =>
      (await pool.query<{ id: number }>('SELECT id FROM event_queue ORDER BY id')).rows.map((r) => r.id);
    expect(await queued()).toEqual(waiting);

    const column = await pool.query(
      "SELECT 1 FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'dispatched_at'",
    );
    expect(column.rowCount).toBe(0);

    const { rows } = await pool.query<{ id: number }>(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
         VALUES (1, 'asset.moved', now(), 'asset:1', '{}'), (1, 'asset.moved', now(), 'asset:1', '{}') RETURNING id`,
    );
    expect(await queued()).toEqual([...waiting, ...rows.map((r) => r.id)]);
  });
});
