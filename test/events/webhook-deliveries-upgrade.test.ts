/**
 * Migrations 0061 and 0062 on a database that already has deliveries: a removed endpoint's
 * pending ones are deleted (its finished ones and the other endpoints' stay), and each
 * subject's pending deliveries after its earliest are queued.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, migrateAround, type TestDatabase } from '../helpers/database.js';

describe('migrations 0061 and 0062 on existing deliveries', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
  });

  it("deletes removed endpoints' pending deliveries and queues the ones behind each subject's head", async () => {
    database = await createTestDatabase({ migrate: false });
    const { pool } = database.db;
    await migrateAround(pool, '0061', async () => {
      await pool.query("INSERT INTO organizations (id, name) OVERRIDING SYSTEM VALUE VALUES (1, 'Org')");
      await pool.query(
        `INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret, deleted_at) OVERRIDING SYSTEM VALUE
         VALUES (1, 1, 'https://a.test/h', '{asset.created}', 'x', now()),
                (2, 1, 'https://b.test/h', '{asset.created}', 'x', NULL)`,
      );
      await pool.query(
        `INSERT INTO events (id, org_id, type, occurred_at, subject, payload) OVERRIDING SYSTEM VALUE
         SELECT g, 1, 'asset.created', now(), s, '{}'
         FROM unnest('{asset:1,asset:1,asset:2,asset:1}'::text[]) WITH ORDINALITY AS u(s, g)`,
      );
      await pool.query(
        `INSERT INTO webhook_deliveries (org_id, endpoint_id, event_id, subject, state)
         SELECT 1, w, e.id, e.subject, CASE WHEN e.id = 1 THEN 'delivered' ELSE 'pending' END
         FROM events e, unnest('{1,2}'::bigint[]) AS w`,
      );
    });

    const { rows } = await pool.query<{
      endpoint_id: string;
      event_id: string;
      state: string;
      queued: boolean;
    }>('SELECT endpoint_id, event_id, state, queued FROM webhook_deliveries ORDER BY endpoint_id, event_id');
    expect(rows.map((r) => `${r.endpoint_id}/${r.event_id} ${r.state}${r.queued ? ' queued' : ''}`)).toEqual([
      '1/1 delivered',
      '2/1 delivered',
      '2/2 pending',
      '2/3 pending',
      '2/4 pending queued',
    ]);
  });
});
