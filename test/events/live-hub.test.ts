import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveHub, SESSIONS_CHANNEL } from '../../src/events/live-hub.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../ingest/helpers.js';

/**
 * The LiveHub's session notices (migration 0045): a person's ended sessions reach the
 * watchers of that person only, and after a lost LISTEN connection every watcher checks
 * again, since a notice sent while it was down is never heard.
 */
describe('LiveHub session notices', () => {
  let database: TestDatabase;
  let hub: LiveHub;
  const APP = `live-hub-test-${process.pid}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    hub = new LiveHub({ connectionString: database.url, application_name: APP }, 20);
  });
  afterAll(async () => {
    await hub?.close();
    await database?.drop();
  });

  it("calls the watchers of the person whose sessions ended, nobody else's", async () => {
    const calls: string[] = [];
    const stopA = hub.watchSessions(1, 10, () => calls.push('1:10'));
    const stopB = hub.watchSessions(1, 11, () => calls.push('1:11'));
    const stopC = hub.watchSessions(2, 10, () => calls.push('2:10'));
    try {
      await hub.ready();
      await database.db.pool.query('SELECT pg_notify($1, $2)', [
        SESSIONS_CHANNEL,
        JSON.stringify({ org_id: 1, user_id: 10 }),
      ]);
      await waitFor(
        async () => calls.length,
        (n) => n >= 1,
      );
      // A later notice for another person arrives after the first: nothing else was called in between.
      await database.db.pool.query('SELECT pg_notify($1, $2)', [
        SESSIONS_CHANNEL,
        JSON.stringify({ org_id: 2, user_id: 10 }),
      ]);
      await waitFor(
        async () => calls.length,
        (n) => n >= 2,
      );
      expect(calls).toEqual(['1:10', '2:10']);
    } finally {
      stopA();
      stopB();
      stopC();
    }
  });

  it('has every watcher check again once a lost connection is back', async () => {
    const calls: string[] = [];
    const changes: string[][] = [];
    const stopWatch = hub.watchSessions(3, 30, () => calls.push('3:30'));
    const stopListen = hub.subscribe(3, (change) => changes.push(change.types));
    try {
      await hub.ready();
      await database.db.pool.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [APP],
      );
      await waitFor(
        async () => calls.length,
        (n) => n >= 1,
      );
      expect(calls).toEqual(['3:30']);
      await waitFor(
        async () => changes.length,
        (n) => n >= 1,
      );
      expect(changes).toEqual([['reconnected']]);
    } finally {
      stopWatch();
      stopListen();
    }
  });
});
