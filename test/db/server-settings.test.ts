/**
 * The settings check reads the real server's values (the embedded server runs with
 * autovacuum on; the machine's PostgreSQL of `.ci/run` may not), so what it reports is what
 * `SHOW` says there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverSettings, settingsWarnings } from '../../src/db/server-settings.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await database?.drop();
});

describe('serverSettings', () => {
  it('reads autovacuum and track_counts as the server shows them', async () => {
    const pool = database.db.pool;
    const show = async (name: string) => (await pool.query(`SHOW ${name}`)).rows[0]![name] as string;
    const settings = await serverSettings(pool);
    expect(settings).toEqual({
      autovacuum: await show('autovacuum'),
      trackCounts: await show('track_counts'),
    });
    expect(settingsWarnings(settings).length).toBe(
      settings.autovacuum === 'on' && settings.trackCounts === 'on' ? 0 : 1,
    );
  });
});
