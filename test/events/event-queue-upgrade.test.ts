/**
 * Migration 0055 on a database that already has events: the ones not yet dispatched are
 * queued, the dispatched ones are not, and events written after it are queued by the trigger.
 */
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, migrationsDir } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('migration 0055 (the event queue) on existing events', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
  });

  it('queues the undispatched events only, then every new one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tagtrail-0055-'));
    try {
      const files = (await readdir(migrationsDir())).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
      const before = files.filter((f) => f < '0055');
      for (const f of before) await copyFile(join(migrationsDir(), f), join(dir, f));
      database = await createTestDatabase({ migrate: false });
      const { pool } = database.db;
      await migrate(pool, dir);

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
      await insert(true);
      const waiting = [await insert(false)];
      await insert(true);
      waiting.push(await insert(false));

      for (const f of files.filter((f) => f >= '0055'))
        await copyFile(join(migrationsDir(), f), join(dir, f));
      await migrate(pool, dir);
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
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
