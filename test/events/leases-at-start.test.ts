/**
 * Deliveries a worker had claimed when it went away (the service killed, or the service a
 * restored backup was taken of) are sent as soon as the service starts again on its own
 * embedded database, where it is the only service, not when their leases run out (up to
 * 91 s later). On a shared database (DATABASE_URL) another instance may hold them: there
 * a start leaves every lease as it is.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenedDatabase, openDatabase } from '../../src/db/connect.js';
import type { Database } from '../../src/db/pool.js';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import type { RunningService } from '../../src/runtime.js';
import { createServices } from '../../src/services.js';
import { createTestDatabase, insertOrganization, type TestDatabase } from '../helpers/database.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { startTestService } from '../helpers/service.js';
import { waitFor } from '../ingest/helpers.js';
import { startReceiver } from './receiver.js';

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

/**
 * An organization with an endpoint at `url` and one event for it, dispatched: one pending
 * delivery, which a worker holds for another hour. Its id.
 */
async function leasedDelivery(db: Database, url: string): Promise<number> {
  const services = await createServices(db, {
    TAGTRAIL_ENV: 'production',
    secrets: TEST_SECRETS,
    REDIS_URL: undefined,
    TAGTRAIL_RATE_LIMIT: 1000,
    TAGTRAIL_RATE_WINDOW_SECONDS: 60,
    TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: true,
  });
  try {
    const orgId = await insertOrganization(db, 'Leases');
    const { endpoint } = await services.internal.webhooks.create(orgId, {
      url,
      event_types: ['asset.created'],
    });
    await db.pool.query(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       VALUES ($1, 'asset.created', now(), 'asset:1', '{}')`,
      [orgId],
    );
    await dispatchEvents(db);
    const { rows } = await db.pool.query<{ id: string }>(
      `UPDATE webhook_deliveries SET leased_until = now() + interval '1 hour'
       WHERE endpoint_id = $1 AND state = 'pending' RETURNING id`,
      [endpoint.id],
    );
    expect(rows).toHaveLength(1);
    return Number(rows[0]!.id);
  } finally {
    await services.close();
  }
}

async function leasedUntil(db: Database, id: number): Promise<Date | null> {
  const { rows } = await db.pool.query<{ leased_until: Date | null }>(
    'SELECT leased_until FROM webhook_deliveries WHERE id = $1',
    [id],
  );
  return rows[0]!.leased_until;
}

describe('leases of a worker that is gone', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tagtrail-leases-'));
    // The embedded server runs as its own user when the tests run as root: it must reach in.
    await chmod(root, 0o755);
    closers.push(() => rm(root, { recursive: true, force: true }));
  });

  it('are released when the service starts on its own embedded database, and the delivery is sent', async () => {
    const dataDir = join(root, 'embedded');
    const rx = await startReceiver();
    closers.push(rx.close);
    const env = { TAGTRAIL_DATA_DIR: dataDir, TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: 'true' };
    // Creates the database; then stopped, as a crashed service is before its next start.
    await (await startTestService(env)).stop();
    // A command's own server on the stopped directory: the delivery, claimed by "the
    // worker of the run that crashed".
    const command: OpenedDatabase = await openDatabase({ dataDir }, { migrate: false, poolSize: 2 });
    let id: number;
    try {
      id = await leasedDelivery(command.db, rx.url);
    } finally {
      await command.close();
    }

    const running: RunningService = await startTestService(env);
    closers.push(() => running.stop());
    await waitFor(
      async () => rx.received.length,
      (n) => n > 0,
    );
    expect(rx.received).toHaveLength(1);
    expect(JSON.parse(rx.received[0]!.body)).toMatchObject({ type: 'asset.created' });
    // Joined (the running service owns the server): the delivery recorded as delivered.
    const joined = await openDatabase({ dataDir }, { migrate: false, poolSize: 2 });
    closers.push(() => joined.close());
    const state = await waitFor(
      async () =>
        (
          await joined.db.pool.query<{ state: string }>(
            'SELECT state FROM webhook_deliveries WHERE id = $1',
            [id],
          )
        ).rows[0]!.state,
      (s) => s === 'delivered',
    );
    expect(state).toBe('delivered');
  }, 180_000);

  it('are kept when the service starts on a database other instances may share (DATABASE_URL)', async () => {
    const database: TestDatabase = await createTestDatabase();
    closers.push(() => database.drop());
    const rx = await startReceiver();
    closers.push(rx.close);
    const id = await leasedDelivery(database.db, rx.url);
    const before = await leasedUntil(database.db, id);

    const running = await startTestService({
      DATABASE_URL: database.url,
      TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    closers.push(() => running.stop());
    // The release would have been done before the start resolved (it precedes the worker).
    expect(await leasedUntil(database.db, id)).toEqual(before);
    expect(rx.received).toHaveLength(0);
  }, 120_000);
});
